//! Recording conformance cases: a host that answers with an [`ObjectStoreHost`] and records
//! every round, and the `paimon-kernel record` command.
//!
//! ```text
//! paimon-kernel record --out conformance/cases/NAME -- scan TABLE --snapshot 2 --columns a,b
//! ```
//!
//! The words after `--` are a read command (`scan`, `plan`/`files`, `snapshots`, `tags`,
//! `schema`) with the read subcommands' arguments. They are turned into a
//! [`paimon_conformance::Operation`], run as the operation's fixed sequence of machines (plan,
//! then one reader per split in plan order) one after the other, and written as a case in the
//! format of `conformance/README.md`: `case.json`, `transcript.jsonl`, `expected/`, and the
//! bodies into the shared, content-addressed `blobs/` directory (default: `../../blobs`
//! relative to `--out`, i.e. `conformance/blobs`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use paimon_conformance::format::{FORMAT_NAME, FORMAT_VERSION};
use paimon_conformance::record::Recorder;
use paimon_conformance::{Case, Driver, Operation, run_operation};
use paimon_kernel::io::{Machine, Step};

use crate::error::{Error, Result};
use crate::host::ObjectStoreHost;

/// A [`Driver`] answering every round with an [`ObjectStoreHost`] and recording it.
#[derive(Debug)]
pub struct RecordingHost {
    host: ObjectStoreHost,
    /// What was recorded so far.
    pub recorder: Recorder,
}

impl RecordingHost {
    /// Record what `host` answers.
    pub fn new(host: ObjectStoreHost) -> Self {
        RecordingHost {
            host,
            recorder: Recorder::new(),
        }
    }
}

impl Driver for RecordingHost {
    async fn drive<T: Send + 'static>(
        &mut self,
        label: &str,
        mut machine: Machine<T>,
    ) -> paimon_kernel::Result<Vec<T>> {
        self.recorder.begin(label);
        let mut out = Vec::new();
        loop {
            match machine.step()? {
                Step::NeedIo(round) => {
                    let answers = self.host.answer_round(round.clone()).await;
                    self.recorder.round(&round, &answers);
                    for (id, answer) in answers {
                        machine.provide(id, answer)?;
                    }
                }
                Step::Emit(item) => out.push(item),
                Step::Work(items) => items.into_iter().for_each(|w| w.run()),
                Step::Wait => {}
                Step::Done => return Ok(out),
            }
        }
    }
}

/// Arguments of `paimon-kernel record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Case directory to write (e.g. conformance/cases/append_parquet-latest).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Shared blob directory (default: ../../blobs relative to --out).
    #[arg(long, value_name = "DIR")]
    pub blobs: Option<PathBuf>,
    /// Table name stored in case.json (default: the last component of TABLE).
    #[arg(long, value_name = "NAME")]
    pub table_name: Option<String>,
    /// The read command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "READ COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Parser)]
#[command(name = "paimon-kernel record --", no_binary_name = true)]
struct ReadCli {
    #[command(subcommand)]
    command: ReadCommand,
}

#[derive(Debug, Subcommand)]
enum ReadCommand {
    /// Read rows.
    Scan(ScanArgs),
    /// Plan a scan (splits and files).
    #[command(alias = "files")]
    Plan(TravelArgs),
    /// Every snapshot.
    Snapshots(TableArg),
    /// Every tag.
    Tags(TableArg),
    /// The schema of a snapshot.
    Schema(TravelArgs),
}

#[derive(Debug, Args)]
struct TableArg {
    table: String,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct TravelArgs {
    table: String,
    #[arg(long, value_name = "N", conflicts_with = "tag")]
    snapshot: Option<i64>,
    #[arg(long, value_name = "T")]
    tag: Option<String>,
    /// Table option override KEY=VALUE (repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ScanArgs {
    #[command(flatten)]
    travel: TravelArgs,
    /// Output columns, comma-separated.
    #[arg(long, value_delimiter = ',')]
    columns: Option<Vec<String>>,
    /// Row filter.
    #[arg(long = "where", value_name = "FILTER")]
    filter: Option<String>,
    /// At most this many rows.
    #[arg(long)]
    limit: Option<u64>,
    /// Rows per batch.
    #[arg(long, default_value_t = 0)]
    batch_size: usize,
    /// Output format of the scan command (ignored: a case stores Arrow IPC and JSON).
    #[arg(long)]
    format: Option<String>,
}

fn usage(reason: String) -> Error {
    Error::kernel("record", paimon_kernel::Error::invalid(reason))
}

fn options(list: &[String]) -> Result<BTreeMap<String, String>> {
    list.iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| usage(format!("--option {kv}: expected KEY=VALUE")))
        })
        .collect()
}

fn parse(command: &[String]) -> Result<(String, Operation)> {
    let cli = ReadCli::try_parse_from(command)
        .map_err(|e| usage(format!("the read command after --: {e}")))?;
    Ok(match cli.command {
        ReadCommand::Scan(a) => (
            a.travel.table,
            Operation::Scan {
                snapshot_id: a.travel.snapshot,
                tag: a.travel.tag,
                options: options(&a.travel.options)?,
                columns: a.columns,
                filter: a.filter,
                limit: a.limit,
                batch_size: a.batch_size,
            },
        ),
        ReadCommand::Plan(a) => (
            a.table,
            Operation::Plan {
                snapshot_id: a.snapshot,
                tag: a.tag,
                options: options(&a.options)?,
            },
        ),
        ReadCommand::Snapshots(a) => (a.table, Operation::Snapshots),
        ReadCommand::Tags(a) => (a.table, Operation::Tags),
        ReadCommand::Schema(a) => (
            a.table,
            Operation::Schema {
                snapshot_id: a.snapshot,
                tag: a.tag,
            },
        ),
    })
}

/// `paimon-kernel record`: run the read command's operation against the real table,
/// recording every round, and write the case. Returns a one-line summary.
///
/// # Errors
/// A usage error for a bad read command; the operation's error (nothing is written then);
/// file system errors writing the case.
pub async fn record_command(args: RecordArgs) -> Result<String> {
    let (table, operation) = parse(&args.command)?;
    let host = ObjectStoreHost::open(&table)?;
    let mut recording = RecordingHost::new(host);
    let outcome = run_operation(&mut recording, &operation)
        .await
        .map_err(|e| Error::kernel(format!("recording {table}"), e))?;
    let name = args
        .out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let table_name = args.table_name.unwrap_or_else(|| {
        table
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(&table)
            .to_string()
    });
    let case = Case {
        format: FORMAT_NAME.to_string(),
        version: FORMAT_VERSION,
        name: name.clone(),
        table: table_name,
        operation,
    };
    let blobs_dir = args
        .blobs
        .unwrap_or_else(|| args.out.join("..").join("..").join("blobs"));
    recording
        .recorder
        .write(&case, &outcome, &args.out, &blobs_dir)
        .map_err(|e| usage(format!("writing {}: {e}", args.out.display())))?;
    let t = &recording.recorder.transcript;
    Ok(format!(
        "recorded {name}: {} sections, {} rounds, {} requests, {} blobs",
        t.sections.len(),
        t.sections.iter().map(|s| s.rounds.len()).sum::<usize>(),
        t.request_count(),
        recording.recorder.blobs.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use paimon_conformance::replay::replay_case;

    fn corpus_table(name: &str) -> String {
        format!(
            "{}/../conformance/tables/corpus.db/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    /// A recording over the object_store host replays through the core to the same result,
    /// and the recorded rounds are those of the operation (plan, then one section per split).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn recorded_scan_replays_to_the_same_result() {
        let op = Operation::Scan {
            snapshot_id: Some(1),
            tag: None,
            options: BTreeMap::new(),
            columns: Some(vec!["k".into(), "val".into()]),
            filter: Some("k >= 2".into()),
            limit: None,
            batch_size: 0,
        };
        let host = ObjectStoreHost::open(&corpus_table("pk_dedup")).unwrap();
        let mut rec = RecordingHost::new(host);
        let outcome = run_operation(&mut rec, &op).await.unwrap();
        let t = &rec.recorder.transcript;
        assert_eq!(t.sections[0].label, "plan");
        assert!(
            t.sections[1..]
                .iter()
                .enumerate()
                .all(|(i, s)| s.label == format!("split-{i}"))
        );
        let case = Case {
            format: FORMAT_NAME.into(),
            version: FORMAT_VERSION,
            name: "t".into(),
            table: "pk_dedup".into(),
            operation: op,
        };
        let replayed = replay_case(&case, t, &rec.recorder.blobs).unwrap();
        assert_eq!(replayed, outcome);
        assert!(outcome.json.contains("\"k\": 2"), "{}", outcome.json);
    }

    #[test]
    fn read_commands_become_operations() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let (table, op) = parse(&words(
            "scan /t --tag v1 --columns a,b --where a>1 --limit 5 --format arrow",
        ))
        .unwrap();
        assert_eq!(table, "/t");
        assert_eq!(
            op,
            Operation::Scan {
                snapshot_id: None,
                tag: Some("v1".into()),
                options: BTreeMap::new(),
                columns: Some(vec!["a".into(), "b".into()]),
                filter: Some("a>1".into()),
                limit: Some(5),
                batch_size: 0,
            }
        );
        assert_eq!(
            parse(&words("snapshots /t")).unwrap().1,
            Operation::Snapshots
        );
        assert!(parse(&words("scan /t --snapshot 1 --tag x")).is_err());
        assert!(parse(&words("frobnicate /t")).is_err());
    }
}
