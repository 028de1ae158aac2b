//! What reading an lz4 frame reserves ahead of its output follows the bytes of its blocks, not
//! the block size its header claims. A binary of its own: the counting allocator sees every
//! thread, so no other test may allocate while it measures.

use bytes::Bytes;
use kwire_records::{crc32c, Compression, ReadOptions, Records, RecordsExt, V2_HEADER_LEN};
use kwire_test_support::alloc::{peak_during, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A magic 2 batch of one record whose records section is `records`, compressed with lz4,
/// with a valid CRC.
fn lz4_batch(records: &[u8]) -> Records {
    let mut b = Vec::with_capacity(V2_HEADER_LEN + records.len());
    b.extend(0i64.to_be_bytes()); // base offset
    b.extend(((V2_HEADER_LEN - 12 + records.len()) as i32).to_be_bytes());
    b.extend(0i32.to_be_bytes()); // partition leader epoch
    b.push(2);
    b.extend([0; 4]); // crc, below
    b.extend((Compression::Lz4.id() as i16).to_be_bytes());
    b.extend(0i32.to_be_bytes()); // last offset delta
    b.extend(0i64.to_be_bytes()); // base timestamp
    b.extend(0i64.to_be_bytes()); // max timestamp
    b.extend((-1i64).to_be_bytes()); // producer id
    b.extend((-1i16).to_be_bytes()); // producer epoch
    b.extend((-1i32).to_be_bytes()); // base sequence
    b.extend(1i32.to_be_bytes()); // record count
    b.extend_from_slice(records);
    let crc = crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    Records::from_bytes(Bytes::from(b))
}

/// An lz4 frame declaring 4 MiB blocks, made of tiny blocks (one literal each): what reading
/// it reserves follows the blocks' bytes (at most 255 bytes out per byte in), within the
/// decode budget of 8 bytes a byte plus 64 KiB, never the 4 MiB each block's size may claim.
#[test]
fn lz4_blocks_reserve_what_their_bytes_can_give() {
    let blocks = 10_000;
    let mut frame = Vec::with_capacity(7 + 6 * blocks + 4);
    frame.extend([0x04, 0x22, 0x4D, 0x18, 0x60, 0x70]);
    frame.push((kwire_records::compression::xxh32(&frame[4..6], 0) >> 8) as u8);
    for _ in 0..blocks {
        frame.extend(2u32.to_le_bytes());
        frame.extend([0x10, b'a']); // a sequence of one literal
    }
    frame.extend(0u32.to_le_bytes());
    // With no limit at all too: what the header claims (10,000 times 4 MiB) is never reserved.
    let (plain, _) = peak_during(|| kwire_records::compression::decompress(Compression::Lz4, 2, &frame, usize::MAX));
    assert_eq!(plain.unwrap(), vec![b'a'; blocks]);
    let records = lz4_batch(&frame);
    let (read, peak) = peak_during(|| records.to_vec(ReadOptions::default()).map(|v| v.len()));
    println!("lz4, {blocks} one-byte blocks of a 4 MiB frame ({} bytes): peak {peak} bytes", frame.len());
    assert!(read.is_err(), "a's are no records");
    // (and a few hundred bytes for the error)
    assert!(peak <= 8 * frame.len() + (64 << 10) + 4096, "peak {peak}");
}
