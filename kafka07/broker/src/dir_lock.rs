//! One broker per log directory: an exclusive `flock` on `<log dir>/.kwire07-broker.lock`, held
//! for the life of the process. The kernel releases it on any exit, `kill -9` included, so a
//! crashed broker never blocks its own restart.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The lock file's name (hidden, so the log loader leaves it alone).
pub const LOCK_FILE: &str = ".kwire07-broker.lock";

/// Why the directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum DirLockError {
    #[error("log dir {dir} is in use by another kwire07-broker ({holder})")]
    Held { dir: String, holder: String },
    #[error("locking {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// The log directory could not be created (durably: see `kwire07_protocol::log::durable`).
    #[error(transparent)]
    Create(#[from] kwire07_protocol::log::LogError),
}

/// Held while the broker runs; dropping it (or exiting) releases the directory.
#[derive(Debug)]
pub struct DirLock {
    #[cfg(target_os = "linux")]
    _lock: nix::fcntl::Flock<File>,
    #[cfg(not(target_os = "linux"))]
    _file: File,
}

/// Takes the log directory's lock, writing this process's pid into the lock file; refuses at
/// once (no waiting) when another process holds it, naming that process's pid.
pub fn lock(dir: &Path) -> Result<DirLock, DirLockError> {
    let path = dir.join(LOCK_FILE);
    let io = |source| DirLockError::Io { path: path.clone(), source };
    // The log directory's name must survive a power loss with what is acknowledged inside it.
    kwire07_protocol::log::durable::create_dir_all(dir)?;
    let file =
        std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
    #[cfg(target_os = "linux")]
    {
        use nix::fcntl::{Flock, FlockArg};
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(mut lock) => {
                write_pid(&mut lock).map_err(io)?;
                Ok(DirLock { _lock: lock })
            }
            Err((mut file, nix::errno::Errno::EWOULDBLOCK)) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let holder = match pid.trim() {
                    "" => "pid unknown".to_owned(),
                    pid => format!("pid {pid}"),
                };
                Err(DirLockError::Held { dir: dir.display().to_string(), holder })
            }
            Err((_, errno)) => Err(io(std::io::Error::from(errno))),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let mut file = file;
        write_pid(&mut file).map_err(io)?;
        Ok(DirLock { _file: file })
    }
}

fn write_pid(file: &mut File) -> std::io::Result<()> {
    file.set_len(0)?;
    file.rewind()?;
    writeln!(file, "{}", std::process::id())?;
    file.flush()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_and_freed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock(dir.path()).unwrap();
        // flock locks belong to the open file description: a second open in this process
        // conflicts exactly as another process would.
        let err = lock(dir.path()).unwrap_err().to_string();
        assert!(err.contains("in use by another kwire07-broker"), "{err}");
        assert!(err.contains(&format!("pid {}", std::process::id())), "{err}");
        drop(first);
        lock(dir.path()).unwrap();
    }
}
