//! Where retention keeps the records it evicts (feature `retention`): the [`Archive`] trait, the
//! options' file natively ([`FileArchive`], feature `files`), a front end's own otherwise (the
//! browser's is the caller's function, handed in through
//! [`Client::start_archiving`](crate::Client::start_archiving)). Apart from `retention.rs` because
//! the client's shared state holds an archive and retention runs on that state.

use std::sync::Arc;

use captcha_dlq_core::dlq::retention::RetentionOptions;

use crate::error::Result;
use crate::runtime::{BoxFuture, MaybeSendSync};

/// Where evicted records are kept before the store lets them go.
pub trait Archive: MaybeSendSync {
    /// How the report, the audit trail and the log name it.
    fn name(&self) -> String;
    /// Keeps `count` records, given as `text`: JSONL, redacted ([`export_jsonl_redacted`](captcha_dlq_core::dlq::export_jsonl_redacted)). An
    /// error (its text) keeps the records in the DLQ.
    fn keep(&self, text: String, count: usize) -> BoxFuture<'_, Result<(), String>>;
}

/// The `archive` file of the options: appended to and synced, created readable by its owner only.
#[cfg(feature = "files")]
#[derive(Clone, Debug)]
pub struct FileArchive {
    pub path: String,
}

#[cfg(feature = "files")]
impl Archive for FileArchive {
    fn name(&self) -> String {
        self.path.clone()
    }

    fn keep(&self, text: String, _count: usize) -> BoxFuture<'_, Result<(), String>> {
        use std::io::Write as _;
        let written = crate::files::open_private(std::path::Path::new(&self.path), crate::files::Private::Append)
            .and_then(|mut file| file.write_all(text.as_bytes()).and_then(|()| file.sync_all()));
        Box::pin(async move { written.map_err(|e| e.to_string()) })
    }
}

/// The options' `archive` file, if they name one; a build without files refuses one (its front
/// end gives an archive of its own instead: [`Client::start_archiving`](crate::Client::start_archiving)).
pub(crate) fn file_archive(options: &RetentionOptions) -> Result<Option<Arc<dyn Archive>>> {
    let Some(path) = options.archive.clone() else { return Ok(None) };
    #[cfg(feature = "files")]
    return Ok(Some(Arc::new(FileArchive { path })));
    #[cfg(not(feature = "files"))]
    {
        let _ = path;
        Err(crate::error::Error::Config(captcha_dlq_core::ConfigError::new(
            "dlq_retention.archive",
            "this build has no files to archive to: give the archive as a function (the browser package's `archive(jsonl, count)`)",
        )))
    }
}
