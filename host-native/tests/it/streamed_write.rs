//! Large data files are streamed while they are encoded (multipart `Put`s of 8 MiB parts) and
//! primary-key flushes are driven a bucket at a time: Java Paimon 1.4.2 reads the tables as
//! we do, and the files hold every row.

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
    let mut ours: Vec<String> = canonical::batches_rows(&batches)
        .unwrap()
        .iter()
        .map(|r| r.to_string())
        .collect();
    ours.sort();
    let mut expected: Vec<String> = canonical::batches_rows(&[batch(0, 200_000)])
        .unwrap()
        .iter()
        .map(|r| r.to_string())
        .collect();
    expected.sort();
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
