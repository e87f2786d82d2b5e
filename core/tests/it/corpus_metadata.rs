//! Every schema, snapshot and tag file of the corpus decodes, matches the expected files and
//! round-trips through our encoders.

use paimon_kernel::spec::schema::{decode_schema, encode_schema};
use paimon_kernel::spec::snapshot::{
    decode_hint, decode_snapshot, decode_tag, encode_snapshot, encode_tag,
};
use paimon_kernel::spec::{DataType, TableSchema};
use serde_json::Value;

use crate::common::{corpus_tables, expected, files_in, table_dir};

fn read(table: &str, rel: &str) -> Vec<u8> {
    std::fs::read(table_dir(table).join(rel)).unwrap()
}

/// The expected file's type JSON in Java's form: pypaimon's `nullable` keys dropped and
/// `TIMESTAMP_LTZ(p)` spelled `TIMESTAMP(p) WITH LOCAL TIME ZONE`.
fn javaize(v: &Value) -> Value {
    match v {
        Value::String(s) => match s.strip_prefix("TIMESTAMP_LTZ(") {
            Some(rest) => {
                let (p, tail) = rest.split_once(')').unwrap();
                Value::from(format!("TIMESTAMP({p}) WITH LOCAL TIME ZONE{tail}"))
            }
            None => v.clone(),
        },
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "nullable")
                .map(|(k, v)| (k.clone(), javaize(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(javaize).collect()),
        other => other.clone(),
    }
}

fn file_id(name: &str, prefix: &str) -> Option<i64> {
    name.strip_prefix(prefix)?.parse().ok()
}

#[test]
fn every_schema_file_decodes_and_round_trips() {
    let mut count = 0;
    for table in corpus_tables() {
        let mut latest: Option<TableSchema> = None;
        for name in files_in(&table, "schema") {
            let id = file_id(&name, "schema-").unwrap_or_else(|| panic!("{table}/{name}"));
            let rel = format!("schema/{name}");
            let bytes = read(&table, &rel);
            let schema = decode_schema(&bytes, &rel).unwrap_or_else(|e| panic!("{table}: {e}"));
            count += 1;
            assert_eq!(schema.id, id, "{table}/{rel}");
            assert_eq!(schema.version, 3, "{table}/{rel}");
            assert_eq!(
                schema.raw_json.as_deref().map(str::as_bytes),
                Some(&bytes[..])
            );
            // Every field type re-serializes to the stored JSON in Java's spelling.
            let stored: Value = serde_json::from_slice(&bytes).unwrap();
            for (field, json) in schema
                .fields
                .iter()
                .zip(stored["fields"].as_array().unwrap())
            {
                assert_eq!(
                    field.data_type.to_json(),
                    javaize(&json["type"]),
                    "{table}/{rel} {}",
                    field.name
                );
                assert_eq!(
                    DataType::from_json(&field.data_type.to_json()).unwrap(),
                    field.data_type
                );
            }
            // highestFieldId is at least every (nested) field id.
            for f in &schema.fields {
                assert!(f.id <= schema.highest_field_id, "{table}/{rel}");
            }
            // Round trip.
            let encoded = encode_schema(&schema).unwrap();
            let again = decode_schema(&encoded, "encoded").unwrap();
            assert_eq!(again, schema, "{table}/{rel}");
            assert_eq!(encode_schema(&again).unwrap(), encoded);
            if schema.is_primary_key_table() {
                assert!(!schema.trimmed_primary_keys().unwrap().is_empty());
            }
            schema.core_options().merge_engine().unwrap();
            schema.core_options().batch_scan_skip_level0().unwrap();
            if latest.as_ref().is_none_or(|l| l.id < schema.id) {
                latest = Some(schema);
            }
        }
        let latest = latest.unwrap_or_else(|| panic!("{table} has no schema"));
        let exp = expected(&table);
        assert_eq!(Some(latest.id), exp["schema_id"].as_i64(), "{table}");
        let exp_fields = exp["fields"].as_array().unwrap();
        assert_eq!(latest.fields.len(), exp_fields.len(), "{table}");
        for (f, e) in latest.fields.iter().zip(exp_fields) {
            assert_eq!(Some(i64::from(f.id)), e["id"].as_i64(), "{table}");
            assert_eq!(Some(f.name.as_str()), e["name"].as_str(), "{table}");
            assert_eq!(
                f.data_type.to_json(),
                javaize(&e["type"]),
                "{table} {}",
                f.name
            );
            if let Some(s) = e["type"].as_str() {
                assert_eq!(
                    f.data_type.to_string(),
                    javaize(&Value::from(s)).as_str().unwrap(),
                    "{table} {}",
                    f.name
                );
            }
        }
        let exp_pk: Vec<&str> = exp["primary_keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(latest.primary_keys, exp_pk, "{table}");
        let exp_part: Vec<&str> = exp["partition_keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(latest.partition_keys, exp_part, "{table}");
        if let Some(fmt) = exp["file_format"].as_str() {
            assert_eq!(latest.core_options().file_format(), fmt, "{table}");
        }
    }
    assert!(count >= 48, "only {count} schema files");
}

#[test]
fn every_snapshot_matches_expected() {
    let mut count = 0;
    for table in corpus_tables() {
        let exp = expected(&table);
        let exp_snaps = exp["snapshots"].as_array().unwrap();
        let mut ids = Vec::new();
        for name in files_in(&table, "snapshot") {
            let Some(id) = file_id(&name, "snapshot-") else {
                continue;
            };
            let rel = format!("snapshot/{name}");
            let bytes = read(&table, &rel);
            let s = decode_snapshot(&bytes, &rel).unwrap_or_else(|e| panic!("{table}: {e}"));
            count += 1;
            assert_eq!(s.id, id, "{table}/{rel}");
            ids.push(id);
            let e = exp_snaps
                .iter()
                .find(|e| e["id"].as_i64() == Some(id))
                .unwrap_or_else(|| panic!("{table}: snapshot {id} not in expected"));
            assert_eq!(Some(s.schema_id), e["schemaId"].as_i64(), "{table} {id}");
            assert_eq!(
                Some(s.commit_kind.to_string().as_str()),
                e["commitKind"].as_str(),
                "{table} {id}"
            );
            assert_eq!(
                Some(s.total_record_count),
                e["totalRecordCount"].as_i64(),
                "{table} {id}"
            );
            assert_eq!(
                Some(s.delta_record_count),
                e["deltaRecordCount"].as_i64(),
                "{table} {id}"
            );
            assert_eq!(
                s.next_row_id,
                e.get("nextRowId").and_then(Value::as_i64),
                "{table} {id}"
            );
            assert_eq!(
                s.index_manifest.as_deref(),
                e.get("indexManifest").and_then(Value::as_str),
                "{table} {id}"
            );
            // Round trip, and our encoding holds exactly the keys of the stored file.
            let encoded = encode_snapshot(&s).unwrap();
            assert_eq!(
                decode_snapshot(&encoded, "encoded").unwrap(),
                s,
                "{table} {id}"
            );
            let stored: Value = serde_json::from_slice(&bytes).unwrap();
            let ours: Value = serde_json::from_slice(&encoded).unwrap();
            assert_eq!(ours, stored, "{table} {id}");
        }
        ids.sort();
        assert_eq!(ids.len(), exp_snaps.len(), "{table}");
        let latest = decode_hint(&read(&table, "snapshot/LATEST"));
        assert_eq!(latest, ids.last().copied(), "{table}");
        assert_eq!(latest, exp["snapshot_id"].as_i64(), "{table}");
    }
    assert!(count >= 112, "only {count} snapshots");
}

#[test]
fn every_tag_matches_expected() {
    let mut count = 0;
    for table in corpus_tables() {
        let exp = expected(&table);
        let exp_tags = exp["tags"].as_object().cloned().unwrap_or_default();
        let names = files_in(&table, "tag");
        assert_eq!(names.len(), exp_tags.len(), "{table}");
        for name in names {
            let tag_name = name.strip_prefix("tag-").unwrap();
            let rel = format!("tag/{name}");
            let bytes = read(&table, &rel);
            let tag = decode_tag(&bytes, &rel).unwrap();
            count += 1;
            assert_eq!(
                Some(tag.snapshot.id),
                exp_tags[tag_name].as_i64(),
                "{table} {tag_name}"
            );
            assert_eq!(tag.tag_create_time, None);
            // A pypaimon tag is the snapshot JSON: it equals the tagged snapshot file.
            let snap = decode_snapshot(
                &read(&table, &format!("snapshot/snapshot-{}", tag.snapshot.id)),
                "s",
            );
            if let Ok(snap) = snap {
                assert_eq!(snap, tag.snapshot, "{table} {tag_name}");
            }
            assert_eq!(decode_tag(&encode_tag(&tag).unwrap(), "t").unwrap(), tag);
        }
    }
    assert!(count >= 2, "only {count} tags");
}

/// Truncated and byte-mutated metadata files never panic: they decode to `Corrupt` naming the
/// file, or (a mutation that still is valid JSON) to a value.
#[test]
fn mutated_metadata_never_panics() {
    let cases = [
        ("evo_pk", "schema/schema-2"),
        ("all_types_parquet", "schema/schema-0"),
        ("blob_nested", "schema/schema-0"),
        ("append_row_tracking", "snapshot/snapshot-2"),
        ("append_tags_rollback", "tag/tag-v4"),
    ];
    for (table, rel) in cases {
        let bytes = read(table, rel);
        let decode = |b: &[u8]| -> Result<(), paimon_kernel::Error> {
            if rel.starts_with("schema/") {
                decode_schema(b, rel).map(drop)
            } else if rel.starts_with("tag/") {
                decode_tag(b, rel).map(drop)
            } else {
                decode_snapshot(b, rel).map(drop)
            }
        };
        for len in 0..bytes.len() {
            let err = decode(&bytes[..len]).expect_err("truncated file decoded");
            assert!(
                matches!(&err, paimon_kernel::Error::Corrupt { path, .. } if path == rel),
                "{table}/{rel} at {len}: {err:?}"
            );
        }
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut m = bytes.clone();
            let pos = (state % m.len() as u64) as usize;
            m[pos] = b"\"{}[],:0123456789 -.eE\\xNOT"[(state >> 32) as usize % 27];
            if let Err(e) = decode(&m) {
                assert!(
                    matches!(&e, paimon_kernel::Error::Corrupt { path, .. } if path == rel),
                    "{table}/{rel}: {e:?}"
                );
            }
        }
    }
}
