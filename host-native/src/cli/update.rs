//! `update`: set columns of existing rows of a data-evolution table by `_ROW_ID`.

use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field, Schema};
use clap::Args;
use paimon_native::Table;

use super::error_chain;
use super::input::{InputFormat, input_format, read_input};

/// `paimon-kernel update TABLE --input FILE [--format F] [--commit-user U]`.
#[derive(Debug, Args)]
pub(crate) struct UpdateArgs {
    /// Table directory or URL (a data-evolution table).
    table: String,
    /// Rows with a `_ROW_ID` column and the columns to set (only those are written); `-` for
    /// an Arrow IPC stream on stdin. CSV: the header names the columns; JSON lines: the first
    /// line's keys name them (every line must carry them).
    #[arg(long, value_name = "FILE")]
    input: String,
    /// Input format: arrow, parquet, csv, jsonl (default: from the extension).
    #[arg(long)]
    format: Option<String>,
    /// Commit user (default: a random UUID, as Java's batch writes).
    #[arg(long, value_name = "USER")]
    commit_user: Option<String>,
}

/// The column names the input sets: CSV header or first JSON line; `None` for Arrow/Parquet
/// (their own schema says).
fn named_columns(path: &str, format: InputFormat) -> Result<Option<Vec<String>>, String> {
    use std::io::BufRead;
    if !matches!(format, InputFormat::Csv | InputFormat::Jsonl) {
        return Ok(None);
    }
    if path == "-" {
        return Err("update: CSV and JSON lines input must be a file (stdin takes Arrow)".into());
    }
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut first = String::new();
    let mut first_keys: Option<Vec<String>> = None;
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{path}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        if matches!(format, InputFormat::Csv) {
            first = line;
            break;
        }
        // JSON lines: every line sets the same columns (a missing key would set NULL).
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("{path}: line {}: {e}", n + 1))?;
        let mut keys: Vec<String> = v
            .as_object()
            .ok_or_else(|| format!("{path}: line {} is not a JSON object", n + 1))?
            .keys()
            .cloned()
            .collect();
        keys.sort();
        match &first_keys {
            None => {
                first_keys = Some(keys);
                first = line;
            }
            Some(want) if *want != keys => {
                let missing: Vec<&String> = want.iter().filter(|k| !keys.contains(k)).collect();
                return Err(format!(
                    "{path}: line {}: every line must set the columns of the first line \
                     ({want:?}); this one lacks {missing:?} or has others",
                    n + 1
                ));
            }
            Some(_) => {}
        }
    }
    if first.is_empty() {
        return Err(format!("{path}: no rows"));
    }
    Ok(Some(match format {
        // The header as a CSV record (quoted names may hold commas and quotes).
        InputFormat::Csv => csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(first.as_bytes())
            .records()
            .next()
            .transpose()
            .map_err(|e| format!("{path}: header: {e}"))?
            .map(|r| r.iter().map(|c| c.trim().to_owned()).collect())
            .unwrap_or_default(),
        _ => {
            let v: serde_json::Value =
                serde_json::from_str(&first).map_err(|e| format!("{path}: line 1: {e}"))?;
            v.as_object()
                .ok_or_else(|| format!("{path}: line 1 is not a JSON object"))?
                .keys()
                .cloned()
                .collect()
        }
    }))
}

/// Run `update`.
pub(crate) async fn run(a: UpdateArgs, json: bool) -> Result<(), String> {
    let table = Table::open(&a.table).await.map_err(|e| error_chain(&e))?;
    let schema = table.schema().await.map_err(|e| error_chain(&e))?;
    let table_arrow =
        paimon_kernel::types::paimon_to_arrow_schema(&schema.fields).map_err(|e| format!("{e}"))?;
    let format = match &a.format {
        Some(f) => input_format(f).map_err(|e| error_chain(&e))?,
        None if a.input == "-" => InputFormat::Arrow,
        None => InputFormat::from_path(&a.input)
            .ok_or_else(|| format!("{}: give --format (arrow, parquet, csv, jsonl)", a.input))?,
    };
    let row_id = Field::new("_ROW_ID", ArrowType::Int64, false);
    let fields: Vec<Field> = match named_columns(&a.input, format)? {
        Some(names) => names
            .iter()
            .map(|n| {
                if n == "_ROW_ID" {
                    return Ok(row_id.clone());
                }
                table_arrow
                    .field_with_name(n)
                    .map(|f| f.clone().with_nullable(true))
                    .map_err(|_| format!("update: column '{n}' is not in the table"))
            })
            .collect::<Result<_, String>>()?,
        None => std::iter::once(row_id)
            .chain(table_arrow.fields().iter().map(|f| (**f).clone()))
            .collect(),
    };
    let input_schema = Arc::new(Schema::new(fields));
    let batches = read_input(&a.input, Some(format), &input_schema).map_err(|e| error_chain(&e))?;
    let batches: Vec<_> = batches
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| error_chain(&e))?;
    let Some(first) = batches.first() else {
        return Err(format!("{}: no rows", a.input));
    };
    let batch = arrow_select::concat::concat_batches(&first.schema(), &batches)
        .map_err(|e| format!("{}: {e}", a.input))?;
    let outcome = table
        .update(&batch, a.commit_user)
        .await
        .map_err(|e| error_chain(&e))?;
    if json {
        super::print(
            &serde_json::json!({
                "rows": outcome.rows_updated,
                "ranges": outcome.ranges,
                "snapshots": outcome.commit.snapshot_ids,
            })
            .to_string(),
        );
    } else {
        let snaps: Vec<String> = outcome
            .commit
            .snapshot_ids
            .iter()
            .map(ToString::to_string)
            .collect();
        super::print(&format!(
            "updated {} rows in {} row-id ranges; snapshot {}",
            outcome.rows_updated,
            outcome.ranges,
            snaps.join(", ")
        ));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn csv_header_names_are_csv_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.csv");
        std::fs::write(&path, "_ROW_ID,\"a,b\",\"say \"\"hi\"\"\"\n1,2,x\n").unwrap();
        let names = named_columns(path.to_str().unwrap(), InputFormat::Csv)
            .unwrap()
            .unwrap();
        assert_eq!(names, ["_ROW_ID", "a,b", "say \"hi\""]);
    }
}
