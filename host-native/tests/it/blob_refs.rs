//! BLOB values given as file references (serialized blob descriptors, as Java's engines take
//! them): the bytes they point at are copied into `.blob` files and managed packs by streamed,
//! multipart writes, checked against the source bytes, pypaimon 2.1 and Java 2.0.0 (which
//! read data-evolution blob tables); references to missing objects or past an object's end are
//! rejected before anything is written.

use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, Int32Array, LargeBinaryArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use paimon_kernel::format::blob_descriptor::BlobDescriptor;
use paimon_native::Table;
use serde_json::Value;

use crate::oracle::{java_rows, pypaimon_rows};

/// 20 MiB and a few bytes: more than two 8 MiB parts, so the copy is a multipart upload.
const BIG: usize = (20 << 20) + 12_345;

fn source_bytes(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + i / 4093) as u8).collect()
}

fn descriptor(path: &Path, offset: i64, length: i64) -> Vec<u8> {
    BlobDescriptor::new(format!("file:{}", path.display()), offset, length).serialize()
}

fn batch(ids: &[i32], blobs: Vec<Option<Vec<u8>>>) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("b", DataType::LargeBinary, true),
    ]));
    let ids: ArrayRef = Arc::new(Int32Array::from(ids.to_vec()));
    let blobs: ArrayRef = Arc::new(LargeBinaryArray::from_iter(blobs));
    RecordBatch::try_new(schema, vec![ids, blobs]).unwrap()
}

/// id → blob bytes (None for null) of the latest snapshot.
async fn blobs_by_id(table: &Table) -> std::collections::BTreeMap<i32, Option<Vec<u8>>> {
    let mut out = std::collections::BTreeMap::new();
    for b in table.scan().to_batches().await.unwrap() {
        let ids = b
            .column_by_name("id")
            .unwrap()
            .as_primitive::<arrow_array::types::Int32Type>();
        let bs = b.column_by_name("b").unwrap().as_binary::<i64>();
        for r in 0..b.num_rows() {
            let v = (!bs.is_null(r)).then(|| bs.value(r).to_vec());
            out.insert(ids.value(r), v);
        }
    }
    out
}

async fn canonical(table: &Table) -> Vec<String> {
    let batches = table.scan().to_batches().await.unwrap();
    let mut rows: Vec<String> = paimon_kernel::canonical::batches_rows(&batches)
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    rows.sort();
    rows
}

fn files_named(dir: &Path, suffix: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    out
}

use arrow_array::Array;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_are_copied_into_data_evolution_blob_files() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("source.bin");
    let bytes = source_bytes(BIG);
    std::fs::write(&src, &bytes).unwrap();
    let dir = tmp.path().join("wh/corpus.db/refs_de");
    let table = Table::create(
        dir.to_str().unwrap(),
        br#"{"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "b", "type": "BLOB"}],
             "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}}"#,
    )
    .await
    .unwrap();
    let input = batch(
        &[1, 2, 3, 4, 5],
        vec![
            Some(b"inline bytes".to_vec()),
            Some(descriptor(&src, 0, -1)),
            Some(descriptor(&src, 1000, 5000)),
            None,
            Some(descriptor(&src, BIG as i64 - 7, 7)),
        ],
    );
    let mut w = table.new_write().await.unwrap();
    w.write(&input).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();

    let got = blobs_by_id(&table).await;
    assert_eq!(got[&1].as_deref(), Some(b"inline bytes".as_slice()));
    assert!(
        got[&2].as_deref() == Some(bytes.as_slice()),
        "the whole source"
    );
    assert_eq!(got[&3].as_deref(), Some(&bytes[1000..6000]));
    assert_eq!(got[&4], None);
    assert_eq!(got[&5].as_deref(), Some(&bytes[BIG - 7..]));
    // One `.blob` file holding every payload (records and index around them).
    let blob_files = files_named(&dir, ".blob");
    assert_eq!(blob_files.len(), 1, "{blob_files:?}");
    let size = std::fs::metadata(&blob_files[0]).unwrap().len() as usize;
    assert!(
        size > BIG + 5000 + 12 && size < BIG + 5000 + 12 + 200,
        "{size}"
    );

    let ours = canonical(&table).await;
    if let Some(py) = pypaimon_rows(&dir) {
        assert_eq!(py, ours, "pypaimon reads the copied blobs");
    }
    if let Some(java) = java_rows(&dir) {
        assert_eq!(java, ours, "Java 2.0.0 reads the copied blobs");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_are_copied_into_managed_packs() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("source.bin");
    let bytes = source_bytes(BIG);
    std::fs::write(&src, &bytes).unwrap();
    let dir = tmp.path().join("t");
    let table = Table::create(
        dir.to_str().unwrap(),
        br#"{"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "b", "type": "BLOB"}],
             "primaryKeys": ["id"], "options": {"bucket": "1"}}"#,
    )
    .await
    .unwrap();
    let mut w = table.new_write().await.unwrap();
    w.write(&batch(
        &[1, 2, 3],
        vec![
            Some(descriptor(&src, 0, -1)),
            Some(b"small".to_vec()),
            Some(descriptor(&src, 4096, 100)),
        ],
    ))
    .await
    .unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
    let got = blobs_by_id(&table).await;
    assert!(
        got[&1].as_deref() == Some(bytes.as_slice()),
        "the whole source"
    );
    assert_eq!(got[&2].as_deref(), Some(b"small".as_slice()));
    assert_eq!(got[&3].as_deref(), Some(&bytes[4096..4196]));
    let packs = files_named(&dir, ".managed.blob");
    assert_eq!(packs.len(), 1, "{packs:?}");
    // The data file's sidecar names the pack.
    let sidecars = files_named(&dir, ".blobref");
    assert_eq!(sidecars.len(), 1);
    let pack_name = packs[0].file_name().unwrap().to_str().unwrap().to_owned();
    let refs = paimon_kernel::format::blob_ref::decode_blobref(
        &std::fs::read(&sidecars[0]).unwrap(),
        "sidecar",
    )
    .unwrap();
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].relative_path, pack_name, "{refs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_references_are_rejected_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("source.bin");
    std::fs::write(&src, source_bytes(1000)).unwrap();
    let dir = tmp.path().join("t");
    let table = Table::create(
        dir.to_str().unwrap(),
        br#"{"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "b", "type": "BLOB"}],
             "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}}"#,
    )
    .await
    .unwrap();
    let missing = tmp.path().join("missing.bin");
    let cases = [
        (descriptor(&missing, 0, -1), "does not exist"),
        (descriptor(&src, 900, 200), "past the end"),
        (descriptor(&src, 1001, -1), "past the end"),
    ];
    for (d, want) in cases {
        let mut w = table.new_write().await.unwrap();
        let e = w
            .write(&batch(&[1, 2], vec![Some(b"ok".to_vec()), Some(d)]))
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e}");
        assert!(e.contains("column 'b', row 1"), "{e}");
        assert_eq!(w.files_written(), 0);
    }
    assert!(files_named(&dir, ".blob").is_empty());
    assert!(files_named(&dir, ".parquet").is_empty());
    assert!(table.latest_snapshot().await.unwrap().is_none());
}

/// An aborted commit deletes the packs its new data files reference, with the files, and
/// leaves the committed packs alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborted_messages_take_their_packs_with_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = Table::create(
        dir.to_str().unwrap(),
        br#"{"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "b", "type": "BLOB"}],
             "primaryKeys": ["id"], "options": {"bucket": "1"}}"#,
    )
    .await
    .unwrap();
    let mut w = table.new_write().await.unwrap();
    w.write(&batch(&[1], vec![Some(b"kept".to_vec())]))
        .await
        .unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
    let committed = files_named(&dir, ".managed.blob");
    assert_eq!(committed.len(), 1);

    let mut w = table.new_write().await.unwrap();
    w.write(&batch(
        &[2, 3],
        vec![Some(b"x".to_vec()), Some(b"y".to_vec())],
    ))
    .await
    .unwrap();
    let messages = w.prepare_commit().await.unwrap();
    assert_eq!(files_named(&dir, ".managed.blob").len(), 2);
    table.new_commit(None).abort(messages).await.unwrap();
    assert_eq!(files_named(&dir, ".managed.blob"), committed);
    assert_eq!(files_named(&dir, ".blobref").len(), 1);
    let got = blobs_by_id(&table).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[&1].as_deref(), Some(b"kept".as_slice()));
}

/// pypaimon 2.1.0 writes the same reference input (its `BlobFileWriter` reads descriptor
/// bytes as a `BlobRef`): the two `.blob` files are byte-identical.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_blob_file_equals_pypaimons_for_the_same_references() {
    let venv = std::env::var_os("PAIMON_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(std::env::var("HOME").unwrap())
                .join(".cache/paimon-kernel/venv")
        });
    let python = venv.join("bin/python");
    if !python.exists() {
        println!("pypaimon venv not installed: skipping the byte comparison");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("source.bin");
    let bytes = source_bytes(300_000);
    std::fs::write(&src, &bytes).unwrap();
    let blobs = vec![
        Some(descriptor(&src, 0, -1)),
        Some(b"inline".to_vec()),
        None,
        Some(descriptor(&src, 777, 1000)),
    ];
    // pypaimon's table.
    let wh = tmp.path().join("py");
    let script = r#"
import sys, pyarrow as pa
from pypaimon import CatalogFactory, Schema
wh, blobs = sys.argv[1], [None if h == "-" else bytes.fromhex(h) for h in sys.argv[2:]]
schema = pa.schema([("id", pa.int32()), ("b", pa.large_binary())])
c = CatalogFactory.create({"warehouse": wh})
c.create_database("db", True)
c.create_table("db.t", Schema.from_pyarrow_schema(schema, options={
    "row-tracking.enabled": "true", "data-evolution.enabled": "true"}), False)
t = c.get_table("db.t")
wb = t.new_batch_write_builder()
w, cm = wb.new_write(), wb.new_commit()
w.write_arrow(pa.Table.from_pydict({"id": list(range(1, len(blobs) + 1)), "b": blobs}, schema=schema))
cm.commit(w.prepare_commit())
"#;
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let args: Vec<String> = blobs
        .iter()
        .map(|b| b.as_deref().map_or("-".to_owned(), hex))
        .collect();
    let out = std::process::Command::new(&python)
        .arg("-c")
        .arg(script)
        .arg(&wh)
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Ours.
    let dir = tmp.path().join("k");
    let table = Table::create(
        dir.to_str().unwrap(),
        br#"{"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "b", "type": "BLOB"}],
             "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}}"#,
    )
    .await
    .unwrap();
    let mut w = table.new_write().await.unwrap();
    w.write(&batch(&[1, 2, 3, 4], blobs)).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
    let theirs = files_named(&wh.join("db.db/t"), ".blob");
    let ours = files_named(&dir, ".blob");
    assert_eq!((theirs.len(), ours.len()), (1, 1));
    let (theirs, ours) = (
        std::fs::read(&theirs[0]).unwrap(),
        std::fs::read(&ours[0]).unwrap(),
    );
    assert!(ours.len() > 301_000);
    assert!(theirs == ours, "the .blob files differ");
}

/// Postpone-bucket tables with a managed BLOB column: the writers put packs into
/// `bucket-postpone/`; the compaction's replay copies each surviving blob into a new pack of its
/// real bucket (Java's `MergeTreeWriter` externalizes replayed records as any other), so the
/// compacted files' sidecars name only real-bucket packs and the postpone packs become
/// collectable. Rows are read back exactly, before and after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postpone_compaction_moves_blobs_into_real_bucket_packs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = Table::create(
        dir.to_str().unwrap(),
        br#"{"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "b", "type": "BLOB"}],
             "primaryKeys": ["id"], "options": {"bucket": "-2", "postpone.default-bucket-num": "2",
             "postpone.batch-write-fixed-bucket": "false"}}"#,
    )
    .await
    .unwrap();
    let payload = |id: i32, v: u8| -> Vec<u8> {
        (0..(100 + id as usize * 37))
            .map(|i| (i as u8) ^ v)
            .collect()
    };
    let mut model = std::collections::BTreeMap::new();
    for (v, ids) in [(1u8, vec![1, 2, 3, 4, 5]), (2, vec![2, 4, 6])] {
        let mut w = table.new_write().await.unwrap();
        let blobs: Vec<Option<Vec<u8>>> = ids.iter().map(|i| Some(payload(*i, v))).collect();
        w.write(&batch(&ids, blobs)).await.unwrap();
        let messages = w.prepare_commit().await.unwrap();
        table.new_commit(None).commit(messages).await.unwrap();
        for i in ids {
            model.insert(i, Some(payload(i, v)));
        }
    }
    let postpone_packs = files_named(&dir.join("bucket-postpone"), ".managed.blob");
    assert_eq!(postpone_packs.len(), 2);
    table
        .compact(paimon_native::compact::CompactOptions::default())
        .await
        .unwrap();
    assert_eq!(blobs_by_id(&table).await, model);
    // Every sidecar of a live file names packs of its own real bucket only.
    let files = table.scan().data_files().await.unwrap().unwrap();
    let mut checked = 0;
    for e in &files.entries {
        assert!(e.bucket >= 0, "a postpone file is still live");
        let bucket_dir = dir.join(format!("bucket-{}", e.bucket));
        for extra in &e.file.extra_files {
            let refs = paimon_kernel::format::blob_ref::decode_blobref(
                &std::fs::read(bucket_dir.join(extra)).unwrap(),
                extra,
            )
            .unwrap();
            for r in refs {
                assert!(
                    r.storage_root_id
                        .ends_with(&format!("/bucket-{}", e.bucket)),
                    "{r:?}"
                );
                assert!(bucket_dir.join(&r.relative_path).exists());
                checked += 1;
            }
        }
    }
    assert!(checked >= 2, "{checked}");
    // The postpone packs are no longer referenced: pack collection reclaims them.
    let config = paimon_kernel::maintenance::ExpireConfig {
        retain_max: 1,
        retain_min: 1,
        time_retained_millis: 0,
        max_deletes: 100,
        consumer_changelog_only: false,
    };
    table.expire_with(config, i64::MAX / 2).await.unwrap();
    let collected = table.collect_packs_before(i64::MAX, false).await.unwrap();
    let removed: std::collections::BTreeSet<String> = collected
        .removed
        .iter()
        .map(|r| r.path.rsplit('/').next().unwrap().to_owned())
        .collect();
    for p in postpone_packs {
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(removed.contains(&name), "{name} not collected: {removed:?}");
    }
    assert_eq!(blobs_by_id(&table).await, model);
}
