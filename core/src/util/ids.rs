//! Deterministic names for new files.
//!
//! The core has no randomness: every file a write, commit or compaction creates is named from
//! a seed the host gives ([`NameSource::new`]). The same seed gives the same names on every
//! host, so a recorded write replays to the same `Put` requests.

/// A stream of random-looking UUIDs and counters, derived from a 64-bit seed (splitmix64).
///
/// Java names files `<prefix><uuid>-<n>` with one random UUID per path factory and a counter
/// `n` from 0 (`org.apache.paimon.io.DataFilePathFactory`,
/// `org.apache.paimon.utils.PathFactory`); [`NameSource::uuid`] gives such UUIDs (version 4
/// layout, lowercase, 36 characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameSource {
    state: u64,
}

impl NameSource {
    /// A source seeded with `seed` (from the host: a random number, or a fixed one in tests).
    pub fn new(seed: u64) -> Self {
        NameSource { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        // splitmix64
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next random bytes, `N` of them.
    pub fn next_bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        for chunk in out.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        out
    }

    /// The next UUID string (version 4, variant 1 bits set), e.g.
    /// `3f2b6c1e-9a4d-4e2f-8b1a-0c5d7e9f1a2b`.
    pub fn uuid(&mut self) -> String {
        let mut b: [u8; 16] = self.next_bytes();
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let h = crate::util::hex(&b);
        format!(
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }

    /// A child source for an independent stream (e.g. one per bucket writer), so that the
    /// names of one writer do not depend on how many names another one took.
    pub fn fork(&mut self) -> NameSource {
        NameSource::new(self.next_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_names_and_uuid_shape() {
        let mut a = NameSource::new(7);
        let mut b = NameSource::new(7);
        let u = a.uuid();
        assert_eq!(u, b.uuid());
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(a.uuid(), u);
        assert_ne!(NameSource::new(8).uuid(), u);
    }
}
