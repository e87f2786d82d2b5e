// Physical floor of a write: encode the batches of an Arrow IPC file into one Parquet file with
// arrow-rs `parquet` (ArrowWriter, one thread) and the writer properties paimon-kernel's Parquet
// writer uses by default (core/src/write/encode/parquet.rs): data page v1, zstd level 1, 1 MiB
// pages of at most 20,000 rows, 1 MiB dictionary pages, dictionary on, page statistics, column
// index truncated at 64 bytes, a row group closed at 128 MiB (estimated encoded size).
// usage: encode_floor <input.arrow> <output.parquet> [append|pk|pkN]
//   pk: the key-value layout of a primary-key data file (`_KEY_id`, `_SEQUENCE_NUMBER`,
//       `_VALUE_KIND`, then the row), unsorted: the bytes a PK writer encodes, without its sort.
//   pkN (N = 2, 3, ...): as pk, into N files <output.parquet>.0 .. .N-1, each input batch cut
//       into N contiguous slices, slice i to file i: a table of N buckets writes N files, each
//       with its own dictionaries and statistics (no routing, no sort, no copy).
use arrow_array::{ArrayRef, Int64Array, Int8Array, RecordBatch};
use arrow_ipc::reader::FileReader;
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use std::sync::Arc;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(3).map(String::as_str).unwrap_or("append");
    let pk = mode.starts_with("pk");
    let files: usize = match mode.strip_prefix("pk") {
        Some("") | None => 1,
        Some(n) => n.parse()?,
    };
    let t0 = Instant::now();
    let reader = FileReader::try_new(std::fs::File::open(&args[1])?, None)?;
    let mut batches = Vec::new();
    for b in reader {
        batches.push(b?);
    }
    let t_read = t0.elapsed();
    let t1 = Instant::now();
    let in_schema = batches[0].schema();
    let schema = if pk {
        let mut fields = vec![
            Field::new("_KEY_id", DataType::Int64, false),
            Field::new("_SEQUENCE_NUMBER", DataType::Int64, false),
            Field::new("_VALUE_KIND", DataType::Int8, false),
        ];
        fields.extend(in_schema.fields().iter().map(|f| f.as_ref().clone()));
        Arc::new(Schema::new(fields))
    } else {
        in_schema.clone()
    };
    let props = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
        .set_data_page_size_limit(1 << 20)
        .set_data_page_row_count_limit(20_000)
        .set_dictionary_page_size_limit(1 << 20)
        .set_dictionary_enabled(true)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_column_index_truncate_length(Some(64))
        .set_max_row_group_row_count(None)
        .build();
    let paths: Vec<String> = match files {
        1 => vec![args[2].clone()],
        n => (0..n).map(|i| format!("{}.{i}", args[2])).collect(),
    };
    let mut writers = Vec::new();
    for p in &paths {
        let out = std::fs::File::create(p)?;
        writers.push(ArrowWriter::try_new(out, schema.clone(), Some(props.clone()))?);
    }
    let mut rows = 0i64;
    for b in &batches {
        let b = if pk {
            let n = b.num_rows();
            let mut cols: Vec<ArrayRef> = vec![
                b.column(0).clone(),
                Arc::new(Int64Array::from_iter_values(rows..rows + n as i64)),
                Arc::new(Int8Array::from(vec![0i8; n])),
            ];
            cols.extend(b.columns().iter().cloned());
            RecordBatch::try_new(schema.clone(), cols)?
        } else {
            b.clone()
        };
        rows += b.num_rows() as i64;
        let n = b.num_rows();
        for (i, w) in writers.iter_mut().enumerate() {
            let (start, end) = (n * i / files, n * (i + 1) / files);
            w.write(&b.slice(start, end - start))?;
            if w.in_progress_size() >= 128 << 20 {
                w.flush()?;
            }
        }
    }
    let mut row_groups = 0;
    for w in writers {
        row_groups += w.close()?.num_row_groups();
    }
    let t_enc = t1.elapsed();
    let mut bytes = 0;
    for p in &paths {
        bytes += std::fs::metadata(p)?.len();
    }
    println!(
        "writer=arrow-rs-parquet-encode-floor files={files} rows={rows} row_groups={row_groups} file_bytes={bytes} read_s={:.3} encode_s={:.3} total_s={:.3}",
        t_read.as_secs_f64(),
        t_enc.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
