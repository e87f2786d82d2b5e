//! HASH index files of dynamic-bucket primary-key tables.
//!
//! Source: Java `org.apache.paimon.index.HashIndexFile`, `org.apache.paimon.utils.IntFileUtils`.
//! Layout: `spec/table-layout.md` §7.3: a concatenation of int32 big-endian key hashes, one
//! file per (partition, bucket); `_ROW_COUNT` of its index manifest entry = number of ints.

use crate::error::{Error, Result};

/// Decode a HASH index file into its key hashes.
///
/// # Errors
/// [`Error::Corrupt`] naming `path` if the length is not a multiple of 4.
pub fn decode_hash_index(bytes: &[u8], path: &str) -> Result<Vec<i32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(Error::corrupt(
            path,
            "hash-index",
            format!("{} bytes is not a multiple of 4", bytes.len()),
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Encode key hashes as a HASH index file (int32 big-endian each).
pub fn encode_hash_index(hashes: &[i32]) -> Vec<u8> {
    hashes.iter().flat_map(|h| h.to_be_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let bytes = [0x00, 0x00, 0x00, 0x01, 0xff, 0xff, 0xff, 0xfe];
        assert_eq!(decode_hash_index(&bytes, "p").unwrap(), vec![1, -2]);
        assert_eq!(encode_hash_index(&[1, -2]), bytes);
        assert!(matches!(
            decode_hash_index(&bytes[..5], "index/index-x"),
            Err(Error::Corrupt { path, .. }) if path == "index/index-x"
        ));
    }
}
