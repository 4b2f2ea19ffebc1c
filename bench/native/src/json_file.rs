//! The file-backed dead-letter queue of the seeds (JavaScript, `captcha-dlq.json`),
//! ported as is: an in-memory array that is rewritten whole, as pretty JSON
//! (`JSON.stringify(queue, null, 2)`), on every push and every pop. No lease, no
//! fsync (`writeFileSync` does not sync either). Each operation therefore costs
//! time proportional to the queue's size, which is what the benchmark shows.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use captcha_dlq_core::dlq::DeadLetterRecord;

/// The seeds' `DeadLetterQueue` with its `_save` after every change.
#[derive(Debug)]
pub struct JsonFileDlq {
    path: PathBuf,
    queue: VecDeque<DeadLetterRecord>,
}

impl JsonFileDlq {
    /// An empty queue saved at `path` (the seeds start from `[]` when the file is missing).
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let dlq = JsonFileDlq { path: path.as_ref().to_path_buf(), queue: VecDeque::new() };
        dlq.save()?;
        Ok(dlq)
    }

    /// `push(task)`: append, then rewrite the file.
    pub fn push(&mut self, record: DeadLetterRecord) -> io::Result<()> {
        self.queue.push_back(record);
        self.save()
    }

    /// `pop()`: take the oldest, then rewrite the file if something was taken.
    pub fn pop(&mut self) -> io::Result<Option<DeadLetterRecord>> {
        let record = self.queue.pop_front();
        if record.is_some() {
            self.save()?;
        }
        Ok(record)
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn save(&self) -> io::Result<()> {
        let mut out = BufWriter::new(File::create(&self.path)?);
        serde_json::to_writer_pretty(&mut out, &self.queue).map_err(io::Error::other)?;
        out.flush()
    }
}
