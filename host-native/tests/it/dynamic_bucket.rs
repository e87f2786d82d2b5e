//! Dynamic-bucket primary-key tables (`bucket` = -1): the hash index sends every key to one
//! bucket, across commits, writers and the index files of other writers (pypaimon's corpus
//! table); racing writers of one bucket conflict instead of breaking the index.

use crate::copy_dir;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::canonical;
use paimon_kernel::encode::row::binary_row_at;
use paimon_kernel::write::bucket::bucket_hash;
use paimon_kernel::write::kv::dynamic_bucket::decode_hash_index;
use paimon_native::Table;
use serde_json::{Value, json};

fn batch(dt: &[&str], k: &[i64], v: &[&str]) -> RecordBatch {
    let mut fields = Vec::new();
    let mut cols: Vec<ArrayRef> = Vec::new();
    if !dt.is_empty() {
        fields.push(Field::new("dt", arrow_schema::DataType::Utf8, false));
        cols.push(Arc::new(StringArray::from(dt.to_vec())));
    }
    fields.push(Field::new("k", arrow_schema::DataType::Int64, false));
    cols.push(Arc::new(Int64Array::from(k.to_vec())));
    fields.push(Field::new("v", arrow_schema::DataType::Utf8, true));
    cols.push(Arc::new(StringArray::from(v.to_vec())));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap()
}

async fn rows(table: &Table) -> BTreeSet<String> {
    let batches = table.scan().to_batches().await.unwrap();
    canonical::batches_rows(&batches)
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect()
}

async fn write_commit(table: &Table, b: &RecordBatch) {
    let mut w = table.new_write().await.unwrap();
    w.write(b).await.unwrap();
    let m = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(m).await.unwrap();
}

/// Keys (`_KEY_k`) of every data file, by (partition directory, bucket), read from the files
/// themselves (no compaction runs here, so every file is live).
fn keys_by_bucket(root: &Path) -> BTreeMap<(String, i32), BTreeSet<i64>> {
    fn walk(d: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(root, &mut files);
    let mut out: BTreeMap<(String, i32), BTreeSet<i64>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(root).unwrap().to_str().unwrap().to_owned();
        let parts: Vec<&str> = rel.split('/').collect();
        let bucket_dir = parts[parts.len() - 2];
        let bucket: i32 = bucket_dir.strip_prefix("bucket-").unwrap().parse().unwrap();
        let partition = parts[..parts.len() - 2].join("/");
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            std::fs::File::open(&f).unwrap(),
        )
        .unwrap()
        .build()
        .unwrap();
        for b in reader {
            let b = b.unwrap();
            let col = b
                .column_by_name("_KEY_k")
                .unwrap()
                .as_primitive::<Int64Type>();
            out.entry((partition.clone(), bucket))
                .or_default()
                .extend(col.values().iter().copied());
        }
    }
    out
}

/// The live hash index of every (partition, bucket): the snapshot's index manifest entries
/// with their decoded hashes, by partition bytes.
async fn live_hash_index(table: &Table) -> BTreeMap<(Vec<u8>, i32), Vec<i32>> {
    let root = std::path::PathBuf::from(table.location().trim_start_matches("file://"));
    let snapshot = table.latest_snapshot().await.unwrap().unwrap();
    let name = snapshot.index_manifest.unwrap();
    let bytes = std::fs::read(root.join("manifest").join(&name)).unwrap();
    let entries = paimon_kernel::spec::decode_index_manifest(&bytes, &name).unwrap();
    let mut out = BTreeMap::new();
    for e in entries {
        assert_eq!(e.index_file.index_type, "HASH");
        let path = root.join("index").join(&e.index_file.file_name);
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len() as i64, e.index_file.file_size);
        let hashes = decode_hash_index(&data, "x").unwrap();
        assert_eq!(hashes.len() as i64, e.index_file.row_count);
        let key = (e.partition.row_bytes().to_vec(), e.bucket);
        assert!(
            out.insert(key, hashes).is_none(),
            "two live index files of one bucket"
        );
    }
    out
}

fn key_hash(k: i64) -> i32 {
    let col: ArrayRef = Arc::new(Int64Array::from(vec![k]));
    let ty = paimon_kernel::spec::DataType::parse_sql("BIGINT NOT NULL").unwrap();
    bucket_hash(&binary_row_at(&[col], &[ty], 0).unwrap())
}

/// Every key lives in one bucket, and every bucket's live index holds exactly the hashes of
/// its keys.
fn check_index(
    files: &BTreeMap<(String, i32), BTreeSet<i64>>,
    index: &BTreeMap<(Vec<u8>, i32), Vec<i32>>,
    partition_bytes: &BTreeMap<String, Vec<u8>>,
) {
    let mut seen: BTreeMap<(String, i64), i32> = BTreeMap::new();
    for ((p, b), keys) in files {
        for k in keys {
            if let Some(other) = seen.insert((p.clone(), *k), *b) {
                panic!("key {k} of partition '{p}' is in buckets {other} and {b}");
            }
        }
        let want: BTreeSet<i32> = keys.iter().map(|k| key_hash(*k)).collect();
        let got: BTreeSet<i32> = index[&(partition_bytes[p].clone(), *b)]
            .iter()
            .copied()
            .collect();
        assert_eq!(got, want, "hash index of partition '{p}' bucket {b}");
    }
    assert_eq!(
        index.len(),
        files.len(),
        "index files without data or the reverse"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_stay_in_their_bucket_across_commits_and_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let schema = r#"{"fields": [{"name": "dt", "type": "STRING NOT NULL"},
        {"name": "k", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "STRING"}],
        "partitionKeys": ["dt"], "primaryKeys": ["dt", "k"],
        "options": {"bucket": "-1", "dynamic-bucket.target-row-num": "10"}}"#;
    let table = Table::create(loc.to_str().unwrap(), schema.as_bytes())
        .await
        .unwrap();
    let mut model: BTreeMap<(String, i64), String> = BTreeMap::new();
    let mut commit = |dt: &str, keys: std::ops::Range<i64>, tag: &str| {
        let ks: Vec<i64> = keys.collect();
        let vs: Vec<String> = ks.iter().map(|k| format!("{tag}{k}")).collect();
        for (k, v) in ks.iter().zip(&vs) {
            model.insert((dt.to_owned(), *k), v.clone());
        }
        let dts = vec![dt; ks.len()];
        let vr: Vec<&str> = vs.iter().map(String::as_str).collect();
        batch(&dts, &ks, &vr)
    };
    let b1 = commit("a", 0..25, "x");
    let b2 = commit("b", 0..5, "y");
    let b3 = commit("a", 10..40, "z");
    write_commit(&table, &b1).await;
    write_commit(&table, &b2).await;
    // A fresh writer restores the index: keys 10..25 go back to their buckets, 25..40 fill
    // the last bucket and new ones.
    write_commit(&table, &b3).await;
    // One writer, two commits, the second updating keys the first one placed.
    let mut w = table.new_write().await.unwrap();
    let b4 = commit("a", 38..45, "w");
    w.write(&b4).await.unwrap();
    table
        .new_commit(None)
        .commit(w.prepare_commit().await.unwrap())
        .await
        .unwrap();
    let b5 = commit("a", 40..50, "u");
    w.write(&b5).await.unwrap();
    table
        .new_commit(None)
        .commit(w.prepare_commit().await.unwrap())
        .await
        .unwrap();

    let want: BTreeSet<String> = model
        .iter()
        .map(|((dt, k), v)| json!({"dt": dt, "k": k, "v": v}).to_string())
        .collect();
    assert_eq!(rows(&table).await, want);

    let files = keys_by_bucket(&loc);
    // 50 keys at 10 per bucket in 'a' (buckets 0..4), 5 keys in 'b' (bucket 0).
    let buckets: Vec<(String, i32)> = files.keys().cloned().collect();
    let mut expected: Vec<(String, i32)> = (0..5).map(|b| ("dt=a".to_owned(), b)).collect();
    expected.push(("dt=b".to_owned(), 0));
    assert_eq!(buckets, expected);
    for ((p, b), keys) in &files {
        assert_eq!(
            keys.len(),
            if p == "dt=a" { 10 } else { 5 },
            "{p} bucket {b}"
        );
    }
    let pb = |s: &str| {
        let col: ArrayRef = Arc::new(StringArray::from(vec![s]));
        let ty = paimon_kernel::spec::DataType::parse_sql("STRING NOT NULL").unwrap();
        binary_row_at(&[col], &[ty], 0)
            .unwrap()
            .row_bytes()
            .to_vec()
    };
    let partition_bytes: BTreeMap<String, Vec<u8>> =
        [("dt=a".to_owned(), pb("a")), ("dt=b".to_owned(), pb("b"))].into();
    check_index(&files, &live_hash_index(&table).await, &partition_bytes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writing_on_a_pypaimon_table_uses_its_hash_index() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/tables/corpus.db/pk_dynamic_bucket");
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    copy_dir(&src, &loc);
    let table = Table::open(loc.to_str().unwrap()).await.unwrap();
    let before = rows(&table).await;
    let mut model: BTreeMap<i64, Value> = BTreeMap::new();
    for r in &before {
        let v: Value = serde_json::from_str(r).unwrap();
        model.insert(v["k"].as_i64().unwrap(), v);
    }
    let existing: Vec<i64> = model.keys().copied().collect();
    assert!(existing.len() >= 10, "{existing:?}");
    // Update every existing key and add new ones.
    let mut ks = existing.clone();
    ks.extend(1000..1010);
    let vs: Vec<String> = ks.iter().map(|k| format!("new{k}")).collect();
    let vr: Vec<&str> = vs.iter().map(String::as_str).collect();
    let n: Vec<i32> = ks.iter().map(|k| *k as i32).collect();
    let b = batch(&[], &ks, &vr);
    let mut cols = b.columns().to_vec();
    cols.push(Arc::new(Int32Array::from(n.clone())));
    let mut fields: Vec<Field> = b.schema().fields().iter().map(|f| (**f).clone()).collect();
    fields.push(Field::new("n", arrow_schema::DataType::Int32, true));
    let b = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap();
    write_commit(&table, &b).await;
    for (k, v) in ks.iter().zip(&vs) {
        model.insert(*k, json!({"k": k, "v": v, "n": *k as i32}));
    }
    let want: BTreeSet<String> = model.values().map(Value::to_string).collect();
    assert_eq!(rows(&table).await, want);
    let files = keys_by_bucket(&loc);
    let empty = paimon_kernel::spec::BinaryRow::empty().row_bytes().to_vec();
    let partition_bytes: BTreeMap<String, Vec<u8>> = [(String::new(), empty)].into();
    check_index(&files, &live_hash_index(&table).await, &partition_bytes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_writers_of_one_dynamic_bucket_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let schema = r#"{"fields": [{"name": "k", "type": "BIGINT NOT NULL"},
        {"name": "v", "type": "STRING"}], "primaryKeys": ["k"],
        "options": {"bucket": "-1"}}"#;
    let table = Table::create(loc.to_str().unwrap(), schema.as_bytes())
        .await
        .unwrap();
    write_commit(&table, &batch(&[], &[1, 2], &["a", "b"])).await;
    let mut w1 = table.new_write().await.unwrap();
    let mut w2 = table.new_write().await.unwrap();
    w1.write(&batch(&[], &[3], &["c"])).await.unwrap();
    w2.write(&batch(&[], &[4], &["d"])).await.unwrap();
    let m1 = w1.prepare_commit().await.unwrap();
    let m2 = w2.prepare_commit().await.unwrap();
    table.new_commit(None).commit(m1).await.unwrap();
    let err = table.new_commit(None).commit(m2).await.unwrap_err();
    assert!(
        err.to_string().contains("hash index of bucket 0 changed"),
        "{err}"
    );
    // The loser's files are not visible; the winner's rows are.
    let want: BTreeSet<String> = [(1, "a"), (2, "b"), (3, "c")]
        .iter()
        .map(|(k, v)| json!({"k": k, "v": v}).to_string())
        .collect();
    assert_eq!(rows(&table).await, want);
    // Writing again from the new state succeeds.
    write_commit(&table, &batch(&[], &[4], &["d"])).await;
    assert_eq!(rows(&table).await.len(), 4);
}
