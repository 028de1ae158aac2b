//! Property tests: build -> encode -> decode gives back the same records and header fields,
//! for every magic and every codec that magic allows.

use bytes::{Bytes, BytesMut};
use kwire_records::{
    Batch, BatchBuilder, BatchOptions, Compression, Header, ReadOptions, Record, Records, RecordsExt, TimestampType,
    NO_TIMESTAMP,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Input {
    gap: i64,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

fn bytes_strategy(max: usize) -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        1 => Just(None),
        1 => Just(Some(Vec::new())),
        4 => proptest::collection::vec(any::<u8>(), 0..max).prop_map(Some),
        // Repetitive data, so compression has something to do.
        1 => (any::<u8>(), 0..4 * max).prop_map(|(b, n)| Some(vec![b; n])),
    ]
}

fn input_strategy(with_headers: bool) -> impl Strategy<Value = Input> {
    let headers = if with_headers {
        proptest::collection::vec((proptest::collection::vec(any::<u8>(), 0..6), bytes_strategy(12)), 0..4).boxed()
    } else {
        Just(Vec::new()).boxed()
    };
    (1i64..4, -1_000_000i64..1_000_000, bytes_strategy(40), bytes_strategy(300), headers).prop_map(
        |(gap, ts, key, value, headers)| Input { gap, timestamp: 1_700_000_000_000 + ts, key, value, headers },
    )
}

fn codec_for(magic: i8) -> impl Strategy<Value = Compression> {
    let codecs: Vec<Compression> = Compression::ALL.into_iter().filter(|c| c.allowed_for_magic(magic)).collect();
    proptest::sample::select(codecs)
}

#[derive(Debug, Clone)]
struct Case {
    options: BatchOptions,
    inputs: Vec<Input>,
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (0i8..=2).prop_flat_map(|magic| {
        (
            codec_for(magic),
            0i64..(1 << 40),
            proptest::option::of(1_600_000_000_000i64..1_800_000_000_000),
            any::<(i64, i16, i32, bool, i32)>(),
            proptest::option::of(1_700_000_000_000i64..1_700_000_100_000),
            proptest::collection::vec(input_strategy(magic == 2), 0..25),
        )
            .prop_map(move |(compression, base_offset, log_append_time, producer, delete_horizon, inputs)| {
                let (producer_id, producer_epoch, base_sequence, transactional, epoch) = producer;
                let mut options =
                    BatchOptions { magic, compression, base_offset, log_append_time, ..BatchOptions::default() };
                if magic == 2 {
                    options.producer_id = producer_id;
                    options.producer_epoch = producer_epoch;
                    options.base_sequence = base_sequence;
                    options.transactional = transactional;
                    options.partition_leader_epoch = epoch;
                    options.delete_horizon = delete_horizon;
                }
                Case { options, inputs }
            })
    })
}

/// Builds the batch and returns it with the records a reader should see.
fn build(case: &Case) -> (Bytes, Vec<Record>) {
    let o = case.options;
    let mut builder = BatchBuilder::new(o).expect("valid options");
    let mut expected = Vec::new();
    let mut offset = o.base_offset;
    for (i, input) in case.inputs.iter().enumerate() {
        if i > 0 {
            offset += input.gap;
        }
        let headers: Vec<Header> = input.headers.iter().map(|(k, v)| Header::new(k.clone(), v.clone())).collect();
        builder
            .append_with_offset(offset, input.timestamp, input.key.as_deref(), input.value.as_deref(), &headers)
            .expect("append");
        let (timestamp, timestamp_type) = match (o.magic, o.log_append_time) {
            (0, _) => (NO_TIMESTAMP, TimestampType::NoTimestamp),
            (_, Some(t)) => (t, TimestampType::LogAppendTime),
            (_, None) => (input.timestamp, TimestampType::CreateTime),
        };
        expected.push(Record {
            offset,
            timestamp,
            timestamp_type,
            key: input.key.clone().map(Bytes::from),
            value: input.value.clone().map(Bytes::from),
            headers,
        });
    }
    (builder.build().expect("build"), expected)
}

fn decode(records: &Records) -> Vec<Record> {
    records.records().collect::<Result<Vec<_>, _>>().expect("decode")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn build_then_decode_gives_the_same_records(case in case_strategy()) {
        let (bytes, expected) = build(&case);
        let records = Records::from_bytes(bytes);
        prop_assert_eq!(decode(&records), expected.clone());

        let verified = records.verify().expect("verify");
        prop_assert!(verified.truncated_tail.is_none());
        let o = case.options;
        let batches: Vec<Batch> = records.batches().collect::<Result<_, _>>().expect("batches");
        let expected_batches = match (o.magic, o.compression, expected.len()) {
            (2, _, _) => 1,
            (_, _, 0) => 0,
            (_, Compression::None, n) => n,
            _ => 1,
        };
        prop_assert_eq!(batches.len(), expected_batches);
        prop_assert_eq!(verified.batches, expected_batches);
        for (i, batch) in batches.iter().enumerate() {
            prop_assert_eq!(batch.magic(), o.magic);
            prop_assert_eq!(batch.compression().expect("codec"), o.compression);
            // Read from the header alone: the last record of the batch.
            let last = if batches.len() == 1 { expected.last() } else { expected.get(i) };
            if let Some(last) = last {
                prop_assert_eq!(batch.last_offset(), last.offset);
            }
        }
        if let Some(Batch::V2(batch)) = batches.first() {
            // Borrowed views read the same records as the owned iterator.
            let data = batch.record_data(&ReadOptions::default()).expect("record data");
            let views: Vec<Record> = data
                .iter()
                .map(|r| {
                    let r = r.expect("view");
                    Record {
                        offset: r.offset,
                        timestamp: r.timestamp,
                        timestamp_type: r.timestamp_type,
                        key: r.key.map(Bytes::copy_from_slice),
                        value: r.value.map(Bytes::copy_from_slice),
                        headers: r.headers().map(|(k, v)| Header::new(k.to_vec(), v.map(<[u8]>::to_vec))).collect(),
                    }
                })
                .collect();
            prop_assert_eq!(&views, &expected);
            let h = batch.header();
            prop_assert_eq!(h.base_offset, o.base_offset);
            prop_assert_eq!(h.partition_leader_epoch, o.partition_leader_epoch);
            prop_assert_eq!(h.producer_id, o.producer_id);
            prop_assert_eq!(h.producer_epoch, o.producer_epoch);
            prop_assert_eq!(h.base_sequence, o.base_sequence);
            prop_assert_eq!(h.attributes.is_transactional(), o.transactional);
            prop_assert_eq!(h.delete_horizon_ms(), o.delete_horizon);
            prop_assert_eq!(h.record_count as usize, expected.len());
            let max_created = case.inputs.iter().map(|i| i.timestamp).max().unwrap_or(NO_TIMESTAMP);
            prop_assert_eq!(h.max_timestamp, o.log_append_time.unwrap_or(max_created));
            if let Some(last) = expected.last() {
                prop_assert_eq!(h.last_offset(), last.offset);
            }
        }
    }

    #[test]
    fn concatenated_batches_decode_in_order(cases in proptest::collection::vec(case_strategy(), 1..5)) {
        let mut all = BytesMut::new();
        let mut expected = Vec::new();
        for case in &cases {
            let (bytes, records) = build(case);
            all.extend_from_slice(&bytes);
            expected.extend(records);
        }
        let records = Records::from_bytes(all.freeze());
        prop_assert_eq!(decode(&records), expected);
    }
}

#[test]
fn a_control_batch_round_trips_its_marker() {
    use kwire_records::{ControlRecordType, EndTransactionMarker};
    for kind in [ControlRecordType::Commit, ControlRecordType::Abort] {
        let options = BatchOptions {
            control: true,
            transactional: true,
            producer_id: 77,
            producer_epoch: 2,
            ..BatchOptions::default()
        };
        let mut builder = BatchBuilder::new(options).unwrap();
        let marker = EndTransactionMarker { kind, coordinator_epoch: 31 };
        builder.append_end_transaction_marker(1_700_000_000_000, marker).unwrap();
        let records = Records::from_bytes(builder.build().unwrap());
        let batch = records.batches().next().unwrap().unwrap();
        assert!(batch.is_control() && batch.is_transactional());
        let record = batch.records().unwrap().next().unwrap().unwrap();
        assert_eq!(record.control_marker().unwrap(), marker);
    }
}

#[test]
fn control_and_headers_need_magic_2_and_zstd_needs_magic_2() {
    use kwire_records::BuildError;
    for magic in [0, 1] {
        let control = BatchOptions { magic, control: true, ..BatchOptions::default() };
        assert_eq!(BatchBuilder::new(control).unwrap_err(), BuildError::ControlNeedsMagic2);
        let zstd = BatchOptions::new(magic, Compression::Zstd);
        assert!(matches!(BatchBuilder::new(zstd), Err(BuildError::CodecNotAllowed { .. })));
        let mut builder = BatchBuilder::new(BatchOptions::new(magic, Compression::None)).unwrap();
        let headers = [Header::new(&b"k"[..], Some(&b"v"[..]))];
        assert_eq!(builder.append(0, None, None, &headers).unwrap_err(), BuildError::HeadersNeedMagic2 { magic });
    }
}

#[test]
fn offsets_must_increase() {
    let mut builder = BatchBuilder::new(BatchOptions { base_offset: 10, ..BatchOptions::default() }).unwrap();
    assert!(builder.append_with_offset(9, 0, None, None, &[]).is_err(), "before the base offset");
    builder.append_with_offset(12, 0, None, None, &[]).unwrap();
    assert!(builder.append_with_offset(12, 0, None, None, &[]).is_err(), "repeated offset");
    assert!(builder.append_with_offset(10 + (1 << 31), 0, None, None, &[]).is_err(), "delta beyond i32");
    assert_eq!(builder.append(0, None, None, &[]).unwrap(), 13);
}

#[test]
fn an_empty_v2_batch_is_valid_and_has_no_records() {
    let records = Records::from_bytes(BatchBuilder::new(BatchOptions::default()).unwrap().build().unwrap());
    assert_eq!(records.len(), 61);
    assert_eq!(records.verify().unwrap().batches, 1);
    assert_eq!(decode(&records), Vec::new());
}
