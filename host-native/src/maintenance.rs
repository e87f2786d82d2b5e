//! Table maintenance on the native host: expire snapshots, remove orphan files, tags and
//! rollback. Thin wrappers over [`paimon_kernel::maintenance`] that supply the clock.
//!
//! Source: Java `ExpireSnapshotsImpl`, `LocalOrphanFilesClean`, `TagManager`,
//! `RollbackHelper` (see the core module for the details and the order of deletes).

use paimon_kernel::commit::{
    self, CommitOptions, MaintainOutcome, MaintainPlan, PartitionExpireOutcome,
};
use paimon_kernel::io::Machine;
use paimon_kernel::maintenance::auto_tag::local_date_time;
use paimon_kernel::maintenance::{
    self, ChangelogRetention, ExpireConfig, ExpireOutcome, OrphanOutcome, PartitionExpireConfig,
    RollbackOutcome, RollbackTarget, TagDeleteOutcome, TagInfo,
};

use crate::error::{Error, Result};
use crate::table::Table;
use crate::write::{now_millis, random_seed};

/// Java's default age of an orphan file: one day, in milliseconds.
pub const DEFAULT_ORPHAN_OLDER_THAN_MILLIS: i64 = 86_400_000;

/// Overrides of the table's expire options; `None` keeps the table's value (or Java's
/// default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpireOptions {
    /// `snapshot.num-retained.max`.
    pub retain_max: Option<i64>,
    /// `snapshot.num-retained.min`.
    pub retain_min: Option<i64>,
    /// Overrides `snapshot.time-retained`, in milliseconds.
    pub older_than_millis: Option<i64>,
    /// `snapshot.expire.limit`.
    pub max_deletes: Option<i64>,
}

impl Table {
    async fn run_maintenance<T: Send + 'static>(
        &self,
        machine: Machine<T>,
        doing: &str,
    ) -> Result<T> {
        let machine = machine.describe(format!("{doing} of table {}", self.location()));
        self.host().run_once(machine).await
    }

    /// The expire configuration the table's latest schema asks for, with `options` applied.
    ///
    /// # Errors
    /// [`Error::Kernel`]: `Invalid` for a malformed option.
    pub async fn expire_config(&self, options: &ExpireOptions) -> Result<ExpireConfig> {
        let schema = self.schema().await?;
        let mut config = ExpireConfig::from_options(&schema.core_options())
            .map_err(|e| Error::kernel(format!("expiring snapshots of {}", self.location()), e))?;
        if let Some(v) = options.retain_max {
            config.retain_max = v;
        }
        if let Some(v) = options.retain_min {
            config.retain_min = v;
        }
        if let Some(v) = options.older_than_millis {
            config.time_retained_millis = v;
        }
        if let Some(v) = options.max_deletes {
            config.max_deletes = v;
        }
        Ok(config)
    }

    /// Expire snapshots as Java's `ExpireSnapshotsImpl.expire` (see
    /// [`maintenance::expire_snapshots`]), the time being the system clock.
    ///
    /// # Errors
    /// [`Error::Kernel`]: `Invalid` for inconsistent retention numbers, `Unsupported` when
    /// the store cannot list, IO failures.
    pub async fn expire(&self, options: &ExpireOptions) -> Result<ExpireOutcome> {
        let config = self.expire_config(options).await?;
        self.expire_with(config, now_millis()).await
    }

    /// Expire snapshots with an explicit configuration and time (milliseconds since the
    /// epoch). When the table's `changelog.num-retained.*` / `changelog.time-retained` keep
    /// changelogs longer than `config` keeps snapshots (a decoupled changelog lifecycle), the
    /// expired snapshots stay as long-lived changelogs, which then expire by those options
    /// (see [`maintenance::expire_with_changelogs`]).
    ///
    /// # Errors
    /// As [`Table::expire`].
    pub async fn expire_with(
        &self,
        config: ExpireConfig,
        now_millis: i64,
    ) -> Result<ExpireOutcome> {
        let schema = self.schema().await?;
        let changelog = ChangelogRetention::from_options(&schema.core_options())
            .map_err(|e| Error::kernel(format!("expiring snapshots of {}", self.location()), e))?
            .decoupled(&config);
        self.run_maintenance(
            maintenance::expire_with_changelogs_machine(config, changelog, now_millis),
            "expiring snapshots",
        )
        .await
    }

    /// What Java's batch `TableCommit` runs after a commit, at `now_millis` (the commit's
    /// time): automatic tags, tags past their retention time, partition expiry (only with
    /// `end-input.check-partition-expire` = true or a zero
    /// `partition.expiration-check-interval`; the drops are committed as `commit_user`), the
    /// snapshot expire and, with a decoupled changelog lifecycle, the changelog expire (see
    /// [`paimon_kernel::commit::after_commit`]). `None` with `write-only` = true.
    /// [`crate::TableCommit`] runs it after every commit and reports a failure as
    /// `maintenance_warning` of the commit's outcome.
    ///
    /// # Errors
    /// [`Error::Kernel`]: `Invalid`/`Unsupported` options, the failures of each step.
    pub async fn maintain_after_commit(
        &self,
        now_millis: i64,
        commit_user: &str,
    ) -> Result<Option<MaintainOutcome>> {
        match self.maintenance_plan().await? {
            None => Ok(None),
            Some(plan) => self
                .run_maintain_plan(plan, now_millis, commit_user)
                .await
                .map(Some),
        }
    }

    /// The maintenance the table's latest schema asks for after a commit (see
    /// [`Table::maintain_after_commit`]); `None` with `write-only` = true.
    ///
    /// # Errors
    /// [`Error::Kernel`]: `Invalid`/`Unsupported` options; store errors reading the schema.
    pub async fn maintenance_plan(&self) -> Result<Option<MaintainPlan>> {
        let schema = self.schema().await?;
        MaintainPlan::from_options(&schema.core_options()).map_err(|e| {
            Error::kernel(
                format!("maintenance after a commit to {}", self.location()),
                e,
            )
        })
    }

    /// Run a maintenance plan at `now_millis` (epoch millis); partition drops are committed
    /// as `commit_user`.
    ///
    /// # Errors
    /// [`Error::Kernel`]: the failure of the first failing step (later steps do not run).
    pub async fn run_maintain_plan(
        &self,
        plan: MaintainPlan,
        now_millis: i64,
        commit_user: &str,
    ) -> Result<MaintainOutcome> {
        self.run_maintenance(
            commit::maintain_machine(
                plan,
                now_millis,
                CommitOptions::new(commit_user, now_millis, random_seed()),
            ),
            "maintenance after a commit",
        )
        .await
    }

    /// The partition expiration the table's latest schema asks for with `overrides` (option
    /// key → value, e.g. `partition.expiration-time`) applied on top, as Java's
    /// `expire_partitions` procedure copies the table with dynamic options.
    ///
    /// # Errors
    /// [`Error::Kernel`]: `Invalid` for a malformed option or when no
    /// `partition.expiration-time` is set; `Unsupported` for a formatter letter this crate
    /// does not parse.
    pub async fn partition_expire_config(
        &self,
        overrides: &[(String, String)],
    ) -> Result<PartitionExpireConfig> {
        let context = || format!("expiring partitions of {}", self.location());
        let schema = self.schema().await?;
        let mut options = schema.options.clone();
        for (k, v) in overrides {
            options.insert(k.clone(), v.clone());
        }
        let core = paimon_kernel::spec::options::CoreOptions::new(options);
        PartitionExpireConfig::from_options(&core)
            .map_err(|e| Error::kernel(context(), e))?
            .ok_or_else(|| {
                Error::kernel(
                    context(),
                    paimon_kernel::Error::invalid(
                        "no partition.expiration-time: give the expiration time",
                    ),
                )
            })
    }

    /// Expire partitions as Java's `expire_partitions` procedure (see
    /// [`paimon_kernel::commit::partition_expire`]): the partitions `config` selects at
    /// `now_millis` (epoch millis, read as a UTC local date-time) are dropped, one `OVERWRITE`
    /// snapshot per `partition.expiration-batch-size` partitions (none with `dry_run`). The
    /// drops are committed by a random commit user at `now_millis`.
    ///
    /// # Errors
    /// [`Error::Kernel`]: `Invalid` for an unpartitioned table; commit conflicts; IO failures.
    pub async fn expire_partitions(
        &self,
        config: PartitionExpireConfig,
        now_millis: i64,
        dry_run: bool,
    ) -> Result<PartitionExpireOutcome> {
        let schema = self.schema().await?;
        if schema.partition_keys.is_empty() {
            return Err(Error::kernel(
                format!("expiring partitions of {}", self.location()),
                paimon_kernel::Error::invalid("the table has no partition keys"),
            ));
        }
        let user = paimon_kernel::util::NameSource::new(random_seed()).uuid();
        self.run_maintenance(
            commit::expire_partitions_machine(
                config,
                now_millis,
                CommitOptions::new(user, now_millis, random_seed()),
                dry_run,
            ),
            "expiring partitions",
        )
        .await
    }

    /// Remove the files no snapshot, tag, changelog or branch uses and that were last
    /// modified more than `older_than_millis` ago (Java's default: one day,
    /// [`DEFAULT_ORPHAN_OLDER_THAN_MILLIS`]). `dry_run` lists them without deleting.
    ///
    /// # Errors
    /// [`Error::Kernel`]: `Unsupported` when the store cannot list; `Invalid` when a live
    /// snapshot's manifest is missing (nothing is deleted); IO failures.
    pub async fn remove_orphans(
        &self,
        older_than_millis: i64,
        dry_run: bool,
    ) -> Result<OrphanOutcome> {
        let cutoff = now_millis().saturating_sub(older_than_millis);
        self.remove_orphans_before(cutoff, dry_run).await
    }

    /// As [`Table::remove_orphans`] with an absolute cut-off: files modified before
    /// `cutoff_millis` (milliseconds since the epoch) may go.
    ///
    /// # Errors
    /// As [`Table::remove_orphans`].
    pub async fn remove_orphans_before(
        &self,
        cutoff_millis: i64,
        dry_run: bool,
    ) -> Result<OrphanOutcome> {
        self.run_maintenance(
            maintenance::remove_orphans_machine(cutoff_millis, dry_run),
            "removing orphan files",
        )
        .await
    }

    /// Delete the managed-BLOB packs (`*.managed.blob`) that no `.blobref` sidecar of a data
    /// file used by a snapshot, tag, changelog or branch names and that were last modified
    /// more than `older_than_millis` ago (default as orphan clean: one day). `dry_run` lists
    /// them without deleting. See [`paimon_kernel::maintenance::packs`].
    ///
    /// # Errors
    /// [`Error::Kernel`]: `Unsupported` when the store cannot list; `Invalid` when a used data
    /// file of a managed-BLOB schema has no sidecar or a used sidecar is missing or corrupt
    /// (nothing is deleted); IO failures.
    pub async fn collect_packs(
        &self,
        older_than_millis: i64,
        dry_run: bool,
    ) -> Result<maintenance::PackOutcome> {
        let cutoff = now_millis().saturating_sub(older_than_millis);
        self.collect_packs_before(cutoff, dry_run).await
    }

    /// As [`Table::collect_packs`] with an absolute cut-off (epoch millis).
    ///
    /// # Errors
    /// As [`Table::collect_packs`].
    pub async fn collect_packs_before(
        &self,
        cutoff_millis: i64,
        dry_run: bool,
    ) -> Result<maintenance::PackOutcome> {
        self.run_maintenance(
            maintenance::collect_packs_machine(cutoff_millis, dry_run),
            "collecting unreferenced managed-BLOB packs",
        )
        .await
    }

    /// Create tag `name` on snapshot `snapshot_id` (the latest when `None`), optionally with
    /// a retention time in milliseconds (`tagTimeRetained`; the creation time recorded is
    /// UTC).
    ///
    /// # Errors
    /// [`Error::Kernel`] `Invalid` for a blank name, an existing tag or a missing snapshot.
    pub async fn create_tag(
        &self,
        name: &str,
        snapshot_id: Option<i64>,
        time_retained_millis: Option<i64>,
    ) -> Result<TagInfo> {
        let name = name.to_string();
        // Tags record UTC: the core has no clock and this host no time-zone database.
        let created = local_date_time(now_millis());
        self.run_maintenance(
            Machine::once("CreateTag", move |io| async move {
                maintenance::create_tag(&io, &name, snapshot_id, time_retained_millis, created)
                    .await
            }),
            "creating a tag",
        )
        .await
    }

    /// Delete tag `name`, and the files only it kept alive (see
    /// [`maintenance::delete_tag`]).
    ///
    /// # Errors
    /// [`Error::Kernel`] `Invalid` for a tag that does not exist; IO failures.
    pub async fn delete_tag(&self, name: &str) -> Result<TagDeleteOutcome> {
        let name = name.to_string();
        self.run_maintenance(
            Machine::once("DeleteTag", move |io| async move {
                maintenance::delete_tag(&io, &name).await
            }),
            "deleting a tag",
        )
        .await
    }

    /// Every tag, by snapshot id then name.
    ///
    /// # Errors
    /// [`Error::Kernel`] when the store cannot list or a tag file is corrupt.
    pub async fn tag_infos(&self) -> Result<Vec<TagInfo>> {
        self.run_maintenance(
            Machine::once("ListTags", |io| async move {
                maintenance::list_tag_infos(&io).await
            }),
            "listing tags",
        )
        .await
    }

    /// Roll back to a snapshot or tag (see [`maintenance::rollback`]).
    ///
    /// # Errors
    /// [`Error::Kernel`] `Invalid` when the target does not exist; IO failures.
    pub async fn rollback_to(&self, target: RollbackTarget) -> Result<RollbackOutcome> {
        self.run_maintenance(
            Machine::once("Rollback", move |io| async move {
                maintenance::rollback(&io, &target).await
            }),
            "rolling back",
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_civil_dates() {
        let t = local_date_time(0);
        assert_eq!((t.year, t.month, t.day, t.hour), (1970, 1, 1, 0));
        // 2024-02-29T13:45:07.123Z
        let t = local_date_time(1_709_214_307_123);
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute, t.second, t.nano),
            (2024, 2, 29, 13, 45, 7, 123_000_000)
        );
    }
}
