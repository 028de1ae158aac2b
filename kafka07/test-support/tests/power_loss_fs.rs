//! The power-loss file system through the kernel: what `std::fs` calls make durable, and what
//! a power loss takes.

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;

use kwire07_test_support::power_loss::{Image, Op, PowerLossMount, Trigger};
use kwire07_test_support::TempDir;

fn mount(dir: &TempDir, image: &Image) -> Option<PowerLossMount> {
    if !PowerLossMount::available() {
        assert!(std::env::var_os("CI").is_none(), "/dev/fuse is missing under CI");
        eprintln!("skipped: no /dev/fuse");
        return None;
    }
    Some(PowerLossMount::mount(dir.path(), image, 7).expect("mounts (needs fusermount3 from fuse3)"))
}

fn get<'a>(image: &'a Image, path: &str) -> Option<&'a Image> {
    let mut at = image;
    for part in path.split('/') {
        let Image::Dir(children) = at else { return None };
        at = children.get(OsStr::new(part))?;
    }
    Some(at)
}

#[test]
fn std_fs_calls_keep_exactly_what_they_made_durable() {
    let dir = TempDir::with_prefix("kwire-plfs").unwrap();
    let Some(m) = mount(&dir, &Image::empty()) else { return };
    let root = m.path().to_path_buf();
    fs::create_dir_all(root.join("a/b")).unwrap();
    File::open(&root).unwrap().sync_all().unwrap(); // "a" named durably
    File::open(root.join("a")).unwrap().sync_all().unwrap(); // "b" too
    let mut f = File::create(root.join("a/b/kept")).unwrap();
    f.write_all(b"durable").unwrap();
    f.sync_data().unwrap();
    File::open(root.join("a/b")).unwrap().sync_all().unwrap();
    f.write_all(b"-pending").unwrap();
    let mut g = File::create(root.join("a/b/unnamed")).unwrap();
    g.write_all(b"synced but never named").unwrap();
    g.sync_all().unwrap();
    fs::create_dir(root.join("lost")).unwrap();
    fs::write(root.join("a/b/kept.tmp"), b"x").unwrap();
    fs::rename(root.join("a/b/kept.tmp"), root.join("a/b/renamed")).unwrap();
    assert_eq!(fs::read(root.join("a/b/kept")).unwrap(), b"durable-pending");
    let f2 = OpenOptions::new().write(true).open(root.join("a/b/kept")).unwrap();
    f2.write_at(b"D", 0).unwrap();
    drop((f, f2, g));
    let (image, stats) = m.power_loss().unwrap();
    let Some(Image::File(kept)) = get(&image, "a/b/kept") else { panic!("{image:?}") };
    assert!(kept.starts_with(b"durable") || kept.starts_with(b"Durable"), "{kept:?}");
    assert!(get(&image, "a/b/unnamed").is_none(), "its directory was not fsynced after it was made");
    assert!(get(&image, "lost").is_none() && get(&image, "a/b/renamed").is_none());
    assert!(stats.fsyncs >= 2 && stats.dir_fsyncs >= 3, "{stats:?}");

    // Mounted again from that image: the files are there, readable by any program.
    let Some(m) = mount(&dir, &image) else { return };
    assert_eq!(&fs::read(m.path().join("a/b/kept")).unwrap()[1..7], b"urable");
    m.power_loss().unwrap();
}

#[test]
fn an_armed_power_loss_stops_the_disk_right_after_its_operation() {
    let dir = TempDir::with_prefix("kwire-plfs").unwrap();
    let Some(m) = mount(&dir, &Image::empty()) else { return };
    let root = m.path().to_path_buf();
    let mut f = File::create(root.join("log")).unwrap();
    File::open(&root).unwrap().sync_all().unwrap();
    m.model().arm(Trigger { op: Some(Op::Fsync), nth: 3 });
    let mut written = 0;
    for i in 0..10u8 {
        if f.write_all(&[i; 100]).and_then(|()| f.sync_data()).is_err() {
            break;
        }
        written += 1;
    }
    // The third fsync completed (and succeeded) as the power went; the next write failed.
    assert_eq!(written, 3);
    drop(f);
    let (image, _) = m.power_loss().unwrap();
    let Some(Image::File(data)) = get(&image, "log") else { panic!("{image:?}") };
    assert_eq!(data.len(), 300, "three fsynced writes");
}
