//! The one-shot jobs over an in-memory store: snapshots and levels after writes and a full
//! compaction, and nothing left behind by a failed job.

use super::*;
use crate::io::{IoAnswer, IoErrorKind, IoOp, Machine, MemoryStore, Step, Work};
use crate::scan::planner::ScanRequest;
use crate::scan::snapshot_resolver::list_snapshots;
use crate::testkit::{csv_input, job_settings, memory_table, read_latest, write_job};

const SCHEMA: &str = r#"{"fields": [{"name": "k", "type": "INT"}, {"name": "v", "type": "STRING"}],
    "primaryKeys": ["k"], "options": {"bucket": "1", "deletion-vectors.enabled": "true"}}"#;

fn kinds(store: &mut MemoryStore) -> Vec<String> {
    let m = Machine::once("snapshots", |io| async move { list_snapshots(&io).await });
    let snapshots = store.run(m).unwrap().remove(0);
    snapshots
        .iter()
        .map(|s| format!("{:?}", s.commit_kind))
        .collect()
}

#[test]
fn lookup_writes_compact_level0_and_a_full_compaction_leaves_one_run() {
    let mut store = memory_table(SCHEMA);
    let first = write_job(&mut store, csv_input("k,v\n1,a\n2,b\n3,c\n"), 1).unwrap();
    assert_eq!(first.rows, 3);
    assert_eq!(first.commit.snapshot_ids, vec![1, 2]);
    let second = write_job(&mut store, csv_input("k,v,_ROW_KIND\n2,b2,+I\n3,,-D\n"), 2).unwrap();
    assert_eq!(second.commit.snapshot_ids, vec![3, 4]);
    assert_eq!(
        kinds(&mut store),
        ["Append", "Compact", "Append", "Compact"]
    );
    let m = Machine::once("compact", |io| async move {
        compact_job(&io, true, &job_settings(3)).await
    });
    let c = store.run(m).unwrap().remove(0);
    assert_eq!(c.base_snapshot, Some(4));
    assert_eq!(c.tasks, 1);
    assert_eq!(c.commit.snapshot_ids, vec![5]);
    let m = Machine::once("files", |io| async move {
        let schema = latest_schema(&io).await?;
        read_latest_live_files(&io, &schema).await
    });
    let files = store.run(m).unwrap().remove(0).unwrap();
    // One file at the max level holding the two live rows (1 and 2).
    assert_eq!(files.entries.len(), 1);
    assert_eq!(files.entries[0].file.level, 5);
    assert_eq!(files.entries[0].file.row_count, 2);
}

#[test]
fn a_bad_row_writes_nothing() {
    let mut store = memory_table(SCHEMA);
    write_job(&mut store, csv_input("k,v\n1,a\n"), 1).unwrap();
    let before: Vec<String> = store.objects.keys().cloned().collect();
    let e = write_job(&mut store, csv_input("k,v\n2,b\nx,c\n"), 2).unwrap_err();
    assert!(e.to_string().contains("rows.csv, line 3"), "{e}");
    let after: Vec<String> = store.objects.keys().cloned().collect();
    assert_eq!(after, before);
}

/// Run `machine` over `store`, every `Put` of a path starting with `fail` refused.
fn run_failing_puts<T: Send + 'static>(
    store: &mut MemoryStore,
    fail: &str,
    mut machine: Machine<T>,
) -> crate::Result<Vec<T>> {
    let mut out = Vec::new();
    loop {
        match machine.step()? {
            Step::NeedIo(round) => {
                for req in round {
                    let answer = match &req.op {
                        IoOp::Put { path, .. } if path.starts_with(fail) => IoAnswer::Error {
                            kind: IoErrorKind::Other,
                            detail: "injected".into(),
                        },
                        op => store.answer(op),
                    };
                    machine.provide(req.id, answer)?;
                }
            }
            Step::Emit(item) => out.push(item),
            Step::Work(items) => items.into_iter().for_each(Work::run),
            Step::Wait => {}
            Step::Done => return Ok(out),
        }
    }
}

#[test]
fn a_failed_commit_leaves_no_snapshot_and_no_file() {
    let mut store = memory_table(SCHEMA);
    write_job(&mut store, csv_input("k,v\n1,a\n"), 1).unwrap();
    let before: Vec<String> = store.objects.keys().cloned().collect();
    let input = csv_input("k,v\n1,b\n4,d\n");
    let m = Machine::once("write", move |io| async move {
        write_input_job(&io, &input, &WriteMode::Append, &job_settings(2)).await
    });
    // The commit cannot write its manifest lists: the data files, the level-0 compaction's
    // outputs and index file and the commit's manifests must all be gone.
    let e = run_failing_puts(&mut store, "manifest/manifest-list-", m).unwrap_err();
    assert!(e.to_string().contains("injected"), "{e}");
    let after: Vec<String> = store.objects.keys().cloned().collect();
    assert_eq!(after, before);
}

#[test]
fn small_files_of_an_append_table_are_compacted() {
    let mut store = memory_table(
        r#"{"fields": [{"name": "a", "type": "INT"}, {"name": "s", "type": "STRING"}],
            "options": {"bucket": "-1"}}"#,
    );
    for n in 0..6 {
        let out = write_job(&mut store, csv_input(&format!("a,s\n{n},x{n}\n")), n + 1).unwrap();
        assert_eq!(out.commit.snapshot_ids, vec![n as i64 + 1]);
    }
    let m = Machine::once("compact", |io| async move {
        compact_job(&io, false, &job_settings(10)).await
    });
    let c = store.run(m).unwrap().remove(0);
    assert_eq!(
        (c.base_snapshot, c.tasks, c.files_in, c.files_out),
        (Some(6), 1, 6, 1)
    );
    assert_eq!(c.commit.snapshot_ids, vec![7]);
    assert_eq!(
        kinds(&mut store).last().map(String::as_str),
        Some("Compact")
    );
    let m = Machine::once("files", |io| async move {
        let schema = latest_schema(&io).await?;
        read_latest_live_files(&io, &schema).await
    });
    let files = store.run(m).unwrap().remove(0).unwrap();
    assert_eq!(files.entries.len(), 1);
    assert_eq!(files.entries[0].file.row_count, 6);
}

#[test]
fn postpone_tables_are_not_compacted_by_the_job() {
    let mut store = memory_table(
        r#"{"fields": [{"name": "k", "type": "INT"}], "primaryKeys": ["k"],
            "options": {"bucket": "-2"}}"#,
    );
    let m = Machine::once("compact", |io| async move {
        compact_job(&io, true, &job_settings(1)).await
    });
    let e = store.run(m).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
}

/// A second batch commit of the same user is not applied (Java's rule) and leaves no file.
#[test]
fn a_batch_commit_already_applied_leaves_nothing() {
    let mut store = memory_table(SCHEMA);
    write_job(&mut store, csv_input("k,v\n1,a\n"), 1).unwrap();
    let before: Vec<String> = store.objects.keys().cloned().collect();
    let input = csv_input("k,v\n2,b\n");
    let mut again = job_settings(2);
    again.commit_user = job_settings(1).commit_user;
    let m = Machine::once("write", move |io| async move {
        write_input_job(&io, &input, &WriteMode::Append, &again).await
    });
    let out = store.run(m).unwrap().remove(0);
    assert!(out.commit.already_committed, "{out:?}");
    assert!(out.commit.snapshot_ids.is_empty());
    let after: Vec<String> = store.objects.keys().cloned().collect();
    assert_eq!(after, before);
}

/// Every row of the latest snapshot as `a|s|_ROW_ID|_SEQUENCE_NUMBER`, sorted.
fn tracked_rows(store: &mut MemoryStore) -> Vec<String> {
    tracked_rows_in(store, None)
}

/// [`tracked_rows`] of the rows whose `_ROW_ID` lies in `ranges` (`None`: every row).
fn tracked_rows_in(
    store: &mut MemoryStore,
    ranges: Option<Vec<crate::spec::row_range::RowRange>>,
) -> Vec<String> {
    use arrow_array::{Array, Int32Array, Int64Array, StringArray};
    let mut request = ScanRequest::default();
    if let Some(r) = ranges {
        request = request.with_row_ranges(r);
    }
    let names: Vec<String> = ["a", "s", "_ROW_ID", "_SEQUENCE_NUMBER"]
        .map(String::from)
        .to_vec();
    let batches = read_latest(store, Some(names), request);
    let mut rows = Vec::new();
    for b in batches {
        let a = b.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
        let s = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        let id = b.column(2).as_any().downcast_ref::<Int64Array>().unwrap();
        let seq = b.column(3).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(id.null_count() + seq.null_count(), 0);
        for i in 0..b.num_rows() {
            rows.push(format!(
                "{}|{}|{}|{}",
                a.value(i),
                s.value(i),
                id.value(i),
                seq.value(i)
            ));
        }
    }
    rows.sort();
    rows
}

/// Row-tracking append tables: the compaction writes `_ROW_ID` and `_SEQUENCE_NUMBER` into
/// its output (Java's layout: the table's columns then both system columns, `write_cols`
/// naming them, no `first_row_id`, the rows' sequence range), so every row reads the same
/// before and after; the commit assigns no ids and later writes continue from `nextRowId`.
#[test]
fn row_tracking_compaction_keeps_row_ids_and_sequence_numbers() {
    let mut store = memory_table(
        r#"{"fields": [{"name": "a", "type": "INT"}, {"name": "s", "type": "STRING"}],
            "options": {"bucket": "-1", "row-tracking.enabled": "true"}}"#,
    );
    for n in 0..5u64 {
        let rows: String = (0..=n).map(|i| format!("{n}{i},x{n}\n")).collect();
        write_job(&mut store, csv_input(&format!("a,s\n{rows}")), n + 1).unwrap();
    }
    let before = tracked_rows(&mut store);
    assert_eq!(before.len(), 15);
    assert!(before.contains(&"0|x0|0|1".to_string()), "{before:?}");
    assert!(before.contains(&"44|x4|14|5".to_string()), "{before:?}");
    let m = Machine::once("compact", |io| async move {
        compact_job(&io, false, &job_settings(10)).await
    });
    let c = store.run(m).unwrap().remove(0);
    assert_eq!((c.files_in, c.files_out), (5, 1));
    assert_eq!(c.commit.snapshot_ids, vec![6]);
    let m = Machine::once("files", |io| async move {
        let schema = latest_schema(&io).await?;
        let files = read_latest_live_files(&io, &schema).await?;
        let id = latest_snapshot_id(&io).await?.unwrap_or_default();
        Ok::<_, Error>((files, read_snapshot(&io, id).await?))
    });
    let (files, snapshot) = store.run(m).unwrap().remove(0);
    let files = files.unwrap();
    assert_eq!(snapshot.next_row_id, Some(15));
    let f = &files.entries[0].file;
    assert_eq!(files.entries.len(), 1);
    assert_eq!(
        (f.row_count, f.first_row_id, f.file_source),
        (15, None, Some(crate::spec::FileSource::Compact))
    );
    assert_eq!((f.min_sequence_number, f.max_sequence_number), (1, 5));
    assert_eq!(
        f.write_cols.as_deref(),
        Some(&["a", "s", "_ROW_ID", "_SEQUENCE_NUMBER"].map(String::from)[..])
    );
    // Value stats cover the system columns too (dense: every column, no stats cols).
    assert_eq!(
        (
            f.value_stats_cols.as_ref(),
            f.value_stats.min_values.arity()
        ),
        (None, 4)
    );
    assert_eq!(tracked_rows(&mut store), before);
    // Row ranges select by the stored row ids.
    let ranges = crate::spec::row_range::parse_row_ranges("3-4,14").unwrap();
    assert_eq!(
        tracked_rows_in(&mut store, Some(ranges)),
        ["20|x2|3|3", "21|x2|4|3", "44|x4|14|5"].map(String::from)
    );

    // A later write continues at the next row id; a second compaction keeps the stored ids.
    write_job(&mut store, csv_input("a,s\n90,y\n91,y\n"), 20).unwrap();
    let mut expected = before.clone();
    expected.extend(["90|y|15|7", "91|y|16|7"].map(String::from));
    expected.sort();
    assert_eq!(tracked_rows(&mut store), expected);
    let m = Machine::once("compact", |io| async move {
        compact_job(&io, false, &job_settings(21)).await
    });
    // Two files (below `compaction.min.file-num` = 5): nothing to compact.
    let c = store.run(m).unwrap().remove(0);
    assert_eq!(c.tasks, 0);
    for n in 0..3u64 {
        write_job(
            &mut store,
            csv_input(&format!("a,s\n{},z\n", 100 + n)),
            30 + n,
        )
        .unwrap();
        expected.push(format!("{}|z|{}|{}", 100 + n, 17 + n, 8 + n));
    }
    expected.sort();
    let m = Machine::once("compact", |io| async move {
        compact_job(&io, false, &job_settings(40)).await
    });
    let c = store.run(m).unwrap().remove(0);
    assert_eq!((c.files_in, c.files_out), (5, 1));
    assert_eq!(tracked_rows(&mut store), expected);
}
