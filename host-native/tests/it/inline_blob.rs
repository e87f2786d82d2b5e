//! BLOB columns stored inline in the data file (`blob-descriptor-field`, `blob-view-field`;
//! `paimon_kernel::blob::inline`): written as blob descriptors / view structs in the
//! normal data file of data-evolution and primary-key tables, read back as the bytes the
//! descriptors point at (a file outside the table) or as the view structs, through updates,
//! deletes and compactions; raw bytes are refused naming the column and row, and nothing is
//! committed. Java 2.0.0 (java-check's `read`) and pypaimon 2.1.0 read the tables too
//! where they can (see each test for what they say).

use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, LargeBinaryArray, RecordBatch};
use arrow_schema::{Field, Schema};
use paimon_kernel::format::blob_descriptor::{BlobDescriptor, BlobViewStruct};
use paimon_native::Table;
use paimon_native::compact::CompactOptions;
use serde_json::Value;

use crate::common::{java_read_lines_result, java_read_lines_with, table_rows};

/// The external file the descriptors point at: 4096 bytes, byte `i` = `i * 7 + 3`.
fn source_bytes() -> Vec<u8> {
    (0..4096u32).map(|i| (i * 7 + 3) as u8).collect()
}

/// A version-2 descriptor of `len` bytes at `offset` of `source`.
fn descriptor(source: &Path, offset: i64, len: i64) -> Vec<u8> {
    BlobDescriptor::new(format!("file:{}", source.display()), offset, len).serialize()
}

fn view(row_id: i64) -> Vec<u8> {
    BlobViewStruct {
        identifier: "db.upstream".into(),
        field_id: 7,
        row_id,
    }
    .serialize()
    .unwrap()
}

fn binary(values: Vec<Option<Vec<u8>>>) -> ArrayRef {
    Arc::new(LargeBinaryArray::from_iter(values))
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, c)| Field::new(*n, c.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns.into_iter().map(|(_, c)| c).collect(),
    )
    .unwrap()
}

async fn commit(table: &Table, b: &RecordBatch) -> paimon_native::Result<()> {
    let mut w = table.new_write().await?;
    w.write(b).await?;
    let messages = w.prepare_commit().await?;
    table.new_commit(None).commit(messages).await?;
    Ok(())
}

/// id → the values of `columns` (None for NULL), read with or without `blob-as-descriptor`.
async fn read(
    table: &Table,
    columns: &[&str],
    as_descriptor: bool,
) -> std::collections::BTreeMap<i32, Vec<Option<Vec<u8>>>> {
    let mut projection = vec!["id"];
    projection.extend_from_slice(columns);
    let batches = table
        .scan()
        .with_projection(projection)
        .with_blob_as_descriptor(as_descriptor)
        .to_batches()
        .await
        .unwrap();
    let mut out = std::collections::BTreeMap::new();
    for b in &batches {
        let ids = b.column(0).as_primitive::<arrow_array::types::Int32Type>();
        for r in 0..b.num_rows() {
            let values = (1..=columns.len())
                .map(|c| {
                    let col = b.column(c).as_binary::<i64>();
                    (!col.is_null(r)).then(|| col.value(r).to_vec())
                })
                .collect();
            out.insert(ids.value(r), values);
        }
    }
    out
}

/// A data-evolution table with a descriptor column `d`, a view column `v` and a `.blob`
/// column `b`: the normal file holds `id`, `d`, `v` (descriptors and view structs as given,
/// re-serialized), `.blob` files hold `b`; reads resolve `d` to the source's bytes and keep
/// `v`; `update` sets `d` of some rows (the others keep their stored descriptors);
/// compaction keeps the stored descriptors; raw bytes in `d` or a descriptor in `v` are
/// refused, naming the column and row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_evolution_table_with_inline_blob_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("source.bin");
    std::fs::write(&source, source_bytes()).unwrap();
    let loc = tmp.path().join("wh/db.db/t");
    let loc = loc.to_str().unwrap();
    let schema = r#"{"fields": [{"name": "id", "type": "INT"}, {"name": "d", "type": "BLOB"},
        {"name": "v", "type": "BLOB"}, {"name": "b", "type": "BLOB"}],
        "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true",
        "blob-descriptor-field": "d", "blob-view-field": "v", "compaction.min.file-num": "2"}}"#;
    let table = Table::create(loc, schema.as_bytes()).await.unwrap();
    let src = source_bytes();
    let range = |o: usize, l: usize| Some(src[o..o + l].to_vec());
    // A descriptor with bytes after it: stored without them.
    let mut long_descriptor = descriptor(&source, 100, 50);
    long_descriptor.extend_from_slice(b"ignored");
    let first = batch(vec![
        ("id", Arc::new(Int32Array::from(vec![0, 1, 2])) as ArrayRef),
        (
            "d",
            binary(vec![
                Some(long_descriptor),
                None,
                Some(descriptor(&source, 4000, 96)),
            ]),
        ),
        ("v", binary(vec![Some(view(10)), Some(view(11)), None])),
        ("b", binary(vec![Some(b"p0".to_vec()), Some(vec![]), None])),
    ]);
    commit(&table, &first).await.unwrap();
    let second = batch(vec![
        ("id", Arc::new(Int32Array::from(vec![3])) as ArrayRef),
        ("d", binary(vec![Some(descriptor(&source, 0, 10))])),
        // A view struct in a descriptor column is stored (as Java) and read back unresolved.
        ("v", binary(vec![Some(view(13))])),
        ("b", binary(vec![Some(b"p3".to_vec())])),
    ]);
    commit(&table, &second).await.unwrap();
    let files = table.scan().data_files().await.unwrap().unwrap();
    let write_cols: Vec<Option<Vec<String>>> = files
        .entries
        .iter()
        .map(|e| e.file.write_cols.clone())
        .collect();
    let normal = Some(vec!["id".to_string(), "d".into(), "v".into()]);
    assert_eq!(
        write_cols,
        vec![
            normal.clone(),
            Some(vec!["b".into()]),
            normal,
            Some(vec!["b".into()])
        ]
    );
    let want_bytes = |d3: Option<Vec<u8>>| {
        std::collections::BTreeMap::from([
            (
                0,
                vec![range(100, 50), Some(view(10)), Some(b"p0".to_vec())],
            ),
            (1, vec![None, Some(view(11)), Some(vec![])]),
            (2, vec![range(4000, 96), None, None]),
            (3, vec![d3, Some(view(13)), Some(b"p3".to_vec())]),
        ])
    };
    assert_eq!(
        read(&table, &["d", "v", "b"], false).await,
        want_bytes(range(0, 10))
    );
    let stored = read(&table, &["d"], true).await;
    assert_eq!(stored[&0], vec![Some(descriptor(&source, 100, 50))]);
    assert_eq!(stored[&1], vec![None]);

    // Refused before anything is written: raw bytes, a v1 descriptor, a descriptor in `v`.
    for (column, value, message) in [
        (
            "d",
            b"raw bytes".to_vec(),
            "require values to be a BlobDescriptor",
        ),
        ("v", descriptor(&source, 0, 1), "blob-view-field requires"),
    ] {
        let mut d = vec![
            Some(descriptor(&source, 0, 1)),
            Some(descriptor(&source, 0, 1)),
        ];
        let mut v = vec![Some(view(1)), Some(view(2))];
        if column == "d" {
            d[1] = Some(value);
        } else {
            v[1] = Some(value);
        }
        let bad = batch(vec![
            ("id", Arc::new(Int32Array::from(vec![8, 9])) as ArrayRef),
            ("d", binary(d)),
            ("v", binary(v)),
            ("b", binary(vec![None, None])),
        ]);
        let err = commit(&table, &bad).await.unwrap_err().to_string();
        assert!(err.contains(&format!("column '{column}'")), "{err}");
        assert!(err.contains("row 1"), "{err}");
        assert!(err.contains(message), "{err}");
    }
    assert_eq!(table.latest_snapshot().await.unwrap().unwrap().id, 2);

    // Update `d` of rows 1 and 3 by _ROW_ID (rows 0 and 2 keep their descriptors).
    let update = batch(vec![
        (
            "_ROW_ID",
            Arc::new(Int64Array::from(vec![1, 3])) as ArrayRef,
        ),
        ("d", binary(vec![Some(descriptor(&source, 200, 20)), None])),
    ]);
    table.update(&update, None).await.unwrap();
    let mut want = want_bytes(None);
    want.get_mut(&1).unwrap()[0] = range(200, 20);
    assert_eq!(read(&table, &["d", "v", "b"], false).await, want);
    let bad_update = batch(vec![
        ("_ROW_ID", Arc::new(Int64Array::from(vec![0])) as ArrayRef),
        ("d", binary(vec![Some(b"raw".to_vec())])),
    ]);
    let err = table
        .update(&bad_update, None)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("column 'd'"), "{err}");

    // Compaction rewrites the normal files with the stored descriptors.
    let stored_before = read(&table, &["d", "v"], true).await;
    let rows_before = table_rows(&table).await;
    let report = table
        .compact(CompactOptions {
            full: true,
            ..CompactOptions::default()
        })
        .await
        .unwrap();
    assert!(report.snapshot.is_some(), "{report:?}");
    assert_eq!(read(&table, &["d", "v"], true).await, stored_before);
    assert_eq!(table_rows(&table).await, rows_before);
    assert_eq!(read(&table, &["d", "v", "b"], false).await, want);

    // Java 2.0 resolves view structs against their upstream table (`db.upstream`, absent
    // here) unless `blob-view.resolve.enabled` is false; then it returns them as stored, as we
    // do. pypaimon 2.1.0 resolves them and fails; it reads the descriptor column (next test).
    if let Some(java) = java_read_lines_with(loc, &["--option", "blob-view.resolve.enabled=false"])
    {
        assert_eq!(
            java,
            Ok(table_rows(&table).await),
            "Java 2.0.0, views unresolved"
        );
    }
    if let Some(py) = crate::oracle::pypaimon_rows_result(Path::new(loc)) {
        let err = py.unwrap_err();
        assert!(err.contains("db.upstream does not exist"), "{err}");
    }
}

/// A data-evolution table with only a descriptor column besides a `.blob` column: Java 2.0.0
/// and pypaimon 2.1.0 resolve the descriptors as we do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descriptor_column_is_read_by_java_and_pypaimon() {
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("source.bin");
    std::fs::write(&source, source_bytes()).unwrap();
    let loc = tmp.path().join("wh/db.db/t");
    let loc = loc.to_str().unwrap();
    let schema = r#"{"fields": [{"name": "id", "type": "INT"}, {"name": "d", "type": "BLOB"},
        {"name": "b", "type": "BLOB"}],
        "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true",
        "blob.stored-descriptor-fields": "d"}}"#;
    let table = Table::create(loc, schema.as_bytes()).await.unwrap();
    let rows = batch(vec![
        ("id", Arc::new(Int32Array::from(vec![0, 1, 2])) as ArrayRef),
        (
            "d",
            binary(vec![
                Some(descriptor(&source, 7, 70)),
                None,
                Some(descriptor(&source, 0, 4096)),
            ]),
        ),
        (
            "b",
            binary(vec![Some(b"x".to_vec()), None, Some(vec![1; 300])]),
        ),
    ]);
    commit(&table, &rows).await.unwrap();
    let src = source_bytes();
    let got = read(&table, &["d"], false).await;
    assert_eq!(got[&0], vec![Some(src[7..77].to_vec())]);
    assert_eq!(got[&2], vec![Some(src.clone())]);
    check_oracles(loc, &table_rows(&table).await, "data-evolution");
    // An update of `d` (a normal file with `write_cols` = [d]), then a compaction.
    let update = batch(vec![
        ("_ROW_ID", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("d", binary(vec![Some(descriptor(&source, 1000, 5))])),
    ]);
    table.update(&update, None).await.unwrap();
    assert_eq!(
        read(&table, &["d"], false).await[&1],
        vec![Some(src[1000..1005].to_vec())]
    );
    check_oracles(loc, &table_rows(&table).await, "updated data-evolution");
    table
        .compact(CompactOptions {
            full: true,
            ..CompactOptions::default()
        })
        .await
        .unwrap();
    check_oracles(loc, &table_rows(&table).await, "compacted data-evolution");
}

/// Java 2.0.0's and pypaimon 2.1.0's rows of `loc` equal `ours` (where installed); what they
/// say otherwise is printed and fails the test.
fn check_oracles(loc: &str, ours: &[String], what: &str) {
    match java_read_lines_result(loc) {
        None => {}
        Some(Ok(rows)) => assert_eq!(rows, ours, "Java 2.0.0, {what}"),
        Some(Err(e)) => panic!("Java 2.0.0 cannot read the {what} table: {e}"),
    }
    match crate::oracle::pypaimon_rows_result(Path::new(loc)) {
        None => {}
        Some(Ok(rows)) => assert_eq!(rows, ours, "pypaimon 2.1.0, {what}"),
        Some(Err(e)) => panic!("pypaimon 2.1.0 cannot read the {what} table: {e}"),
    }
}

/// A primary-key table with a descriptor column `d` beside a managed BLOB column `m`:
/// `d` holds the descriptors as given (no pack, no sidecar entry), `m` goes to packs;
/// upserts, a delete and a full compaction keep `d` resolving to the source's bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn primary_key_table_with_a_descriptor_column() {
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("source.bin");
    std::fs::write(&source, source_bytes()).unwrap();
    let loc = tmp.path().join("wh/db.db/t");
    let loc = loc.to_str().unwrap();
    let schema = r#"{"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "v", "type": "INT"},
        {"name": "m", "type": "BLOB"}, {"name": "d", "type": "BLOB"}],
        "primaryKeys": ["id"],
        "options": {"bucket": "1", "blob-descriptor-field": "d"}}"#;
    let table = Table::create(loc, schema.as_bytes()).await.unwrap();
    let rows = |ids: Vec<i32>, v: i32, d: Vec<Option<Vec<u8>>>| {
        let n = ids.len();
        batch(vec![
            ("id", Arc::new(Int32Array::from(ids.clone())) as ArrayRef),
            ("v", Arc::new(Int32Array::from(vec![v; n])) as ArrayRef),
            (
                "m",
                binary(ids.iter().map(|i| Some(vec![*i as u8; 5])).collect()),
            ),
            ("d", binary(d)),
        ])
    };
    commit(
        &table,
        &rows(
            vec![1, 2, 3],
            1,
            vec![
                Some(descriptor(&source, 10, 10)),
                Some(descriptor(&source, 20, 20)),
                None,
            ],
        ),
    )
    .await
    .unwrap();
    commit(
        &table,
        &rows(
            vec![2, 4],
            2,
            vec![Some(descriptor(&source, 30, 30)), Some(view(4))],
        ),
    )
    .await
    .unwrap();
    let err = commit(&table, &rows(vec![5], 3, vec![Some(b"raw".to_vec())]))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("column 'd'") && err.contains("row 0"), "{err}");
    table.delete_where("id = 3", None).await.unwrap();
    let src = source_bytes();
    let want = std::collections::BTreeMap::from([
        (1, vec![Some(vec![1; 5]), Some(src[10..20].to_vec())]),
        (2, vec![Some(vec![2; 5]), Some(src[30..60].to_vec())]),
        (4, vec![Some(vec![4; 5]), Some(view(4))]),
    ]);
    assert_eq!(read(&table, &["m", "d"], false).await, want);
    let stored = read(&table, &["d"], true).await;
    assert_eq!(stored[&2], vec![Some(descriptor(&source, 30, 30))]);
    // Sidecars list the packs of `m` only.
    let files = table.scan().data_files().await.unwrap().unwrap();
    for e in &files.entries {
        assert!(
            e.file.extra_files.iter().any(|f| f.ends_with(".blobref")),
            "{:?}",
            e.file
        );
    }
    let rows_before = table_rows(&table).await;
    table
        .compact(CompactOptions {
            full: true,
            ..CompactOptions::default()
        })
        .await
        .unwrap();
    assert_eq!(table_rows(&table).await, rows_before);
    assert_eq!(read(&table, &["d"], true).await, stored);
    // pypaimon 2.1.0 takes every value of a descriptor column for a descriptor (a view
    // struct fails it: "Invalid BlobDescriptor data: URI length exceeds data size"): check
    // it without row 4.
    table.delete_where("id = 4", None).await.unwrap();
    let ours = table_rows(&table).await;
    assert_eq!(ours.len(), 2);
    // Java 2.0 resolves the managed column and the descriptor column as we do.
    if let Some(java) = java_read_lines_result(loc) {
        assert_eq!(java, Ok(ours.clone()), "Java 2.0.0 reads otherwise");
    }
    // pypaimon 2.1.0 does not resolve managed BLOBs (it returns `m`'s pack descriptors):
    // compare the other columns.
    let without_m = |rows: &[String]| -> Vec<String> {
        rows.iter()
            .map(|r| {
                let mut v: Value = serde_json::from_str(r).unwrap();
                v.as_object_mut().unwrap().remove("m");
                v.to_string()
            })
            .collect()
    };
    match crate::oracle::pypaimon_rows_result(Path::new(loc)) {
        None => {}
        Some(Ok(rows)) => assert_eq!(
            without_m(&rows),
            without_m(&ours),
            "pypaimon 2.1.0, primary-key table"
        ),
        Some(Err(e)) => panic!("pypaimon 2.1.0 cannot read the primary-key table: {e}"),
    }
}
