//! Files the SDK writes for the user: exports hold tasks (page URLs, labels, sometimes
//! proxy credentials), so they are created readable by their owner only, like the DLQ.

use std::io::Write;
use std::path::Path;

use captcha_dlq_client::Error;

/// Writes `text` to `path`, created with mode 0600 (replacing what was there).
pub fn write_private(path: &Path, text: &str) -> Result<(), Error> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))?;
    #[cfg(unix)]
    {
        // An existing file keeps its mode on open: narrow it too.
        use std::os::unix::fs::PermissionsExt;
        let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))
}
