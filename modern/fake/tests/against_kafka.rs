//! Each real client runs one scenario against the in-process cluster and against Apache Kafka
//! 4.4, and what it observes must be the same: records, offsets, group membership and
//! assignment shape, committed offsets, error names. One Kafka serves every suite here, and
//! the suites run one at a time. Kafka's Java clients and franz-go have modules of their own.

mod support;

#[path = "against_kafka/franz.rs"]
mod franz;
#[path = "against_kafka/java.rs"]
mod java;

use std::process::Command;

use kafka_wire_test_support::env_or_skip;

/// kafka-python: admin (creating a topic twice), an idempotent producer in every codec, a
/// consumer assigned every partition, then a consumer group of two members where one leaves.
#[test]
fn kafka_python_sees_the_same_on_the_fake_and_on_kafka() {
    let Some(python) = env_or_skip("KAFKA_WIRE_PYTHON") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/kafka_python_round.py");
    let fake = support::fake(&["--nodes", "3"]);
    let on_fake = support::summary(
        "kafka-python on the fake",
        &Command::new(&python).arg(script).arg(&fake.bootstrap).output().unwrap(),
    );
    println!("fake:  {on_fake}");
    // 5 codecs × 10 records, each read back; offsets never reused; the group split 1 + 2, the
    // survivor took all 3 and committed the end offsets.
    assert_eq!(on_fake["consumed"], 50, "{on_fake}");
    assert_eq!(on_fake["group_consumed"], 50, "{on_fake}");
    assert_eq!(on_fake["committed"], on_fake["end_offsets"], "{on_fake}");
    let Some(kafka) = support::kafka() else { return };
    let on_kafka = support::summary(
        "kafka-python on Kafka",
        &Command::new(&python).arg(script).arg(kafka.bootstrap()).output().unwrap(),
    );
    println!("kafka: {on_kafka}");
    assert_eq!(on_fake, on_kafka, "kafka-python must observe the same on both");
}

/// confluent-kafka (librdkafka): admin (create, describe configs), an idempotent producer in
/// every codec, a consumer group, commit, committed offsets and watermarks: the tap test's
/// round, run here against both clusters.
#[test]
fn librdkafka_sees_the_same_on_the_fake_and_on_kafka() {
    let Some(python) = env_or_skip("KAFKA_WIRE_PYTHON") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../cli/tests/clients/confluent_kafka_round.py");
    let fake = support::fake(&["--nodes", "3"]);
    let on_fake = support::summary(
        "librdkafka on the fake",
        &Command::new(&python).arg(script).arg(&fake.bootstrap).output().unwrap(),
    );
    println!("fake:  {on_fake}");
    assert_eq!(on_fake["consumed"], 50, "5 codecs × 10: {on_fake}");
    let Some(kafka) = support::kafka() else { return };
    let on_kafka = support::summary(
        "librdkafka on Kafka",
        &Command::new(&python).arg(script).arg(kafka.bootstrap()).output().unwrap(),
    );
    println!("kafka: {on_kafka}");
    assert_eq!(on_fake, on_kafka, "librdkafka must observe the same on both");
}

/// kafkajs: admin (create twice, AlterConfigs, DescribeConfigs, CreatePartitions, metadata,
/// delete), an idempotent producer (none, gzip), a consumer group of two members.
#[test]
fn kafkajs_sees_the_same_on_the_fake_and_on_kafka() {
    let Some(node_modules) = env_or_skip("KAFKA_WIRE_NODE_MODULES") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/kafkajs_round.js");
    let run = |bootstrap: &str| {
        Command::new("node").arg(script).arg(bootstrap).env("NODE_PATH", &node_modules).output().unwrap()
    };
    let _alone = support::one_at_a_time();
    let fake = support::fake(&["--nodes", "3"]);
    let on_fake = support::summary("kafkajs on the fake", &run(&fake.bootstrap));
    println!("fake:  {on_fake}");
    assert_eq!(on_fake["consumed"], 20, "{on_fake}");
    assert_eq!(on_fake["committed"], on_fake["high"], "{on_fake}");
    let Some(kafka) = support::kafka() else { return };
    let on_kafka = support::summary("kafkajs on Kafka", &run(&kafka.bootstrap()));
    println!("kafka: {on_kafka}");
    assert_eq!(on_fake, on_kafka, "kafkajs must observe the same on both");
}
