//! The worst frame the bytes allow, for every array of every message at every version: the
//! message's other fields at their smallest, the array under test (nested ones reached through
//! one-element arrays and present structs, tagged ones through their tag) claiming the most
//! elements the length checks accept, and the rest of the input filled with its smallest valid
//! element. Decoding it, whatever happens, may allocate at most 8× the input plus 80 KiB: the
//! decode's memory budget (`kwire_runtime::budget`, 8× plus 64 KiB, charged before each
//! array is allocated) and 16 KiB for what it does not charge (an error and its path).
//! Not 4×: real messages take up to 5× their size once decoded (see `decode_budget.rs`), and a
//! budget below that would refuse them.
//!
//! The frames are built from the schemas' IR here, not by the generated encoders, so a
//! minimum size that the generator got wrong shows: too small, the peak bound fails; too
//! large, a frame of valid elements is refused at its count, which is reported too.

use bytes::Bytes;
use kwire_codegen::ir::{Field, FieldType, Layout, Message, Presence, Slot};
use kwire_runtime::{DecodeError, DecodeErrorKind};
use kwire_test_support::alloc::{peak_during, Counting};
use kwire_tests::SCHEMAS;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Kafka's limit on one array's elements, which the decoders refuse above.
const MAX_ARRAY_LEN: usize = 1_000_000;
/// The size of each worst frame's body in the sweep over the corpus.
const BODY: usize = 256 << 10;

/// Held by each test throughout: the allocator counts every thread, so one test building a
/// frame while the other measures would count against the other.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// What decoding `input` bytes may allocate at most.
fn bound(input: usize) -> usize {
    8 * input + (80 << 10)
}

/// The fields to follow from a message to one of its arrays: indexes into each struct's fields.
#[derive(Debug, Clone)]
struct Target {
    path: Vec<usize>,
    label: String,
}

fn struct_fields<'m>(msg: &'m Message, name: &str) -> &'m [Field] {
    &msg.structs.iter().find(|s| s.name == name).expect("struct defined").fields
}

/// Every array a value of `fields` can hold at `version`, nested ones too.
fn targets(msg: &Message, fields: &[Field], version: i16, prefix: &mut Vec<usize>, label: &str, out: &mut Vec<Target>) {
    for slot in Layout::of(msg, fields, version).slots.iter().filter(|s| s.presence != Presence::Absent) {
        prefix.push(slot.index);
        let label = format!("{label}.{}", slot.field.name);
        match &slot.field.ty {
            FieldType::Array(inner) => {
                out.push(Target { path: prefix.clone(), label: label.clone() });
                if let FieldType::Struct(name) = inner.as_ref() {
                    targets(msg, struct_fields(msg, name), version, prefix, &format!("{label}[0]"), out);
                }
            }
            FieldType::Struct(name) => targets(msg, struct_fields(msg, name), version, prefix, &label, out),
            _ => {}
        }
        prefix.pop();
    }
}

fn put_uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length or count prefix: compact `uvarint` N+1, or classic `int16`/`int32`.
fn put_len(out: &mut Vec<u8>, n: usize, compact: bool, wide: bool) {
    match (compact, wide) {
        (true, _) => put_uvarint(out, n as u32 + 1),
        (false, true) => out.extend_from_slice(&(n as i32).to_be_bytes()),
        (false, false) => out.extend_from_slice(&(n as i16).to_be_bytes()),
    }
}

/// The smallest valid value of `fields` at `version`.
fn smallest_struct(msg: &Message, fields: &[Field], version: i16, out: &mut Vec<u8>) {
    let layout = Layout::of(msg, fields, version);
    for slot in layout.regular() {
        match &slot.field.ty {
            // A null struct: its marker.
            FieldType::Struct(_) if slot.nullable => out.push(0xff),
            ty => smallest_value(msg, ty, slot.compact, version, out),
        }
    }
    if layout.flexible {
        out.push(0);
    }
}

/// The smallest valid non-null value of `ty`: empty strings, bytes and arrays, zeros.
fn smallest_value(msg: &Message, ty: &FieldType, compact: bool, version: i16, out: &mut Vec<u8>) {
    match ty {
        FieldType::String => put_len(out, 0, compact, false),
        FieldType::Bytes | FieldType::Records | FieldType::Array(_) => put_len(out, 0, compact, true),
        FieldType::Struct(name) => smallest_struct(msg, struct_fields(msg, name), version, out),
        ty => out.resize(out.len() + ty.fixed_size().expect("the other types are fixed"), 0),
    }
}

/// A worst frame for the array at `path` within `fields`, of about `room` bytes, appended to
/// `out`. Returns where the array's last element ends.
fn worst(msg: &Message, fields: &[Field], version: i16, path: &[usize], room: usize, out: &mut Vec<u8>) -> usize {
    let layout = Layout::of(msg, fields, version);
    let start = out.len();
    let target = layout.slots[path[0]];
    for slot in layout.regular() {
        if slot.index == path[0] {
            let left = room.saturating_sub(out.len() - start);
            return along(msg, &target, false, version, &path[1..], left, out);
        }
        match &slot.field.ty {
            FieldType::Struct(_) if slot.nullable => out.push(0xff),
            ty => smallest_value(msg, ty, slot.compact, version, out),
        }
    }
    let Presence::Tagged(tag) = target.presence else { unreachable!("targets are present") };
    // The tagged section: the one field under test, its value sized exactly.
    put_uvarint(out, 1);
    put_uvarint(out, tag);
    let mut value = Vec::new();
    let left = room.saturating_sub(out.len() - start + 5);
    let end = along(msg, &target, true, version, &path[1..], left, &mut value);
    put_uvarint(out, value.len() as u32);
    let value_at = out.len();
    out.extend_from_slice(&value);
    value_at + end
}

/// The bytes of `slot` leading to the array under test (`rest` more steps), or the array.
fn along(
    msg: &Message,
    slot: &Slot<'_>,
    tagged: bool,
    version: i16,
    rest: &[usize],
    room: usize,
    out: &mut Vec<u8>,
) -> usize {
    match &slot.field.ty {
        FieldType::Array(inner) if rest.is_empty() => {
            let mut element = Vec::new();
            smallest_value(msg, inner, slot.compact, version, &mut element);
            let count = (room.saturating_sub(5) / element.len()).min(MAX_ARRAY_LEN);
            put_len(out, count, slot.compact, true);
            for _ in 0..count {
                out.extend_from_slice(&element);
            }
            out.len()
        }
        FieldType::Array(inner) => {
            let FieldType::Struct(name) = inner.as_ref() else { unreachable!("only struct arrays hold arrays") };
            put_len(out, 1, slot.compact, true);
            worst(msg, struct_fields(msg, name), version, rest, room.saturating_sub(5), out)
        }
        FieldType::Struct(name) => {
            if slot.nullable {
                if tagged {
                    put_uvarint(out, 1);
                } else {
                    out.push(1);
                }
            }
            worst(msg, struct_fields(msg, name), version, rest, room.saturating_sub(1), out)
        }
        _ => unreachable!("paths only lead through arrays and structs"),
    }
}

/// What one decode of a worst frame did.
struct Outcome {
    peak: usize,
    error: Option<DecodeError>,
}

fn decode(entry: &kwire_tests::Entry, frame: Vec<u8>, version: i16) -> Outcome {
    let frame = Bytes::from(frame);
    let (result, peak) = peak_during(|| (entry.ops.decode_shared)(frame.clone(), version));
    Outcome { peak, error: result.err() }
}

#[test]
fn the_worst_frame_of_every_array_stays_within_the_budget() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (mut cases, mut refused_for_memory, mut worst_ratio) = (0usize, 0usize, (0f64, String::new()));
    let (mut over, mut refused_early) = (Vec::new(), Vec::new());
    for entry in SCHEMAS.iter().filter(|e| e.set == "message") {
        let msg = entry.load();
        for version in msg.valid_versions.min..=msg.valid_versions.max {
            let mut found = Vec::new();
            targets(&msg, &msg.fields, version, &mut Vec::new(), &msg.name, &mut found);
            for target in found {
                let mut frame = Vec::new();
                let end = worst(&msg, &msg.fields, version, &target.path, BODY, &mut frame);
                let len = frame.len();
                let outcome = decode(entry, frame, version);
                cases += 1;
                let case = format!("{} v{version} ({len} bytes)", target.label);
                let ratio = outcome.peak as f64 / len as f64;
                if ratio > worst_ratio.0 {
                    worst_ratio = (ratio, case.clone());
                }
                if outcome.peak > bound(len) {
                    over.push(format!("{case}: {} bytes allocated", outcome.peak));
                }
                match &outcome.error {
                    Some(e) if matches!(e.kind(), DecodeErrorKind::MemoryLimit { .. }) => refused_for_memory += 1,
                    // Every element is valid: an error may only come after the last one.
                    Some(e) if e.offset().is_some_and(|at| at < end) => refused_early.push(format!("{case}: {e}")),
                    _ => {}
                }
            }
        }
    }
    println!(
        "{cases} worst frames of {BODY} bytes; {refused_for_memory} refused at the memory limit; \
         highest peak {:.2}× the input ({})",
        worst_ratio.0, worst_ratio.1
    );
    assert!(cases > 1000, "the corpus has thousands of arrays, found {cases}");
    assert!(over.is_empty(), "{} frames allocated over 8× their input + 80 KiB:\n{}", over.len(), over.join("\n"));
    assert!(
        refused_early.is_empty(),
        "{} frames of valid elements were refused before their last element:\n{}",
        refused_early.len(),
        refused_early.join("\n")
    );
}

/// The frame the issue measured: a FetchResponse v12 of 10 MiB whose partitions array claims
/// as many elements as there are bytes left, zeros after it; and the same array at the most
/// elements its length check accepts, each the smallest valid partition.
#[test]
fn a_ten_mebibyte_fetch_response_stays_within_the_budget() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    const SIZE: usize = 10 << 20;
    let entry = SCHEMAS.iter().find(|e| e.set == "message" && e.name == "FetchResponse").expect("FetchResponse");
    let msg = entry.load();
    let mut found = Vec::new();
    targets(&msg, &msg.fields, 12, &mut Vec::new(), &msg.name, &mut found);
    let target = found.iter().find(|t| t.label == "FetchResponse.Responses[0].Partitions").expect("partitions");

    // throttle_time_ms, error_code, session_id; one topic named ""; then the partitions count.
    let mut claimed = vec![0u8; 4 + 2 + 4];
    claimed.extend_from_slice(&[2, 1]);
    let left = SIZE - claimed.len() - 4;
    put_uvarint(&mut claimed, left as u32 + 1);
    claimed.resize(SIZE, 0);
    let claimed = decode(entry, claimed, 12);

    let mut accepted = Vec::new();
    worst(&msg, &msg.fields, 12, &target.path, SIZE, &mut accepted);
    let len = accepted.len();
    let accepted = decode(entry, accepted, 12);

    for (what, outcome, len) in
        [("count = bytes left, zeros", &claimed, SIZE), ("largest accepted count", &accepted, len)]
    {
        let error = outcome.error.as_ref().map_or("decoded".to_string(), |e| e.to_string());
        println!(
            "FetchResponse v12, {len} bytes, {what}: peak {:.1} MiB ({:.2}× the input): {error}",
            outcome.peak as f64 / (1 << 20) as f64,
            outcome.peak as f64 / len as f64
        );
        assert!(outcome.peak <= bound(len), "{what}: {} bytes allocated for {len}", outcome.peak);
    }
}
