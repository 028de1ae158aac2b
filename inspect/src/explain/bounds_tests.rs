//! Whatever the bytes claim, explaining them allocates a small multiple of their size: array
//! and tag counts are refused past Kafka's limits and the bytes present, and nested
//! compressed record data is not followed. Peaks are measured with the test-support crate's
//! counting allocator.

use std::path::Path;
use std::sync::OnceLock;

use kwire_test_support::alloc::{peak_during, Counting};

use super::records::{explain_records, DECOMPRESSION_BUDGET};
use super::{explain, Explained, Input, Schemas, Side, Style};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("inspect/ is in the workspace");
        let dir = kwire_codegen::locate_kafka_schemas(root).expect("Kafka's schemas");
        Schemas::load(&[dir]).expect("the corpus loads")
    })
}

/// The bound every case must meet: four times the input plus 64 KiB.
fn bound(input: usize) -> usize {
    4 * input + (64 << 10)
}

/// Explains a request body (no frame) and measures the peak allocation while doing so.
fn explain_body_peak(api: &str, version: i16, bytes: &[u8]) -> (Explained, usize) {
    let schemas = schemas();
    let input = Input {
        side: Side::Request,
        api: Some(api),
        version: Some(version),
        frame: false,
        bytes,
        style: Style::default(),
    };
    let (explained, peak) = peak_during(|| explain(schemas, &input));
    (explained.expect("the API and version exist"), peak)
}

fn uvarint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// ListGroupsRequest v4: `StatesFilter` is a compact array of compact strings (one byte each
/// at the least), then the tagged section.
fn list_groups_v4(elements: u64, element: u8, fill: usize) -> Vec<u8> {
    let mut body = Vec::new();
    uvarint(&mut body, elements + 1);
    body.resize(body.len() + fill, element);
    body.push(0);
    body
}

/// An array of more than 1,000,000 elements is refused from its length, as Kafka's decoders
/// do, even when the bytes hold every element.
#[test]
fn arrays_over_a_million_elements_are_refused() {
    let n = 1_000_001;
    let body = list_groups_v4(n, 1, n as usize);
    let (e, peak) = explain_body_peak("ListGroups", 4, &body);
    println!("{n} empty strings ({} bytes): peak {peak} bytes", body.len());
    let fail = e.error.expect("refused");
    assert_eq!((fail.offset, fail.path.as_str()), (0, "ListGroupsRequest.StatesFilter"), "{fail}");
    assert!(fail.message.contains("1000000"), "{fail}");
    assert!(peak <= bound(body.len()), "peak {peak}");
}

/// The largest count accepted, then bytes that are no element (a null string where none may
/// be): nothing is reserved for the count.
#[test]
fn largest_accepted_array_count_reserves_little() {
    let n = 1_000_000;
    let body = list_groups_v4(n, 0, n as usize);
    let (e, peak) = explain_body_peak("ListGroups", 4, &body);
    println!("{n} claimed over {} bytes of nulls: peak {peak} bytes", body.len());
    assert!(e.error.expect("a null element").message.contains("not nullable"));
    assert!(peak <= bound(body.len()), "peak {peak}");
}

/// ApiVersionsRequest v3 (two empty compact strings) with `tags` unknown tagged fields of no
/// bytes each.
fn api_versions_v3_tags(claimed: u64, tags: u32) -> Vec<u8> {
    let mut body = vec![1, 1];
    uvarint(&mut body, claimed);
    for tag in 0..tags {
        uvarint(&mut body, tag.into());
        body.push(0);
    }
    body
}

/// More than 10,000 tagged fields in one struct are refused from the count, as Kafka's
/// decoders do; 10,000 are read.
#[test]
fn more_than_ten_thousand_tagged_fields_are_refused() {
    for (tags, refused) in [(10_001, true), (10_000, false)] {
        let body = api_versions_v3_tags(tags.into(), tags);
        let (e, peak) = explain_body_peak("ApiVersions", 3, &body);
        println!("{tags} tagged fields ({} bytes): peak {peak} bytes", body.len());
        assert_eq!(e.error.as_ref().is_some_and(|f| f.message.contains("10000")), refused, "{:?}", e.error);
        if refused {
            assert!(peak <= bound(body.len()), "peak {peak}");
        }
    }
}

/// A tag count the bytes cannot hold (two bytes a field at the least) is refused at once.
#[test]
fn tag_count_beyond_the_bytes_is_refused() {
    let body = api_versions_v3_tags(5_000, 100);
    let (e, peak) = explain_body_peak("ApiVersions", 3, &body);
    let fail = e.error.expect("refused");
    assert_eq!(fail.offset, 2, "{fail}");
    assert!(fail.message.contains("cannot fit"), "{fail}");
    assert!(peak <= bound(body.len()), "peak {peak}");
}

/// A legacy message: offset, size, CRC (not checked here), magic 1, attributes, timestamp,
/// null key, value.
fn legacy_message(codec: u8, value: &[u8]) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend(0i64.to_be_bytes());
    m.extend(((4 + 1 + 1 + 8 + 4 + 4 + value.len()) as i32).to_be_bytes());
    m.extend([0; 4]);
    m.extend([1, codec]);
    m.extend(0i64.to_be_bytes());
    m.extend((-1i32).to_be_bytes());
    m.extend((value.len() as i32).to_be_bytes());
    m.extend_from_slice(value);
    m
}

/// Compressed wrappers nested in compressed wrappers: Kafka refuses nested compression, and
/// so does the explanation, after the first level; nothing recurses with the input.
#[test]
fn nested_compression_is_not_followed() {
    use kwire_records::compression::{compress, Compression};
    let mut data = legacy_message(0, b"leaf");
    for _ in 0..1000 {
        data = legacy_message(1, &compress(Compression::Gzip, 1, &data).expect("gzip"));
    }
    let mut budget = DECOMPRESSION_BUDGET;
    let ((nodes, batches), peak) = peak_during(|| explain_records(&data, 0, false, &mut budget));
    println!("1000 nested gzip wrappers ({} bytes): peak {peak} bytes", data.len());
    assert_eq!(batches, 1);
    let text: String = nodes.iter().map(super::render_text).collect();
    assert!(text.contains("nested compression"), "{text}");
    assert!(peak <= bound(data.len()), "peak {peak}");
}

/// All record data of one message shares one decompression budget: batches past it are
/// marked, not decompressed (many small bombs cost no more than one).
#[test]
fn decompression_shares_one_budget() {
    use kwire_records::compression::{compress, Compression};
    let value = compress(Compression::Gzip, 1, &legacy_message(0, &[7; 600 << 10])).expect("gzip");
    let data = [legacy_message(1, &value), legacy_message(1, &value)].concat();
    let mut budget = 1 << 20;
    let (nodes, batches) = explain_records(&data, 0, false, &mut budget);
    let text: String = nodes.iter().map(super::render_text).collect();
    assert_eq!(batches, 1, "{text}");
    assert!(text.contains("budget"), "{text}");
}
