//! Element payloads of `ARRAY<BLOB>` and `MAP<K, BLOB>` records: encode and decode.
//!
//! Source: Java `org.apache.paimon.format.blob.ArrayBlobElementSerializer`,
//! `MapBlobElementSerializer`.

use super::*;

fn le_i32(b: &[u8], at: usize) -> Option<i32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn magic_version_count(
    payload: &[u8],
    magic: u32,
    what: &str,
    path: &str,
    row: u64,
) -> Result<usize> {
    let m = le_i32(payload, 0).map(|m| m as u32);
    if m != Some(magic) {
        return Err(corrupt(
            path,
            format!("{what} payload of row {row} has wrong magic (expected {magic:#010x})"),
        ));
    }
    let version = payload.get(4).copied().unwrap_or_default();
    if version != BLOB_ELEMENT_VERSION {
        return Err(corrupt(
            path,
            format!("{what} payload of row {row} has unsupported version {version}"),
        ));
    }
    let count = le_i32(payload, 5).unwrap_or(-1);
    usize::try_from(count).map_err(|_| {
        corrupt(
            path,
            format!("{what} payload of row {row} has count {count}"),
        )
    })
}

fn element_ranges(
    lens: &[i64],
    data_start: usize,
    data_end: usize,
    what: &str,
    path: &str,
    row: u64,
) -> Result<(Vec<Option<Range<usize>>>, usize)> {
    let mut at = data_start;
    let mut out = Vec::with_capacity(lens.len());
    for (i, &len) in lens.iter().enumerate() {
        if len == BLOB_NULL_LENGTH {
            out.push(None);
            continue;
        }
        let end = usize::try_from(len)
            .ok()
            .filter(|l| i32::try_from(*l).is_ok())
            .and_then(|l| at.checked_add(l))
            .filter(|e| *e <= data_end)
            .ok_or_else(|| {
                corrupt(
                    path,
                    format!("{what} {i} of row {row} has invalid length {len} (data region {data_start}..{data_end})"),
                )
            })?;
        out.push(Some(at..end));
        at = end;
    }
    Ok((out, at))
}

/// Decode an `ARRAY<BLOB>` payload into the byte range (within `payload`) of every element,
/// `None` for null elements.
///
/// # Errors
/// [`Error::Corrupt`] naming `path` and `row` for every check of `blob-format.md` §4.2.
pub fn decode_array_payload(
    payload: &[u8],
    path: &str,
    row: u64,
) -> Result<Vec<Option<Range<usize>>>> {
    let n = payload.len();
    if n < ARRAY_MIN_PAYLOAD {
        return Err(corrupt(
            path,
            format!("array payload of row {row} has {n} bytes, fewer than {ARRAY_MIN_PAYLOAD}"),
        ));
    }
    let count = magic_version_count(payload, BLOB_ARRAY_MAGIC, "array", path, row)?;
    let index_len = le_i32(payload, n - 4).unwrap_or(-1);
    let index_len = usize::try_from(index_len)
        .ok()
        .filter(|l| *l <= n - ARRAY_MIN_PAYLOAD)
        .ok_or_else(|| {
            corrupt(
                path,
                format!("array payload of row {row} has invalid index length {index_len}"),
            )
        })?;
    if count > index_len {
        return Err(corrupt(
            path,
            format!("array payload of row {row}: count {count} exceeds index length {index_len}"),
        ));
    }
    let index_start = n - 4 - index_len;
    let lens = decode_varints(&payload[index_start..n - 4])
        .map_err(|r| corrupt(path, format!("array index of row {row}: {r}")))?;
    if lens.len() != count {
        return Err(corrupt(
            path,
            format!(
                "array index of row {row} has {} entries, expected {count}",
                lens.len()
            ),
        ));
    }
    let (out, end) = element_ranges(&lens, ARRAY_HEADER_LEN, index_start, "element", path, row)?;
    if end != index_start {
        return Err(corrupt(
            path,
            format!(
                "array payload of row {row}: elements use {} bytes, data region has {}",
                end - ARRAY_HEADER_LEN,
                index_start - ARRAY_HEADER_LEN
            ),
        ));
    }
    Ok(out)
}

/// One decoded map entry: byte ranges (within the payload) of the serialized key and of the
/// value, `None` when null.
pub type BlobMapEntryRanges = (Option<Range<usize>>, Option<Range<usize>>);

/// Decode a `MAP<K, BLOB>` payload into the byte ranges of every entry's key and value.
/// Keys are validated against `key_kind` (fixed widths, boolean bytes, UTF-8, decimal
/// precision) and must be unique by their bytes.
///
/// # Errors
/// [`Error::Corrupt`] naming `path` and `row` for every check of `blob-format.md` §4.3.
pub fn decode_map_payload(
    payload: &[u8],
    key_kind: BlobMapKeyKind,
    path: &str,
    row: u64,
) -> Result<Vec<BlobMapEntryRanges>> {
    let n = payload.len();
    if n < MAP_MIN_PAYLOAD {
        return Err(corrupt(
            path,
            format!("map payload of row {row} has {n} bytes, fewer than {MAP_MIN_PAYLOAD}"),
        ));
    }
    let count = magic_version_count(payload, BLOB_MAP_MAGIC, "map", path, row)?;
    let max = n - MAP_MIN_PAYLOAD;
    let kl = le_i32(payload, n - 8).unwrap_or(-1);
    let vl = le_i32(payload, n - 4).unwrap_or(-1);
    let (kl, vl) = match (usize::try_from(kl), usize::try_from(vl)) {
        (Ok(k), Ok(v)) if k <= max && v <= max && k + v <= max => (k, v),
        _ => {
            return Err(corrupt(
                path,
                format!("map payload of row {row} has invalid index lengths {kl}/{vl}"),
            ));
        }
    };
    if count > kl || count > vl {
        return Err(corrupt(
            path,
            format!("map payload of row {row}: entry count {count} exceeds an index length"),
        ));
    }
    let vi_start = n - 8 - vl;
    let ki_start = vi_start - kl;
    let klens = decode_varints(&payload[ki_start..vi_start])
        .map_err(|r| corrupt(path, format!("map key index of row {row}: {r}")))?;
    let vlens = decode_varints(&payload[vi_start..n - 8])
        .map_err(|r| corrupt(path, format!("map value index of row {row}: {r}")))?;
    if klens.len() != count || vlens.len() != count {
        return Err(corrupt(
            path,
            format!(
                "map indexes of row {row} have {}/{} entries, expected {count}",
                klens.len(),
                vlens.len()
            ),
        ));
    }
    let (keys, kend) = element_ranges(&klens, ARRAY_HEADER_LEN, ki_start, "map key", path, row)?;
    let (values, vend) = element_ranges(&vlens, kend, ki_start, "map value", path, row)?;
    if vend != ki_start {
        return Err(corrupt(
            path,
            format!(
                "map payload of row {row}: keys and values use {} bytes, data region has {}",
                vend - ARRAY_HEADER_LEN,
                ki_start - ARRAY_HEADER_LEN
            ),
        ));
    }
    let mut seen: Vec<Option<&[u8]>> = Vec::with_capacity(count);
    for (i, k) in keys.iter().enumerate() {
        let kb = k.clone().map(|r| &payload[r]);
        if let Some(kb) = kb {
            check_key(kb, key_kind)
                .map_err(|r| corrupt(path, format!("map key {i} of row {row}: {r}")))?;
        }
        seen.push(kb);
    }
    seen.sort_unstable();
    if seen.windows(2).any(|w| w[0] == w[1]) {
        return Err(corrupt(
            path,
            format!("map payload of row {row} has duplicate keys"),
        ));
    }
    Ok(keys.into_iter().zip(values).collect())
}

pub(super) fn decimal_key(b: &[u8], precision: u8) -> std::result::Result<i128, String> {
    let v = if precision <= 18 {
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        i128::from(i64::from_le_bytes(a))
    } else {
        if b.is_empty() || b.len() > 16 {
            return Err(format!("decimal key of {} bytes", b.len()));
        }
        let fill = if b[0] & 0x80 != 0 { 0xff } else { 0 };
        let mut a = [fill; 16];
        a[16 - b.len()..].copy_from_slice(b);
        i128::from_be_bytes(a)
    };
    let limit = 10u128
        .checked_pow(u32::from(precision))
        .unwrap_or(u128::MAX);
    if v.unsigned_abs() >= limit {
        return Err(format!("decimal {v} does not fit precision {precision}"));
    }
    Ok(v)
}

fn check_key(b: &[u8], kind: BlobMapKeyKind) -> std::result::Result<(), String> {
    if let Some(w) = kind.fixed_len()
        && b.len() != w
    {
        return Err(format!("length {} but the key type needs {w}", b.len()));
    }
    match kind {
        BlobMapKeyKind::Boolean if b[0] > 1 => Err(format!("invalid boolean byte {}", b[0])),
        BlobMapKeyKind::String => std::str::from_utf8(b)
            .map(|_| ())
            .map_err(|e| format!("invalid UTF-8: {e}")),
        BlobMapKeyKind::Decimal { precision, .. } => decimal_key(b, precision).map(|_| ()),
        _ => Ok(()),
    }
}

/// Encode an `ARRAY<BLOB>` payload (version 1) from its elements; `None` is a null element.
///
/// Source: Java `org.apache.paimon.format.blob.ArrayBlobElementSerializer`.
pub fn encode_array_payload(elements: &[Option<&[u8]>]) -> Vec<u8> {
    let lens: Vec<Option<u64>> = elements.iter().map(|e| e.map(|b| b.len() as u64)).collect();
    let (mut out, tail) = array_payload_frame(&lens);
    for b in elements.iter().flatten() {
        out.extend_from_slice(b);
    }
    out.extend_from_slice(&tail);
    out
}

/// One map entry to encode: `(serialized key, value)`, `None` for null.
pub type BlobMapEntry<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// Encode a `MAP<K, BLOB>` payload (version 1). Each entry is `(serialized key, value)`,
/// `None` for null; keys are serialized per [`BlobMapKeyKind`] (see `blob-format.md` §4.3).
///
/// # Errors
/// [`Error::Invalid`] when two keys have the same bytes (two null keys included).
///
/// Source: Java `org.apache.paimon.format.blob.MapBlobElementSerializer`.
pub fn encode_map_payload(entries: &[BlobMapEntry<'_>]) -> Result<Vec<u8>> {
    let keys: Vec<Option<&[u8]>> = entries.iter().map(|(k, _)| *k).collect();
    let lens: Vec<Option<u64>> = entries
        .iter()
        .map(|(_, v)| v.map(|b| b.len() as u64))
        .collect();
    let (mut out, tail) = map_payload_frame(&keys, &lens)?;
    for (_, v) in entries {
        out.extend_from_slice(v.unwrap_or_default());
    }
    out.extend_from_slice(&tail);
    Ok(out)
}

/// The bytes of an `ARRAY<BLOB>` payload around its element bytes (as [`encode_array_payload`]
/// lays them out): the header, and the element index with its length.
pub(super) fn array_payload_frame(lens: &[Option<u64>]) -> (Vec<u8>, Vec<u8>) {
    let index = encode_delta_varint(&entry_lengths(lens));
    let mut head = Vec::with_capacity(9);
    head.extend_from_slice(&BLOB_ARRAY_MAGIC.to_le_bytes());
    head.push(BLOB_ELEMENT_VERSION);
    head.extend_from_slice(&(lens.len() as i32).to_le_bytes());
    let mut tail = index;
    let n = tail.len() as i32;
    tail.extend_from_slice(&n.to_le_bytes());
    (head, tail)
}

/// Index entries of payload parts: the length, or `-1` for null.
fn entry_lengths(lens: &[Option<u64>]) -> Vec<i64> {
    lens.iter()
        .map(|l| l.map_or(BLOB_NULL_LENGTH, |n| n as i64))
        .collect()
}

/// The bytes of a `MAP<K, BLOB>` payload around its value bytes (as [`encode_map_payload`]
/// lays them out): the header with the keys, and the two indexes with their lengths.
///
/// # Errors
/// [`Error::Invalid`] for duplicate keys.
pub(super) fn map_payload_frame(
    keys: &[Option<&[u8]>],
    value_lens: &[Option<u64>],
) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut sorted = keys.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::invalid("blob map keys must be unique"));
    }
    let key_lens: Vec<Option<u64>> = keys.iter().map(|k| k.map(|b| b.len() as u64)).collect();
    let kindex = encode_delta_varint(&entry_lengths(&key_lens));
    let vindex = encode_delta_varint(&entry_lengths(value_lens));
    let mut head = Vec::new();
    head.extend_from_slice(&BLOB_MAP_MAGIC.to_le_bytes());
    head.push(BLOB_ELEMENT_VERSION);
    head.extend_from_slice(&(keys.len() as i32).to_le_bytes());
    for k in keys {
        head.extend_from_slice(k.unwrap_or_default());
    }
    let mut tail = Vec::new();
    tail.extend_from_slice(&kindex);
    tail.extend_from_slice(&vindex);
    tail.extend_from_slice(&(kindex.len() as i32).to_le_bytes());
    tail.extend_from_slice(&(vindex.len() as i32).to_le_bytes());
    Ok((head, tail))
}
