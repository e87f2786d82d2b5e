//! Maintenance after a commit: what Java's batch `TableCommit` runs once a commit's
//! snapshot is visible, decided from the table's options as data ([`MaintainPlan`]) and run
//! as one machine ([`maintain_machine`]).
//!
//! In Java's order: automatic tags (`tag.automatic-creation` `process-time` / `watermark`),
//! tags past their `tagTimeRetained` (`tag.time-expire-enabled`), partition expiry
//! (`partition.expiration-time`, only when `end-input.check-partition-expire` = true or
//! `partition.expiration-check-interval` is zero, see
//! [`PartitionExpireConfig::runs_after_commit`]), then the snapshot expire
//! (`snapshot.num-retained.min` / `.max`, `snapshot.time-retained`, `snapshot.expire.limit`)
//! and, with a decoupled changelog lifecycle, the changelog expire
//! (`changelog.num-retained.*`, `changelog.time-retained`). `tag.automatic-creation` =
//! `batch` (Java: at the end of a Flink batch job) tags the latest snapshot last, after batch
//! commits only ([`MaintainPlan::for_stream_commit`]). Nothing runs with `write-only` = true.
//! With `snapshot.expire.execution-mode` = `async` the host runs the plan of a streaming
//! commit in the background ([`MaintainPlan::asynchronous`]). With `consumer.expiration-time`, consumers whose file was last
//! modified before now minus that duration are deleted before the snapshot expire (Java's
//! `ConsumerManager.expire`, "expire consumer first to avoid preventing snapshot
//! expiration"); a consumer whose store gives no modification time is kept.
//!
//! Source: Java `org.apache.paimon.table.sink.TableCommitImpl.maintain`,
//! `AbstractFileStoreTable.newCommit` / `newExpireRunnable`, `TagAutoManager`.

use serde::{Deserialize, Serialize};

use crate::commit::CommitOptions;
use crate::commit::partition_expire::expire_partitions;
use crate::error::{Error, Result};
use crate::io::{Io, Machine};
use crate::maintenance::auto_tag::{
    AutoTagOutcome, TagAutoConfig, TagCreationMode, bool_option, create_auto_tags,
    expire_tags_by_time,
};
use crate::maintenance::expire::{
    ChangelogExpireConfig, ChangelogRetention, ExpireConfig, ExpireOutcome, expire_with_changelogs,
};
use crate::maintenance::partitions::{ExpiredPartition, PartitionExpireConfig};
use crate::spec::options::CoreOptions;
use crate::util::parse_duration_millis;

/// What to run after a commit (Java `TableCommitImpl`'s maintenance members).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaintainPlan {
    /// The snapshot expire.
    pub expire: ExpireConfig,
    /// The changelog expire, with a decoupled changelog lifecycle.
    pub changelog: Option<ChangelogExpireConfig>,
    /// Automatic tags (`tag.automatic-creation` other than `none`).
    pub tag_auto: Option<TagAutoConfig>,
    /// `tag.time-expire-enabled` (default true): delete tags past their retention time.
    pub tag_time_expire: bool,
    /// Partition expiry after the commit: set when `partition.expiration-time` is set and
    /// [`PartitionExpireConfig::runs_after_commit`] holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_expire: Option<PartitionExpireConfig>,
    /// `consumer.expiration-time` in milliseconds: consumers idle longer are deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer_expire_millis: Option<i64>,
    /// `snapshot.expire.execution-mode` = `async` (default `sync`): after a streaming commit
    /// (one with the caller's identifier) the host runs this plan in the background, one
    /// plan at a time in commit order, and the commit returns without waiting. After a
    /// batch commit it always runs before the commit returns, as in Java.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub asynchronous: bool,
}

impl MaintainPlan {
    /// The plan a table's options ask for; `None` with `write-only` (or its fallback key
    /// `write.compaction-skip`) = true.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a malformed option (including the `partition.*` expiration
    /// options, even when partition expiry does not run after commits, and
    /// `consumer.expiration-time`); [`Error::Unsupported`] for a region time-zone id and for
    /// `partition.timestamp-formatter` letters this crate does not parse.
    pub fn from_options(options: &CoreOptions) -> Result<Option<Self>> {
        if bool_option(options, &["write-only", "write.compaction-skip"], false)? {
            return Ok(None);
        }
        let key = "consumer.expiration-time";
        let consumer_expire_millis = options
            .get(key)
            .map(|v| {
                parse_duration_millis(v).map_err(|e| Error::invalid(format!("option {key}: {e}")))
            })
            .transpose()?;
        let partition_expire =
            PartitionExpireConfig::from_options(options)?.filter(|c| c.runs_after_commit());
        let expire = ExpireConfig::from_options(options)?;
        let changelog = ChangelogRetention::from_options(options)?.decoupled(&expire);
        Ok(Some(MaintainPlan {
            expire,
            changelog,
            tag_auto: TagAutoConfig::from_options(options)?,
            tag_time_expire: bool_option(options, &["tag.time-expire-enabled"], true)?,
            partition_expire,
            consumer_expire_millis,
            asynchronous: expire_execution_async(options)?,
        }))
    }

    /// The plan after a streaming commit (one with the caller's identifier rather than a
    /// batch commit's): `tag.automatic-creation` = `batch` creates no tag there. Java makes
    /// batch tags only at the end of a batch job (Flink's `BatchWriteGeneratorTagOperator`);
    /// its `TableCommitImpl` has no tag creation for that mode at all.
    pub fn for_stream_commit(mut self) -> Self {
        if self
            .tag_auto
            .as_ref()
            .is_some_and(|t| t.mode == TagCreationMode::Batch)
        {
            self.tag_auto = None;
        }
        self
    }
}

/// `snapshot.expire.execution-mode`: `sync` (default) or `async`, case-insensitive.
///
/// Source: Java `CoreOptions.SNAPSHOT_EXPIRE_EXECUTION_MODE` (`ExpireExecutionMode`).
///
/// # Errors
/// [`Error::Invalid`] naming the option for another value.
fn expire_execution_async(options: &CoreOptions) -> Result<bool> {
    let key = "snapshot.expire.execution-mode";
    match options.get(key).map(str::trim) {
        None => Ok(false),
        Some(v) if v.eq_ignore_ascii_case("sync") => Ok(false),
        Some(v) if v.eq_ignore_ascii_case("async") => Ok(true),
        Some(v) => Err(Error::invalid(format!(
            "option {key}: '{v}' is not one of sync, async"
        ))),
    }
}

/// What the maintenance after a commit did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaintainOutcome {
    /// Automatic tags created and deleted (retention, replaced batch tags).
    pub auto_tags: AutoTagOutcome,
    /// Tags deleted because their `tagTimeRetained` passed.
    pub expired_tags: Vec<String>,
    /// Partitions dropped by partition expiry (Java's order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expired_partitions: Vec<ExpiredPartition>,
    /// Consumers deleted by `consumer.expiration-time` (their ids).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expired_consumers: Vec<String>,
    /// The snapshot (and changelog) expire.
    pub expire: ExpireOutcome,
}

/// A machine running [`maintain`].
pub fn maintain_machine(
    plan: MaintainPlan,
    now_millis: i64,
    drop_commit: CommitOptions,
) -> Machine<MaintainOutcome> {
    Machine::once("MaintainAfterCommit", move |io| async move {
        maintain(&io, &plan, now_millis, &drop_commit).await
    })
}

/// Run `plan` at `now_millis` (epoch millis, the host's commit time). Partition expiry
/// commits its drops with `drop_commit` (Java: the committer's own user and identifier).
///
/// # Errors
/// The first failing step's error (later steps do not run, as in Java where the exception
/// ends `maintain`).
pub async fn maintain<T>(
    io: &Io<T>,
    plan: &MaintainPlan,
    now_millis: i64,
    drop_commit: &CommitOptions,
) -> Result<MaintainOutcome> {
    let mut outcome = MaintainOutcome::default();
    let periodic = plan
        .tag_auto
        .as_ref()
        .filter(|c| c.mode != TagCreationMode::Batch);
    if let Some(config) = periodic {
        outcome.auto_tags = create_auto_tags(io, config, now_millis).await?;
    }
    if plan.tag_time_expire {
        outcome.expired_tags = expire_tags_by_time(io, now_millis).await?;
    }
    if let Some(config) = &plan.partition_expire {
        outcome.expired_partitions = expire_partitions(io, config, now_millis, drop_commit, false)
            .await?
            .partitions;
    }
    if let Some(millis) = plan.consumer_expire_millis {
        outcome.expired_consumers = expire_consumers(io, now_millis.saturating_sub(millis)).await?;
    }
    outcome.expire =
        expire_with_changelogs(io, &plan.expire, plan.changelog.as_ref(), now_millis).await?;
    if let Some(config) = plan
        .tag_auto
        .as_ref()
        .filter(|c| c.mode == TagCreationMode::Batch)
    {
        let batch = create_auto_tags(io, config, now_millis).await?;
        outcome.auto_tags.created.extend(batch.created);
        outcome.auto_tags.deleted.extend(batch.deleted);
    }
    Ok(outcome)
}

/// Delete the consumers (`consumer/consumer-<id>`) whose file was last modified before
/// `cutoff_millis` (epoch millis); returns their ids, sorted. Consumers the store reports no
/// modification time for are kept. Source: Java `ConsumerManager.expire`.
///
/// # Errors
/// [`Error::Unsupported`] when the store cannot list; a failed delete ([`Error::Io`]; a
/// consumer already gone is fine).
pub async fn expire_consumers<T>(io: &Io<T>, cutoff_millis: i64) -> Result<Vec<String>> {
    let Some(objects) = io.list("consumer/").await? else {
        return Err(Error::unsupported(
            "expiring consumers needs a store that can list files (consumer/)",
        ));
    };
    let mut expired: Vec<(String, String)> = objects
        .into_iter()
        .filter(|o| o.modified_millis.is_some_and(|m| m < cutoff_millis))
        .filter_map(|o| {
            let id = o.path.strip_prefix("consumer/consumer-")?.to_string();
            (!id.is_empty() && !id.contains('/')).then_some((id, o.path))
        })
        .collect();
    expired.sort();
    for (_, path) in &expired {
        match io.delete(path).await {
            Err(e) if !e.is_not_found() => return Err(e),
            _ => {}
        }
    }
    Ok(expired.into_iter().map(|(id, _)| id).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(kv: &[(&str, &str)]) -> CoreOptions {
        CoreOptions::new(
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn plan_follows_java_defaults_and_switches() {
        let plan = MaintainPlan::from_options(&options(&[])).unwrap().unwrap();
        assert_eq!(plan.expire, ExpireConfig::default());
        assert_eq!(plan.expire.retain_min, 10);
        assert_eq!(plan.expire.time_retained_millis, 3_600_000);
        assert_eq!(plan.changelog, None);
        assert_eq!(plan.tag_auto, None);
        assert!(plan.tag_time_expire);
        for key in ["write-only", "write.compaction-skip"] {
            assert_eq!(
                MaintainPlan::from_options(&options(&[(key, "TRUE")])).unwrap(),
                None
            );
        }
        let plan = MaintainPlan::from_options(&options(&[("consumer.expiration-time", "1 d")]))
            .unwrap()
            .unwrap();
        assert_eq!(plan.consumer_expire_millis, Some(86_400_000));
        let err = MaintainPlan::from_options(&options(&[("consumer.expiration-time", "soon")]))
            .unwrap_err();
        assert!(
            matches!(err, Error::Invalid(ref m) if m.contains("consumer.expiration-time")),
            "{err}"
        );
        // Partition expiry: only with a zero check interval or the end-input check.
        let plan = MaintainPlan::from_options(&options(&[("partition.expiration-time", "1 d")]))
            .unwrap()
            .unwrap();
        assert_eq!(plan.partition_expire, None);
        let plan = MaintainPlan::from_options(&options(&[
            ("partition.expiration-time", "1 d"),
            ("end-input.check-partition-expire", "true"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            plan.partition_expire
                .map(|c| (c.expiration_millis, c.max_expires)),
            Some((86_400_000, 100))
        );
        let plan = MaintainPlan::from_options(&options(&[
            ("partition.expiration-time", "2 h"),
            ("partition.expiration-check-interval", "0 s"),
        ]))
        .unwrap()
        .unwrap();
        assert!(plan.partition_expire.is_some());
        let err = MaintainPlan::from_options(&options(&[
            ("partition.expiration-time", "1 d"),
            ("partition.expiration-strategy", "values"),
        ]))
        .unwrap_err();
        assert!(
            err.to_string().contains("partition.expiration-strategy"),
            "{err}"
        );
    }

    #[test]
    fn changelog_decoupled_as_java_expire_config() {
        // Unset changelog values fall back to the snapshots': not decoupled.
        let plan = MaintainPlan::from_options(&options(&[("changelog.num-retained.max", "5")]))
            .unwrap()
            .unwrap();
        // 5 < Integer.MAX_VALUE snapshots: not decoupled.
        assert_eq!(plan.changelog, None);
        let plan = MaintainPlan::from_options(&options(&[
            ("snapshot.num-retained.max", "3"),
            ("changelog.num-retained.max", "5"),
            ("changelog-producer", "input"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            plan.changelog,
            Some(ChangelogExpireConfig {
                retain_max: 5,
                retain_min: 10,
                time_retained_millis: 3_600_000,
                max_deletes: 50,
                produce_changelog: true,
            })
        );
        let plan = MaintainPlan::from_options(&options(&[("changelog.time-retained", "2 h")]))
            .unwrap()
            .unwrap();
        assert_eq!(
            plan.changelog
                .map(|c| (c.time_retained_millis, c.produce_changelog)),
            Some((7_200_000, false))
        );
        // consumer.changelog-only holds only when decoupled.
        let plan = MaintainPlan::from_options(&options(&[("consumer.changelog-only", "true")]))
            .unwrap()
            .unwrap();
        assert!(!plan.expire.consumer_changelog_only);
    }

    /// Consumers modified before the cutoff go; newer ones, and ones without a modification
    /// time, stay.
    #[test]
    fn consumers_idle_past_the_cutoff_are_deleted() {
        use crate::io::{IoAnswer, IoOp, MemoryStore, ObjectMeta, Step};
        let mut store = MemoryStore::new();
        for id in ["old", "new", "unknown"] {
            store
                .objects
                .insert(format!("consumer/consumer-{id}"), "{}".into());
        }
        let modified = |path: &str| match path {
            "consumer/consumer-old" => Some(1_000),
            "consumer/consumer-new" => Some(5_000),
            _ => None,
        };
        let mut m = Machine::once("expire consumers", |io| async move {
            expire_consumers(&io, 2_000).await
        });
        let got = loop {
            match m.step().unwrap() {
                Step::NeedIo(round) => {
                    for r in round {
                        let answer = match &r.op {
                            IoOp::List { prefix } => IoAnswer::List {
                                objects: store
                                    .objects
                                    .keys()
                                    .filter(|k| k.starts_with(prefix.as_str()))
                                    .map(|k| ObjectMeta {
                                        path: k.clone(),
                                        size_bytes: 2,
                                        modified_millis: modified(k),
                                    })
                                    .collect(),
                            },
                            op => store.answer(op),
                        };
                        m.provide(r.id, answer).unwrap();
                    }
                }
                Step::Emit(v) => break v,
                Step::Work(w) => w.into_iter().for_each(crate::io::Work::run),
                Step::Wait => {}
                Step::Done => panic!("no result"),
            }
        };
        assert_eq!(got, ["old"]);
        let left: Vec<&String> = store.objects.keys().collect();
        assert_eq!(left, ["consumer/consumer-new", "consumer/consumer-unknown"]);
    }
}
