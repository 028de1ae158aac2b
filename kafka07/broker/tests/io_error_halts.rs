//! An I/O error while appending halts the broker as 0.7 does (exit status 1, no clean-shutdown
//! marker), and the next start recovers everything that was acknowledged before it.
//!
//! The error is real and needs no privileges: the broker runs under a 1 KiB file-size limit
//! (`ulimit -f 1`, with SIGXFSZ ignored), so the kernel refuses the write that would grow the
//! segment past it (EFBIG). The restart runs without the limit.

use kwire07_test_support as common;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use common::*;

/// A wrapper that starts `kwire07-broker` under a 1 KiB file-size limit unless `nolimit` exists
/// beside it.
fn limited_broker(dir: &std::path::Path) -> std::path::PathBuf {
    let script = dir.join("kwire07-broker-limited");
    let text = format!(
        "#!/bin/bash\nif [ ! -e '{nolimit}' ]; then ulimit -f 1; trap '' XFSZ; fi\nexec '{bin}' \"$@\"\n",
        nolimit = dir.join("nolimit").display(),
        bin = env!("CARGO_BIN_EXE_kwire07-broker"),
    );
    std::fs::write(&script, text).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[test]
fn an_append_io_error_halts_the_broker_and_a_restart_recovers() {
    let scratch = TempDir::with_prefix("kwire-halt").unwrap();
    let wrapper = limited_broker(scratch.path());
    let opts = BrokerOptions { log_dir: Some(scratch.path().join("logs")), ..Default::default() };
    let mut b = BrokerProcess::start(&wrapper, opts.set("log.flush.interval", 1)).expect("broker starts");
    let mut c = Conn::connect(b.addr());
    c.produce("t", 0, &set_v0(&[b"before"]));
    // OFFSETS answers after the append (and its fsync, interval 1) finished.
    let before = msg_v0(b"before").len() as i64;
    assert_eq!(c.offsets("t", 0, -1, 1), (0, vec![before]));

    // 2 KiB more would take the segment past the 1 KiB limit.
    c.produce("t", 0, &set_v0(&[vec![b'x'; 2048]]));
    let status = b.exit_within(Duration::from_secs(20)).unwrap().expect("the broker halts");
    assert_eq!(status.code(), Some(1), "{}", b.stderr());
    assert!(b.stderr().contains("halting: append to t-0 failed"), "{}", b.stderr());
    assert!(!b.log_dir().join(".kafka_cleanshutdown").exists(), "no clean-shutdown marker after a halt");

    std::fs::write(scratch.path().join("nolimit"), b"").unwrap();
    b.restart().unwrap();
    let mut c = Conn::connect(b.addr());
    let got: Vec<Vec<u8>> = c.fetch_all("t", 0, 0).into_iter().map(|(_, p)| p).collect();
    assert_eq!(got, vec![b"before".to_vec()]);
}
