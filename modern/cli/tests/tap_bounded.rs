//! `kwire tap` keeps what it remembers per connection bounded, whatever the peers do: a long
//! run of acks=0 produces (no response comes) leaves nothing waiting and the tap's memory flat,
//! a response over --max-frame settles its request, a response settles the requests sent before
//! it (Kafka answers in order), and a broker that never answers or a client that never reads
//! costs at most the cap. The broker is scripted here, on 127.0.0.1, answering with the
//! generated responses.

use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kwire::messages::api_versions_response::ApiVersion;
use kwire::messages::{ApiVersionsRequest, ApiVersionsResponse, RequestFrame, RequestKind, ResponseFrame};
use kwire::{Bytes, BytesMut, Records};
use kwire_connection::requests;

mod common;
use common::Tap;

/// The tap's cap on requests waiting per connection (`pending::MAX_WAITING`).
const MAX_WAITING: usize = 1024;

fn read_frame(stream: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut size = [0u8; 4];
    stream.read_exact(&mut size)?;
    let mut frame = size.to_vec();
    frame.resize(4 + i32::from_be_bytes(size).max(0) as usize, 0);
    stream.read_exact(&mut frame[4..])?;
    Ok(frame)
}

/// What the scripted broker sends back for each request it reads (nothing, one frame or more).
type Script = dyn Fn(&RequestFrame) -> Vec<Vec<u8>> + Send + Sync;

/// A broker on 127.0.0.1 that reads request frames, decodes them and answers as `script` says;
/// its address and how many requests it has read.
fn scripted_broker(script: Arc<Script>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let read = Arc::new(AtomicUsize::new(0));
    let count = read.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (script, count) = (script.clone(), count.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::with_capacity(1 << 16, stream.try_clone().unwrap());
                let mut writer = stream;
                while let Ok(frame) = read_frame(&mut reader) {
                    let (request, _) = RequestFrame::decode_with_trailing(Bytes::from(frame).slice(4..)).unwrap();
                    count.fetch_add(1, Ordering::Relaxed);
                    for answer in script(&request) {
                        if writer.write_all(&answer).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (addr, read)
}

/// An ApiVersions response to `request`, at its version, offering `keys` APIs.
fn api_versions_answer(request: &RequestFrame, keys: usize) -> Vec<u8> {
    let api_keys = (0..keys as i16).map(|k| ApiVersion { api_key: k, max_version: 3, ..Default::default() }).collect();
    let body = ApiVersionsResponse { api_keys, ..Default::default() };
    let mut out = BytesMut::new();
    ResponseFrame::new(body, request.header.correlation_id).encode(&mut out, request.version()).unwrap();
    out.to_vec()
}

/// Answers ApiVersions, and nothing else (acks=0 produces want nothing).
fn api_versions_only(request: &RequestFrame) -> Vec<Vec<u8>> {
    match &request.body {
        RequestKind::ApiVersions(_) => vec![api_versions_answer(request, 3)],
        _ => Vec::new(),
    }
}

fn api_versions_request(correlation: i32) -> Vec<u8> {
    let mut out = BytesMut::new();
    RequestFrame::new(ApiVersionsRequest::default(), 3, correlation, Some("tap-bounded")).encode(&mut out).unwrap();
    out.to_vec()
}

/// `count` Produce v9 requests with acks=0 from correlation id `first` on, as one buffer.
fn acks_0_produces(first: i32, count: usize) -> Vec<u8> {
    let records = Records::from_bytes(Bytes::from(vec![b'r'; 100]));
    let body = requests::produce("fire-and-forget", Default::default(), 0, records, 0, Duration::from_secs(5));
    let mut out = BytesMut::new();
    for correlation in (first..).take(count) {
        RequestFrame::new(body.clone(), 9, correlation, Some("tap-bounded")).encode(&mut out).unwrap();
    }
    out.to_vec()
}

/// Sends `frames` and an ApiVersions request after them, and reads its answer: once it is
/// back, the tap has handled every frame before it.
fn round_trip_after(client: &mut TcpStream, frames: &[u8], correlation: i32) {
    client.write_all(frames).unwrap();
    client.write_all(&api_versions_request(correlation)).unwrap();
    let answer = read_frame(client).unwrap();
    assert_eq!(answer[4..8], correlation.to_be_bytes(), "the answer to the ApiVersions request");
}

#[test]
#[cfg_attr(not(target_os = "linux"), ignore = "reads the tap's memory from /proc")]
fn a_long_acks_0_run_leaves_nothing_waiting_and_memory_flat() {
    const WARM_UP: usize = 20_000;
    const RUN: usize = 100_000;
    let (upstream, _) = scripted_broker(Arc::new(api_versions_only));
    let tap = Tap::start(&upstream, &[]);
    let mut client = tap.connect();
    round_trip_after(&mut client, &acks_0_produces(1, WARM_UP), 0);
    let before = tap.rss_kib();
    round_trip_after(&mut client, &acks_0_produces(WARM_UP as i32 + 1, RUN), -1);
    let after = tap.rss_kib();
    drop(client);
    let ended = tap.ended(1);
    println!("tap RSS after {WARM_UP} acks=0 produces: {before} KiB; after {RUN} more: {after} KiB\n{ended}");
    // A request remembered costs some 40 bytes: 100 000 of them would be 4 MB and more.
    assert!(after < before + 1024, "the tap grew from {before} KiB to {after} KiB over {RUN} acks=0 produces");
    let seen = WARM_UP + RUN + 2;
    assert!(ended.contains(&format!("; {seen} requests, at most 1 waiting at once")), "{ended}");
    assert!(!ended.contains("unanswered"), "{ended}");
    let fired = tap.out().iter().filter(|l| l.contains("no response expected (acks=0)")).count();
    assert_eq!(fired, WARM_UP + RUN);
}

#[test]
fn a_response_over_max_frame_settles_its_request() {
    // ApiVersions offering 500 APIs: over 3 000 bytes, where the tap decodes up to 1 000.
    let (upstream, _) = scripted_broker(Arc::new(|r: &RequestFrame| vec![api_versions_answer(r, 500)]));
    let tap = Tap::start(&upstream, &["--max-frame", "1000"]);
    let mut client = tap.connect();
    client.write_all(&api_versions_request(1)).unwrap();
    let answer = read_frame(&mut client).unwrap();
    let (request, _) = RequestFrame::decode_with_trailing(Bytes::from(api_versions_request(1)).slice(4..)).unwrap();
    assert_eq!(answer, api_versions_answer(&request, 500), "forwarded unchanged");
    drop(client);
    let ended = tap.ended(1);
    let err = tap.err().join("\n");
    assert!(err.contains("bytes to ApiVersions v3 corr 1 (over --max-frame) forwarded undecoded"), "{err}");
    assert!(ended.contains("; 1 request, at most 1 waiting") && !ended.contains("unanswered"), "{ended}");
}

#[test]
fn a_response_settles_the_requests_sent_before_it() {
    // Answers only the third request: Kafka answers in order, so 1 and 2 never will be.
    let script = |r: &RequestFrame| match r.header.correlation_id {
        3 => vec![api_versions_answer(r, 3)],
        _ => Vec::new(),
    };
    let (upstream, _) = scripted_broker(Arc::new(script));
    let tap = Tap::start(&upstream, &[]);
    let mut client = tap.connect();
    round_trip_after(&mut client, &[api_versions_request(1), api_versions_request(2)].concat(), 3);
    drop(client);
    let ended = tap.ended(1);
    let err = tap.err().join("\n");
    let passed = "the response to corr 3 came first, so unanswered: ApiVersions v3 corr 1, ApiVersions v3 corr 2";
    assert!(err.contains(passed), "{err}");
    assert!(ended.contains("at most 3 waiting at once, 2 given up unanswered"), "{ended}");
    assert!(!ended.contains("; unanswered"), "{ended}");
}

#[test]
fn a_broker_that_never_answers_costs_at_most_the_cap() {
    const SENT: usize = 3 * MAX_WAITING;
    let (upstream, read) = scripted_broker(Arc::new(|_: &RequestFrame| Vec::new()));
    let tap = Tap::start(&upstream, &[]);
    let mut client = tap.connect();
    let requests: Vec<u8> = (1..=SENT as i32).flat_map(api_versions_request).collect();
    client.write_all(&requests).unwrap();
    // The tap forwards each request after registering it: once the broker has them all, so has the tap.
    let deadline = Instant::now() + Duration::from_secs(60);
    while read.load(Ordering::Relaxed) < SENT {
        assert!(Instant::now() < deadline, "the broker read {} of {SENT}", read.load(Ordering::Relaxed));
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(client);
    let ended = tap.ended(1);
    let given_up = SENT - MAX_WAITING;
    let counts = format!("{SENT} requests, at most {MAX_WAITING} waiting at once, {given_up} given up unanswered");
    assert!(ended.contains(&counts), "{ended}");
    // The oldest still waiting is the first not given up; the list stops at 20.
    let first_kept = format!("; unanswered: ApiVersions v3 corr {}, ", given_up + 1);
    assert!(ended.contains(&first_kept) && ended.ends_with(&format!(" and {} more", MAX_WAITING - 20)), "{ended}");
    let err = tap.err().join("\n");
    assert!(err.contains(&format!("over {MAX_WAITING} requests wait for responses: ApiVersions v3 corr 1 given up")));
}

#[test]
fn a_client_that_never_reads_costs_at_most_the_cap() {
    // 64 KiB answers: the few that fit the sockets' buffers towards the client are all the tap
    // can settle, while the small requests keep coming.
    const SENT: usize = 10 * MAX_WAITING;
    let (upstream, read) = scripted_broker(Arc::new(|r: &RequestFrame| vec![api_versions_answer(r, 9000)]));
    let tap = Tap::start(&upstream, &[]);
    let client = tap.connect();
    let mut writer = client.try_clone().unwrap();
    let requests: Vec<u8> = (1..=SENT as i32).flat_map(api_versions_request).collect();
    // The writes stall once every buffer on the way is full: they are done on the side.
    std::thread::spawn(move || writer.write_all(&requests));
    let cap = format!("over {MAX_WAITING} requests wait for responses");
    tap.wait_for("the cap", |_, err| err.iter().any(|l| l.contains(&cap)));
    println!("the broker had read {} requests", read.load(Ordering::Relaxed));
    // Both halves closed: the writer's clone is shut too, stalled or not.
    client.shutdown(std::net::Shutdown::Both).unwrap();
    let ended = tap.ended(1);
    println!("{ended}");
    assert!(ended.contains(&format!("at most {MAX_WAITING} waiting at once")), "{ended}");
}
