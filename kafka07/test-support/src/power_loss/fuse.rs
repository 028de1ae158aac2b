//! The model served through FUSE, so a real program (the broker) runs on it unchanged.

use std::ffi::OsStr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner, OpenFlags,
    RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs,
    ReplyWrite, Request, TimeOrNow, WriteFlags,
};

use super::model::{Kind, Model};

/// Attributes and names may be cached briefly: every change goes through this mount.
const TTL: Duration = Duration::from_secs(1);

pub struct PowerLossFs {
    pub model: Arc<Mutex<Model>>,
    /// Owner of every file: whoever mounted it.
    pub owner: (u32, u32),
}

impl PowerLossFs {
    fn model(&self) -> MutexGuard<'_, Model> {
        self.model.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn attr(&self, model: &Model, ino: u64) -> Result<FileAttr, Errno> {
        attr(model, ino, self.owner)
    }
}

fn errno(e: i32) -> Errno {
    Errno::from_i32(e)
}

fn attr(model: &Model, ino: u64, (uid, gid): (u32, u32)) -> Result<FileAttr, Errno> {
    let inode = model.inode(ino).ok_or(Errno::ENOENT)?;
    let (kind, size, nlink) = match &inode.kind {
        Kind::File { data, .. } => (FileType::RegularFile, data.len() as u64, 1),
        Kind::Dir { entries, .. } => (FileType::Directory, 0, 2 + entries.len() as u32),
    };
    Ok(FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: inode.mtime,
        mtime: inode.mtime,
        ctime: inode.mtime,
        crtime: inode.mtime,
        kind,
        perm: inode.mode as u16,
        nlink,
        uid,
        gid,
        rdev: 0,
        flags: 0,
        blksize: 4096,
    })
}

fn time(t: TimeOrNow) -> SystemTime {
    match t {
        TimeOrNow::SpecificTime(t) => t,
        TimeOrNow::Now => SystemTime::now(),
    }
}

impl Filesystem for PowerLossFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let model = self.model();
        match model.lookup(parent.0, name).map_err(errno).and_then(|ino| self.attr(&model, ino)) {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(&self.model(), ino.0) {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut model = self.model();
        let result = size
            .map_or(Ok(()), |len| model.set_len(ino.0, len))
            .and_then(|()| model.set_mode_and_mtime(ino.0, mode, mtime.map(time)))
            .map_err(errno)
            .and_then(|()| self.attr(&model, ino.0));
        match result {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, reply: ReplyEntry) {
        let mut model = self.model();
        match model.mkdir(parent.0, name, mode & !umask).map_err(errno).and_then(|ino| self.attr(&model, ino)) {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let mut model = self.model();
        let ino = match model.create(parent.0, name, mode & !umask) {
            // Opened with O_CREAT but without O_EXCL, as the kernel may when it had no entry.
            Err(libc::EEXIST) if flags & libc::O_EXCL == 0 => model.lookup(parent.0, name).and_then(|ino| {
                if flags & libc::O_TRUNC != 0 {
                    model.set_len(ino, 0)?;
                }
                Ok(ino)
            }),
            other => other,
        };
        match ino.map_err(errno).and_then(|ino| self.attr(&model, ino)) {
            Ok(a) => reply.created(&TTL, &a, Generation(0), FileHandle(0), FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match self.model().unlink(parent.0, name, false) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match self.model().unlink(parent.0, name, true) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        if !flags.is_empty() {
            return reply.error(Errno::EINVAL);
        }
        match self.model().rename(parent.0, name, newparent.0, newname) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let mut model = self.model();
        let truncated = if flags.0 & libc::O_TRUNC != 0 { model.set_len(ino.0, 0) } else { Ok(()) };
        match truncated.map_err(errno).and_then(|()| self.attr(&model, ino.0)) {
            Ok(_) => reply.opened(FileHandle(0), FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match self.model().read(ino.0, offset, size as usize) {
            Ok(data) => reply.data(data),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        match self.model().write(ino.0, offset, data) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lock_owner: LockOwner, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fsync(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        match self.model().fsync(ino.0) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        let model = self.model();
        let children = match model.children(ino.0) {
            Ok(children) => children,
            Err(e) => return reply.error(errno(e)),
        };
        let parent = model.inode(ino.0).map_or(ino.0, |i| i.parent.max(1));
        let mut all = vec![(".".into(), ino.0, FileType::Directory), ("..".into(), parent, FileType::Directory)];
        for (name, child) in children {
            let kind = match model.inode(child).map(|i| &i.kind) {
                Some(Kind::Dir { .. }) => FileType::Directory,
                _ => FileType::RegularFile,
            };
            all.push((name, child, kind));
        }
        for (i, (name, child, kind)) in all.into_iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(child), (i + 1) as u64, kind, &name) {
                break;
            }
        }
        reply.ok();
    }

    fn fsyncdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        match self.model().fsync(ino.0) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        // A large, mostly empty disk.
        reply.statfs(1 << 24, 1 << 23, 1 << 23, 1 << 20, 1 << 19, 4096, 255, 4096);
    }
}
