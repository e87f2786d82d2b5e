//! Row-id ranges of data-evolution tables: parsing, merging, intersection, per-file selections.
//!
//! A [`RowRange`] is Paimon's `Range`: inclusive on both ends, never empty. Requested ranges
//! (from `_ROW_ID` predicates or a global index) are sorted and merged (adjacent ranges merge,
//! `[1,3]`+`[4,5]` = `[1,5]`) into a [`RowRangeIndex`]; a split's expected ranges are the union
//! of the index intersected with **each** file's row-id range separately (a split's range is
//! never derived from its first and last file only: files may be unordered, discontiguous or
//! overlapping).
//!
//! Source: Java `org.apache.paimon.utils.Range`, `org.apache.paimon.utils.RowRangeIndex`,
//! `org.apache.paimon.globalindex.DataEvolutionBatchScan#wrap`,
//! `org.apache.paimon.io.DataFileMeta#toFileSelection`; spec `blob-fallback.md` §4–§5.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// An inclusive, non-empty range of row ids `[from, to]`.
///
/// Source: Java `org.apache.paimon.utils.Range`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RowRange {
    /// First row id (inclusive).
    pub from: i64,
    /// Last row id (inclusive).
    pub to: i64,
}

impl fmt::Display for RowRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}]", self.from, self.to)
    }
}

impl RowRange {
    /// `[from, to]`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `from > to` (empty ranges do not exist).
    pub fn try_new(from: i64, to: i64) -> Result<Self> {
        if from > to {
            return Err(Error::invalid(format!(
                "row range [{from}, {to}] is empty (from > to)"
            )));
        }
        Ok(RowRange { from, to })
    }

    /// The row-id range of a data file: `[first_row_id, first_row_id + row_count - 1]`
    /// (Java `DataFileMeta#nonNullRowIdRange`).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `path` when `row_count` is 0 or the range overflows.
    pub fn of_file(first_row_id: i64, row_count: u64, path: &str) -> Result<Self> {
        let to = i64::try_from(row_count)
            .ok()
            .filter(|n| *n > 0)
            .and_then(|n| first_row_id.checked_add(n - 1))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "file {path} has no valid row-id range (first_row_id {first_row_id}, row_count {row_count})"
                ))
            })?;
        Ok(RowRange {
            from: first_row_id,
            to,
        })
    }

    /// Number of row ids, `to - from + 1`.
    pub fn count(&self) -> u64 {
        (self.to as i128 - self.from as i128 + 1) as u64
    }

    /// True if `row_id` is inside.
    pub fn contains(&self, row_id: i64) -> bool {
        self.from <= row_id && row_id <= self.to
    }

    /// The common part of two ranges, `None` if they do not overlap.
    pub fn intersection(&self, other: &RowRange) -> Option<RowRange> {
        let from = self.from.max(other.from);
        let to = self.to.min(other.to);
        (from <= to).then_some(RowRange { from, to })
    }
}

/// Parse a comma-separated list of row ids and inclusive ranges, e.g. `0-9,42` (whitespace
/// around items is ignored). The result is in input order; use [`sort_and_merge`] to
/// normalize.
///
/// # Errors
/// [`Error::Invalid`] naming the bad item: empty items, non-numbers, `from > to`.
pub fn parse_row_ranges(s: &str) -> Result<Vec<RowRange>> {
    let bad = |item: &str, why: &str| {
        Error::invalid(format!("invalid row range '{item}' in '{s}': {why}"))
    };
    let mut out = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(bad(item, "empty item"));
        }
        // A leading '-' would be a negative number; row ids are never negative.
        let (a, b) = match item.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (item, item),
        };
        let num = |x: &str| {
            x.parse::<i64>()
                .ok()
                .filter(|v| *v >= 0)
                .ok_or_else(|| bad(item, "expected a non-negative row id"))
        };
        let (from, to) = (num(a)?, num(b)?);
        if from > to {
            return Err(bad(item, "from > to"));
        }
        out.push(RowRange { from, to });
    }
    Ok(out)
}

/// Sort by `from` and merge overlapping **and adjacent** ranges (Java
/// `Range.sortAndMergeOverlap(ranges, true)`).
pub fn sort_and_merge(ranges: &[RowRange]) -> Vec<RowRange> {
    let mut sorted = ranges.to_vec();
    sorted.sort_unstable();
    let mut out: Vec<RowRange> = Vec::with_capacity(sorted.len());
    for r in sorted {
        match out.last_mut() {
            Some(cur) if cur.to.saturating_add(1) >= r.from => cur.to = cur.to.max(r.to),
            _ => out.push(r),
        }
    }
    out
}

/// Intersection of two sorted, merged range lists (Java `Range.and`).
pub fn intersect_sorted(left: &[RowRange], right: &[RowRange]) -> Vec<RowRange> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while let (Some(l), Some(r)) = (left.get(i), right.get(j)) {
        if let Some(x) = l.intersection(r) {
            out.push(x);
        }
        if l.to <= r.to {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Requested row ranges, sorted and merged, with fast intersection queries.
///
/// Source: Java `org.apache.paimon.utils.RowRangeIndex`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowRangeIndex {
    ranges: Vec<RowRange>,
}

impl RowRangeIndex {
    /// Sort and merge `ranges` (adjacent ones too).
    pub fn new(ranges: &[RowRange]) -> Self {
        RowRangeIndex {
            ranges: sort_and_merge(ranges),
        }
    }

    /// The sorted, merged ranges.
    pub fn ranges(&self) -> &[RowRange] {
        &self.ranges
    }

    /// The parts of the index inside `[start, end]`, in order (binary search for the first
    /// range ending at or after `start`).
    pub fn intersected_ranges(&self, start: i64, end: i64) -> Vec<RowRange> {
        let first = self.ranges.partition_point(|r| r.to < start);
        let query = RowRange {
            from: start,
            to: end,
        };
        self.ranges[first..]
            .iter()
            .take_while(|r| r.from <= end)
            .filter_map(|r| r.intersection(&query))
            .collect()
    }

    /// The expected row ranges of a split whose files have the row-id ranges `files` (any
    /// order, possibly overlapping or discontiguous): the union of this index intersected with
    /// each file range separately, sorted and merged.
    pub fn split_ranges(&self, files: &[RowRange]) -> Vec<RowRange> {
        let parts: Vec<RowRange> = files
            .iter()
            .flat_map(|f| self.intersected_ranges(f.from, f.to))
            .collect();
        sort_and_merge(&parts)
    }

    /// True if `row_id` lies in one of the ranges.
    pub fn contains(&self, row_id: i64) -> bool {
        let i = self.ranges.partition_point(|r| r.to < row_id);
        self.ranges.get(i).is_some_and(|r| r.from <= row_id)
    }

    /// True if some requested row id lies in `file`.
    pub fn intersects(&self, file: RowRange) -> bool {
        !self.intersected_ranges(file.from, file.to).is_empty()
    }
}

/// The rows of a file to read under requested `ranges` (sorted and merged): `None` when the
/// single intersection is the whole file (read everything), else the 0-based positions
/// `row_id - file.from` of all intersections, ascending (possibly empty).
///
/// Source: Java `org.apache.paimon.io.DataFileMeta#toFileSelection`.
pub fn file_selection(file: RowRange, ranges: &[RowRange]) -> Option<Vec<u64>> {
    let parts = intersect_sorted(&[file], ranges);
    if parts.len() == 1 && parts[0] == file {
        return None;
    }
    Some(
        parts
            .iter()
            .flat_map(|p| (p.from - file.from) as u64..=(p.to - file.from) as u64)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(from: i64, to: i64) -> RowRange {
        RowRange::try_new(from, to).unwrap()
    }

    #[test]
    fn parse() {
        assert_eq!(
            parse_row_ranges("0-9,42").unwrap(),
            vec![r(0, 9), r(42, 42)]
        );
        assert_eq!(
            parse_row_ranges(" 5 - 7 , 1").unwrap(),
            vec![r(5, 7), r(1, 1)]
        );
        for bad in ["", "1,,2", "a", "3-1", "-1", "1-", "1-2-3"] {
            let e = parse_row_ranges(bad).unwrap_err().to_string();
            assert!(e.contains("invalid row range"), "{bad}: {e}");
        }
        assert!(RowRange::try_new(3, 2).is_err());
        assert_eq!(r(3, 7).count(), 5);
        assert_eq!(r(3, 7).to_string(), "[3, 7]");
    }

    #[test]
    fn sort_and_merge_merges_adjacent_and_overlapping() {
        assert_eq!(
            sort_and_merge(&[r(4, 5), r(1, 3), r(10, 12), r(11, 20), r(30, 30)]),
            vec![r(1, 5), r(10, 20), r(30, 30)]
        );
        assert_eq!(sort_and_merge(&[r(1, 3), r(5, 6)]), vec![r(1, 3), r(5, 6)]);
        assert_eq!(sort_and_merge(&[r(0, 100), r(5, 6)]), vec![r(0, 100)]);
        assert!(sort_and_merge(&[]).is_empty());
    }

    #[test]
    fn and_of_sorted_lists() {
        assert_eq!(
            intersect_sorted(&[r(0, 10), r(20, 30)], &[r(5, 15), r(25, 35)]),
            vec![r(5, 10), r(25, 30)]
        );
        assert!(intersect_sorted(&[r(0, 1)], &[r(2, 3)]).is_empty());
    }

    #[test]
    fn intersected_ranges_clip_first_and_last() {
        let idx = RowRangeIndex::new(&[r(35, 41), r(15, 20), r(29, 33), r(25, 26)]);
        assert_eq!(idx.ranges(), &[r(15, 20), r(25, 26), r(29, 33), r(35, 41)]);
        assert_eq!(
            idx.intersected_ranges(20, 45),
            vec![r(20, 20), r(25, 26), r(29, 33), r(35, 41)]
        );
        assert_eq!(idx.intersected_ranges(30, 36), vec![r(30, 33), r(35, 36)]);
        assert!(idx.intersected_ranges(21, 24).is_empty());
        assert!(idx.intersected_ranges(42, 50).is_empty());
        assert!(idx.intersected_ranges(0, 14).is_empty());
    }

    #[test]
    fn split_ranges_use_every_file_separately() {
        let idx = RowRangeIndex::new(&parse_row_ranges("0-100").unwrap());
        // Unordered, discontiguous files: [50,59], [0,9], [20,29]. First/last-file logic would
        // give [50,29] or [0,59]; the right answer keeps the holes.
        let files = [r(50, 59), r(0, 9), r(20, 29)];
        assert_eq!(
            idx.split_ranges(&files),
            vec![r(0, 9), r(20, 29), r(50, 59)]
        );
        // Overlapping files and adjacent pieces merge.
        let files = [r(10, 19), r(0, 14), r(20, 24)];
        assert_eq!(idx.split_ranges(&files), vec![r(0, 24)]);
        // Requested ranges clip per file.
        let idx = RowRangeIndex::new(&parse_row_ranges("5-7,25,58-70").unwrap());
        let hits: Vec<i64> = (0..80).filter(|i| idx.contains(*i)).collect();
        let mut want: Vec<i64> = vec![5, 6, 7, 25];
        want.extend(58..=70);
        assert_eq!(hits, want);
        let files = [r(50, 59), r(0, 9), r(20, 29)];
        assert_eq!(
            idx.split_ranges(&files),
            vec![r(5, 7), r(25, 25), r(58, 59)]
        );
        assert!(idx.intersects(r(0, 5)));
        assert!(!idx.intersects(r(8, 24)));
    }

    #[test]
    fn file_selections() {
        let file = RowRange::of_file(20, 10, "f").unwrap();
        assert_eq!(file, r(20, 29));
        assert_eq!(file_selection(file, &[r(0, 100)]), None);
        assert_eq!(file_selection(file, &[r(20, 29)]), None);
        assert_eq!(
            file_selection(file, &[r(15, 21), r(25, 26), r(29, 40)]),
            Some(vec![0, 1, 5, 6, 9])
        );
        assert_eq!(file_selection(file, &[r(0, 5)]), Some(vec![]));
        assert!(RowRange::of_file(0, 0, "empty").is_err());
        assert!(RowRange::of_file(i64::MAX, 2, "big").is_err());
    }
}
