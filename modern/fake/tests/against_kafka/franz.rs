//! franz-go (Go, written without our code; `tests/clients/franz/`) against the fake and Apache
//! Kafka 4.4: kadm's CreateTopics, an idempotent producer in every codec, a classic consumer
//! group that gains and loses a member, and kadm's view of the group afterwards; transactions
//! (`franz-round txn`); a KIP-848 consumer group (`franz-round consumer-protocol`). What a round reports as "compared" must be the same on both;
//! "informational" (timing) is printed only.
//!
//! Needs `go` (on `PATH` or in /usr/local/go/bin): without it the test is skipped, or fails under
//! CI. `scripts/test` downloads the Go modules first, so the build needs no network.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::support;

/// Runs `franz-round round BOOTSTRAP TOPIC` (the program bounds itself at 4 minutes).
fn round(bin: &Path, against: &str, bootstrap: &str) -> Value {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let topic = format!("franz-{against}-{nanos}");
    let summary = support::summary(
        &format!("franz-go on {against}"),
        &Command::new(bin).args(["round", bootstrap, &topic]).output().unwrap(),
    );
    println!("franz-go on {against}, informational: {}", summary["informational"]);
    summary
}

/// What the round reports on any broker, whatever the timing.
fn check_alone(against: &str, c: &Value) {
    let consumed = &c["consumed"];
    assert_eq!(
        (&consumed["records"], &consumed["distinct"], &consumed["processed_twice"]),
        (&50.into(), &50.into(), &0.into()),
        "{against}: {c}"
    );
    assert_eq!(consumed["headers_match_codec"], true, "{against}: {c}");
    assert_eq!(c["produced"]["offsets_unique"], true, "{against}: {c}");
    assert_eq!(c["committed"]["offsets"], c["end"]["offsets"], "{against}: committed offsets are not the end offsets");
    assert_eq!((&c["described"]["members"], &c["described"]["state"]), (&2.into(), &"Stable".into()), "{against}: {c}");
}

#[test]
fn franz_go_sees_the_same_on_the_fake_and_on_kafka() {
    let Some(bin) = support::franz_round() else { return };
    let _alone = support::one_at_a_time();
    let fake = support::fake(&["--nodes", "3"]);
    let on_fake = round(&bin, "fake", &fake.bootstrap)["compared"].clone();
    println!("fake:  {on_fake}");
    check_alone("the fake", &on_fake);
    let Some(kafka) = support::kafka() else { return };
    let on_kafka = round(&bin, "kafka", &kafka.bootstrap())["compared"].clone();
    println!("kafka: {on_kafka}");
    check_alone("Kafka 4.4", &on_kafka);
    assert_eq!(on_fake, on_kafka, "franz-go must observe the same on both");
}

/// franz-go's transactions (`franz-round txn`): commit, abort, commit; read committed against
/// uncommitted; a GroupTransactSession copying TOPIC to TOPIC-out; a producer fenced by a second
/// of the same transactional id; kadm's DescribeTransactions and ListTransactions.
#[test]
fn franz_go_transactions_see_the_same_on_the_fake_and_on_kafka() {
    let Some(bin) = support::franz_round() else { return };
    let _alone = support::one_at_a_time();
    let txn = |against: &str, bootstrap: &str| {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let topic = format!("franz-txn-{against}-{nanos}");
        let out = Command::new(&bin).args(["txn", bootstrap, &topic]).output().unwrap();
        let summary = support::summary(&format!("franz-go transactions on {against}"), &out);
        println!("franz-go transactions on {against}: {summary}");
        let c = summary["compared"].clone();
        // 6 records a transaction: 12 committed, 18 in all; each committed one copied once.
        let records = (&c["read_committed"]["records"], &c["read_uncommitted"]["records"]);
        assert_eq!(records, (&12.into(), &18.into()), "{against}: {c}");
        let ctp = &c["consume_transform_produce"];
        assert_eq!(ctp["out_read_committed"]["values"], c["read_committed"]["values"], "{against}: {c}");
        assert_eq!(c["read_committed_after_fencing"], 13, "{against}: {c}");
        c
    };
    let fake = support::fake(&["--nodes", "3"]);
    let on_fake = txn("fake", &fake.bootstrap);
    let Some(kafka) = support::kafka() else { return };
    let on_kafka = txn("kafka", &kafka.bootstrap());
    assert_eq!(on_fake, on_kafka, "franz-go transactions must observe the same on both");
}

/// franz-go's KIP-848 opt-in (`franz-round consumer-protocol`, kgo.ServerSideBalancer): members
/// a and b, then c joins, then b leaves, over 6 partitions; each record processed once and
/// committed; each phase's assignment sizes once the group is stable; the end offsets
/// committed; the group as ListGroups, DescribeConsumerGroups and DescribeGroups see it.
#[test]
fn franz_go_consumer_protocol_sees_the_same_on_the_fake_and_on_kafka() {
    let Some(bin) = support::franz_round() else { return };
    let _alone = support::one_at_a_time();
    let run = |against: &str, bootstrap: &str| {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let topic = format!("franz-cp-{against}-{nanos}");
        let out = Command::new(&bin).args(["consumer-protocol", bootstrap, &topic]).output().unwrap();
        let summary = support::summary(&format!("franz-go consumer protocol on {against}"), &out);
        println!("franz-go consumer protocol on {against}, informational: {}", summary["informational"]);
        let c = summary["compared"].clone();
        println!("franz-go consumer protocol on {against}: {c}");
        // The broker ran a consumer group (kgo falls back to the classic protocol silently).
        assert_eq!(c["listed"]["group_type"], "consumer", "{against}: {c}");
        let consumed = &c["consumed"];
        let counts = (&consumed["records"], &consumed["distinct"], &consumed["processed_twice"]);
        assert_eq!(counts, (&60.into(), &60.into(), &0.into()), "{against}: {c}");
        assert_eq!(c["committed_is_end"], true, "{against}: {c}");
        let sizes = ["a_b", "a_b_c", "a_c"].map(|p| &c["phases"][p]["owned_sizes"]);
        assert_eq!(serde_json::json!(sizes), serde_json::json!([[3, 3], [2, 2, 2], [3, 3]]), "{against}: {c}");
        c
    };
    let fake = support::fake(&["--nodes", "3"]);
    let on_fake = run("fake", &fake.bootstrap);
    let Some(kafka) = support::kafka() else { return };
    let on_kafka = run("kafka", &kafka.bootstrap());
    assert_eq!(on_fake, on_kafka, "franz-go's consumer protocol must observe the same on both");
}
