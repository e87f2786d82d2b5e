//! `run SCENARIO.json WAREHOUSE`: build tables from a scenario, a JSON list of steps (create,
//! write, delete, update, alter, compact, tag, rollback, checkpoint), each run as the
//! subcommand of the same name runs it, and write what every checkpoint read.
//!
//! The language is documented in `conformance/scenarios/README.md` (format version 1). A
//! table is named `db.table` and lives at `WAREHOUSE/db.db/table`. After the last step, every
//! table with a checkpoint gets `WAREHOUSE/<table>.expected.json` (the shape of
//! `conformance/tables/*.expected.json`: the last checkpoint's `snapshot_id`, `row_count` and
//! `rows`, plus `checkpoints`, one per checkpoint step).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Args, Parser};
use paimon_native::Table;
use serde_json::{Value, json};

use super::error_chain;

/// The scenario format this build runs.
pub(crate) const FORMAT_VERSION: u64 = 1;

/// `paimon-kernel run SCENARIO.json WAREHOUSE`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The scenario file (JSON; see conformance/scenarios/README.md).
    scenario: String,
    /// Directory the scenario's tables are created in (`db.t` is `WAREHOUSE/db.db/t`).
    warehouse: String,
}

/// What a checkpoint read.
struct Checkpoint {
    name: String,
    snapshot_id: Option<i64>,
    rows: Vec<Value>,
}

/// Run `run`.
pub(crate) async fn run(a: RunArgs) -> Result<(), String> {
    let text =
        std::fs::read_to_string(&a.scenario).map_err(|e| format!("reading {}: {e}", a.scenario))?;
    let scenario: Value =
        serde_json::from_str(&text).map_err(|e| format!("scenario {}: {e}", a.scenario))?;
    let version = scenario.get("format_version").and_then(Value::as_u64);
    if version != Some(FORMAT_VERSION) {
        return Err(format!(
            "scenario {}: format_version {} is not supported (this build runs {FORMAT_VERSION})",
            a.scenario,
            version.map_or("missing".into(), |v| v.to_string())
        ));
    }
    let name = scenario
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| {
            Path::new(&a.scenario)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    let steps = scenario
        .get("steps")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("scenario {}: 'steps' must be a list", a.scenario))?;
    let warehouse = PathBuf::from(&a.warehouse);
    std::fs::create_dir_all(&warehouse)
        .map_err(|e| format!("creating {}: {e}", warehouse.display()))?;
    // The rows and schemas of the steps, as the subcommands read them from files.
    let scratch = Scratch::new()?;
    let mut checkpoints: BTreeMap<String, Vec<Checkpoint>> = BTreeMap::new();
    for (i, step) in steps.iter().enumerate() {
        let n = i + 1;
        let op = step
            .get("op")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("step {n}: 'op' must be a string"))?;
        let ident = step
            .get("table")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("step {n} ({op}): 'table' must be a string 'db.table'"))?;
        let location = table_dir(&warehouse, ident).map_err(|e| format!("step {n} ({op}): {e}"))?;
        let here = |e: String| format!("step {n} ({op} {ident}): {e}");
        if op == "checkpoint" {
            let cp = checkpoint(step, &location, n).await.map_err(here)?;
            super::print(&format!(
                "step {n}: checkpoint {} of {ident}: {} rows at snapshot {}",
                cp.name,
                cp.rows.len(),
                cp.snapshot_id.map_or("none".into(), |s| s.to_string())
            ));
            checkpoints.entry(ident.to_owned()).or_default().push(cp);
            continue;
        }
        let argv = step_argv(step, op, &location, &scratch.0, n).map_err(here)?;
        let cli = crate::Cli::try_parse_from(&argv).map_err(|e| here(e.to_string()))?;
        super::print(&format!("step {n}: {op} {ident}"));
        Box::pin(crate::run(cli)).await.map_err(here)?;
    }
    for (ident, cps) in &checkpoints {
        let file = warehouse.join(format!("{}.expected.json", table_name(ident)?));
        let text = serde_json::to_string_pretty(&expected_json(&name, ident, cps))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        std::fs::write(&file, text + "\n").map_err(|e| format!("{}: {e}", file.display()))?;
        super::print(&format!("wrote {}", file.display()));
    }
    Ok(())
}

/// A directory of the system's temp dir for the steps' input files, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self, String> {
        let dir = std::env::temp_dir().join(format!(
            "paimon-kernel-run-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        Ok(Self(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `db.t` → `WAREHOUSE/db.db/t`.
fn table_dir(warehouse: &Path, ident: &str) -> Result<String, String> {
    let (db, t) = ident
        .split_once('.')
        .filter(|(d, t)| !d.is_empty() && !t.is_empty() && !t.contains('.'))
        .ok_or_else(|| format!("table '{ident}' is not 'db.table'"))?;
    Ok(warehouse
        .join(format!("{db}.db"))
        .join(t)
        .to_string_lossy()
        .into_owned())
}

fn table_name(ident: &str) -> Result<&str, String> {
    ident
        .split_once('.')
        .map(|(_, t)| t)
        .ok_or_else(|| format!("table '{ident}' is not 'db.table'"))
}

fn str_field<'a>(step: &'a Value, key: &str) -> Result<Option<&'a str>, String> {
    match step.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("'{key}' must be a string")),
    }
}

fn bool_field(step: &Value, key: &str) -> Result<bool, String> {
    match step.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("'{key}' must be true or false")),
    }
}

/// Rows of a write or update step into a JSON-lines file of the scratch directory.
fn rows_file(step: &Value, scratch: &Path, n: usize) -> Result<String, String> {
    let rows = step
        .get("rows")
        .and_then(Value::as_array)
        .ok_or("'rows' must be a list of objects")?;
    let mut text = String::new();
    for (i, row) in rows.iter().enumerate() {
        if !row.is_object() {
            return Err(format!("rows[{i}] is not an object"));
        }
        text.push_str(&row.to_string());
        text.push('\n');
    }
    let path = scratch.join(format!("step-{n}.jsonl"));
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path.to_string_lossy().into_owned())
}

fn flag(argv: &mut Vec<String>, name: &str, value: &str) {
    argv.push(format!("--{name}"));
    argv.push(value.to_owned());
}

/// The command line a step runs, as the subcommand of the same name takes it.
fn step_argv(
    step: &Value,
    op: &str,
    location: &str,
    scratch: &Path,
    n: usize,
) -> Result<Vec<String>, String> {
    let mut argv: Vec<String> = vec!["paimon-kernel".into(), op.into(), location.into()];
    match op {
        "create" => {
            let schema = step.get("schema").ok_or("'schema' is missing")?;
            let path = scratch.join(format!("step-{n}.schema.json"));
            std::fs::write(&path, schema.to_string())
                .map_err(|e| format!("{}: {e}", path.display()))?;
            flag(&mut argv, "schema", &path.to_string_lossy());
        }
        "write" => {
            flag(&mut argv, "input", &rows_file(step, scratch, n)?);
            flag(&mut argv, "format", "jsonl");
            if let Some(u) = str_field(step, "commit_user")? {
                flag(&mut argv, "commit-user", u);
            }
            if bool_field(step, "overwrite")? {
                argv.push("--overwrite".into());
                if let Some(p) = str_field(step, "partition")? {
                    argv.push("--partition".into());
                    argv.push(p.into());
                }
            } else if step.get("partition").is_some() {
                return Err("'partition' needs \"overwrite\": true".into());
            }
        }
        "update" => {
            flag(&mut argv, "input", &rows_file(step, scratch, n)?);
            flag(&mut argv, "format", "jsonl");
        }
        "delete" => {
            let filter = str_field(step, "where")?.ok_or("'where' is missing")?;
            flag(&mut argv, "where", filter);
        }
        "alter" => {
            let changes = step
                .get("changes")
                .and_then(Value::as_array)
                .ok_or("'changes' must be a list of [flag, value] pairs")?;
            for c in changes {
                match c.as_array().map(Vec::as_slice) {
                    Some([Value::String(name), Value::String(value)]) => {
                        flag(&mut argv, name, value)
                    }
                    _ => return Err(format!("change {c} is not a [flag, value] pair")),
                }
            }
        }
        "compact" => {
            if bool_field(step, "full")? {
                argv.push("--full".into());
            }
            if let Some(p) = str_field(step, "partition")? {
                flag(&mut argv, "partition", p);
            }
        }
        "tag" => {
            let name = str_field(step, "name")?.ok_or("'name' is missing")?;
            argv = vec![
                "paimon-kernel".into(),
                "tag".into(),
                "create".into(),
                location.into(),
                name.into(),
            ];
            if let Some(s) = step.get("snapshot").and_then(Value::as_i64) {
                argv.push("--snapshot".into());
                argv.push(s.to_string());
            }
        }
        "rollback" => match (
            step.get("snapshot").and_then(Value::as_i64),
            str_field(step, "tag")?,
        ) {
            (Some(s), None) => flag(&mut argv, "snapshot", &s.to_string()),
            (None, Some(t)) => flag(&mut argv, "tag", t),
            _ => return Err("rollback needs exactly one of 'snapshot' and 'tag'".into()),
        },
        other => return Err(format!("unsupported scenario step {other}")),
    }
    Ok(argv)
}

/// Reads the table's latest snapshot (rows in canonical JSON, sorted by their text) and
/// compares them with the step's `rows` when it gives them.
async fn checkpoint(step: &Value, location: &str, n: usize) -> Result<Checkpoint, String> {
    let name = str_field(step, "name")?
        .map(str::to_owned)
        .unwrap_or_else(|| format!("step-{n}"));
    let table = Table::open(location).await.map_err(|e| error_chain(&e))?;
    let snapshot_id = table
        .latest_snapshot()
        .await
        .map_err(|e| error_chain(&e))?
        .map(|s| s.id);
    let rows = match snapshot_id {
        None => Vec::new(),
        Some(_) => {
            let batches = table
                .scan()
                .to_batches()
                .await
                .map_err(|e| error_chain(&e))?;
            paimon_kernel::canonical::batches_rows(&batches)
                .map_err(|e| format!("canonical rows: {e}"))?
        }
    };
    let rows = sorted(rows);
    if let Some(expected) = step.get("rows") {
        let expected = expected
            .as_array()
            .ok_or("checkpoint 'rows' must be a list of objects")?;
        let expected = sorted(expected.clone());
        if expected != rows {
            let text = |v: &[Value]| {
                v.iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join("\n  ")
            };
            return Err(format!(
                "checkpoint {name}: the table's rows differ from the scenario's ({} read, {} \
                 expected)\nread:\n  {}\nexpected:\n  {}",
                rows.len(),
                expected.len(),
                text(&rows),
                text(&expected)
            ));
        }
    }
    Ok(Checkpoint {
        name,
        snapshot_id,
        rows,
    })
}

fn sorted(mut rows: Vec<Value>) -> Vec<Value> {
    rows.sort_by_cached_key(Value::to_string);
    rows
}

fn expected_json(scenario: &str, ident: &str, cps: &[Checkpoint]) -> Value {
    let (db, t) = ident.split_once('.').unwrap_or(("", ident));
    let last = cps.last();
    json!({
        "format_version": 1,
        "generator": {"tool": "paimon-kernel run", "scenario": scenario},
        "table": t,
        "database": db,
        "identifier": ident,
        "path": format!("{db}.db/{t}"),
        "snapshot_id": last.and_then(|c| c.snapshot_id),
        "row_count": last.map_or(0, |c| c.rows.len()),
        "rows": last.map_or(Vec::new(), |c| c.rows.clone()),
        "checkpoints": cps.iter().map(|c| json!({
            "name": c.name,
            "snapshot_id": c.snapshot_id,
            "row_count": c.rows.len(),
            "rows": c.rows,
        })).collect::<Vec<_>>(),
    })
}
