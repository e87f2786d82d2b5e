//! Merging a group of records of one key: the merge engine's result (or, for a compaction
//! with lookups, the lookup's), the changelog it produces, and the output window it goes to.
//!
//! Source: Java `org.apache.paimon.mergetree.compact.SortMergeReaderWithLoserTree` (the
//! group of one key), `MergeFunctionWrapper`, `LookupChangelogMergeFunctionWrapper`.

use super::*;

impl MergeReader {
    fn values_of(&self, rec: &Rec) -> Vec<Value> {
        let batch = &self.window[rec.window];
        batch.columns()[self.value_offset..]
            .iter()
            .map(|c| Value::at(c, rec.row))
            .collect()
    }

    /// Merge the current group and queue its result.
    pub(super) fn finish_group(&mut self) -> Result<()> {
        if self.group.is_empty() {
            return Ok(());
        }
        let mut group = std::mem::take(&mut self.group);
        if group.len() > 1 {
            let order = |a: &Rec, b: &Rec| {
                a.user_seq
                    .cmp(&b.user_seq)
                    .then(a.seq.cmp(&b.seq))
                    .then(a.kind.is_add().cmp(&b.kind.is_add()))
            };
            // The loser tree yields most groups in order already.
            if !group.is_sorted_by(|a, b| order(a, b) != Ordering::Greater) {
                group.sort_by(order);
            }
        }
        if let Some(special) = self.special {
            let out = self.finish_special_group(&group, special);
            group.clear();
            self.group = group;
            out?;
            return self.bound_window();
        }
        if self.lookup_merge && group.len() > 1 {
            lookup_filter(&mut group);
        }
        let result = self.merge_group(&group);
        if let (Some(kv), Ok(merged)) = (&mut self.kv, &result) {
            let last = group.last();
            let meta = match merged {
                Merged::Dropped => None,
                Merged::Row { window, row } => group
                    .iter()
                    .find(|r| r.window == *window && r.row == *row)
                    .map(|r| ((r.window, r.row), r.seq, r.kind)),
                Merged::Cells => last.map(|r| ((r.window, r.row), r.seq, self.cells_kind)),
                Merged::Deferred(_) => last.map(|r| ((r.window, r.row), r.seq, RowKind::Insert)),
            };
            if let Some((src, seq, kind)) = meta {
                kv.src.push(src);
                kv.seq.push(seq);
                kv.kind.push(kind.to_byte());
                if let Some(flags) = &mut kv.changelog {
                    flags.push(false);
                }
            }
        }
        // Keep the group's allocation for the next key.
        group.clear();
        self.group = group;
        match result? {
            Merged::Dropped => {}
            Merged::Row { window, row } => self.push_rows(window, row, 1),
            Merged::Deferred(g) => {
                self.pending_rows += 1;
                for col in &mut self.columns {
                    col.push_deferred(g);
                }
            }
            Merged::Cells => {
                self.pending_rows += 1;
                for (col, cell) in self.columns.iter_mut().zip(self.cells.drain(..)) {
                    col.push_cell(cell);
                }
            }
        }
        self.bound_window()
    }

    /// The merge result of `group` (sorted, oldest first).
    fn merge_group(&mut self, group: &[Rec]) -> Result<Merged> {
        let row = |r: &Rec| Merged::Row {
            window: r.window,
            row: r.row,
        };
        let keep_retract = self.force_keep || self.kv.as_ref().is_some_and(|k| k.keep_retract);
        if let [r] = group {
            return Ok(if r.kind.is_add() || keep_retract {
                row(r)
            } else {
                Merged::Dropped
            });
        }
        Ok(match &mut self.engine {
            Engine::Deduplicate { ignore_delete } => {
                let ignore = *ignore_delete;
                group
                    .iter()
                    .rev()
                    .find(|r| !(ignore && r.kind.is_retract()))
                    .filter(|r| r.kind.is_add() || keep_retract)
                    .map_or(Merged::Dropped, row)
            }
            Engine::FirstRow { ignore_delete } => {
                if !*ignore_delete && group.iter().any(|r| r.kind.is_retract()) {
                    return Err(Error::invalid(
                        "By default, First row merge engine can not accept DELETE/UPDATE_BEFORE records.\nYou can config 'ignore-delete' to ignore the DELETE/UPDATE_BEFORE records.",
                    ));
                }
                group
                    .iter()
                    .find(|r| r.kind.is_add())
                    .map_or(Merged::Dropped, row)
            }
            Engine::PartialUpdate(_) | Engine::Aggregate(_) => {
                self.cells.clear();
                if self.fast && group.iter().all(|r| r.kind.is_add()) {
                    self.group_rows.clear();
                    self.group_rows
                        .extend(group.iter().map(|r| (r.window, r.row)));
                    let view = GroupView {
                        window: &self.window,
                        value_offset: self.value_offset,
                        nulls: &self.window_nulls,
                        width: self.input_schema.fields().len() - self.value_offset,
                        recs: &self.group_rows,
                    };
                    if self.engine.can_defer(&view) {
                        return Ok(Merged::Deferred(self.deferred.push(&self.group_rows)));
                    }
                }
                let inputs: Vec<(RowKind, Vec<Value>)> =
                    group.iter().map(|r| (r.kind, self.values_of(r))).collect();
                let records = inputs.into_iter().map(Ok);
                let (kind, row) = match &mut self.engine {
                    Engine::PartialUpdate(p) => p.merge(records)?,
                    Engine::Aggregate(a) => a.merge(records)?,
                    _ => return Ok(Merged::Dropped),
                };
                if !kind.is_add() && !keep_retract {
                    return Ok(Merged::Dropped);
                }
                self.cells_kind = kind;
                self.cells.extend(
                    self.output_columns
                        .iter()
                        .map(|c| OutCell::Val(row[*c].clone())),
                );
                Merged::Cells
            }
        })
    }

    /// Merge `recs` (sorted, oldest first) as a compaction with changelog does: the result
    /// and its row kind, retractions included; `None` when the engine yields nothing.
    fn merge_result(&mut self, recs: &[Rec]) -> Result<Option<(Merged, RowKind, usize)>> {
        if recs.is_empty() {
            return Ok(None);
        }
        self.force_keep = true;
        let merged = self.merge_group(recs);
        self.force_keep = false;
        let last = recs.len() - 1;
        Ok(match merged? {
            Merged::Dropped | Merged::Deferred(_) => None,
            Merged::Row { window, row } => recs
                .iter()
                .position(|r| r.window == window && r.row == row)
                .map(|i| (Merged::Row { window, row }, recs[i].kind, i)),
            Merged::Cells => Some((Merged::Cells, self.cells_kind, last)),
        })
    }

    /// Queue one key-value row: the values of `merged` (a row, or the scratch cells, kept
    /// for a next push when `keep_cells`), the key of `src`, `seq` and `kind`.
    fn push_record(
        &mut self,
        merged: &Merged,
        src: (usize, usize),
        seq: i64,
        kind: RowKind,
        changelog: bool,
        keep_cells: bool,
    ) {
        match merged {
            Merged::Row { window, row } => self.push_rows(*window, *row, 1),
            Merged::Cells => {
                self.pending_rows += 1;
                let cells: Vec<OutCell> = if keep_cells {
                    self.cells.clone()
                } else {
                    std::mem::take(&mut self.cells)
                };
                for (col, cell) in self.columns.iter_mut().zip(cells) {
                    col.push_cell(cell);
                }
            }
            Merged::Dropped | Merged::Deferred(_) => return,
        }
        if let Some(kv) = &mut self.kv {
            kv.src.push(src);
            kv.seq.push(seq);
            kv.kind.push(kind.to_byte());
            if let Some(flags) = &mut kv.changelog {
                flags.push(changelog);
            }
        }
    }

    /// Queue an input record with another row kind (a changelog before image).
    fn push_input(&mut self, r: &Rec, kind: RowKind) {
        let merged = Merged::Row {
            window: r.window,
            row: r.row,
        };
        self.push_record(&merged, (r.window, r.row), r.seq, kind, true, false);
    }

    /// [`MergeReader::finish_group`] of a compaction with lookup runs or changelog (see
    /// [`MergeReader::with_compaction_lookup`]).
    fn finish_special_group(&mut self, group: &[Rec], special: CompactionLookup) -> Result<()> {
        let unit: Vec<Rec> = group.iter().filter(|r| !r.lookup).cloned().collect();
        if unit.is_empty() {
            return Ok(());
        }
        let keep_retract = self.kv.as_ref().is_some_and(|k| k.keep_retract);
        let lowest_positive = |recs: &mut dyn Iterator<Item = &Rec>| -> Option<Rec> {
            let mut best: Option<&Rec> = None;
            for r in recs {
                if r.level > 0 && best.is_none_or(|b| r.level < b.level) {
                    best = Some(r);
                }
            }
            best.cloned()
        };
        let unit_high = lowest_positive(&mut unit.iter());
        let full = match special.changelog {
            Some(ChangelogMode::FullCompaction { max_level }) => Some(max_level),
            _ => None,
        };
        if special.first_row && full.is_none() {
            // Java's FirstRowMergeFunctionWrapper.
            if unit_high.is_none() && group.iter().any(|r| r.lookup) {
                return Ok(());
            }
            let Some((merged, kind, i)) = self.merge_result(&unit)? else {
                return Ok(());
            };
            let src = (unit[i].window, unit[i].row);
            let changelog = special.changelog == Some(ChangelogMode::Lookup)
                && unit_high.is_none()
                && kind.is_add();
            if kind.is_add() || keep_retract {
                self.push_record(&merged, src, unit[i].seq, kind, false, changelog);
            }
            if changelog {
                self.push_record(&merged, src, unit[i].seq, kind, true, false);
            }
            return Ok(());
        }
        // The before image and the records merged.
        let (before, candidates): (Option<Rec>, Vec<Rec>) = match full {
            Some(max_level) => {
                let top = unit.iter().find(|r| r.level == max_level).cloned();
                let mut recs = unit.clone();
                if self.lookup_merge {
                    lookup_filter(&mut recs);
                }
                (top, recs)
            }
            None => {
                // Java's LookupChangelogMergeFunctionWrapper over LookupMergeFunction.
                if unit_high.is_none() && self.marks.is_some() {
                    let hit = lowest_positive(&mut group.iter().filter(|r| r.lookup));
                    match hit.as_ref().map(|h| h.origin.as_ref()) {
                        None => {}
                        Some(None) => self.unmarkable = true,
                        Some(Some((file, position))) => {
                            if let (Some(marks), Ok(p)) =
                                (self.marks.as_mut(), u64::try_from(*position))
                            {
                                marks.entry(Arc::clone(file)).or_default().push(p);
                            }
                        }
                    }
                }
                let high = unit_high.clone().or_else(|| {
                    if self.lookup_merge {
                        lowest_positive(&mut group.iter().filter(|r| r.lookup))
                    } else {
                        None
                    }
                });
                let recs: Vec<Rec> = if self.lookup_merge {
                    // The group is in merge order, so the lookup hit takes its place in it.
                    group
                        .iter()
                        .filter(|r| {
                            (!r.lookup && r.level <= 0)
                                || high
                                    .as_ref()
                                    .is_some_and(|h| h.window == r.window && h.row == r.row)
                        })
                        .cloned()
                        .collect()
                } else {
                    unit.clone()
                };
                (high, recs)
            }
        };
        let result = self.merge_result(&candidates)?;
        let changelog = match (special.changelog, full) {
            (None, _) => false,
            (Some(_), Some(_)) => true,
            (Some(_), None) => unit.iter().any(|r| r.level <= 0),
        };
        // The result record (dropped retractions aside).
        let result_kind = result.as_ref().map(|(_, k, _)| *k);
        let result_add = result_kind.is_some_and(RowKind::is_add);
        if let Some((merged, kind, i)) = &result
            && (kind.is_add() || (keep_retract && full.is_none()))
        {
            let r = &candidates[*i];
            self.push_record(merged, (r.window, r.row), r.seq, *kind, false, changelog);
        }
        if !changelog {
            return Ok(());
        }
        // Full compaction: a key of one record is unchanged when it is the top record.
        if full.is_some() && unit.len() == 1 {
            if before.is_none()
                && let Some((merged, _, i)) = &result
                && result_add
            {
                let r = &candidates[*i];
                self.push_record(
                    merged,
                    (r.window, r.row),
                    r.seq,
                    RowKind::Insert,
                    true,
                    false,
                );
            }
            return Ok(());
        }
        let Some((merged, _, i)) = &result else {
            return Ok(());
        };
        let r = &candidates[*i];
        match &before {
            Some(b) if b.kind.is_add() => {
                if result_add {
                    self.push_input(b, RowKind::UpdateBefore);
                    let src = (r.window, r.row);
                    self.push_record(merged, src, r.seq, RowKind::UpdateAfter, true, false);
                } else {
                    self.push_input(b, RowKind::Delete);
                }
            }
            _ if result_add => {
                self.push_record(
                    merged,
                    (r.window, r.row),
                    r.seq,
                    RowKind::Insert,
                    true,
                    false,
                );
            }
            _ => {}
        }
        self.cells.clear();
        Ok(())
    }
}

/// Java's `LookupMergeFunction`: of a key's records from positive levels keep the first one
/// of the lowest level (it holds the merged history of the levels below), and every record
/// of level 0 or below. `group` is in merge order.
fn lookup_filter(group: &mut Vec<Rec>) {
    let mut high: Option<usize> = None;
    for (i, r) in group.iter().enumerate() {
        if r.level > 0 && high.is_none_or(|h| r.level < group[h].level) {
            high = Some(i);
        }
    }
    let Some(h) = high else {
        return;
    };
    let mut i = 0;
    group.retain(|r| {
        let keep = r.level <= 0 || i == h;
        i += 1;
        keep
    });
}
