//! `kwire produce` against the in-process cluster: lines become records (keys split with `-K`,
//! headers from `-H`, a partition from `-p`, configs from `-X`, a codec from `-z`), and every
//! mistake a user makes is one clear line and a non-zero exit: a broker nobody answers at, an
//! unknown topic, a record over `max.request.size`, a config Kafka does not know.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use kwire::Records;
use kwire_fake::{FakeCluster, FakeConfig};
use kwire_records::RecordsExt;

fn kwire_produce(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .arg("produce")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kwire runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// (key, value, headers) of every record of a partition.
type Read = Vec<(Option<String>, Option<String>, Vec<(String, Option<String>)>)>;

fn read(fake: &FakeCluster, topic: &str, partition: i32) -> Read {
    let text = |b: &bytes::Bytes| String::from_utf8(b.to_vec()).unwrap();
    let mut out = Vec::new();
    for batch in fake.batches(topic, partition).unwrap_or_default() {
        for record in Records::from_bytes(batch.bytes).records() {
            let r = record.unwrap();
            let headers = r.headers.iter().map(|h| (text(&h.key), h.value.as_ref().map(text))).collect();
            out.push((r.key.as_ref().map(text), r.value.as_ref().map(text), headers));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_become_records_with_keys_headers_and_a_partition() {
    let fake = FakeCluster::start(FakeConfig::default().nodes(2)).await.unwrap();
    fake.create_topic("lines", 3).unwrap();
    let brokers = fake.bootstrap_servers();
    let input = b"k1:first\nk2:second:with:colons\nno key here\n\nlast\r\n";
    let args: Vec<String> =
        ["-b", &brokers, "-t", "lines", "-p", "2", "-K", ":", "-H", "source=cli", "-z", "zstd", "-X", "linger.ms=0"]
            .map(String::from)
            .to_vec();
    let out =
        tokio::task::spawn_blocking(move || kwire_produce(&args.iter().map(String::as_str).collect::<Vec<_>>(), input))
            .await
            .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("5 records to lines"), "{}", stderr(&out));
    let h = || vec![("source".to_string(), Some("cli".to_string()))];
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        read(&fake, "lines", 2),
        vec![
            (s("k1"), s("first"), h()),
            (s("k2"), s("second:with:colons"), h()),
            (None, s("no key here"), h()),
            (None, s(""), h()),
            (None, s("last"), h()),
        ]
    );
    fake.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyed_lines_go_where_kafkas_partitioner_sends_them() {
    let fake = FakeCluster::start(FakeConfig::default()).await.unwrap();
    fake.create_topic("keyed", 4).unwrap();
    let brokers = fake.bootstrap_servers();
    let input: Vec<u8> = (0..40).flat_map(|i| format!("key-{i}\tvalue-{i}\n").into_bytes()).collect();
    let out = tokio::task::spawn_blocking(move || kwire_produce(&["-b", &brokers, "-t", "keyed", "-K", "\t"], &input))
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    for p in 0..4 {
        for (key, _, _) in read(&fake, "keyed", p) {
            let key = key.unwrap();
            assert_eq!(kwire_client::producer::partition_for_key(key.as_bytes(), 4), p, "{key}");
        }
    }
    fake.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mistakes_are_one_clear_line_and_a_failure() {
    let fake = FakeCluster::start(FakeConfig::default().auto_create_topics(false)).await.unwrap();
    fake.create_topic("small", 1).unwrap();
    let brokers = fake.bootstrap_servers();
    let cases: Vec<(Vec<String>, Vec<u8>, &str)> = vec![
        (
            vec!["-b".into(), "127.0.0.1:1".into(), "-t".into(), "small".into()],
            b"x\n".to_vec(),
            "cannot reach the brokers 127.0.0.1:1",
        ),
        (vec!["-b".into(), brokers.clone(), "-t".into(), "absent".into()], b"x\n".to_vec(), "unknown topic absent"),
        (
            vec!["-b".into(), brokers.clone(), "-t".into(), "small".into(), "-X".into(), "max.request.size=200".into()],
            [b"fine\n".to_vec(), vec![b'x'; 500], b"\n".to_vec()].concat(),
            "record of line 2",
        ),
        (
            vec!["-b".into(), brokers.clone(), "-t".into(), "small".into(), "-X".into(), "linger=5".into()],
            b"x\n".to_vec(),
            "linger",
        ),
        (
            vec!["-b".into(), brokers.clone(), "-t".into(), "small".into(), "-p".into(), "3".into()],
            b"x\n".to_vec(),
            "no partition 3",
        ),
        (
            vec!["-b".into(), brokers.clone(), "-t".into(), "small".into(), "-z".into(), "brotli".into()],
            b"x\n".to_vec(),
            "compression.type",
        ),
    ];
    for (args, input, expected) in cases {
        let out = tokio::task::spawn_blocking(move || {
            kwire_produce(&args.iter().map(String::as_str).collect::<Vec<_>>(), &input)
        })
        .await
        .unwrap();
        let text = stderr(&out);
        assert!(!out.status.success(), "{expected}: succeeded");
        assert!(text.contains(expected), "expected {expected:?} in {text:?}");
        assert_eq!(text.trim().lines().count(), 1, "one line: {text:?}");
        assert!(!text.contains("panicked") && !text.contains("internal error"), "{text}");
    }
    fake.shutdown().await;
}
