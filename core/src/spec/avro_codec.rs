//! Avro block codecs `bzip2` and `xz`, decoded here rather than by apache-avro: its 0.21
//! decoders for these two `unwrap` the decompression result and panic on a corrupt block.
//!
//! Each block of an Avro object container file with codec `bzip2` holds one complete bzip2
//! stream, with codec `xz` one complete xz stream (Avro specification, "Optional Codecs";
//! Java `org.apache.avro.file.BZip2Codec` / `XZCodec`). Paimon writes them for the
//! `file.compression` (data files) and `manifest.compression` (manifests) options `bzip2` and
//! `xz`. bzip2 decodes with the `bzip2` crate (its pure-Rust backend), xz with `liblzma`.
//!
//! Manifests are decoded by apache-avro's generic reader: [`to_null_codec`] first rewrites a
//! `bzip2`/`xz` container into the same container with codec `null` and decompressed blocks.

use std::io::Read;

use crate::error::{Error, Result};

/// Length of the sync marker after the header and after every block.
const SYNC_LEN: usize = 16;

/// A codec apache-avro is not asked to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExtraCodec {
    /// `bzip2`: one bzip2 stream per block.
    Bzip2,
    /// `xz`: one xz stream per block.
    Xz,
}

impl ExtraCodec {
    /// The codec of an `avro.codec` header value, `None` for the codecs apache-avro decodes.
    pub(crate) fn from_name(name: &[u8]) -> Option<Self> {
        match name {
            b"bzip2" => Some(ExtraCodec::Bzip2),
            b"xz" => Some(ExtraCodec::Xz),
            _ => None,
        }
    }

    /// Decompress one block. `Err` holds the decoder's reason (corrupt or truncated stream).
    pub(crate) fn decompress(self, block: &[u8]) -> std::result::Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let read = match self {
            ExtraCodec::Bzip2 => bzip2::read::BzDecoder::new(block).read_to_end(&mut out),
            ExtraCodec::Xz => liblzma::read::XzDecoder::new(block).read_to_end(&mut out),
        };
        match read {
            Ok(_) => Ok(out),
            Err(e) => Err(format!(
                "{} block of {} bytes: {e}",
                match self {
                    ExtraCodec::Bzip2 => "bzip2",
                    ExtraCodec::Xz => "xz",
                },
                block.len()
            )),
        }
    }
}

/// Reads Avro's zig-zag varint longs and length-prefixed bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn long(&mut self) -> std::result::Result<i64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(format!("truncated varint at byte {}", self.pos));
            };
            self.pos += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
            }
        }
        Err(format!(
            "varint longer than 10 bytes before byte {}",
            self.pos
        ))
    }

    fn take(&mut self, len: u64) -> std::result::Result<&'a [u8], String> {
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| self.pos.checked_add(l))
            .filter(|e| *e <= self.bytes.len())
            .ok_or_else(|| {
                format!(
                    "{len} bytes at byte {} exceed the file of {} bytes",
                    self.pos,
                    self.bytes.len()
                )
            })?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn len_prefixed(&mut self) -> std::result::Result<&'a [u8], String> {
        let len = self.long()?;
        let len = u64::try_from(len).map_err(|_| format!("negative length {len}"))?;
        self.take(len)
    }
}

fn put_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// If `bytes` is an Avro object container file with codec `bzip2` or `xz`, the same file with
/// codec `null`: the header's metadata map (same pairs, `avro.codec` set to `null`, written as
/// one block), the sync marker, then every block with its count, decompressed size and
/// decompressed bytes. `Ok(None)` for any other codec (and for no codec).
///
/// # Errors
/// [`Error::Corrupt`] (format `format`, naming `path`) for a malformed header or block, or a
/// block that does not decompress.
pub(crate) fn to_null_codec(
    bytes: &[u8],
    path: &str,
    format: &'static str,
) -> Result<Option<Vec<u8>>> {
    let bad = |reason: String| Error::corrupt(path, format, reason);
    if bytes.get(..4) != Some(b"Obj\x01".as_slice()) {
        return Err(bad("missing magic Obj\\x01".to_string()));
    }
    let mut c = Cursor { bytes, pos: 4 };
    let header = |r: String| bad(format!("bad Avro container header: {r}"));
    let mut pairs: Vec<(&[u8], &[u8])> = Vec::new();
    loop {
        let count = c.long().map_err(header)?;
        if count == 0 {
            break;
        }
        if count < 0 {
            c.long().map_err(header)?; // the block's size in bytes
        }
        for _ in 0..count.unsigned_abs() {
            let k = c.len_prefixed().map_err(header)?;
            let v = c.len_prefixed().map_err(header)?;
            pairs.push((k, v));
        }
    }
    let Some(codec) = pairs
        .iter()
        .find(|(k, _)| *k == b"avro.codec")
        .and_then(|(_, v)| ExtraCodec::from_name(v))
    else {
        return Ok(None);
    };
    let sync = c.take(SYNC_LEN as u64).map_err(header)?;
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(4));
    out.extend_from_slice(b"Obj\x01");
    put_long(&mut out, pairs.len() as i64);
    for (k, v) in &pairs {
        put_bytes(&mut out, k);
        put_bytes(&mut out, if *k == b"avro.codec" { b"null" } else { v });
    }
    put_long(&mut out, 0);
    out.extend_from_slice(sync);
    let mut index = 0u64;
    while c.pos < bytes.len() {
        let at = c.pos;
        let block = |r: String| bad(format!("Avro block {index} at byte {at}: {r}"));
        let count = c.long().map_err(block)?;
        let size = c.long().map_err(block)?;
        let size = u64::try_from(size).map_err(|_| block(format!("negative size {size}")))?;
        let data = c.take(size).map_err(block)?;
        let marker = c.take(SYNC_LEN as u64).map_err(block)?;
        if marker != sync {
            return Err(block("sync marker mismatch".to_string()));
        }
        let plain = codec.decompress(data).map_err(block)?;
        put_long(&mut out, count);
        put_bytes(&mut out, &plain);
        out.extend_from_slice(sync);
        index += 1;
    }
    Ok(Some(out))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(ExtraCodec::from_name(b"bzip2"), Some(ExtraCodec::Bzip2));
        assert_eq!(ExtraCodec::from_name(b"xz"), Some(ExtraCodec::Xz));
        assert_eq!(ExtraCodec::from_name(b"zstandard"), None);
        assert_eq!(ExtraCodec::from_name(b"null"), None);
    }

    #[test]
    fn corrupt_streams_are_errors_not_panics() {
        for codec in [ExtraCodec::Bzip2, ExtraCodec::Xz] {
            assert!(codec.decompress(b"not a stream").is_err());
        }
    }

    #[test]
    fn other_codecs_are_left_alone() {
        // Magic, map of one pair avro.codec = "null", end of map, sync marker.
        let mut f = b"Obj\x01".to_vec();
        put_long(&mut f, 1);
        put_bytes(&mut f, b"avro.codec");
        put_bytes(&mut f, b"null");
        put_long(&mut f, 0);
        f.extend_from_slice(&[7u8; SYNC_LEN]);
        assert_eq!(to_null_codec(&f, "f", "manifest").unwrap(), None);
        assert!(to_null_codec(b"Obj", "f", "manifest").is_err());
    }
}
