//! Every schema of Kafka's corpus (message/, test/, extra/*) at every valid version: instances
//! written by the independent IR-driven sample encoder decode, re-encode to the same bytes,
//! report their exact size, and decode again to the same value.

use std::collections::BTreeSet;

use kwire_tests::sample::{self, Mode, Rng};
use kwire_tests::SCHEMAS;
use proptest::prelude::*;

fn versions(msg: &kwire_codegen::ir::Message) -> impl Iterator<Item = i16> {
    msg.valid_versions.min..=msg.valid_versions.max
}

#[test]
fn every_set_of_the_corpus_is_generated() {
    let sets: BTreeSet<&str> = SCHEMAS.iter().map(|e| e.set).collect();
    for want in [
        "message",
        "test",
        "metadata",
        "group_coordinator",
        "raft",
        "share_coordinator",
        "storage",
        "streams",
        "transaction_coordinator",
        "release_2_4_1",
        "release_2_8_2",
        "release_3_3_2",
        "release_3_7_2",
        "retired_4x",
    ] {
        assert!(sets.contains(want), "schema set {want} missing; have {sets:?}");
    }
    let messages = SCHEMAS.iter().filter(|e| e.set == "message").count();
    assert!(messages >= 180, "only {messages} message/ schemas");
}

#[test]
fn minimal_instances_round_trip() {
    let mut failures = Vec::new();
    let mut checked = 0usize;
    for entry in SCHEMAS {
        let msg = entry.load();
        for v in versions(&msg) {
            let bytes = sample::encode(&msg, v, Mode::Minimal);
            checked += 1;
            if let Err(e) = (entry.ops.roundtrip)(&bytes, v) {
                failures.push(format!("{}/{} v{v}: {e}", entry.set, entry.name));
            }
        }
    }
    println!("minimal instances: {checked} schema versions checked");
    assert!(failures.is_empty(), "{} of {checked} failed:\n{}", failures.len(), failures.join("\n"));
    assert!(checked >= 780, "only {checked} schema versions");
}

#[test]
fn random_instances_carry_unknown_tags_and_nulls() {
    // Guards the oracle itself: the random mode must really produce unknown tags and nulls.
    let (mut with_unknown, mut with_null, mut total) = (0, 0, 0);
    let mut rng = Rng::new(99);
    for entry in SCHEMAS {
        let msg = entry.load();
        for v in versions(&msg) {
            let bytes = sample::encode(&msg, v, Mode::Random(Rng::new(rng.next_u64())));
            let debug = (entry.ops.roundtrip)(&bytes, v).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
            total += 1;
            with_unknown +=
                usize::from(debug.contains("unknown_tagged_fields: {2") || debug.contains("unknown_tagged_fields: {1"));
            with_null += usize::from(debug.contains(": None"));
        }
    }
    assert!(with_unknown > total / 10, "{with_unknown} of {total} instances had unknown tags");
    assert!(with_null > total / 10, "{with_null} of {total} instances had nulls");
}

/// Every schema version with a tagged struct field gets instances with it present and, where
/// null is not its default, null (Kafka's unsigned-varint marker inside the tagged field).
#[test]
fn random_instances_cover_tagged_structs() {
    let (mut versions_covered, mut schemas) = (0usize, BTreeSet::new());
    for entry in SCHEMAS {
        let msg = entry.load();
        for v in versions(&msg) {
            let fields = sample::tagged_struct_fields(&msg, v);
            if fields.is_empty() {
                continue;
            }
            let mut total = sample::Written::default();
            for seed in 0..64 {
                let (bytes, written) = sample::encode_counted(&msg, v, Mode::Random(Rng::new(seed * 7919 + 1)));
                (entry.ops.roundtrip)(&bytes, v).unwrap_or_else(|e| panic!("{}/{} v{v}: {e}", entry.set, entry.name));
                total.tagged_structs_present += written.tagged_structs_present;
                total.tagged_structs_null += written.tagged_structs_null;
            }
            let where_ = format!("{}/{} v{v} ({fields:?})", entry.set, entry.name);
            assert!(total.tagged_structs_present > 0, "{where_}: no tagged struct written present");
            if fields.iter().any(|(_, null_allowed)| *null_allowed) {
                assert!(total.tagged_structs_null > 0, "{where_}: no tagged struct written null");
            }
            versions_covered += 1;
            schemas.insert((entry.set, entry.name));
        }
    }
    println!("tagged structs: {versions_covered} schema versions of {} schemas", schemas.len());
    assert!(schemas.contains(&("test", "NullableStructMessage")), "{schemas:?}");
    assert!(schemas.contains(&("group_coordinator", "ConsumerGroupMemberMetadataValue")), "{schemas:?}");
}

#[test]
fn truncated_input_is_an_error_never_a_panic() {
    let mut rng = Rng::new(7);
    for entry in SCHEMAS {
        let msg = entry.load();
        for v in versions(&msg) {
            let bytes = sample::encode(&msg, v, Mode::Random(Rng::new(rng.next_u64())));
            for cut in 0..bytes.len() {
                assert!(
                    (entry.ops.decode)(&bytes[..cut], v).is_err(),
                    "{}/{} v{v}: a {cut}-byte prefix of {} bytes decoded",
                    entry.set,
                    entry.name,
                    bytes.len()
                );
            }
        }
    }
}

#[test]
fn versions_outside_valid_versions_are_refused() {
    for entry in SCHEMAS {
        let msg = entry.load();
        let above = msg.valid_versions.max.saturating_add(1);
        let bytes = sample::encode(&msg, msg.valid_versions.max, Mode::Minimal);
        let err = (entry.ops.decode)(&bytes, above).expect_err("version above the range decoded");
        assert!(err.contains("not supported"), "{}: {err}", entry.name);
        if msg.valid_versions.min > 0 {
            assert!((entry.ops.decode)(&bytes, msg.valid_versions.min - 1).is_err());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random values, nulls, array lengths, known tagged fields and unknown tags.
    #[test]
    fn random_instances_round_trip(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        for entry in SCHEMAS {
            let msg = entry.load();
            for v in versions(&msg) {
                let bytes = sample::encode(&msg, v, Mode::Random(Rng::new(rng.next_u64())));
                if let Err(e) = (entry.ops.roundtrip)(&bytes, v) {
                    prop_assert!(false, "{}/{} v{v}: {e}", entry.set, entry.name);
                }
            }
        }
    }

    /// Arbitrary bytes never panic any decoder at any version.
    #[test]
    fn garbage_never_panics(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        for entry in SCHEMAS {
            let msg = entry.load();
            for v in versions(&msg) {
                let _ = (entry.ops.decode)(&data, v);
            }
        }
    }
}

/// Kafka-style JSON over the whole corpus: every schema at every version, minimal and random
/// instances (unknown tags and nulls included), message → JSON → message and JSON → message →
/// JSON both equal.
#[test]
fn json_round_trips_over_the_corpus() {
    let mut failures = Vec::new();
    let (mut checked, mut with_unknown) = (0usize, 0usize);
    let mut rng = Rng::new(4242);
    for entry in SCHEMAS {
        let msg = entry.load();
        for v in versions(&msg) {
            for mode in [Mode::Minimal, Mode::Random(Rng::new(rng.next_u64())), Mode::Random(Rng::new(rng.next_u64()))]
            {
                let bytes = sample::encode(&msg, v, mode);
                checked += 1;
                match (entry.ops.json_roundtrip)(&bytes, v) {
                    Ok(text) => with_unknown += usize::from(text.contains("_unknownTaggedFields")),
                    Err(e) => failures.push(format!("{}/{} v{v}: {e}", entry.set, entry.name)),
                }
            }
        }
    }
    println!("JSON: {checked} instances checked, {with_unknown} with unknown tags");
    assert!(
        failures.is_empty(),
        "{} of {checked} failed:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
    assert!(checked >= 3 * 780, "only {checked} instances");
    assert!(with_unknown > checked / 20, "only {with_unknown} instances carried unknown tags");
}
