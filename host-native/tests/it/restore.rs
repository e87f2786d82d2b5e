//! A writer restores only the partitions it writes: the manifests it reads, counted on a
//! recording object store.

use std::sync::{Arc, Mutex};

use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, PutOptions, PutPayload};
use paimon_native::{ObjectStoreHost, StoreKind, Table, TableLocation};

/// An in-memory store that records the path of every read (`get` without `head`) (also used
/// by the SQL tests).
#[derive(Debug, Default)]
pub(crate) struct RecordingStore {
    inner: InMemory,
    reads: Mutex<Vec<String>>,
}

impl RecordingStore {
    pub(crate) fn take_reads(&self) -> Vec<String> {
        std::mem::take(&mut *self.reads.lock().unwrap())
    }
}

impl std::fmt::Display for RecordingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecordingStore")
    }
}

#[async_trait::async_trait]
impl ObjectStore for RecordingStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<object_store::PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: object_store::PutMultipartOptions,
    ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(
        &self,
        location: &Path,
        options: object_store::GetOptions,
    ) -> object_store::Result<object_store::GetResult> {
        if !options.head {
            self.reads.lock().unwrap().push(location.to_string());
        }
        self.inner.get_opts(location, options).await
    }
    fn delete_stream(
        &self,
        locations: futures::stream::BoxStream<'static, object_store::Result<Path>>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }
    fn list(
        &self,
        prefix: Option<&Path>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(
        &self,
        prefix: Option<&Path>,
    ) -> object_store::Result<object_store::ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: object_store::CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

pub(crate) async fn recorded_table(schema_json: &str) -> (Table, Arc<RecordingStore>) {
    let store = Arc::new(RecordingStore::default());
    let host = ObjectStoreHost::new(TableLocation::from_store(
        Arc::clone(&store) as Arc<dyn ObjectStore>,
        StoreKind::Memory,
        "memory:///",
    ));
    let table = Table::create_with_host(host, schema_json.as_bytes())
        .await
        .unwrap();
    (table, store)
}

/// Rows `(dt, k, "v{k}")` for `k` in `ks`.
pub(crate) fn batch(dt: &str, ks: std::ops::Range<i32>) -> RecordBatch {
    let n = ks.len();
    let schema = Schema::new(vec![
        Field::new("dt", DataType::Utf8, false),
        Field::new("k", DataType::Int32, false),
        Field::new("v", DataType::Utf8, true),
    ]);
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n(dt, n))),
        Arc::new(Int32Array::from_iter_values(ks.clone())),
        Arc::new(StringArray::from_iter_values(ks.map(|k| format!("v{k}")))),
    ];
    RecordBatch::try_new(Arc::new(schema), cols).unwrap()
}

fn schema(bucket: i32) -> String {
    let bucket_key = if bucket > 0 {
        r#", "bucket-key": "k""#
    } else {
        ""
    };
    format!(
        r#"{{"fields": [{{"name": "dt", "type": "STRING NOT NULL"}},
        {{"name": "k", "type": "INT NOT NULL"}}, {{"name": "v", "type": "STRING"}}],
        "partitionKeys": ["dt"], "options": {{"bucket": "{bucket}"{bucket_key}}}}}"#
    )
}

/// Write `b` with a new writer and commit it.
pub(crate) async fn write_commit(table: &Table, b: &RecordBatch) {
    let mut w = table.new_write().await.unwrap();
    w.write(b).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();
}

/// (manifest lists, manifests) among `reads`.
fn manifest_reads(reads: &[String]) -> (usize, usize) {
    let lists = reads
        .iter()
        .filter(|p| p.starts_with("manifest/manifest-list-"))
        .count();
    let manifests = reads
        .iter()
        .filter(|p| {
            p.starts_with("manifest/manifest-") && !p.starts_with("manifest/manifest-list-")
        })
        .count();
    (lists, manifests)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_to_one_partition_reads_only_the_manifests_that_can_hold_it() {
    let (table, store) = recorded_table(&schema(2)).await;
    // Six commits, one partition each: six manifests, one per partition.
    for p in 0..6 {
        write_commit(&table, &batch(&format!("p{p}"), 0..10)).await;
    }
    store.take_reads();
    // The whole table's plan reads the two lists and all six manifests.
    table.scan().data_files().await.unwrap();
    assert_eq!(manifest_reads(&store.take_reads()), (2, 6));

    // A write of partition p3 reads the two lists and the one manifest of p3 (once, though
    // written twice).
    let mut w = table.new_write().await.unwrap();
    assert_eq!(manifest_reads(&store.take_reads()), (0, 0));
    w.write(&batch("p3", 10..14)).await.unwrap();
    w.write(&batch("p3", 14..16)).await.unwrap();
    assert_eq!(manifest_reads(&store.take_reads()), (2, 1));
    // A partition that no manifest can hold: the lists only.
    w.write(&batch("q", 0..2)).await.unwrap();
    assert_eq!(manifest_reads(&store.take_reads()), (2, 0));
    let messages = w.prepare_commit().await.unwrap();
    table.new_commit(None).commit(messages).await.unwrap();

    // Sequence numbers continue per bucket of p3 (16 rows so far over its two buckets).
    let before = table.scan().data_files().await.unwrap().unwrap();
    let mut w = table.new_write().await.unwrap();
    w.write(&batch("p3", 100..140)).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    let mut next = Vec::new();
    for m in &messages {
        let max_before = before
            .entries
            .iter()
            .filter(|e| e.partition == m.partition && e.bucket == m.bucket)
            .map(|e| e.file.max_sequence_number)
            .max()
            .unwrap();
        next.push((
            m.bucket,
            max_before + 1,
            m.data_increment.new_files[0].min_sequence_number,
        ));
    }
    next.sort_unstable();
    assert_eq!(next.len(), 2);
    assert!(next.iter().all(|(_, want, got)| want == got), "{next:?}");
    assert_eq!(next[0].1 + next[1].1, 16);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unaware_append_write_reads_no_manifest() {
    let (table, store) = recorded_table(&schema(-1)).await;
    for p in 0..3 {
        write_commit(&table, &batch(&format!("p{p}"), 0..10)).await;
    }
    store.take_reads();
    let mut w = table.new_write().await.unwrap();
    w.write(&batch("p1", 0..5)).await.unwrap();
    w.write(&batch("p9", 0..5)).await.unwrap();
    let messages = w.prepare_commit().await.unwrap();
    let reads = store.take_reads();
    assert_eq!(manifest_reads(&reads), (0, 0), "{reads:?}");
    assert!(
        !reads.iter().any(|p| p.starts_with("snapshot/")),
        "{reads:?}"
    );
    // New files start at sequence 0, as Java's AppendFileStoreWrite (previous files ignored).
    let seqs: Vec<(i64, i64)> = messages
        .iter()
        .flat_map(|m| m.data_increment.new_files.iter())
        .map(|f| (f.min_sequence_number, f.max_sequence_number))
        .collect();
    assert_eq!(seqs, vec![(0, 4), (0, 4)]);
}
