//! The levels of one primary-key bucket: level-0 files (each its own sorted run) and one
//! sorted run per level above.
//!
//! Source: Java `org.apache.paimon.mergetree.Levels`, `SortedRun`, `LevelSortedRun`.

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::spec::{DataFileMeta, DataType, Datum};

/// A list of files whose key ranges do not overlap, sorted by min key.
///
/// Source: Java `org.apache.paimon.mergetree.SortedRun`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SortedRun {
    /// The files, in key order.
    pub files: Vec<DataFileMeta>,
}

impl SortedRun {
    /// Σ `file_size` of the run's files, in bytes.
    pub fn total_size(&self) -> i64 {
        self.files
            .iter()
            .fold(0i64, |acc, f| acc.saturating_add(f.file_size))
    }
}

/// A sorted run and the level it lives in.
///
/// Source: Java `org.apache.paimon.mergetree.LevelSortedRun`.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelSortedRun {
    /// The level (0 for a single level-0 file).
    pub level: i32,
    /// The run.
    pub run: SortedRun,
}

/// The files of one bucket by level.
///
/// Source: Java `org.apache.paimon.mergetree.Levels`.
#[derive(Debug, Clone, PartialEq)]
pub struct Levels {
    /// Level-0 files, newest first (see [`Levels::try_new`]).
    level0: Vec<DataFileMeta>,
    /// The runs of levels 1..=max (index `level - 1`), each sorted by min key.
    levels: Vec<SortedRun>,
}

/// The order of level-0 files: larger `max_sequence_number` first; then smaller
/// `min_sequence_number`, older creation time, file name.
fn level0_order(a: &DataFileMeta, b: &DataFileMeta) -> Ordering {
    b.max_sequence_number
        .cmp(&a.max_sequence_number)
        .then(a.min_sequence_number.cmp(&b.min_sequence_number))
        .then(
            a.creation_time_millis
                .unwrap_or(0)
                .cmp(&b.creation_time_millis.unwrap_or(0)),
        )
        .then_with(|| a.file_name.cmp(&b.file_name))
}

/// The decoded min key of a file (empty for an empty key row).
pub(crate) fn decode_key(
    row: &crate::spec::BinaryRow,
    key_types: &[DataType],
) -> Result<Vec<Datum>> {
    if row.arity() == 0 {
        Ok(Vec::new())
    } else {
        row.fields(key_types)
    }
}

impl Levels {
    /// The levels of `files` with `num_levels` levels (0..num_levels-1), more if a file has
    /// a higher level. Level-0 files are ordered newest first: larger max sequence number,
    /// then smaller min sequence number, creation time, file name; files of a higher level
    /// by min key (decoded with `key_types`, the trimmed primary key types).
    ///
    /// # Errors
    /// [`Error::Invalid`] for fewer than 2 levels or a negative level; key decode errors.
    pub fn try_new(
        files: Vec<DataFileMeta>,
        num_levels: i32,
        key_types: &[DataType],
    ) -> Result<Self> {
        let restored = files.iter().map(|f| f.level).max().unwrap_or(-1) + 1;
        let n = num_levels.max(restored);
        if n < 2 {
            return Err(Error::invalid(format!(
                "num-levels = {num_levels}: the number of levels must be at least 2"
            )));
        }
        let mut level0 = Vec::new();
        let mut by_level: Vec<Vec<(Vec<Datum>, DataFileMeta)>> =
            (1..n).map(|_| Vec::new()).collect();
        for f in files {
            match f.level {
                0 => level0.push(f),
                l if l > 0 => {
                    let key = decode_key(&f.min_key, key_types)?;
                    if let Some(v) = usize::try_from(l - 1)
                        .ok()
                        .and_then(|i| by_level.get_mut(i))
                    {
                        v.push((key, f));
                    }
                }
                l => {
                    return Err(Error::invalid(format!(
                        "data file {} has level {l}",
                        f.file_name
                    )));
                }
            }
        }
        level0.sort_by(level0_order);
        let levels = by_level
            .into_iter()
            .map(|mut v| {
                v.sort_by(|a, b| a.0.cmp(&b.0));
                SortedRun {
                    files: v.into_iter().map(|(_, f)| f).collect(),
                }
            })
            .collect();
        Ok(Levels { level0, levels })
    }

    /// Level-0 files, newest first.
    pub fn level0(&self) -> &[DataFileMeta] {
        &self.level0
    }

    /// Number of levels (level 0 included).
    pub fn number_of_levels(&self) -> i32 {
        i32::try_from(self.levels.len()).unwrap_or(i32::MAX - 1) + 1
    }

    /// The highest level.
    pub fn max_level(&self) -> i32 {
        self.number_of_levels() - 1
    }

    /// Sorted runs: one per level-0 file plus one per non-empty higher level.
    pub fn number_of_sorted_runs(&self) -> usize {
        self.level0.len() + self.levels.iter().filter(|r| !r.files.is_empty()).count()
    }

    /// The highest non-empty level; 0 when only level 0 has files; -1 when empty.
    pub fn non_empty_highest_level(&self) -> i32 {
        for (i, r) in self.levels.iter().enumerate().rev() {
            if !r.files.is_empty() {
                return i32::try_from(i + 1).unwrap_or(i32::MAX);
            }
        }
        if self.level0.is_empty() { -1 } else { 0 }
    }

    /// The sorted runs, newest first: every level-0 file, then levels 1, 2, … (non-empty).
    pub fn level_sorted_runs(&self) -> Vec<LevelSortedRun> {
        let mut runs: Vec<LevelSortedRun> = self
            .level0
            .iter()
            .map(|f| LevelSortedRun {
                level: 0,
                run: SortedRun {
                    files: vec![f.clone()],
                },
            })
            .collect();
        for (i, r) in self.levels.iter().enumerate() {
            if !r.files.is_empty() {
                runs.push(LevelSortedRun {
                    level: i32::try_from(i + 1).unwrap_or(i32::MAX),
                    run: r.clone(),
                });
            }
        }
        runs
    }

    /// Every file, in run order.
    pub fn all_files(&self) -> Vec<DataFileMeta> {
        self.level_sorted_runs()
            .into_iter()
            .flat_map(|r| r.run.files)
            .collect()
    }
}
