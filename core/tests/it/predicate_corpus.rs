//! Pruning soundness on the real pypaimon corpus: for every live data file of every table,
//! predicates over its key and partition columns that the key statistics or the partition
//! values rule out select no row of the file.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use paimon_kernel::format::data_file::{FileFormat, decode_data_file};
use paimon_kernel::predicate::{CmpOp, ColumnStats, Literal, Predicate, Value, value_stats_fields};
use paimon_kernel::spec::partition::{PartitionNaming, data_file_path, partition_path};
use paimon_kernel::spec::{
    DataField, DataType, Datum, ManifestEntry, ManifestFileMeta, TableSchema, TypeKind,
    decode_manifest, decode_manifest_list, decode_schema, merge_entries,
};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn schema(root: &Path, id: i64) -> TableSchema {
    let path = root.join(format!("schema/schema-{id}"));
    decode_schema(&read(&path), &path.display().to_string()).unwrap()
}

/// Every manifest of the snapshot with its entries.
fn manifests(root: &Path, snapshot_id: i64) -> Vec<(ManifestFileMeta, Vec<ManifestEntry>)> {
    let snapshot: serde_json::Value = serde_json::from_slice(&read(
        &root.join(format!("snapshot/snapshot-{snapshot_id}")),
    ))
    .unwrap();
    let mut out = Vec::new();
    for key in ["baseManifestList", "deltaManifestList"] {
        let name = snapshot[key].as_str().unwrap();
        for meta in decode_manifest_list(&read(&root.join("manifest").join(name)), name).unwrap() {
            let bytes = read(&root.join("manifest").join(&meta.file_name));
            let entries = decode_manifest(&bytes, &meta.file_name).unwrap();
            out.push((meta, entries));
        }
    }
    out
}

/// A literal that coerces back to exactly `v` for a column of `kind`.
fn literal(v: &Value, kind: &TypeKind) -> Literal {
    match v {
        Value::Boolean(b) => Literal::Boolean(*b),
        Value::TinyInt(x) => Literal::Number(x.to_string()),
        Value::SmallInt(x) => Literal::Number(x.to_string()),
        Value::Int(x) => Literal::Number(x.to_string()),
        Value::BigInt(x) => Literal::Number(x.to_string()),
        Value::Float(x) if x.is_finite() => Literal::Number(format!("{x:?}")),
        Value::Double(x) if x.is_finite() => Literal::Number(format!("{x:?}")),
        Value::Float(x) => Literal::String(x.to_string()),
        Value::Double(x) => Literal::String(x.to_string()),
        Value::Decimal(u) => {
            let TypeKind::Decimal { scale, .. } = kind else {
                panic!("{kind:?}")
            };
            Literal::Number(format!("{u}e-{scale}"))
        }
        Value::String(s) => Literal::String(s.clone()),
        Value::Binary(b) => Literal::Binary(b.clone()),
        Value::Date(d) => Literal::Date(*d),
        Value::Time(ms) => Literal::Time(i64::from(*ms) * 1_000_000),
        Value::Timestamp(t) => Literal::Timestamp(*t),
    }
}

struct FileCase {
    name: String,
    rows: i64,
    stats: Vec<ColumnStats>,
    partition: Vec<Datum>,
    batch: arrow_array::RecordBatch,
}

#[test]
fn pruning_is_sound_on_corpus_files() {
    let mut tables: Vec<String> = std::fs::read_dir(corpus().join("corpus.db"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    tables.sort();
    let (mut checks, mut stats_pruned, mut partition_pruned, mut files_seen) = (0, 0, 0, 0);
    let mut manifest_pruned = 0;
    for table in tables {
        let root = corpus().join("corpus.db").join(&table);
        let expected: serde_json::Value =
            serde_json::from_slice(&read(&corpus().join(format!("{table}.expected.json"))))
                .unwrap();
        let read_schema = schema(&root, expected["schema_id"].as_i64().unwrap());
        let part_fields: Vec<DataField> = read_schema
            .partition_fields()
            .unwrap()
            .into_iter()
            .cloned()
            .collect();
        let part_types: Vec<DataType> = part_fields.iter().map(|f| f.data_type.clone()).collect();
        let manifests = manifests(&root, expected["snapshot_id"].as_i64().unwrap());
        let entries = merge_entries(
            manifests
                .iter()
                .flat_map(|(_, e)| e.clone())
                .collect::<Vec<_>>(),
        )
        .unwrap();

        let mut files = Vec::new();
        for e in &entries {
            let f = &e.file;
            let path = data_file_path(
                &root.to_string_lossy(),
                &partition_path(&part_fields, &e.partition, &PartitionNaming::default()).unwrap(),
                e.bucket,
                f,
            );
            let Some(format) = FileFormat::from_path(&path) else {
                continue;
            };
            if f.is_blob_file() {
                continue;
            }
            let Ok(decoded) =
                decode_data_file(Bytes::from(read(Path::new(&path))), &path, format, None, 0)
            else {
                // Known reader gaps are covered by the data-file tests.
                continue;
            };
            let batch =
                arrow_select::concat::concat_batches(&decoded.schema, &decoded.batches).unwrap();
            let file_schema = schema(&root, f.schema_id);
            let mut stats = Vec::new();
            if file_schema.is_primary_key_table() {
                let keys: Vec<DataField> = file_schema
                    .trimmed_primary_keys()
                    .unwrap()
                    .iter()
                    .map(|k| file_schema.field(k).unwrap().clone())
                    .collect();
                stats.extend(ColumnStats::from_simple_stats(&f.key_stats, &keys));
            }
            if let Some(fields) = value_stats_fields(f, &file_schema.fields) {
                stats.extend(ColumnStats::from_simple_stats(&f.value_stats, &fields));
            }
            files.push(FileCase {
                name: path.clone(),
                rows: f.row_count,
                stats,
                partition: e.partition.fields(&part_types).unwrap(),
                batch,
            });
        }
        files_seen += files.len();

        // Candidate literals: every statistics bound and partition value of the table.
        let mut candidates: Vec<(DataField, Value)> = Vec::new();
        let mut add = |field: &DataField, v: Option<Value>| {
            if let Some(v) = v {
                let Some(read_field) = read_schema.field_by_id(field.id) else {
                    return;
                };
                if read_field.data_type.kind == field.data_type.kind
                    && !candidates.iter().any(|(f, c)| f.id == field.id && c == &v)
                {
                    candidates.push((read_field.clone(), v));
                }
            }
        };
        for file in &files {
            for s in &file.stats {
                let f = read_schema.field_by_id(s.field_id).cloned();
                if let Some(f) = f.filter(|f| f.data_type.kind == s.data_type.kind) {
                    add(&f, s.min.clone());
                    add(&f, s.max.clone());
                }
            }
            for (f, d) in part_fields.iter().zip(&file.partition) {
                add(f, Value::from_datum(d));
            }
        }
        let mut predicates: Vec<Predicate> = Vec::new();
        for (f, v) in &candidates {
            let lit = literal(v, &f.data_type.kind);
            for op in [
                CmpOp::Eq,
                CmpOp::NotEq,
                CmpOp::Lt,
                CmpOp::LtEq,
                CmpOp::Gt,
                CmpOp::GtEq,
            ] {
                predicates.push(Predicate::compare(&f.name, op, lit.clone()));
            }
            predicates.push(Predicate::not_in(&f.name, vec![lit.clone()]));
            predicates.push(Predicate::is_null(&f.name));
            predicates.push(Predicate::is_not_null(&f.name));
        }
        for pair in candidates.windows(2) {
            let [(f1, v1), (f2, v2)] = pair else { continue };
            let (l1, l2) = (
                literal(v1, &f1.data_type.kind),
                literal(v2, &f2.data_type.kind),
            );
            if f1.id == f2.id {
                predicates.push(Predicate::is_in(&f1.name, vec![l1, l2]));
            } else {
                predicates.push(
                    Predicate::compare(&f1.name, CmpOp::GtEq, l1).and(Predicate::compare(
                        &f2.name,
                        CmpOp::LtEq,
                        l2,
                    )),
                );
            }
        }

        for p in &predicates {
            let bound = p
                .bind(&read_schema.fields)
                .unwrap_or_else(|e| panic!("{table}: {p}: {e}"));
            // Manifest level: `_PARTITION_STATS` over the manifest's entries.
            for (meta, entries) in &manifests {
                let stats = ColumnStats::from_simple_stats(&meta.partition_stats, &part_fields);
                let count = meta.num_added_files + meta.num_deleted_files;
                if !bound.stats_may_match(count, &stats) {
                    manifest_pruned += 1;
                    for e in entries {
                        let values = e.partition.fields(&part_types).unwrap();
                        assert!(
                            !bound.partition_may_match(&values, &part_fields),
                            "{table}: manifest {} pruned by {bound} holds a matching partition",
                            meta.file_name
                        );
                    }
                }
            }
            for file in &files {
                if bound
                    .referenced_columns()
                    .iter()
                    .any(|c| file.batch.column_by_name(c).is_none())
                {
                    continue;
                }
                let mask = bound
                    .evaluate(&file.batch)
                    .unwrap_or_else(|e| panic!("{}: {p}: {e}", file.name));
                let selected = mask.iter().filter(|v| *v == Some(true)).count();
                checks += 1;
                if !bound.stats_may_match(file.rows, &file.stats) {
                    stats_pruned += 1;
                    assert_eq!(
                        selected, 0,
                        "{}: stats pruned {bound} but rows match",
                        file.name
                    );
                }
                if !bound.partition_may_match(&file.partition, &part_fields) {
                    partition_pruned += 1;
                    assert_eq!(selected, 0, "{}: partition pruned {bound}", file.name);
                }
            }
        }
    }
    eprintln!(
        "{files_seen} files, {checks} checks, {stats_pruned} pruned by key stats, \
         {partition_pruned} by partition, {manifest_pruned} manifests by partition stats"
    );
    assert!(manifest_pruned >= 10, "{manifest_pruned} manifest prunes");
    assert!(files_seen >= 100, "{files_seen} files");
    assert!(stats_pruned >= 1000, "{stats_pruned} stats prunes");
    assert!(
        partition_pruned >= 100,
        "{partition_pruned} partition prunes"
    );
}
