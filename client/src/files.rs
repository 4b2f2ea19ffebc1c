//! Files holding records (retention archives, exports, batch results): they carry tasks
//! (page URLs, labels, sometimes proxy credentials) and answers, so they are created
//! readable by their owner only (0600), like the SQLite DLQ, whatever the umask.

use std::fs::File;
use std::path::Path;

/// How a private file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Private {
    /// Replaces what was there.
    Truncate,
    /// Appends to what is there.
    Append,
}

/// Opens `path` for writing, created with mode 0600; an existing file is narrowed to 0600
/// too (it keeps its mode on open, and may predate this rule).
pub fn open_private(path: &Path, how: Private) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true);
    match how {
        Private::Truncate => options.write(true).truncate(true),
        Private::Append => options.append(true),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}
