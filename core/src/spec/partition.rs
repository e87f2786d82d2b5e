//! Partition directory names, bucket directories and data file paths.
//!
//! Source: Java `org.apache.paimon.utils.PartitionPathUtils` (escaping, path generation),
//! `InternalRowPartitionComputer#generatePartValues` (value strings, default name),
//! `FileStorePathFactory#relativeBucketPath` (bucket directories),
//! `org.apache.paimon.table.system.FilesTable` (the `partition` column).
//! Layout: `spec/table-layout.md` §1, §1.2.
//!
//! Readers take partition values from the `_PARTITION` row, never from the path: the path
//! maps NULL and blank strings alike to the default partition name.

use crate::error::{Error, Result};
use crate::spec::binary_row::{BinaryRow, Datum};
use crate::spec::data_file::{DataFileMeta, join};
use crate::spec::file_names::BUCKET_DIR_PREFIX;
use crate::spec::types::DataField;

/// Default of `partition.default-name`.
pub const DEFAULT_PARTITION_NAME: &str = "__DEFAULT_PARTITION__";

/// Bucket number of the postpone bucket (`bucket = -2`), stored in `bucket-postpone`.
///
/// Source: Java `org.apache.paimon.table.BucketMode#POSTPONE_BUCKET`.
pub const POSTPONE_BUCKET: i32 = -2;

/// How partition values become directory names (table options `partition.default-name`,
/// `partition.legacy-name`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionNaming {
    /// Name used for NULL and whitespace-only values (`partition.default-name`).
    pub default_name: String,
    /// `partition.legacy-name` (default `true`): Java `toString` of the internal value
    /// (DATE as its day count); `false`: the value cast to STRING (DATE as `yyyy-MM-dd`).
    pub legacy_name: bool,
}

impl Default for PartitionNaming {
    fn default() -> Self {
        PartitionNaming {
            default_name: DEFAULT_PARTITION_NAME.to_owned(),
            legacy_name: true,
        }
    }
}

/// Java `Character#isWhitespace`: space separators except no-break spaces, plus `\t`..`\r`
/// and `\u{1C}`..`\u{1F}`.
fn java_is_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | '\u{1C}'..='\u{1F}'
            | ' '
            | '\u{1680}'
            | '\u{2000}'..='\u{2006}'
            | '\u{2008}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{205F}'
            | '\u{3000}'
    )
}

fn needs_escaping(c: char) -> bool {
    matches!(
        c,
        '\u{0}'
            ..='\u{1F}'
                | '"'
                | '#'
                | '%'
                | '\''
                | '*'
                | '/'
                | ':'
                | '='
                | '?'
                | '\\'
                | '\u{7F}'
                | '{'
                | '}'
                | '['
                | ']'
                | '^'
    )
}

/// Escape a partition key or value for a path (Java `PartitionPathUtils#escapePathName`):
/// `0x00-0x1F " # % ' * / : = ? \ 0x7F { } [ ] ^` become `%` + two uppercase hex digits;
/// everything else (space, non-ASCII) is kept.
pub fn escape_path_name(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if needs_escaping(c) {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The directory value string of each partition key: `(key name, value)` in key order,
/// unescaped; NULL or whitespace-only values become `naming.default_name`.
///
/// # Errors
/// [`Error::Corrupt`] if the row does not decode with the keys' types.
pub fn partition_values(
    keys: &[DataField],
    partition: &BinaryRow,
    naming: &PartitionNaming,
) -> Result<Vec<(String, String)>> {
    let types: Vec<_> = keys.iter().map(|f| f.data_type.clone()).collect();
    let values = partition.fields(&types)?;
    Ok(keys
        .iter()
        .zip(values)
        .map(|(field, value)| {
            let s = if value.is_null() {
                None
            } else if naming.legacy_name {
                Some(value.to_string())
            } else {
                value.cast_to_string(&field.data_type)
            };
            let s = match s {
                Some(s) if !s.chars().all(java_is_whitespace) => s,
                _ => naming.default_name.clone(),
            };
            (field.name.clone(), s)
        })
        .collect())
}

/// Relative partition directory: `escape(k1)=escape(v1)/escape(k2)=escape(v2)/` with a
/// trailing `/`; `""` for an unpartitioned table (no keys).
///
/// # Errors
/// [`Error::Corrupt`] if the row does not decode; [`Error::Invalid`] for an empty key name.
pub fn partition_path(
    keys: &[DataField],
    partition: &BinaryRow,
    naming: &PartitionNaming,
) -> Result<String> {
    let mut out = String::new();
    for (name, value) in partition_values(keys, partition, naming)? {
        if name.is_empty() {
            return Err(Error::invalid("partition key name must not be empty"));
        }
        out.push_str(&escape_path_name(&name));
        out.push('=');
        out.push_str(&escape_path_name(&value));
        out.push('/');
    }
    Ok(out)
}

/// Bucket directory name: `bucket-<n>`, `bucket-postpone` for [`POSTPONE_BUCKET`].
pub fn bucket_dir_name(bucket: i32) -> String {
    if bucket == POSTPONE_BUCKET {
        format!("{BUCKET_DIR_PREFIX}postpone")
    } else {
        format!("{BUCKET_DIR_PREFIX}{bucket}")
    }
}

/// Bucket directory path: `<data_root>/<partition_path>bucket-<n>` (no trailing `/`).
/// `data_root` is the table root, or `<table root>/<data-file.path-directory>`; `""` gives a
/// path relative to it. `partition_path` is as returned by [`partition_path`].
pub fn bucket_path(data_root: &str, partition_path: &str, bucket: i32) -> String {
    join(
        data_root,
        &format!("{partition_path}{}", bucket_dir_name(bucket)),
    )
}

/// Path of a data file: its external path if set, else `<bucket path>/<file name>`.
pub fn data_file_path(
    data_root: &str,
    partition_path: &str,
    bucket: i32,
    file: &DataFileMeta,
) -> String {
    file.path_in_bucket(&bucket_path(data_root, partition_path, bucket))
}

/// The partition as Java's `$files` system table renders its `partition` column: the row cast
/// to STRING, `{v1, v2}` with `null` for NULL (e.g. `{2024-01-01, 12}`; `{}` for an
/// unpartitioned table).
///
/// # Errors
/// [`Error::Corrupt`] if the row does not decode with the keys' types.
pub fn render_partition(keys: &[DataField], partition: &BinaryRow) -> Result<String> {
    let types: Vec<_> = keys.iter().map(|f| f.data_type.clone()).collect();
    let values = partition.fields(&types)?;
    let parts: Vec<String> = values
        .iter()
        .zip(keys)
        .map(|(v, f)| {
            v.cast_to_string(&f.data_type)
                .unwrap_or_else(|| "null".to_owned())
        })
        .collect();
    Ok(format!("{{{}}}", parts.join(", ")))
}

/// The partition as pypaimon's `$files` renders it: `k1=v1/k2=v2` with Python's `str` of
/// each value (`None` for NULL, `True`/`False`), `None` (the Rust value) for an
/// unpartitioned table.
///
/// # Errors
/// [`Error::Corrupt`] if the row does not decode with the keys' types.
pub fn render_partition_pypaimon(
    keys: &[DataField],
    partition: &BinaryRow,
) -> Result<Option<String>> {
    if keys.is_empty() {
        return Ok(None);
    }
    let types: Vec<_> = keys.iter().map(|f| f.data_type.clone()).collect();
    let values = partition.fields(&types)?;
    let parts: Vec<String> = values
        .iter()
        .zip(keys)
        .map(|(v, f)| {
            let s = match v {
                Datum::Null => "None".to_owned(),
                Datum::Boolean(true) => "True".to_owned(),
                Datum::Boolean(false) => "False".to_owned(),
                _ => v.cast_to_string(&f.data_type).unwrap_or_default(),
            };
            format!("{}={s}", f.name)
        })
        .collect();
    Ok(Some(parts.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::types::{DataType, TypeKind};

    fn field(id: i32, name: &str, kind: TypeKind) -> DataField {
        DataField {
            id,
            name: name.into(),
            data_type: DataType::nullable(kind),
            description: None,
            default_value: None,
        }
    }

    fn string() -> TypeKind {
        TypeKind::VarChar {
            length: i32::MAX as u32,
        }
    }

    #[test]
    fn escape_set() {
        // The audit's confirmed escape set (spec §1.2).
        assert_eq!(
            escape_path_name("/=:%?#'\"\\{[^]}\t"),
            "%2F%3D%3A%25%3F%23%27%22%5C%7B%5B%5E%5D%7D%09"
        );
        assert_eq!(escape_path_name("a b ü*"), "a b ü%2A");
        assert_eq!(escape_path_name("\u{7f}\u{1}"), "%7F%01");
    }

    #[test]
    fn paths() {
        let keys = vec![field(0, "dt", string()), field(1, "hr", TypeKind::Int)];
        let types: Vec<_> = keys.iter().map(|f| f.data_type.clone()).collect();
        let naming = PartitionNaming::default();
        let row = BinaryRow::encode(
            &[Datum::String("2024-01-01".into()), Datum::Int(13)],
            &types,
        )
        .unwrap();
        assert_eq!(
            partition_path(&keys, &row, &naming).unwrap(),
            "dt=2024-01-01/hr=13/"
        );
        assert_eq!(render_partition(&keys, &row).unwrap(), "{2024-01-01, 13}");
        assert_eq!(
            render_partition_pypaimon(&keys, &row).unwrap().unwrap(),
            "dt=2024-01-01/hr=13"
        );
        for blank in [
            Datum::Null,
            Datum::String("".into()),
            Datum::String(" \t".into()),
        ] {
            let row = BinaryRow::encode(&[blank, Datum::Null], &types).unwrap();
            assert_eq!(
                partition_path(&keys, &row, &naming).unwrap(),
                "dt=__DEFAULT_PARTITION__/hr=__DEFAULT_PARTITION__/"
            );
        }
        let row =
            BinaryRow::encode(&[Datum::String("a/b".into()), Datum::Int(-1)], &types).unwrap();
        assert_eq!(
            partition_path(&keys, &row, &naming).unwrap(),
            "dt=a%2Fb/hr=-1/"
        );
        assert_eq!(bucket_path("", "dt=x/", 3), "dt=x/bucket-3");
        assert_eq!(
            bucket_path("root", "", POSTPONE_BUCKET),
            "root/bucket-postpone"
        );
        assert_eq!(
            partition_path(&[], &BinaryRow::empty(), &naming).unwrap(),
            ""
        );
        assert_eq!(render_partition(&[], &BinaryRow::empty()).unwrap(), "{}");
    }

    #[test]
    fn date_legacy_and_cast() {
        // DATE keys: legacy name is the day count (d=19724 for 2024-01-02, spec §1.2).
        let keys = vec![field(0, "d", TypeKind::Date)];
        let row = BinaryRow::encode(&[Datum::Date(19724)], &[keys[0].data_type.clone()]).unwrap();
        assert_eq!(
            partition_path(&keys, &row, &PartitionNaming::default()).unwrap(),
            "d=19724/"
        );
        let cast = PartitionNaming {
            legacy_name: false,
            ..PartitionNaming::default()
        };
        assert_eq!(partition_path(&keys, &row, &cast).unwrap(), "d=2024-01-02/");
        assert_eq!(render_partition(&keys, &row).unwrap(), "{2024-01-02}");
    }
}
