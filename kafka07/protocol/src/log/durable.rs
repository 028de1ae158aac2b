//! Names made durable. A power loss keeps a file's data only up to its last fsync, and a
//! directory's entries (names created, renamed or removed in it) only up to that directory's
//! last fsync; a directory created but never named durably in its parent vanishes with
//! everything inside it, however often its files were fsynced. So:
//!
//! - every directory created is followed by an fsync of its parent ([`create_dir`],
//!   [`create_dir_all`], which does so for each missing ancestor);
//! - every file created, renamed or removed is followed by an fsync of its directory
//!   ([`sync_dir`]) before anything that depends on it is acknowledged;
//! - file data is fsynced (`sync_data`) before it is acknowledged or counted as flushed.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use super::error::LogError;

/// fsyncs a directory, so that entries created, renamed or removed in it survive a power loss.
pub fn sync_dir(dir: &Path) -> Result<(), LogError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(LogError::io("fsync directory", dir))
}

/// Creates `dir` (its parent must exist) and fsyncs the parent, so the new name survives.
pub fn create_dir(dir: &Path) -> Result<(), LogError> {
    fs::create_dir(dir).map_err(LogError::io("create directory", dir))?;
    sync_parent(dir)
}

/// Creates `dir` and each missing ancestor, top down, fsyncing every parent that gained an
/// entry: `fs::create_dir_all` made durable.
pub fn create_dir_all(dir: &Path) -> Result<(), LogError> {
    let mut missing: Vec<PathBuf> = Vec::new();
    let mut at = Some(dir);
    while let Some(path) = at.filter(|p| !p.as_os_str().is_empty()) {
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => break,
            Ok(_) => return Err(LogError::io("create directory", path)(io::Error::from(io::ErrorKind::NotADirectory))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(path.to_path_buf()),
            Err(e) => return Err(LogError::io("stat", path)(e)),
        }
        at = path.parent();
    }
    for path in missing.iter().rev() {
        match fs::create_dir(path) {
            // Another process made it: its name may not be durable yet, so fsync all the same.
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => {}
            Err(e) => return Err(LogError::io("create directory", path)(e)),
        }
        sync_parent(path)?;
    }
    Ok(())
}

fn sync_parent(path: &Path) -> Result<(), LogError> {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => sync_dir(parent),
        _ => sync_dir(Path::new(".")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_every_missing_ancestor_and_accepts_existing_ones() {
        let root = std::env::temp_dir().join(format!("kwire-durable-{}", std::process::id()));
        let deep = root.join("a/b/c");
        create_dir_all(&deep).unwrap();
        assert!(deep.is_dir());
        create_dir_all(&deep).unwrap();
        create_dir(&root.join("a/d")).unwrap();
        assert!(create_dir(&root.join("a/d")).is_err(), "create_dir refuses an existing name");
        fs::write(root.join("file"), b"x").unwrap();
        assert!(create_dir_all(&root.join("file/under")).is_err(), "a file in the way");
        fs::remove_dir_all(&root).unwrap();
    }
}
