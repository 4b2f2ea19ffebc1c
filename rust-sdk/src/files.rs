//! Files the SDK writes for the user: exports hold tasks (page URLs, labels, sometimes
//! proxy credentials), so they are created readable by their owner only, like the DLQ.

use std::io::Write;
use std::path::Path;

pub use captcha_dlq_client::files::{open_private, Private};
use captcha_dlq_client::Error;

/// Writes `text` to `path`, created with mode 0600 (replacing what was there).
pub fn write_private(path: &Path, text: &str) -> Result<(), Error> {
    open_private(path, Private::Truncate)
        .and_then(|mut file| file.write_all(text.as_bytes()).and_then(|()| file.sync_all()))
        .map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))
}
