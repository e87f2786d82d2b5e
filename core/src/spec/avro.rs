//! Reading Avro object container files of the manifest family as generic records, with fields
//! looked up by name (never by position or record name).
//!
//! `spec/table-layout.md` §5.1: decode with the writer schema stored in the file; unknown
//! fields are ignored, missing nullable fields read as null, nullable fields are unions with
//! `null` first. Codecs: `null`, `deflate`, `snappy`, `zstandard`, `bzip2`, `xz` (Java writes
//! the `manifest.compression` option, default `zstd`, as the matching Avro codec; `bzip2` and
//! `xz` are decompressed by `spec::avro_codec`).

use apache_avro::types::Value;

use crate::error::{Error, Result};

/// Decode every record of a manifest-family file: an Avro object container file (top-level
/// schema a record, or `["null", record]` as Paimon 0.9 writes), or a Parquet / ORC file
/// (`manifest.format`; see `spec::manifest_columnar`), chosen by the magic bytes.
///
/// # Errors
/// [`Error::Corrupt`] (format `format`, or `parquet-manifest` / `orc-manifest`, naming
/// `path`) for a bad header, an unknown codec, a truncated or corrupt block, or a top-level
/// value that is not a record.
pub(crate) fn read_records(
    bytes: &[u8],
    path: &str,
    format: &'static str,
) -> Result<Vec<Vec<(String, Value)>>> {
    let mut out = Vec::new();
    for_each_record(bytes, path, format, |_, fields| {
        out.push(fields);
        Ok(())
    })?;
    Ok(out)
}

/// As [`read_records`], handing each record to `visit` (with its index) as soon as it is
/// decoded instead of collecting them: a manifest of many entries is then never held as
/// generic Avro values all at once, only as what `visit` keeps. The first error of `visit`
/// stops the decoding and is returned.
///
/// # Errors
/// As [`read_records`]; whatever `visit` returns.
pub(crate) fn for_each_record(
    bytes: &[u8],
    path: &str,
    format: &'static str,
    mut visit: impl FnMut(usize, Vec<(String, Value)>) -> Result<()>,
) -> Result<()> {
    // Parquet and ORC manifests (`manifest.format`) decode to the same generic records.
    use super::manifest_columnar::{ManifestFileFormat, read_columnar_records};
    if let Some(f @ (ManifestFileFormat::Parquet | ManifestFileFormat::Orc)) =
        ManifestFileFormat::sniff(bytes)
    {
        for (i, fields) in read_columnar_records(bytes, path, f)?
            .into_iter()
            .enumerate()
        {
            visit(i, fields)?;
        }
        return Ok(());
    }
    check_header_map(bytes, path, format)?;
    // bzip2 and xz blocks are decompressed here (apache-avro's decoders panic on bad blocks).
    let plain = super::avro_codec::to_null_codec(bytes, path, format)?;
    let bytes = plain.as_deref().unwrap_or(bytes);
    // apache-avro 0.21 panics on some invalid writer schemas (an `unwrap` on a bad record
    // name in `Name::parse`, found by fuzzing): turn its panics into an error on this file.
    // `visit` only runs between the decoder's steps; a panic of its own is reported the same
    // way (it is never expected: visitors return errors).
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        decode_container(bytes, path, format, &mut visit)
    }))
    .unwrap_or_else(|_| {
        Err(Error::corrupt(
            path,
            format,
            "bad Avro container: the decoder rejected its writer schema or data (panicked)",
        ))
    })
}

fn decode_container(
    bytes: &[u8],
    path: &str,
    format: &'static str,
    visit: &mut impl FnMut(usize, Vec<(String, Value)>) -> Result<()>,
) -> Result<()> {
    let reader = apache_avro::Reader::new(bytes)
        .map_err(|e| Error::corrupt(path, format, format!("bad Avro container header: {e}")))?;
    for (i, value) in reader.enumerate() {
        let value =
            value.map_err(|e| Error::corrupt(path, format, format!("Avro record {i}: {e}")))?;
        // Paimon 0.9 (and writers modelled on it) give the manifest files a top-level schema
        // `["null", record]`: a record wrapped in a union branch.
        let value = match value {
            Value::Union(_, inner) => *inner,
            v => v,
        };
        match value {
            Value::Record(fields) => visit(i, fields)?,
            other => {
                return Err(Error::corrupt(
                    path,
                    format,
                    format!("Avro record {i} is not a record: {other:?}"),
                ));
            }
        }
    }
    Ok(())
}

/// Walk the metadata map of the container header (magic `Obj\x01`, then blocks of
/// `count` (zig-zag long; negative: followed by the block's byte size) key/value pairs of
/// length-prefixed bytes, ending with a 0 count) and check that every block count and length
/// fits in the remaining bytes. apache-avro 0.21 reserves a map block's `count` entries
/// before reading them, so a forged count in a tiny file would allocate gigabytes.
fn check_header_map(bytes: &[u8], path: &str, format: &'static str) -> Result<()> {
    let bad = |reason: String| {
        Error::corrupt(path, format, format!("bad Avro container header: {reason}"))
    };
    if bytes.get(..4) != Some(b"Obj\x01".as_slice()) {
        return Err(bad("missing magic Obj\\x01".to_string()));
    }
    let mut pos = 4usize;
    let long = |pos: &mut usize| -> Result<i64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = bytes.get(*pos) else {
                return Err(bad(format!("metadata map truncated at byte {pos}")));
            };
            *pos += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
            }
        }
        Err(bad(format!(
            "varint longer than 10 bytes before byte {pos}"
        )))
    };
    loop {
        let count = long(&mut pos)?;
        if count == 0 {
            return Ok(());
        }
        if count < 0 {
            long(&mut pos)?; // the block's size in bytes
        }
        let remaining = bytes.len().saturating_sub(pos) as u64;
        // Every entry takes at least two bytes (the key and value lengths).
        if count.unsigned_abs() > remaining / 2 {
            return Err(bad(format!(
                "metadata map block of {count} entries at byte {pos} but only {remaining} bytes left"
            )));
        }
        for _ in 0..count.unsigned_abs() * 2 {
            let len = long(&mut pos)?;
            let end = u64::try_from(len)
                .ok()
                .and_then(|l| (pos as u64).checked_add(l))
                .filter(|e| *e <= bytes.len() as u64);
            match end {
                Some(e) => pos = e as usize,
                None => {
                    return Err(bad(format!(
                        "metadata map string of {len} bytes at byte {pos} exceeds the file of {} bytes",
                        bytes.len()
                    )));
                }
            }
        }
    }
}

/// Strip union wrappers; `None` for null.
fn unwrap(v: &Value) -> Option<&Value> {
    match v {
        Value::Null => None,
        Value::Union(_, inner) => unwrap(inner),
        other => Some(other),
    }
}

/// A record being decoded: its fields, the file and a description for errors.
pub(crate) struct Rec<'a> {
    fields: &'a [(String, Value)],
    path: &'a str,
    format: &'static str,
    what: &'a str,
}

impl<'a> Rec<'a> {
    pub(crate) fn new(
        fields: &'a [(String, Value)],
        path: &'a str,
        format: &'static str,
        what: &'a str,
    ) -> Self {
        Rec {
            fields,
            path,
            format,
            what,
        }
    }

    pub(crate) fn path(&self) -> &'a str {
        self.path
    }

    pub(crate) fn corrupt(&self, reason: impl std::fmt::Display) -> Error {
        Error::corrupt(self.path, self.format, format!("{}: {reason}", self.what))
    }

    /// The non-null value of field `name`, `None` if missing or null.
    pub(crate) fn get(&self, name: &str) -> Option<&'a Value> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| unwrap(v))
    }

    fn required(&self, name: &str) -> Result<&'a Value> {
        self.get(name)
            .ok_or_else(|| self.corrupt(format!("required field {name} is missing or null")))
    }

    fn type_error(&self, name: &str, expected: &str, got: &Value) -> Error {
        self.corrupt(format!("field {name} should be {expected}, got {got:?}"))
    }

    fn as_long(&self, name: &str, v: &Value) -> Result<i64> {
        match v {
            Value::Long(x)
            | Value::TimestampMillis(x)
            | Value::TimestampMicros(x)
            | Value::TimestampNanos(x)
            | Value::LocalTimestampMillis(x)
            | Value::LocalTimestampMicros(x)
            | Value::LocalTimestampNanos(x)
            | Value::TimeMicros(x) => Ok(*x),
            Value::Int(x) | Value::Date(x) | Value::TimeMillis(x) => Ok(i64::from(*x)),
            other => Err(self.type_error(name, "a long", other)),
        }
    }

    fn as_int(&self, name: &str, v: &Value) -> Result<i32> {
        match v {
            Value::Int(x) | Value::Date(x) | Value::TimeMillis(x) => Ok(*x),
            Value::Long(x) => i32::try_from(*x)
                .map_err(|_| self.corrupt(format!("field {name}: {x} does not fit an int"))),
            other => Err(self.type_error(name, "an int", other)),
        }
    }

    fn as_string(&self, name: &str, v: &'a Value) -> Result<&'a str> {
        match v {
            Value::String(s) | Value::Enum(_, s) => Ok(s),
            other => Err(self.type_error(name, "a string", other)),
        }
    }

    fn as_bytes(&self, name: &str, v: &'a Value) -> Result<&'a [u8]> {
        match v {
            Value::Bytes(b) | Value::Fixed(_, b) => Ok(b),
            other => Err(self.type_error(name, "bytes", other)),
        }
    }

    fn as_array(&self, name: &str, v: &'a Value) -> Result<&'a [Value]> {
        match v {
            Value::Array(items) => Ok(items),
            other => Err(self.type_error(name, "an array", other)),
        }
    }

    pub(crate) fn long(&self, name: &str) -> Result<i64> {
        self.as_long(name, self.required(name)?)
    }

    pub(crate) fn opt_long(&self, name: &str) -> Result<Option<i64>> {
        self.get(name).map(|v| self.as_long(name, v)).transpose()
    }

    pub(crate) fn int(&self, name: &str) -> Result<i32> {
        self.as_int(name, self.required(name)?)
    }

    pub(crate) fn opt_int(&self, name: &str) -> Result<Option<i32>> {
        self.get(name).map(|v| self.as_int(name, v)).transpose()
    }

    pub(crate) fn string(&self, name: &str) -> Result<String> {
        Ok(self.as_string(name, self.required(name)?)?.to_owned())
    }

    pub(crate) fn opt_string(&self, name: &str) -> Result<Option<String>> {
        self.get(name)
            .map(|v| self.as_string(name, v).map(str::to_owned))
            .transpose()
    }

    pub(crate) fn bytes(&self, name: &str) -> Result<&'a [u8]> {
        self.as_bytes(name, self.required(name)?)
    }

    pub(crate) fn opt_bytes(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.get(name)
            .map(|v| self.as_bytes(name, v).map(<[u8]>::to_vec))
            .transpose()
    }

    /// A nested record field.
    pub(crate) fn record(&self, name: &str, what: &'a str) -> Result<Rec<'a>> {
        self.opt_record(name, what)?
            .ok_or_else(|| self.corrupt(format!("required field {name} is missing or null")))
    }

    pub(crate) fn opt_record(&self, name: &str, what: &'a str) -> Result<Option<Rec<'a>>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Record(fields)) => Ok(Some(Rec::new(fields, self.path, self.format, what))),
            Some(other) => Err(self.type_error(name, "a record", other)),
        }
    }

    /// Array of non-null strings; `None` if the field is missing or null.
    pub(crate) fn opt_string_array(&self, name: &str) -> Result<Option<Vec<String>>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        self.as_array(name, v)?
            .iter()
            .map(|item| {
                let item =
                    unwrap(item).ok_or_else(|| self.corrupt(format!("null element in {name}")))?;
                self.as_string(name, item).map(str::to_owned)
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// Array of non-null longs; `None` if the field is missing or null.
    pub(crate) fn opt_long_array(&self, name: &str) -> Result<Option<Vec<i64>>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        self.as_array(name, v)?
            .iter()
            .map(|item| {
                let item =
                    unwrap(item).ok_or_else(|| self.corrupt(format!("null element in {name}")))?;
                self.as_long(name, item)
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// Array of non-null ints; `None` if the field is missing or null.
    pub(crate) fn opt_int_array(&self, name: &str) -> Result<Option<Vec<i32>>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        self.as_array(name, v)?
            .iter()
            .map(|item| {
                let item =
                    unwrap(item).ok_or_else(|| self.corrupt(format!("null element in {name}")))?;
                self.as_int(name, item)
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// Array of nullable longs collected into `C`; `None` if the field is missing or null.
    pub(crate) fn opt_nullable_long_array<C: FromIterator<Option<i64>>>(
        &self,
        name: &str,
    ) -> Result<Option<C>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        self.as_array(name, v)?
            .iter()
            .map(|item| unwrap(item).map(|x| self.as_long(name, x)).transpose())
            .collect::<Result<C>>()
            .map(Some)
    }

    /// Array of records (null elements are an error); `None` if missing or null.
    pub(crate) fn opt_record_array(
        &self,
        name: &str,
        what: &'a str,
    ) -> Result<Option<Vec<Rec<'a>>>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        self.as_array(name, v)?
            .iter()
            .map(|item| match unwrap(item) {
                Some(Value::Record(fields)) => Ok(Rec::new(fields, self.path, self.format, what)),
                Some(other) => Err(self.type_error(name, "an array of records", other)),
                None => Err(self.corrupt(format!("null element in {name}"))),
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }
}

/// Check the `_VERSION` format identifier of a manifest-family record.
///
/// `expected` 2 (manifests, manifest lists): 1 → "not compatible, recreate the table",
/// other → unsupported. `expected` 1 (index manifests): other → unsupported.
pub(crate) fn check_version(rec: &Rec<'_>, expected: i32) -> Result<()> {
    let version = rec.int("_VERSION")?;
    if version == expected {
        return Ok(());
    }
    if expected == 2 && version == 1 {
        return Err(Error::unsupported(format!(
            "{}: the current version {expected} is not compatible with the version {version}, \
             please recreate the table",
            rec.path()
        )));
    }
    Err(Error::unsupported(format!(
        "{}: unsupported version {version} (expected {expected})",
        rec.path()
    )))
}

#[cfg(test)]
mod tests {
    use apache_avro::schema::UnionSchema;
    use apache_avro::types::Value;
    use apache_avro::{Reader, Schema, Writer};

    use crate::spec::{decode_index_manifest, decode_manifest, decode_manifest_list};

    /// `bytes` (an Avro container of records) rewritten with the top-level schema
    /// `["null", record]` that Paimon 0.9 gives manifests, every row in the record branch.
    fn as_nullable_union(bytes: &[u8]) -> Vec<u8> {
        let reader = Reader::new(bytes).unwrap();
        let record = reader.writer_schema().clone();
        let rows: Vec<Value> = reader.map(|v| v.unwrap()).collect();
        let union = Schema::Union(UnionSchema::new(vec![Schema::Null, record]).unwrap());
        let mut writer = Writer::new(&union, Vec::new());
        for row in rows {
            writer.append(Value::Union(1, Box::new(row))).unwrap();
        }
        writer.into_inner().unwrap()
    }

    fn java_file(prefix: &str) -> (String, Vec<u8>) {
        // A Paimon 0.9.0 table of conformance/java-tables.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../conformance/java-tables/p090_avro_pk/manifest");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(prefix))
            .collect();
        names.sort();
        let name = names.pop().unwrap();
        let bytes = std::fs::read(dir.join(&name)).unwrap();
        (name, bytes)
    }

    #[test]
    fn a_top_level_null_union_reads_as_its_record() {
        let (name, plain) = java_file("manifest-list-");
        let union = as_nullable_union(&plain);
        assert_ne!(plain, union);
        let want = decode_manifest_list(&plain, &name).unwrap();
        assert!(!want.is_empty());
        assert_eq!(decode_manifest_list(&union, &name).unwrap(), want);

        let (name, plain) = java_file("manifest-4");
        let want = decode_manifest(&plain, &name).unwrap();
        assert!(!want.is_empty());
        assert_eq!(
            decode_manifest(&as_nullable_union(&plain), &name).unwrap(),
            want
        );

        let (name, plain) = java_file("index-manifest-");
        let want = decode_index_manifest(&plain, &name).unwrap();
        assert!(!want.is_empty());
        assert_eq!(
            decode_index_manifest(&as_nullable_union(&plain), &name).unwrap(),
            want
        );
    }

    #[test]
    fn a_null_top_level_row_is_corrupt() {
        let (name, plain) = java_file("manifest-list-");
        let record = Reader::new(plain.as_slice())
            .unwrap()
            .writer_schema()
            .clone();
        let union = Schema::Union(UnionSchema::new(vec![Schema::Null, record]).unwrap());
        let mut writer = Writer::new(&union, Vec::new());
        writer
            .append(Value::Union(0, Box::new(Value::Null)))
            .unwrap();
        let bytes = writer.into_inner().unwrap();
        let err = decode_manifest_list(&bytes, &name).unwrap_err().to_string();
        assert!(err.contains("not a record") && err.contains(&name), "{err}");
    }
}
