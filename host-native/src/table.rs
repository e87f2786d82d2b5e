//! The library API over one table: snapshots, schemas, tags, manifests, data files and (scan)
//! plans, each computed by core code driven by an [`ObjectStoreHost`].

use std::collections::BTreeMap;
use std::future::Future;

use futures::future::try_join_all;
use paimon_kernel::io::{Io, Machine, Step};
use paimon_kernel::scan::branch::{BranchPaths, MAIN_BRANCH};
use paimon_kernel::scan::planner::{read_data_manifests, read_live_entries};
use paimon_kernel::scan::snapshot_resolver::{
    TimeTravel, latest_schema_id, latest_snapshot_id, list_snapshots, list_tags,
    read_latest_schema, read_schema, read_schemas_for, resolve_snapshot,
};
use paimon_kernel::spec::manifest::ManifestEntry;
use paimon_kernel::spec::manifest_list::ManifestFileMeta;
use paimon_kernel::spec::schema::TableSchema;
use paimon_kernel::spec::snapshot::{Snapshot, Tag};

use crate::error::{Error, Result};
use crate::host::ObjectStoreHost;
use crate::system::{FileRow, ManifestRow, file_rows, manifest_rows};

/// A Paimon table at a location (a directory or URL), read through an [`ObjectStoreHost`].
///
/// Cheap to clone. Nothing is cached: every call reads the table's current metadata.
///
/// ```no_run
/// # async fn demo() -> paimon_native::Result<()> {
/// use paimon_native::Table;
///
/// let table = Table::open("s3://bucket/warehouse/db.db/orders").await?;
/// if let Some(snapshot) = table.latest_snapshot().await? {
///     println!("snapshot {} has {} rows", snapshot.id, snapshot.total_record_count);
/// }
/// let files = table.scan().with_tag("v1").files().await?;
/// println!("{} live data files at tag v1", files.len());
/// # Ok(())
/// # }
/// ```
///
/// A table is opened on its main branch; [`Table::with_branch`] reads a named branch
/// (`<root>/branch/branch-<name>/`: its own snapshots, schemas and tags over the shared data
/// files and manifests), as Java's `branch` option does:
///
/// ```no_run
/// # async fn demo() -> paimon_native::Result<()> {
/// use paimon_native::Table;
///
/// let table = Table::open("/warehouse/db.db/orders").await?.with_branch("b1").await?;
/// let rows = table.scan().to_batches().await?;
/// # Ok(())
/// # }
/// ```
///
/// A scan of a table whose options set `scan.fallback-branch` also reads, from that branch,
/// the partitions the scanned branch lacks (see [`TableScan::to_stream`]).
#[derive(Debug, Clone)]
pub struct Table {
    host: ObjectStoreHost,
    /// The branch read; `None` for the main branch.
    branch: Option<BranchPaths>,
}

/// The live data files of one snapshot with everything needed to interpret them.
#[derive(Debug, Clone)]
pub struct DataFiles {
    /// The snapshot read.
    pub snapshot: Snapshot,
    /// The read schema: the latest schema for the latest snapshot, the snapshot's own
    /// (`schemaId`) for time travel.
    pub schema: TableSchema,
    /// Every schema a data file refers to, by id (includes `schema`).
    pub schemas: BTreeMap<i64, TableSchema>,
    /// Live `Add` entries, in manifest order (postpone-bucket files included).
    pub entries: Vec<ManifestEntry>,
}

impl Table {
    /// Open the table at `location` (see [`TableLocation::parse`](crate::TableLocation::parse)).
    ///
    /// # Errors
    /// [`Error::Location`] / [`Error::ObjectStore`] for a bad location; [`Error::NotATable`]
    /// when there is neither a schema nor a snapshot file; [`Error::Kernel`] when probing
    /// fails.
    pub async fn open(location: &str) -> Result<Self> {
        Self::open_with_host(ObjectStoreHost::open(location)?).await
    }

    /// Open the table rooted at `host`'s location.
    ///
    /// # Errors
    /// As [`Table::open`].
    pub async fn open_with_host(host: ObjectStoreHost) -> Result<Self> {
        let table = Table { host, branch: None };
        let exists = table
            .run("TableProbe", "opening", |io| async move {
                if latest_schema_id(&io).await?.is_some() {
                    return Ok(true);
                }
                Ok(latest_snapshot_id(&io).await?.is_some())
            })
            .await?;
        if !exists {
            return Err(Error::NotATable {
                location: table.location().to_string(),
            });
        }
        Ok(table)
    }

    /// The same table on branch `name` (`main` or a blank name: the main branch). Source:
    /// Java `BranchManager.branchPath`, `CoreOptions.BRANCH`.
    ///
    /// # Errors
    /// [`Error::NotATable`] when the branch has no schema file (it does not exist);
    /// [`Error::Kernel`] for a name holding `/` or when probing fails.
    pub async fn with_branch(&self, name: &str) -> Result<Self> {
        let branch = BranchPaths::new(name).map_err(|e| {
            Error::kernel(format!("opening branch {name} of {}", self.location()), e)
        })?;
        let table = Table {
            host: self.host.clone(),
            branch,
        };
        if table.branch.is_none() {
            return Ok(table);
        }
        let exists = table
            .run("BranchProbe", "opening", |io| async move {
                Ok(latest_schema_id(&io).await?.is_some())
            })
            .await?;
        if !exists {
            return Err(Error::NotATable {
                location: format!("{} (branch {name}: no schema file)", self.location()),
            });
        }
        Ok(table)
    }

    /// The same table on branch `name` if that branch has a schema, `None` otherwise.
    ///
    /// # Errors
    /// As [`Table::with_branch`], except that a missing branch is `Ok(None)`.
    pub async fn try_branch(&self, name: &str) -> Result<Option<Self>> {
        match self.with_branch(name).await {
            Ok(t) => Ok(Some(t)),
            Err(Error::NotATable { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The branch this table reads (`main` for the main branch).
    pub fn branch(&self) -> &str {
        self.branch.as_ref().map_or(MAIN_BRANCH, |b| b.name())
    }

    /// The table's location as a URL.
    pub fn location(&self) -> &str {
        self.host.url()
    }

    /// The host answering this table's IO.
    pub fn host(&self) -> &ObjectStoreHost {
        &self.host
    }

    /// Run an operation as a machine on this table's host and return its one result. `doing`
    /// says what it does for error messages (`reading schema 2` → `reading schema 2 of table
    /// <url>: <cause>`).
    pub(crate) async fn run<R, F, Fut>(
        &self,
        name: &'static str,
        doing: impl Into<String>,
        body: F,
    ) -> Result<R>
    where
        R: Send + 'static,
        F: FnOnce(Io<R>) -> Fut,
        Fut: Future<Output = paimon_kernel::Result<R>> + Send + 'static,
    {
        let what = format!("{} of table {}", doing.into(), self.described());
        self.run_machine(Machine::once(name, body).describe(what))
            .await
    }

    /// `<url>`, or `<url> (branch <name>)` off the main branch, for messages.
    pub(crate) fn described(&self) -> String {
        match &self.branch {
            None => self.location().to_string(),
            Some(b) => format!("{} (branch {})", self.location(), b.name()),
        }
    }

    /// Drive `machine` to its single result on this table's host. Off the main branch, every
    /// request of a round is rewritten to the branch's directories
    /// ([`BranchPaths::to_storage`]) and `List` answers are mapped back, so the machine sees
    /// the branch as a table root.
    pub(crate) async fn run_machine<R: Send + 'static>(&self, machine: Machine<R>) -> Result<R> {
        let Some(branch) = &self.branch else {
            return self.host.run_once(machine).await;
        };
        let mut machine = machine;
        let context = |m: &Machine<R>| {
            m.description()
                .map(str::to_string)
                .unwrap_or_else(|| format!("table {}", self.described()))
        };
        let mut out = Vec::new();
        loop {
            let step = machine
                .step()
                .map_err(|e| Error::kernel(context(&machine), e))?;
            match step {
                Step::NeedIo(round) => {
                    let asked: BTreeMap<_, _> =
                        round.iter().map(|r| (r.id, r.op.clone())).collect();
                    let mapped = round
                        .into_iter()
                        .map(|mut r| {
                            r.op = branch.to_storage(&r.op);
                            r
                        })
                        .collect();
                    for (id, answer) in self.host.answer_round(mapped).await {
                        let answer = match asked.get(&id) {
                            Some(op) => branch.answer_from_storage(op, answer),
                            None => answer,
                        };
                        machine
                            .provide(id, answer)
                            .map_err(|e| Error::kernel(context(&machine), e))?;
                    }
                }
                Step::Emit(item) => out.push(item),
                Step::Work(items) => items.into_iter().for_each(|w| w.run()),
                Step::Wait => {}
                Step::Done => break,
            }
        }
        if out.len() != 1 {
            return Err(Error::kernel(
                context(&machine),
                paimon_kernel::Error::Protocol {
                    detail: format!("expected one result, got {}", out.len()),
                },
            ));
        }
        out.pop().ok_or_else(|| {
            Error::kernel(
                context(&machine),
                paimon_kernel::Error::Protocol {
                    detail: "expected one result, got none".into(),
                },
            )
        })
    }

    /// The latest snapshot, `None` for a table without snapshots.
    ///
    /// # Errors
    /// [`Error::Kernel`] when a snapshot file is missing or corrupt (the message names it).
    pub async fn latest_snapshot(&self) -> Result<Option<Snapshot>> {
        self.run(
            "LatestSnapshot",
            "reading the latest snapshot",
            |io| async move { resolve_snapshot(&io, &TimeTravel::Latest).await },
        )
        .await
    }

    /// The snapshot with id `id`.
    ///
    /// # Errors
    /// [`Error::Kernel`] with an `Invalid` source when `id` is outside the available range;
    /// `Io`/`Corrupt` sources for missing or corrupt files.
    pub async fn snapshot(&self, id: i64) -> Result<Snapshot> {
        self.scan()
            .with_snapshot_id(id)
            .snapshot()
            .await?
            .map(|(s, _)| s)
            .ok_or_else(|| {
                Error::kernel(
                    format!("reading snapshot {id} of table {}", self.location()),
                    paimon_kernel::Error::invalid(format!("snapshot {id} does not exist")),
                )
            })
    }

    /// Every snapshot still present, by id ascending.
    ///
    /// # Errors
    /// [`Error::Kernel`] when a snapshot file is corrupt (the message names it).
    pub async fn snapshots(&self) -> Result<Vec<Snapshot>> {
        self.run("Snapshots", "listing the snapshots", |io| async move {
            list_snapshots(&io).await
        })
        .await
    }

    /// The latest schema (the table's current columns, keys and options).
    ///
    /// # Errors
    /// [`Error::Kernel`]: no schema file (`Invalid`), or a corrupt one (`Corrupt`, naming it).
    pub async fn schema(&self) -> Result<TableSchema> {
        self.run(
            "LatestSchema",
            "reading the latest schema",
            |io| async move {
                read_latest_schema(&io)
                    .await?
                    .ok_or_else(|| paimon_kernel::Error::invalid("the table has no schema file"))
            },
        )
        .await
    }

    /// The schema with id `id` (`schema/schema-<id>`).
    ///
    /// # Errors
    /// [`Error::Kernel`] when it is missing or corrupt (naming the file).
    pub async fn schema_by_id(&self, id: i64) -> Result<TableSchema> {
        self.run(
            "Schema",
            format!("reading schema {id}"),
            move |io| async move { read_schema(&io, id).await },
        )
        .await
    }

    /// Every schema file still present (`schema/schema-<id>`), by id ascending (Java's
    /// `$schemas` rows).
    ///
    /// # Errors
    /// [`Error::Kernel`] when a schema file is corrupt (naming it).
    pub async fn all_schemas(&self) -> Result<Vec<TableSchema>> {
        self.run("Schemas", "listing the schemas", |io| async move {
            let Some(latest) = latest_schema_id(&io).await? else {
                return Ok(Vec::new());
            };
            let io = &io;
            let present = try_join_all((0..=latest).map(|id| async move {
                let path = paimon_kernel::spec::schema::schema_path(id);
                Ok::<_, paimon_kernel::Error>((id, io.head(&path).await?.is_some()))
            }))
            .await?;
            let ids: Vec<i64> = present
                .into_iter()
                .filter_map(|(id, here)| here.then_some(id))
                .collect();
            try_join_all(ids.into_iter().map(|id| read_schema(io, id))).await
        })
        .await
    }

    /// Every tag, by name ascending, with the snapshot it pins.
    ///
    /// # Errors
    /// [`Error::Kernel`] when a tag file is corrupt (naming it).
    pub async fn tags(&self) -> Result<Vec<(String, Tag)>> {
        self.run("Tags", "listing the tags", |io| async move {
            list_tags(&io).await
        })
        .await
    }

    /// A scan of the latest snapshot; choose another with the `with_*` methods.
    pub fn scan(&self) -> TableScan {
        TableScan {
            table: self.clone(),
            travel: TimeTravel::Latest,
            read: crate::scan::ReadOptions::default(),
        }
    }
}

/// Which snapshot to read and what to read from it. Build with [`Table::scan`]; the last
/// `with_*` call wins.
#[derive(Debug, Clone)]
pub struct TableScan {
    pub(crate) table: Table,
    pub(crate) travel: TimeTravel,
    pub(crate) read: crate::scan::ReadOptions,
}

impl TableScan {
    /// Read snapshot `id` (Java `scan.snapshot-id`).
    pub fn with_snapshot_id(mut self, id: i64) -> Self {
        self.travel = TimeTravel::SnapshotId(id);
        self
    }

    /// Read the snapshot of tag `name` (Java `scan.tag-name`).
    pub fn with_tag(mut self, name: impl Into<String>) -> Self {
        self.travel = TimeTravel::Tag(name.into());
        self
    }

    /// Read the latest snapshot committed at or before `time_millis` (epoch millis, Java
    /// `scan.timestamp-millis`).
    pub fn with_timestamp_millis(mut self, time_millis: i64) -> Self {
        self.travel = TimeTravel::TimestampMillis(time_millis);
        self
    }

    /// The time travel this scan asks for.
    pub fn time_travel(&self) -> &TimeTravel {
        &self.travel
    }

    /// The snapshot this scan reads and the schema it reads with: the table's latest schema
    /// for a read of the latest snapshot, the snapshot's own schema for time travel (as Java;
    /// see [`read_schemas_for`]). `None` when reading the latest snapshot of a table that has
    /// none.
    ///
    /// # Errors
    /// [`Error::Kernel`]: an unknown snapshot id or tag (`Invalid`), a missing or corrupt
    /// snapshot/schema/tag file (naming it).
    pub async fn snapshot(&self) -> Result<Option<(Snapshot, TableSchema)>> {
        let travel = self.travel.clone();
        self.table
            .run(
                "SnapshotResolver",
                format!("resolving {}", self.travel),
                move |io| async move {
                    let Some(snapshot) = resolve_snapshot(&io, &travel).await? else {
                        return Ok(None);
                    };
                    let schemas = read_schemas_for(&io, &travel, &snapshot).await?;
                    Ok(Some((snapshot, schemas.read)))
                },
            )
            .await
    }

    /// The data manifests of the snapshot (base list, then delta list); `None` without a
    /// snapshot.
    ///
    /// # Errors
    /// As [`TableScan::snapshot`]; missing or corrupt manifest lists (naming them).
    pub async fn manifests(
        &self,
    ) -> Result<Option<(Snapshot, TableSchema, Vec<ManifestFileMeta>)>> {
        let travel = self.travel.clone();
        self.table
            .run(
                "ManifestReader",
                format!("reading the manifests of {}", self.travel),
                move |io| async move {
                    let Some(snapshot) = resolve_snapshot(&io, &travel).await? else {
                        return Ok(None);
                    };
                    let (schemas, manifests) = futures::try_join!(
                        read_schemas_for(&io, &travel, &snapshot),
                        read_data_manifests(&io, &snapshot)
                    )?;
                    Ok(Some((snapshot, schemas.read, manifests)))
                },
            )
            .await
    }

    /// `$manifests` rows of the snapshot (empty without a snapshot).
    ///
    /// # Errors
    /// As [`TableScan::manifests`].
    pub async fn manifest_rows(&self) -> Result<Vec<ManifestRow>> {
        let Some((_, schema, manifests)) = self.manifests().await? else {
            return Ok(Vec::new());
        };
        manifest_rows(&schema, &manifests).map_err(|e| self.context(e))
    }

    /// The live data files of the snapshot; `None` without a snapshot.
    ///
    /// Rounds: resolve the snapshot; its schema and manifest lists; every manifest; the
    /// schemas data files refer to.
    ///
    /// # Errors
    /// As [`TableScan::manifests`]; missing or corrupt manifests (naming them).
    pub async fn data_files(&self) -> Result<Option<DataFiles>> {
        let travel = self.travel.clone();
        self.table
            .run(
                "DataFileReader",
                format!("reading the data files of {}", self.travel),
                move |io| async move {
                    let Some(snapshot) = resolve_snapshot(&io, &travel).await? else {
                        return Ok(None);
                    };
                    let (read, entries) = futures::try_join!(
                        read_schemas_for(&io, &travel, &snapshot),
                        read_live_entries(&io, &snapshot)
                    )?;
                    let schema = read.read;
                    let mut ids: Vec<i64> = entries.iter().map(|e| e.file.schema_id).collect();
                    ids.sort_unstable();
                    ids.dedup();
                    ids.retain(|id| *id != schema.id && *id != read.snapshot.id);
                    let others = try_join_all(ids.iter().map(|id| read_schema(&io, *id))).await?;
                    let mut schemas: BTreeMap<i64, TableSchema> =
                        others.into_iter().map(|s| (s.id, s)).collect();
                    if entries.iter().any(|e| e.file.schema_id == read.snapshot.id) {
                        schemas.insert(read.snapshot.id, read.snapshot);
                    }
                    schemas.insert(schema.id, schema.clone());
                    Ok(Some(DataFiles {
                        snapshot,
                        schema,
                        schemas,
                        entries,
                    }))
                },
            )
            .await
    }

    /// `$files` rows: one per live data file of the snapshot (empty without a snapshot).
    ///
    /// # Errors
    /// As [`TableScan::data_files`]; `Corrupt` when a partition, key or stats row does not
    /// decode.
    pub async fn files(&self) -> Result<Vec<FileRow>> {
        let Some(files) = self.data_files().await? else {
            return Ok(Vec::new());
        };
        file_rows(
            &files.schema,
            &files.schemas,
            self.table.location(),
            &files.entries,
        )
        .map_err(|e| self.context(e))
    }

    fn context(&self, e: paimon_kernel::Error) -> Error {
        Error::kernel(self.reading(), e)
    }

    /// `reading <snapshot asked for> of table <url>`, the context of this scan's errors.
    pub(crate) fn reading(&self) -> String {
        format!(
            "reading {} of table {}",
            self.travel,
            self.table.described()
        )
    }
}
