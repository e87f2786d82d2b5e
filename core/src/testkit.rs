//! Test support shared by the crate's unit tests: tables created in a [`MemoryStore`] and
//! written by the one-shot jobs, rows read back from the latest snapshot, hand-built data
//! file metadata, and the small `(k INT NOT NULL, v STRING)` primary-key schema with its
//! `_ROW_KIND` input. Each test module states only what differs.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use bytes::Bytes;

use crate::canonical::input::InputFormat;
use crate::error::Result;
use crate::io::{Machine, MemoryStore, Step, Work};
use crate::job::{JobSettings, RowInput, WriteJobOutcome, WriteMode, write_input_job};
use crate::read::{ReadContext, read_splits};
use crate::scan::planner::{ScanRequest, plan_scan};
use crate::schema::create::{create_table_machine, new_table_schema};
use crate::spec::special_fields::ROW_KIND_COLUMN;
use crate::spec::{
    BinaryRow, DataField, DataFileMeta, DataType, SimpleStats, TableSchema, TypeKind,
};

/// Job settings of the `n`th job: user `user-n`, time 2026-01-01 + `n` ms, seed `n`.
pub(crate) fn job_settings(n: u64) -> JobSettings {
    JobSettings {
        commit_user: format!("user-{n}"),
        time_millis: 1_767_225_600_000 + n as i64,
        seed: n,
        table_uri: None,
    }
}

/// A new in-memory table created from the schema JSON `schema` (as `create` takes it).
pub(crate) fn memory_table(schema: &str) -> MemoryStore {
    let mut store = MemoryStore::new();
    let schema = new_table_schema(schema.as_bytes(), 0).unwrap();
    store.run(create_table_machine(schema)).unwrap();
    store
}

/// CSV text (with its header line) as a writer's input.
pub(crate) fn csv_input(text: &str) -> RowInput {
    RowInput {
        name: "rows.csv".into(),
        bytes: Bytes::copy_from_slice(text.as_bytes()),
        format: InputFormat::Csv,
    }
}

/// Append `input` to the table with the write job, as the `n`th job ([`job_settings`]).
pub(crate) fn write_job(
    store: &mut MemoryStore,
    input: RowInput,
    n: u64,
) -> Result<WriteJobOutcome> {
    let m = Machine::once("write", move |io| async move {
        write_input_job(&io, &input, &WriteMode::Append, &job_settings(n)).await
    });
    store.run(m).map(|mut v| v.remove(0))
}

/// The batches of the latest snapshot planned with `request`, with the columns `columns`
/// (`None`: the table's columns).
pub(crate) fn read_latest(
    store: &mut MemoryStore,
    columns: Option<Vec<String>>,
    request: ScanRequest,
) -> Vec<RecordBatch> {
    let m = Machine::new("read", |io| async move {
        let plan = plan_scan(&io, &request).await?;
        let ctx = ReadContext::try_new(&plan, columns.as_deref(), None, None, 2)?;
        let mut read = read_splits(Arc::new(ctx), plan.splits);
        loop {
            match read.step()? {
                Step::NeedIo(requests) => {
                    for r in requests {
                        let answer = io.call(r.op).await;
                        read.provide(r.id, answer)?;
                    }
                }
                Step::Emit(batch) => io.emit_and_yield(batch).await,
                Step::Work(items) => items.into_iter().for_each(Work::run),
                Step::Wait => {}
                Step::Done => return Ok(()),
            }
        }
    });
    store.run(m).unwrap()
}

/// A data file `name` at level 0 with no rows, keys or statistics, sequence numbers 0..=0,
/// schema 0, `delete_row_count` 0 and every other optional field unset; tests set what they
/// need with `DataFileMeta { .., ..data_file(name) }`.
pub(crate) fn data_file(name: impl Into<String>) -> DataFileMeta {
    DataFileMeta {
        file_name: name.into(),
        delete_row_count: Some(0),
        ..DataFileMeta::test_default()
    }
}

impl DataFileMeta {
    /// A data file with an empty name and every field zero, empty or unset.
    pub(crate) fn test_default() -> Self {
        DataFileMeta {
            file_name: String::new(),
            file_size: 0,
            row_count: 0,
            min_key: BinaryRow::empty(),
            max_key: BinaryRow::empty(),
            key_stats: SimpleStats::empty(),
            value_stats: SimpleStats::empty(),
            min_sequence_number: 0,
            max_sequence_number: 0,
            schema_id: 0,
            level: 0,
            extra_files: Vec::new(),
            creation_time_millis: None,
            delete_row_count: None,
            embedded_index: None,
            file_source: None,
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            write_cols_sequences: None,
        }
    }
}

/// The table `(k INT NOT NULL, v STRING)` with `bucket` = `bucket` when given, primary key `k`
/// when `primary_key`, and `options` besides.
pub(crate) fn kv_schema(
    bucket: Option<&str>,
    primary_key: bool,
    options: &[(&str, &str)],
) -> TableSchema {
    TableSchema {
        version: 3,
        id: 0,
        fields: vec![
            DataField::new(0, "k", DataType::not_null(TypeKind::Int)),
            DataField::new(1, "v", DataType::parse_sql("STRING").unwrap()),
        ],
        highest_field_id: 1,
        partition_keys: Vec::new(),
        primary_keys: if primary_key {
            vec!["k".to_owned()]
        } else {
            Vec::new()
        },
        options: bucket
            .map(|b| ("bucket", b))
            .iter()
            .chain(options)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
        comment: None,
        time_millis: 0,
        raw_json: None,
    }
}

/// `(k, v, kind)` rows of [`kv_schema`] as an input batch with a `_ROW_KIND` column.
pub(crate) fn kv_input(rows: &[(i32, &str, &str)]) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("k", ArrowType::Int32, false),
        Field::new("v", ArrowType::Utf8, true),
        Field::new(ROW_KIND_COLUMN, ArrowType::Utf8, false),
    ]);
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.2))),
    ];
    RecordBatch::try_new(Arc::new(schema), cols).unwrap()
}
