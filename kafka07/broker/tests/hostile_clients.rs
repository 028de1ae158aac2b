//! Clients that hold the broker's memory, CPU or connection slots: trickled requests, slow and
//! idle sockets at the connection limit, one address taking every slot, half-sent huge
//! requests, and requests of many small decompression bombs. A well-behaved client beside them
//! must keep being served. Loopback only, every loop bounded in count and time. The figures
//! each test prints (`--nocapture`) are the ones in the closing notes.
//!
//! `KWIRE07_BROKER_BIN` runs these against another build of `kwire07-broker` (to measure before
//! and after a change).

use kwire07_test_support as common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;

fn start(opts: BrokerOptions) -> BrokerProcess {
    let bin = std::env::var("KWIRE07_BROKER_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kwire07-broker").to_owned());
    BrokerProcess::start(bin, opts).expect("broker starts")
}

/// One request of a well-behaved client on a fresh connection: PRODUCE then OFFSETS. The
/// latency, or `None` if it failed.
fn well_behaved_request(addr: SocketAddr) -> Option<Duration> {
    let started = Instant::now();
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(&produce_frame(b"good", 0, &msg_v0(b"hello"))).ok()?;
    s.write_all(&offsets_frame(b"good", 0, -1, 1)).ok()?;
    let mut size = [0u8; 4];
    s.read_exact(&mut size).ok()?;
    let mut body = vec![0u8; i32::from_be_bytes(size).max(0) as usize];
    s.read_exact(&mut body).ok()?;
    (body.len() >= 2 && body[..2] == [0, 0]).then(|| started.elapsed())
}

/// Runs `n` well-behaved requests `every` apart; returns (successes, p50, p99).
fn well_behaved_client(addr: SocketAddr, n: usize, every: Duration) -> (usize, Duration, Duration) {
    let mut latencies = Vec::new();
    for _ in 0..n {
        if let Some(l) = well_behaved_request(addr) {
            latencies.push(l);
        }
        std::thread::sleep(every);
    }
    latencies.sort();
    let at = |q: f64| latencies.get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1)));
    (latencies.len(), at(0.5).copied().unwrap_or_default(), at(0.99).copied().unwrap_or_default())
}

/// Whether the broker closed `s` (EOF or reset) rather than leaving it open.
fn closed(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let mut b = [0u8; 16];
    match s.read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
    }
}

#[test]
fn a_trickled_request_is_cut_off_at_its_deadline() {
    let b = start(BrokerOptions::default().set("kwire.request.timeout.ms", 1000));
    let frame = fetch_frame(b"t", 0, 0, 100);
    let mut s = TcpStream::connect(b.addr()).unwrap();
    // One byte every 150 ms: each read sees progress well within the timeout, the request
    // as a whole takes 3 s.
    let started = Instant::now();
    let mut sent = 0;
    for byte in &frame {
        if s.write_all(std::slice::from_ref(byte)).is_err() || closed(&mut s) {
            break;
        }
        sent += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("trickled request: {sent} of {} bytes taken, {:?}", frame.len(), started.elapsed());
    assert!(sent < frame.len(), "all {} bytes were taken", frame.len());
    assert!(closed(&mut s) || s.write_all(b"x").is_err(), "the trickled request was not cut off");
}

#[test]
fn slow_sockets_at_the_connection_limit_cannot_lock_out_a_well_behaved_client() {
    let max = 64;
    // Every socket comes from 127.0.0.1, so the per-address limit (half of 64) is what fills.
    let b = start(BrokerOptions::default().set("kwire.max.connections", max).set("kwire.request.timeout.ms", 60_000));
    let addr = b.addr();
    // 100 sockets, each sending one byte of a 1 KiB request every 500 ms: the first 32 fill
    // every slot this address has, the rest arrive when it is full.
    let stop = Arc::new(AtomicBool::new(false));
    let (admitted_tx, admitted_rx) = std::sync::mpsc::channel();
    let trickler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let request = fetch_frame(&[b'x'; 1012], 0, 0, 100);
            let mut socks: Vec<(TcpStream, usize)> = Vec::new();
            // The harness's own probe of the listener is gone by now.
            std::thread::sleep(Duration::from_millis(500));
            for _ in 0..32 {
                socks.push((TcpStream::connect(addr).unwrap(), 0));
            }
            std::thread::sleep(Duration::from_millis(200));
            let admitted = socks.iter_mut().map(|(s, _)| closed(s)).filter(|c| !c).count();
            admitted_tx.send(admitted).unwrap();
            socks.extend((0..68).filter_map(|_| TcpStream::connect(addr).ok()).map(|s| (s, 0)));
            let deadline = Instant::now() + Duration::from_secs(30);
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                socks.retain_mut(|(s, at)| {
                    *at += 1;
                    s.write_all(&request[*at - 1..*at]).is_ok()
                });
                std::thread::sleep(Duration::from_millis(500));
            }
            socks.len()
        })
    };
    let admitted = admitted_rx.recv().unwrap();
    assert_eq!(admitted, 32, "the slow sockets did not fill the address's slots");
    std::thread::sleep(Duration::from_millis(1500));
    let (ok, p50, p99) = well_behaved_client(addr, 40, Duration::from_millis(50));
    stop.store(true, Ordering::Relaxed);
    let left = trickler.join().unwrap();
    println!(
        "slow sockets: 100 trickling, the first 32 holding every slot of the address; {left} still open at the \
         end; well-behaved: {ok}/40 ok, p50 {p50:?}, p99 {p99:?}"
    );
    assert_eq!(ok, 40, "the well-behaved client was locked out");
    assert!(b.stderr().contains("shedding the connection longest without a request"), "{}", b.stderr());
}

#[test]
fn one_address_cannot_take_every_connection() {
    let b = start(BrokerOptions::default().set("kwire.max.connections", 64).set("kwire.max.connections.per.ip", 8));
    let from = |ip: [u8; 4]| {
        let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        sock.bind(&SocketAddr::from((ip, 0)).into()).unwrap();
        sock.connect(&b.addr().into()).unwrap();
        TcpStream::from(sock)
    };
    // 127.0.0.2 opens 30 idle connections (past the 1 s grace each time, so the oldest go).
    let mut theirs: Vec<TcpStream> = Vec::new();
    for _ in 0..30 {
        theirs.push(from([127, 0, 0, 2]));
    }
    std::thread::sleep(Duration::from_millis(300));
    let open = theirs.iter_mut().map(closed).filter(|c| !c).count();
    assert!(open <= 8, "{open} connections from one address are open");
    // 127.0.0.1 is not affected.
    let (ok, _, _) = well_behaved_client(b.addr(), 10, Duration::from_millis(10));
    assert_eq!(ok, 10);
    println!("one address: 30 opened from 127.0.0.2, {open} left open (limit 8)");
}

#[test]
fn half_sent_huge_requests_hold_bounded_memory() {
    let b = start(BrokerOptions::default());
    let addr = b.addr();
    let before = b.memory_kib().unwrap();
    // Eight connections announce 100 MiB requests and send 64 MiB of each.
    let senders: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
                let _ = s.write_all(&(100i32 << 20).to_be_bytes());
                let chunk = vec![0u8; 1 << 20];
                let mut sent = 0;
                while sent < 64 && s.write_all(&chunk).is_ok() {
                    sent += 1;
                }
                std::thread::sleep(Duration::from_millis(500));
                sent
            })
        })
        .collect();
    let (ok, _, p99) = well_behaved_client(addr, 20, Duration::from_millis(100));
    let sent: Vec<usize> = senders.into_iter().map(|t| t.join().unwrap()).collect();
    let (peak_kib, rss_kib) = b.memory_kib().unwrap();
    let cpu = b.cpu_time().unwrap();
    println!(
        "half-sent requests: MiB sent per connection {sent:?}; broker peak RSS {} MB (start {} MB, now {} MB), \
         CPU {cpu:?}; well-behaved {ok}/20, p99 {p99:?}",
        peak_kib / 1024,
        before.0 / 1024,
        rss_kib / 1024
    );
    assert_eq!(ok, 20, "the well-behaved client failed");
    // 8 × 64 MiB arrived; the default bound is 256 MiB (before the bound: 1.3 GB, see the notes).
    assert!(peak_kib < 640 * 1024, "peak RSS {} MB", peak_kib / 1024);
}

/// A gzip wrapper (magic 1) around one plain message of `size` zero bytes: a few KiB that
/// decompress to `size`.
fn gzip_bomb(size: usize) -> Vec<u8> {
    let inner = msg_v0(&vec![0u8; size]);
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&inner).unwrap();
    msg_v1(1, &enc.finish().unwrap())
}

#[test]
fn a_request_of_many_small_bombs_is_refused_by_its_budget() {
    // 64 × 4 MiB = 256 MiB of output from about 256 KiB of request; each wrapper is far below
    // the 64 MiB per-wrapper limit, the request far above the per-request budget (64 MB).
    let bomb = gzip_bomb(4 << 20);
    let set: Vec<u8> = std::iter::repeat_n(bomb.as_slice(), 64).flatten().copied().collect();
    let b = start(BrokerOptions::default());
    let mut c = Conn::connect(b.addr());
    c.produce("bombed", 0, &msg_v0(b"first"));
    assert_eq!(c.offsets("bombed", 0, -1, 1).0, 0);
    let cpu_before = b.cpu_time().unwrap();
    let mut s = Conn::connect(b.addr());
    s.send(&produce_frame(b"bombed", 0, &set));
    s.send(&offsets_frame(b"bombed", 0, -1, 1));
    let refused = s.is_closed_by_peer();
    let (peak_kib, _) = b.memory_kib().unwrap();
    let cpu = b.cpu_time().unwrap() - cpu_before;
    println!(
        "many small bombs ({} KiB request): {}; broker peak RSS {} MB, CPU {cpu:?}",
        set.len() / 1024,
        if refused { "refused" } else { "taken" },
        peak_kib / 1024
    );
    assert!(refused, "the request was taken");
    // Nothing of it was appended: the log holds the first message only.
    let (err, offsets) = c.offsets("bombed", 0, -1, 1);
    assert_eq!((err, offsets), (0, vec![(4 + 1 + 4 + 5) as i64]));
    assert!(b.stderr().contains("budget"), "{}", b.stderr());
}

#[test]
fn validating_a_large_request_does_not_hold_its_partition() {
    // A request whose checks take a while (16 × 4 MiB to inflate), with the budget raised to
    // let it through: meanwhile FETCH and OFFSETS on the same partition keep being answered.
    let b = start(BrokerOptions::default().set("kwire.max.decompressed.request.bytes", 1u64 << 30));
    let mut c = Conn::connect(b.addr());
    c.produce("busy", 0, &msg_v0(b"first"));
    assert_eq!(c.offsets("busy", 0, -1, 1).0, 0);
    let set: Vec<u8> = std::iter::repeat_n(gzip_bomb(4 << 20), 16).flatten().collect();
    let done = Arc::new(AtomicBool::new(false));
    let producer = {
        let (addr, done) = (b.addr(), done.clone());
        std::thread::spawn(move || {
            let mut s = Conn::connect(addr);
            s.send(&produce_frame(b"busy", 0, &set));
            let answer = s.offsets("busy", 0, -1, 1);
            done.store(true, Ordering::Relaxed);
            answer
        })
    };
    let mut answered_meanwhile = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done.load(Ordering::Relaxed) && Instant::now() < deadline {
        assert_eq!(c.offsets("busy", 0, -1, 1).0, 0);
        if !done.load(Ordering::Relaxed) {
            answered_meanwhile += 1;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let (err, _) = producer.join().unwrap();
    assert_eq!(err, 0);
    println!("OFFSETS answered on the partition while its large request was checked: {answered_meanwhile}");
    assert!(answered_meanwhile >= 3, "only {answered_meanwhile} answers while the request was validated");
}
