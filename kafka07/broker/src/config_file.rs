//! Standalone (no ZooKeeper) topic configuration: every topic's overrides in one JSON file in
//! the log dir, `.kwire-topic-config.json` =
//! `{"version":1,"topics":{"<topic>":{"segment.bytes":"1024",…},…}}`
//! (each topic's object is what ZooKeeper mode keeps in `/config/topics/<topic>`).
//!
//! Writes are atomic: the new contents go to a temporary file, which is fsynced, renamed over
//! the old file, and the directory fsynced; a crash at any point leaves the old or the new file.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::topic_settings::{Overrides, SettingError};

/// The file's name in the log dir (hidden, so the log manager does not take it for a log).
pub const CONFIG_FILE: &str = ".kwire-topic-config.json";
const TEMP_SUFFIX: &str = ".tmp";

#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    #[error("{op} {path}: {source}")]
    Io { op: &'static str, path: PathBuf, source: io::Error },
    #[error("{path}: malformed topic configuration: {detail}")]
    Malformed { path: PathBuf, detail: String },
    #[error("{path}: topic {topic}: {source}")]
    Setting { path: PathBuf, topic: String, source: SettingError },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileWire {
    version: i64,
    topics: BTreeMap<String, BTreeMap<String, String>>,
}

pub fn path_in(log_dir: &Path) -> PathBuf {
    log_dir.join(CONFIG_FILE)
}

/// Loads every topic's overrides; a missing file means none.
pub fn load(log_dir: &Path) -> Result<BTreeMap<String, Overrides>, ConfigFileError> {
    let path = path_in(log_dir);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(source) => return Err(ConfigFileError::Io { op: "read", path, source }),
    };
    let wire: FileWire = serde_json::from_slice(&bytes)
        .map_err(|e| ConfigFileError::Malformed { path: path.clone(), detail: e.to_string() })?;
    if wire.version != 1 {
        let detail = format!("unsupported version {}, the only known version is 1", wire.version);
        return Err(ConfigFileError::Malformed { path, detail });
    }
    let mut out = BTreeMap::new();
    for (topic, map) in wire.topics {
        let o = Overrides::from_map(&map).map_err(|source| ConfigFileError::Setting {
            path: path.clone(),
            topic: topic.clone(),
            source,
        })?;
        out.insert(topic, o);
    }
    Ok(out)
}

/// The file's contents for `topics`.
pub fn encode(topics: &BTreeMap<String, Overrides>) -> Vec<u8> {
    let wire = FileWire { version: 1, topics: topics.iter().map(|(t, o)| (t.clone(), o.as_map().clone())).collect() };
    // Maps of strings always serialise.
    serde_json::to_vec_pretty(&wire).unwrap_or_default()
}

/// Replaces the file with `topics`, atomically.
pub fn save(log_dir: &Path, topics: &BTreeMap<String, Overrides>) -> Result<(), ConfigFileError> {
    write_atomically(&path_in(log_dir), &encode(topics), |_| Ok(()))
}

/// Writes `bytes` to `path` so that a crash leaves either the old file or the new one: write a
/// temporary file beside it, fsync it, rename it over `path`, fsync the directory.
/// `before_rename` runs between the fsync and the rename (tests use it to simulate a crash
/// there by returning an error).
pub fn write_atomically(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> Result<(), ConfigFileError> {
    let io = |op: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| ConfigFileError::Io { op, path, source }
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(TEMP_SUFFIX);
    let temp = dir.join(name);
    let mut file = File::create(&temp).map_err(io("create", &temp))?;
    file.write_all(bytes).map_err(io("write", &temp))?;
    file.sync_all().map_err(io("fsync", &temp))?;
    drop(file);
    before_rename(&temp).map_err(io("prepare rename of", &temp))?;
    fs::rename(&temp, path).map_err(io("rename to", path))?;
    File::open(dir).and_then(|d| d.sync_all()).map_err(io("fsync directory", dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overrides(pairs: &[(&str, &str)]) -> Overrides {
        let mut o = Overrides::default();
        for (k, v) in pairs {
            o.set(k, Some(v)).unwrap();
        }
        o
    }

    #[test]
    fn round_trip_and_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load(dir.path()).unwrap().is_empty());
        let topics = BTreeMap::from([
            ("a".to_owned(), overrides(&[("segment.bytes", "100"), ("partitions", "3")])),
            ("b".to_owned(), Overrides::default()),
        ]);
        save(dir.path(), &topics).unwrap();
        assert_eq!(load(dir.path()).unwrap(), topics);
        let text = fs::read_to_string(path_in(dir.path())).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["topics"]["a"]["segment.bytes"], "100");
        assert_eq!(v["version"], 1);
    }

    #[test]
    fn crash_before_rename_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let old = BTreeMap::from([("t".to_owned(), overrides(&[("segment.bytes", "100")]))]);
        save(dir.path(), &old).unwrap();
        let new = BTreeMap::from([("t".to_owned(), overrides(&[("segment.bytes", "200")]))]);
        let crash = write_atomically(&path_in(dir.path()), &encode(&new), |temp| {
            // The temporary file is complete and durable at this point.
            assert_eq!(fs::read(temp).unwrap(), encode(&new));
            Err(io::Error::other("simulated crash"))
        });
        assert!(crash.unwrap_err().to_string().contains("simulated crash"));
        assert_eq!(load(dir.path()).unwrap(), old, "old file intact after a crash before the rename");
        // A leftover temporary file (even a torn one) does not disturb loading or the next save.
        let temp = dir.path().join(format!("{CONFIG_FILE}{TEMP_SUFFIX}"));
        fs::write(&temp, b"{\"version\":1,\"top").unwrap();
        assert_eq!(load(dir.path()).unwrap(), old);
        save(dir.path(), &new).unwrap();
        assert_eq!(load(dir.path()).unwrap(), new);
        assert!(!temp.exists());
    }

    #[test]
    fn every_crash_point_leaves_old_or_new() {
        // Simulate a crash after each prefix of the temporary file was written: the file that
        // loading sees is always exactly the old or the new one.
        let dir = tempfile::tempdir().unwrap();
        let old = BTreeMap::from([("t".to_owned(), overrides(&[("flush.ms", "5")]))]);
        let new = BTreeMap::from([("u".to_owned(), overrides(&[("retention.ms", "-1")]))]);
        save(dir.path(), &old).unwrap();
        let bytes = encode(&new);
        for cut in [0, 1, bytes.len() / 2, bytes.len() - 1] {
            let r = write_atomically(&path_in(dir.path()), &bytes[..cut], |_| Err(io::Error::other("crash")));
            assert!(r.is_err());
            assert_eq!(load(dir.path()).unwrap(), old);
        }
        save(dir.path(), &new).unwrap();
        assert_eq!(load(dir.path()).unwrap(), new);
    }

    #[test]
    fn malformed_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(path_in(dir.path()), b"{\"version\":2,\"topics\":{}}").unwrap();
        assert!(load(dir.path()).unwrap_err().to_string().contains("unsupported version 2"));
        fs::write(path_in(dir.path()), b"{\"version\":1,\"topics\":{\"t\":{\"bogus\":\"1\"}}}").unwrap();
        let e = load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("topic t") && e.contains("bogus"), "{e}");
        fs::write(path_in(dir.path()), b"{\"version\":1,").unwrap();
        assert!(load(dir.path()).unwrap_err().to_string().contains("malformed topic configuration"));
    }
}
