//! Writing responses on a non-blocking socket: plain bytes, and segment-file ranges sent with
//! `sendfile(2)` on Linux (the kernel copies page cache to socket, no user-space buffer). Other
//! platforms, and files `sendfile` refuses, fall back to a buffered copy.
//!
//! Every wait for the socket to become writable is bounded by `timeout`: a peer that stops
//! reading loses its connection instead of holding a task forever.

use std::io;
use std::time::Duration;

use kwire07_protocol::log::FileSlice;
use tokio::io::Interest;
use tokio::net::TcpStream;

async fn writable(stream: &TcpStream, timeout: Duration) -> io::Result<()> {
    match tokio::time::timeout(timeout, stream.writable()).await {
        Ok(r) => r,
        Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "peer stopped reading")),
    }
}

/// Writes all of `buf`.
pub async fn write_all(stream: &TcpStream, mut buf: &[u8], timeout: Duration) -> io::Result<()> {
    while !buf.is_empty() {
        writable(stream, timeout).await?;
        match stream.try_write(buf) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Sends the file range `slice` (zero copy where possible).
pub async fn send_slice(stream: &TcpStream, slice: &FileSlice, timeout: Duration) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        match sendfile_all(stream, slice, timeout).await? {
            None => Ok(()),
            Some(sent) => copy_from(stream, slice, sent, timeout).await,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        copy_from(stream, slice, 0, timeout).await
    }
}

/// `sendfile` loop. `Ok(Some(sent))` when the kernel refuses this file (EINVAL/ENOSYS, e.g.
/// some file systems) after `sent` bytes; the caller copies the rest.
#[cfg(target_os = "linux")]
async fn sendfile_all(stream: &TcpStream, slice: &FileSlice, timeout: Duration) -> io::Result<Option<u64>> {
    use nix::errno::Errno;

    let end = slice.position() + slice.len();
    let mut pos = slice.position();
    while pos < end {
        writable(stream, timeout).await?;
        // At most 1 GiB per call; the kernel caps a single call near 2 GiB anyway.
        let count = (end - pos).min(1 << 30) as usize;
        let mut offset = i64::try_from(pos).map_err(|_| io::Error::other("file offset beyond i64"))?;
        let file = slice.file();
        let result = stream.try_io(Interest::WRITABLE, || {
            nix::sys::sendfile::sendfile(stream, file.as_ref(), Some(&mut offset), count).map_err(io::Error::from)
        });
        match result {
            Ok(0) => {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "segment file shorter than the fetched range"))
            }
            Ok(n) => pos += n as u64,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) if matches!(e.raw_os_error(), Some(c) if c == Errno::EINVAL as i32 || c == Errno::ENOSYS as i32) => {
                return Ok(Some(pos - slice.position()));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// Buffered copy of `slice` from `skip` bytes in.
async fn copy_from(stream: &TcpStream, slice: &FileSlice, skip: u64, timeout: Duration) -> io::Result<()> {
    use std::os::unix::fs::FileExt;

    const CHUNK: u64 = 256 * 1024;
    let mut buf = vec![0u8; CHUNK.min(slice.len()) as usize];
    let mut done = skip;
    while done < slice.len() {
        let n = (slice.len() - done).min(CHUNK) as usize;
        slice.file().read_exact_at(&mut buf[..n], slice.position() + done)?;
        write_all(stream, &buf[..n], timeout).await?;
        done += n as u64;
    }
    Ok(())
}

/// Holds `TCP_CORK` while a response is written in pieces (header, file range, next header…),
/// so the pieces leave in full-sized segments; released on drop.
pub struct Cork<'a> {
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    stream: &'a TcpStream,
}

impl<'a> Cork<'a> {
    pub fn new(stream: &'a TcpStream) -> Cork<'a> {
        #[cfg(target_os = "linux")]
        let _ = socket2::SockRef::from(stream).set_tcp_cork(true);
        Cork { stream }
    }
}

impl Drop for Cork<'_> {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        let _ = socket2::SockRef::from(self.stream).set_tcp_cork(false);
    }
}
