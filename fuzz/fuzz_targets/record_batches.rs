//! Record data of any magic and codec: iterating batches and records never panics, and no
//! batch decompresses beyond its ceiling or reserves for records it does not hold (run with
//! -rss_limit_mb and -malloc_limit_mb to catch any that does).
#![no_main]

use kwire_records::{ReadOptions, RecordsExt};
use kwire_runtime::Records;
use libfuzzer_sys::fuzz_target;

/// Far below the default 64 MiB, so that the memory limit of a fuzzing run is never the
/// reason it stops.
const CEILING: usize = 4 << 20;

fuzz_target!(|data: &[u8]| {
    let records = Records::from_bytes(bytes::Bytes::copy_from_slice(data));
    let _ = records.verify();
    let options = ReadOptions { max_decompressed_size: CEILING, ..ReadOptions::default() };
    // Every record at once: what it reserves is bounded by the records decoded, not the counts.
    let _ = records.to_vec(options);
    for batch in records.batches() {
        let Ok(batch) = batch else { break };
        let Ok(iter) = batch.records_with(&options) else { continue };
        let mut total = 0usize;
        for record in iter {
            let Ok(record) = record else { break };
            total += record.key.map_or(0, |k| k.len()) + record.value.map_or(0, |v| v.len());
        }
        assert!(total <= CEILING, "{total} bytes of records from one batch");
    }
});
