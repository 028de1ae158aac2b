//! Each real client runs one scenario against the in-process cluster and against Apache Kafka
//! 4.4, and what it observes must be the same: records, offsets, group membership and
//! assignment shape, committed offsets, error names. One Kafka serves every suite here, and
//! the suites run one at a time. Kafka's Java clients and franz-go have modules of their own.

#[path = "../support/mod.rs"]
mod support;

mod assignments;
mod franz;
mod franz_share;
mod java;
mod list_offsets;
mod offset_epochs;
mod scenarios;

use std::process::Command;

use kwire_test_support::env_or_skip;

/// Runs a client's round (`run` takes a bootstrap) on a 3-node fake, checks what it saw there
/// (`check`), then on Kafka 4.4, and requires the same summary from both.
///
/// Kafka is the reference, and a client's round on it can go wrong on its own: once in CI,
/// kafka-python's group members on Kafka were never assigned a partition in three minutes
/// (its other rounds, before and after, were normal). So a round on Kafka that differs is shown
/// with both clients' logs and the broker's, and run on Kafka once more; the fake's summary must
/// equal that second one. A difference that is the fake's recurs and fails the test.
fn on_both(what: &str, run: impl Fn(&str) -> std::process::Output, check: impl Fn(&serde_json::Value)) {
    let _alone = support::one_at_a_time();
    let fake = support::fake(&["--nodes", "3"]);
    let fake_run = run(&fake.bootstrap);
    let on_fake = support::summary(&format!("{what} on the fake"), &fake_run);
    println!("{what}, fake:  {on_fake}");
    check(&on_fake);
    let Some(kafka) = support::kafka() else { return };
    let kafka_run = run(&kafka.bootstrap());
    let mut on_kafka = support::summary(&format!("{what} on Kafka"), &kafka_run);
    println!("{what}, kafka: {on_kafka}");
    if on_fake != on_kafka {
        for (side, out) in [("fake", &fake_run), ("Kafka", &kafka_run)] {
            println!("{what}'s log on {side}:\n{}", support::tail(&String::from_utf8_lossy(&out.stderr), 8000));
        }
        println!("{}", kafka.logs());
        on_kafka = support::summary(&format!("{what} on Kafka, again"), &run(&kafka.bootstrap()));
        println!("{what}, kafka, again: {on_kafka}");
    }
    assert_eq!(on_fake, on_kafka, "{what} must observe the same on both");
}

/// A join-and-leave round's assignment sizes per phase (a alone, b joined, a left), from its
/// summary's `phases`; the members' own view of their assignments must be DescribeGroups'.
fn assignment_sizes(s: &serde_json::Value) -> [Vec<usize>; 3] {
    ["alone", "joined", "left"].map(|p| {
        let phase = &s["phases"][p];
        let mut sizes: Vec<usize> =
            phase["assigned"].as_array().into_iter().flatten().map(|a| a.as_array().map_or(0, Vec::len)).collect();
        sizes.sort();
        assert_eq!(phase["members"], sizes.len(), "{p}: {s}");
        assert_eq!(phase["assigned"], phase["described"], "{p}: {s}");
        sizes
    })
}

/// kafka-python: admin (creating a topic twice), an idempotent producer in every codec, a
/// consumer assigned every partition, then a consumer group of two members where one leaves.
#[test]
fn kafka_python_sees_the_same_on_the_fake_and_on_kafka() {
    let Some(python) = env_or_skip("KWIRE_PYTHON") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/kafka_python_round.py");
    on_both(
        "kafka-python",
        |b| Command::new(&python).arg(script).arg(b).output().unwrap(),
        // 5 codecs × 10 records, each read back; the group split 1 + 2, the survivor took all
        // 3 and committed the end offsets.
        |s| {
            assert_eq!((&s["consumed"], &s["group_consumed"]), (&50.into(), &50.into()), "{s}");
            assert_eq!(s["committed"], s["end_offsets"], "{s}");
        },
    );
}

/// kafka-python's KafkaAdminClient: every call whose API the fake serves (topics, partitions,
/// configs, offsets, DeleteRecords, groups and their offsets, the cluster), refusals included.
#[test]
fn kafka_python_admin_sees_the_same_on_the_fake_and_on_kafka() {
    let Some(python) = env_or_skip("KWIRE_PYTHON") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/kafka_python_admin.py");
    on_both(
        "kafka-python admin",
        |b| Command::new(&python).arg(script).arg(b).output().unwrap(),
        // validate_only created nothing; the topic grew to 4; records deleted up to 2 and to the
        // end; the group that left is deleted, the one with a member refused.
        |s| {
            assert_eq!(s["listed_after_validate_only"], serde_json::json!([]), "{s}");
            assert_eq!(s["partitions_after"], 4, "{s}");
            assert_eq!(s["delete_records"], serde_json::json!([[0, 2, "NoError"], [1, 3, "NoError"]]), "{s}");
            assert_eq!(s["delete_groups"][0], serde_json::json!(["py-admin-held-*", "NonEmptyGroupError"]), "{s}");
            assert_eq!(s["delete_groups"][1], serde_json::json!(["py-admin-left-*", "OK"]), "{s}");
        },
    );
}

/// confluent-kafka (librdkafka): admin (create, describe configs), an idempotent producer in
/// every codec, a consumer group, commit, committed offsets and watermarks: the tap test's
/// round, run here against both clusters.
#[test]
fn librdkafka_sees_the_same_on_the_fake_and_on_kafka() {
    let Some(python) = env_or_skip("KWIRE_PYTHON") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../cli/tests/clients/confluent_kafka_round.py");
    on_both(
        "librdkafka",
        |b| Command::new(&python).arg(script).arg(b).output().unwrap(),
        |s| assert_eq!(s["consumed"], 50, "5 codecs × 10: {s}"),
    );
}

/// confluent-kafka (librdkafka)'s AdminClient: every call whose API the fake serves (topics,
/// partitions, configs whole and incremental, ListOffsets by spec, DeleteRecords, groups and
/// their offsets, the cluster), refusals included.
#[test]
fn librdkafka_admin_sees_the_same_on_the_fake_and_on_kafka() {
    let Some(python) = env_or_skip("KWIRE_PYTHON") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/confluent_kafka_admin.py");
    on_both(
        "librdkafka admin",
        |b| Command::new(&python).arg(script).arg(b).output().unwrap(),
        // validate_only created nothing; APPEND then SUBTRACT left "compact"; records deleted up
        // to 2 and to the end; the group that left is deleted, the one with a member refused.
        |s| {
            assert_eq!(s["listed_after_validate_only"], serde_json::json!([]), "{s}");
            assert_eq!(s["partitions_after"], 4, "{s}");
            assert_eq!(s["after_subtract_delete"]["cleanup.policy"], "compact", "{s}");
            assert_eq!(s["delete_records"], serde_json::json!([[0, 2], [1, 3]]), "{s}");
            let deleted = serde_json::json!([
                ["rd-admin-held-*", "NON_EMPTY_GROUP"],
                ["rd-admin-left-*", "ok"],
                ["rd-admin-no-group-*", "GROUP_ID_NOT_FOUND"]
            ]);
            assert_eq!(s["delete_groups"], deleted, "{s}");
        },
    );
}

/// confluent-kafka (librdkafka): a classic consumer group where b joins a and a leaves, each
/// member polling in a thread of its own, assignments seen by on_assign/on_revoke and by
/// DescribeGroups.
#[test]
fn librdkafka_group_sees_the_same_on_the_fake_and_on_kafka() {
    let Some(python) = env_or_skip("KWIRE_PYTHON") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/confluent_kafka_group.py");
    on_both(
        "librdkafka group",
        |b| Command::new(&python).arg(script).arg(b).output().unwrap(),
        // 10 records before and per phase, each read once, the end offsets committed.
        |s| {
            assert_eq!((&s["consumed"], &s["duplicates"]), (&40.into(), &0.into()), "{s}");
            assert_eq!(assignment_sizes(s), [vec![3], vec![1, 2], vec![3]], "{s}");
            assert_eq!(s["committed"], s["high"], "{s}");
        },
    );
}

/// confluent-kafka (librdkafka): a KIP-848 consumer group (group.protocol=consumer) over 6
/// partitions where b and c (by regular expression) join a and a leaves; assignment sizes per
/// phase as the members' callbacks and ConsumerGroupDescribe see them (which partitions is the
/// assignor's choice); the group listed, and deleted only once empty; a static member that
/// closes keeps its partitions, which it has again when it comes back.
#[test]
fn librdkafka_consumer_protocol_sees_the_same_on_the_fake_and_on_kafka() {
    let Some(python) = env_or_skip("KWIRE_PYTHON") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/confluent_kafka_consumer_protocol.py");
    on_both(
        "librdkafka consumer protocol",
        |b| Command::new(&python).arg(script).arg(b).output().unwrap(),
        // 10 records before and per phase, each read once; the uniform assignor balances 6, 3 + 3,
        // 2 + 2 + 2, 3 + 3; no partition ever held by two members; the end offsets committed.
        |s| {
            assert_eq!((&s["consumed"], &s["duplicates"]), (&50.into(), &0.into()), "{s}");
            assert_eq!(s["overlaps"], serde_json::json!([]), "{s}");
            let sizes = ["alone", "b_joined", "c_joined", "a_left"].map(|p| &s["phases"][p]["sizes"]);
            assert_eq!(serde_json::json!(sizes), serde_json::json!([[6], [3, 3], [2, 2, 2], [3, 3]]), "{s}");
            for p in s["phases"].as_object().into_iter().flat_map(|o| o.values()) {
                let checks = [&p["disjoint"], &p["complete"], &p["described_matches"]];
                assert!(checks.iter().all(|c| **c == true), "{s}");
                assert_eq!((&p["type"], &p["assignor"]), (&"CONSUMER".into(), &"uniform".into()), "{s}");
            }
            assert_eq!(s["committed"], s["high"], "{s}");
            // Listed as a consumer group; deleted only once empty.
            assert_eq!(s["listed"]["with_members"], serde_json::json!(["STABLE", "CONSUMER"]), "{s}");
            assert_eq!(s["delete"]["with_members"], "NON_EMPTY_GROUP", "{s}");
            assert_eq!(s["delete"]["empty"], "ok", "{s}");
            for step in ["stepped_out", "back"] {
                assert_eq!(s["static"][step]["members"], 2, "{s}");
                assert_eq!(s["static"][step]["y_kept_its_own"], true, "{s}");
            }
        },
    );
}

/// confluent-kafka (librdkafka) transactions: commit, abort, commit; read_committed and
/// read_uncommitted readers; consume-transform-produce with offsets sent in each transaction;
/// a producer fenced by a newer one with its transactional id.
#[test]
fn librdkafka_transactions_see_the_same_on_the_fake_and_on_kafka() {
    let Some(python) = env_or_skip("KWIRE_PYTHON") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/confluent_kafka_txn.py");
    on_both(
        "librdkafka transactions",
        |b| Command::new(&python).arg(script).arg(b).output().unwrap(),
        |s| {
            assert_eq!(s["read_committed"].as_array().map(Vec::len), Some(12), "{s}");
            assert_eq!(s["read_uncommitted"].as_array().map(Vec::len), Some(18), "{s}");
            assert_eq!(s["output"], s["read_committed"], "each committed record copied once: {s}");
            assert_eq!(s["group_offsets"], s["input_ends"], "{s}");
            assert_eq!(s["fenced"]["code"], "_FENCED", "{s}");
        },
    );
}

/// confluent-kafka (librdkafka) static membership (KIP-345): a member restarting with its
/// instance id gets its partitions back without a rebalance; another consumer with a live
/// member's instance id takes its place and fences it.
#[test]
fn librdkafka_static_members_see_the_same_on_the_fake_and_on_kafka() {
    let Some(python) = env_or_skip("KWIRE_PYTHON") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/confluent_kafka_static.py");
    on_both(
        "librdkafka static members",
        |b| Command::new(&python).arg(script).arg(b).output().unwrap(),
        |s| {
            assert_eq!(s["b_back_with_its_partitions"], true, "{s}");
            assert_eq!(s["a_revoked_while_b_restarted"], 0, "no rebalance for a restart: {s}");
            assert_eq!(s["a_fenced"], true, "{s}");
        },
    );
}

/// kafkajs: admin (create twice, AlterConfigs, DescribeConfigs, CreatePartitions, metadata,
/// delete), an idempotent producer (none, gzip), a consumer group where b joins a and a leaves.
#[test]
fn kafkajs_sees_the_same_on_the_fake_and_on_kafka() {
    let Some(node_modules) = env_or_skip("KWIRE_NODE_MODULES") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/kafkajs_round.js");
    on_both(
        "kafkajs",
        |b| Command::new("node").arg(script).arg(b).env("NODE_PATH", &node_modules).output().unwrap(),
        // 20 records, then 10 per phase: a alone holds 3 partitions, a and b split them 2 + 1,
        // b alone holds 3; each record read once, the end offsets committed.
        |s| {
            assert_eq!((&s["consumed"], &s["duplicates"]), (&50.into(), &0.into()), "{s}");
            assert_eq!(assignment_sizes(s), [vec![3], vec![1, 2], vec![3]], "{s}");
            assert_eq!(s["committed"], s["high"], "{s}");
        },
    );
}

/// kafkajs transactions: commit, abort, commit; read_committed against read_uncommitted;
/// consume-transform-produce with sendOffsets; offsets of an aborted transaction dropped; a
/// producer fenced by a second one of the same transactional id.
#[test]
fn kafkajs_transactions_see_the_same_on_the_fake_and_on_kafka() {
    let Some(node_modules) = env_or_skip("KWIRE_NODE_MODULES") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/kafkajs_txn.js");
    on_both(
        "kafkajs transactions",
        |b| Command::new("node").arg(script).arg(b).env("NODE_PATH", &node_modules).output().unwrap(),
        // 6 records a transaction: 12 committed, 18 in all; each committed one copied once, the
        // group's offsets past the last record copied of each partition.
        |s| {
            let (committed, all) = (&s["read_committed"], &s["read_uncommitted"]);
            let counts = (&committed["records"], &committed["distinct"], &all["distinct"]);
            assert_eq!(counts, (&12.into(), &12.into(), &18.into()), "{s}");
            let ctp = &s["consume_transform_produce"];
            assert_eq!(ctp["out_read_committed"]["values"], committed["values"], "{s}");
            assert_eq!(ctp["committed"], serde_json::json!([8, 8, 8]), "{s}");
            assert_eq!(s["committed_after_aborted_offsets"], ctp["committed"], "{s}");
            assert_eq!(s["read_committed_after_fencing"], serde_json::json!(["second"]), "{s}");
            assert_eq!(s["high_while_open"], serde_json::json!([9, 9, 9]), "{s}");
        },
    );
}
