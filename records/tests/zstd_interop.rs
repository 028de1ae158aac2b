//! The zstd codec against the C library (an independent implementation, dev-dependency only):
//! what we write, libzstd reads; what libzstd writes at Kafka's level 3 (what Kafka's Java
//! clients send, through zstd-jni), we read, whichever engine this build uses.

use kwire_records::compression::{compress, decompress};
use kwire_records::Compression;

fn samples() -> Vec<Vec<u8>> {
    let text: Vec<u8> = (0..50_000u32).flat_map(|i| format!("record {i} of a batch; ").into_bytes()).collect();
    let noise: Vec<u8> = (0..70_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    vec![Vec::new(), b"x".to_vec(), text, noise, vec![0u8; 3 << 20]]
}

#[test]
fn libzstd_reads_what_we_write() {
    for data in samples() {
        let ours = compress(Compression::Zstd, 2, &data).unwrap();
        assert_eq!(zstd::stream::decode_all(&ours[..]).unwrap(), data, "{} bytes", data.len());
    }
}

#[test]
fn we_read_what_libzstd_writes() {
    for data in samples() {
        for level in [1, 3, 19] {
            let theirs = zstd::bulk::compress(&data, level).unwrap();
            assert_eq!(decompress(Compression::Zstd, 2, &theirs, data.len()).unwrap(), data, "level {level}");
            // Streaming frames (no content size in the header), as zstd-jni's output stream writes.
            let mut enc = zstd::stream::write::Encoder::new(Vec::new(), level).unwrap();
            std::io::Write::write_all(&mut enc, &data).unwrap();
            let streamed = enc.finish().unwrap();
            assert_eq!(decompress(Compression::Zstd, 2, &streamed, data.len()).unwrap(), data, "level {level}");
            if !data.is_empty() {
                let refused = decompress(Compression::Zstd, 2, &streamed, data.len() - 1);
                assert!(refused.is_err(), "a limit below the content is refused");
            }
        }
    }
}
