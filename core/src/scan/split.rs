//! Split generation: how the live data files of one bucket are cut into splits.
//!
//! Source: Java `org.apache.paimon.table.source.{AppendOnlySplitGenerator,
//! MergeTreeSplitGenerator, DataEvolutionSplitGenerator}`,
//! `org.apache.paimon.mergetree.compact.IntervalPartition`,
//! `org.apache.paimon.utils.BinPacking#packForOrdered`.

use std::cmp::Ordering;

use crate::spec::DataFileMeta;

/// A group of files that becomes one split.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitGroup {
    /// The files, in the order the split lists them.
    pub files: Vec<DataFileMeta>,
    /// Whether the files can be read without merging (Java `SplitGroup.rawConvertible`).
    pub raw_convertible: bool,
}

/// Ordered bin packing: items are added in order; a bin is closed before an item that would
/// push it over `target_weight` (a single heavier item still gets a bin of its own).
///
/// Source: Java `BinPacking.packForOrdered`.
pub fn pack_for_ordered<T>(
    items: impl IntoIterator<Item = T>,
    weight: impl Fn(&T) -> i64,
    target_weight: i64,
) -> Vec<Vec<T>> {
    // The bins' lengths first, then the items cut into them from the back: a single bin is
    // the items' own `Vec`, and more bins hold the items once (no second copy of a large
    // plan's file metadata while it moves).
    let mut items: Vec<T> = items.into_iter().collect();
    let mut lengths: Vec<usize> = Vec::new();
    let mut len = 0usize;
    let mut bin_weight: i64 = 0;
    for item in &items {
        let w = weight(item);
        if bin_weight.saturating_add(w) > target_weight && len > 0 {
            lengths.push(len);
            len = 0;
            bin_weight = 0;
        }
        bin_weight = bin_weight.saturating_add(w);
        len += 1;
    }
    if len > 0 {
        lengths.push(len);
    }
    let mut packed: Vec<Vec<T>> = Vec::with_capacity(lengths.len());
    let mut end = items.len();
    for &n in lengths.iter().skip(1).rev() {
        end -= n;
        packed.push(items.split_off(end));
        // Give back each emptied 32nd of a large `Vec` (a shrinking reallocation, in place
        // where the allocator can trim).
        if items.len() < items.capacity() / 32 * 31 {
            items.shrink_to_fit();
        }
    }
    if !items.is_empty() {
        items.shrink_to_fit();
        packed.push(items);
    }
    packed.reverse();
    packed
}

/// Stable sort of `files` by `key` without a scratch copy of the files: nothing when they are
/// already in order (the usual case: manifests list files in commit order), otherwise the
/// (key, position) pairs are sorted and the files permuted in place. A plan of many files
/// would otherwise hold up to half of them twice (the stable sort's buffer).
pub(crate) fn sort_files_by_key<T, K: Ord + Copy>(files: &mut [T], key: impl Fn(&T) -> K) {
    if files.is_sorted_by_key(&key) {
        return;
    }
    let mut order: Vec<(K, usize)> = files.iter().enumerate().map(|(i, f)| (key(f), i)).collect();
    // Positions break ties: stable.
    order.sort_unstable();
    // Position i receives the file at order[i].1; apply by cycles.
    let mut source: Vec<usize> = order.into_iter().map(|(_, i)| i).collect();
    for start in 0..source.len() {
        let mut i = start;
        while source[i] != start {
            let from = source[i];
            files.swap(i, from);
            source[i] = i;
            i = from;
        }
        source[i] = i;
    }
}

/// Splits of an append table bucket: files ordered by min sequence number, packed by
/// `max(file_size, open_file_cost)` into bins of `target_size` bytes. Always raw convertible.
///
/// Source: Java `AppendOnlySplitGenerator.splitForBatch`.
pub fn append_splits(
    mut files: Vec<DataFileMeta>,
    target_size: i64,
    open_file_cost: i64,
) -> Vec<SplitGroup> {
    // Stable sort, like Java's List.sort.
    sort_files_by_key(&mut files, |f| f.min_sequence_number);
    pack_for_ordered(files, |f| f.file_size.max(open_file_cost), target_size)
        .into_iter()
        .map(|files| SplitGroup {
            files,
            raw_convertible: true,
        })
        .collect()
}

/// A file with its decoded key range, for interval partitioning.
#[derive(Debug, Clone)]
pub struct KeyedFile<K, F = DataFileMeta> {
    /// The file (or anything carried along with its key range).
    pub file: F,
    /// Decoded min key.
    pub min_key: K,
    /// Decoded max key.
    pub max_key: K,
}

/// Sections of files whose key ranges overlap (transitively); each section is a list of
/// sorted runs (files within a run do not overlap and are in key order).
///
/// Source: Java `IntervalPartition.partition`.
pub fn interval_partition<K: Ord + Clone, F>(
    mut files: Vec<KeyedFile<K, F>>,
) -> Vec<Vec<Vec<KeyedFile<K, F>>>> {
    files.sort_by(|a, b| {
        a.min_key
            .cmp(&b.min_key)
            .then_with(|| a.max_key.cmp(&b.max_key))
    });
    let mut result = Vec::new();
    let mut section: Vec<KeyedFile<K, F>> = Vec::new();
    let mut bound: Option<K> = None;
    for f in files {
        if let Some(b) = &bound
            && !section.is_empty()
            && f.min_key > *b
        {
            result.push(partition_section(std::mem::take(&mut section)));
            bound = None;
        }
        if bound.as_ref().is_none_or(|b| f.max_key > *b) {
            bound = Some(f.max_key.clone());
        }
        section.push(f);
    }
    if !section.is_empty() {
        result.push(partition_section(section));
    }
    result
}

/// Greedy run building of one section: each file joins the run whose last max key is the
/// smallest, if the file starts after it; else it opens a new run.
fn partition_section<K: Ord + Clone, F>(files: Vec<KeyedFile<K, F>>) -> Vec<Vec<KeyedFile<K, F>>> {
    let mut runs: Vec<Vec<KeyedFile<K, F>>> = Vec::new();
    for f in files {
        // The run with the smallest last max key (ties: the earliest created, for determinism).
        let best = runs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.last().map(|l| (i, &l.max_key)))
            .min_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(&b.0)))
            .map(|(i, k)| (i, f.min_key.cmp(k) == Ordering::Greater));
        match best {
            Some((i, true)) => runs[i].push(f),
            _ => runs.push(vec![f]),
        }
    }
    runs
}

/// Splits of a primary-key table bucket.
///
/// If every file is above level 0 without delete rows and either deletion vectors are on,
/// the merge engine is first-row, or all files share one level, files are bin-packed like an
/// append table (raw convertible). Otherwise files are cut into key-overlap sections which are
/// bin-packed; a split of a single file without delete rows is raw convertible.
///
/// Source: Java `MergeTreeSplitGenerator.splitForBatch`.
pub fn merge_tree_splits<K: Ord + Clone>(
    files: Vec<KeyedFile<K>>,
    target_size: i64,
    open_file_cost: i64,
    deletion_vectors: bool,
    first_row: bool,
) -> Vec<SplitGroup> {
    let without_delete_rows = |f: &DataFileMeta| f.delete_row_count.is_none_or(|c| c == 0);
    let raw = files
        .iter()
        .all(|f| f.file.level != 0 && without_delete_rows(&f.file));
    let one_level = files
        .iter()
        .map(|f| f.file.level)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        == 1;
    if raw && (deletion_vectors || first_row || one_level) {
        return pack_for_ordered(
            files.into_iter().map(|f| f.file),
            |f| f.file_size.max(open_file_cost),
            target_size,
        )
        .into_iter()
        .map(|files| SplitGroup {
            files,
            raw_convertible: true,
        })
        .collect();
    }
    let sections: Vec<Vec<DataFileMeta>> = interval_partition(files)
        .into_iter()
        .map(|runs| runs.into_iter().flatten().map(|f| f.file).collect())
        .collect();
    pack_for_ordered(
        sections,
        |s: &Vec<DataFileMeta>| {
            s.iter()
                .map(|f| f.file_size)
                .sum::<i64>()
                .max(open_file_cost)
        },
        target_size,
    )
    .into_iter()
    .map(|bins| {
        let files: Vec<DataFileMeta> = bins.into_iter().flatten().collect();
        let raw_convertible = files.len() == 1 && without_delete_rows(&files[0]);
        SplitGroup {
            files,
            raw_convertible,
        }
    })
    .collect()
}

/// Groups of files with overlapping row-id ranges: sorted by `(first row id, last row id)`,
/// a new group starts when a file begins after the current group's end (adjacent ranges are
/// different groups); files without a row id range each form a group of their own at the end.
///
/// Source: Java `RangeHelper.mergeOverlappingRanges` as used by `DataEvolutionSplitGenerator`.
pub fn merge_overlapping_row_ranges(files: Vec<DataFileMeta>) -> Vec<Vec<DataFileMeta>> {
    let mut with_range: Vec<(i64, i64, usize, DataFileMeta)> = Vec::new();
    let mut without: Vec<DataFileMeta> = Vec::new();
    for (i, f) in files.into_iter().enumerate() {
        match f.row_id_range() {
            Some(r) => with_range.push((*r.start(), *r.end(), i, f)),
            None => without.push(f),
        }
    }
    with_range.sort_by_key(|a| (a.0, a.1, a.2));
    let mut groups: Vec<Vec<(usize, DataFileMeta)>> = Vec::new();
    let mut end = i64::MIN;
    for (from, to, i, f) in with_range {
        match groups.last_mut() {
            Some(g) if from <= end => {
                g.push((i, f));
                end = end.max(to);
            }
            _ => {
                groups.push(vec![(i, f)]);
                end = to;
            }
        }
    }
    let mut out: Vec<Vec<DataFileMeta>> = groups
        .into_iter()
        .map(|mut g| {
            // Original order within a group.
            g.sort_by_key(|(i, _)| *i);
            g.into_iter().map(|(_, f)| f).collect()
        })
        .collect();
    out.extend(without.into_iter().map(|f| vec![f]));
    out
}

/// Splits of a data-evolution (row tracking) bucket: overlapping row-id groups, weighted by
/// data file size (blob files count `open_file_cost`, or their size when
/// `count_blob_size`), bin-packed in order. A split is raw convertible iff every group in it
/// has exactly one file.
///
/// Source: Java `DataEvolutionSplitGenerator.splitForBatch`.
pub fn data_evolution_splits(
    files: Vec<DataFileMeta>,
    target_size: i64,
    open_file_cost: i64,
    count_blob_size: bool,
) -> Vec<SplitGroup> {
    let groups = merge_overlapping_row_ranges(files);
    let weight = |g: &Vec<DataFileMeta>| {
        g.iter()
            .map(|f| {
                if f.is_blob_file() && !count_blob_size {
                    open_file_cost
                } else {
                    f.file_size
                }
            })
            .sum::<i64>()
            .max(open_file_cost)
    };
    pack_for_ordered(groups, weight, target_size)
        .into_iter()
        .map(|bin| {
            let raw_convertible = bin.iter().all(|g| g.len() == 1);
            SplitGroup {
                files: bin.into_iter().flatten().collect(),
                raw_convertible,
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn sorting_files_in_place_is_stable() {
        // (key, original position): a stable sort keeps equal keys in their first order.
        let keys = [5, 3, 5, 1, 3, 9, 0, 5, 1, 2, 2, 7];
        let mut items: Vec<(i32, usize)> = keys.iter().copied().zip(0..).collect();
        let mut want = items.clone();
        want.sort_by_key(|x| x.0);
        sort_files_by_key(&mut items, |x| x.0);
        assert_eq!(items, want);
        // Already sorted: unchanged; a reversed run: every cycle applied.
        let mut sorted: Vec<(i32, usize)> = (0..6).map(|i| (i, i as usize)).collect();
        sort_files_by_key(&mut sorted, |x| x.0);
        assert_eq!(sorted, (0..6).map(|i| (i, i as usize)).collect::<Vec<_>>());
        let mut reversed: Vec<(i32, usize)> = (0..7).rev().map(|i| (i, 6 - i as usize)).collect();
        sort_files_by_key(&mut reversed, |x| x.0);
        assert_eq!(
            reversed.iter().map(|x| x.0).collect::<Vec<_>>(),
            (0..7).collect::<Vec<_>>()
        );
    }

    #[test]
    fn ordered_packing_matches_java() {
        // BinPackingTest#testExactlyPack-like: weights in order, target 3.
        let bins = pack_for_ordered(vec![1, 2, 3, 1, 1, 1, 5], |w| *w, 3);
        assert_eq!(bins, vec![vec![1, 2], vec![3], vec![1, 1, 1], vec![5]]);
        assert!(pack_for_ordered(Vec::<i64>::new(), |w| *w, 3).is_empty());
    }

    fn keyed(name: &str, min: i32, max: i32) -> KeyedFile<i32> {
        let file = DataFileMeta {
            file_name: name.to_string(),
            ..DataFileMeta::test_default()
        };
        KeyedFile {
            file,
            min_key: min,
            max_key: max,
        }
    }

    #[test]
    fn interval_partition_example_from_java_docs() {
        // [1, 2] [3, 4] [5, 180] [5, 190] [200, 600] [210, 700]
        let files = vec![
            keyed("f", 210, 700),
            keyed("a", 1, 2),
            keyed("d", 5, 190),
            keyed("b", 3, 4),
            keyed("c", 5, 180),
            keyed("e", 200, 600),
        ];
        let sections = interval_partition(files);
        let names: Vec<Vec<Vec<&str>>> = sections
            .iter()
            .map(|s| {
                s.iter()
                    .map(|r| r.iter().map(|f| f.file.file_name.as_str()).collect())
                    .collect()
            })
            .collect();
        assert_eq!(
            names,
            vec![
                vec![vec!["a"]],
                vec![vec!["b"]],
                vec![vec!["c"], vec!["d"]],
                vec![vec!["e"], vec!["f"]],
            ]
        );
    }

    #[test]
    fn interval_partition_chains_non_overlapping_files_into_one_run() {
        // [1,5] [2,3] [4,6] [7,9]: 4 overlaps [1,5] but starts after [2,3] -> joins its run.
        let sections = interval_partition(vec![
            keyed("a", 1, 5),
            keyed("b", 2, 3),
            keyed("c", 4, 6),
            keyed("d", 7, 9),
        ]);
        assert_eq!(sections.len(), 2);
        let runs: Vec<Vec<&str>> = sections[0]
            .iter()
            .map(|r| r.iter().map(|f| f.file.file_name.as_str()).collect())
            .collect();
        assert_eq!(runs, vec![vec!["a"], vec!["b", "c"]]);
    }

    fn de_file(name: &str, first: i64, rows: i64, size: i64) -> DataFileMeta {
        DataFileMeta {
            file_name: name.to_string(),
            first_row_id: Some(first),
            row_count: rows,
            file_size: size,
            ..DataFileMeta::test_default()
        }
    }

    #[test]
    fn row_range_groups_keep_adjacent_ranges_apart() {
        let groups = merge_overlapping_row_ranges(vec![
            de_file("b", 10, 10, 1),
            de_file("a", 0, 10, 1),
            de_file("a2.blob", 0, 10, 1),
            de_file("c", 5, 2, 1),
        ]);
        let names: Vec<Vec<&str>> = groups
            .iter()
            .map(|g| g.iter().map(|f| f.file_name.as_str()).collect())
            .collect();
        assert_eq!(names, vec![vec!["a", "a2.blob", "c"], vec!["b"]]);
        let splits = data_evolution_splits(
            vec![de_file("a", 0, 10, 1), de_file("b", 10, 10, 1)],
            100,
            1,
            false,
        );
        assert_eq!(splits.len(), 1);
        assert!(splits[0].raw_convertible);
    }
}
