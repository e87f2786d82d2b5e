//! What a case runs: an [`Operation`] is a fixed sequence of core machines, each driven by a
//! [`Driver`] under a label (`plan`, `split-0`, `split-1`...; `create`, `restore-0`,
//! `write-0`, `commit-0`... for writes). The sequence depends only on
//! the operation and on what earlier machines emitted, never on host scheduling: a host that
//! reads splits in parallel records the same sections as one that reads them in turn.

use std::collections::BTreeMap;

use paimon_kernel::io::{Io, Machine};
use paimon_kernel::scan::snapshot_resolver::{
    TimeTravel, list_snapshots, list_tags, read_schema, resolve_snapshot,
};
use paimon_kernel::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::driver::{Driver, Outcome, one, pretty, to_value};
use crate::scan::{ScanArgs, run_plan, scan_request};
use crate::write::{CommitSpec, CreateSpec, run_write};

/// An operation of a case with its parameters (`case.json` `operation`).
///
/// Time travel: at most one of `snapshot_id` and `tag`; `options` are further table option
/// overrides (e.g. `scan.timestamp-millis`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Operation {
    /// Every snapshot still present. Sections: `snapshots`.
    Snapshots,
    /// Every tag with its snapshot. Sections: `tags`.
    Tags,
    /// The snapshot a read sees and its schema. Sections: `schema`.
    Schema {
        /// Snapshot id, `None` for the latest.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snapshot_id: Option<i64>,
        /// Tag name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tag: Option<String>,
    },
    /// A scan plan (splits and their files). Sections: `plan`.
    Plan {
        /// Snapshot id, `None` for the latest.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snapshot_id: Option<i64>,
        /// Tag name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tag: Option<String>,
        /// Further option overrides.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        options: BTreeMap<String, String>,
    },
    /// A full read. Sections: `plan`, then `split-<i>` for each split in plan order until
    /// `limit` rows were read.
    Scan {
        /// Snapshot id, `None` for the latest.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snapshot_id: Option<i64>,
        /// Tag name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tag: Option<String>,
        /// Further option overrides.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        options: BTreeMap<String, String>,
        /// Output columns, `None` for every field of the read schema.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        columns: Option<Vec<String>>,
        /// Row filter in the `--where` syntax ([`Predicate::parse`]).
        #[serde(default, rename = "where", skip_serializing_if = "Option::is_none")]
        filter: Option<String>,
        /// At most this many rows in total.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u64>,
        /// Rows per batch (0: the core's default).
        #[serde(default)]
        batch_size: usize,
    },
    /// Create a table (when `create` is given), write and commit rows (one write and commit
    /// per entry of `commits`), then read the table back. Sections: `create`; per commit `i`
    /// `restore-i`, `write-i`, `commit-i`; then `snapshots`, `plan`, `split-<n>` (see
    /// [`crate::write`]).
    Write {
        /// The table to create first.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        create: Option<CreateSpec>,
        /// The writes and commits, in order.
        commits: Vec<CommitSpec>,
    },
}

impl Operation {
    /// A scan of the latest snapshot with defaults.
    pub fn scan() -> Operation {
        Operation::Scan {
            snapshot_id: None,
            tag: None,
            options: BTreeMap::new(),
            columns: None,
            filter: None,
            limit: None,
            batch_size: 0,
        }
    }
}

/// Run `op` through `driver`.
///
/// # Errors
/// Whatever a machine or the driver returns; [`Error::Invalid`] for a bad filter or column.
pub async fn run_operation<D: Driver>(driver: &mut D, op: &Operation) -> Result<Outcome> {
    match op {
        Operation::Snapshots => {
            let m = Machine::once(
                "snapshots",
                |io: Io<_>| async move { list_snapshots(&io).await },
            );
            let snapshots = one(driver.drive("snapshots", m).await?, "snapshots")?;
            Ok(Outcome {
                json: pretty(&to_value(&snapshots)?)?,
                arrow: None,
            })
        }
        Operation::Tags => {
            let m = Machine::once("tags", |io: Io<_>| async move { list_tags(&io).await });
            let tags = one(driver.drive("tags", m).await?, "tags")?;
            let rendered: Vec<Value> = tags
                .iter()
                .map(|(name, tag)| {
                    Ok(json!({
                        "name": name,
                        "snapshot": to_value(&tag.snapshot)?,
                        "tag_create_time": format!("{:?}", tag.tag_create_time),
                        "tag_time_retained": format!("{:?}", tag.tag_time_retained),
                    }))
                })
                .collect::<Result<_>>()?;
            Ok(Outcome {
                json: pretty(&Value::Array(rendered))?,
                arrow: None,
            })
        }
        Operation::Schema { snapshot_id, tag } => {
            let travel = match (snapshot_id, tag) {
                (Some(id), _) => TimeTravel::SnapshotId(*id),
                (None, Some(t)) => TimeTravel::Tag(t.clone()),
                (None, None) => TimeTravel::Latest,
            };
            let m = Machine::once("schema", move |io: Io<_>| async move {
                let Some(snapshot) = resolve_snapshot(&io, &travel).await? else {
                    return Ok(None);
                };
                let schema = read_schema(&io, snapshot.schema_id).await?;
                Ok(Some((snapshot.id, schema)))
            });
            let got = one(driver.drive("schema", m).await?, "schema")?;
            let value = match got {
                None => Value::Null,
                Some((id, schema)) => json!({"snapshot_id": id, "schema": to_value(&schema)?}),
            };
            Ok(Outcome {
                json: pretty(&value)?,
                arrow: None,
            })
        }
        Operation::Plan {
            snapshot_id,
            tag,
            options,
        } => {
            let plan =
                run_plan(driver, scan_request(*snapshot_id, tag.as_deref(), options)).await?;
            Ok(Outcome {
                json: pretty(&to_value(&plan)?)?,
                arrow: None,
            })
        }
        Operation::Scan { .. } => run_scan(driver, op).await,
        Operation::Write { create, commits } => run_write(driver, create.as_ref(), commits).await,
    }
}

/// Run a [`Operation::Scan`] (sections `plan`, `split-<n>`, see [`crate::scan::run_scan`]);
/// any other operation is an [`Error::Invalid`].
///
/// # Errors
/// As [`run_operation`].
pub async fn run_scan<D: Driver>(driver: &mut D, op: &Operation) -> Result<Outcome> {
    let Operation::Scan {
        snapshot_id,
        tag,
        options,
        columns,
        filter,
        limit,
        batch_size,
    } = op
    else {
        return Err(Error::invalid("run_scan needs a scan operation"));
    };
    let args = ScanArgs {
        snapshot_id: *snapshot_id,
        tag: tag.as_deref(),
        options: Some(options),
        columns: columns.as_deref(),
        filter: filter.as_deref(),
        limit: *limit,
        batch_size: *batch_size,
    };
    crate::scan::run_scan(driver, args).await
}
