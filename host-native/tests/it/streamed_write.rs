//! Large data files are streamed while they are encoded (multipart `Put`s of 8 MiB parts) and
//! primary-key flushes are driven a bucket at a time: Java Paimon 2.0.0 reads the tables as
//! we do, and the files hold every row. So do large `.blob` files and managed packs.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use paimon_kernel::canonical;
use paimon_native::Table;

use crate::oracle;

/// `rows` rows from `first`: `k` and a 160-character hex value that compresses poorly.
fn batch(first: i64, rows: i64) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Utf8, true),
    ]);
    let keys: Vec<i64> = (first..first + rows).collect();
    let values = keys.iter().map(|k| {
        let mut x = (*k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut s = String::with_capacity(160);
        for _ in 0..10 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s.push_str(&format!("{x:016x}"));
        }
        s
    });
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(keys.clone())),
        Arc::new(StringArray::from_iter_values(values)),
    ];
    RecordBatch::try_new(Arc::new(schema), cols).unwrap()
}

async fn write_streamed(schema: &str) {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let table = Table::create(loc.to_str().unwrap(), schema.as_bytes())
        .await
        .unwrap();
    let mut w = table.new_write().await.unwrap();
    for b in 0..20 {
        w.write(&batch(b * 10_000, 10_000)).await.unwrap();
    }
    let messages = w.prepare_commit().await.unwrap();
    let files: Vec<_> = messages
        .iter()
        .flat_map(|m| m.data_increment.new_files.iter().cloned())
        .collect();
    assert_eq!(files.len(), 1, "one data file");
    assert!(
        files[0].file_size > 16 << 20,
        "file of {} bytes",
        files[0].file_size
    );
    let parts = table.host().stats().parts_put;
    // At least one part before the last: the file was sent while it was encoded.
    assert!(parts >= 2, "{parts} parts put");
    table.new_commit(None).commit(messages).await.unwrap();

    // The file on disk has the size its metadata records.
    let path = loc.join("bucket-0").join(&files[0].file_name);
    assert_eq!(
        std::fs::metadata(&path).unwrap().len() as i64,
        files[0].file_size
    );
    let batches = Table::open(loc.to_str().unwrap())
        .await
        .unwrap()
        .scan()
        .to_batches()
        .await
        .unwrap();
    let ours = oracle::sorted_strings(&canonical::batches_rows(&batches).unwrap());
    let expected = oracle::sorted_strings(&canonical::batches_rows(&[batch(0, 200_000)]).unwrap());
    assert!(ours == expected, "our read differs from the input");
    if let Some(java) = oracle::java_rows(&loc) {
        assert_eq!(java.len(), expected.len());
        assert!(java == expected, "Java's read differs from the input");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_append_file_is_streamed_in_parts_and_java_reads_it() {
    write_streamed(
        r#"{"fields": [{"name": "k", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "STRING"}],
            "options": {"bucket": "-1", "file.format": "avro", "target-file-size": "1gb"}}"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_primary_key_file_is_streamed_in_parts_and_java_reads_it() {
    write_streamed(
        r#"{"fields": [{"name": "k", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "STRING"}],
            "primaryKeys": ["k"],
            "options": {"bucket": "1", "file.format": "orc", "orc.stripe.size": "4mb",
                        "target-file-size": "1gb"}}"#,
    )
    .await;
}

/// 24 blobs of 1 MiB each (poorly compressible), ids 0..24.
fn blob_batch() -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("b", DataType::LargeBinary, true),
    ]);
    let blobs: Vec<Vec<u8>> = (0..24u64)
        .map(|i| {
            let mut x = (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            (0..(1 << 17))
                .flat_map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x.to_le_bytes()
                })
                .collect()
        })
        .collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(arrow_array::Int32Array::from_iter_values(0..24)),
        Arc::new(arrow_array::LargeBinaryArray::from_iter_values(
            blobs.iter().map(Vec::as_slice),
        )),
    ];
    RecordBatch::try_new(Arc::new(schema), cols).unwrap()
}

/// Write the blobs through a table of `schema` at `dir`: the `.blob` file or managed pack goes
/// out in parts; we (and Java, for `java`) read every blob back.
async fn blobs_streamed(dir: &std::path::Path, schema: &str, java: bool) {
    let table = Table::create(dir.to_str().unwrap(), schema.as_bytes())
        .await
        .unwrap();
    let input = blob_batch();
    let mut w = table.new_write().await.unwrap();
    // Four batches of 6 MiB: the 8 MiB parts go out between them.
    for start in (0..24).step_by(6) {
        w.write(&input.slice(start, 6)).await.unwrap();
    }
    let messages = w.prepare_commit().await.unwrap();
    let parts = table.host().stats().parts_put;
    assert!(parts >= 3, "{parts} parts put");
    table.new_commit(None).commit(messages).await.unwrap();
    let batches = Table::open(dir.to_str().unwrap())
        .await
        .unwrap()
        .scan()
        .to_batches()
        .await
        .unwrap();
    let ours = oracle::sorted_strings(&canonical::batches_rows(&batches).unwrap());
    let expected = oracle::sorted_strings(&canonical::batches_rows(&[input]).unwrap());
    assert!(ours == expected, "our read differs from the input");
    if java && let Some(rows) = oracle::java_rows(dir) {
        assert!(rows == expected, "Java's read differs from the input");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_blob_file_is_streamed_in_parts_and_java_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    blobs_streamed(
        &tmp.path().join("wh/db.db/t"),
        r#"{"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "b", "type": "BLOB"}],
            "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}}"#,
        true,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_managed_pack_is_streamed_in_parts() {
    let tmp = tempfile::tempdir().unwrap();
    blobs_streamed(
        &tmp.path().join("wh/db.db/t"),
        r#"{"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "b", "type": "BLOB"}],
            "primaryKeys": ["id"], "options": {"bucket": "1"}}"#,
        false,
    )
    .await;
}

/// An in-memory store without multipart uploads (as object_store's HTTP store).
#[derive(Debug, Default)]
struct NoMultipartStore {
    inner: object_store::memory::InMemory,
}

impl std::fmt::Display for NoMultipartStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NoMultipartStore")
    }
}

#[async_trait::async_trait]
impl object_store::ObjectStore for NoMultipartStore {
    async fn put_opts(
        &self,
        location: &object_store::path::Path,
        payload: object_store::PutPayload,
        opts: object_store::PutOptions,
    ) -> object_store::Result<object_store::PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        _location: &object_store::path::Path,
        _opts: object_store::PutMultipartOptions,
    ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
        Err(object_store::Error::NotImplemented {
            operation: "put_multipart_opts".into(),
            implementer: "NoMultipartStore".into(),
        })
    }
    async fn get_opts(
        &self,
        location: &object_store::path::Path,
        options: object_store::GetOptions,
    ) -> object_store::Result<object_store::GetResult> {
        self.inner.get_opts(location, options).await
    }
    fn delete_stream(
        &self,
        locations: futures::stream::BoxStream<
            'static,
            object_store::Result<object_store::path::Path>,
        >,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::path::Path>> {
        self.inner.delete_stream(locations)
    }
    fn list(
        &self,
        prefix: Option<&object_store::path::Path>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(
        &self,
        prefix: Option<&object_store::path::Path>,
    ) -> object_store::Result<object_store::ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &object_store::path::Path,
        to: &object_store::path::Path,
        options: object_store::CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// A store without multipart uploads still takes large files: the host buffers the parts and
/// writes the file with one create-new put at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_without_multipart_uploads_gets_large_files_in_one_put() {
    let store: Arc<dyn object_store::ObjectStore> = Arc::new(NoMultipartStore::default());
    let host = paimon_native::ObjectStoreHost::new(paimon_native::TableLocation::from_store(
        store,
        paimon_native::StoreKind::Memory,
        "memory:///",
    ));
    let table = Table::create_with_host(
        host,
        br#"{"fields": [{"name": "k", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "STRING"}],
            "options": {"bucket": "-1", "file.format": "avro", "target-file-size": "1gb"}}"#,
    )
    .await
    .unwrap();
    let mut w = table.new_write().await.unwrap();
    for b in 0..20 {
        w.write(&batch(b * 10_000, 10_000)).await.unwrap();
    }
    let messages = w.prepare_commit().await.unwrap();
    assert!(table.host().stats().parts_put >= 2, "parts were sent");
    let size = messages[0].data_increment.new_files[0].file_size;
    assert!(size > 16 << 20, "file of {size} bytes");
    table.new_commit(None).commit(messages).await.unwrap();
    let batches = table.scan().to_batches().await.unwrap();
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(rows, 200_000);
    let ours = oracle::sorted_strings(&canonical::batches_rows(&batches).unwrap());
    let expected = oracle::sorted_strings(&canonical::batches_rows(&[batch(0, 200_000)]).unwrap());
    assert!(ours == expected, "the read differs from the input");
}
