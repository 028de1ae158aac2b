//! A file system that remembers what a power loss would keep. Each file has the bytes readers
//! see and the bytes on "disk" (as of its last fsync) with the writes since then, in order;
//! each directory has its entries and its durable entries (as of its last fsync). A power loss
//! keeps the durable tree from the root, and of each file's pending writes a random prefix,
//! the last of them possibly torn. Operations are counted so a power loss can be aimed right
//! after a given one; afterwards every operation fails, as on a machine that has stopped.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::SystemTime;

/// Inode number of the root directory.
pub const ROOT: u64 = 1;

/// What the file system keeps of a file or directory after a power loss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Image {
    Dir(BTreeMap<OsString, Image>),
    File(Vec<u8>),
}

impl Image {
    pub fn empty() -> Image {
        Image::Dir(BTreeMap::new())
    }
}

/// Operations that change the file system, by kind, for aiming a power loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Create,
    Mkdir,
    Write,
    SetLen,
    Fsync,
    FsyncDir,
    Rename,
    Unlink,
}

/// The power loss to come: right after the `nth` operation of kind `op` (any kind when
/// `None`) from the moment it is armed.
#[derive(Debug, Clone, Copy)]
pub struct Trigger {
    pub op: Option<Op>,
    pub nth: u64,
}

/// A change to a file since its last fsync.
#[derive(Debug, Clone)]
pub enum Pending {
    Write { offset: u64, bytes: Vec<u8> },
    SetLen(u64),
}

impl Pending {
    fn apply(&self, data: &mut Vec<u8>) {
        match self {
            Pending::Write { offset, bytes } => write_at(data, *offset, bytes),
            Pending::SetLen(len) => data.resize(*len as usize, 0),
        }
    }
}

fn write_at(data: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let end = offset as usize + bytes.len();
    if data.len() < end {
        data.resize(end, 0);
    }
    data[offset as usize..end].copy_from_slice(bytes);
}

#[derive(Debug)]
pub enum Kind {
    File { data: Vec<u8>, durable: Vec<u8>, pending: Vec<Pending> },
    Dir { entries: BTreeMap<OsString, u64>, durable: BTreeMap<OsString, u64> },
}

#[derive(Debug)]
pub struct Inode {
    /// Where it is named now (no hard links here), for the fault rules and messages.
    pub parent: u64,
    pub name: OsString,
    pub kind: Kind,
    pub mode: u32,
    pub mtime: SystemTime,
}

/// Fsyncs the file system acknowledges but does not perform: a broken program, emulated.
pub type Ignore = Box<dyn Fn(&std::path::Path) -> bool + Send>;

/// Errors of the model, as errno values.
pub type Errno = i32;

/// Counts of what the file system saw.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub ops: u64,
    pub fsyncs: u64,
    pub dir_fsyncs: u64,
    pub ignored_fsyncs: u64,
}

pub struct Model {
    inodes: HashMap<u64, Inode>,
    next_ino: u64,
    trigger: Option<(Trigger, u64)>,
    /// Taken at the power loss; from then on every operation fails.
    lost: Option<Image>,
    rng: fastrand::Rng,
    pub stats: Stats,
    pub ignore_fsync: Option<Ignore>,
    pub ignore_dir_fsync: Option<Ignore>,
}

impl Model {
    /// A file system holding `image`, durable as it is; `seed` drives the torn writes.
    pub fn new(image: &Image, seed: u64) -> Model {
        let mut model = Model {
            inodes: HashMap::new(),
            next_ino: ROOT,
            trigger: None,
            lost: None,
            rng: fastrand::Rng::with_seed(seed),
            stats: Stats::default(),
            ignore_fsync: None,
            ignore_dir_fsync: None,
        };
        model.load(image, ROOT, OsString::new());
        model
    }

    fn load(&mut self, image: &Image, parent: u64, name: OsString) -> u64 {
        let ino = self.next_ino;
        self.next_ino += 1;
        let kind = match image {
            Image::File(data) => Kind::File { data: data.clone(), durable: data.clone(), pending: Vec::new() },
            Image::Dir(_) => Kind::Dir { entries: BTreeMap::new(), durable: BTreeMap::new() },
        };
        let mode = if matches!(image, Image::Dir(_)) { 0o755 } else { 0o644 };
        self.inodes.insert(ino, Inode { parent, name, kind, mode, mtime: SystemTime::now() });
        if let Image::Dir(children) = image {
            for (child_name, child) in children {
                let child_ino = self.load(child, ino, child_name.clone());
                if let Some(Inode { kind: Kind::Dir { entries, durable }, .. }) = self.inodes.get_mut(&ino) {
                    entries.insert(child_name.clone(), child_ino);
                    durable.insert(child_name.clone(), child_ino);
                }
            }
        }
        ino
    }

    /// Aims the power loss (replacing any aimed before).
    pub fn arm(&mut self, trigger: Trigger) {
        self.trigger = Some((trigger, 0));
    }

    /// Whether the power loss has happened.
    pub fn is_lost(&self) -> bool {
        self.lost.is_some()
    }

    /// The power loss now, unless it already happened: what the disk holds afterwards.
    pub fn power_loss(&mut self) -> Image {
        if self.lost.is_none() {
            self.lost = Some(self.durable_image());
        }
        self.lost.clone().expect("set above")
    }

    pub fn inode(&self, ino: u64) -> Option<&Inode> {
        self.inodes.get(&ino)
    }

    /// Where `ino` is named now, from the root.
    pub fn path(&self, ino: u64) -> PathBuf {
        let mut parts = Vec::new();
        let mut at = ino;
        while at != ROOT {
            let Some(inode) = self.inodes.get(&at) else { break };
            parts.push(inode.name.clone());
            at = inode.parent;
        }
        parts.iter().rev().collect()
    }

    fn alive(&self) -> Result<(), Errno> {
        if self.lost.is_some() {
            Err(libc::EIO)
        } else {
            Ok(())
        }
    }

    /// Counts an operation that changed something and fires the trigger it completes.
    fn done(&mut self, op: Op) {
        self.stats.ops += 1;
        if let Some((trigger, seen)) = &mut self.trigger {
            if trigger.op.is_none_or(|o| o == op) {
                *seen += 1;
                if *seen >= trigger.nth {
                    self.trigger = None;
                    self.power_loss();
                }
            }
        }
    }

    fn dir_entries(&self, dir: u64) -> Result<&BTreeMap<OsString, u64>, Errno> {
        match self.inodes.get(&dir).map(|i| &i.kind) {
            Some(Kind::Dir { entries, .. }) => Ok(entries),
            Some(Kind::File { .. }) => Err(libc::ENOTDIR),
            None => Err(libc::ENOENT),
        }
    }

    fn dir_entries_mut(&mut self, dir: u64) -> Result<&mut BTreeMap<OsString, u64>, Errno> {
        match self.inodes.get_mut(&dir).map(|i| &mut i.kind) {
            Some(Kind::Dir { entries, .. }) => Ok(entries),
            Some(Kind::File { .. }) => Err(libc::ENOTDIR),
            None => Err(libc::ENOENT),
        }
    }

    pub fn lookup(&self, parent: u64, name: &OsStr) -> Result<u64, Errno> {
        self.alive()?;
        self.dir_entries(parent)?.get(name).copied().ok_or(libc::ENOENT)
    }

    pub fn children(&self, dir: u64) -> Result<Vec<(OsString, u64)>, Errno> {
        self.alive()?;
        Ok(self.dir_entries(dir)?.iter().map(|(n, i)| (n.clone(), *i)).collect())
    }

    fn add(&mut self, parent: u64, name: &OsStr, kind: Kind, mode: u32, op: Op) -> Result<u64, Errno> {
        self.alive()?;
        if self.dir_entries(parent)?.contains_key(name) {
            return Err(libc::EEXIST);
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        self.inodes.insert(ino, Inode { parent, name: name.to_owned(), kind, mode, mtime: SystemTime::now() });
        self.dir_entries_mut(parent)?.insert(name.to_owned(), ino);
        self.done(op);
        Ok(ino)
    }

    pub fn mkdir(&mut self, parent: u64, name: &OsStr, mode: u32) -> Result<u64, Errno> {
        self.add(parent, name, Kind::Dir { entries: BTreeMap::new(), durable: BTreeMap::new() }, mode, Op::Mkdir)
    }

    pub fn create(&mut self, parent: u64, name: &OsStr, mode: u32) -> Result<u64, Errno> {
        let file = Kind::File { data: Vec::new(), durable: Vec::new(), pending: Vec::new() };
        self.add(parent, name, file, mode, Op::Create)
    }

    fn file_mut(&mut self, ino: u64) -> Result<(&mut Vec<u8>, &mut Vec<Pending>), Errno> {
        match self.inodes.get_mut(&ino).map(|i| &mut i.kind) {
            Some(Kind::File { data, pending, .. }) => Ok((data, pending)),
            Some(Kind::Dir { .. }) => Err(libc::EISDIR),
            None => Err(libc::ENOENT),
        }
    }

    pub fn read(&self, ino: u64, offset: u64, size: usize) -> Result<&[u8], Errno> {
        self.alive()?;
        match self.inodes.get(&ino).map(|i| &i.kind) {
            Some(Kind::File { data, .. }) => {
                let start = (offset as usize).min(data.len());
                Ok(&data[start..(start + size).min(data.len())])
            }
            Some(Kind::Dir { .. }) => Err(libc::EISDIR),
            None => Err(libc::ENOENT),
        }
    }

    pub fn write(&mut self, ino: u64, offset: u64, bytes: &[u8]) -> Result<(), Errno> {
        self.alive()?;
        let (data, pending) = self.file_mut(ino)?;
        write_at(data, offset, bytes);
        pending.push(Pending::Write { offset, bytes: bytes.to_vec() });
        self.touch(ino);
        self.done(Op::Write);
        Ok(())
    }

    pub fn set_len(&mut self, ino: u64, len: u64) -> Result<(), Errno> {
        self.alive()?;
        let (data, pending) = self.file_mut(ino)?;
        data.resize(len as usize, 0);
        pending.push(Pending::SetLen(len));
        self.touch(ino);
        self.done(Op::SetLen);
        Ok(())
    }

    fn touch(&mut self, ino: u64) {
        if let Some(inode) = self.inodes.get_mut(&ino) {
            inode.mtime = SystemTime::now();
        }
    }

    pub fn set_mode_and_mtime(&mut self, ino: u64, mode: Option<u32>, mtime: Option<SystemTime>) -> Result<(), Errno> {
        self.alive()?;
        let inode = self.inodes.get_mut(&ino).ok_or(libc::ENOENT)?;
        if let Some(mode) = mode {
            inode.mode = mode & 0o7777;
        }
        if let Some(mtime) = mtime {
            inode.mtime = mtime;
        }
        Ok(())
    }

    /// fsync or fdatasync of a file (both make its data durable here), or of a directory
    /// (its entries).
    pub fn fsync(&mut self, ino: u64) -> Result<(), Errno> {
        self.alive()?;
        let path = self.path(ino);
        let is_dir = matches!(self.inodes.get(&ino).map(|i| &i.kind), Some(Kind::Dir { .. }));
        let ignore = if is_dir { &self.ignore_dir_fsync } else { &self.ignore_fsync };
        if ignore.as_ref().is_some_and(|rule| rule(&path)) {
            self.stats.ignored_fsyncs += 1;
        } else {
            match &mut self.inodes.get_mut(&ino).ok_or(libc::ENOENT)?.kind {
                Kind::File { durable, pending, .. } => {
                    for op in pending.drain(..) {
                        op.apply(durable);
                    }
                }
                Kind::Dir { entries, durable } => *durable = entries.clone(),
            }
        }
        if is_dir {
            self.stats.dir_fsyncs += 1;
            self.done(Op::FsyncDir);
        } else {
            self.stats.fsyncs += 1;
            self.done(Op::Fsync);
        }
        Ok(())
    }

    pub fn unlink(&mut self, parent: u64, name: &OsStr, dir: bool) -> Result<(), Errno> {
        self.alive()?;
        let ino = self.lookup(parent, name)?;
        match (&self.inodes[&ino].kind, dir) {
            (Kind::Dir { entries, .. }, true) if !entries.is_empty() => return Err(libc::ENOTEMPTY),
            (Kind::Dir { .. }, false) => return Err(libc::EISDIR),
            (Kind::File { .. }, true) => return Err(libc::ENOTDIR),
            _ => {}
        }
        self.dir_entries_mut(parent)?.remove(name);
        self.done(Op::Unlink);
        Ok(())
    }

    pub fn rename(&mut self, parent: u64, name: &OsStr, new_parent: u64, new_name: &OsStr) -> Result<(), Errno> {
        self.alive()?;
        let ino = self.lookup(parent, name)?;
        if let Some(&target) = self.dir_entries(new_parent)?.get(new_name) {
            if target == ino {
                return Ok(());
            }
            match (&self.inodes[&target].kind, &self.inodes[&ino].kind) {
                (Kind::Dir { entries, .. }, Kind::Dir { .. }) if !entries.is_empty() => return Err(libc::ENOTEMPTY),
                (Kind::Dir { .. }, Kind::File { .. }) => return Err(libc::EISDIR),
                (Kind::File { .. }, Kind::Dir { .. }) => return Err(libc::ENOTDIR),
                _ => {}
            }
        }
        self.dir_entries_mut(parent)?.remove(name);
        self.dir_entries_mut(new_parent)?.insert(new_name.to_owned(), ino);
        let inode = self.inodes.get_mut(&ino).expect("looked up");
        inode.parent = new_parent;
        inode.name = new_name.to_owned();
        self.done(Op::Rename);
        Ok(())
    }

    /// What a power loss now leaves: the durable tree, each file with a random prefix of its
    /// pending writes (the last one possibly cut short).
    fn durable_image(&mut self) -> Image {
        let mut seen = HashSet::new();
        self.image_of(ROOT, &mut seen)
    }

    fn image_of(&mut self, ino: u64, seen: &mut HashSet<u64>) -> Image {
        if !seen.insert(ino) {
            return Image::empty();
        }
        let children: Vec<(OsString, u64)> = match &self.inodes[&ino].kind {
            Kind::Dir { durable, .. } => durable.iter().map(|(n, i)| (n.clone(), *i)).collect(),
            Kind::File { durable, pending, .. } => {
                let mut data = durable.clone();
                let pending = pending.clone();
                let kept = self.rng.usize(0..=pending.len());
                for op in &pending[..kept] {
                    op.apply(&mut data);
                }
                if let Some(Pending::Write { offset, bytes }) = pending.get(kept) {
                    if self.rng.bool() {
                        let torn = self.rng.usize(0..bytes.len().max(1));
                        write_at(&mut data, *offset, &bytes[..torn.min(bytes.len())]);
                    }
                }
                return Image::File(data);
            }
        };
        Image::Dir(children.into_iter().map(|(name, child)| (name, self.image_of(child, seen))).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(image: &Image, path: &[&str]) -> Option<Vec<u8>> {
        let mut at = image;
        for part in path {
            let Image::Dir(children) = at else { return None };
            at = children.get(OsStr::new(part))?;
        }
        match at {
            Image::File(data) => Some(data.clone()),
            Image::Dir(_) => None,
        }
    }

    #[test]
    fn only_what_was_fsynced_survives_with_its_name() {
        let mut m = Model::new(&Image::empty(), 1);
        let dir = m.mkdir(ROOT, OsStr::new("d"), 0o755).unwrap();
        let f = m.create(dir, OsStr::new("f"), 0o644).unwrap();
        m.write(f, 0, b"hello").unwrap();
        m.fsync(f).unwrap();
        m.fsync(dir).unwrap();
        // The file's data and name are durable, but "d" is not named durably in the root.
        assert_eq!(m.power_loss(), Image::empty());

        let mut m = Model::new(&Image::empty(), 1);
        let dir = m.mkdir(ROOT, OsStr::new("d"), 0o755).unwrap();
        m.fsync(ROOT).unwrap();
        let f = m.create(dir, OsStr::new("f"), 0o644).unwrap();
        m.write(f, 0, b"hello").unwrap();
        m.fsync(f).unwrap();
        m.fsync(dir).unwrap();
        m.write(f, 5, b" world").unwrap();
        let image = m.power_loss();
        let data = file(&image, &["d", "f"]).unwrap();
        assert!(data.starts_with(b"hello") && b"hello world".starts_with(&data), "{data:?}");
        assert_eq!(m.write(f, 0, b"x"), Err(libc::EIO), "nothing works after the power loss");
    }

    #[test]
    fn a_trigger_fires_right_after_the_nth_operation_of_its_kind() {
        let mut m = Model::new(&Image::empty(), 2);
        let f = m.create(ROOT, OsStr::new("f"), 0o644).unwrap();
        m.fsync(ROOT).unwrap();
        m.arm(Trigger { op: Some(Op::Fsync), nth: 2 });
        m.write(f, 0, b"aa").unwrap();
        m.fsync(f).unwrap();
        assert!(!m.is_lost());
        m.write(f, 2, b"bb").unwrap();
        m.fsync(f).unwrap();
        assert!(m.is_lost(), "right after the second fsync");
        assert_eq!(m.write(f, 4, b"cc"), Err(libc::EIO));
        assert_eq!(file(&m.power_loss(), &["f"]).unwrap(), b"aabb");
    }

    #[test]
    fn ignored_fsyncs_lose_what_they_should_have_kept() {
        let mut m = Model::new(&Image::empty(), 3);
        m.ignore_fsync = Some(Box::new(|p| p.extension().is_some_and(|e| e == "kafka")));
        let a = m.create(ROOT, OsStr::new("0.kafka"), 0o644).unwrap();
        let b = m.create(ROOT, OsStr::new("other"), 0o644).unwrap();
        m.fsync(ROOT).unwrap();
        for ino in [a, b] {
            m.set_len(ino, 0).unwrap();
            m.fsync(ino).unwrap();
            m.write(ino, 0, &[7; 1000]).unwrap();
            m.fsync(ino).unwrap();
        }
        let image = m.power_loss();
        assert_eq!(file(&image, &["other"]).unwrap(), vec![7; 1000]);
        assert_eq!(m.stats.ignored_fsyncs, 2);
    }

    #[test]
    fn renames_and_removals_need_their_directory_fsynced() {
        let mut m = Model::new(&Image::empty(), 4);
        let t = m.create(ROOT, OsStr::new("t.tmp"), 0o644).unwrap();
        m.write(t, 0, b"new").unwrap();
        m.fsync(t).unwrap();
        m.rename(ROOT, OsStr::new("t.tmp"), ROOT, OsStr::new("t")).unwrap();
        assert_eq!(m.power_loss(), Image::empty(), "neither name was made durable");

        let mut m = Model::new(&Image::Dir([(OsString::from("t"), Image::File(b"old".to_vec()))].into()), 4);
        let t = m.create(ROOT, OsStr::new("t.tmp"), 0o644).unwrap();
        m.write(t, 0, b"new").unwrap();
        m.fsync(t).unwrap();
        m.rename(ROOT, OsStr::new("t.tmp"), ROOT, OsStr::new("t")).unwrap();
        m.fsync(ROOT).unwrap();
        assert_eq!(file(&m.power_loss(), &["t"]).unwrap(), b"new");
    }
}
