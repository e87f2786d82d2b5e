//! Java `DataSplit#serialize` bytes of a [`DataSplit`]: the split encoding Java planners and
//! readers exchange, so a Java planner's splits can be read here and ours by Java.
//!
//! Layout (release-2.0.0 and release-1.4.2, `VERSION` 8; big-endian `DataOutputView`):
//!
//! ```text
//! int64 magic ‖ int32 version ‖ int64 snapshot id
//! ‖ int32 n ‖ (int32 arity ‖ row bytes)            partition (SerializationUtils.serializeBinaryRow)
//! ‖ int32 bucket ‖ utf bucket path
//! ‖ bool has total buckets [‖ int32 total buckets]
//! ‖ int32 0 ‖ byte 0                                 "before" files and deletion files: always none
//! ‖ int32 count ‖ count × DataFileMetaSerializer record
//! ‖ byte has deletion files [‖ int32 count ‖ count × (byte present [‖ utf path ‖ int64 offset
//!   ‖ int64 length ‖ int64 cardinality (-1: unknown)])]
//! ‖ bool is streaming ‖ bool raw convertible
//! ```
//!
//! `utf` is `DataOutput#writeUTF` (uint16 length, modified UTF-8).
//!
//! Paths: Java's deletion files carry absolute paths and its bucket path is absolute too
//! (`<table>/<partition>/bucket-N`); ours are relative to the table root. [`encode`] takes the
//! table's root URL to write Java's form; [`decode`] strips that root (a path under another
//! root stays absolute). Java's bytes do not record the size of a deletion vector's index file,
//! which [`DeletionFile::index_file_size`] holds: decoded splits get `i64::MAX` (the read then
//! asks for the entry's recorded length plus its header and checksum).
//!
//! Source: Java `org.apache.paimon.table.source.DataSplit#serialize` / `#deserialize`,
//! `DeletionFile#serializeList`, `SerializationUtils#serializeBinaryRow` (release-2.0.0).

use crate::commit::serializer::{Reader, encode_modified_utf8, read_data_file, write_data_file};
use crate::error::{Error, Result};
use crate::scan::planner::{DataSplit, DeletionFile};
use crate::spec::binary_row::{BinaryRow, RowOrigin};

/// Java `DataSplit.MAGIC`.
pub const MAGIC: i64 = -2_394_839_472_490_812_314;

/// The version [`encode`] writes and the only one [`decode`] reads (Java 1.4.2 and 2.0 write
/// it).
pub const VERSION: i32 = 8;

const FORMAT: &str = "data-split";

fn put_utf(out: &mut Vec<u8>, s: &str, what: &str) -> Result<()> {
    let bytes = encode_modified_utf8(s);
    let n = u16::try_from(bytes.len()).map_err(|_| {
        Error::invalid(format!(
            "{what}: {} bytes do not fit Java's writeUTF",
            bytes.len()
        ))
    })?;
    out.extend_from_slice(&n.to_be_bytes());
    out.extend_from_slice(&bytes);
    Ok(())
}

fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn put_len(out: &mut Vec<u8>, n: usize, what: &str) -> Result<()> {
    let n = i32::try_from(n).map_err(|_| Error::invalid(format!("{what}: {n} entries")))?;
    put_i32(out, n);
    Ok(())
}

/// `root/path` for a relative path; an absolute path as it is.
fn absolute(root: &str, path: &str) -> String {
    if crate::io::is_absolute(path) {
        path.to_string()
    } else {
        format!(
            "{}/{}",
            root.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }
}

/// `path` relative to `root` when under it; otherwise as it is.
fn relative(root: &str, path: &str) -> String {
    let root = root.trim_end_matches('/');
    let variants = [root.to_string(), root.replacen("file:///", "file:/", 1)];
    for r in variants {
        if !r.is_empty()
            && let Some(rest) = path.strip_prefix(&r)
            && let Some(rest) = rest.strip_prefix('/')
        {
            return rest.to_string();
        }
    }
    path.to_string()
}

/// Java `DataSplit#serialize` bytes of `split` (version [`VERSION`]); `table_root` is the
/// table's location as Java names it (e.g. `file:/warehouse/db.db/t`, `s3://b/db.db/t`),
/// prefixed to the bucket path and relative deletion-file paths.
///
/// # Errors
/// `Invalid` for a path longer than `writeUTF` allows; `Unsupported` for data files Java's
/// serializer cannot carry (`_WRITE_COLS_SEQUENCES`).
pub fn encode(split: &DataSplit, table_root: &str) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(256 + split.data_files.len() * 256);
    out.extend_from_slice(&MAGIC.to_be_bytes());
    put_i32(&mut out, VERSION);
    out.extend_from_slice(&split.snapshot_id.to_be_bytes());
    let row = split.partition.to_serialized();
    put_len(&mut out, row.len(), "partition")?;
    out.extend_from_slice(&row);
    put_i32(&mut out, split.bucket);
    put_utf(
        &mut out,
        &absolute(table_root, &split.bucket_path),
        "bucket path",
    )?;
    match split.total_buckets {
        Some(n) => {
            out.push(1);
            put_i32(&mut out, n);
        }
        None => out.push(0),
    }
    put_i32(&mut out, 0);
    out.push(0);
    put_len(&mut out, split.data_files.len(), "data files")?;
    for f in &split.data_files {
        write_data_file(&mut out, f)?;
    }
    match &split.deletion_files {
        None => out.push(0),
        Some(files) => {
            out.push(1);
            put_len(&mut out, files.len(), "deletion files")?;
            for d in files {
                match d {
                    None => out.push(0),
                    Some(d) => {
                        out.push(1);
                        put_utf(
                            &mut out,
                            &absolute(table_root, &d.path),
                            "deletion file path",
                        )?;
                        out.extend_from_slice(&d.offset.to_be_bytes());
                        out.extend_from_slice(&d.length.to_be_bytes());
                        out.extend_from_slice(&d.cardinality.unwrap_or(-1).to_be_bytes());
                    }
                }
            }
        }
    }
    out.push(0); // not streaming
    out.push(u8::from(split.raw_convertible));
    Ok(out)
}

/// Decode Java `DataSplit#serialize` bytes of version [`VERSION`]; paths under `table_root`
/// become relative to it (see the module docs).
///
/// # Errors
/// `Corrupt` (format `data-split`) for truncated, trailing or malformed bytes; `Unsupported`
/// for other versions, for "before" files and for streaming splits.
pub fn decode(bytes: &[u8], table_root: &str) -> Result<DataSplit> {
    let mut r = Reader::with_format(bytes, RowOrigin::new("data split bytes"), FORMAT);
    let magic = r.i64("magic")?;
    if magic != MAGIC {
        return Err(Error::unsupported(
            "Java DataSplit bytes of version 1 (no magic number; Java 0.8)",
        ));
    }
    let version = r.i32("version")?;
    if version != VERSION {
        return Err(Error::unsupported(format!(
            "Java DataSplit bytes of version {version} (this reads version {VERSION}: Java 1.4 and 2.0)"
        )));
    }
    let snapshot_id = r.i64("snapshot id")?;
    let n = r.count("partition")?;
    let row = r.take(n, "partition")?;
    let partition = BinaryRow::from_serialized_shared(row, r.origin())?;
    let bucket = r.i32("bucket")?;
    let bucket_path = relative(table_root, &r.utf("bucket path")?);
    let total_buckets = if r.bool("total buckets flag")? {
        Some(r.i32("total buckets")?)
    } else {
        None
    };
    if r.i32("before files")? != 0 {
        return Err(Error::unsupported("Java DataSplit bytes with before files"));
    }
    if r.u8("before deletion files")? != 0 {
        return Err(Error::unsupported(
            "Java DataSplit bytes with before deletion files",
        ));
    }
    let count = r.count("data files")?;
    let mut data_files = Vec::with_capacity(count.min(4096));
    for _ in 0..count {
        data_files.push(read_data_file(&mut r)?);
    }
    let deletion_files = match r.u8("deletion files flag")? {
        0 => None,
        1 => {
            let n = r.count("deletion files")?;
            let mut files = Vec::with_capacity(n.min(4096));
            for _ in 0..n {
                files.push(match r.u8("deletion file flag")? {
                    0 => None,
                    1 => {
                        let path = relative(table_root, &r.utf("deletion file path")?);
                        let offset = r.i64("deletion file offset")?;
                        let length = r.i64("deletion file length")?;
                        let cardinality = r.i64("deletion file cardinality")?;
                        Some(DeletionFile {
                            path,
                            offset,
                            length,
                            cardinality: (cardinality != -1).then_some(cardinality),
                            index_file_size: i64::MAX,
                        })
                    }
                    b => return Err(r.corrupt(format!("deletion file flag byte {b}"))),
                });
            }
            if files.len() != data_files.len() {
                return Err(r.corrupt(format!(
                    "{} deletion files for {} data files",
                    files.len(),
                    data_files.len()
                )));
            }
            Some(files)
        }
        b => return Err(r.corrupt(format!("deletion files flag byte {b}"))),
    };
    if r.bool("streaming")? {
        return Err(Error::unsupported("streaming Java DataSplit bytes"));
    }
    let raw_convertible = r.bool("raw convertible")?;
    r.finish()?;
    Ok(DataSplit {
        snapshot_id,
        partition,
        bucket,
        bucket_path,
        total_buckets,
        data_files,
        deletion_files,
        raw_convertible,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::data_file::DataFileMeta;

    fn split() -> DataSplit {
        let mut f = DataFileMeta::test_default();
        f.file_name = "data-1.parquet".into();
        f.file_size = 1234;
        f.row_count = 10;
        DataSplit {
            snapshot_id: 3,
            partition: BinaryRow::empty(),
            bucket: 1,
            bucket_path: "bucket-1".into(),
            total_buckets: Some(2),
            data_files: vec![f],
            deletion_files: Some(vec![Some(DeletionFile {
                path: "index/index-1".into(),
                offset: 1,
                length: 20,
                cardinality: Some(2),
                index_file_size: i64::MAX,
            })]),
            raw_convertible: true,
        }
    }

    #[test]
    fn round_trip_and_golden_prefix() {
        let s = split();
        let bytes = encode(&s, "file:/w/db.db/t").unwrap();
        // magic, version 8, snapshot 3, then the empty partition row (4 + 8 bytes).
        assert_eq!(
            &bytes[..24],
            &[
                0xDE, 0xC3, 0xD2, 0x30, 0x2C, 0x19, 0xEC, 0x66, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 3,
                0, 0, 0, 12
            ]
        );
        assert_eq!(&bytes[bytes.len() - 2..], &[0, 1]);
        let back = decode(&bytes, "file:/w/db.db/t").unwrap();
        assert_eq!(back, s);
        // Another root keeps Java's absolute paths.
        let other = decode(&bytes, "file:/elsewhere").unwrap();
        assert_eq!(other.bucket_path, "file:/w/db.db/t/bucket-1");
    }

    #[test]
    fn modified_utf8_round_trips() {
        use crate::commit::serializer::decode_modified_utf8;
        for s in ["", "a/b", "nul\0x", "é", "π-654", "😀 emoji"] {
            assert_eq!(
                decode_modified_utf8(&encode_modified_utf8(s)).as_deref(),
                Some(s)
            );
        }
        assert_eq!(encode_modified_utf8("\0"), vec![0xC0, 0x80]);
        assert_eq!(encode_modified_utf8("😀").len(), 6);
    }

    #[test]
    fn corrupt_bytes_are_errors() {
        let bytes = encode(&split(), "file:/w").unwrap();
        for n in 0..bytes.len() {
            assert!(
                decode(&bytes[..n], "file:/w").is_err(),
                "prefix of {n} bytes"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer, "file:/w").is_err());
    }
}
