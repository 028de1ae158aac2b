//! One partition of a Fetch answer into records: batches read lazily, CRCs checked, compressed
//! ones decompressed within a bound, records before the fetch offset skipped, control batches
//! skipped, and in `read_committed` the batches of aborted transactions dropped using the
//! answer's aborted-transaction list (Kafka's `CompletedFetch`).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet, VecDeque};
use std::sync::Arc;

use kwire::messages::fetch_response::AbortedTransaction;
use kwire::Records;
use kwire_records::{Batch, BatchRecords, ControlRecordType, ReadOptions, RecordsExt};

use crate::consumer::record::ConsumerRecord;
use crate::consumer::state::Position;

/// What a partition's records decoded to.
#[derive(Debug)]
pub(crate) struct Decoded {
    pub records: VecDeque<ConsumerRecord>,
    /// The next fetch position: past every batch read, control and aborted ones included.
    pub end: Position,
    /// A batch that could not be read, and why: records before it are kept.
    pub corrupt: Option<(i64, String)>,
    /// Bytes of record data the answer carried for the partition.
    pub bytes: usize,
}

/// Decodes `records` fetched from `from`.
pub(crate) fn decode(
    topic: &Arc<str>,
    partition: i32,
    records: &Records,
    aborted: Option<&[AbortedTransaction]>,
    from: Position,
    read_committed: bool,
    options: &ReadOptions,
) -> Decoded {
    let bytes = records.as_bytes().len();
    let mut out = Decoded { records: VecDeque::new(), end: from, corrupt: None, bytes };
    // Aborted transactions by first offset; a producer joins the aborted set once a batch at
    // or after its first offset is reached, and leaves it at its abort marker.
    let mut pending: BinaryHeap<Reverse<(i64, i64)>> = if read_committed {
        aborted.unwrap_or_default().iter().map(|a| Reverse((a.first_offset, a.producer_id.0))).collect()
    } else {
        BinaryHeap::new()
    };
    let mut aborting: HashSet<i64> = HashSet::new();
    for batch in records.batches() {
        let batch = match batch {
            Ok(batch) => batch,
            // A fetch may end inside a batch: the rest comes with the next one.
            Err(e) if e.is_truncated() => break,
            Err(e) => {
                out.corrupt = Some((out.end.offset, e.to_string()));
                break;
            }
        };
        let last = batch.last_offset();
        if last < out.end.offset {
            continue;
        }
        let epoch = match &batch {
            Batch::V2(b) if b.header().partition_leader_epoch >= 0 => Some(b.header().partition_leader_epoch),
            _ => None,
        };
        if let Batch::V2(b) = &batch {
            while let Some(Reverse((first, producer))) = pending.peek().copied() {
                if first > last {
                    break;
                }
                pending.pop();
                aborting.insert(producer);
            }
            let header = b.header();
            if read_committed
                && header.attributes.is_transactional()
                && !header.attributes.is_control()
                && aborting.contains(&header.producer_id)
            {
                out.end = Position { offset: last + 1, epoch };
                continue;
            }
            if header.attributes.is_control() {
                if options.verify_crc {
                    if let Err(e) = b.verify_crc() {
                        out.corrupt = Some((out.end.offset, e.to_string()));
                        break;
                    }
                }
                if read_committed {
                    let abort = b
                        .records(options)
                        .ok()
                        .and_then(|mut r| r.next())
                        .and_then(Result::ok)
                        .and_then(|r| r.control_marker().ok())
                        .is_some_and(|m| m.kind == ControlRecordType::Abort);
                    if abort {
                        aborting.remove(&header.producer_id);
                    }
                }
                out.end = Position { offset: last + 1, epoch };
                continue;
            }
        }
        let before = out.records.len();
        match read_batch(topic, partition, &batch, epoch, out.end.offset, options, &mut out.records) {
            Ok(()) => out.end = Position { offset: last + 1, epoch },
            Err(reason) => {
                // Nothing of a bad batch is handed out: the position stays before it.
                out.records.truncate(before);
                out.corrupt = Some((out.end.offset, reason));
                break;
            }
        }
    }
    out
}

/// Appends the batch's records at or after `from`.
fn read_batch(
    topic: &Arc<str>,
    partition: i32,
    batch: &Batch,
    leader_epoch: Option<i32>,
    from: i64,
    options: &ReadOptions,
    out: &mut VecDeque<ConsumerRecord>,
) -> Result<(), String> {
    let records = batch.records_with(options).map_err(|e| e.to_string())?;
    if let BatchRecords::V2(_) = &records {
        out.reserve(records.size_hint().0);
    }
    for record in records {
        let record = record.map_err(|e| e.to_string())?;
        if record.offset < from {
            continue;
        }
        out.push_back(ConsumerRecord {
            topic: topic.clone(),
            partition,
            offset: record.offset,
            timestamp: record.timestamp,
            timestamp_type: record.timestamp_type,
            leader_epoch,
            key: record.key,
            value: record.value,
            headers: record.headers,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use kwire::ProducerId;
    use kwire_records::{BatchBuilder, BatchOptions, Compression, EndTransactionMarker};

    use super::*;

    fn batch(base: i64, values: &[&str], transactional: Option<i64>) -> Vec<u8> {
        let options = BatchOptions {
            base_offset: base,
            producer_id: transactional.unwrap_or(-1),
            producer_epoch: if transactional.is_some() { 0 } else { -1 },
            transactional: transactional.is_some(),
            partition_leader_epoch: 3,
            ..BatchOptions::new(2, Compression::Lz4)
        };
        let mut builder = BatchBuilder::new(options).unwrap();
        for v in values {
            builder.append(1_700_000_000_000, None, Some(v.as_bytes()), &[]).unwrap();
        }
        builder.build().unwrap().to_vec()
    }

    fn marker(offset: i64, producer: i64, kind: ControlRecordType) -> Vec<u8> {
        let options = BatchOptions {
            base_offset: offset,
            producer_id: producer,
            producer_epoch: 0,
            transactional: true,
            control: true,
            ..BatchOptions::new(2, Compression::None)
        };
        let mut builder = BatchBuilder::new(options).unwrap();
        builder
            .append_end_transaction_marker(1_700_000_000_000, EndTransactionMarker { kind, coordinator_epoch: 0 })
            .unwrap();
        builder.build().unwrap().to_vec()
    }

    fn values(decoded: &Decoded) -> Vec<String> {
        decoded
            .records
            .iter()
            .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
            .collect()
    }

    #[test]
    fn read_committed_drops_aborted_batches_and_every_reader_skips_markers() {
        // 0-1 committed by producer 7, 3-4 aborted by producer 8, then plain 6.
        let mut bytes = batch(0, &["a", "b"], Some(7));
        bytes.extend(marker(2, 7, ControlRecordType::Commit));
        bytes.extend(batch(3, &["x", "y"], Some(8)));
        bytes.extend(marker(5, 8, ControlRecordType::Abort));
        bytes.extend(batch(6, &["c"], None));
        let records = Records::from_bytes(bytes.into());
        let aborted = [AbortedTransaction { producer_id: ProducerId(8), first_offset: 3, ..Default::default() }];
        let topic: Arc<str> = "t".into();
        let start = Position { offset: 0, epoch: None };
        let options = ReadOptions::default();
        let committed = decode(&topic, 0, &records, Some(&aborted), start, true, &options);
        assert_eq!(values(&committed), ["a", "b", "c"]);
        assert_eq!(committed.end, Position { offset: 7, epoch: Some(3) });
        let uncommitted = decode(&topic, 0, &records, Some(&aborted), start, false, &options);
        assert_eq!(values(&uncommitted), ["a", "b", "x", "y", "c"]);
        // From the middle of a batch: the records before the fetch offset are skipped.
        let mid = decode(&topic, 0, &records, None, Position { offset: 1, epoch: None }, false, &options);
        assert_eq!(values(&mid)[0], "b");
    }

    #[test]
    fn a_corrupt_batch_stops_before_it_and_a_partial_tail_is_not_an_error() {
        let mut bytes = batch(0, &["a"], None);
        let mut bad = batch(1, &["b"], None);
        let last = bad.len() - 1;
        bad[last] ^= 0xff;
        bytes.extend(bad);
        let good = batch(2, &["c"], None);
        bytes.extend(&good[..good.len() - 3]);
        let topic: Arc<str> = "t".into();
        let start = Position { offset: 0, epoch: None };
        let decoded =
            decode(&topic, 0, &Records::from_bytes(bytes.into()), None, start, false, &ReadOptions::default());
        assert_eq!(values(&decoded), ["a"]);
        assert_eq!(decoded.corrupt.as_ref().map(|c| c.0), Some(1));
        let tail = decode(
            &topic,
            0,
            &Records::from_bytes(good[..good.len() - 3].to_vec().into()),
            None,
            start,
            false,
            &ReadOptions::default(),
        );
        assert!(tail.records.is_empty() && tail.corrupt.is_none());
        assert_eq!(tail.end, start);
    }
}
