//! `kwire07 perf` against the real broker: the figures are not checked (no timing assertions),
//! only that every pass reads exactly what was produced and that the report carries the
//! ceilings and ratios the benchmark script reads.

use kwire07_test_support as common;

use common::{broker, kwire07, BrokerOptions};

fn text(out: Vec<u8>) -> String {
    String::from_utf8(out).expect("utf-8 report")
}

#[test]
fn perf_produce_then_consume_reports_every_pass_and_the_ratios() {
    let b = broker(BrokerOptions::default());
    let addr = b.address();
    let produced = text(kwire07(
        &[
            "--broker",
            &addr,
            "perf",
            "produce",
            "--topic",
            "p",
            "--messages",
            "3000",
            "--size",
            "100",
            "--batch-size",
            "200",
            "--no-ceilings",
        ],
        b"",
    ));
    assert!(produced.contains("perf produce: 3000 messages of 100 B"), "{produced}");

    // 3000 messages of 100 B are 3000 × (4 + 6 + 100) log bytes (size, v1 header, payload); small fetches make many rounds.
    let consumed = text(kwire07(
        &["--broker", &addr, "perf", "consume", "--topic", "p", "--fetch-size", "65536", "--runs", "3"],
        b"",
    ));
    assert!(
        consumed.contains("perf consume: 3000 messages, 330000 log bytes from offset 0, fetch size 65536, 3 run(s)"),
        "{consumed}"
    );
    let rates = consumed.lines().find(|l| l.trim_start().starts_with("consume")).expect("consume line");
    assert!(rates.contains("median of 3:"), "{consumed}");
    let ceiling = consumed.lines().find(|l| l.contains("ceiling tcp loopback")).expect("ceiling line");
    assert!(ceiling.contains("median of 3:") && ceiling.trim_end().ends_with('%'), "{consumed}");
    assert!(consumed.contains("best of each:"), "{consumed}");
    // The second ceiling sends a file of as many bytes from the page cache with sendfile.
    let sendfile = consumed.lines().find(|l| l.contains("ceiling tcp sendfile")).expect("sendfile ceiling line");
    assert!(sendfile.contains("median of 3:") && sendfile.contains("ratio "), "{consumed}");

    // A later start offset: every pass starts there, not at the end it reached before.
    let tail = text(kwire07(
        &["--broker", &addr, "perf", "consume", "--topic", "p", "--offset", "110000", "--runs", "2", "--no-ceilings"],
        b"",
    ));
    assert!(tail.contains("perf consume: 2000 messages, 220000 log bytes from offset 110000"), "{tail}");
    assert!(!tail.contains("ceiling"), "{tail}");
}
