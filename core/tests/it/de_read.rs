//! Data-evolution reads of the row-tracking corpus tables: every expected read at several
//! batch sizes, row-range reads against the full read filtered by `_ROW_ID`, blob descriptors.

use std::sync::Arc;

use arrow_array::{Array, LargeBinaryArray, RecordBatch};
use paimon_kernel::format::blob_descriptor::BlobDescriptor;
use paimon_kernel::io::{Io, Machine, MemoryStore};
use paimon_kernel::read::{ReadContext, read_splits};
use paimon_kernel::scan::{Plan, ScanRequest, plan_scan};
use paimon_kernel::spec::row_range::{RowRange, parse_row_ranges};
use serde_json::Value;

use crate::canonical::render_batch;
use crate::common::{expected, load_table};
use crate::read_rows::read_rows;

const ROW_TRACKING_TABLES: &[&str] = &[
    "append_row_tracking",
    "blob_single",
    "blob_multi",
    "blob_nested",
    "blob_update",
    "de_update",
    "de_merge_into",
    "de_dv_delete",
];

fn sorted(rows: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    v.sort();
    v
}

/// `(label, options, projection, rows)` of every expected read of `table`.
type Case = (
    String,
    serde_json::Map<String, Value>,
    Option<Vec<String>>,
    Vec<Value>,
);

fn cases(table: &str) -> Vec<Case> {
    let exp = expected(table);
    let mut out = vec![(
        "latest".to_string(),
        serde_json::Map::new(),
        None,
        exp["rows"].as_array().unwrap().clone(),
    )];
    for r in exp["additional_reads"].as_array().unwrap() {
        out.push((
            r["label"].as_str().unwrap().to_string(),
            r["options"].as_object().unwrap().clone(),
            r["projection"]
                .as_array()
                .map(|p| p.iter().map(|c| c.as_str().unwrap().to_string()).collect()),
            r["rows"].as_array().unwrap().clone(),
        ));
    }
    out
}

#[test]
fn row_tracking_tables_read_as_expected_at_every_batch_size() {
    let mut reads = 0;
    for table in ROW_TRACKING_TABLES {
        let mut store = load_table(table);
        for (label, options, projection, want) in cases(table) {
            for batch_size in [1, 2, 3, 0] {
                let got = read_rows(&mut store, &options, projection.clone(), batch_size)
                    .unwrap_or_else(|e| panic!("{table} [{label}] batch size {batch_size}: {e}"));
                assert_eq!(
                    sorted(&got),
                    sorted(&want),
                    "{table} [{label}] batch size {batch_size}"
                );
                reads += 1;
            }
        }
    }
    assert!(reads >= 4 * 30, "only {reads} reads");
}

/// Plan with `row_ranges` and read; also the number of planned data files.
fn read_ranges(
    store: &mut MemoryStore,
    ranges: Option<Vec<RowRange>>,
    projection: Option<Vec<String>>,
    options: &[(&str, &str)],
    batch_size: usize,
) -> paimon_kernel::Result<(Vec<RecordBatch>, usize)> {
    let mut request = ScanRequest::default();
    if let Some(r) = ranges {
        request = request.with_row_ranges(r);
    }
    for (k, v) in options {
        request = request.with_option(k, v);
    }
    let plan: Plan = store
        .run(Machine::once("plan", move |io: Io<Plan>| async move {
            plan_scan(&io, &request).await
        }))?
        .remove(0);
    let files = plan.splits.iter().map(|s| s.data_files.len()).sum();
    let ctx = ReadContext::try_new(&plan, projection.as_deref(), None, None, batch_size)?;
    let batches = store.run(read_splits(Arc::new(ctx), plan.splits.clone()))?;
    Ok((batches, files))
}

fn with_row_id(table: &str) -> Vec<String> {
    let mut p = vec!["_ROW_ID".to_string()];
    for f in expected(table)["fields"].as_array().unwrap() {
        p.push(f["name"].as_str().unwrap().to_string());
    }
    p
}

#[test]
fn row_range_reads_equal_the_full_read_filtered_by_row_id() {
    let range_sets = [
        "0", "1-3,5", "2-100", "4,9", "7-12", "0-2,3-4", "5-5,6-6", "3-8", "9-9,0-0", "1000",
    ];
    for table in ROW_TRACKING_TABLES {
        let mut store = load_table(table);
        let projection = Some(with_row_id(table));
        let (all, all_files) = read_ranges(&mut store, None, projection.clone(), &[], 0).unwrap();
        let all: Vec<Value> = all.iter().flat_map(render_batch).collect();
        for set in range_sets {
            let ranges = parse_row_ranges(set).unwrap();
            let want: Vec<Value> = all
                .iter()
                .filter(|r| {
                    let id = r["_ROW_ID"].as_i64().unwrap();
                    ranges.iter().any(|x| x.contains(id))
                })
                .cloned()
                .collect();
            for batch_size in [1, 2, 0] {
                let (got, files) = read_ranges(
                    &mut store,
                    Some(ranges.clone()),
                    projection.clone(),
                    &[],
                    batch_size,
                )
                .unwrap_or_else(|e| panic!("{table} {set}: {e}"));
                let got: Vec<Value> = got.iter().flat_map(render_batch).collect();
                assert_eq!(
                    sorted(&got),
                    sorted(&want),
                    "{table} row ranges {set} batch size {batch_size}"
                );
                assert!(files <= all_files);
                if set == "1000" {
                    assert_eq!(files, 0, "{table}: no file holds row 1000");
                }
            }
        }
        // Without `_ROW_ID` in the projection the same rows come back.
        let ranges = parse_row_ranges("1-3,5").unwrap();
        let (got, _) = read_ranges(&mut store, Some(ranges), None, &[], 2).unwrap();
        let n: usize = got.iter().map(|b| b.num_rows()).sum();
        let want = all
            .iter()
            .filter(|r| matches!(r["_ROW_ID"].as_i64(), Some(1..=3 | 5)))
            .count();
        assert_eq!(n, want, "{table}: unprojected row-range read");
    }
}

#[test]
fn row_ranges_prune_files_in_the_planner() {
    // blob_single: rows 0-4 in one parquet + one blob file, rows 5-9 in another pair.
    let mut store = load_table("blob_single");
    let (_, all) = read_ranges(&mut store, None, None, &[], 0).unwrap();
    let (_, some) = read_ranges(
        &mut store,
        Some(parse_row_ranges("6-7").unwrap()),
        None,
        &[],
        0,
    )
    .unwrap();
    assert_eq!((all, some), (4, 2));
}

#[test]
fn row_ranges_on_a_table_without_row_tracking_are_rejected() {
    let mut store = load_table("append_parquet");
    let err = read_ranges(
        &mut store,
        Some(parse_row_ranges("0-3").unwrap()),
        None,
        &[],
        0,
    )
    .unwrap_err();
    assert!(err.to_string().contains("row-tracking"), "{err}");
}

#[test]
fn blob_as_descriptor_returns_descriptors_of_the_blob_bytes() {
    for table in ["blob_single", "blob_update", "blob_multi"] {
        let mut store = load_table(table);
        let projection = Some(with_row_id(table));
        let (bytes, _) = read_ranges(&mut store, None, projection.clone(), &[], 0).unwrap();
        let (descs, _) = read_ranges(
            &mut store,
            None,
            projection,
            &[("blob-as-descriptor", "true")],
            0,
        )
        .unwrap();
        let schema = bytes[0].schema();
        let blob_columns: Vec<usize> = (0..schema.fields().len())
            .filter(|&i| schema.field(i).data_type() == &arrow_schema::DataType::LargeBinary)
            .collect();
        assert!(!blob_columns.is_empty());
        let concat = |b: &[RecordBatch]| arrow_select::concat::concat_batches(&schema, b).unwrap();
        let (bytes, descs) = (concat(&bytes), concat(&descs));
        let mut checked = 0;
        for &c in &blob_columns {
            let want = bytes
                .column(c)
                .as_any()
                .downcast_ref::<LargeBinaryArray>()
                .unwrap();
            let got = descs
                .column(c)
                .as_any()
                .downcast_ref::<LargeBinaryArray>()
                .unwrap();
            for row in 0..want.len() {
                assert_eq!(want.is_null(row), got.is_null(row), "{table} row {row}");
                if want.is_null(row) {
                    continue;
                }
                let d = BlobDescriptor::deserialize(got.value(row)).unwrap();
                let start = d.offset() as u64;
                let end = start + d.length() as u64;
                let uri = d.uri().to_string();
                let payload = store
                    .run(Machine::once("read", move |io: Io<Vec<u8>>| async move {
                        Ok(io.read_range(&uri, start..end).await?.to_vec())
                    }))
                    .unwrap()
                    .remove(0);
                assert_eq!(payload, want.value(row), "{table} row {row}");
                checked += 1;
            }
        }
        assert!(checked > 0);
    }
}

/// Plan `table` and read it after `edit` changed the plan's splits.
fn read_edited(table: &str, edit: impl FnOnce(&mut Plan)) -> paimon_kernel::Result<usize> {
    let mut store = load_table(table);
    let mut plan: Plan = store
        .run(Machine::once("plan", |io: Io<Plan>| async move {
            plan_scan(&io, &ScanRequest::default()).await
        }))?
        .remove(0);
    edit(&mut plan);
    let ctx = ReadContext::try_new(&plan, None, None, None, 0)?;
    let batches = store.run(read_splits(Arc::new(ctx), plan.splits.clone()))?;
    Ok(batches.iter().map(|b| b.num_rows()).sum())
}

fn find_file(
    plan: &mut Plan,
    pick: impl Fn(&paimon_kernel::spec::DataFileMeta) -> bool,
) -> &mut paimon_kernel::spec::DataFileMeta {
    plan.splits
        .iter_mut()
        .flat_map(|s| s.data_files.iter_mut())
        .find(|f| pick(f))
        .unwrap()
}

#[test]
fn overlapping_blob_files_in_one_layer_are_rejected_naming_both() {
    // blob_update rows 0-5: blob layer 1 covers 0-5, layer 3 covers 0-3. Put both in layer 1.
    let mut names = (String::new(), String::new());
    let err = read_edited("blob_update", |plan| {
        let f = find_file(plan, |f| f.is_blob_file() && f.max_sequence_number == 3);
        f.max_sequence_number = 1;
        names.0 = f.file_name.clone();
        names.1 = find_file(plan, |f| {
            f.is_blob_file() && f.max_sequence_number == 1 && f.row_count == 6
        })
        .file_name
        .clone();
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("should not overlap"), "{err}");
    assert!(err.contains(&names.0) && err.contains(&names.1), "{err}");
}

#[test]
fn blob_index_row_count_differing_from_the_manifest_is_rejected_naming_the_file() {
    let mut name = String::new();
    let err = read_edited("blob_single", |plan| {
        let f = find_file(plan, |f| f.is_blob_file());
        f.row_count = 4;
        name = f.file_name.clone();
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains(&name), "{err}");
}

#[test]
fn data_files_of_one_group_with_different_ranges_are_rejected_naming_both() {
    // de_update rows 0-5: four parquet files cover 0-5; shorten one.
    let mut name = String::new();
    let err = read_edited("de_update", |plan| {
        let f = find_file(plan, |f| {
            f.first_row_id == Some(0) && f.max_sequence_number == 3
        });
        f.row_count = 5;
        name = f.file_name.clone();
    })
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("same row-id range") && err.contains(&name),
        "{err}"
    );
}

#[test]
fn a_data_file_shorter_than_its_manifest_row_count_is_rejected_naming_it() {
    // de_update rows 6-9: claim 5 rows for every file of the group (the files hold 4).
    let err = read_edited("de_update", |plan| {
        for s in &mut plan.splits {
            for f in &mut s.data_files {
                if f.first_row_id == Some(6) {
                    f.row_count = 5;
                }
            }
        }
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("ended before"), "{err}");
}

#[test]
fn read_blob_cell_matches_the_full_read_using_the_row_range_plan() {
    use paimon_kernel::read::evolution::read_blob_cell;
    for table in ["blob_single", "blob_update", "blob_multi"] {
        let mut store = load_table(table);
        let projection = with_row_id(table);
        let (batches, _) = read_ranges(&mut store, None, Some(projection.clone()), &[], 0).unwrap();
        let mut checked = 0;
        for batch in &batches {
            let ids = batch
                .column(0)
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>()
                .unwrap();
            for (c, name) in projection.iter().enumerate() {
                let Some(col) = batch.column(c).as_any().downcast_ref::<LargeBinaryArray>() else {
                    continue;
                };
                for row in 0..batch.num_rows() {
                    let id = ids.value(row);
                    let name = name.clone();
                    let request = ScanRequest::default()
                        .with_row_ranges(vec![RowRange::try_new(id, id).unwrap()]);
                    let got = store
                        .run(Machine::once(
                            "cell",
                            move |io: Io<Option<Vec<u8>>>| async move {
                                let plan = plan_scan(&io, &request).await?;
                                Ok(read_blob_cell(&io, &plan, id, &name)
                                    .await?
                                    .map(|b| b.to_vec()))
                            },
                        ))
                        .unwrap()
                        .remove(0);
                    let want = (!col.is_null(row)).then(|| col.value(row).to_vec());
                    assert_eq!(got, want, "{table} row id {id}");
                    checked += 1;
                }
            }
        }
        assert!(checked >= 8, "{table}: {checked}");
    }
    // Errors: unknown column, a row no file holds.
    let mut store = load_table("blob_single");
    for (id, column, want) in [(0, "nope", "unknown column"), (99, "data", "row id 99")] {
        let request = ScanRequest::default();
        let err = store
            .run(Machine::once("cell", move |io: Io<()>| async move {
                let plan = plan_scan(&io, &request).await?;
                read_blob_cell(&io, &plan, id, column).await.map(|_| ())
            }))
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{err}");
    }
}

#[test]
fn read_blob_cell_reads_the_blob_file_tail_and_the_one_record() {
    use paimon_kernel::format::blob::{BLOB_TAIL_PREFETCH_BYTES, decode_blob_file_index};
    use paimon_kernel::io::{IoOp, Step};
    use paimon_kernel::read::evolution::read_blob_cell;
    // blob_single: row id 8 (id 8) is the 65,536-byte blob, row 3 of the second commit's .blob
    // file (row ids 5-9: ids 6, 10 (NULL), 7, 8, 9).
    let mut store = load_table("blob_single");
    let request = ScanRequest::default().with_row_ranges(vec![RowRange::try_new(8, 8).unwrap()]);
    let mut m = Machine::once("cell", move |io: Io<Option<bytes::Bytes>>| async move {
        let plan = plan_scan(&io, &request).await?;
        read_blob_cell(&io, &plan, 8, "data").await
    });
    let mut blob_reads = Vec::new();
    let mut got = None;
    loop {
        match m.step().unwrap() {
            Step::NeedIo(round) => {
                for r in round {
                    if let IoOp::Read { path, range } = &r.op
                        && path.ends_with(".blob")
                    {
                        blob_reads.push((path.clone(), range.clone()));
                    }
                    let a = store.answer(&r.op);
                    m.provide(r.id, a).unwrap();
                }
            }
            Step::Emit(v) => got = Some(v),
            Step::Work(items) => items.into_iter().for_each(|w| w.run()),
            Step::Wait => {}
            Step::Done => break,
        }
    }
    let got = got.unwrap().unwrap();
    let exp = expected("blob_single");
    let want = &exp["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == 8)
        .unwrap()["data"];
    assert_eq!(got.len() as u64, want["len"].as_u64().unwrap());
    use sha2::Digest;
    assert_eq!(
        paimon_kernel::util::hex(&sha2::Sha256::digest(&got)),
        want["sha256"].as_str().unwrap()
    );
    // Two ranged reads of the one .blob file: the tail (footer and index), then the record.
    assert_eq!(blob_reads.len(), 2, "{blob_reads:?}");
    let path = &blob_reads[0].0;
    assert_eq!(&blob_reads[1].0, path);
    let file = &store.objects[path];
    let size = file.len() as u64;
    assert_eq!(
        blob_reads[0].1,
        Some(size - BLOB_TAIL_PREFETCH_BYTES.min(size)..size)
    );
    let record = decode_blob_file_index(file, path)
        .unwrap()
        .entry(3)
        .unwrap()
        .record_range();
    assert_eq!(blob_reads[1].1, record);
    assert_eq!(record.map(|r| r.end - r.start), Some(65_536 + 16));
}

#[test]
fn large_blobs_are_read_in_windows_of_about_blob_window_bytes() {
    use paimon_kernel::format::blob::{BlobEntry, BlobFileWriter, decode_blob_file_index};
    // blob_single's first commit (row ids 0-4: four blobs and a NULL at row 1) with each blob
    // rewritten to 5 MiB: about 4 MiB a row, so a 16 MiB window holds 3 rows; the second
    // commit's small blobs keep the batch size.
    let mut store = load_table("blob_single");
    let mut plan: Plan = store
        .run(Machine::once("plan", |io: Io<Plan>| async move {
            plan_scan(&io, &ScanRequest::default()).await
        }))
        .unwrap()
        .remove(0);
    let split = &mut plan.splits[0];
    let k = split
        .data_files
        .iter()
        .position(|f| f.is_blob_file() && f.first_row_id == Some(0))
        .unwrap();
    let path = split.file_path(&split.data_files[k]);
    let index = decode_blob_file_index(&store.objects[&path], &path).unwrap();
    let payload = |row: u64| -> Vec<u8> {
        (0..5u32 << 20)
            .map(|i| (i as u64).wrapping_mul(row + 3) as u8)
            .collect()
    };
    let mut w = BlobFileWriter::new();
    for (row, e) in index.entries().iter().enumerate() {
        match e {
            BlobEntry::Null => w.push_null(),
            BlobEntry::Placeholder => w.push_placeholder(),
            BlobEntry::Record { .. } => {
                w.push_payload(&payload(row as u64));
            }
        }
    }
    let bytes = w.finish().unwrap();
    split.data_files[k].file_size = bytes.len() as i64;
    store.objects.insert(path, bytes::Bytes::from(bytes));
    let ctx =
        ReadContext::try_new(&plan, Some(&with_row_id("blob_single")), None, None, 0).unwrap();
    let batches = store
        .run(read_splits(Arc::new(ctx), plan.splits.clone()))
        .unwrap();
    let sizes: Vec<usize> = batches.iter().map(|b| b.num_rows()).collect();
    assert_eq!(sizes, vec![3, 2, 5]);
    let mut seen = 0;
    for b in &batches {
        let ids = b
            .column(0)
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .unwrap();
        let data = b
            .column_by_name("data")
            .unwrap()
            .as_any()
            .downcast_ref::<LargeBinaryArray>()
            .unwrap();
        for i in 0..b.num_rows() {
            let id = ids.value(i);
            if id < 5 && !data.is_null(i) {
                assert!(
                    data.value(i) == payload(id as u64).as_slice(),
                    "row id {id}"
                );
                seen += 1;
            }
        }
    }
    assert_eq!(seen, 4);
}
