//! Random sequences of append, roll, flush, crash (with lost unflushed data and torn final
//! writes), clean reopen and retention against a simple model of the log:
//! * every flushed message survives a crash and is read back with the same bytes at the same
//!   offset;
//! * what the log serves always parses with every CRC good;
//! * segments stay contiguous and the end only moves as the model says.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kwire07_protocol::log::{LogConfig, PartitionLog, Visibility};
use kwire07_protocol::message::{put_compressed_set, put_message_set};
use kwire07_protocol::{validate_message_set, Codec, DecodeLimits, Magic};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// Groups of (kind, payloads); optionally a cut-off copy of the first message at the end.
    Append(Vec<(u8, Vec<Vec<u8>>)>, bool),
    Roll,
    Flush,
    /// Drop without closing; keep `keep` (a fraction) of the unflushed tail of the active
    /// segment; optionally scribble over part of what is kept (XOR with non-zero bytes, a torn
    /// sector), optionally add a torn (partial) message after it.
    Crash {
        keep: prop::sample::Index,
        torn: bool,
        garbage: Option<(prop::sample::Index, Vec<u8>)>,
    },
    CleanReopen,
    /// Make the `old` oldest segments look old, then apply retention with an optional size limit.
    Retention {
        old: usize,
        size_limit: Option<u64>,
    },
}

fn payload() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..40)
}

fn op() -> impl Strategy<Value = Op> {
    let group = (0u8..4, proptest::collection::vec(payload(), 1..4));
    prop_oneof![
        6 => (proptest::collection::vec(group, 1..3), any::<bool>()).prop_map(|(g, cut)| Op::Append(g, cut)),
        1 => Just(Op::Roll),
        1 => Just(Op::Flush),
        2 => (
            any::<prop::sample::Index>(),
            any::<bool>(),
            proptest::option::of((any::<prop::sample::Index>(), proptest::collection::vec(1u8..=255, 5..40))),
        )
            .prop_map(|(keep, torn, garbage)| Op::Crash { keep, torn, garbage }),
        1 => Just(Op::CleanReopen),
        1 => (0usize..4, proptest::option::of(0u64..400)).prop_map(|(old, size_limit)| Op::Retention { old, size_limit }),
    ]
}

fn encode(groups: &[(u8, Vec<Vec<u8>>)]) -> (Vec<u8>, Vec<(usize, usize)>, u64) {
    let mut set = Vec::new();
    let mut entries = Vec::new();
    let mut count = 0u64;
    for (kind, payloads) in groups {
        let start = set.len();
        match kind {
            0 => put_message_set(&mut set, Magic::V0, payloads).unwrap(),
            1 => put_message_set(&mut set, Magic::V1, payloads).unwrap(),
            2 => put_compressed_set(&mut set, Codec::Gzip, payloads).unwrap(),
            _ => put_compressed_set(&mut set, Codec::Snappy, payloads).unwrap(),
        }
        count += payloads.len() as u64;
        // Record every outer entry of this group.
        let mut pos = start;
        while pos < set.len() {
            let len = i32::from_be_bytes(set[pos..pos + 4].try_into().unwrap()) as usize;
            entries.push((pos, pos + 4 + len));
            pos += 4 + len;
        }
    }
    (set, entries, count)
}

/// What must be in the log.
struct Model {
    /// (offset, bytes) of every outer entry still in the log.
    entries: Vec<(u64, Vec<u8>)>,
    written: u64,
    /// Everything below this offset has been flushed and must survive a crash.
    durable: u64,
    unflushed: u64,
}

fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

const NOW: u64 = 1_800_000_000_000;

fn check(log: &PartitionLog, model: &Model, visibility: Visibility) -> Result<(), TestCaseError> {
    let segs = log.segments();
    for pair in segs.windows(2) {
        prop_assert_eq!(pair[0].start + pair[0].size, pair[1].start, "contiguous segments");
    }
    prop_assert_eq!(log.written_end(), model.written);
    prop_assert_eq!(log.flushed_end(), model.durable);
    let visible_end = match visibility {
        Visibility::AfterAppend => model.written,
        Visibility::AfterFlush => model.durable,
    };
    prop_assert_eq!(log.end_offset(), visible_end);
    // Every remaining, visible entry reads back byte for byte at its offset.
    for (offset, bytes) in &model.entries {
        prop_assert!(*offset >= log.start_offset());
        if offset + bytes.len() as u64 <= visible_end {
            let got = log.read(*offset as i64, bytes.len() as i64).unwrap();
            prop_assert_eq!(got.as_ref(), bytes.as_slice(), "entry at {}", offset);
        }
    }
    // The model's entries tile the log exactly, from its start to its written end.
    let mut expect = log.start_offset();
    for (offset, bytes) in &model.entries {
        prop_assert_eq!(*offset, expect, "entries are contiguous from the log start");
        expect += bytes.len() as u64;
    }
    prop_assert_eq!(expect, model.written);
    // Walking the whole visible log segment by segment serves only valid messages.
    let mut pos = log.start_offset();
    while pos < visible_end {
        let slice = log.read_slice(pos as i64, i64::MAX).unwrap();
        prop_assert!(!slice.is_empty());
        let bytes = slice.to_bytes().unwrap();
        let summary = validate_message_set(&bytes, pos, None, &DecodeLimits::default())
            .map_err(|e| TestCaseError::fail(format!("served invalid data at {pos}: {e}")))?;
        prop_assert_eq!(summary.valid_bytes, bytes.len(), "a segment ends on a message boundary");
        pos += slice.len();
    }
    prop_assert_eq!(pos, visible_end);
    Ok(())
}

fn crash(
    dir: &Path,
    log: PartitionLog,
    model: &mut Model,
    (keep, torn, garbage): (prop::sample::Index, bool, Option<(prop::sample::Index, Vec<u8>)>),
    cfg: &LogConfig,
) -> PartitionLog {
    let active = log.segments().pop().unwrap();
    drop(log);
    // Unflushed bytes of the active segment may or may not have reached the disk.
    let durable_in_active = model.durable - active.start;
    let cut = durable_in_active + keep.index((active.size - durable_in_active + 1) as usize) as u64;
    let file = fs::OpenOptions::new().read(true).write(true).open(&active.path).unwrap();
    file.set_len(cut).unwrap();
    let mut cut_offset = active.start + cut;
    if let Some((at_index, xor)) = garbage.filter(|_| cut > durable_in_active) {
        let p = durable_in_active + at_index.index((cut - durable_in_active) as usize) as u64;
        let n = (xor.len() as u64).min(cut - p) as usize;
        let mut bytes = vec![0u8; n];
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut bytes, p).unwrap();
        for (b, x) in bytes.iter_mut().zip(&xor) {
            *b ^= x;
        }
        std::os::unix::fs::FileExt::write_all_at(&file, &bytes, p).unwrap();
        // The entry holding byte p is now corrupt: recovery keeps only what ends before it.
        cut_offset = active.start + p;
    }
    model.entries.retain(|(o, b)| o + b.len() as u64 <= cut_offset);
    // Recovery keeps exactly the whole entries before the cut.
    let last_end = model.entries.last().map(|(o, b)| o + b.len() as u64).unwrap_or(0);
    model.written = last_end.max(active.start);
    if torn && model.written == active.start + cut {
        // A partial message after a clean boundary.
        let mut m = Vec::new();
        put_message_set(&mut m, Magic::V1, &[b"torn write".as_ref()]).unwrap();
        let n = keep.index(m.len() - 1) + 1; // 1..len-1 bytes
        let mut f = fs::OpenOptions::new().append(true).open(&active.path).unwrap();
        std::io::Write::write_all(&mut f, &m[..n.min(m.len() - 1)]).unwrap();
    }
    model.durable = model.written;
    model.unflushed = 0;
    PartitionLog::open(dir, cfg.clone(), true, at(NOW)).unwrap()
}

fn run(ops: Vec<Op>, segment_bytes: u64, flush_every: u64, visibility: Visibility) -> Result<(), TestCaseError> {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().join("p-0");
    let cfg = LogConfig {
        segment_bytes,
        flush_interval_messages: flush_every,
        visibility,
        roll_age: None,
        retention_age: Some(Duration::from_secs(3600)),
        retention_bytes: None,
        ..LogConfig::default()
    };
    let mut log = PartitionLog::open(&dir, cfg.clone(), true, at(NOW)).unwrap();
    let mut model = Model { entries: Vec::new(), written: 0, durable: 0, unflushed: 0 };
    for op in ops {
        match op {
            Op::Append(groups, cut) => {
                let (mut set, entries, count) = encode(&groups);
                let full = set.len();
                if cut {
                    let first_len = entries[0].1;
                    set.extend_from_within(..first_len - 1);
                }
                let rolls = log.segments().last().unwrap().size > segment_bytes;
                let info = log.append(&set, at(NOW)).unwrap();
                prop_assert_eq!(info.bytes as usize, full, "trimmed to complete messages");
                prop_assert_eq!(info.offset, model.written);
                if rolls {
                    model.durable = model.written;
                    model.unflushed = 0;
                }
                for (s, e) in entries {
                    model.entries.push((model.written + s as u64, set[s..e].to_vec()));
                }
                model.written += full as u64;
                model.unflushed += count;
                if model.unflushed >= flush_every {
                    model.durable = model.written;
                    model.unflushed = 0;
                }
            }
            Op::Roll => {
                log.roll(at(NOW)).unwrap();
                model.durable = model.written;
                model.unflushed = 0;
            }
            Op::Flush => {
                log.flush(at(NOW)).unwrap();
                model.durable = model.written;
                model.unflushed = 0;
            }
            Op::Crash { keep, torn, garbage } => {
                log = crash(&dir, log, &mut model, (keep, torn, garbage), &cfg);
            }
            Op::CleanReopen => {
                log.close(at(NOW)).unwrap();
                drop(log);
                log = PartitionLog::open(&dir, cfg.clone(), false, at(NOW)).unwrap();
                model.durable = model.written;
                model.unflushed = 0;
            }
            Op::Retention { old, size_limit } => {
                let segs = log.segments();
                for (i, s) in segs.iter().enumerate() {
                    let mtime = if i < old { NOW - 7_200_000 } else { NOW };
                    fs::OpenOptions::new().write(true).open(&s.path).unwrap().set_modified(at(mtime)).unwrap();
                }
                let mut c = cfg.clone();
                c.retention_bytes = size_limit;
                log.set_config(c, at(NOW)).unwrap();
                let before_start = log.start_offset();
                let active_nonempty = segs.last().unwrap().size > 0;
                log.apply_retention(at(NOW)).unwrap();
                log.set_config(cfg.clone(), at(NOW)).unwrap();
                let start = log.start_offset();
                prop_assert!(start >= before_start, "retention never moves the start back");
                prop_assert!(!log.segments().is_empty());
                let rolled = log.segments().last().unwrap().start > segs.last().unwrap().start;
                prop_assert_eq!(rolled, active_nonempty && start == model.written, "rolls only when all would go");
                if rolled {
                    // Everything went: the log rolled first, so it did not go back to 0.
                    model.durable = model.written;
                    model.unflushed = 0;
                }
                model.entries.retain(|(o, _)| *o >= start);
            }
        }
        check(&log, &model, visibility)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, max_shrink_iters: 2000, ..ProptestConfig::default() })]

    #[test]
    fn log_survives_any_sequence(
        ops in proptest::collection::vec(op(), 1..30),
        segment_bytes in 20u64..400,
        flush_every in 1u64..8,
        after_flush in any::<bool>(),
    ) {
        let visibility = if after_flush { Visibility::AfterFlush } else { Visibility::AfterAppend };
        run(ops, segment_bytes, flush_every, visibility)?;
    }
}
