//! Picking what to compact in one bucket: universal compaction, forced level-0 compaction,
//! full compaction.
//!
//! Pure functions of the bucket's sorted runs (newest first, as
//! [`super::Levels::level_sorted_runs`] lists them). Time (early full compaction, off-peak
//! hours) is an input.
//!
//! Source: Java `org.apache.paimon.mergetree.compact.UniversalCompaction`,
//! `ForceUpLevel0Compaction`, `EarlyFullCompaction`, `OffPeakHours`, `CompactStrategy`
//! (`pickFullCompaction`), `org.apache.paimon.compact.CompactUnit`.

use serde::{Deserialize, Serialize};

use super::levels::LevelSortedRun;
use crate::spec::DataFileMeta;

/// The files of one compaction and the level its output goes to.
///
/// Source: Java `org.apache.paimon.compact.CompactUnit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactUnit {
    /// The level the outputs are written to.
    pub output_level: i32,
    /// The input files, run after run.
    pub files: Vec<DataFileMeta>,
    /// Rewrite every file on its own (full compaction of a single max-level run with
    /// `compaction.force-rewrite-all-files`) instead of merging runs.
    pub file_rewrite: bool,
}

impl CompactUnit {
    /// A unit of every file of `runs`.
    pub fn from_level_runs(output_level: i32, runs: &[LevelSortedRun]) -> Self {
        CompactUnit {
            output_level,
            files: runs.iter().flat_map(|r| r.run.files.clone()).collect(),
            file_rewrite: false,
        }
    }
}

/// Early full compaction (`compaction.optimization-interval`,
/// `compaction.total-size-threshold`, `compaction.incremental-size-threshold`).
///
/// Source: Java `org.apache.paimon.mergetree.compact.EarlyFullCompaction`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EarlyFullCompaction {
    /// Full compaction when this many millis passed since the last one.
    pub interval_millis: Option<i64>,
    /// Full compaction when the total size is below this (bytes).
    pub total_size_threshold: Option<i64>,
    /// Full compaction when the size of the runs not at the max level is above this (bytes).
    pub incremental_size_threshold: Option<i64>,
    /// Creation time of the newest max-level file (the estimated last full compaction).
    pub last_full_compaction_millis: Option<i64>,
    /// The current time (millis).
    pub now_millis: i64,
}

impl EarlyFullCompaction {
    fn try_full(&self, num_levels: i32, runs: &[LevelSortedRun]) -> Option<CompactUnit> {
        if runs.len() == 1 {
            return None;
        }
        let max_level = num_levels - 1;
        let all = || Some(CompactUnit::from_level_runs(max_level, runs));
        if let Some(interval) = self.interval_millis {
            match self.last_full_compaction_millis {
                None => return all(),
                Some(last) if self.now_millis.saturating_sub(last) > interval => return all(),
                Some(_) => {}
            }
        }
        if let Some(t) = self.total_size_threshold {
            let total: i64 = runs.iter().map(|r| r.run.total_size()).sum();
            if total < t {
                return all();
            }
        }
        if let Some(t) = self.incremental_size_threshold {
            let inc: i64 = runs
                .iter()
                .filter(|r| r.level != max_level)
                .map(|r| r.run.total_size())
                .sum();
            if inc > t {
                return all();
            }
        }
        None
    }
}

/// Universal compaction (RocksDB style): size amplification, size ratio, run count.
///
/// Source: Java `org.apache.paimon.mergetree.compact.UniversalCompaction`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniversalCompaction {
    /// `compaction.max-size-amplification-percent` (default 200).
    pub max_size_amp: i64,
    /// `compaction.size-ratio` (default 1), percent.
    pub size_ratio: i64,
    /// `num-sorted-run.compaction-trigger` (default 5).
    pub num_run_compaction_trigger: usize,
    /// Early full compaction, when one of its options is set.
    pub early_full: Option<EarlyFullCompaction>,
    /// The extra size-ratio percent of off-peak hours at planning time (0 outside them).
    pub off_peak_ratio: i64,
}

impl UniversalCompaction {
    /// Universal compaction with the given options, no early full compaction and no
    /// off-peak ratio.
    pub fn new(max_size_amp: i64, size_ratio: i64, num_run_compaction_trigger: usize) -> Self {
        UniversalCompaction {
            max_size_amp,
            size_ratio,
            num_run_compaction_trigger,
            early_full: None,
            off_peak_ratio: 0,
        }
    }

    /// The unit to compact, if any: early full compaction, then size amplification, then
    /// size ratio, then run count.
    pub fn pick(&self, num_levels: i32, runs: &[LevelSortedRun]) -> Option<CompactUnit> {
        let max_level = num_levels - 1;
        if let Some(unit) = self
            .early_full
            .as_ref()
            .and_then(|e| e.try_full(num_levels, runs))
        {
            return Some(unit);
        }
        if let Some(unit) = self.pick_for_size_amp(max_level, runs) {
            return Some(unit);
        }
        if let Some(unit) = self.pick_for_size_ratio(max_level, runs) {
            return Some(unit);
        }
        if runs.len() > self.num_run_compaction_trigger {
            let count = runs.len() - self.num_run_compaction_trigger + 1;
            return self.pick_for_size_ratio_from(max_level, runs, count, false);
        }
        None
    }

    /// Every leading level-0 run (plus level 1 when it follows), extended by size ratio.
    pub fn force_pick_l0(&self, num_levels: i32, runs: &[LevelSortedRun]) -> Option<CompactUnit> {
        let mut count = runs.iter().take_while(|r| r.level <= 0).count();
        if count == 0 {
            return None;
        }
        // Level 1 is compacted with level 0 so that the output is never level 0.
        if runs.get(count).is_some_and(|r| r.level == 1) {
            count += 1;
        }
        self.pick_for_size_ratio_from(num_levels - 1, runs, count, true)
    }

    /// All runs to the max level when the runs before the oldest are larger than
    /// `max_size_amp` percent of it (and there are at least `trigger` runs).
    pub fn pick_for_size_amp(
        &self,
        max_level: i32,
        runs: &[LevelSortedRun],
    ) -> Option<CompactUnit> {
        if runs.len() < self.num_run_compaction_trigger {
            return None;
        }
        let (last, rest) = runs.split_last()?;
        let candidate: i64 = rest.iter().map(|r| r.run.total_size()).sum();
        let earliest = last.run.total_size();
        if i128::from(candidate) * 100 > i128::from(self.max_size_amp) * i128::from(earliest) {
            return Some(CompactUnit::from_level_runs(max_level, runs));
        }
        None
    }

    /// Size ratio starting from the newest run (with at least `trigger` runs).
    pub fn pick_for_size_ratio(
        &self,
        max_level: i32,
        runs: &[LevelSortedRun],
    ) -> Option<CompactUnit> {
        if runs.len() < self.num_run_compaction_trigger {
            return None;
        }
        self.pick_for_size_ratio_from(max_level, runs, 1, false)
    }

    /// Take the first `count` runs, then each next run while the candidates' size times
    /// `(100 + size_ratio + off_peak_ratio) / 100` is not below the next run's size; a unit
    /// when more than one run is taken or `force`.
    pub fn pick_for_size_ratio_from(
        &self,
        max_level: i32,
        runs: &[LevelSortedRun],
        count: usize,
        force: bool,
    ) -> Option<CompactUnit> {
        let mut count = count.min(runs.len());
        let mut candidate: i64 = runs[..count].iter().map(|r| r.run.total_size()).sum();
        let factor = (100 + self.size_ratio + self.off_peak_ratio) as f64 / 100.0;
        for next in &runs[count..] {
            let size = next.run.total_size();
            if candidate as f64 * factor < size as f64 {
                break;
            }
            candidate = candidate.saturating_add(size);
            count += 1;
        }
        if force || count > 1 {
            return Some(self.create_unit(runs, max_level, count));
        }
        None
    }

    /// The unit of the first `count` runs: output level one below the next run's level,
    /// never 0 (following level-0 runs are absorbed up to a run of a higher level, whose
    /// level is used), the max level when every run is taken.
    pub fn create_unit(
        &self,
        runs: &[LevelSortedRun],
        max_level: i32,
        count: usize,
    ) -> CompactUnit {
        let mut count = count.min(runs.len());
        let mut output_level = if count == runs.len() {
            max_level
        } else {
            (runs[count].level - 1).max(0)
        };
        if output_level == 0 {
            for next in &runs[count..] {
                count += 1;
                if next.level != 0 {
                    output_level = next.level;
                    break;
                }
            }
        }
        if count == runs.len() {
            output_level = max_level;
        }
        CompactUnit::from_level_runs(output_level, &runs[..count])
    }
}

/// How a bucket picks its normal (not full) compaction.
///
/// Source: Java `MergeTreeCompactManagerFactory#createCompactStrategy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompactStrategy {
    /// Universal compaction.
    Universal(UniversalCompaction),
    /// Universal compaction, else every level-0 run (lookup tables,
    /// `compaction.force-up-level-0`).
    ///
    /// Source: Java `ForceUpLevel0Compaction`.
    ForceUpLevel0 {
        /// The universal strategy tried first.
        universal: UniversalCompaction,
        /// `lookup-compact = gentle`: `lookup-compact.max-interval`; level 0 is forced up
        /// only on every n-th trigger. A plan is one trigger, so it forces level 0 only
        /// when this is 1.
        max_interval: Option<i32>,
    },
}

impl CompactStrategy {
    /// The universal compaction this strategy tries first.
    pub fn universal(&self) -> &UniversalCompaction {
        match self {
            CompactStrategy::Universal(u) | CompactStrategy::ForceUpLevel0 { universal: u, .. } => {
                u
            }
        }
    }

    /// The unit to compact, if any.
    pub fn pick(&self, num_levels: i32, runs: &[LevelSortedRun]) -> Option<CompactUnit> {
        match self {
            CompactStrategy::Universal(u) => u.pick(num_levels, runs),
            CompactStrategy::ForceUpLevel0 {
                universal,
                max_interval,
            } => universal.pick(num_levels, runs).or_else(|| {
                // One trigger: Java's counter goes from 0 to 1 and forces when it reaches
                // the interval.
                match max_interval {
                    Some(n) if *n != 1 => None,
                    _ => universal.force_pick_l0(num_levels, runs),
                }
            }),
        }
    }
}

/// Full compaction: every run to the max level; when the only run already is the max
/// level, only its files that must be rewritten (`force_rewrite_all_files`: all of them;
/// else those for which `must_rewrite(file)` holds: the planner's test for expired rows
/// by the file's statistics (record-level expiry) or a deletion vector) as a file-rewrite
/// unit, else nothing.
///
/// Source: Java `CompactStrategy#pickFullCompaction`.
pub fn pick_full_compaction(
    num_levels: i32,
    runs: &[LevelSortedRun],
    force_rewrite_all_files: bool,
    must_rewrite: impl Fn(&DataFileMeta) -> bool,
) -> Option<CompactUnit> {
    let max_level = num_levels - 1;
    let first = runs.first()?;
    if runs.len() == 1 && first.level == max_level {
        let files: Vec<DataFileMeta> = first
            .run
            .files
            .iter()
            .filter(|f| force_rewrite_all_files || must_rewrite(f))
            .cloned()
            .collect();
        if files.is_empty() {
            return None;
        }
        return Some(CompactUnit {
            output_level: max_level,
            files,
            file_rewrite: true,
        });
    }
    Some(CompactUnit::from_level_runs(max_level, runs))
}
