//! `kill -9` while producers run, then restart: every message flushed before the kill is
//! fetched exactly once and in order, nothing corrupt is served (every CRC is checked), and a
//! torn write at the end of a segment is cut off by recovery.

use kwire07_test_support as common;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;

const PARTITIONS: i32 = 2;

fn payload(partition: i32, seq: i64) -> Vec<u8> {
    // Varying sizes so segment rolls land at different places.
    let pad = "z".repeat((seq % 37) as usize);
    format!("p{partition}-{seq:08}-{pad}").into_bytes()
}

fn seq_of(partition: i32, payload: &[u8]) -> i64 {
    let text = std::str::from_utf8(payload).expect("utf-8 payload");
    let mut parts = text.split('-');
    assert_eq!(parts.next(), Some(format!("p{partition}").as_str()), "payload {text}");
    let seq: i64 = parts.next().unwrap().parse().unwrap();
    assert_eq!(payload, self::payload(partition, seq).as_slice(), "payload intact");
    seq
}

/// Produces batches to `partition` starting at `next`, asking OFFSETS after each batch: with
/// `log.flush.interval=1` its answer proves every earlier message on this connection was
/// appended and fsynced. Records the last such message in `acked`; stops when the broker dies.
fn producer(addr: std::net::SocketAddr, partition: i32, mut next: i64, acked: Arc<AtomicI64>) {
    let Ok(stream) = std::net::TcpStream::connect(addr) else { return };
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut c = Conn { stream };
    let mut rng = fastrand::Rng::with_seed(partition as u64 + next as u64);
    loop {
        let n = rng.i64(1..6);
        let set: Vec<u8> = (next..next + n).flat_map(|s| msg_v0(&payload(partition, s))).collect();
        let frame = produce_frame(b"crash", partition, &set);
        if std::io::Write::write_all(&mut c.stream, &frame).is_err() {
            return;
        }
        next += n;
        let request = offsets_frame(b"crash", partition, -1, 1);
        if std::io::Write::write_all(&mut c.stream, &request).is_err() {
            return;
        }
        let mut size = [0u8; 4];
        if std::io::Read::read_exact(&mut c.stream, &mut size).is_err() {
            return;
        }
        let mut body = vec![0u8; i32::from_be_bytes(size) as usize];
        if std::io::Read::read_exact(&mut c.stream, &mut body).is_err() {
            return;
        }
        acked.store(next - 1, Ordering::SeqCst);
    }
}

/// Fetches everything and checks it is exactly `0..n` in order; returns `n`.
fn check_partition(c: &mut Conn, partition: i32, acked: i64) -> i64 {
    let msgs = c.fetch_all("crash", partition, 0);
    for (i, (_, p)) in msgs.iter().enumerate() {
        assert_eq!(seq_of(partition, p), i as i64, "partition {partition}: message {i} in order, once");
    }
    let n = msgs.len() as i64;
    assert!(n > acked, "partition {partition}: {n} messages survived but {} were acknowledged", acked + 1);
    n
}

#[test]
fn kill_9_during_produce_loses_nothing_flushed_and_serves_nothing_corrupt() {
    let mut b = broker(
        BrokerOptions { num_partitions: Some(PARTITIONS as u32), ..Default::default() }
            .set("log.flush.interval", 1)
            .set("log.file.size", 2_000),
    );
    let mut next = vec![0i64; PARTITIONS as usize];
    for round in 0..3 {
        let acked: Vec<Arc<AtomicI64>> = (0..PARTITIONS).map(|_| Arc::new(AtomicI64::new(-1))).collect();
        let threads: Vec<_> = (0..PARTITIONS)
            .map(|p| {
                let (addr, start, a) = (b.addr(), next[p as usize], acked[p as usize].clone());
                std::thread::spawn(move || producer(addr, p, start, a))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(700 + 300 * round));
        b.kill9().unwrap();
        for t in threads {
            t.join().unwrap();
        }
        if round == 1 {
            // A torn write on top of the kill: a length prefix promising more than is there,
            // and on the other partition a complete entry with a wrong CRC.
            for (p, tail) in [
                (0, vec![0, 0, 0, 50, 0, 1, 2, 3]),
                (1, {
                    let mut m = msg_v0(b"garbage");
                    m[6] ^= 0x55;
                    m
                }),
            ] {
                let dir = b.log_dir().join(format!("crash-{p}"));
                let last = tree(&dir).pop().unwrap();
                let mut f = std::fs::OpenOptions::new().append(true).open(dir.join(last)).unwrap();
                std::io::Write::write_all(&mut f, &tail).unwrap();
            }
        }
        b.restart().unwrap();
        assert!(b.stderr().contains("recovery ran"), "{}", b.stderr());
        let mut c = Conn::connect(b.addr());
        for p in 0..PARTITIONS {
            let acked = acked[p as usize].load(Ordering::SeqCst);
            assert!(acked >= next[p as usize], "round {round}: producer {p} made progress");
            next[p as usize] = check_partition(&mut c, p, acked);
            eprintln!("round {round} partition {p}: {} acknowledged, {} recovered", acked + 1, next[p as usize]);
        }
    }
    // Segments rolled along the way, and the log still takes appends at the recovered end.
    assert!(tree(&b.log_dir().join("crash-0")).len() > 1, "segments rolled");
    let mut c = Conn::connect(b.addr());
    let end = c.offsets("crash", 0, -1, 1).1[0];
    c.produce("crash", 0, &msg_v0(&payload(0, next[0])));
    assert_eq!(check_partition(&mut c, 0, next[0]), next[0] + 1);
    assert!(c.offsets("crash", 0, -1, 1).1[0] > end);
}
