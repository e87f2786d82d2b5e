//! Java Paimon's 32-bit Murmur3 (seed 42): the hash of binary rows (bucket of a row), of
//! `BinaryString` values, and of external-path selection.
//!
//! Source: Java `org.apache.paimon.utils.MurmurHashUtils` (`hashBytes`, `hashBytesByWords`,
//! `fmix`), `org.apache.paimon.memory.MemorySegmentUtils#hash`.

const MURMUR_C1: u32 = 0xcc9e_2d51;
const MURMUR_C2: u32 = 0x1b87_3593;
const MURMUR_SEED: u32 = 42;

/// Murmur3's mixing of one 4-byte block.
pub(crate) fn mix_k1(k1: u32) -> u32 {
    k1.wrapping_mul(MURMUR_C1)
        .rotate_left(15)
        .wrapping_mul(MURMUR_C2)
}

/// Murmur3's step of the running hash with a mixed block.
pub(crate) fn mix_h1(h1: u32, k1: u32) -> u32 {
    (h1 ^ k1)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

/// Murmur3's finalisation with the byte length.
pub(crate) fn fmix(mut h: u32, len: usize) -> u32 {
    h ^= len as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// Java `MurmurHashUtils.hashBytes` (seed 42) of `bytes`: 32-bit Murmur3 over little-endian
/// 4-byte words, then each trailing byte (sign-extended) mixed alone, finalised with the byte
/// length. For lengths that are a multiple of 4 it equals `hashBytesByWords`. Java's
/// `BinaryString#hashCode` is this hash of the UTF-8 bytes.
pub fn hash_bytes(bytes: &[u8]) -> i32 {
    let mut h1 = MURMUR_SEED;
    let mut words = bytes.chunks_exact(4);
    for w in &mut words {
        h1 = mix_h1(h1, mix_k1(u32::from_le_bytes([w[0], w[1], w[2], w[3]])));
    }
    for b in words.remainder() {
        h1 = mix_h1(h1, mix_k1(*b as i8 as i32 as u32));
    }
    fmix(h1, bytes.len()) as i32
}
