//! Recording conformance cases: a host that answers with an [`ObjectStoreHost`] and records
//! every round, and the `paimon-kernel record` command.
//!
//! ```text
//! paimon-kernel record --out conformance/cases/NAME -- scan TABLE --snapshot 2 --columns a,b
//! ```
//!
//! The words after `--` are a read command (`scan`, `plan`/`files`, `snapshots`, `tags`,
//! `schema`) with the read subcommands' arguments, or `write` (below). They are turned into a
//! [`paimon_conformance::Operation`], run as the operation's fixed sequence of machines (plan,
//! then one reader per split in plan order) one after the other, and written as a case in the
//! format of `conformance/README.md`: `case.json`, `transcript.jsonl`, `expected/`, and the
//! bodies into the shared, content-addressed `blobs/` directory (default: `../../blobs`
//! relative to `--out`, i.e. `conformance/blobs`).
//!
//! Writes create a new table in a directory that starts empty, with every input fixed by the
//! command (times, seeds, commit users), so that replay makes the same `Put`s:
//!
//! ```text
//! paimon-kernel record --out conformance/cases/NAME -- write /tmp/t --spec SPEC.json
//! paimon-kernel record --out conformance/cases/NAME -- write /tmp/t --schema S.json \
//!     --input ROWS.jsonl --commit-user u --time-millis 1700000000000 --seed 1 [--overwrite]
//! ```
//!
//! `SPEC.json` holds the parameters of the `write` operation (`create`, `commits`; see
//! `conformance/README.md`); a commit may give `rows_file` (JSON lines, relative to the spec
//! file) instead of `rows`. The recorder fills in each commit's `writer_version` when absent.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use paimon_conformance::format::{FORMAT_NAME, FORMAT_VERSION};
use paimon_conformance::record::Recorder;
use paimon_conformance::write::{CommitSpec, CreateSpec, OverwriteSpec};
use paimon_conformance::{Case, Driver, Operation, run_operation};
use paimon_kernel::commit::committer::WRITER_VERSION;
use paimon_kernel::io::{Machine, Step};
use serde_json::Value;

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
                    self.recorder
                        .round(&round, &without_modified_times(&answers));
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

/// `answers` with the modification times of listed objects left out: they differ on every
/// run, and a transcript must be the same for the same table (the reads and writes recorded
/// here do not look at them).
fn without_modified_times(
    answers: &[(paimon_kernel::io::RequestId, paimon_kernel::io::IoAnswer)],
) -> Vec<(paimon_kernel::io::RequestId, paimon_kernel::io::IoAnswer)> {
    use paimon_kernel::io::IoAnswer;
    answers
        .iter()
        .map(|(id, a)| match a {
            IoAnswer::List { objects } => (
                *id,
                IoAnswer::List {
                    objects: objects
                        .iter()
                        .map(|o| {
                            let mut o = o.clone();
                            o.modified_millis = None;
                            o
                        })
                        .collect(),
                },
            ),
            other => (*id, other.clone()),
        })
        .collect()
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
    /// The read (or `write`) command and its arguments, after `--`.
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
    /// Create a table in an empty directory, write and commit rows, read it back.
    Write(WriteArgs),
}

#[derive(Debug, Args)]
struct WriteArgs {
    /// The table directory (empty or absent).
    table: String,
    /// The `write` operation's parameters as JSON (`create`, `commits`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["schema", "input"])]
    spec: Option<PathBuf>,
    /// Paimon's schema JSON of the table to create (one-commit form).
    #[arg(long, value_name = "FILE", requires = "input")]
    schema: Option<PathBuf>,
    /// Rows as JSON lines (canonical values; `_ROW_KIND` for row kinds).
    #[arg(long, value_name = "FILE.jsonl", requires = "schema")]
    input: Option<PathBuf>,
    /// Commit user.
    #[arg(long, default_value = "conformance")]
    commit_user: String,
    /// Time of the schema, the files and the snapshot (epoch millis).
    #[arg(long, default_value_t = 1_700_000_000_000)]
    time_millis: i64,
    /// Seed of the data file names; the commit's seed is this plus one.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Overwrite instead of append.
    #[arg(long)]
    overwrite: bool,
    /// Static partition to overwrite, `k=v,k2=v2`.
    #[arg(long, value_name = "k=v,...", requires = "overwrite")]
    partition: Option<String>,
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

fn read_json_file(path: &std::path::Path) -> Result<Value> {
    let text = std::fs::read(path).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    serde_json::from_slice(&text).map_err(|e| usage(format!("{}: {e}", path.display())))
}

/// JSON lines as row objects.
fn read_jsonl(path: &std::path::Path) -> Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l)
                .map_err(|e| usage(format!("{} line {}: {e}", path.display(), n + 1)))
        })
        .collect()
}

/// The `write` operation of `paimon-kernel record -- write`.
fn write_operation(a: &WriteArgs) -> Result<Operation> {
    let mut op = match (&a.spec, &a.schema, &a.input) {
        (Some(spec), _, _) => {
            let mut value = read_json_file(spec)?;
            let dir = spec.parent().map(PathBuf::from).unwrap_or_default();
            if let Some(commits) = value.get_mut("commits").and_then(Value::as_array_mut) {
                for c in commits {
                    let Some(obj) = c.as_object_mut() else {
                        continue;
                    };
                    if let Some(file) = obj.remove("rows_file") {
                        let file = file
                            .as_str()
                            .ok_or_else(|| usage("rows_file must be a path".to_string()))?;
                        obj.insert("rows".into(), Value::Array(read_jsonl(&dir.join(file))?));
                    }
                }
            }
            if let Some(obj) = value.as_object_mut() {
                obj.insert("op".into(), Value::from("write"));
            }
            serde_json::from_value(value).map_err(|e| usage(format!("{}: {e}", spec.display())))?
        }
        (None, Some(schema), Some(input)) => {
            let rows = read_jsonl(input)?
                .into_iter()
                .map(|r| match r {
                    Value::Object(m) => Ok(m),
                    other => Err(usage(format!(
                        "{}: a row must be a JSON object, got {other}",
                        input.display()
                    ))),
                })
                .collect::<Result<Vec<_>>>()?;
            let overwrite = if a.overwrite {
                let partition = a
                    .partition
                    .as_deref()
                    .map(|p| {
                        p.split(',')
                            .filter(|kv| !kv.trim().is_empty())
                            .map(|kv| {
                                kv.split_once('=')
                                    .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                                    .ok_or_else(|| usage(format!("--partition: '{kv}' is not k=v")))
                            })
                            .collect::<Result<BTreeMap<_, _>>>()
                    })
                    .transpose()?;
                Some(OverwriteSpec {
                    partition,
                    dynamic: None,
                })
            } else {
                None
            };
            Operation::Write {
                create: Some(CreateSpec {
                    schema: read_json_file(schema)?,
                    time_millis: a.time_millis,
                }),
                commits: vec![CommitSpec {
                    rows,
                    commit_user: a.commit_user.clone(),
                    commit_identifier: None,
                    time_millis: a.time_millis,
                    seed: a.seed,
                    commit_seed: a.seed.wrapping_add(1),
                    writer_version: None,
                    overwrite,
                }],
            }
        }
        _ => {
            return Err(usage(
                "write: give --spec FILE, or --schema FILE and --input FILE".to_string(),
            ));
        }
    };
    if let Operation::Write { commits, .. } = &mut op {
        for c in commits {
            c.writer_version
                .get_or_insert_with(|| WRITER_VERSION.to_string());
        }
    }
    Ok(op)
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
        ReadCommand::Write(a) => {
            let op = write_operation(&a)?;
            (a.table, op)
        }
    })
}

/// `paimon-kernel record`: run the read (or write) command's operation against the real table,
/// recording every round, and write the case. Returns a one-line summary.
///
/// # Errors
/// A usage error for a bad read command; the operation's error (nothing is written then);
/// file system errors writing the case.
pub async fn record_command(args: RecordArgs) -> Result<String> {
    let (table, operation) = parse(&args.command)?;
    if matches!(operation, Operation::Write { .. }) {
        // A write case starts from an empty table directory: leftovers would change its IO.
        let dir = std::path::Path::new(&table);
        if dir
            .read_dir()
            .is_ok_and(|mut entries| entries.next().is_some())
        {
            return Err(usage(format!(
                "write: {table} is not empty (a write case starts from an empty directory)"
            )));
        }
    }
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

    /// A write recorded over the object_store host (a fresh directory) makes exactly the
    /// checked-in case's transcript and result, and replays to it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn recorded_write_matches_the_checked_in_case() {
        let conformance = format!("{}/../conformance", env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("t");
        let words: Vec<String> = [
            "write",
            table.to_str().unwrap(),
            "--spec",
            &format!("{conformance}/write-specs/pk_updates_deletes.json"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (_, op) = parse(&words).unwrap();
        let mut rec = RecordingHost::new(ObjectStoreHost::open(table.to_str().unwrap()).unwrap());
        let outcome = run_operation(&mut rec, &op).await.unwrap();
        let case_dir = std::path::Path::new(&conformance).join("cases/write.pk_updates_deletes");
        let checked_in = paimon_conformance::replay::LoadedCase::load(
            &case_dir,
            &std::path::Path::new(&conformance).join("blobs"),
        )
        .unwrap();
        assert_eq!(op, checked_in.case.operation);
        assert_eq!(rec.recorder.transcript, checked_in.transcript);
        assert_eq!(outcome.json, checked_in.expected_json);
        let replayed = replay_case(
            &checked_in.case,
            &rec.recorder.transcript,
            &rec.recorder.blobs,
        )
        .unwrap();
        assert_eq!(replayed, outcome);
        // A second recording into the same, now non-empty, directory is refused.
        let args = RecordArgs {
            out: dir.path().join("case"),
            blobs: None,
            table_name: None,
            command: words,
        };
        let err = record_command(args).await.unwrap_err().to_string();
        assert!(err.contains("not empty"), "{err}");
    }

    #[test]
    fn write_commands_become_operations() {
        let dir = tempfile::tempdir().unwrap();
        let schema = dir.path().join("s.json");
        std::fs::write(&schema, r#"{"fields": [{"name": "a", "type": "INT"}]}"#).unwrap();
        let rows = dir.path().join("r.jsonl");
        std::fs::write(&rows, "{\"a\": 1}\n\n{\"a\": 2}\n").unwrap();
        let words: Vec<String> = format!(
            "write /t --schema {} --input {} --seed 7 --overwrite --partition a=1",
            schema.display(),
            rows.display()
        )
        .split(' ')
        .map(String::from)
        .collect();
        let (table, op) = parse(&words).unwrap();
        assert_eq!(table, "/t");
        let Operation::Write { create, commits } = op else {
            panic!("{op:?}")
        };
        assert_eq!(create.unwrap().schema["fields"][0]["name"], "a");
        assert_eq!(commits.len(), 1);
        let c = &commits[0];
        assert_eq!((c.seed, c.commit_seed, c.rows.len()), (7, 8, 2));
        assert_eq!(c.writer_version.as_deref(), Some(WRITER_VERSION));
        let o = c.overwrite.as_ref().unwrap();
        assert_eq!(o.partition.as_ref().unwrap()["a"], "1");
        // A spec with rows from a JSON lines file.
        let spec = dir.path().join("spec.json");
        std::fs::write(
            &spec,
            r#"{"commits": [{"rows_file": "r.jsonl", "commit_user": "u", "time_millis": 1,
                "seed": 1, "commit_seed": 2}]}"#,
        )
        .unwrap();
        let words = vec![
            "write".to_string(),
            "/t".to_string(),
            "--spec".to_string(),
            spec.display().to_string(),
        ];
        let (_, op) = parse(&words).unwrap();
        let Operation::Write { create, commits } = op else {
            panic!("{op:?}")
        };
        assert!(create.is_none());
        assert_eq!(commits[0].rows.len(), 2);
        assert!(parse(&["write".to_string(), "/t".to_string()]).is_err());
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
