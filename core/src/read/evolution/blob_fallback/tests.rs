use std::path::PathBuf;

use arrow_array::cast::AsArray;
use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::*;
use crate::format::blob::{BlobFileWriter, decode_blob_file_index, decode_blob_rows};
use crate::format::blob_descriptor::BlobDescriptor;
use crate::io::{IoOp, Machine, MemoryStore, Step};
use crate::spec::row_range::parse_row_ranges;
use crate::util::hex;

#[derive(Debug, Clone, PartialEq)]
enum Cell {
    V(String),
    N,
    P,
}
use Cell::{N, P};

fn v(s: &str) -> Cell {
    Cell::V(s.to_string())
}

/// Values `prefix0, prefix1, ...` for `n` rows.
fn vals(prefix: &str, first: i64, n: i64) -> Vec<Cell> {
    (first..first + n)
        .map(|i| v(&format!("{prefix}{i}")))
        .collect()
}

#[derive(Debug, Clone)]
struct TestFile {
    first_row_id: i64,
    seq: i64,
    cells: Vec<Cell>,
}

fn tf(first_row_id: i64, seq: i64, cells: Vec<Cell>) -> TestFile {
    TestFile {
        first_row_id,
        seq,
        cells,
    }
}

fn build(files: &[TestFile]) -> (MemoryStore, Vec<BlobFileRef>) {
    let mut store = MemoryStore::new();
    let mut refs = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let mut w = BlobFileWriter::new();
        for c in &f.cells {
            match c {
                Cell::V(s) => {
                    w.push_payload(s.as_bytes());
                }
                N => w.push_null(),
                P => w.push_placeholder(),
            }
        }
        let bytes = w.finish().unwrap();
        let path = format!("bucket-0/f{i}-s{}-r{}.blob", f.seq, f.first_row_id);
        refs.push(BlobFileRef {
            path: path.clone(),
            file_size: bytes.len() as u64,
            first_row_id: f.first_row_id,
            row_count: f.cells.len() as u64,
            max_sequence_number: f.seq,
            schema_id: i as i64 % 2,
            write_cols: Some(vec!["data".into()]),
        });
        store.objects.insert(path, Bytes::from(bytes));
    }
    (store, refs)
}

/// (row id, value, sequence number, placeholder bit)
type OutRow = (i64, Option<Vec<u8>>, i64, bool);

fn txt(r: &OutRow) -> Option<String> {
    r.1.as_ref()
        .map(|b| String::from_utf8_lossy(b).into_owned())
}

fn run(
    store: &MemoryStore,
    refs: &[BlobFileRef],
    ranges: Option<&[RowRange]>,
    batch: usize,
    policy: PlaceholderPolicy,
) -> Result<Vec<OutRow>> {
    let planner = BlobFallbackPlanner::try_new(refs.to_vec(), ranges, batch)?;
    let mut reader = BlobBunchReader::new(
        planner,
        BlobElementKind::Blob,
        BlobBunchReadOptions {
            placeholders: policy,
            descriptor_uri_prefix: None,
        },
    );
    let m: Machine<BlobBunchBatch> =
        Machine::new("bunch", move |io: Io<BlobBunchBatch>| async move {
            while let Some(b) = reader.next_batch(&io).await? {
                io.emit_and_yield(b).await;
            }
            Ok(())
        });
    let batches = store.clone().run(m)?;
    let mut out = Vec::new();
    for b in batches {
        assert!(b.values.len() <= batch && !b.values.is_empty());
        let vals = b.values.as_binary::<i64>();
        for i in 0..vals.len() {
            out.push((
                b.row_ids.value(i),
                (!vals.is_null(i)).then(|| vals.value(i).to_vec()),
                b.sequence_numbers.value(i),
                b.placeholders.as_ref().is_some_and(|m| m.value(i)),
            ));
        }
    }
    Ok(out)
}

/// An independent statement of the rules, per row id.
fn model(files: &[TestFile], ranges: Option<&[RowRange]>) -> Vec<OutRow> {
    let mut seqs: Vec<i64> = files.iter().map(|f| f.seq).collect();
    seqs.sort_unstable();
    seqs.dedup();
    seqs.reverse();
    let covers = |f: &TestFile, rid: i64| {
        rid >= f.first_row_id && rid < f.first_row_id + f.cells.len() as i64
    };
    let wanted = |rid: i64| ranges.is_none_or(|rs| rs.iter().any(|r| r.contains(rid)));
    let lo = files.iter().map(|f| f.first_row_id).min().unwrap();
    let hi = files
        .iter()
        .map(|f| f.first_row_id + f.cells.len() as i64)
        .max()
        .unwrap();
    let mut out = Vec::new();
    for rid in lo..hi {
        if !wanted(rid) {
            continue;
        }
        if seqs.len() == 1 {
            if let Some(f) = files.iter().find(|f| covers(f, rid)) {
                let c = &f.cells[(rid - f.first_row_id) as usize];
                out.push(match c {
                    Cell::V(s) => (rid, Some(s.clone().into_bytes()), f.seq, false),
                    N => (rid, None, f.seq, false),
                    P => (rid, None, f.seq, true),
                });
            }
            continue;
        }
        let mut row = (rid, None, -1, false);
        'layers: for &s in &seqs {
            for f in files.iter().filter(|f| f.seq == s && covers(f, rid)) {
                match &f.cells[(rid - f.first_row_id) as usize] {
                    P => {}
                    Cell::V(x) => {
                        row = (rid, Some(x.clone().into_bytes()), s, false);
                        break 'layers;
                    }
                    N => {
                        row = (rid, None, s, false);
                        break 'layers;
                    }
                }
            }
        }
        out.push(row);
    }
    out
}

/// Sweep every batch size from 1 to rows + 1 with and without `ranges`; compare with the model.
fn sweep(files: &[TestFile], ranges: Option<&[RowRange]>) -> Vec<OutRow> {
    let (store, refs) = build(files);
    let want = model(files, ranges);
    for batch in 1..=want.len() + 1 {
        let got = run(&store, &refs, ranges, batch, PlaceholderPolicy::Mask).unwrap();
        assert_eq!(got, want, "batch size {batch}, ranges {ranges:?}");
    }
    want
}

fn seqs(rows: &[OutRow]) -> Vec<i64> {
    rows.iter().map(|r| r.2).collect()
}

fn ids(rows: &[OutRow]) -> Vec<i64> {
    rows.iter().map(|r| r.0).collect()
}

fn rr(s: &str) -> Vec<RowRange> {
    parse_row_ranges(s).unwrap()
}

#[test]
fn spec_vector_partial_newer_layer_with_placeholder() {
    // new(0,3,2) with row 1 a placeholder over old(0,5,1): trailing gap in the new layer.
    let files = [
        tf(0, 2, vec![v("n0"), P, v("n2")]),
        tf(0, 1, vals("o", 0, 5)),
    ];
    let rows = sweep(&files, None);
    assert_eq!(ids(&rows), vec![0, 1, 2, 3, 4]);
    assert_eq!(seqs(&rows), vec![2, 1, 2, 1, 1]);
    assert_eq!(txt(&rows[1]).as_deref(), Some("o1"));
    assert_eq!(txt(&rows[2]).as_deref(), Some("n2"));
}

#[test]
fn spec_vector_null_wins_over_older_layer() {
    let files = [
        tf(0, 2, vec![v("n0"), N, v("n2")]),
        tf(0, 1, vals("o", 0, 3)),
    ];
    let rows = sweep(&files, None);
    assert_eq!(rows[1], (1, None, 2, false));
    assert_eq!(seqs(&rows), vec![2, 2, 2]);
}

#[test]
fn spec_vector_leading_and_trailing_gaps() {
    // new(10,2,2) with row 10 a placeholder over old(8,6,1).
    let files = [tf(10, 2, vec![P, v("n11")]), tf(8, 1, vals("o", 8, 6))];
    let rows = sweep(&files, None);
    assert_eq!(ids(&rows), (8..14).collect::<Vec<_>>());
    assert_eq!(seqs(&rows), vec![1, 1, 1, 2, 1, 1]);
    assert_eq!(txt(&rows[3]).as_deref(), Some("n11"));
    // Pushdown into the leading gap only.
    let ranges = rr("8-9");
    let rows = sweep(&files, Some(&ranges));
    assert_eq!(ids(&rows), vec![8, 9]);
    assert_eq!(seqs(&rows), vec![1, 1]);
}

#[test]
fn spec_vector_all_placeholders_read_as_null_with_sequence_minus_one() {
    let files = [tf(0, 2, vec![P]), tf(0, 1, vec![P])];
    let rows = sweep(&files, None);
    assert_eq!(rows, vec![(0, None, -1, false)]);
    // A hole no layer covers is all-placeholder too, and keeps its row id.
    let files = [tf(0, 2, vals("n", 0, 2)), tf(5, 1, vals("o", 5, 2))];
    let rows = sweep(&files, None);
    assert_eq!(ids(&rows), vec![0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(seqs(&rows), vec![2, 2, -1, -1, -1, 1, 1]);
    assert!(rows[2..5].iter().all(|r| r.1.is_none() && !r.3));
}

#[test]
fn spec_vector_row_range_pushdown_with_middle_gap() {
    // old(20,26,1), new1(20,11,2), new2(40,6,2): the new layer has a gap [31,39].
    let files = [
        tf(20, 1, vals("o", 20, 26)),
        tf(20, 2, vals("a", 20, 11)),
        tf(40, 2, vals("b", 40, 6)),
    ];
    let ranges = rr("15-20,25-26,29-33,35-41");
    let rows = sweep(&files, Some(&ranges));
    assert_eq!(
        ids(&rows),
        vec![20, 25, 26, 29, 30, 31, 32, 33, 35, 36, 37, 38, 39, 40, 41]
    );
    assert_eq!(
        seqs(&rows),
        vec![2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2]
    );
    // The same bunch unrestricted, and restricted to the gap alone.
    sweep(&files, None);
    let gap = rr("32-38");
    let rows = sweep(&files, Some(&gap));
    assert_eq!(seqs(&rows), vec![1; 7]);
}

#[test]
fn five_layers_compacted_layout() {
    // BlobUpdateTest case 3.
    let files = [
        tf(0, 1, vec![v("b0"), v("b1"), v("b2")]),
        tf(3, 1, vec![v("b3"), v("b4")]),
        tf(0, 2, vec![v("u20"), P]),
        tf(2, 2, vec![P, v("u23")]),
        tf(4, 2, vec![v("u24")]),
        tf(5, 3, vals("b", 5, 5)),
        tf(5, 4, vec![P, v("u46"), P]),
        tf(8, 4, vec![v("u48"), P]),
        tf(0, 6, {
            let mut c = vec![P; 10];
            c[1] = v("u61");
            c[9] = v("u69");
            c
        }),
    ];
    let rows = sweep(&files, None);
    let got: Vec<String> = rows.iter().map(|r| txt(r).unwrap()).collect();
    assert_eq!(
        got,
        vec![
            "u20", "u61", "b2", "u23", "u24", "b5", "u46", "b7", "u48", "u69"
        ]
    );
    assert_eq!(seqs(&rows), vec![2, 6, 1, 2, 2, 3, 4, 3, 4, 6]);
    for ranges in ["0,9", "1-3,7", "4-5", "2-2,6-8", "0-100"] {
        sweep(&files, Some(&rr(ranges)));
    }
}

#[test]
fn three_layers_with_gaps_every_range_and_batch_size() {
    let files = [
        tf(0, 1, vals("o", 0, 12)),
        tf(2, 2, vec![v("m2"), P, N, v("m5")]),
        tf(8, 2, vec![P, v("m9")]),
        tf(0, 3, vec![P, v("t1")]),
        tf(5, 3, vec![P, P, v("t7")]),
        tf(11, 3, vec![P]),
    ];
    sweep(&files, None);
    // Every single-row and two-piece range.
    for a in 0..12 {
        sweep(&files, Some(&[RowRange { from: a, to: a }]));
        for b in a..12 {
            let ranges = [RowRange { from: 0, to: a }, RowRange { from: b, to: 11 }];
            sweep(&files, Some(&ranges));
        }
    }
}

#[test]
fn overlapping_files_within_a_layer_are_rejected() {
    let files = [
        tf(0, 2, vals("a", 0, 5)),
        tf(3, 2, vals("b", 3, 5)),
        tf(0, 1, vals("o", 0, 8)),
    ];
    let (_, refs) = build(&files);
    let e = BlobFallbackPlanner::try_new(refs, None, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("should not overlap"), "{e}");
    assert!(
        e.contains("f0-s2-r0.blob") && e.contains("f1-s2-r3.blob"),
        "{e}"
    );
    assert!(e.contains("[0, 4]") && e.contains("[3, 7]"), "{e}");
}

#[test]
fn write_columns_must_agree_but_schema_ids_may_differ() {
    let files = [tf(0, 2, vec![P, v("n1")]), tf(0, 1, vals("o", 0, 2))];
    let (store, mut refs) = build(&files);
    refs[0].schema_id = 3;
    refs[1].schema_id = 0;
    let rows = run(&store, &refs, None, 8, PlaceholderPolicy::Reject).unwrap();
    assert_eq!(txt(&rows[0]).as_deref(), Some("o0"));
    assert_eq!(txt(&rows[1]).as_deref(), Some("n1"));
    refs[1].write_cols = Some(vec!["other".into()]);
    let e = BlobFallbackPlanner::try_new(refs, None, 8)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("same write columns") && e.contains("other"),
        "{e}"
    );
}

#[test]
fn single_layer_fast_path_concatenates() {
    let files = [
        tf(0, 10, vec![v("a0"), v("a1"), v("a2")]),
        tf(5, 10, vec![v("b5"), v("b6")]),
    ];
    let (store, refs) = build(&files);
    assert!(
        BlobFallbackPlanner::try_new(refs.clone(), None, 1)
            .unwrap()
            .is_single_layer()
    );
    let rows = sweep(&files, None);
    assert_eq!(ids(&rows), vec![0, 1, 2, 5, 6]);
    assert_eq!(seqs(&rows), vec![10; 5]);
    let rows = sweep(&files, Some(&rr("1,3-5")));
    assert_eq!(ids(&rows), vec![1, 5]);
    // A placeholder in a single layer cannot fall back: rejected by default, masked on request.
    let files = [tf(0, 10, vec![v("a0"), P])];
    let (store2, refs2) = build(&files);
    let e = run(&store2, &refs2, None, 4, PlaceholderPolicy::Reject)
        .unwrap_err()
        .to_string();
    assert!(e.contains("f0-s10-r0.blob") && e.contains("row 1"), "{e}");
    let rows = run(&store2, &refs2, None, 4, PlaceholderPolicy::Mask).unwrap();
    assert_eq!(rows[1], (1, None, 10, true));
    drop(store);
}

#[test]
fn only_winning_records_are_read() {
    // The new layer replaces rows 0..4 except row 2; the old file is 4 x 1000 bytes.
    let big = "x".repeat(1000);
    let files = [
        tf(0, 2, vec![v("n0"), v("n1"), P, v("n3")]),
        tf(0, 1, vec![v(&big), v(&big), v("o2"), v(&big)]),
    ];
    let (store, refs) = build(&files);
    let planner = BlobFallbackPlanner::try_new(refs.clone(), None, 100).unwrap();
    let mut reader = BlobBunchReader::new(planner, BlobElementKind::Blob, Default::default());
    let m: Machine<BlobBunchBatch> = Machine::new("b", move |io: Io<BlobBunchBatch>| async move {
        while let Some(b) = reader.next_batch(&io).await? {
            io.emit(b);
        }
        Ok(())
    });
    let mut m = m;
    let mut store = store;
    let mut reads = Vec::new();
    loop {
        match m.step().unwrap() {
            Step::NeedIo(round) => {
                let mut this = Vec::new();
                for r in round {
                    if let IoOp::Read { path, range } = &r.op {
                        this.push((path.clone(), range.clone().unwrap()));
                    }
                    let a = store.answer(&r.op);
                    m.provide(r.id, a).unwrap();
                }
                reads.push(this);
            }
            Step::Emit(_) => {}
            Step::Work(items) => items.into_iter().for_each(|w| w.run()),
            Step::Wait => {}
            Step::Done => break,
        }
    }
    assert_eq!(
        reads.len(),
        2,
        "one index round, one record round: {reads:?}"
    );
    assert_eq!(reads[0].len(), 2);
    // Record round: new file rows 0,1 (adjacent) and 3 → 2 reads; old file row 2 only.
    let old = &refs[1].path;
    let old_reads: Vec<_> = reads[1].iter().filter(|(p, _)| p == old).collect();
    assert_eq!(old_reads.len(), 1);
    assert_eq!(old_reads[0].1, 2 * 1016..2 * 1016 + 18);
}

#[test]
fn descriptor_mode_points_into_the_winning_file() {
    let files = [
        tf(0, 2, vec![P, v("new")]),
        tf(0, 1, vec![v("old0"), v("old1")]),
    ];
    let (store, refs) = build(&files);
    let planner = BlobFallbackPlanner::try_new(refs.clone(), None, 8).unwrap();
    let mut reader = BlobBunchReader::new(
        planner,
        BlobElementKind::Blob,
        BlobBunchReadOptions {
            placeholders: PlaceholderPolicy::Reject,
            descriptor_uri_prefix: Some("oss://bucket/t/".into()),
        },
    );
    let m: Machine<BlobBunchBatch> = Machine::once("d", move |io: Io<BlobBunchBatch>| async move {
        Ok(reader.next_batch(&io).await?.unwrap())
    });
    let b = store.clone().run(m).unwrap().remove(0);
    let vals = b.values.as_binary::<i64>();
    let d0 = BlobDescriptor::deserialize(vals.value(0)).unwrap();
    assert_eq!(
        d0,
        BlobDescriptor::new(format!("oss://bucket/t/{}", refs[1].path), 4, 4)
    );
    let d1 = BlobDescriptor::deserialize(vals.value(1)).unwrap();
    assert_eq!(d1.uri(), format!("oss://bucket/t/{}", refs[0].path));
    let file = &store.objects[&refs[0].path];
    let at = d1.offset() as usize;
    assert_eq!(&file[at..at + d1.length() as usize], b"new");
}

#[test]
fn resolve_and_assemble_are_pure() {
    let files = [tf(0, 2, vec![P, N]), tf(0, 1, vec![v("a"), v("b")])];
    let (store, refs) = build(&files);
    let mut planner = BlobFallbackPlanner::try_new(refs.clone(), None, 2).unwrap();
    assert_eq!(planner.layers(), vec![(2, vec![0]), (1, vec![1])]);
    assert_eq!(planner.row_count(), 2);
    let plan = planner.next_window().unwrap();
    assert!(planner.next_window().is_none());
    assert_eq!(
        plan.layers[0].slots,
        vec![
            BlobSlot::File { file: 0, row: 0 },
            BlobSlot::File { file: 0, row: 1 }
        ]
    );
    let idx: Vec<_> = refs
        .iter()
        .map(|r| decode_blob_file_index(&store.objects[&r.path], &r.path).unwrap())
        .collect();
    let res = resolve_window(&plan, |f, r| idx[f].entry(r)).unwrap();
    assert_eq!(
        res,
        vec![
            BlobResolution::Entry { file: 1, row: 0 },
            BlobResolution::Entry { file: 0, row: 1 }
        ]
    );
    let win = winning_rows(&res);
    assert_eq!(win.get(&1), Some(&vec![0]));
    // Missing decoded rows are an error, not a panic.
    let e = assemble_window(
        &plan,
        &res,
        &refs,
        &BTreeMap::new(),
        BlobElementKind::Blob,
        PlaceholderPolicy::Mask,
    )
    .unwrap_err();
    assert!(e.to_string().contains("was not decoded"), "{e}");
}

#[test]
fn a_window_read_in_order_from_one_file_is_not_copied() {
    let files = [tf(0, 1, vec![v("a0"), N, v("a2")])];
    let (store, refs) = build(&files);
    let mut planner = BlobFallbackPlanner::try_new(refs.clone(), None, 3).unwrap();
    let plan = planner.next_window().unwrap();
    let file = &store.objects[&refs[0].path];
    let idx = decode_blob_file_index(file, &refs[0].path).unwrap();
    let res = resolve_window(&plan, |_, r| idx.entry(r)).unwrap();
    let rows = decode_blob_rows(
        file,
        &idx,
        BlobElementKind::Blob,
        Some(&[0, 1, 2]),
        &BlobReadOptions::default(),
    )
    .unwrap();
    let decoded = BTreeMap::from([(0, rows)]);
    let out = assemble_window(
        &plan,
        &res,
        &refs,
        &decoded,
        BlobElementKind::Blob,
        PlaceholderPolicy::Reject,
    )
    .unwrap();
    let vals = out.values.as_binary::<i64>();
    assert_eq!(vals.value(0), b"a0");
    assert!(vals.is_null(1));
    assert_eq!(vals.value(2), b"a2");
    assert_eq!(out.row_ids.values().as_ref(), &[0, 1, 2]);
    // The same value buffer as the decoded column: no copy.
    let src = decoded[&0].values.as_binary::<i64>();
    assert_eq!(vals.values().as_ptr(), src.values().as_ptr());
    // Taken out of order (second layer winning a middle row), values are assembled as before.
    let rows = run(
        &store,
        &refs,
        Some(&rr("0,2")),
        2,
        PlaceholderPolicy::Reject,
    )
    .unwrap();
    assert_eq!(txt(&rows[0]).as_deref(), Some("a0"));
    assert_eq!(txt(&rows[1]).as_deref(), Some("a2"));
}

// ---------------------------------------------------------------------------------------------
// Corpus: blob_update
// ---------------------------------------------------------------------------------------------

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

#[test]
fn corpus_blob_update_resolves_to_expected_rows() {
    let exp: serde_json::Value = serde_json::from_slice(
        &std::fs::read(corpus_dir().join("blob_update.expected.json")).unwrap(),
    )
    .unwrap();
    let read = exp["additional_reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "latest-with-row-id")
        .unwrap();
    let mut store = MemoryStore::new();
    let mut by_first: BTreeMap<i64, Vec<BlobFileRef>> = BTreeMap::new();
    for f in exp["files"].as_array().unwrap() {
        if f["file_format"] != "blob" {
            continue;
        }
        let path = format!("bucket-0/{}", f["file_path"].as_str().unwrap());
        let bytes = std::fs::read(corpus_dir().join("corpus.db/blob_update").join(&path)).unwrap();
        let r = BlobFileRef {
            path: path.clone(),
            file_size: bytes.len() as u64,
            first_row_id: f["first_row_id"].as_i64().unwrap(),
            row_count: f["record_count"].as_u64().unwrap(),
            max_sequence_number: f["max_sequence_number"].as_i64().unwrap(),
            schema_id: f["schema_id"].as_i64().unwrap(),
            write_cols: Some(vec![f["write_cols"][0].as_str().unwrap().to_string()]),
        };
        store.objects.insert(path, Bytes::from(bytes));
        by_first.entry(r.first_row_id).or_default().push(r);
    }
    assert_eq!(by_first.len(), 2);
    let mut checked = 0;
    for refs in by_first.values() {
        assert_eq!(refs.len(), 2, "two layers per row range");
        let n = refs.iter().map(|r| r.row_count).max().unwrap() as usize;
        for batch in 1..=n {
            let rows = run(&store, refs, None, batch, PlaceholderPolicy::Reject).unwrap();
            assert_eq!(rows.len(), n);
            for (rid, val, _, _) in &rows {
                let want = &read["rows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|r| r["_ROW_ID"].as_i64() == Some(*rid))
                    .unwrap()["data"];
                match val {
                    None => assert!(want.is_null(), "row id {rid}"),
                    Some(b) => {
                        assert_eq!(b.len() as u64, want["len"].as_u64().unwrap());
                        assert_eq!(hex(&Sha256::digest(b)), want["sha256"].as_str().unwrap());
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 10);
}

#[test]
fn blob_file_ref_from_data_file_meta() {
    use crate::spec::{BinaryRow, DataFileMeta, SimpleStats};
    let mut meta = DataFileMeta {
        file_name: "data-1.blob".into(),
        file_size: 57,
        row_count: 4,
        min_key: BinaryRow::empty(),
        max_key: BinaryRow::empty(),
        key_stats: SimpleStats::empty(),
        value_stats: SimpleStats::empty(),
        min_sequence_number: 3,
        max_sequence_number: 3,
        schema_id: 1,
        level: 0,
        extra_files: Vec::new(),
        creation_time_millis: None,
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: None,
        value_stats_cols: None,
        external_path: None,
        first_row_id: Some(10),
        write_cols: Some(vec!["data".into()]),
        write_cols_sequences: None,
    };
    let r = BlobFileRef::try_from_data_file(&meta, meta.path_in_bucket("bucket-0")).unwrap();
    assert_eq!(
        r,
        BlobFileRef {
            path: "bucket-0/data-1.blob".into(),
            file_size: 57,
            first_row_id: 10,
            row_count: 4,
            max_sequence_number: 3,
            schema_id: 1,
            write_cols: Some(vec!["data".into()]),
        }
    );
    assert_eq!(r.row_range().unwrap(), RowRange { from: 10, to: 13 });
    meta.first_row_id = None;
    let e = BlobFileRef::try_from_data_file(&meta, "p")
        .unwrap_err()
        .to_string();
    assert!(e.contains("first_row_id") && e.contains("p"), "{e}");
}

#[test]
fn spec_vector_deletion_vector_as_row_ranges() {
    // new(0,3,2) with row 1 a placeholder, old(0,6,1), DV deletes position 4: applying the DV
    // as the row ranges [0,3],[5,5] keeps every layer aligned.
    let files = [
        tf(0, 2, vec![v("n0"), P, v("n2")]),
        tf(0, 1, vals("o", 0, 6)),
    ];
    let rows = sweep(&files, Some(&rr("0-3,5")));
    assert_eq!(ids(&rows), vec![0, 1, 2, 3, 5]);
    assert_eq!(seqs(&rows), vec![2, 1, 2, 1, 1]);
}

#[test]
fn spec_vector_gap_rows_inside_a_layer_with_ranges() {
    // Layer seq 10 = files (0,3),(5,2) with a gap [3,4]; an older all-placeholder layer makes
    // the bunch multi-layer. Ranges [1,1],[3,5]: real rows 1 and 5, gap rows 3 and 4.
    let files = [
        tf(0, 10, vals("a", 0, 3)),
        tf(5, 10, vals("b", 5, 2)),
        tf(0, 1, vec![P; 7]),
    ];
    let rows = sweep(&files, Some(&rr("1,3-5")));
    assert_eq!(ids(&rows), vec![1, 3, 4, 5]);
    assert_eq!(seqs(&rows), vec![10, -1, -1, 10]);
    assert_eq!(txt(&rows[0]).as_deref(), Some("a1"));
    assert_eq!(txt(&rows[3]).as_deref(), Some("b5"));
}
