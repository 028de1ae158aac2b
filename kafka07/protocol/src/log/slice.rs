//! A byte range of one segment file, the result of a read. Holding the `Arc<File>` keeps the
//! data readable even if retention deletes the file meanwhile (Unix semantics).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};

use crate::log::error::LogError;

#[derive(Debug, Clone)]
pub struct FileSlice {
    pub(crate) file: Arc<File>,
    pub(crate) path: Arc<Path>,
    pub(crate) segment_start: u64,
    pub(crate) position: u64,
    pub(crate) len: u64,
}

impl FileSlice {
    /// The open segment file (for `sendfile`/`copy_file_range`, or `read_at`).
    pub fn file(&self) -> &Arc<File> {
        &self.file
    }

    /// Path of the segment file (it may have been deleted since the read).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Byte position of the range inside the file.
    pub fn position(&self) -> u64 {
        self.position
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Log offset of the first byte.
    pub fn offset(&self) -> u64 {
        self.segment_start + self.position
    }

    /// Log offset of the segment the range lies in.
    pub fn segment_start(&self) -> u64 {
        self.segment_start
    }

    /// Reads the range into the end of `buf`.
    pub fn read_into(&self, buf: &mut Vec<u8>) -> Result<(), LogError> {
        let start = buf.len();
        buf.resize(start + self.len as usize, 0);
        if let Err(source) = self.file.read_exact_at(&mut buf[start..], self.position) {
            buf.truncate(start);
            return Err(LogError::Io { op: "read segment", path: self.path.to_path_buf(), source });
        }
        Ok(())
    }

    /// Reads the start of the range into `dst` (up to `dst.len()` bytes) and returns how many
    /// bytes were read. Lets a caller reuse one buffer without zeroing it each time.
    pub fn read_to_slice(&self, dst: &mut [u8]) -> Result<usize, LogError> {
        let n = (self.len.min(dst.len() as u64)) as usize;
        self.file
            .read_exact_at(&mut dst[..n], self.position)
            .map_err(LogError::io("read segment", self.path.to_path_buf()))?;
        Ok(n)
    }

    /// Reads the range into a new buffer.
    pub fn to_bytes(&self) -> Result<Bytes, LogError> {
        let mut buf = BytesMut::zeroed(self.len as usize);
        self.file
            .read_exact_at(&mut buf, self.position)
            .map_err(LogError::io("read segment", self.path.to_path_buf()))?;
        Ok(buf.freeze())
    }
}
