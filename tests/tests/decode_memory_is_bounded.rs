//! Decoders never allocate from a length they have not checked against the input: whatever
//! the bytes claim, peak allocation while decoding stays proportional to the input size.

use kwire_test_support::alloc::{peak_during, Counting};
use kwire_tests::sample::Rng;
use kwire_tests::SCHEMAS;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Inputs whose length prefixes claim enormous sizes, in every position a length can be.
fn hostile_inputs(rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut inputs = Vec::new();
    for fill in [0x7f, 0xff, 0x00] {
        inputs.push(vec![fill; 64]);
    }
    // Classic i32 and compact uvarint "huge length" prefixes at every offset of a short input.
    for at in 0..24 {
        let mut a = vec![0u8; 48];
        a[at..at + 4].copy_from_slice(&0x7fff_fff0i32.to_be_bytes());
        inputs.push(a);
        let mut b = vec![0u8; 48];
        b[at..at + 5].copy_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        inputs.push(b);
    }
    for _ in 0..16 {
        inputs.push((0..64).map(|_| rng.next_u64() as u8).collect());
    }
    inputs
}

#[test]
fn peak_allocation_is_proportional_to_input() {
    let mut rng = Rng::new(2024);
    let inputs = hostile_inputs(&mut rng);
    let mut worst = (0usize, String::new());
    for entry in SCHEMAS {
        let msg = entry.load();
        for v in msg.valid_versions.min..=msg.valid_versions.max {
            for input in &inputs {
                let (_, used) = peak_during(|| (entry.ops.decode)(input, v));
                if used > worst.0 {
                    worst = (used, format!("{} v{v}", entry.name));
                }
            }
        }
    }
    println!("worst peak allocation for a 64-byte input: {} bytes ({})", worst.0, worst.1);
    // 64-byte inputs: a few KiB per claimed element at most, never the gigabytes the
    // lengths claim.
    assert!(worst.0 < 64 << 10, "decoding {} allocated {} bytes", worst.1, worst.0);
}
