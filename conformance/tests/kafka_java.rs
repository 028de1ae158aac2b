//! The differential against Apache Kafka's own classes: for each release of `releases.tsv`,
//! every schema at every version it defines, minimal, maximal and seeded random instances,
//! byte- and JSON-exact both ways (see `kwire_conformance::case`).
//!
//! Needs the jars and the oracle's classes (`scripts/kafka-release`): missing, the test fails
//! under CI and says what to run elsewhere. `KAFKA_ORACLE_RANDOM=200` for a long local run;
//! `KAFKA_ORACLE_ONLY=FetchRequest` and `KAFKA_ORACLE_SEED` to reproduce a failure.

use kwire_conformance::oracle::oracle_for;
use kwire_conformance::plan::{run_release, Settings};
use kwire_conformance::SCHEMAS;

/// Runs one release and asserts that Kafka agreed with every case; `families` are those the
/// release must have been generated for.
fn differential(release: &str, families: &[&str]) {
    let generated: Vec<&str> = SCHEMAS.iter().filter(|e| e.release == release).map(|e| e.family).collect();
    let Some(mut oracle) = oracle_for(release) else { return };
    for family in families {
        assert!(
            generated.contains(family),
            "Kafka {release}: family {family} was not generated (run scripts/kafka-release)"
        );
    }
    let settings = Settings::from_env();
    let report = run_release(release, &mut oracle, &settings);
    for (family, tally) in &report.families {
        println!("Kafka {release} {family}: {tally}");
    }
    for (count, pattern) in report.patterns() {
        println!("{count:>6}  {pattern}");
    }
    let shown: Vec<String> = report.failures.iter().take(25).map(ToString::to_string).collect();
    assert!(
        report.failures.is_empty(),
        "Kafka {release}: {} failed cases, {} mismatches (first {} below; rerun one with KAFKA_ORACLE_ONLY=<schema> and the seed shown)\n{}",
        report.failures.len(),
        report.mismatches(),
        shown.len(),
        shown.join("")
    );
    let cases: usize = report.families.values().map(|t| t.cases).sum();
    assert!(cases > 0, "Kafka {release}: no case ran");
}

#[test]
fn kafka_4_4_0_agrees() {
    differential(
        "4.4.0",
        &[
            "message",
            "metadata",
            "group_coordinator",
            "share_coordinator",
            "transaction_coordinator",
            "raft",
            "storage",
        ],
    );
}

#[test]
fn kafka_4_3_1_test_schemas_agree() {
    differential("4.3.1", &["test"]);
}

#[test]
fn kafka_3_9_2_agrees() {
    differential(
        "3.9.2",
        &["message", "test", "metadata", "group_coordinator", "transaction_coordinator", "raft", "storage"],
    );
}
