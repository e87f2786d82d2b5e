//! Committing: [`TableCommit`], one coordinator that commits (or aborts) the messages of
//! writers, and runs the table's maintenance after each commit (in the background with
//! `snapshot.expire.execution-mode` = `async`).
//!
//! Source: Java `org.apache.paimon.table.sink.TableCommitImpl` (batch commit).

use super::*;

/// Commits messages to a table as one coordinator; see the module docs.
///
/// Source: Java `org.apache.paimon.table.sink.TableCommitImpl` (batch commit).
///
/// Clones share one background maintenance queue (Java's single maintenance thread of a
/// `TableCommitImpl`, used with `snapshot.expire.execution-mode` = `async`).
#[derive(Debug, Clone)]
pub struct TableCommit {
    table: Table,
    commit_user: String,
    /// Fixed commit time (epoch millis) instead of the system clock.
    time_millis: Option<i64>,
    /// Maintenance running after streaming commits in async mode.
    background: std::sync::Arc<std::sync::Mutex<BackgroundMaintenance>>,
}

/// The maintenance queue of a [`TableCommit`] in async mode.
#[derive(Debug, Default)]
struct BackgroundMaintenance {
    /// The newest task; each task first waits for the one before it, so plans run one at a
    /// time in commit order.
    last: Option<tokio::task::JoinHandle<()>>,
    /// The first failure not yet reported (later ones are dropped, as Java keeps the first).
    failure: Option<Error>,
}

/// A background maintenance task of `table` that panicked or was cancelled.
fn maintenance_task_failed(table: &Table, e: &tokio::task::JoinError) -> Error {
    Error::Task {
        machine: format!("maintenance after a commit to {}", table.location()),
        detail: e.to_string(),
    }
}

/// Lock the queue; a poisoned lock still holds consistent data (every update is one
/// assignment).
fn lock_background(
    m: &std::sync::Mutex<BackgroundMaintenance>,
) -> std::sync::MutexGuard<'_, BackgroundMaintenance> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Table {
    /// A committer for this table. `commit_user` defaults to a random UUID, as Java's batch
    /// writes do (a commit whose user and identifier are already in a snapshot is not applied
    /// again).
    pub fn new_commit(&self, commit_user: Option<String>) -> TableCommit {
        let commit_user = commit_user
            .unwrap_or_else(|| paimon_kernel::util::NameSource::new(random_seed()).uuid());
        TableCommit {
            table: self.clone(),
            commit_user,
            time_millis: None,
            background: Default::default(),
        }
    }
}

impl TableCommit {
    /// Commit at a fixed time (milliseconds since the epoch) instead of the system clock: the
    /// snapshot's `timeMillis` and the "now" of the maintenance after the commit (expire,
    /// automatic tags). For tests and replays.
    pub fn with_time_millis(mut self, time_millis: i64) -> Self {
        self.time_millis = Some(time_millis);
        self
    }

    /// The commit user.
    pub fn commit_user(&self) -> &str {
        &self.commit_user
    }

    /// Commit `messages` as a batch commit (identifier `i64::MAX`): one `APPEND` snapshot for
    /// written files (and one `COMPACT` snapshot for compaction results).
    ///
    /// # Errors
    /// [`Error::Kernel`]: a conflict (`CommitConflict`), too many lost races, IO failures;
    /// `PartlyPublished` when the `APPEND` snapshot of a lookup table's write was published
    /// and its `COMPACT` snapshot failed (do not abort such messages: the published snapshot
    /// references their data files). After other errors nothing is visible; the data files
    /// of the messages stay (use [`TableCommit::abort`]).
    pub async fn commit(&self, messages: Vec<CommitMessage>) -> Result<CommitOutcome> {
        self.run(messages, CommitMode::Append, BATCH_COMMIT_IDENTIFIER)
            .await
    }

    /// Commit `messages` with an identifier of the caller's (streaming-style commits; the
    /// same user and identifier are never applied twice).
    ///
    /// With `snapshot.expire.execution-mode` = `async` the maintenance after the commit runs
    /// in the background (the outcome says `maintenance_in_background`); its failure is
    /// reported as `maintenance_warning` of the next commit's outcome, or by
    /// [`TableCommit::wait_maintenance`]. `tag.automatic-creation` = `batch` makes no tag
    /// here (Java: only at the end of a batch job).
    ///
    /// # Errors
    /// As [`TableCommit::commit`].
    pub async fn commit_with_identifier(
        &self,
        identifier: i64,
        messages: Vec<CommitMessage>,
    ) -> Result<CommitOutcome> {
        self.run(messages, CommitMode::Append, identifier).await
    }

    /// Overwrite: `partition` (`key → value`, some keys may be left out) is replaced by the
    /// messages' files; `None` follows the table's `dynamic-partition-overwrite` (default
    /// true: only the partitions the new files are in; an unpartitioned table is replaced
    /// whole).
    ///
    /// # Errors
    /// As [`TableCommit::commit`]; `Invalid` when a new file lies outside `partition`.
    pub async fn overwrite(
        &self,
        partition: Option<BTreeMap<String, String>>,
        messages: Vec<CommitMessage>,
    ) -> Result<CommitOutcome> {
        let schema = self.table.schema().await?;
        let dynamic = match (
            &partition,
            schema.options.get("dynamic-partition-overwrite"),
        ) {
            (Some(_), _) => false,
            (None, Some(v)) => !v.eq_ignore_ascii_case("false"),
            (None, None) => true,
        };
        let mode = CommitMode::Overwrite {
            partition_filter: partition,
            dynamic,
        };
        // As Java, an overwrite commits no changelog: its changelog files (input or
        // compaction changelog) are deleted after the commit.
        let changelog = paimon_kernel::job::changelog_only(&messages);
        let outcome = self.run(messages, mode, BATCH_COMMIT_IDENTIFIER).await?;
        if !changelog.is_empty() {
            // Best effort: an orphan changelog file is harmless.
            let _ = self.abort(changelog).await;
        }
        Ok(outcome)
    }

    /// Delete the files the messages added (they will not be committed).
    ///
    /// # Errors
    /// Store errors other than a missing file.
    pub async fn abort(&self, messages: Vec<CommitMessage>) -> Result<()> {
        let schema = self.table.schema().await?;
        let machine = abort_machine(schema, messages).describe(format!(
            "aborting a commit to table {}",
            self.table.location()
        ));
        self.table.host().run_to_vec(machine).await?;
        Ok(())
    }

    async fn run(
        &self,
        messages: Vec<CommitMessage>,
        mode: CommitMode,
        identifier: i64,
    ) -> Result<CommitOutcome> {
        self.run_checked(messages, mode, identifier, None).await
    }

    /// [`TableCommit::run`] with the data-evolution row-id check from snapshot `check_from`
    /// (the snapshot an update was computed on).
    pub(super) async fn run_checked(
        &self,
        messages: Vec<CommitMessage>,
        mode: CommitMode,
        identifier: i64,
        check_from: Option<i64>,
    ) -> Result<CommitOutcome> {
        let schema = self.table.schema().await?;
        // The core retries a lost race right away, `commit.max-retries` times; between such
        // rounds this host waits (exponential backoff with jitter, 10 ms doubling to 10 s, as
        // Java's `commit.min-retry-wait` / `commit.max-retry-wait`) and runs the same commit
        // again: its user and identifier make a rerun safe (never applied twice).
        let mut wait_millis: u64 = 10;
        for round in 0..=CONTENDED_ROUNDS {
            let time_millis = self.time_millis.unwrap_or_else(now_millis);
            let options = CommitOptions::new(self.commit_user.clone(), time_millis, random_seed())
                .with_identifier(identifier)
                .with_check_from_snapshot(check_from);
            let machine = commit_machine(schema.clone(), messages.clone(), mode.clone(), options)
                .describe(format!("committing to table {}", self.table.location()));
            match self.table.host().run_once(machine).await {
                Err(e)
                    if round < CONTENDED_ROUNDS
                        && matches!(
                            e.as_kernel(),
                            Some(paimon_kernel::Error::CommitContended { .. })
                        ) =>
                {
                    let jitter = random_seed() % wait_millis.max(1);
                    tokio::time::sleep(std::time::Duration::from_millis(wait_millis + jitter))
                        .await;
                    wait_millis = (wait_millis * 2).min(10_000);
                }
                Ok(mut outcome) => {
                    self.maintain(&mut outcome, identifier, time_millis).await;
                    return Ok(outcome);
                }
                other => return other,
            }
        }
        unreachable_contended()
    }

    /// Java's `TableCommitImpl.maintain`: after every commit, even an empty one; a failure
    /// is reported in `outcome`, the commit stands. A streaming commit (`identifier` not
    /// the batch one) in async mode queues the plan and returns.
    async fn maintain(&self, outcome: &mut CommitOutcome, identifier: i64, time_millis: i64) {
        let stream = identifier != BATCH_COMMIT_IDENTIFIER;
        let plan = match self.table.maintenance_plan().await {
            Ok(Some(plan)) if stream => plan.for_stream_commit(),
            Ok(Some(plan)) => plan,
            Ok(None) => return,
            Err(e) => {
                outcome.maintenance_warning = Some(e.to_string());
                return;
            }
        };
        if stream && plan.asynchronous {
            let mut queue = lock_background(&self.background);
            outcome.maintenance_warning = queue.failure.take().map(|e| e.to_string());
            let previous = queue.last.take();
            let (table, user, shared) = (
                self.table.clone(),
                self.commit_user.clone(),
                self.background.clone(),
            );
            queue.last = Some(tokio::spawn(async move {
                let mut failure = match previous {
                    Some(p) => p.await.err().map(|e| maintenance_task_failed(&table, &e)),
                    None => None,
                };
                if let Err(e) = table.run_maintain_plan(plan, time_millis, &user).await {
                    failure.get_or_insert(e);
                }
                if let Some(e) = failure {
                    lock_background(&shared).failure.get_or_insert(e);
                }
            }));
            outcome.maintenance_in_background = true;
            return;
        }
        match self
            .table
            .run_maintain_plan(plan, time_millis, &self.commit_user)
            .await
        {
            Ok(done) => outcome.maintenance = Some(done),
            Err(e) => outcome.maintenance_warning = Some(e.to_string()),
        }
    }

    /// True while maintenance started in the background by an earlier commit (async mode)
    /// is still running or queued.
    pub fn maintenance_pending(&self) -> bool {
        lock_background(&self.background)
            .last
            .as_ref()
            .is_some_and(|t| !t.is_finished())
    }

    /// Wait for the maintenance started in the background by earlier commits (async mode)
    /// and return its first failure not yet reported. Returns at once when none runs.
    ///
    /// # Errors
    /// The failure of a background maintenance ([`Error::Kernel`] from a step,
    /// [`Error::Task`] when its task panicked).
    pub async fn wait_maintenance(&self) -> Result<()> {
        let last = lock_background(&self.background).last.take();
        if let Some(task) = last
            && let Err(e) = task.await
        {
            lock_background(&self.background)
                .failure
                .get_or_insert(maintenance_task_failed(&self.table, &e));
        }
        match lock_background(&self.background).failure.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
