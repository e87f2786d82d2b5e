//! Deletion vectors and deletion-vector index files.
//!
//! Source: Java `org.apache.paimon.deletionvectors.DeletionVector#read`,
//! `BitmapDeletionVector`, `Bitmap64DeletionVector`, `DeletionVectorsIndexFile`,
//! `org.apache.paimon.utils.RoaringBitmap32`, `OptimizedRoaringBitmap64`; the Roaring
//! portable format (<https://github.com/RoaringBitmap/RoaringFormatSpec>).
//! Layout: `spec/table-layout.md` §7.2.
//!
//! A DV index file is a version byte `1` followed by one entry per data file, at the offset
//! recorded in its [`DeletionVectorMeta`]:
//!
//! ```text
//! int32 BE bitmapLength ‖ magic ‖ serialized bitmap ‖ int32 BE CRC32(magic ‖ bitmap)
//! ```
//!
//! * 32-bit (`BitmapDeletionVector`): magic `5e43f2d0` (BE), a 32-bit portable Roaring
//!   bitmap; `meta.length == bitmapLength`.
//! * 64-bit (`Bitmap64DeletionVector`): magic `d1d33964` (`1681511377` LE), then int64 LE
//!   bucket count and per bucket int32 LE high key + 32-bit portable Roaring bitmap;
//!   `meta.length == bitmapLength + 8` (the whole entry).
//!
//! Bit `i` set = row position `i` of the data file is deleted.
//!
//! The bitmap is held in Roaring form (sorted containers of 2^16 positions: array, bitmap or
//! run), written with Java's container choices (`runOptimize`), so encoding a DV built from
//! positions gives the bytes Java writes for a new DV.

use std::ops::Range;

use crate::error::{Error, Result};
use crate::spec::index_manifest::DeletionVectorMeta;

const FORMAT: &str = "deletion-vector";

/// Version byte at the start of a DV index file.
pub const DV_INDEX_VERSION: u8 = 1;
/// Magic of 32-bit deletion vectors (`BitmapDeletionVector.MAGIC_NUMBER`), stored BE.
pub const MAGIC_32: i32 = 1_581_511_376;
/// Magic of 64-bit deletion vectors (`Bitmap64DeletionVector.MAGIC_NUMBER`), stored LE.
pub const MAGIC_64: i32 = 1_681_511_377;

const SERIAL_COOKIE_NO_RUN: u32 = 12346;
const SERIAL_COOKIE: u32 = 12347;
const NO_OFFSET_THRESHOLD: usize = 4;
const ARRAY_MAX: usize = 4096;
const BITMAP_WORDS: usize = 1024;

/// One Roaring container: the low 16 bits of the positions sharing a key.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Container {
    /// Sorted distinct values (cardinality ≤ 4096 when written by Roaring).
    Array(Vec<u16>),
    /// 65536 bits, LSB first within each little-endian word.
    Bitmap(Box<[u64; BITMAP_WORDS]>),
    /// Sorted, non-overlapping runs `(start, length - 1)`.
    Run(Vec<(u16, u16)>),
}

impl Container {
    fn contains(&self, low: u16) -> bool {
        match self {
            Container::Array(v) => v.binary_search(&low).is_ok(),
            Container::Bitmap(words) => words[usize::from(low >> 6)] & (1 << (low & 63)) != 0,
            Container::Run(runs) => {
                let i = runs.partition_point(|(start, _)| *start <= low);
                i > 0 && {
                    let (start, len) = runs[i - 1];
                    u32::from(low) <= u32::from(start) + u32::from(len)
                }
            }
        }
    }

    fn cardinality(&self) -> u64 {
        match self {
            Container::Array(v) => v.len() as u64,
            Container::Bitmap(words) => words.iter().map(|w| u64::from(w.count_ones())).sum(),
            Container::Run(runs) => runs.iter().map(|(_, l)| u64::from(*l) + 1).sum(),
        }
    }

    fn values(&self) -> Box<dyn Iterator<Item = u16> + '_> {
        match self {
            Container::Array(v) => Box::new(v.iter().copied()),
            Container::Bitmap(words) => Box::new(words.iter().enumerate().flat_map(|(i, w)| {
                let w = *w;
                (0..64u16)
                    .filter(move |b| w & (1 << b) != 0)
                    .map(move |b| (i as u16) * 64 + b)
            })),
            Container::Run(runs) => Box::new(
                runs.iter()
                    .flat_map(|(s, l)| u32::from(*s)..=u32::from(*s) + u32::from(*l))
                    .map(|v| v as u16),
            ),
        }
    }

    /// Container Java's `RoaringBitmap` holds for these sorted distinct values after adds and
    /// `runOptimize` (array up to 4096 values, else bitmap; run when strictly smaller).
    fn optimized(values: &[u16]) -> Self {
        let mut runs: Vec<(u16, u16)> = Vec::new();
        for &v in values {
            match runs.last_mut() {
                Some((start, len)) if u32::from(*start) + u32::from(*len) + 1 == u32::from(v) => {
                    *len += 1;
                }
                _ => runs.push((v, 0)),
            }
        }
        let run_size = 2 + 4 * runs.len();
        if values.len() <= ARRAY_MAX {
            if 2 * values.len() > run_size {
                Container::Run(runs)
            } else {
                Container::Array(values.to_vec())
            }
        } else if 8192 > run_size {
            Container::Run(runs)
        } else {
            let mut words = Box::new([0u64; BITMAP_WORDS]);
            for &v in values {
                words[usize::from(v >> 6)] |= 1 << (v & 63);
            }
            Container::Bitmap(words)
        }
    }

    fn serialized_size(&self) -> usize {
        match self {
            Container::Array(v) => 2 * v.len(),
            Container::Bitmap(_) => 8 * BITMAP_WORDS,
            Container::Run(runs) => 2 + 4 * runs.len(),
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Container::Array(v) => {
                for x in v {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
            Container::Bitmap(words) => {
                for w in words.iter() {
                    out.extend_from_slice(&w.to_le_bytes());
                }
            }
            Container::Run(runs) => {
                out.extend_from_slice(&(runs.len() as u16).to_le_bytes());
                for (s, l) in runs {
                    out.extend_from_slice(&s.to_le_bytes());
                    out.extend_from_slice(&l.to_le_bytes());
                }
            }
        }
    }
}

/// The deleted row positions of one data file.
///
/// Source: Java `org.apache.paimon.deletionvectors.DeletionVector` (`BitmapDeletionVector`
/// for 32-bit positions, `Bitmap64DeletionVector` for 64-bit). Positions are 0-based row
/// numbers within the data file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeletionVector {
    /// `(position >> 16, container)` sorted by key.
    containers: Vec<(u64, Container)>,
    cardinality: u64,
}

impl DeletionVector {
    /// An empty deletion vector.
    pub fn new() -> Self {
        Self::default()
    }

    /// A deletion vector holding `positions` (any order, duplicates ignored).
    pub fn from_positions(positions: impl IntoIterator<Item = u64>) -> Self {
        let mut all: Vec<u64> = positions.into_iter().collect();
        all.sort_unstable();
        all.dedup();
        let mut containers = Vec::new();
        let mut i = 0;
        while i < all.len() {
            let key = all[i] >> 16;
            let end = i + all[i..].partition_point(|p| p >> 16 == key);
            let lows: Vec<u16> = all[i..end].iter().map(|p| *p as u16).collect();
            containers.push((key, Container::optimized(&lows)));
            i = end;
        }
        DeletionVector {
            containers,
            cardinality: all.len() as u64,
        }
    }

    /// True if row `position` is deleted.
    pub fn is_deleted(&self, position: u64) -> bool {
        let key = position >> 16;
        self.containers
            .binary_search_by_key(&key, |(k, _)| *k)
            .is_ok_and(|i| self.containers[i].1.contains(position as u16))
    }

    /// Number of deleted rows.
    pub fn cardinality(&self) -> u64 {
        self.cardinality
    }

    /// True if no row is deleted.
    pub fn is_empty(&self) -> bool {
        self.cardinality == 0
    }

    /// Deleted positions in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.containers
            .iter()
            .flat_map(|(k, c)| c.values().map(move |low| (k << 16) | u64::from(low)))
    }

    /// The largest deleted position.
    pub fn max_position(&self) -> Option<u64> {
        self.containers
            .last()
            .and_then(|(k, c)| c.values().last().map(|low| (k << 16) | u64::from(low)))
    }

    /// Union with `other` (Java `DeletionVector#merge`).
    pub fn union(&self, other: &DeletionVector) -> DeletionVector {
        DeletionVector::from_positions(self.iter().chain(other.iter()))
    }

    /// Decode the entry at `meta.offset` of a whole DV index file (`file` includes the
    /// version byte), validating the recorded length; the CRC is checked when `verify_crc`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming `path` for a bad version byte, offset, length, magic
    /// ("Invalid magic number"), bitmap or CRC.
    pub fn decode_at(
        file: &[u8],
        meta: &DeletionVectorMeta,
        path: &str,
        verify_crc: bool,
    ) -> Result<DeletionVector> {
        check_version_byte(file, path)?;
        let offset = usize::try_from(meta.offset)
            .ok()
            .filter(|o| *o >= 1 && *o <= file.len())
            .ok_or_else(|| {
                corrupt(
                    path,
                    format!(
                        "deletion vector of {} at offset {} outside the {}-byte file",
                        meta.data_file_name,
                        meta.offset,
                        file.len()
                    ),
                )
            })?;
        Self::decode_entry(&file[offset..], meta.length, path, verify_crc)
    }

    /// Decode one entry from `entry` (bytes starting at its length field; trailing bytes are
    /// ignored), validating it against the recorded `meta_length`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming `path` (see [`DeletionVector::decode_at`]).
    pub fn decode_entry(
        entry: &[u8],
        meta_length: i32,
        path: &str,
        verify_crc: bool,
    ) -> Result<DeletionVector> {
        let mut r = Reader::new(entry, path);
        let bitmap_length = r.i32_be()?;
        let magic_be = r.i32_be()?;
        let is64 = if magic_be == MAGIC_32 {
            if bitmap_length != meta_length {
                return Err(corrupt(
                    path,
                    format!(
                        "size not match, actual size: {bitmap_length}, expected size: {meta_length}"
                    ),
                ));
            }
            false
        } else if magic_be.swap_bytes() == MAGIC_64 {
            let expected = i64::from(meta_length) - 8;
            if i64::from(bitmap_length) != expected {
                return Err(corrupt(
                    path,
                    format!(
                        "size not match, actual size: {bitmap_length}, expected size: {expected}"
                    ),
                ));
            }
            true
        } else {
            return Err(corrupt(
                path,
                format!(
                    "Invalid magic number: {magic_be}, expected {MAGIC_32} (32-bit) or {MAGIC_64} (64-bit, little-endian)"
                ),
            ));
        };
        let data_len = usize::try_from(bitmap_length)
            .ok()
            .filter(|l| *l >= 4)
            .ok_or_else(|| corrupt(path, format!("bitmap length {bitmap_length} below 4")))?;
        // magic + bitmap bytes, then the CRC.
        let data = r.take(data_len - 4)?;
        let crc = r.i32_be()?;
        if verify_crc {
            let mut h = crc32fast::Hasher::new();
            h.update(&entry[4..8]);
            h.update(data);
            let actual = h.finalize();
            if actual != crc as u32 {
                return Err(corrupt(
                    path,
                    format!(
                        "deletion vector CRC mismatch: stored {:08x}, computed {actual:08x}",
                        crc as u32
                    ),
                ));
            }
        }
        let mut br = Reader::new(data, path);
        let dv = if is64 {
            let count = br.u64_le()?;
            let mut containers = Vec::new();
            let mut last_key: Option<u32> = None;
            for _ in 0..count {
                let high = br.u32_le()?;
                if last_key.is_some_and(|k| high <= k) {
                    return Err(corrupt(path, "64-bit bitmap keys not ascending"));
                }
                last_key = Some(high);
                for (k, c) in read_roaring32(&mut br)? {
                    containers.push(((u64::from(high) << 16) | k, c));
                }
            }
            DeletionVector::from_containers(containers)
        } else {
            DeletionVector::from_containers(read_roaring32(&mut br)?)
        };
        if br.remaining() != 0 {
            return Err(corrupt(
                path,
                format!("{} bytes after the bitmap", br.remaining()),
            ));
        }
        Ok(dv)
    }

    fn from_containers(containers: Vec<(u64, Container)>) -> Self {
        let cardinality = containers.iter().map(|(_, c)| c.cardinality()).sum();
        DeletionVector {
            containers,
            cardinality,
        }
    }

    /// The 32-bit portable Roaring serialization of positions `< 2^32` (Java
    /// `RoaringBitmap#serialize` after `runOptimize`).
    fn roaring32_bytes(containers: &[(u64, Container)]) -> Vec<u8> {
        let size = containers.len();
        let has_run = containers
            .iter()
            .any(|(_, c)| matches!(c, Container::Run(_)));
        let mut out = Vec::new();
        if has_run {
            let cookie = SERIAL_COOKIE | ((size.saturating_sub(1) as u32) << 16);
            out.extend_from_slice(&cookie.to_le_bytes());
            let mut flags = vec![0u8; size.div_ceil(8)];
            for (i, (_, c)) in containers.iter().enumerate() {
                if matches!(c, Container::Run(_)) {
                    flags[i / 8] |= 1 << (i % 8);
                }
            }
            out.extend_from_slice(&flags);
        } else {
            out.extend_from_slice(&SERIAL_COOKIE_NO_RUN.to_le_bytes());
            out.extend_from_slice(&(size as u32).to_le_bytes());
        }
        for (k, c) in containers {
            out.extend_from_slice(&(*k as u16).to_le_bytes());
            out.extend_from_slice(&((c.cardinality() - 1) as u16).to_le_bytes());
        }
        if !has_run || size >= NO_OFFSET_THRESHOLD {
            let header = if has_run {
                4 + size.div_ceil(8) + 8 * size
            } else {
                8 + 8 * size
            };
            let mut offset = header;
            for (_, c) in containers {
                out.extend_from_slice(&(offset as u32).to_le_bytes());
                offset += c.serialized_size();
            }
        }
        for (_, c) in containers {
            c.write(&mut out);
        }
        out
    }

    /// Encode as a 32-bit entry (`BitmapDeletionVector#serializeTo`): length, magic, bitmap,
    /// CRC. Returns the entry bytes and the length to record in [`DeletionVectorMeta`].
    ///
    /// # Errors
    /// [`Error::Invalid`] if a position exceeds 2147483647 (Java's 32-bit limit).
    pub fn encode_32(&self) -> Result<(Vec<u8>, i32)> {
        if self.max_position().is_some_and(|p| p > i32::MAX as u64) {
            return Err(Error::invalid(
                "deletion vector: the file has too many rows, 32-bit bitmaps support row \
                 positions up to 2147483647",
            ));
        }
        let mut data = MAGIC_32.to_be_bytes().to_vec();
        data.extend(Self::roaring32_bytes(&self.containers));
        let len = i32::try_from(data.len())
            .map_err(|_| Error::invalid("deletion vector larger than 2 GiB"))?;
        Ok((frame(&data, len), len))
    }

    /// Encode as a 64-bit entry (`Bitmap64DeletionVector#serializeTo`). Returns the entry
    /// bytes and the length to record (the whole entry).
    ///
    /// # Errors
    /// [`Error::Invalid`] if the entry exceeds 2 GiB or a high key exceeds `i32::MAX`.
    pub fn encode_64(&self) -> Result<(Vec<u8>, i32)> {
        let mut data = MAGIC_64.to_le_bytes().to_vec();
        // Java writes a dense array of 32-bit bitmaps, keys 0..=max, empty ones included.
        let max_high = self.containers.last().map(|(k, _)| k >> 16);
        let count = max_high.map_or(0, |m| m + 1);
        if count > i32::MAX as u64 {
            return Err(Error::invalid("deletion vector position too large"));
        }
        data.extend_from_slice(&count.to_le_bytes());
        for high in 0..count {
            data.extend_from_slice(&(high as u32).to_le_bytes());
            let part: Vec<(u64, Container)> = self
                .containers
                .iter()
                .filter(|(k, _)| k >> 16 == high)
                .map(|(k, c)| (k & 0xffff, c.clone()))
                .collect();
            data.extend(Self::roaring32_bytes(&part));
        }
        let bitmap_len = i32::try_from(data.len())
            .map_err(|_| Error::invalid("deletion vector larger than 2 GiB"))?;
        let entry = frame(&data, bitmap_len);
        let total = i32::try_from(entry.len())
            .map_err(|_| Error::invalid("deletion vector larger than 2 GiB"))?;
        Ok((entry, total))
    }
}

/// `int32 BE length ‖ data ‖ int32 BE CRC32(data)`.
fn frame(data: &[u8], len: i32) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 8);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&crc32fast::hash(data).to_be_bytes());
    out
}

/// Byte range of a DV entry to read from an index file of `file_size` bytes: from the offset
/// to `offset + length + 8` (32-bit entries), clipped to the file (64-bit entries record the
/// whole entry length, so they end earlier).
pub fn dv_entry_range(meta: &DeletionVectorMeta, file_size: u64) -> Range<u64> {
    let start = u64::try_from(meta.offset).unwrap_or(0);
    let len = u64::try_from(meta.length).unwrap_or(0);
    start..start.saturating_add(len).saturating_add(8).min(file_size)
}

/// Decode every deletion vector of a DV index file, in the order of `ranges` (the
/// `_DELETIONS_VECTORS_RANGES` of its [`crate::spec::IndexFileMeta`]): `(data file name,
/// deletion vector)` pairs. Cardinalities recorded in the ranges are checked.
///
/// # Errors
/// [`Error::Corrupt`] naming `path` for a bad version byte, entry or cardinality mismatch.
pub fn decode_deletion_vector_index(
    file: &[u8],
    ranges: &[DeletionVectorMeta],
    path: &str,
    verify_crc: bool,
) -> Result<Vec<(String, DeletionVector)>> {
    check_version_byte(file, path)?;
    ranges
        .iter()
        .map(|meta| {
            let dv = DeletionVector::decode_at(file, meta, path, verify_crc)?;
            if let Some(card) = meta.cardinality
                && u64::try_from(card).ok() != Some(dv.cardinality())
            {
                return Err(corrupt(
                    path,
                    format!(
                        "deletion vector of {} has {} positions, the index manifest records {card}",
                        meta.data_file_name,
                        dv.cardinality()
                    ),
                ));
            }
            Ok((meta.data_file_name.clone(), dv))
        })
        .collect()
}

/// Encode a DV index file: version byte, then one entry per `(data file name, DV)` in order.
/// Returns the file bytes and the ranges to record (cardinality set).
///
/// # Errors
/// [`Error::Invalid`] for positions too large for the chosen width or a file over 2 GiB.
pub fn encode_deletion_vector_index(
    dvs: &[(String, DeletionVector)],
    bitmap64: bool,
) -> Result<(Vec<u8>, Vec<DeletionVectorMeta>)> {
    let mut out = vec![DV_INDEX_VERSION];
    let mut metas = Vec::with_capacity(dvs.len());
    for (name, dv) in dvs {
        let offset =
            i32::try_from(out.len()).map_err(|_| Error::invalid("DV index file over 2 GiB"))?;
        let (entry, length) = if bitmap64 {
            dv.encode_64()?
        } else {
            dv.encode_32()?
        };
        out.extend_from_slice(&entry);
        metas.push(DeletionVectorMeta {
            data_file_name: name.clone(),
            offset,
            length,
            cardinality: Some(dv.cardinality() as i64),
        });
    }
    Ok((out, metas))
}

fn check_version_byte(file: &[u8], path: &str) -> Result<()> {
    match file.first() {
        Some(&DV_INDEX_VERSION) => Ok(()),
        Some(v) => Err(corrupt(
            path,
            format!("deletion vector index version {v}, expected {DV_INDEX_VERSION}"),
        )),
        None => Err(corrupt(path, "empty deletion vector index file")),
    }
}

fn corrupt(path: &str, reason: impl Into<String>) -> Error {
    Error::corrupt(path, FORMAT, reason)
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    path: &'a str,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], path: &'a str) -> Self {
        Reader { buf, pos: 0, path }
    }

    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.buf.len());
        let Some(end) = end else {
            return Err(corrupt(
                self.path,
                format!(
                    "deletion vector truncated: {n} bytes needed at {}, {} available",
                    self.pos,
                    self.remaining()
                ),
            ));
        };
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn i32_be(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    fn u16_le(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    fn u32_le(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64_le(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
}

/// Read one 32-bit portable Roaring bitmap: `(key, container)` pairs.
fn read_roaring32(r: &mut Reader<'_>) -> Result<Vec<(u64, Container)>> {
    let path = r.path;
    let cookie = r.u32_le()?;
    let (size, run_flags) = if cookie & 0xffff == SERIAL_COOKIE {
        let size = (cookie >> 16) as usize + 1;
        let flags = r.take(size.div_ceil(8))?.to_vec();
        (size, Some(flags))
    } else if cookie == SERIAL_COOKIE_NO_RUN {
        let size = r.u32_le()? as usize;
        if size > 65536 {
            return Err(corrupt(
                path,
                format!("roaring bitmap with {size} containers"),
            ));
        }
        (size, None)
    } else {
        return Err(corrupt(path, format!("bad roaring cookie {cookie}")));
    };
    let mut keys = Vec::with_capacity(size);
    for _ in 0..size {
        let key = r.u16_le()?;
        let card = usize::from(r.u16_le()?) + 1;
        if keys.last().is_some_and(|(k, _)| *k >= key) {
            return Err(corrupt(path, "roaring container keys not ascending"));
        }
        keys.push((key, card));
    }
    let is_run = |i: usize| {
        run_flags
            .as_ref()
            .is_some_and(|f| f[i / 8] & (1 << (i % 8)) != 0)
    };
    if run_flags.is_none() || size >= NO_OFFSET_THRESHOLD {
        r.take(4 * size)?; // offsets: containers follow back to back
    }
    let mut out = Vec::with_capacity(size);
    for (i, (key, card)) in keys.into_iter().enumerate() {
        let c = if is_run(i) {
            let n = usize::from(r.u16_le()?);
            let mut runs = Vec::with_capacity(n);
            let mut next_min = 0u32;
            for _ in 0..n {
                let start = r.u16_le()?;
                let len = r.u16_le()?;
                let end = u32::from(start) + u32::from(len);
                if u32::from(start) < next_min || end > 0xffff {
                    return Err(corrupt(path, "roaring runs overlap or overflow"));
                }
                next_min = end + 1;
                runs.push((start, len));
            }
            let c = Container::Run(runs);
            if c.cardinality() != card as u64 {
                return Err(corrupt(path, "roaring run container cardinality mismatch"));
            }
            c
        } else if card > ARRAY_MAX {
            let mut words = Box::new([0u64; BITMAP_WORDS]);
            for w in words.iter_mut() {
                *w = r.u64_le()?;
            }
            let c = Container::Bitmap(words);
            if c.cardinality() != card as u64 {
                return Err(corrupt(
                    path,
                    "roaring bitmap container cardinality mismatch",
                ));
            }
            c
        } else {
            let mut values = Vec::with_capacity(card);
            for _ in 0..card {
                let v = r.u16_le()?;
                if values.last().is_some_and(|p| *p >= v) {
                    return Err(corrupt(path, "roaring array values not ascending"));
                }
                values.push(v);
            }
            Container::Array(values)
        };
        out.push((u64::from(key), c));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::unhex;

    fn hexs(s: &str) -> Vec<u8> {
        unhex(&s.replace(' ', "")).unwrap()
    }

    fn meta(name: &str, offset: i32, length: i32) -> DeletionVectorMeta {
        DeletionVectorMeta {
            data_file_name: name.into(),
            offset,
            length,
            cardinality: None,
        }
    }

    /// Golden files of Java `DeletionVectorsIndexFileTest` (spec §7.2).
    #[test]
    fn golden_dvindex_32() {
        let file = hexs(
            "01 00000018 5e43f2d0 3a300000010000000000010010000000 02000300 c898f63d \
             00000016 5e43f2d0 3a3000000100000000000000100000000100 fa2b5192",
        );
        assert_eq!(file.len(), 63);
        let ranges = [meta("a", 1, 24), meta("b", 33, 22)];
        let dvs = decode_deletion_vector_index(&file, &ranges, "dvindex-32", true).unwrap();
        assert_eq!(dvs[0].1.iter().collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(dvs[1].1.iter().collect::<Vec<_>>(), vec![1]);
        assert!(dvs[0].1.is_deleted(2) && !dvs[0].1.is_deleted(1) && !dvs[0].1.is_deleted(65538));
        assert_eq!(dvs[0].1.cardinality(), 2);
        // Encoding gives Java's bytes back.
        let input: Vec<(String, DeletionVector)> = vec![
            ("a".into(), DeletionVector::from_positions([3, 2])),
            ("b".into(), DeletionVector::from_positions([1])),
        ];
        let (bytes, metas) = encode_deletion_vector_index(&input, false).unwrap();
        assert_eq!(bytes, file);
        assert_eq!(
            (metas[1].offset, metas[1].length, metas[1].cardinality),
            (33, 22, Some(1))
        );
    }

    #[test]
    fn golden_dvindex_64() {
        let file = hexs(
            "01 00000024 d1d33964 0100000000000000 00000000 \
             3a30000001000000000001001000000002000300 7a813847 \
             00000022 d1d33964 0100000000000000 00000000 \
             3a3000000100000000000000100000000100 eebd85f4",
        );
        assert_eq!(file.len(), 87);
        let ranges = [meta("a", 1, 44), meta("b", 45, 42)];
        let dvs = decode_deletion_vector_index(&file, &ranges, "dvindex-64", true).unwrap();
        assert_eq!(dvs[0].1.iter().collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(dvs[1].1.iter().collect::<Vec<_>>(), vec![1]);
        let input: Vec<(String, DeletionVector)> = vec![
            ("a".into(), DeletionVector::from_positions([2, 3])),
            ("b".into(), DeletionVector::from_positions([1])),
        ];
        let (bytes, metas) = encode_deletion_vector_index(&input, true).unwrap();
        assert_eq!(bytes, file);
        assert_eq!((metas[0].length, metas[1].length), (44, 42));
        assert_eq!(dv_entry_range(&ranges[1], 87), 45..87);
    }

    #[test]
    fn containers_round_trip() {
        // array, run (long ranges), bitmap (dense random-ish) and several keys, 64-bit keys.
        let mut positions: Vec<u64> = (0..5000).map(|i| i * 3).collect(); // bitmap in key 0
        positions.extend(100_000..120_000); // runs
        positions.extend([1 << 20, (1 << 20) + 7, 2_000_000_000]);
        let dv = DeletionVector::from_positions(positions.clone());
        assert_eq!(dv.cardinality(), positions.len() as u64);
        assert_eq!(dv.iter().collect::<Vec<_>>(), positions);
        for p in [0, 3, 14_997, 100_000, 119_999, 1 << 20, 2_000_000_000] {
            assert!(dv.is_deleted(p), "{p}");
        }
        for p in [1, 15_000, 99_999, 120_000, (1 << 20) + 1, 2_000_000_001] {
            assert!(!dv.is_deleted(p), "{p}");
        }
        let (entry, len) = dv.encode_32().unwrap();
        assert_eq!(len as usize, entry.len() - 8);
        let back = DeletionVector::decode_entry(&entry, len, "x", true).unwrap();
        assert_eq!(back, dv);
        let mut far = positions.clone();
        far.push(1 << 40);
        let dv64 = DeletionVector::from_positions(far.clone());
        assert!(dv64.encode_32().is_err());
        let (entry, len) = dv64.encode_64().unwrap();
        assert_eq!(len as usize, entry.len());
        let back = DeletionVector::decode_entry(&entry, len, "x", true).unwrap();
        assert_eq!(back.iter().collect::<Vec<_>>(), far);
        assert_eq!(
            dv.union(&DeletionVector::from_positions([1, 2]))
                .cardinality(),
            dv.cardinality() + 2
        );
    }

    #[test]
    fn corrupt_entries() {
        let file = hexs("01 00000018 5e43f2d0 3a300000010000000000010010000000 02000300 c898f63d");
        let err = |file: &[u8], m: DeletionVectorMeta| match DeletionVector::decode_at(
            file,
            &m,
            "index/index-1",
            true,
        )
        .unwrap_err()
        {
            Error::Corrupt {
                path,
                format,
                reason,
            } => {
                assert_eq!(path, "index/index-1");
                assert_eq!(format, "deletion-vector");
                reason
            }
            other => panic!("{other:?}"),
        };
        assert!(err(&file, meta("a", 1, 25)).contains("size not match"));
        assert!(err(&file, meta("a", 2, 24)).contains("magic"));
        assert!(err(&file, meta("a", 40, 24)).contains("outside"));
        assert!(err(&file[..20], meta("a", 1, 24)).contains("truncated"));
        let mut bad_crc = file.clone();
        *bad_crc.last_mut().unwrap() ^= 1;
        assert!(err(&bad_crc, meta("a", 1, 24)).contains("CRC"));
        assert!(DeletionVector::decode_at(&bad_crc, &meta("a", 1, 24), "p", false).is_ok());
        let mut bad_version = file.clone();
        bad_version[0] = 2;
        assert!(err(&bad_version, meta("a", 1, 24)).contains("version"));
        // Cardinality recorded in the index manifest must match.
        let mut m = meta("a", 1, 24);
        m.cardinality = Some(3);
        assert!(decode_deletion_vector_index(&file, &[m], "p", true).is_err());
    }
}
