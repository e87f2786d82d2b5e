//! The `write` operation: create a table, write rows and commit them (one or more commits),
//! then read the table back, as a fixed sequence of machines.
//!
//! Sections, in order (see `conformance/README.md`):
//!
//! 1. `create` ([`create_table_machine`]), when the case creates the table: `Put
//!    schema/schema-0` create-new.
//! 2. Per commit `i` (from 0):
//!    * `restore-i`: the table's latest schema and the live files of its latest snapshot
//!      (reads only), from which a [`TableWrite`] continues (sequence numbers);
//!    * `write-i`: the data files of the pure [`TableWrite`] (`take_files` after the batch,
//!      then after `prepare_commit`), one round of create-new `Put`s per non-empty group, in
//!      the writer's order;
//!    * `commit-i`: [`commit_machine`] with the writer's messages.
//! 3. `snapshots` ([`list_snapshots`]), then `plan` and `split-<n>` (a scan of the latest
//!    snapshot, as the `scan` operation).
//!
//! Every input comes from the case (schema JSON, rows, commit user and identifier, times,
//! seeds), so the same case makes the same requests and the same `Put` bytes on every host.
//! The steps are public so that the crash tests can cut a run after any `Put` and run the
//! rest of it again ([`prepare_commit`], [`put_files`], [`commit_prepared`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field, Schema};
use futures_util::future::join_all;
use paimon_kernel::canonical::parse::batch_from_rows;
use paimon_kernel::commit::committer::WRITER_VERSION;
use paimon_kernel::commit::{
    CommitMessage, CommitMode, CommitOptions, CommitOutcome, commit_machine,
};
use paimon_kernel::io::FileToPut;
use paimon_kernel::io::{Io, Machine};
use paimon_kernel::scan::planner::read_live_entries;
use paimon_kernel::scan::snapshot_resolver::{
    TimeTravel, list_snapshots, read_latest_schema, resolve_snapshot,
};
use paimon_kernel::schema::create::{create_table_machine, new_table_schema};
use paimon_kernel::spec::TableSchema;
use paimon_kernel::spec::snapshot::BATCH_COMMIT_IDENTIFIER;
use paimon_kernel::spec::special_fields::ROW_KIND_COLUMN;
use paimon_kernel::write::{TableWrite, WriteOptions, WriteRestore};
use paimon_kernel::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::digest::sha256_hex;
use crate::driver::{Driver, Outcome, one, pretty, to_value};
use crate::scan::{ScanArgs, run_scan};

/// Creating the table (`operation.create`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateSpec {
    /// Paimon's schema JSON (`fields`, `partitionKeys`, `primaryKeys`, `options`, `comment`),
    /// as `paimon-kernel create --schema` takes it.
    pub schema: Value,
    /// `timeMillis` of schema 0.
    pub time_millis: i64,
}

/// An overwrite instead of an append (`operation.commits[i].overwrite`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverwriteSpec {
    /// Static partition to replace (`key → value` as text); absent: the whole table, or the
    /// partitions written to when the overwrite is dynamic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<BTreeMap<String, String>>,
    /// Dynamic partition overwrite; absent: `false` with a `partition`, else the table's
    /// `dynamic-partition-overwrite` (default true), as `paimon-kernel write --overwrite`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic: Option<bool>,
}

/// One write and commit (`operation.commits[i]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommitSpec {
    /// Rows as canonical JSON objects keyed by column name (see
    /// [`paimon_kernel::canonical::parse`]); a `_ROW_KIND` key (`+I`, `-U`, `+U`, `-D`) gives
    /// the row kind on primary-key tables. Written as one batch.
    pub rows: Vec<Map<String, Value>>,
    /// `commitUser`.
    pub commit_user: String,
    /// `commitIdentifier`; absent: the batch identifier (`i64::MAX`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_identifier: Option<i64>,
    /// Time of the data files and of the snapshot, epoch millis.
    pub time_millis: i64,
    /// Seed of the data files' names ([`WriteOptions::seed`]).
    pub seed: u64,
    /// Seed of the commit's metadata files ([`CommitOptions::seed`]).
    pub commit_seed: u64,
    /// `writerVersion` of the snapshot; absent: this build's
    /// [`paimon_kernel::commit::committer::WRITER_VERSION`] (the recorder always writes it,
    /// so that a version bump does not change recorded bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_version: Option<String>,
    /// Overwrite instead of append.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overwrite: Option<OverwriteSpec>,
}

impl CommitSpec {
    /// The commit options of this commit.
    pub fn commit_options(&self) -> CommitOptions {
        let mut o =
            CommitOptions::new(self.commit_user.clone(), self.time_millis, self.commit_seed)
                .with_identifier(self.commit_identifier.unwrap_or(BATCH_COMMIT_IDENTIFIER));
        o.writer_version = Some(
            self.writer_version
                .clone()
                .unwrap_or_else(|| WRITER_VERSION.to_string()),
        );
        o
    }

    /// The commit mode on a table with `schema`.
    pub fn commit_mode(&self, schema: &TableSchema) -> CommitMode {
        match &self.overwrite {
            None => CommitMode::Append,
            Some(o) => {
                let dynamic = o.dynamic.unwrap_or_else(|| {
                    o.partition.is_none()
                        && !schema
                            .options
                            .get("dynamic-partition-overwrite")
                            .is_some_and(|v| v.eq_ignore_ascii_case("false"))
                });
                CommitMode::Overwrite {
                    partition_filter: o.partition.clone(),
                    dynamic,
                }
            }
        }
    }
}

/// Everything commit `i` needs after its `restore-i` section: the files to `Put` and the
/// commit to run.
#[derive(Debug, Clone)]
pub struct PreparedCommit {
    /// The table's latest schema at `restore-i`.
    pub schema: TableSchema,
    /// The latest snapshot id at `restore-i`.
    pub base_snapshot: Option<i64>,
    /// The data files, one group per `Put` round.
    pub files: Vec<Vec<FileToPut>>,
    /// The writer's commit messages.
    pub messages: Vec<CommitMessage>,
    /// Append or overwrite.
    pub mode: CommitMode,
    /// User, identifier, time, seed.
    pub options: CommitOptions,
}

/// Run the `create` section.
///
/// # Errors
/// An invalid schema; "table already exists"; IO errors.
pub async fn create_table<D: Driver>(driver: &mut D, spec: &CreateSpec) -> Result<()> {
    let json = serde_json::to_vec(&spec.schema)
        .map_err(|e| Error::invalid(format!("schema JSON: {e}")))?;
    let schema = new_table_schema(&json, spec.time_millis)?;
    driver.drive("create", create_table_machine(schema)).await?;
    Ok(())
}

/// Run section `restore-<index>` and the pure writer: the data files and messages of
/// `spec`, with data file names from `seed` (normally `spec.seed`).
///
/// # Errors
/// No table; read errors; rows that do not fit the table (naming the column and row).
pub async fn prepare_commit<D: Driver>(
    driver: &mut D,
    index: usize,
    spec: &CommitSpec,
    seed: u64,
) -> Result<PreparedCommit> {
    let label = format!("restore-{index}");
    let m = Machine::once("restore", |io: Io<_>| async move {
        let Some(schema) = read_latest_schema(&io).await? else {
            return Err(Error::invalid("no table here: there is no schema file"));
        };
        let (base, restore) = match resolve_snapshot(&io, &TimeTravel::Latest).await? {
            Some(s) => (
                Some(s.id),
                WriteRestore::from_entries(&read_live_entries(&io, &s).await?),
            ),
            None => (None, WriteRestore::default()),
        };
        Ok((schema, base, restore))
    });
    let (schema, base_snapshot, restore) = one(driver.drive(&label, m).await?, &label)?;
    let mut writer = TableWrite::try_new(
        schema.clone(),
        restore,
        WriteOptions {
            seed,
            time_millis: spec.time_millis,
        },
    )?;
    let mut fields: Vec<Field> = writer
        .input_schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    if spec.rows.iter().any(|r| r.contains_key(ROW_KIND_COLUMN)) {
        fields.push(Field::new(ROW_KIND_COLUMN, ArrowType::Utf8, true));
    }
    let batch = batch_from_rows(&spec.rows, &Arc::new(Schema::new(fields)))?;
    writer.write(&batch)?;
    let mut files = vec![writer.take_files()];
    let messages = writer.prepare_commit()?;
    files.push(writer.take_files());
    files.retain(|g| !g.is_empty());
    Ok(PreparedCommit {
        mode: spec.commit_mode(&schema),
        options: spec.commit_options(),
        schema,
        base_snapshot,
        files,
        messages,
    })
}

/// Run section `write-<index>`: `Put` the data files create-new, one round per group.
///
/// # Errors
/// A file that exists already, or a failed `Put` (naming the file).
pub async fn put_files<D: Driver>(
    driver: &mut D,
    index: usize,
    files: &[Vec<FileToPut>],
) -> Result<()> {
    let groups = files.to_vec();
    let m = Machine::new("put data files", move |io: Io<()>| async move {
        for group in groups {
            let done = join_all(
                group
                    .iter()
                    .map(|f| paimon_kernel::io::put_file(&io, f.clone())),
            )
            .await;
            for (f, created) in group.iter().zip(done) {
                if !created? {
                    return Err(Error::invalid(format!(
                        "data file {} exists already (a new file name was taken)",
                        f.path
                    )));
                }
            }
        }
        Ok(())
    });
    driver.drive(&format!("write-{index}"), m).await?;
    Ok(())
}

/// Run section `commit-<index>` for `prepared`.
///
/// # Errors
/// The commit's errors (conflicts, IO).
pub async fn commit_prepared<D: Driver>(
    driver: &mut D,
    index: usize,
    prepared: &PreparedCommit,
) -> Result<CommitOutcome> {
    let label = format!("commit-{index}");
    let m = commit_machine(
        prepared.schema.clone(),
        prepared.messages.clone(),
        prepared.mode.clone(),
        prepared.options.clone(),
    );
    one(driver.drive(&label, m).await?, &label)
}

/// The canonical view of one commit: its data files (path, length, SHA-256) and outcome.
pub fn commit_json(prepared: &PreparedCommit, outcome: &CommitOutcome) -> Result<Value> {
    let files: Vec<Value> = prepared
        .files
        .iter()
        .flatten()
        .map(|f| match f.content.bytes() {
            Some(b) => Ok(json!({"path": f.path, "len": b.len(), "sha256": sha256_hex(b)})),
            None => Err(Error::unsupported(format!(
                "conformance write cases of streamed files ({})",
                f.path
            ))),
        })
        .collect::<Result<_>>()?;
    Ok(json!({
        "data_files": files,
        "messages": prepared.messages.len(),
        "outcome": to_value(outcome)?,
    }))
}

/// Read the table back: sections `snapshots`, `plan`, `split-<n>`. Returns the snapshots'
/// JSON and the scan's outcome.
///
/// # Errors
/// Read errors.
pub async fn read_back<D: Driver>(driver: &mut D) -> Result<(Value, Outcome)> {
    let m = Machine::once(
        "snapshots",
        |io: Io<_>| async move { list_snapshots(&io).await },
    );
    let snapshots = one(driver.drive("snapshots", m).await?, "snapshots")?;
    let scan = run_scan(driver, ScanArgs::default()).await?;
    Ok((to_value(&snapshots)?, scan))
}

/// Run the whole `write` operation. The result: `{"commits": [..], "snapshots": [..],
/// "read": {scan result}}` and the scan's Arrow stream.
///
/// # Errors
/// Whatever a section returns.
pub async fn run_write<D: Driver>(
    driver: &mut D,
    create: Option<&CreateSpec>,
    commits: &[CommitSpec],
) -> Result<Outcome> {
    if let Some(c) = create {
        create_table(driver, c).await?;
    }
    let mut rendered = Vec::new();
    for (i, spec) in commits.iter().enumerate() {
        let prepared = prepare_commit(driver, i, spec, spec.seed).await?;
        put_files(driver, i, &prepared.files).await?;
        let outcome = commit_prepared(driver, i, &prepared).await?;
        rendered.push(commit_json(&prepared, &outcome)?);
    }
    let (snapshots, scan) = read_back(driver).await?;
    let read: Value = serde_json::from_str(&scan.json)
        .map_err(|e| Error::invalid(format!("cannot render the result: {e}")))?;
    let value = json!({
        "commits": rendered,
        "snapshots": snapshots,
        "read": read,
    });
    Ok(Outcome {
        json: pretty(&value)?,
        arrow: scan.arrow,
    })
}
