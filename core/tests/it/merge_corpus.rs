//! Merge-on-read of the primary-key corpus tables: every level-0 file of a bucket is one
//! sorted run, read lazily through `Io` by a `RunSource`, merged by `MergeReader` and compared
//! with `<table>.expected.json` rows.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures_util::future::BoxFuture;
use paimon_kernel::format::data_file::{DataFileReader, FileFormat};
use paimon_kernel::io::{Io, Machine};
use paimon_kernel::merge::{MergeConfig, MergeReader, RunSource};
use paimon_kernel::spec::decode_schema;
use paimon_kernel::types::cast_batch_to;
use serde_json::Value;

use crate::canonical::render_batch;
use crate::common::{expected, load_table, table_dir};

/// A sorted run made of data files read one batch at a time through `Io`.
struct FileRun {
    io: Io<RecordBatch>,
    /// (path, size) of the files still to open, in key order.
    files: VecDeque<(String, u64)>,
    reader: Option<(DataFileReader, String)>,
    read_schema: SchemaRef,
    batch_size: usize,
}

impl RunSource for FileRun {
    fn next_batch(&mut self) -> BoxFuture<'_, paimon_kernel::Result<Option<RecordBatch>>> {
        Box::pin(async move {
            loop {
                if let Some((reader, path)) = self.reader.as_mut() {
                    if let Some(batch) = reader.next_batch(&self.io).await? {
                        return cast_batch_to(&batch, &self.read_schema, path).map(Some);
                    }
                    self.reader = None;
                }
                let Some((path, size)) = self.files.pop_front() else {
                    return Ok(None);
                };
                let names: Vec<String> = self
                    .read_schema
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect();
                let reader = DataFileReader::open(
                    &self.io,
                    &path,
                    size,
                    FileFormat::from_path(&path).unwrap(),
                    Some(&names),
                    self.batch_size,
                )
                .await?;
                self.reader = Some((reader, path));
            }
        })
    }
}

/// Merge every bucket of `table` (latest snapshot) and render the rows, sorted by key.
fn merge_table(table: &str, file_batch_size: usize, out_batch_size: usize) -> Vec<Value> {
    let exp = expected(table);
    let schema_id = exp["schema_id"].as_i64().unwrap();
    let schema_path = table_dir(table).join(format!("schema/schema-{schema_id}"));
    let schema = decode_schema(
        &std::fs::read(&schema_path).unwrap(),
        &schema_path.to_string_lossy(),
    )
    .unwrap();
    let config = MergeConfig::from_table_schema(&schema).unwrap();
    let names: Vec<String> = schema.fields.iter().map(|f| f.name.clone()).collect();
    let read_schema = config.input_schema(&config.read_fields(&names)).unwrap();
    let value_count = schema.fields.len();

    // Files per (partition, bucket); level-0 runs ordered newest first (max sequence number
    // descending). Postpone-bucket files (bucket -2) are invisible to batch reads.
    let mut buckets: BTreeMap<String, Vec<(i64, String)>> = BTreeMap::new();
    for f in exp["files"].as_array().unwrap() {
        assert_eq!(f["level"], 0);
        let bucket = f["bucket"].as_i64().unwrap();
        if bucket == -2 {
            continue;
        }
        let dir = match f["partition"].as_str() {
            Some(p) => format!("{p}/bucket-{bucket}"),
            None => format!("bucket-{bucket}"),
        };
        buckets.entry(dir.clone()).or_default().push((
            f["max_sequence_number"].as_i64().unwrap(),
            format!("{dir}/{}", f["file_path"].as_str().unwrap()),
        ));
    }
    let mut store = load_table(table);
    let sizes: BTreeMap<String, u64> = store
        .objects
        .iter()
        .map(|(k, v)| (k.clone(), v.len() as u64))
        .collect();
    let mut rows: Vec<Value> = Vec::new();
    for (bucket, mut files) in buckets {
        files.sort_by_key(|f| std::cmp::Reverse(f.0));
        let config = config.clone();
        let read_schema = Arc::clone(&read_schema);
        let sizes = sizes.clone();
        let machine = Machine::new("merge-bucket", move |io: Io<RecordBatch>| async move {
            let runs: Vec<Box<dyn RunSource>> = files
                .into_iter()
                .map(|(_, path)| {
                    let size = sizes[&path];
                    Box::new(FileRun {
                        io: io.clone(),
                        files: VecDeque::from([(path, size)]),
                        reader: None,
                        read_schema: Arc::clone(&read_schema),
                        batch_size: file_batch_size,
                    }) as Box<dyn RunSource>
                })
                .collect();
            let mut reader = MergeReader::try_new(
                &config,
                read_schema,
                (0..value_count).collect(),
                runs,
                out_batch_size,
            )?;
            while let Some(batch) = reader.next_batch().await? {
                io.emit(batch);
            }
            Ok(())
        });
        let batches = store
            .run(machine)
            .unwrap_or_else(|e| panic!("{table} bucket {bucket}: {e}"));
        for b in &batches {
            assert!(b.num_rows() <= out_batch_size);
            rows.extend(render_batch(b));
        }
    }
    let sort_key: Vec<String> = exp["sort_key"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    rows.sort_by(|a, b| {
        for k in &sort_key {
            let o = cmp_json(&a[k], &b[k]);
            if o != std::cmp::Ordering::Equal {
                return o;
            }
        }
        a.to_string().cmp(&b.to_string())
    });
    rows
}

fn cmp_json(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => std::cmp::Ordering::Equal,
        (Value::Null, _) => std::cmp::Ordering::Less,
        (_, Value::Null) => std::cmp::Ordering::Greater,
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x.as_f64().unwrap().total_cmp(&y.as_f64().unwrap()),
        },
        _ => a.to_string().cmp(&b.to_string()),
    }
}

fn check(table: &str) {
    let exp = expected(table);
    let want = exp["rows"].as_array().unwrap();
    for (file_batch, out_batch) in [(0, 4096), (1, 1), (2, 3), (3, 5)] {
        let got = merge_table(table, file_batch, out_batch);
        assert_eq!(
            got.len(),
            want.len(),
            "{table} (file batch {file_batch}, output batch {out_batch}): row count"
        );
        for (g, w) in got.iter().zip(want) {
            assert_eq!(
                g, w,
                "{table} (file batch {file_batch}, output batch {out_batch})"
            );
        }
    }
}

#[test]
fn pk_dedup() {
    check("pk_dedup");
}

#[test]
fn pk_dedup_seqfield() {
    check("pk_dedup_seqfield");
}

#[test]
fn pk_partial_update() {
    check("pk_partial_update");
}

#[test]
fn pk_aggregation() {
    check("pk_aggregation");
}

#[test]
fn pk_agg_merge_map() {
    check("pk_agg_merge_map");
}

#[test]
fn pk_first_row_dv_mor() {
    check("pk_first_row_dv_mor");
}

#[test]
fn pk_dedup_orc_and_avro() {
    check("pk_dedup_orc");
    check("pk_dedup_avro");
}

#[test]
fn pk_dedup_partitioned() {
    check("pk_dedup_partitioned");
}

#[test]
fn pk_other_dedup_tables() {
    for t in [
        "pk_dynamic_bucket",
        "pk_postpone",
        "pk_dv_mor",
        "pk_changelog_input",
    ] {
        check(t);
    }
}
