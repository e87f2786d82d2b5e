//! `paimon-kernel`: inspect Apache Paimon tables from the command line.
//!
//! ```text
//! paimon-kernel info      TABLE                       summary of a table
//! paimon-kernel snapshots TABLE                       every snapshot still present
//! paimon-kernel schema    TABLE [--snapshot N|--tag T] the schema a snapshot uses
//! paimon-kernel files     TABLE [--snapshot N|--tag T] live data files ($files)
//! paimon-kernel manifests TABLE [--snapshot N|--tag T] manifest files of a snapshot
//! paimon-kernel tags      TABLE                       tags and their snapshots
//!                         (these six and scan take --branch NAME to read a branch)
//! paimon-kernel create    TABLE --schema FILE         create a table (Paimon schema JSON)
//! paimon-kernel write     TABLE --input FILE|- [--format arrow|parquet|csv|jsonl]
//!                         [--overwrite [--partition k=v,...]]   write rows, one commit
//! paimon-kernel alter     TABLE [--add-column 'NAME TYPE'] [--drop-column NAME]
//!                         [--rename-column OLD=NEW] [--alter-type 'NAME TYPE']
//!                         [--set KEY=VALUE] [--reset KEY]      one new schema
//! paimon-kernel delete    TABLE --where EXPR            delete rows (primary-key tables)
//! paimon-kernel compact   TABLE [--full] [--partition k=v,...] [--bucket N]
//!                                                      compact (primary-key tables)
//! paimon-kernel plan-compaction TABLE [--full]         the compaction plan (JSON)
//! paimon-kernel expire    TABLE [--retain-max N] [--retain-min N] [--older-than DURATION]
//!                                                      expire old snapshots
//! paimon-kernel expire-partitions TABLE --expiration-time DURATION [--timestamp-formatter F]
//!                         [--timestamp-pattern P] [--strategy values-time|update-time]
//!                         [--max-expires N] [--dry-run]        drop expired partitions
//! paimon-kernel remove-orphans TABLE [--older-than DURATION] [--dry-run]
//!                                                      delete unreferenced files
//! paimon-kernel tag       create|delete|list TABLE [NAME] [--snapshot N]   tags
//! paimon-kernel rollback  TABLE --snapshot N | --tag T  roll back
//! paimon-kernel scan      TABLE [--snapshot N|--tag T|--timestamp-millis T] [--columns a,b]
//!                         [--where EXPR] [--limit N] [--format table|jsonl|csv|arrow|count]
//!                         [--output FILE] [--batch-size N]      read rows
//!                         [--splits-in-flight N] [--read-ahead-mib MIB]
//! paimon-kernel sql       "SELECT ..." [--table NAME=URI]... [--warehouse DIR]
//!                         [--format table|jsonl|csv|arrow] [--output FILE] [--explain]
//!                                                      SQL (DataFusion) over tables
//! ```
//!
//! TABLE is a table directory or URL (`s3://`, `gs://`, `az://`, `http(s)://`, `file://`).
//! Human tables by default, `--json` for machines. Errors go to stderr with exit code 1
//! (2 for usage errors).

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod cli;
mod serve;

/// Inspect Apache Paimon tables (paimon-kernel native host).
#[derive(Debug, Parser)]
#[command(name = "paimon-kernel", version, about, long_about = None)]
struct Cli {
    /// Print JSON instead of human-readable tables.
    #[arg(long, global = true)]
    json: bool,

    /// Print the IO the command did (rounds, requests, store calls, bytes) to stderr.
    #[arg(long, global = true)]
    io_stats: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Summary: location, latest snapshot, schema, keys, options, tags.
    Info(SnapshotArgs),
    /// Every snapshot still present, oldest first.
    Snapshots(TableArgs),
    /// The schema a read uses: the latest, or the snapshot's with `--snapshot`/`--tag`;
    /// `--json` prints the schema file exactly as stored.
    Schema(SnapshotArgs),
    /// Live data files of a snapshot, one per row, with the columns of Java's `$files` table
    /// (`creation_time` in epoch millis) plus `extra_files` and `external_path`.
    Files(SnapshotArgs),
    /// Manifest files of a snapshot (base and delta manifest lists).
    Manifests(SnapshotArgs),
    /// Tags and the snapshots they pin.
    Tags(TableArgs),
    /// Read rows: a human table, JSON lines, CSV or an Arrow IPC stream.
    Scan(cli::scan::ScanArgs),
    /// Run one SQL statement (DataFusion) over tables (`--table NAME=URI`) and a warehouse
    /// (`--warehouse DIR`: `db.table`): queries, INSERT INTO / INSERT OVERWRITE, system
    /// tables (`NAME$snapshots`, `$schemas`, `$tags`, `$manifests`, `$files`); `--explain`
    /// shows what each scan pushed down and which data files it prunes.
    #[cfg(feature = "sql")]
    Sql(cli::sql::SqlArgs),
    /// Record the IO of a read as a conformance case: `record --out DIR -- scan TABLE ...`.
    Record(paimon_native::recording::RecordArgs),
    /// Serve the table inspector page and a table or warehouse directory over HTTP
    /// (read-only, Range requests, 127.0.0.1 by default).
    Serve(serve::ServeArgs),
    /// Write the bytes of one blob (by `_ROW_ID` and column) using ranged reads only.
    Blob(cli::blob::BlobArgs),
    /// Print a serialized blob descriptor (lowercase hex) naming bytes of a file: as a BLOB
    /// value of `write`/`update` input, a file reference whose bytes are copied in.
    BlobDescriptor(cli::blob::DescriptorArgs),
    /// Create a table from Paimon's schema JSON.
    Create(cli::write::CreateArgs),
    /// Write rows (Arrow IPC, Parquet, CSV or JSON lines) and commit them as one snapshot.
    Write(cli::write::WriteArgs),
    /// Commit the messages of `write --prepare-only` (Java `CommitMessageSerializer` bytes)
    /// as one batch commit.
    Commit(cli::write::CommitArgs),
    /// Change the schema: add, drop, rename or retype columns, set or reset options (the
    /// flags repeat and apply in order, as one new schema).
    Alter(cli::alter::AlterArgs),
    /// Delete the rows matching a filter in one commit (primary-key tables: `-D` rows; append
    /// tables with deletion vectors: deletion vectors).
    Delete(cli::delete::DeleteArgs),
    /// Set columns of existing rows of a data-evolution table by `_ROW_ID` (only those
    /// columns are written; BLOB columns get placeholders for the rows not set).
    Update(cli::update::UpdateArgs),
    /// Compact the table: primary-key tables per bucket (the table's strategy or, with
    /// `--full`, every sorted run to the max level), postpone-bucket tables by moving the
    /// rows of `bucket-postpone` into real buckets, append and data-evolution tables by
    /// Java's coordinators; one COMPACT snapshot.
    Compact(cli::compact::CompactArgs),
    /// Print the compaction plan as JSON (what `compact` would do now).
    PlanCompaction(cli::compact::PlanCompactionArgs),
    /// Expire old snapshots (and their changelog files) as Java does.
    Expire(cli::maintenance::ExpireArgs),
    /// Drop expired partitions (Java's `expire_partitions`): one OVERWRITE snapshot.
    ExpirePartitions(cli::maintenance::ExpirePartitionsArgs),
    /// Delete files no snapshot, tag or branch uses (older than `--older-than`, 1 d).
    RemoveOrphans(cli::maintenance::RemoveOrphansArgs),
    /// Delete managed-BLOB packs no used data file references (older than `--older-than`).
    CollectPacks(cli::maintenance::CollectPacksArgs),
    /// Create, delete or list tags.
    Tag(cli::maintenance::TagArgs),
    /// Roll the table back to a snapshot or tag.
    Rollback(cli::maintenance::RollbackArgs),
    /// Build tables from a scenario (JSON steps: create, write, delete, update, alter,
    /// compact, tag, rollback, checkpoint; see conformance/scenarios/README.md) in WAREHOUSE,
    /// and write each table's checkpoint reads to WAREHOUSE/<table>.expected.json.
    Run(cli::scenario::RunArgs),
}

#[derive(Debug, Args)]
struct TableArgs {
    /// Table directory or URL (s3://, gs://, az://, abfs://, http(s)://, file://).
    table: String,
    /// Read this branch (`branch/branch-NAME/`) instead of main.
    #[arg(long, value_name = "NAME")]
    branch: Option<String>,
}

#[derive(Debug, Args)]
struct SnapshotArgs {
    /// Table directory or URL (s3://, gs://, az://, abfs://, http(s)://, file://).
    table: String,
    /// Use this snapshot id instead of the latest.
    #[arg(long, value_name = "N", conflicts_with = "tag")]
    snapshot: Option<i64>,
    /// Use the snapshot of this tag instead of the latest.
    #[arg(long, value_name = "T")]
    tag: Option<String>,
    /// Read this branch (`branch/branch-NAME/`) instead of main.
    #[arg(long, value_name = "NAME")]
    branch: Option<String>,
}

fn main() -> ExitCode {
    limit_malloc_arenas();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Arenas glibc's allocator may use when the user did not set `MALLOC_ARENA_MAX`.
///
/// By default glibc gives each thread that allocates concurrently its own arena (up to 8 per
/// core) and keeps freed memory in each of them, so the tokio worker and blocking-pool threads
/// that decode data files each hold their own high-water mark: peak RSS was 1.7-3x the live
/// heap. One arena measured lowest RSS at the same CPU time (see the README's memory note).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MALLOC_ARENAS: libc::c_int = 1;

/// Caps glibc's malloc arenas at [`MALLOC_ARENAS`] unless `MALLOC_ARENA_MAX` is set (then
/// glibc has already applied the user's value and it is left alone). No-op elsewhere.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn limit_malloc_arenas() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return;
    }
    // SAFETY: `mallopt` only changes an allocator tunable; it is called first thing in
    // `main`, before any thread exists, and `M_ARENA_MAX` with a positive value is a
    // documented glibc parameter. Its return value (0 on failure) only means the tunable
    // was not applied, which is harmless.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS);
    }
}

/// Non-glibc targets keep their allocator's defaults.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn limit_malloc_arenas() {}

/// The metadata views of one table (the commands that only open a table and print it).
enum View {
    Info(SnapshotArgs),
    Schema(SnapshotArgs),
    Files(SnapshotArgs),
    Manifests(SnapshotArgs),
    Snapshots(TableArgs),
    Tags(TableArgs),
}

async fn run(cli: Cli) -> Result<(), String> {
    let json = cli.json;
    let view = match cli.command {
        Command::Scan(a) => return cli::scan::run(a, json, cli.io_stats).await,
        #[cfg(feature = "sql")]
        Command::Sql(a) => return cli::sql::run(a, json).await,
        Command::Blob(a) => return cli::blob::run(a, cli.io_stats).await,
        Command::BlobDescriptor(a) => {
            cli::print(&cli::blob::descriptor_hex(&a));
            return Ok(());
        }
        Command::Record(a) => {
            let out = paimon_native::recording::record_command(a)
                .await
                .map_err(|e| cli::error_chain(&e))?;
            cli::print(&out);
            return Ok(());
        }
        Command::Serve(a) => return serve::run(a).await,
        Command::Create(a) => return cli::write::create(a, json).await,
        Command::Write(a) => return cli::write::write(a, json).await,
        Command::Commit(a) => return cli::write::commit(a, json).await,
        Command::Alter(a) => return cli::alter::run(a, json).await,
        Command::Delete(a) => return cli::delete::run(a, json).await,
        Command::Update(a) => return cli::update::run(a, json).await,
        Command::Compact(a) => return cli::compact::compact(a, json).await,
        Command::PlanCompaction(a) => return cli::compact::plan(a).await,
        Command::Expire(a) => return cli::maintenance::expire(a, json).await,
        Command::ExpirePartitions(a) => {
            return cli::maintenance::expire_partitions(a, json).await;
        }
        Command::RemoveOrphans(a) => return cli::maintenance::remove_orphans(a, json).await,
        Command::CollectPacks(a) => return cli::maintenance::collect_packs(a, json).await,
        Command::Tag(a) => return cli::maintenance::tag(a, json).await,
        Command::Rollback(a) => return cli::maintenance::rollback(a, json).await,
        Command::Run(a) => return cli::scenario::run(a).await,
        Command::Info(a) => View::Info(a),
        Command::Schema(a) => View::Schema(a),
        Command::Files(a) => View::Files(a),
        Command::Manifests(a) => View::Manifests(a),
        Command::Snapshots(a) => View::Snapshots(a),
        Command::Tags(a) => View::Tags(a),
    };
    let (location, branch) = match &view {
        View::Info(a) | View::Schema(a) | View::Files(a) | View::Manifests(a) => {
            (&a.table, &a.branch)
        }
        View::Snapshots(a) | View::Tags(a) => (&a.table, &a.branch),
    };
    let mut table = paimon_native::Table::open(location)
        .await
        .map_err(|e| cli::error_chain(&e))?;
    if let Some(b) = branch {
        table = table
            .with_branch(b)
            .await
            .map_err(|e| cli::error_chain(&e))?;
    }
    let out = match view {
        View::Info(a) => cli::info(&table, a.snapshot, a.tag.as_deref(), json).await,
        View::Snapshots(_) => cli::snapshots(&table, json).await,
        View::Schema(a) => cli::schema(&table, a.snapshot, a.tag.as_deref(), json).await,
        View::Files(a) => cli::files(&table, a.snapshot, a.tag.as_deref(), json).await,
        View::Manifests(a) => cli::manifests(&table, a.snapshot, a.tag.as_deref(), json).await,
        View::Tags(_) => cli::tags(&table, json).await,
    };
    if cli.io_stats {
        cli::print_io_stats(&table);
    }
    cli::print(&out.map_err(|e| cli::error_chain(&e))?);
    Ok(())
}
