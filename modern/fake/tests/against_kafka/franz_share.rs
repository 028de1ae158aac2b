//! franz-go's share consumer (kgo.ShareGroup, KIP-932; `franz-round share`, in
//! `tests/clients/franz/share.go`) against the fake and Apache Kafka 4.4: the round of Kafka's
//! Java share consumer (`java_share_consumers_accept_release_and_reject_alike`) with kgo and
//! kadm. What it reports as "compared" must be the same on both.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::support;

/// What the round reports on any broker.
fn check_alone(against: &str, c: &Value) {
    assert_eq!(c["share_auto_offset_reset"], "earliest", "{against}: {c}");
    assert_eq!((&c["accepted"], &c["rejected"], &c["released"]), (&json!(27), &json!(3), &json!(3)), "{against}: {c}");
    assert_eq!(c["accepted_exactly_once"], true, "{against}: {c}");
    assert_eq!(c["rejected_redelivered"], false, "{against}: {c}");
    assert_eq!(c["released_redelivery_counts"], json!([2]), "{against}: {c}");
    assert_eq!(c["described_running"]["members"], 2, "{against}: {c}");
    assert_eq!(c["described_after_close"], json!({"error": "none", "members": 0, "state": "Empty"}), "{against}: {c}");
    assert_eq!(c["lags"], json!({"0": 0, "1": 0, "2": 0}), "{against}: {c}");
    assert_eq!(c["listed_after_delete"], false, "{against}: {c}");
}

#[test]
fn franz_go_share_consumers_accept_release_and_reject_alike() {
    let Some(bin) = support::franz_round() else { return };
    let _alone = support::one_at_a_time();
    let share = |against: &str, bootstrap: &str| {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let topic = format!("franz-share-{against}-{nanos}");
        let out = std::process::Command::new(&bin).args(["share", bootstrap, &topic]).output().unwrap();
        let summary = support::summary(&format!("franz-go share consumers on {against}"), &out);
        println!("franz-go share consumers on {against}: {summary}");
        let c = summary["compared"].clone();
        check_alone(against, &c);
        c
    };
    let fake = support::fake(&["--nodes", "3"]);
    let on_fake = share("fake", &fake.bootstrap);
    let Some(kafka) = support::kafka() else { return };
    let on_kafka = share("kafka", &kafka.bootstrap());
    assert_eq!(on_fake, on_kafka, "franz-go's share consumers must observe the same on both");
}
