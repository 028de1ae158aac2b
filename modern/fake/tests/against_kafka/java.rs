//! Kafka's own Java clients (`ClientRound` of `conformance/kafka-java`, built by
//! `scripts/kafka-release`) against the `kwire-fake-cluster` binary and against Apache Kafka 4.4:
//! the admin client, an idempotent producer in every codec, a classic consumer group that
//! grows and shrinks, and transactions. Each mode prints one JSON summary; what does not depend on timing must be
//! the same on both.
//!
//! The fake runs 3 nodes, Kafka 1: the admin summary's `cluster_nodes` is checked against each
//! side's own count, everything else compared as is. Without Kafka's jars (outside CI) the
//! fake's summaries are still checked on their own.

use serde_json::Value;

use super::support;

const FAKE_NODES: usize = 3;
const KAFKA_NODES: usize = 1;

/// What one run of a mode gave: its summary, or why there is none.
type Run = Result<Value, String>;

/// Runs `ClientRound MODE BOOTSTRAP TOPIC N`; `None` when its classes were not built (outside
/// CI: skipped; under CI that fails).
fn run(mode: &str, bootstrap: &str, topic: &str, n: usize) -> Option<Run> {
    let out = support::java_client(&[mode, bootstrap, topic, &n.to_string()])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = stdout.lines().rev().find_map(|line| serde_json::from_str::<Value>(line).ok());
    let stale = if stderr.contains("unknown mode") {
        " (classes older than ClientRound.java: run scripts/kafka-release)"
    } else {
        ""
    };
    Some(match summary {
        Some(summary) if out.status.success() => Ok(summary),
        _ => Err(format!(
            "{mode} on {bootstrap} exited with {}{stale}\nstdout: {stdout}\nstderr (the end): {}",
            out.status,
            tail(&stderr, 6000)
        )),
    })
}

/// The last `bytes` bytes of `text` or a little fewer, on a character boundary.
fn tail(text: &str, bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The runs of `mode` on the fake and, when its jars are there, on Kafka; both printed.
/// `None` when the Java classes are missing (skipped).
fn both(mode: &str, n: usize) -> Option<(Run, Option<Run>)> {
    let _alone = support::one_at_a_time();
    let fake = support::fake(&["--nodes", &FAKE_NODES.to_string()]);
    let fake = run(mode, &fake.bootstrap, &format!("java-{mode}-fake"), n)?;
    println!("{mode}, kwire-fake ({FAKE_NODES} nodes): {}", show(&fake));
    let kafka = support::kafka().map(|kafka| {
        let kafka = run(mode, &kafka.bootstrap(), &format!("java-{mode}-kafka"), n).expect("the classes were there");
        println!("{mode}, Apache Kafka 4.4 ({KAFKA_NODES} node): {}", show(&kafka));
        kafka
    });
    Some((fake, kafka))
}

fn show(run: &Run) -> String {
    match run {
        Ok(summary) => summary.to_string(),
        Err(why) => format!("FAILED: {why}"),
    }
}

/// Compares what is deterministic of both summaries (`deterministic` picks it) after checking
/// each on its own (`check`); Kafka's run first, so that a broken setup shows as such.
fn compare(
    mode: &str,
    (fake, kafka): (Run, Option<Run>),
    check: impl Fn(&Value, usize),
    deterministic: impl Fn(&Value) -> Value,
) {
    let kafka = kafka.map(|kafka| kafka.unwrap_or_else(|why| panic!("{mode} against Apache Kafka 4.4: {why}")));
    if let Some(kafka) = &kafka {
        check(kafka, KAFKA_NODES);
    }
    let fake = fake.unwrap_or_else(|why| panic!("{mode} against kwire-fake: {why}"));
    check(&fake, FAKE_NODES);
    match kafka {
        Some(kafka) => assert_eq!(
            deterministic(&fake),
            deterministic(&kafka),
            "{mode}: kwire-fake (left) and Apache Kafka 4.4 (right) differ"
        ),
        None => eprintln!("{mode}: no Apache Kafka to compare with (its jars are not there)"),
    }
}

fn without(summary: &Value, fields: &[&str]) -> Value {
    let mut summary = summary.clone();
    for field in fields {
        summary.as_object_mut().expect("a JSON object").remove(*field);
    }
    summary
}

#[test]
fn the_admin_client_sees_the_same_cluster() {
    let partitions = 3;
    let Some(runs) = both("admin", partitions) else { return };
    compare(
        "admin",
        runs,
        |s, nodes| {
            assert_eq!(s["cluster_nodes"], nodes, "{s}");
            assert_eq!(s["listed"], true, "{s}");
            assert_eq!(s["partitions"], partitions + 1, "{s}");
            assert_eq!(s["deleted"], true, "{s}");
        },
        // The node count is each cluster's own, checked above.
        |s| without(s, &["cluster_nodes"]),
    );
}

#[test]
fn an_idempotent_producer_gets_the_same_offsets() {
    let n = 20;
    let Some(runs) = both("idempotent", n) else { return };
    compare(
        "idempotent",
        runs,
        |s, _| {
            assert_eq!(s["offsets_unique"], true, "{s}");
            assert_eq!(s["acknowledged"], 5 * n, "{s}");
            assert_eq!(s["read_back"], 5 * n, "{s}");
            assert_eq!(s["read_back_distinct"], 5 * n, "{s}");
            assert_eq!(s["keys_and_headers_match"], true, "{s}");
        },
        Value::clone,
    );
}

/// What both group modes report alike: `total` records consumed exactly once, keys and
/// headers intact, committed up to the end.
fn consumed_once_and_committed(s: &Value, total: usize) {
    assert_eq!(s["consumed"], total, "every record consumed exactly once: {s}");
    assert_eq!(s["distinct"], total, "every record consumed exactly once: {s}");
    assert_eq!(s["committed"], s["end_offsets"], "committed up to the end: {s}");
    assert_eq!(s["keys_and_headers_match"], true, "{s}");
}

#[test]
fn a_classic_consumer_group_consumes_every_record_once() {
    let n = 20;
    let Some(runs) = both("group", n) else { return };
    compare(
        "group",
        runs,
        |s, _| {
            consumed_once_and_committed(s, 5 * n);
        },
        |s| without(s, &["informational"]),
    );
}

/// A KIP-848 consumer group (group.protocol=consumer, the broker's uniform assignor) over 7
/// partitions: one member, a second and a third join, the first leaves; the owned and
/// described assignment sizes of each step (7 over 3 members is 3 + 2 + 2 whoever held what
/// before), every record consumed once, the group listed and described as a consumer group.
#[test]
fn a_consumer_protocol_group_consumes_every_record_once() {
    let n = 10;
    let Some(runs) = both("consumer-protocol", n) else { return };
    compare(
        "consumer-protocol",
        runs,
        |s, _| {
            consumed_once_and_committed(s, 5 * n);
            let own = ["alone", "second_joined", "third_joined", "first_left"].map(|step| &s["steps"][step]["own"]);
            assert_eq!(serde_json::json!(own), serde_json::json!([[7], [3, 4], [2, 2, 3], [3, 4]]), "{s}");
            for step in s["steps"].as_object().into_iter().flat_map(|o| o.values()) {
                let described = &step["described"];
                assert_eq!((&described["type"], &described["state"]), (&"Consumer".into(), &"Stable".into()), "{s}");
                assert_eq!(described["member_partitions"], step["own"], "{s}");
            }
            assert_eq!(s["described_after_close"]["type"], "Consumer", "{s}");
            assert_eq!(s["listed"]["type"], "Consumer", "{s}");
            assert_eq!(s["listed"]["protocol"], "consumer", "{s}");
        },
        |s| without(s, &["informational"]),
    );
}

/// Transactions (KIP-890 v2, which the 4.4 client uses when the cluster finalizes
/// transaction.version=2): commit, abort, commit; read_committed against read_uncommitted; a
/// producer fenced by a second of the same transactional.id, whose open transaction holds the
/// last stable offset; the admin client's DescribeTransactions and ListTransactions;
/// consume-transform-produce with sendOffsetsToTransaction (and offsets of an aborted one); a
/// transaction aborted by its timeout; two transactions interleaved on a partition.
#[test]
fn transactions_commit_abort_fence_and_copy_alike() {
    use serde_json::json;
    let n = 6;
    let Some(runs) = both("transactional", n) else { return };
    compare(
        "transactional",
        runs,
        |s, _| {
            let (committed, all) = (&s["read_committed"], &s["read_uncommitted"]);
            assert_eq!((&committed["records"], &committed["distinct"]), (&(2 * n).into(), &(2 * n).into()), "{s}");
            let values = committed["values"].as_array().unwrap();
            assert!(values.iter().all(|v| v.as_str().unwrap().starts_with("committed")), "{s}");
            assert_eq!((&all["records"], &all["distinct"]), (&(3 * n).into(), &(3 * n).into()), "{s}");
            let ctp = &s["consume_transform_produce"];
            assert_eq!(ctp["copied"], 2 * n, "{s}");
            assert_eq!(ctp["committed"], ctp["end_offsets"], "{s}");
            assert_eq!(ctp["out_read_committed"]["values"], committed["values"], "each copied once: {s}");
            let open = &s["described_open"];
            assert_eq!((&open["state"], &open["partitions"]), (&"Ongoing".into(), &json!(["TOPIC-0"])), "{s}");
            assert_eq!(s["latest_while_open"], json!({"read_committed": 9, "read_uncommitted": 10}), "{s}");
            assert_eq!(s["timed_out"]["described"]["state"], "CompleteAbort", "{s}");
            // Offsets of an open, then aborted, transaction never the group's.
            assert_eq!(ctp["committed_while_rewind_open"], ctp["end_offsets"], "{s}");
            assert_eq!(ctp["committed_after_rewind_aborted"], ctp["end_offsets"], "{s}");
            assert_eq!(s["interleaved"]["read_committed"]["values"], json!(["y-0", "y-1"]), "{s}");
        },
        Value::clone,
    );
}

/// Share groups (KIP-932) with Kafka's `KafkaShareConsumer`: the share.version feature
/// (supported 0-2, finalized 2, as a fresh 4.4 cluster has it); the group's
/// share.auto.offset.reset set to earliest on its GROUP resource, two consumers of one share
/// group acknowledging explicitly: every record accepted exactly once but the rejected ones
/// (delivered once, never again) and the released ones (delivered again with delivery count 2,
/// then accepted); the group described, listed as a share group, its share-partition start
/// offsets (as Kafka's share coordinator stored them: one write behind, so at each partition's
/// released record, accepted last) and lags (none left); AlterShareGroupOffsets refused while
/// it has members, then altered and DeleteShareGroupOffsets once empty (and on a group nobody
/// joined, which altering creates); the group deleted.
#[test]
fn java_share_consumers_accept_release_and_reject_alike() {
    use serde_json::json;
    let n = 30;
    let Some(runs) = both("share", n) else { return };
    compare(
        "share",
        runs,
        |s, _| {
            assert_eq!(s["share_version"], json!({"supported": "0-2", "finalized": "2-2"}), "{s}");
            assert_eq!(s["share_auto_offset_reset"], "earliest", "{s}");
            assert_eq!((&s["accepted"], &s["rejected"], &s["released"]), (&json!(27), &json!(3), &json!(3)), "{s}");
            assert_eq!(s["accepted_exactly_once"], true, "{s}");
            assert_eq!(s["rejected_redelivered"], false, "{s}");
            assert_eq!(s["released_once_each"], true, "{s}");
            assert_eq!(s["released_redelivery_counts"], json!([2]), "{s}");
            assert_eq!(s["described_running"], json!({"state": "Stable", "members": 2}), "{s}");
            assert_eq!(s["described_after_close"], json!({"state": "Empty", "members": 0}), "{s}");
            assert_eq!(s["lags"], json!({"0": 0, "1": 0, "2": 0}), "{s}");
            for p in ["0", "1", "2"] {
                assert!(s["start_offsets"][p].as_i64() <= s["end_offsets"][p].as_i64(), "{s}");
            }
            assert_eq!(s["listed_after_delete"], false, "{s}");
            assert_eq!(s["alter_while_running"], "GroupNotEmptyException", "{s}");
            assert_eq!(
                (&s["altered"]["error"], &s["altered"]["start_offsets"]["0"]),
                (&json!("none"), &json!("0")),
                "{s}"
            );
            let absent = json!({"0": "absent", "1": "absent", "2": "absent"});
            assert_eq!(s["offsets_deleted"], json!({"error": "none", "start_offsets": absent}), "{s}");
            assert_eq!(s["never_joined"]["listed"], true, "{s}");
        },
        |s| without(s, &["informational"]),
    );
}
