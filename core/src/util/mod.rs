//! Small helpers shared across modules: byte and hex helpers, durations as Java writes them
//! ([`duration`]), the deterministic names of new files ([`ids::NameSource`]), and the
//! iteration order of Java's `HashMap` / `HashSet` (`java_hash.rs`).

pub mod duration;
pub mod ids;
pub(crate) mod java_hash;

pub use duration::parse_duration_millis;
pub use ids::NameSource;

/// The shortest big-endian two's complement of a number given in big-endian two's
/// complement: leading `0x00` / `0xff` bytes dropped while the sign bit stays the same (Java
/// `BigInteger#toByteArray` of the same value, e.g. for `i128::to_be_bytes`).
pub fn minimal_twos_complement(be: &[u8]) -> &[u8] {
    let mut start = 0;
    while start + 1 < be.len() {
        let (b, next) = (be[start], be[start + 1]);
        if (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    &be[start..]
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// Parse a hex string (either case); `None` on odd length or a non-hex digit.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    let s = s.as_bytes();
    if !s.len().is_multiple_of(2) {
        return None;
    }
    fn digit(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        }
    }
    s.chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_round_trip() {
        assert_eq!(super::hex(&[0, 0xab, 0x5e]), "00ab5e");
        assert_eq!(super::unhex("00AB5e"), Some(vec![0, 0xab, 0x5e]));
        assert_eq!(super::unhex("0"), None);
        assert_eq!(super::unhex("zz"), None);
    }
}
