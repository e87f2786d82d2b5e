//! Nested schema evolution by field id through [`FileRead`], in Parquet, ORC and Avro data files,
//! with and without a deletion vector.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;
use crate::encode::DataFileEncoder;
use crate::io::{Machine, MemoryStore};
use crate::scan::DeletionFile;
use crate::spec::CoreOptions;

fn fields(v: Value) -> Vec<DataField> {
    serde_json::from_value(v).unwrap()
}

/// The schema the file is written with: ROW in ROW, ARRAY<ROW>, MAP<ROW, ROW>,
/// ARRAY<ARRAY<ROW>>.
fn old_fields() -> Vec<DataField> {
    fields(json!([
        {"id": 0, "name": "id", "type": "INT NOT NULL"},
        {"id": 1, "name": "r", "type": {"type": "ROW", "fields": [
            {"id": 2, "name": "x", "type": "INT"},
            {"id": 3, "name": "y", "type": "STRING"},
            {"id": 4, "name": "z", "type": {"type": "ROW", "fields": [
                {"id": 5, "name": "a", "type": "INT"},
                {"id": 6, "name": "b", "type": "STRING"}]}},
            {"id": 7, "name": "d", "type": "STRING"}]}},
        {"id": 8, "name": "ar", "type": {"type": "ARRAY", "element": {"type": "ROW", "fields": [
            {"id": 9, "name": "p", "type": "INT"},
            {"id": 10, "name": "q", "type": "STRING"}]}}},
        {"id": 11, "name": "m", "type": {"type": "MAP",
            "key": {"type": "ROW NOT NULL", "fields": [
                {"id": 12, "name": "k1", "type": "INT"},
                {"id": 13, "name": "k2", "type": "STRING"}]},
            "value": {"type": "ROW", "fields": [
                {"id": 14, "name": "u", "type": "INT"},
                {"id": 15, "name": "v", "type": "STRING"}]}}},
        {"id": 16, "name": "aa", "type": {"type": "ARRAY", "element": {"type": "ARRAY",
            "element": {"type": "ROW", "fields": [
                {"id": 17, "name": "e", "type": "INT"},
                {"id": 18, "name": "f", "type": "STRING"}]}}}}
    ]))
}

/// The read schema: `r.x` INT → BIGINT, `r.y` → `yy`, `r.z` → `zz` with `b` → `bb` and `a`
/// dropped and re-added (id 22, STRING), `r.d` dropped and re-added (id 21), `r.w` added (20),
/// `ar.element.p` dropped and re-added (23) after `q` → `qq`, the map value reordered with
/// `v` → `vv`, `u` → BIGINT and `t` added (24), `aa`'s `f` → `ff`. The map key (a ROW) is
/// unchanged: Java changes map values only (`SchemaManager`) and refuses to read a map whose key
/// type changed (`SchemaEvolutionUtil`: "different key types").
fn new_fields() -> Vec<DataField> {
    fields(json!([
        {"id": 0, "name": "id", "type": "INT NOT NULL"},
        {"id": 1, "name": "r", "type": {"type": "ROW", "fields": [
            {"id": 2, "name": "x", "type": "BIGINT"},
            {"id": 3, "name": "yy", "type": "STRING"},
            {"id": 4, "name": "zz", "type": {"type": "ROW", "fields": [
                {"id": 6, "name": "bb", "type": "STRING"},
                {"id": 22, "name": "a", "type": "STRING"}]}},
            {"id": 20, "name": "w", "type": "INT"},
            {"id": 21, "name": "d", "type": "STRING"}]}},
        {"id": 8, "name": "ar", "type": {"type": "ARRAY", "element": {"type": "ROW", "fields": [
            {"id": 10, "name": "qq", "type": "STRING"},
            {"id": 23, "name": "p", "type": "INT"}]}}},
        {"id": 11, "name": "m", "type": {"type": "MAP",
            "key": {"type": "ROW NOT NULL", "fields": [
                {"id": 12, "name": "k1", "type": "INT"},
                {"id": 13, "name": "k2", "type": "STRING"}]},
            "value": {"type": "ROW", "fields": [
                {"id": 15, "name": "vv", "type": "STRING"},
                {"id": 14, "name": "u", "type": "BIGINT"},
                {"id": 24, "name": "t", "type": "INT"}]}}},
        {"id": 16, "name": "aa", "type": {"type": "ARRAY", "element": {"type": "ARRAY",
            "element": {"type": "ROW", "fields": [
                {"id": 17, "name": "e", "type": "INT"},
                {"id": 18, "name": "ff", "type": "STRING"}]}}}}
    ]))
}

fn old_rows() -> Vec<Value> {
    (0..4)
        .map(|i| {
            json!({
                "id": i,
                "r": {"x": -1000 * i, "y": format!("y{i}"), "z": {"a": i, "b": format!("b{i}")},
                      "d": format!("old-d{i}")},
                "ar": [{"p": i, "q": format!("q{i}")}, {"p": null, "q": "longer-than-seven"}],
                "m": [[{"k1": i, "k2": format!("k{i}")}, {"u": 7 * i, "v": format!("v{i}")}]],
                "aa": [[{"e": i, "f": format!("f{i}")}], []]
            })
        })
        .collect()
}

/// What Java reads from [`old_rows`] under [`new_fields`]: renamed fields keep their values,
/// added and re-added fields are NULL (the dropped `d`, `a` and `p` do not come back).
fn expected_rows(ids: &[i64]) -> Vec<Value> {
    ids.iter()
        .map(|&i| {
            json!({
                "id": i,
                "r": {"x": -1000 * i, "yy": format!("y{i}"), "zz": {"bb": format!("b{i}"), "a": null},
                      "w": null, "d": null},
                "ar": [{"qq": format!("q{i}"), "p": null}, {"qq": "longer-than-seven", "p": null}],
                "m": [[{"k1": i, "k2": format!("k{i}")}, {"vv": format!("v{i}"), "u": 7 * i, "t": null}]],
                "aa": [[{"e": i, "ff": format!("f{i}")}], []]
            })
        })
        .collect()
}

fn schema(id: i64, fields: Vec<DataField>) -> TableSchema {
    TableSchema {
        version: 3,
        id,
        fields,
        highest_field_id: 24,
        partition_keys: Vec::new(),
        primary_keys: Vec::new(),
        options: BTreeMap::new(),
        comment: None,
        time_millis: 0,
        raw_json: None,
    }
}

/// Write [`old_rows`] as a `format` data file under schema 0, then read it with
/// [`new_fields`] (deleting the rows at `deleted` through a deletion vector).
fn read_evolved(format: &str, deleted: &[u64], columns: &[&str]) -> Vec<Value> {
    let old = old_fields();
    let arrow = crate::types::paimon_to_arrow_schema(&old).unwrap();
    let rows: Vec<serde_json::Map<String, Value>> = old_rows()
        .into_iter()
        .map(|r| r.as_object().unwrap().clone())
        .collect();
    let batch = crate::canonical::parse::batch_from_rows(&rows, &arrow).unwrap();
    let mut encoder = DataFileEncoder::try_new(&old, format, &CoreOptions::default()).unwrap();
    encoder.write(&batch).unwrap();
    let bytes = encoder.finish().unwrap();

    let mut store = MemoryStore::new();
    let name = format!("data-0.{format}");
    let path = format!("bucket-0/{name}");
    let file = DataFileMeta {
        file_name: name.clone(),
        file_size: bytes.len() as i64,
        row_count: rows.len() as i64,
        ..DataFileMeta::test_default()
    };
    store.objects.insert(path.clone(), bytes.into());
    let deletion_file = (!deleted.is_empty()).then(|| {
        let dv = DeletionVector::from_positions(deleted.iter().copied());
        let (index, ranges) = crate::format::deletion_vector::encode_deletion_vector_index(
            &[(name.clone(), dv)],
            false,
        )
        .unwrap();
        let range = &ranges[0];
        store
            .objects
            .insert("index/dv-0".into(), index.clone().into());
        DeletionFile {
            path: "index/dv-0".into(),
            offset: i64::from(range.offset),
            length: i64::from(range.length),
            cardinality: range.cardinality,
            index_file_size: index.len() as i64,
        }
    });
    let file_schema = schema(0, old);
    let read_fields: Vec<DataField> = new_fields()
        .into_iter()
        .filter(|f| columns.is_empty() || columns.contains(&f.name.as_str()))
        .collect();
    let spec =
        FileReadSpec::try_new(read_fields.into_iter().map(FileColumn::Field).collect()).unwrap();
    let machine = Machine::new("read", move |io: crate::io::Io<RecordBatch>| async move {
        let mut read = FileRead::open(
            &io,
            &path,
            &file,
            &file_schema,
            &spec,
            deletion_file.as_ref(),
            2,
        )
        .await?;
        while let Some(b) = read.next_batch(&io).await? {
            io.emit(b);
        }
        Ok(())
    });
    let batches = store.run(machine).unwrap();
    crate::canonical::batches_rows(&batches).unwrap()
}

fn project(rows: Vec<Value>, columns: &[&str]) -> Vec<Value> {
    rows.into_iter()
        .map(|r| {
            let o = r.as_object().unwrap();
            Value::Object(
                columns
                    .iter()
                    .map(|c| (c.to_string(), o[*c].clone()))
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn nested_fields_evolve_by_id_in_every_format() {
    for format in ["parquet", "orc", "avro"] {
        assert_eq!(
            read_evolved(format, &[], &[]),
            expected_rows(&[0, 1, 2, 3]),
            "{format}"
        );
        // A projection of single nested columns.
        for cols in [&["r"][..], &["ar", "id"][..], &["m"][..]] {
            let want_cols: Vec<&str> = new_fields()
                .iter()
                .map(|f| f.name.as_str())
                .filter(|n| cols.contains(n))
                .collect::<Vec<_>>()
                .into_iter()
                .map(|n| *cols.iter().find(|c| **c == n).unwrap())
                .collect();
            assert_eq!(
                read_evolved(format, &[], cols),
                project(expected_rows(&[0, 1, 2, 3]), &want_cols),
                "{format} {cols:?}"
            );
        }
    }
}

#[test]
fn nested_evolution_with_a_deletion_vector() {
    for format in ["parquet", "orc", "avro"] {
        assert_eq!(
            read_evolved(format, &[0, 2], &[]),
            expected_rows(&[1, 3]),
            "{format}"
        );
    }
}
