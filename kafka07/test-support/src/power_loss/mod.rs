//! Power loss for real programs: a FUSE file system ([`model`]) that keeps only what was made
//! durable (file data up to its last fsync, directory entries up to their directory's last
//! fsync, a torn prefix of the rest), mounted where a program keeps its files. A test arms a
//! power loss right after a chosen operation, kills the program, and mounts what the disk
//! kept for the next run. Needs `/dev/fuse` and `fusermount3` (Debian's `fuse3`).

pub mod fuse;
pub mod model;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

pub use model::{Image, Model, Op, Stats, Trigger};

/// A mounted power-loss file system.
pub struct PowerLossMount {
    model: Arc<Mutex<Model>>,
    session: Option<::fuser::BackgroundSession>,
    mountpoint: PathBuf,
}

impl PowerLossMount {
    /// Whether FUSE can be used here: `/dev/fuse` exists (the mount itself may still fail).
    pub fn available() -> bool {
        Path::new("/dev/fuse").exists()
    }

    /// Mounts `image` at `mountpoint` (an empty directory); `seed` decides the torn writes.
    pub fn mount(mountpoint: &Path, image: &Image, seed: u64) -> std::io::Result<PowerLossMount> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(mountpoint)?;
        let model = Arc::new(Mutex::new(Model::new(image, seed)));
        let fs = fuse::PowerLossFs { model: model.clone(), owner: (meta.uid(), meta.gid()) };
        let mut config = ::fuser::Config::default();
        config.mount_options = vec![::fuser::MountOption::FSName("kwire-power-loss".into())];
        let session = ::fuser::spawn_mount(fs, mountpoint, &config)?;
        Ok(PowerLossMount { model, session: Some(session), mountpoint: mountpoint.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.mountpoint
    }

    /// The model, to arm a trigger, set faults or read the counts.
    pub fn model(&self) -> MutexGuard<'_, Model> {
        self.model.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Cuts the power (now, unless an armed trigger already did) and unmounts: what the disk
    /// kept. The program using the mount should be dead first.
    pub fn power_loss(mut self) -> std::io::Result<(Image, Stats)> {
        let (image, stats) = {
            let mut model = self.model();
            (model.power_loss(), model.stats.clone())
        };
        if let Some(session) = self.session.take() {
            // The session ends with ECONNABORTED when the kernel still had requests of the
            // killed program in flight: an unmount all the same.
            if let Err(e) = session.umount_and_join() {
                if e.kind() != std::io::ErrorKind::ConnectionAborted {
                    return Err(e);
                }
            }
        }
        Ok((image, stats))
    }
}

impl Drop for PowerLossMount {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            let _ = session.umount_and_join();
        }
    }
}
