//! One segment file: its start offset, the open file, bytes written and bytes flushed.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::log::error::LogError;

/// `<20-digit start offset>.kafka`.
pub fn segment_file_name(start: u64) -> String {
    format!("{start:020}.kafka")
}

/// The start offset in a segment file name, if it is one (digits only, then `.kafka`).
pub fn parse_segment_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".kafka")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[derive(Debug)]
pub(crate) struct Segment {
    pub(crate) start: u64,
    pub(crate) path: Arc<Path>,
    pub(crate) file: Arc<File>,
    /// Bytes written to the file.
    pub(crate) size: u64,
    /// Bytes known to be on stable storage (0.7's high-water mark).
    pub(crate) flushed: u64,
}

impl Segment {
    /// Opens an existing segment; `writable` for the active one.
    pub(crate) fn open(path: PathBuf, start: u64, writable: bool) -> Result<Segment, LogError> {
        let file =
            OpenOptions::new().read(true).write(writable).open(&path).map_err(LogError::io("open segment", &path))?;
        let size = file.metadata().map_err(LogError::io("stat segment", &path))?.len();
        Ok(Segment { start, path: path.into(), file: Arc::new(file), size, flushed: size })
    }

    /// Creates a new empty segment in `dir`, replacing any stale file of the same name.
    pub(crate) fn create(dir: &Path, start: u64) -> Result<Segment, LogError> {
        let path = dir.join(segment_file_name(start));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(LogError::io("create segment", &path))?;
        Ok(Segment { start, path: path.into(), file: Arc::new(file), size: 0, flushed: 0 })
    }

    /// The file's modification time: a segment's age for OFFSETS and retention (as in 0.7).
    pub(crate) fn modified(&self) -> Result<SystemTime, LogError> {
        self.file.metadata().and_then(|m| m.modified()).map_err(LogError::io("stat segment", self.path.to_path_buf()))
    }

    pub(crate) fn end(&self) -> u64 {
        self.start + self.size
    }

    pub(crate) fn sync(&mut self) -> Result<(), LogError> {
        if self.flushed < self.size {
            self.file.sync_data().map_err(LogError::io("fsync segment", self.path.to_path_buf()))?;
            self.flushed = self.size;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(segment_file_name(0), "00000000000000000000.kafka");
        assert_eq!(segment_file_name(536_870_917), "00000000000536870917.kafka");
        assert_eq!(parse_segment_file_name("00000000000536870917.kafka"), Some(536_870_917));
        assert_eq!(parse_segment_file_name("0.kafka"), Some(0));
        for bad in
            ["x.kafka", ".kafka", "-1.kafka", "+1.kafka", "00000000000000000000.log", "99999999999999999999999.kafka"]
        {
            assert_eq!(parse_segment_file_name(bad), None, "{bad}");
        }
    }
}
