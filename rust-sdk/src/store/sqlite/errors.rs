//! SQLite errors as store errors that name their cause.
//!
//! A database that is locked, read-only, out of space or failing at the disk
//! is a `Backend` error: the call may succeed later (`is_transient`). A file
//! that is not a database, or a damaged one, is `Corrupt`: trying again will
//! not help.

use captcha_dlq_core::dlq::StoreError;
use rusqlite::ErrorCode;

pub(super) fn corrupt(location: &str, problem: impl Into<String>) -> StoreError {
    StoreError::Corrupt { location: location.to_string(), problem: problem.into() }
}

/// `e` as a store error about the database at `location`.
pub(super) fn sqlite_error(location: &str, e: rusqlite::Error) -> StoreError {
    let Some(code) = e.sqlite_error_code() else {
        return StoreError::Backend(format!("{location}: {e}"));
    };
    let cause = match code {
        ErrorCode::NotADatabase => return corrupt(location, "the file is not a SQLite database"),
        ErrorCode::DatabaseCorrupt => return corrupt(location, format!("the database is damaged: {e}")),
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
            "the database is locked: another connection held its write lock longer than the busy timeout"
        }
        ErrorCode::ReadOnly => "the database is read-only (file permissions, a read-only mount, or query_only)",
        ErrorCode::SystemIoFailure => "disk I/O error",
        ErrorCode::DiskFull => "the disk is full",
        ErrorCode::CannotOpen => "the file cannot be opened",
        ErrorCode::PermissionDenied => "permission denied",
        _ => return StoreError::Backend(format!("{location}: {e}")),
    };
    StoreError::Backend(format!("{location}: {cause} ({e})"))
}

/// [`sqlite_error`] for `map_err`.
pub(super) fn db_error(location: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| sqlite_error(location, e)
}

#[cfg(test)]
mod tests {
    use rusqlite::ffi;

    use super::*;

    fn failure(code: std::os::raw::c_int, message: &str) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(ffi::Error::new(code), Some(message.to_string()))
    }

    #[test]
    fn causes_are_named_and_only_damage_is_permanent() {
        let cases = [
            (ffi::SQLITE_BUSY, "database is locked", "locked"),
            (ffi::SQLITE_READONLY, "attempt to write a readonly database", "read-only"),
            (ffi::SQLITE_IOERR, "disk I/O error", "disk I/O error"),
            (ffi::SQLITE_FULL, "database or disk is full", "disk is full"),
        ];
        for (code, message, named) in cases {
            let e = sqlite_error("/var/lib/dlq.sqlite", failure(code, message));
            let StoreError::Backend(text) = &e else { panic!("{message}: expected Backend, got {e:?}") };
            assert!(text.starts_with("/var/lib/dlq.sqlite: "), "{text}");
            assert!(text.contains(named), "{text} should name {named:?}");
            assert!(e.is_transient(), "{message} may pass later: transient");
        }
        let damaged = sqlite_error("f", failure(ffi::SQLITE_CORRUPT, "database disk image is malformed"));
        assert!(matches!(damaged, StoreError::Corrupt { .. }), "{damaged:?}");
        assert!(!damaged.is_transient());
        let foreign = sqlite_error("f", failure(ffi::SQLITE_NOTADB, "file is not a database"));
        assert!(matches!(foreign, StoreError::Corrupt { .. }) && !foreign.is_transient(), "{foreign:?}");
    }
}
