//! Snapshot files (`snapshot/snapshot-<id>`), tag files (`tag/tag-<name>`) and the hint files
//! `snapshot/LATEST` / `snapshot/EARLIEST`.
//!
//! Source: Java `org.apache.paimon.Snapshot`, `org.apache.paimon.tag.Tag`,
//! `org.apache.paimon.utils.HintFileUtils`. Format per `spec/table-layout.md` §3-4.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::spec::json::{describe, to_jackson_pretty};

/// Snapshot format version written by current Java and pypaimon.
pub const CURRENT_SNAPSHOT_VERSION: i32 = 3;

/// `commitIdentifier` of batch commits (Java `BatchWriteBuilder.COMMIT_IDENTIFIER`).
pub const BATCH_COMMIT_IDENTIFIER: i64 = i64::MAX;

/// What a commit did.
///
/// Source: Java `Snapshot.CommitKind`. An unknown kind in a file is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CommitKind {
    /// New data files were added, none deleted (pypaimon also uses it for data-evolution
    /// updates, MERGE INTO and deletes).
    Append,
    /// Existing data files were compacted.
    Compact,
    /// Data files were added to overwrite (or just delete) existing ones.
    Overwrite,
    /// Statistics were collected.
    Analyze,
}

impl fmt::Display for CommitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CommitKind::Append => "APPEND",
            CommitKind::Compact => "COMPACT",
            CommitKind::Overwrite => "OVERWRITE",
            CommitKind::Analyze => "ANALYZE",
        })
    }
}

fn legacy_version() -> i32 {
    1
}

/// One snapshot: the state of the table after one commit.
///
/// Source: Java `org.apache.paimon.Snapshot`. JSON keys are Java's (camelCase), in Java's
/// order; optional keys are omitted when `None`; unknown keys (e.g. legacy `logOffsets`) are
/// ignored; explicit `null` on an optional key reads as `None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// `version`: 1 (table-store 0.2; absent in the file → 1), 2, or 3 (current).
    #[serde(default = "legacy_version")]
    pub version: i32,
    /// `uuid`: random UUID of this snapshot (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// `id`: the snapshot id (= the file name's id), from 1.
    pub id: i64,
    /// `schemaId`: the latest schema id at commit time.
    pub schema_id: i64,
    /// `baseManifestList`: manifest list (in `manifest/`) of all files before this commit.
    pub base_manifest_list: String,
    /// `baseManifestListSize` in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_manifest_list_size: Option<i64>,
    /// `deltaManifestList`: manifest list of the changes of this commit.
    pub delta_manifest_list: String,
    /// `deltaManifestListSize` in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_manifest_list_size: Option<i64>,
    /// `changelogManifestList`: manifest list of changelog files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog_manifest_list: Option<String>,
    /// `changelogManifestListSize` in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog_manifest_list_size: Option<i64>,
    /// `indexManifest`: the (full) index manifest file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_manifest: Option<String>,
    /// `commitUser`.
    pub commit_user: String,
    /// `writerVersion`: the Paimon version that wrote the snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_version: Option<String>,
    /// `commitIdentifier`; batch commits use [`BATCH_COMMIT_IDENTIFIER`].
    pub commit_identifier: i64,
    /// `commitKind`.
    pub commit_kind: CommitKind,
    /// `timeMillis`: commit wall-clock time in epoch millis.
    pub time_millis: i64,
    /// `totalRecordCount`: Σ row counts of all live data files; absent (v1/v2) → 0 as in Java.
    #[serde(default)]
    pub total_record_count: i64,
    /// `deltaRecordCount`: added − deleted row counts of this commit; absent → 0 as in Java.
    #[serde(default)]
    pub delta_record_count: i64,
    /// `changelogRecordCount`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog_record_count: Option<i64>,
    /// `watermark` in millis (older files may hold `i64::MIN`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watermark: Option<i64>,
    /// `statistics`: statistics file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistics: Option<String>,
    /// `properties`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<BTreeMap<String, String>>,
    /// `nextRowId`: next `_ROW_ID` of row-tracking tables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_row_id: Option<i64>,
    /// `operation`: `WRITE`, `OVERWRITE`, `DELETE`, `TRUNCATE`, `UPDATE`, `MERGE`,
    /// `CREATE_TABLE_AS_SELECT`, `REPLACE_TABLE_AS_SELECT`,
    /// `CREATE_OR_REPLACE_TABLE_AS_SELECT` (kept as text so newer values still read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
}

/// Decode a snapshot file (or a changelog file, which has the same form).
///
/// # Errors
/// [`Error::Corrupt`] (format `snapshot`) naming `path` for invalid or truncated JSON, a
/// missing or mistyped key, or an unknown `commitKind`.
pub fn decode_snapshot(bytes: &[u8], path: &str) -> Result<Snapshot> {
    serde_json::from_slice(bytes).map_err(|e| Error::corrupt(path, "snapshot", describe(&e)))
}

/// Encode a snapshot as Java writes it (Jackson pretty printer, Java key order, `None`
/// omitted).
///
/// # Errors
/// Only if JSON serialization fails, which it does not for these types ([`Error::Invalid`]).
pub fn encode_snapshot(snapshot: &Snapshot) -> Result<Vec<u8>> {
    to_jackson_pretty(snapshot).map_err(|e| Error::invalid(format!("cannot encode snapshot: {e}")))
}

/// A Java `LocalDateTime` as Jackson writes it: `[year, month, day, hour, minute, second,
/// nano]` (trailing `second`/`nano` omitted when zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LocalDateTime {
    /// Year.
    pub year: i32,
    /// Month, 1..=12.
    pub month: u32,
    /// Day of month, 1..=31.
    pub day: u32,
    /// Hour, 0..=23.
    pub hour: u32,
    /// Minute, 0..=59.
    pub minute: u32,
    /// Second, 0..=59.
    pub second: u32,
    /// Nanosecond of the second.
    pub nano: u32,
}

/// A Java `Duration` as Jackson writes it: a decimal number of seconds with nine fraction
/// digits (`5.000000000`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct JavaDuration {
    /// Whole seconds.
    pub seconds: i64,
    /// Nanoseconds, 0..1_000_000_000.
    pub nanos: u32,
}

/// A tag: a snapshot kept under a name, with optional retention fields.
///
/// Source: Java `org.apache.paimon.tag.Tag`. The file is the snapshot JSON plus
/// `tagCreateTime` and `tagTimeRetained` (pypaimon 2.1.0 writes the snapshot JSON only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    /// The tagged snapshot.
    pub snapshot: Snapshot,
    /// `tagCreateTime` (local date-time of the writer).
    pub tag_create_time: Option<LocalDateTime>,
    /// `tagTimeRetained`.
    pub tag_time_retained: Option<JavaDuration>,
}

/// Decode a tag file.
///
/// # Errors
/// [`Error::Corrupt`] (format `tag`) naming `path`, as [`decode_snapshot`], or for a
/// malformed `tagCreateTime` / `tagTimeRetained`.
pub fn decode_tag(bytes: &[u8], path: &str) -> Result<Tag> {
    let corrupt = |reason: String| Error::corrupt(path, "tag", reason);
    let value: Value = serde_json::from_slice(bytes).map_err(|e| corrupt(describe(&e)))?;
    let (create, retained) = match &value {
        Value::Object(m) => (m.get("tagCreateTime"), m.get("tagTimeRetained")),
        _ => (None, None),
    };
    let tag_create_time = match create {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_local_date_time(v).ok_or_else(|| {
            corrupt(format!(
                "tagCreateTime must be a Jackson LocalDateTime, got {v}"
            ))
        })?),
    };
    let tag_time_retained = match retained {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_duration(v).ok_or_else(|| {
            corrupt(format!(
                "tagTimeRetained must be a number of seconds, got {v}"
            ))
        })?),
    };
    let snapshot: Snapshot = serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))?;
    Ok(Tag {
        snapshot,
        tag_create_time,
        tag_time_retained,
    })
}

/// Encode a tag as Java writes it: the snapshot JSON followed by `tagCreateTime` and
/// `tagTimeRetained` when set.
///
/// # Errors
/// As [`encode_snapshot`].
pub fn encode_tag(tag: &Tag) -> Result<Vec<u8>> {
    let mut out = encode_snapshot(&tag.snapshot)?;
    let mut extra = String::new();
    if let Some(t) = &tag.tag_create_time {
        let mut parts = vec![
            t.year.to_string(),
            t.month.to_string(),
            t.day.to_string(),
            t.hour.to_string(),
            t.minute.to_string(),
        ];
        if t.second > 0 || t.nano > 0 {
            parts.push(t.second.to_string());
            if t.nano > 0 {
                parts.push(t.nano.to_string());
            }
        }
        extra.push_str(&format!(
            ",\n  \"tagCreateTime\" : [ {} ]",
            parts.join(", ")
        ));
    }
    if let Some(d) = &tag.tag_time_retained {
        extra.push_str(&format!(
            ",\n  \"tagTimeRetained\" : {}.{:09}",
            d.seconds, d.nanos
        ));
    }
    if !extra.is_empty() {
        // The snapshot JSON ends with "\n}"; insert before it.
        let end = out.len().saturating_sub(2);
        let tail = out.split_off(end);
        out.extend_from_slice(extra.as_bytes());
        out.extend_from_slice(&tail);
    }
    Ok(out)
}

fn parse_local_date_time(v: &Value) -> Option<LocalDateTime> {
    let Value::Array(items) = v else {
        return None;
    };
    if !(5..=7).contains(&items.len()) {
        return None;
    }
    let num = |i: usize| -> Option<i64> {
        match items.get(i) {
            None => Some(0),
            Some(x) => x.as_i64(),
        }
    };
    let small = |i: usize| -> Option<u32> { u32::try_from(num(i)?).ok() };
    Some(LocalDateTime {
        year: i32::try_from(num(0)?).ok()?,
        month: small(1)?,
        day: small(2)?,
        hour: small(3)?,
        minute: small(4)?,
        second: small(5)?,
        nano: small(6)?,
    })
}

fn parse_duration(v: &Value) -> Option<JavaDuration> {
    let Value::Number(n) = v else {
        return None;
    };
    if let Some(i) = n.as_i64() {
        return Some(JavaDuration {
            seconds: i,
            nanos: 0,
        });
    }
    let f = n.as_f64()?;
    if !f.is_finite() || f.abs() > 9.0e15 {
        return None;
    }
    let seconds = f.floor();
    let nanos = ((f - seconds) * 1e9).round().clamp(0.0, 999_999_999.0);
    Some(JavaDuration {
        seconds: seconds as i64,
        nanos: nanos as u32,
    })
}

/// Parse a hint file (`snapshot/LATEST`, `snapshot/EARLIEST`): a decimal id, surrounding
/// whitespace tolerated. Anything else (not UTF-8, empty, not a number) → `None`: the file is
/// only a hint and readers fall back to listing.
pub fn decode_hint(bytes: &[u8]) -> Option<i64> {
    std::str::from_utf8(bytes).ok()?.trim().parse::<i64>().ok()
}

/// Encode a hint file: the decimal id, no newline (as Java's `commitHint`).
pub fn encode_hint(id: i64) -> Vec<u8> {
    id.to_string().into_bytes()
}

/// Path of snapshot `id` relative to the table root: `snapshot/snapshot-<id>`.
pub fn snapshot_path(id: i64) -> String {
    format!("snapshot/snapshot-{id}")
}

/// Path of tag `name` relative to the table root: `tag/tag-<name>`.
pub fn tag_path(name: &str) -> String {
    format!("tag/tag-{name}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Java's key order of `Snapshot` (with `writerVersion`, as Java master writes it).
    pub(crate) const JAVA_KEYS: [&str; 24] = [
        "version",
        "uuid",
        "id",
        "schemaId",
        "baseManifestList",
        "baseManifestListSize",
        "deltaManifestList",
        "deltaManifestListSize",
        "changelogManifestList",
        "changelogManifestListSize",
        "indexManifest",
        "commitUser",
        "writerVersion",
        "commitIdentifier",
        "commitKind",
        "timeMillis",
        "totalRecordCount",
        "deltaRecordCount",
        "changelogRecordCount",
        "watermark",
        "statistics",
        "properties",
        "nextRowId",
        "operation",
    ];

    /// Java's TagTest golden layout (with non-null manifest lists and commit user).
    const JAVA_TAG: &str = "{\n  \"version\" : 3,\n  \"uuid\" : \"snapshot-uuid\",\n  \"id\" : 0,\n  \"schemaId\" : 0,\n  \"baseManifestList\" : \"b\",\n  \"deltaManifestList\" : \"d\",\n  \"commitUser\" : \"u\",\n  \"writerVersion\" : \"java-2.1-SNAPSHOT-commit-id\",\n  \"commitIdentifier\" : 0,\n  \"commitKind\" : \"APPEND\",\n  \"timeMillis\" : 1000,\n  \"totalRecordCount\" : 0,\n  \"deltaRecordCount\" : 0,\n  \"tagCreateTime\" : [ 1969, 1, 1, 0, 0, 0, 123456789 ],\n  \"tagTimeRetained\" : 5.000000000\n}";

    #[test]
    fn java_tag_layout_round_trips() {
        let tag = decode_tag(JAVA_TAG.as_bytes(), "tag/tag-t").unwrap();
        assert_eq!(
            tag.tag_create_time,
            Some(LocalDateTime {
                year: 1969,
                month: 1,
                day: 1,
                hour: 0,
                minute: 0,
                second: 0,
                nano: 123_456_789
            })
        );
        assert_eq!(
            tag.tag_time_retained,
            Some(JavaDuration {
                seconds: 5,
                nanos: 0
            })
        );
        assert_eq!(
            tag.snapshot.writer_version.as_deref(),
            Some("java-2.1-SNAPSHOT-commit-id")
        );
        assert_eq!(
            String::from_utf8(encode_tag(&tag).unwrap()).unwrap(),
            JAVA_TAG
        );
        // The snapshot part alone, as Java's Snapshot.toJson writes it.
        let snap = String::from_utf8(encode_snapshot(&tag.snapshot).unwrap()).unwrap();
        let cut = JAVA_TAG.find(",\n  \"tagCreateTime\"").unwrap();
        assert_eq!(snap, format!("{}\n}}", &JAVA_TAG[..cut]));
        assert_eq!(decode_snapshot(snap.as_bytes(), "s").unwrap(), tag.snapshot);
    }

    #[test]
    fn every_optional_key_and_legacy_forms() {
        let full = r#"{"version":3,"uuid":"u1","id":7,"schemaId":2,"baseManifestList":"b","baseManifestListSize":10,
            "deltaManifestList":"d","deltaManifestListSize":11,"changelogManifestList":"c","changelogManifestListSize":12,
            "indexManifest":"i","commitUser":"cu","writerVersion":"w","commitIdentifier":9223372036854775807,
            "commitKind":"COMPACT","timeMillis":123,"totalRecordCount":5,"deltaRecordCount":-2,"changelogRecordCount":3,
            "watermark":-9223372036854775808,"statistics":"st","properties":{"k":"v"},"nextRowId":99,"operation":"MERGE",
            "futureKey":{"x":1}}"#;
        let s = decode_snapshot(full.as_bytes(), "p").unwrap();
        assert_eq!(s.commit_kind, CommitKind::Compact);
        assert_eq!(s.commit_identifier, BATCH_COMMIT_IDENTIFIER);
        assert_eq!(s.watermark, Some(i64::MIN));
        assert_eq!(s.delta_record_count, -2);
        assert_eq!(s.properties.as_ref().unwrap()["k"], "v");
        assert_eq!(s.operation.as_deref(), Some("MERGE"));
        let again = decode_snapshot(&encode_snapshot(&s).unwrap(), "p").unwrap();
        assert_eq!(again, s);
        let keys: Vec<String> =
            match serde_json::from_slice::<Value>(&encode_snapshot(&s).unwrap()).unwrap() {
                Value::Object(m) => m.keys().cloned().collect(),
                _ => panic!(),
            };
        assert_eq!(keys, JAVA_KEYS);

        // Legacy v1: no version, no record counts, explicit nulls, logOffsets.
        let v1 = r#"{"id":1,"schemaId":0,"baseManifestList":"b","deltaManifestList":"d","changelogManifestList":null,
            "commitUser":"u","commitIdentifier":1,"commitKind":"APPEND","timeMillis":5,"logOffsets":{}}"#;
        let s = decode_snapshot(v1.as_bytes(), "p").unwrap();
        assert_eq!(s.version, 1);
        assert_eq!((s.total_record_count, s.delta_record_count), (0, 0));
        assert_eq!(s.changelog_manifest_list, None);
    }

    #[test]
    fn corrupt_snapshots_name_the_file() {
        let good = br#"{"version":3,"id":1,"schemaId":0,"baseManifestList":"b","deltaManifestList":"d","commitUser":"u","commitIdentifier":1,"commitKind":"APPEND","timeMillis":5,"totalRecordCount":0,"deltaRecordCount":0}"#;
        assert!(decode_snapshot(good, "p").is_ok());
        let unknown_kind = String::from_utf8_lossy(good).replace("APPEND", "SQUASH");
        let missing = String::from_utf8_lossy(good).replace("\"schemaId\":0,", "");
        let null_required = String::from_utf8_lossy(good).replace("\"u\"", "null");
        for bad in [
            &good[..good.len() - 10],
            b"".as_slice(),
            b"nope".as_slice(),
            unknown_kind.as_bytes(),
            missing.as_bytes(),
            null_required.as_bytes(),
        ] {
            let err = decode_snapshot(bad, "t/snapshot/snapshot-3").unwrap_err();
            assert!(
                matches!(&err, Error::Corrupt { path, format: "snapshot", .. } if path == "t/snapshot/snapshot-3"),
                "{err:?}"
            );
        }
        let err = decode_snapshot(unknown_kind.as_bytes(), "s").unwrap_err();
        assert!(err.to_string().contains("SQUASH"), "{err}");
        let err = decode_tag(&good[..20], "t/tag/tag-x").unwrap_err();
        assert!(
            matches!(&err, Error::Corrupt { path, format: "tag", .. } if path == "t/tag/tag-x")
        );
    }

    #[test]
    fn hints() {
        assert_eq!(decode_hint(b"42"), Some(42));
        assert_eq!(decode_hint(b" 42\n"), Some(42));
        assert_eq!(decode_hint(b""), None);
        assert_eq!(decode_hint(b"4 2"), None);
        assert_eq!(decode_hint(b"x"), None);
        assert_eq!(decode_hint(&[0xff, 0x31]), None);
        assert_eq!(encode_hint(17), b"17");
    }
}
