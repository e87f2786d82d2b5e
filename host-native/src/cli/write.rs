//! `create` and `write`: make a table, write rows and commit them as one snapshot.

use std::io::IsTerminal;
use std::time::Instant;

use clap::Args;
use paimon_native::Table;

use super::error_chain;
use super::input::{input_format, read_input};

/// `paimon-kernel create TABLE --schema FILE`.
#[derive(Debug, Args)]
pub(crate) struct CreateArgs {
    /// Table directory or URL to create.
    table: String,
    /// Paimon's schema JSON (`fields`, `partitionKeys`, `primaryKeys`, `options`, `comment`);
    /// `-` for stdin.
    #[arg(long, value_name = "FILE")]
    schema: String,
}

/// `paimon-kernel write TABLE --input FILE|- [--format F] [--overwrite [--partition k=v,..]]`.
#[derive(Debug, Args)]
pub(crate) struct WriteArgs {
    /// Table directory or URL.
    table: String,
    /// Rows to write: a file, or `-` for stdin (an Arrow IPC stream unless `--format` says
    /// otherwise).
    #[arg(long, value_name = "FILE|-")]
    input: String,
    /// Input format; by default from the file extension (`.arrow`, `.parquet`, `.csv`,
    /// `.jsonl`), an Arrow IPC stream for `-`.
    #[arg(long, value_name = "arrow|parquet|csv|jsonl")]
    format: Option<String>,
    /// Replace the table's rows (or, with `--partition`, that partition's rows) instead of
    /// adding to them.
    #[arg(long)]
    overwrite: bool,
    /// The static partition to overwrite, `k=v,k2=v2` (needs `--overwrite`).
    #[arg(long, value_name = "k=v,...", requires = "overwrite")]
    partition: Option<String>,
    /// Commit user (default: a random UUID, as Java's batch writes). A user's batch commit is
    /// applied once: give the same user to make a retried job idempotent, a new one per job.
    #[arg(long, value_name = "USER")]
    commit_user: Option<String>,
    /// Do not commit: write the commit messages to FILE (`-` for stdout) as Java
    /// `CommitMessageSerializer` bytes (list form after `int32 version ‖ int32 length`, see
    /// `paimon_kernel::commit::serializer::encode_file`), for `commit TABLE --messages FILE`
    /// or a Java coordinator.
    #[arg(long, value_name = "FILE", conflicts_with = "overwrite")]
    prepare_only: Option<String>,
}

fn read_text(source: &str) -> Result<Vec<u8>, String> {
    if source == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
            .map_err(|e| format!("reading stdin: {e}"))?;
        return Ok(buf);
    }
    std::fs::read(source).map_err(|e| format!("reading {source}: {e}"))
}

/// Run `create`.
pub(crate) async fn create(a: CreateArgs, json: bool) -> Result<(), String> {
    let schema = read_text(&a.schema)?;
    let table = Table::create(&a.table, &schema)
        .await
        .map_err(|e| error_chain(&e))?;
    let schema = table.schema().await.map_err(|e| error_chain(&e))?;
    if json {
        super::print(
            &serde_json::json!({"location": table.location(), "schemaId": schema.id}).to_string(),
        );
    } else {
        super::print(&format!(
            "created table {} ({} columns)",
            table.location(),
            schema.fields.len()
        ));
    }
    Ok(())
}

/// Parse `k=v,k2=v2`.
fn parse_partition(spec: &str) -> Result<std::collections::BTreeMap<String, String>, String> {
    spec.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| format!("--partition: '{p}' is not k=v"))?;
            Ok((k.trim().to_owned(), v.to_owned()))
        })
        .collect()
}

/// Run `write`.
pub(crate) async fn write(a: WriteArgs, json: bool) -> Result<(), String> {
    let started = Instant::now();
    let table = Table::open(&a.table).await.map_err(|e| error_chain(&e))?;
    // One commit user for the file names (postpone-bucket tables) and the commit.
    let commit = table.new_commit(a.commit_user.clone());
    let mut writer = table
        .new_write_as(Some(commit.commit_user()))
        .await
        .map_err(|e| error_chain(&e))?;
    if a.overwrite {
        writer = writer.for_overwrite();
    }
    let format = match &a.format {
        Some(f) => Some(input_format(f).map_err(|e| error_chain(&e))?),
        None => None,
    };
    let mut schema = (*writer.input_schema()).clone();
    let mut fields: Vec<_> = schema.fields().iter().cloned().collect();
    fields.push(std::sync::Arc::new(arrow_schema::Field::new(
        paimon_kernel::spec::special_fields::ROW_KIND_COLUMN,
        arrow_schema::DataType::Utf8,
        true,
    )));
    schema = arrow_schema::Schema::new(fields);
    let batches =
        read_input(&a.input, format, &std::sync::Arc::new(schema)).map_err(|e| error_chain(&e))?;
    let progress = std::io::stderr().is_terminal();
    let mut last_report = Instant::now();
    let outcome: Result<_, paimon_native::Error> = async {
        for batch in batches {
            writer.write(&batch?).await?;
            if progress && last_report.elapsed().as_millis() >= 1000 {
                last_report = Instant::now();
                let secs = started.elapsed().as_secs_f64().max(1e-9);
                eprint!(
                    "\r{} rows, {} files, {:.0} rows/s",
                    writer.rows_written(),
                    writer.files_written(),
                    writer.rows_written() as f64 / secs
                );
            }
        }
        let messages = writer.prepare_commit().await?;
        // The write's own data files, and the files its level-0 compaction wrote.
        let counts = (
            messages
                .iter()
                .map(|m| m.data_increment.new_files.len())
                .sum::<usize>(),
            messages
                .iter()
                .map(|m| {
                    let c = &m.compact_increment;
                    c.compact_after
                        .iter()
                        .filter(|f| !c.compact_before.iter().any(|b| b.file_name == f.file_name))
                        .count()
                })
                .sum::<usize>(),
        );
        if let Some(path) = &a.prepare_only {
            write_messages(path, &messages)?;
            return Ok(Err(counts));
        }
        let partition = match &a.partition {
            Some(p) => Some(parse_partition(p).map_err(|e| {
                paimon_native::Error::kernel("write --partition", paimon_kernel::Error::invalid(e))
            })?),
            None => None,
        };
        let run = || async {
            if a.overwrite {
                commit.overwrite(partition.clone(), messages.clone()).await
            } else {
                commit.commit(messages.clone()).await
            }
        };
        // A failed commit may still have published its snapshot (an unknown outcome of the
        // snapshot's Put): running it again is safe (same user and identifier are applied
        // once) and tells which it was, before the data files are deleted.
        let outcome = match run().await {
            Ok(o) => o,
            Err(first) => match run().await {
                Ok(o) => o,
                Err(_) => return Err(first),
            },
        };
        Ok(Ok((outcome, counts)))
    }
    .await;
    if progress {
        eprintln!();
    }
    let (outcome, (files, compacted)) = match outcome {
        Ok(Ok(o)) => o,
        Ok(Err((files, compacted))) => {
            let rows = writer.rows_written();
            let path = a.prepare_only.as_deref().unwrap_or("-");
            if json {
                super::print(
                    &serde_json::json!({"rows": rows, "files": files,
                        "compaction_files": compacted, "messages": path})
                    .to_string(),
                );
            } else if path != "-" {
                super::print(&format!(
                    "wrote {rows} rows in {files} files{}; commit messages in {path} \
                     (not committed)",
                    compaction_note(compacted)
                ));
            }
            return Ok(());
        }
        Err(e) => {
            let rows = writer.rows_written();
            if matches!(
                e.as_kernel(),
                Some(paimon_kernel::Error::PartlyPublished { .. })
            ) {
                // The APPEND snapshot is in the table: its files must stay.
                return Err(format!(
                    "{} (after {rows} rows; the files written were kept)",
                    error_chain(&e)
                ));
            }
            let _ = writer.abort().await;
            return Err(format!(
                "{} (after {rows} rows; the files written were deleted)",
                error_chain(&e)
            ));
        }
    };
    let rows = writer.rows_written();
    warn_maintenance(&outcome);
    if outcome.snapshot_ids.is_empty() && outcome.already_committed {
        // This user's batch commit is already in the table: the files of this run are not
        // referenced by any snapshot.
        let _ = writer.abort().await;
        super::print(&format!(
            "nothing written: commit user {} already committed a batch to this table",
            a.commit_user.as_deref().unwrap_or("")
        ));
        return Ok(());
    }
    if json {
        super::print(
            &serde_json::json!({
                "rows": rows,
                "files": files,
                "compaction_files": compacted,
                "snapshots": outcome.snapshot_ids,
            })
            .to_string(),
        );
    } else {
        let snaps = outcome
            .snapshot_ids
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        super::print(&format!(
            "wrote {rows} rows in {files} files{}; snapshot {}",
            compaction_note(compacted),
            if snaps.is_empty() {
                "none (nothing to commit)".to_owned()
            } else {
                snaps
            }
        ));
    }
    Ok(())
}

/// `" (level-0 compaction: N files)"` when the write's compaction wrote files, else empty.
fn compaction_note(compacted: usize) -> String {
    if compacted == 0 {
        String::new()
    } else {
        format!(" (level-0 compaction: {compacted} files)")
    }
}

/// Write `messages` in the commit-message file form to `path` (`-`: stdout) for `write
/// --prepare-only` and `compact --prepare-only`.
pub(crate) fn write_messages(
    path: &str,
    messages: &[paimon_kernel::commit::CommitMessage],
) -> Result<(), paimon_native::Error> {
    let bytes = paimon_kernel::commit::serializer::encode_file(messages)
        .map_err(|e| paimon_native::Error::kernel("--prepare-only", e))?;
    let written = if path == "-" {
        std::io::Write::write_all(&mut std::io::stdout().lock(), &bytes)
    } else {
        std::fs::write(path, &bytes)
    };
    written.map_err(|e| {
        paimon_native::Error::kernel(
            "--prepare-only",
            paimon_kernel::Error::io(path, paimon_kernel::io::IoErrorKind::Other, e.to_string()),
        )
    })
}

/// `paimon-kernel commit TABLE --messages FILE [--overwrite [--partition k=v,..]]`.
#[derive(Debug, Args)]
pub(crate) struct CommitArgs {
    /// Table directory or URL.
    table: String,
    /// Commit messages: Java `CommitMessageSerializer` bytes in the file form of
    /// `write --prepare-only` (versions 1-12; `-` for stdin).
    #[arg(long, value_name = "FILE|-")]
    messages: String,
    /// Overwrite (as `write --overwrite`) instead of adding.
    #[arg(long)]
    overwrite: bool,
    /// The static partition to overwrite, `k=v,k2=v2` (needs `--overwrite`).
    #[arg(long, value_name = "k=v,...", requires = "overwrite")]
    partition: Option<String>,
    /// Commit user (default: a random UUID). The same user's batch commit is applied once.
    #[arg(long, value_name = "USER")]
    commit_user: Option<String>,
}

/// Run `commit`: commit messages another writer prepared, as one batch commit.
pub(crate) async fn commit(a: CommitArgs, json: bool) -> Result<(), String> {
    let bytes = read_text(&a.messages)?;
    let name = if a.messages == "-" {
        "stdin"
    } else {
        &a.messages
    };
    let messages = paimon_kernel::commit::serializer::decode_file(&bytes, name)
        .map_err(|e| format!("reading commit messages: {e}"))?;
    let table = Table::open(&a.table).await.map_err(|e| error_chain(&e))?;
    check_message_files(&table, &messages).await?;
    let commit = table.new_commit(a.commit_user.clone());
    let count = messages.len();
    let outcome = if a.overwrite {
        let partition = a.partition.as_deref().map(parse_partition).transpose()?;
        commit.overwrite(partition, messages).await
    } else {
        commit.commit(messages).await
    }
    .map_err(|e| error_chain(&e))?;
    warn_maintenance(&outcome);
    if json {
        super::print(
            &serde_json::json!({
                "messages": count,
                "snapshots": outcome.snapshot_ids,
                "alreadyCommitted": outcome.already_committed,
            })
            .to_string(),
        );
    } else if outcome.snapshot_ids.is_empty() {
        super::print(&format!(
            "committed nothing from {count} messages{}",
            if outcome.already_committed {
                " (this commit user already committed a batch)"
            } else {
                ""
            }
        ));
    } else {
        let snaps: Vec<String> = outcome.snapshot_ids.iter().map(|s| s.to_string()).collect();
        super::print(&format!(
            "committed {count} messages; snapshot {}",
            snaps.join(", ")
        ));
    }
    Ok(())
}

/// Refuse messages whose files are not in this table (e.g. prepared for another table):
/// every file they add must exist, or the commit would publish a snapshot naming missing
/// files.
async fn check_message_files(
    table: &Table,
    messages: &[paimon_kernel::commit::CommitMessage],
) -> Result<(), String> {
    let schema = table.schema().await.map_err(|e| error_chain(&e))?;
    let paths = paimon_kernel::commit::abort_paths(&schema, messages)
        .map_err(|e| format!("reading commit messages: {e}"))?;
    let machine = paimon_kernel::io::Machine::once("CheckMessageFiles", move |io| async move {
        let found = futures::future::join_all(paths.iter().map(|p| io.head(p))).await;
        let mut missing = Vec::new();
        for (p, f) in paths.iter().zip(found) {
            if f?.is_none() {
                missing.push(p.clone());
            }
        }
        Ok(missing)
    });
    let missing = table
        .host()
        .run_once(machine)
        .await
        .map_err(|e| error_chain(&e))?;
    if let Some(first) = missing.first() {
        return Err(format!(
            "the commit messages name {} file(s) that are not in table {} (e.g. {first}): \
             were they prepared for another table? Nothing was committed",
            missing.len(),
            table.location()
        ));
    }
    Ok(())
}

/// Print on stderr a failure of the maintenance after the commit (expiry, automatic tags):
/// the commit stands.
fn warn_maintenance(outcome: &paimon_kernel::commit::CommitOutcome) {
    if let Some(w) = &outcome.maintenance_warning {
        eprintln!("warning: the commit stands, but its maintenance (expiry, tags) failed: {w}");
    }
}
