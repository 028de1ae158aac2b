//! XXH32, needed to compute (and deliberately mis-compute) LZ4 frame header checksums.

const P1: u32 = 0x9E37_79B1;
const P2: u32 = 0x85EB_CA77;
const P3: u32 = 0xC2B2_AE3D;
const P4: u32 = 0x27D4_EB2F;
const P5: u32 = 0x1656_67B1;

fn round(acc: u32, lane: u32) -> u32 {
    acc.wrapping_add(lane.wrapping_mul(P2)).rotate_left(13).wrapping_mul(P1)
}

fn le32(bytes: &[u8]) -> u32 {
    match bytes {
        [a, b, c, d, ..] => u32::from_le_bytes([*a, *b, *c, *d]),
        _ => 0,
    }
}

/// The 32-bit xxHash of `data` with `seed`.
pub fn xxh32(data: &[u8], seed: u32) -> u32 {
    let mut stripes = data.chunks_exact(16);
    let mut hash = if data.len() >= 16 {
        let mut v = [seed.wrapping_add(P1).wrapping_add(P2), seed.wrapping_add(P2), seed, seed.wrapping_sub(P1)];
        for stripe in stripes.by_ref() {
            for (lane, word) in v.iter_mut().zip(stripe.chunks_exact(4)) {
                *lane = round(*lane, le32(word));
            }
        }
        v[0].rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18))
    } else {
        seed.wrapping_add(P5)
    };
    // xxh32 folds the input length in modulo 2^32.
    hash = hash.wrapping_add(data.len() as u32);
    let tail = stripes.remainder();
    let mut words = tail.chunks_exact(4);
    for word in words.by_ref() {
        hash = hash.wrapping_add(le32(word).wrapping_mul(P3)).rotate_left(17).wrapping_mul(P4);
    }
    for &byte in words.remainder() {
        hash = hash.wrapping_add(u32::from(byte).wrapping_mul(P5)).rotate_left(11).wrapping_mul(P1);
    }
    hash ^= hash >> 15;
    hash = hash.wrapping_mul(P2);
    hash ^= hash >> 13;
    hash = hash.wrapping_mul(P3);
    hash ^ (hash >> 16)
}

#[cfg(test)]
mod tests {
    use super::xxh32;

    // Reference values computed with the Python `xxhash` package (4.1.0, libxxhash).
    #[test]
    fn matches_reference_values() {
        let hundred: Vec<u8> = (0..100).collect();
        let cases: [(&[u8], u32, u32); 5] = [
            (b"", 0x02CC_5D05, 0x36B7_8AE7),
            (b"a", 0x550D_7456, 0x9E16_33E4),
            (b"abc", 0x32D1_53FF, 0xA1AE_7709),
            (b"0123456789abcdef", 0xC2C4_5B69, 0x72E8_FAF9),
            (&hundred, 0x7F89_BA44, 0xFA99_6F24),
        ];
        for (input, seed0, seed_prime) in cases {
            assert_eq!(xxh32(input, 0), seed0, "seed 0, {} bytes", input.len());
            assert_eq!(xxh32(input, 0x9E37_79B1), seed_prime, "seed prime, {} bytes", input.len());
        }
    }
}
