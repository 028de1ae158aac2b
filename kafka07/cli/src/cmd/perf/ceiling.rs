//! Physical ceilings measured in the same run as the perf tests: a plain TCP blast of the same
//! bytes over loopback (one writer, one reader discarding) and a plain sequential file write
//! (then fsync). Both use blocking std I/O on their own threads, the cheapest way to move bytes.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

/// How many times each ceiling runs; the best run counts (a ceiling is what the machine can
/// do, and this machine is shared and noisy).
pub const CEILING_RUNS: usize = 3;

/// The fastest of [`CEILING_RUNS`] runs of `f`.
pub fn best_of(mut f: impl FnMut() -> std::io::Result<Measured>) -> std::io::Result<Measured> {
    let mut best: Option<Measured> = None;
    for _ in 0..CEILING_RUNS {
        let m = f()?;
        if best.is_none_or(|b| m.elapsed < b.elapsed) {
            best = Some(m);
        }
    }
    best.ok_or_else(|| std::io::Error::other("no ceiling run"))
}

/// Bytes moved and the time it took.
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    pub bytes: u64,
    pub elapsed: Duration,
}

impl Measured {
    pub fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

fn pattern(chunk: usize) -> Vec<u8> {
    (0..chunk.max(1)).map(|i| (i * 31 % 251) as u8).collect()
}

/// Writes `bytes` bytes to `w` as repeats of `data` (one write per repeat).
fn write_repeated(w: &mut impl Write, data: &[u8], bytes: u64) -> std::io::Result<()> {
    let mut left = bytes;
    while left > 0 {
        let n = (data.len() as u64).min(left) as usize;
        w.write_all(&data[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// What a TCP blast sends.
#[derive(Debug, Clone, Copy)]
pub enum BlastSource<'a> {
    /// One `chunk`-sized buffer written again and again: it stays in the CPU cache, so this is
    /// what loopback TCP moves when the bytes cost nothing to fetch.
    Pattern { chunk: usize },
    /// A file of at least the blast's size sent with `sendfile` in `chunk`-sized calls, as the
    /// broker sends log segments (one call per fetch answer): the bytes come from the page
    /// cache, from memory.
    File { path: &'a Path, chunk: usize },
}

/// Sends `bytes` from `source` to a reader on another thread over 127.0.0.1; the time runs
/// until the reader has received the last byte. `congestion` names the sending socket's TCP
/// congestion control algorithm and `receive_buffer` the reader's `SO_RCVBUF` (`None`: the
/// system's default and automatic sizing), so that the ceiling can use the settings of the
/// client it is compared with.
pub fn tcp_blast(
    bytes: u64,
    source: BlastSource<'_>,
    congestion: Option<&str>,
    receive_buffer: Option<usize>,
) -> std::io::Result<Measured> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let reader = std::thread::spawn(move || -> std::io::Result<u64> {
        let (mut s, _) = listener.accept()?;
        if let Some(size) = receive_buffer {
            socket2::SockRef::from(&s).set_recv_buffer_size(size)?;
        }
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0u64;
        loop {
            let n = s.read(&mut buf)?;
            if n == 0 {
                return Ok(total);
            }
            total += n as u64;
        }
    });
    // Built before the clock starts.
    let data = match source {
        BlastSource::Pattern { chunk } => pattern(chunk),
        BlastSource::File { .. } => Vec::new(),
    };
    let start = Instant::now();
    let mut s = TcpStream::connect(addr)?;
    if let Some(algorithm) = congestion {
        set_congestion(&s, algorithm)
            .map_err(|e| std::io::Error::new(e.kind(), format!("congestion control {algorithm}: {e}")))?;
    }
    match source {
        BlastSource::File { path, chunk } => {
            let sent = send_file(&s, &std::fs::File::open(path)?, bytes, chunk)?;
            if sent != bytes {
                return Err(std::io::Error::other(format!("{} holds only {sent} of {bytes} bytes", path.display())));
            }
        }
        BlastSource::Pattern { .. } => write_repeated(&mut s, &data, bytes)?,
    }
    s.shutdown(std::net::Shutdown::Write)?;
    let received = reader.join().map_err(|_| std::io::Error::other("blast reader thread panicked"))??;
    let elapsed = start.elapsed();
    if received != bytes {
        return Err(std::io::Error::other(format!("blast reader got {received} of {bytes} bytes")));
    }
    Ok(Measured { bytes, elapsed })
}

/// A scratch file of `bytes` bytes in `dir` for [`BlastSource::File`], removed when dropped.
pub struct ScratchFile(std::path::PathBuf);

impl ScratchFile {
    pub fn create(dir: &Path, bytes: u64) -> std::io::Result<ScratchFile> {
        let file = ScratchFile(tempfile_in(dir)?);
        let mut f = std::fs::OpenOptions::new().write(true).open(&file.0)?;
        write_repeated(&mut f, &pattern(1 << 20), bytes)?;
        Ok(file)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Sends the first `bytes` bytes of `file` with `sendfile`, `chunk` bytes per call (one call
/// of 1 GiB, as `io::copy` makes, measured well below what the broker's answer-sized calls
/// move on loopback). Returns how many were sent (fewer at the file's end).
#[cfg(target_os = "linux")]
fn send_file(s: &TcpStream, file: &std::fs::File, bytes: u64, chunk: usize) -> std::io::Result<u64> {
    let mut offset: i64 = 0;
    let end = i64::try_from(bytes).map_err(|_| std::io::Error::other("blast larger than i64"))?;
    while offset < end {
        let count = usize::try_from(end - offset).unwrap_or(usize::MAX).min(chunk.max(1));
        match nix::sys::sendfile::sendfile(s, file, Some(&mut offset), count) {
            Ok(0) => break,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(offset as u64)
}

/// [`send_file`] where there is no `sendfile`: positioned reads and writes.
#[cfg(not(target_os = "linux"))]
fn send_file(mut s: &TcpStream, file: &std::fs::File, bytes: u64, chunk: usize) -> std::io::Result<u64> {
    let mut buf = vec![0u8; chunk.clamp(1, 1 << 22)];
    let mut sent = 0u64;
    let mut reader = file.take(bytes);
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(sent);
        }
        s.write_all(&buf[..n])?;
        sent += n as u64;
    }
}

#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn set_congestion(s: &TcpStream, algorithm: &str) -> std::io::Result<()> {
    socket2::SockRef::from(s).set_tcp_congestion(algorithm.as_bytes())
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
fn set_congestion(_: &TcpStream, _: &str) -> std::io::Result<()> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "TCP_CONGESTION is not available on this platform"))
}

/// Writes `bytes` in `chunk`-sized writes to a new file in `dir`, then fsyncs; the file is
/// removed afterwards.
pub fn file_write(dir: &Path, bytes: u64, chunk: usize) -> std::io::Result<Measured> {
    let file = tempfile_in(dir)?;
    let data = pattern(chunk);
    let start = Instant::now();
    let result = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).open(&file)?;
        write_repeated(&mut f, &data, bytes)?;
        f.sync_all()
    })();
    let elapsed = start.elapsed();
    let _ = std::fs::remove_file(&file);
    result?;
    Ok(Measured { bytes, elapsed })
}

fn tempfile_in(dir: &Path) -> std::io::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir)?;
    for i in 0..100u32 {
        let p = dir.join(format!(".kwire-ceiling-{}-{i}", std::process::id()));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&p) {
            Ok(_) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!("cannot create a scratch file in {}", dir.display())))
}
