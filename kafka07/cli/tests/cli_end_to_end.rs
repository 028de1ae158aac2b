//! The `kwire07` CLI against the real `kwire07-broker` binary: every message format and codec,
//! across a broker restart and segment rolls; OFFSETS after rolls; one-line errors.

use kwire07_test_support as common;

use std::time::Duration;

use common::{broker, kwire07, kwire07_output, lines, segments, wait_for, BrokerOptions};

const FORMATS: [(&str, &str); 4] = [("0", "none"), ("1", "none"), ("1", "gzip"), ("1", "snappy")];

fn batch(tag: &str, round: u32, n: usize) -> Vec<String> {
    // Varying lengths so segment boundaries fall at different places.
    (0..n).map(|i| format!("{tag}-r{round}-{i:04}-{}", "x".repeat(i % 37))).collect()
}

fn consume_all(addr: &str, topic: &str, expected: usize) -> Vec<String> {
    wait_for(Duration::from_secs(20), || {
        let got = lines(&kwire07(&["--broker", addr, "consume", "--topic", topic], b""));
        (got.len() >= expected).then_some(got)
    })
    .unwrap_or_else(|| lines(&kwire07(&["--broker", addr, "consume", "--topic", topic], b"")))
}

#[test]
fn every_format_survives_restart_and_segment_rolls() {
    // 1500-byte segments: every produce batch rolls the log at least once.
    let mut b = broker(BrokerOptions::default().set("log.file.size", 1500));
    let addr = b.address();
    let topic = "formats";
    let mut expected = Vec::new();
    for round in 0..2 {
        for (magic, codec) in FORMATS {
            let msgs = batch(&format!("m{magic}-{codec}"), round, 60);
            let input = msgs.join("\n") + "\n";
            // Small batches: compressed wrappers of 7 messages, several requests per run.
            kwire07(
                &[
                    "--broker",
                    &addr,
                    "produce",
                    "--topic",
                    topic,
                    "--partition",
                    "0",
                    "--magic",
                    magic,
                    "--compression",
                    codec,
                    "--batch-size",
                    "7",
                ],
                input.as_bytes(),
            );
            expected.extend(msgs);
        }
        if round == 0 {
            let got = consume_all(&addr, topic, expected.len());
            assert_eq!(got, expected, "before the restart");
            b.restart().expect("broker restarts");
        }
    }
    let got = consume_all(&addr, topic, expected.len());
    assert_eq!(got.len(), expected.len());
    assert_eq!(got, expected, "after the restart");
    let segs = segments(&b, topic, 0);
    assert!(segs.len() > 4, "the log rolled: {segs:?}");

    // --max-messages and an exact start offset taken from OFFSETS.
    let first3 = lines(&kwire07(&["--broker", &addr, "consume", "--topic", topic, "--max-messages", "3"], b""));
    assert_eq!(first3, expected[..3]);

    // OFFSETS after rolls: [end, last segment start, ..., first segment start].
    let latest: Vec<u64> =
        lines(&kwire07(&["--broker", &addr, "offsets", "--topic", topic, "--time", "latest", "--max", "1000"], b""))
            .iter()
            .map(|l| l.parse().expect("offset"))
            .collect();
    let mut want: Vec<u64> = segs.iter().rev().copied().collect();
    let end = latest[0];
    if want.first() != Some(&end) {
        want.insert(0, end);
    }
    assert_eq!(latest, want);
    let earliest = lines(&kwire07(&["--broker", &addr, "offsets", "--topic", topic, "--time", "earliest"], b""));
    assert_eq!(earliest, ["0"]);
    // Starting at a segment start reads exactly the messages from there on.
    let mid = segs[segs.len() / 2].to_string();
    let tail = lines(&kwire07(&["--broker", &addr, "consume", "--topic", topic, "--offset", &mid], b""));
    assert!(!tail.is_empty() && tail.len() < expected.len());
    assert_eq!(tail[..], expected[expected.len() - tail.len()..]);
}

#[test]
fn errors_are_one_line_and_non_zero() {
    let b = broker(BrokerOptions::default());
    let addr = b.address();
    kwire07(&["--broker", &addr, "produce", "--topic", "e"], b"one\ntwo\n");
    let cases: Vec<Vec<String>> = vec![
        vec![
            "--broker".into(),
            addr.clone(),
            "consume".into(),
            "--topic".into(),
            "e".into(),
            "--offset".into(),
            "999999".into(),
        ],
        vec!["--broker".into(), "127.0.0.1:1".into(), "offsets".into(), "--topic".into(), "e".into()],
        vec![
            "--broker".into(),
            addr.clone(),
            "produce".into(),
            "--topic".into(),
            "e".into(),
            "--magic".into(),
            "0".into(),
            "--compression".into(),
            "gzip".into(),
        ],
        vec![
            "--broker".into(),
            addr.clone(),
            "produce".into(),
            "--topic".into(),
            "e".into(),
            "--file".into(),
            "/nonexistent/file".into(),
        ],
        vec!["consume".into(), "--topic".into(), "e".into(), "--group".into(), "g".into()],
        vec!["topics".into()],
        vec!["consume".into(), "--topic".into(), "e".into(), "--offset".into(), "soon".into()],
        vec!["produce".into()],
    ];
    for args in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = kwire07_output(&args, b"x\n");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("kwire07: "), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{err}");
    }
    // A key routes every message to one partition, and the partition is readable.
    kwire07(&["--broker", &addr, "produce", "--topic", "k", "--key", "user-1"], b"a\nb\n");
    let got = lines(&kwire07(&["--broker", &addr, "consume", "--topic", "k", "--partition", "0"], b""));
    assert_eq!(got, ["a", "b"]);
}
