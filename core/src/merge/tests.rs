//! Unit tests of the merge: loser tree ordering, merge engines and aggregate functions.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Decimal128Array, Int8Array, Int32Array, Int64Array, ListArray,
    MapArray, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType as AT, Field, Fields, Schema, SchemaRef};

use super::*;
use crate::error::Error;
use crate::spec::{DataField, DataType, TypeKind};

fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("in-memory merge suspended"),
    }
}

fn pfield(id: i32, name: &str, kind: TypeKind, nullable: bool) -> DataField {
    DataField {
        id,
        name: name.into(),
        data_type: DataType { nullable, kind },
        description: None,
        default_value: None,
    }
}

/// A test table: key `k` BIGINT NOT NULL, then value fields.
struct Table {
    cfg: MergeConfig,
    schema: SchemaRef,
}

impl Table {
    fn new(values: Vec<(&str, TypeKind, AT)>, options: &[(&str, &str)]) -> Self {
        let mut fields = vec![pfield(0, "k", TypeKind::BigInt, false)];
        let mut arrow = vec![
            Field::new("_KEY_k", AT::Int64, false),
            Field::new("_SEQUENCE_NUMBER", AT::Int64, false),
            Field::new("_VALUE_KIND", AT::Int8, false),
            Field::new("k", AT::Int64, false),
        ];
        for (i, (name, kind, at)) in values.into_iter().enumerate() {
            fields.push(pfield(i as i32 + 1, name, kind, true));
            arrow.push(Field::new(name, at, true));
        }
        let opts: BTreeMap<String, String> = options
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let cfg = MergeConfig::from_table_options(fields, vec!["k".into()], vec![], &opts).unwrap();
        Table {
            cfg,
            schema: Arc::new(Schema::new(arrow)),
        }
    }

    /// A batch of records: keys, sequence numbers, kinds (`+I -U +U -D`), value columns
    /// (without `k`).
    fn batch(&self, keys: &[i64], seqs: &[i64], kinds: &str, values: Vec<ArrayRef>) -> RecordBatch {
        let kinds: Vec<i8> = kinds
            .split_whitespace()
            .map(|k| match k {
                "+I" => 0,
                "-U" => 1,
                "+U" => 2,
                "-D" => 3,
                other => panic!("kind {other}"),
            })
            .collect();
        assert_eq!(kinds.len(), keys.len());
        let mut cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(keys.to_vec())),
            Arc::new(Int64Array::from(seqs.to_vec())),
            Arc::new(Int8Array::from(kinds)),
            Arc::new(Int64Array::from(keys.to_vec())),
        ];
        cols.extend(values);
        RecordBatch::try_new(Arc::clone(&self.schema), cols).unwrap()
    }

    fn merge_with(
        &self,
        output: Vec<usize>,
        runs: Vec<Vec<RecordBatch>>,
        batch_size: usize,
    ) -> crate::Result<Vec<RecordBatch>> {
        let runs: Vec<Box<dyn RunSource>> = runs
            .into_iter()
            .map(|r| Box::new(MemoryRunSource::new(r)) as Box<dyn RunSource>)
            .collect();
        let mut reader = MergeReader::try_new(
            &self.cfg,
            Arc::clone(&self.schema),
            output,
            runs,
            batch_size,
        )?;
        let mut out = Vec::new();
        while let Some(b) = block_on(reader.next_batch())? {
            assert!(b.num_rows() <= batch_size.max(1));
            assert!(b.num_rows() > 0);
            out.push(b);
        }
        Ok(out)
    }

    /// Merge, all value columns out, one batch.
    fn merge(&self, runs: Vec<Vec<RecordBatch>>) -> crate::Result<RecordBatch> {
        let n = self.schema.fields().len() - 3;
        let out = self.merge_with((0..n).collect(), runs, 1024)?;
        let schema = Arc::new(Schema::new(self.schema.fields()[3..].to_vec()));
        Ok(arrow_select::concat::concat_batches(&schema, &out).unwrap())
    }
}

fn i64s(b: &RecordBatch, col: usize) -> Vec<Option<i64>> {
    b.column(col).as_primitive::<Int64Type>().iter().collect()
}

fn i32s(a: &ArrayRef) -> Vec<Option<i32>> {
    a.as_primitive::<Int32Type>().iter().collect()
}

fn strs(a: &ArrayRef) -> Vec<Option<String>> {
    a.as_string::<i32>()
        .iter()
        .map(|s| s.map(str::to_string))
        .collect()
}

fn int_col(v: &[Option<i32>]) -> ArrayRef {
    Arc::new(Int32Array::from(v.to_vec()))
}

fn str_col(v: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(v.to_vec()))
}

// ---------------------------------------------------------------------------------------
// Loser tree and deduplicate

/// Deterministic pseudo-random numbers (LCG).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn dedup_four_runs_duplicates_and_batch_sizes() {
    let t = Table::new(vec![("v", TypeKind::Int, AT::Int32)], &[]);
    let mut rng = Lcg(42);
    // 4 runs over keys 0..40; run 2 has duplicate keys (two versions, higher seq newer);
    // run 3 is empty. Sequence numbers are unique across runs.
    let mut seq = 0i64;
    let mut runs_rows: Vec<Vec<(i64, i64, &str, i32)>> = Vec::new();
    for run in 0..4 {
        let mut rows = Vec::new();
        if run != 3 {
            for k in 0..40i64 {
                if rng.next(3) == 0 {
                    continue;
                }
                let copies = if run == 2 { 1 + rng.next(2) } else { 1 };
                for _ in 0..copies {
                    let kind = ["+I", "+U", "-D", "-U", "+I"][rng.next(5) as usize];
                    rows.push((k, seq, kind, (rng.next(1000)) as i32));
                    seq += 1;
                }
            }
        }
        runs_rows.push(rows);
    }
    // Model: per key, the record with the highest sequence number; dropped if retract.
    let mut model: BTreeMap<i64, (i64, &str, i32)> = BTreeMap::new();
    for rows in &runs_rows {
        for &(k, s, kind, v) in rows {
            let e = model.entry(k).or_insert((s, kind, v));
            if s >= e.0 {
                *e = (s, kind, v);
            }
        }
    }
    let expected: Vec<(i64, i32)> = model
        .into_iter()
        .filter(|(_, (_, kind, _))| kind.starts_with('+'))
        .map(|(k, (_, _, v))| (k, v))
        .collect();
    assert!(expected.len() > 10);
    for in_size in 1..=5usize {
        // 1000: pending rows refer to more batches than the window bound (chunked output).
        for out_size in [1usize, 2, 3, 4, 5, 1000] {
            let runs: Vec<Vec<RecordBatch>> = runs_rows
                .iter()
                .map(|rows| {
                    let mut batches = vec![t.batch(&[], &[], "", vec![int_col(&[])])];
                    for chunk in rows.chunks(in_size) {
                        let keys: Vec<i64> = chunk.iter().map(|r| r.0).collect();
                        let seqs: Vec<i64> = chunk.iter().map(|r| r.1).collect();
                        let kinds: Vec<&str> = chunk.iter().map(|r| r.2).collect();
                        let vals: Vec<Option<i32>> = chunk.iter().map(|r| Some(r.3)).collect();
                        batches.push(t.batch(&keys, &seqs, &kinds.join(" "), vec![int_col(&vals)]));
                    }
                    batches
                })
                .collect();
            let out = t.merge_with(vec![1, 0], runs, out_size).unwrap();
            let mut got = Vec::new();
            for b in &out {
                assert_eq!(b.schema().field(0).name(), "v");
                let v = i32s(b.column(0));
                let k = i64s(b, 1);
                got.extend(k.into_iter().zip(v).map(|(k, v)| (k.unwrap(), v.unwrap())));
            }
            assert_eq!(
                got, expected,
                "input batch size {in_size}, output {out_size}"
            );
        }
    }
}

#[test]
fn empty_and_no_runs() {
    let t = Table::new(vec![("v", TypeKind::Int, AT::Int32)], &[]);
    assert!(t.merge_with(vec![0], vec![], 4).unwrap().is_empty());
    assert!(
        t.merge_with(vec![0], vec![vec![], vec![]], 4)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn dedup_ignore_delete_and_single_retract() {
    let rows = |t: &Table| {
        vec![
            vec![t.batch(
                &[1, 2],
                &[0, 1],
                "+I +I",
                vec![int_col(&[Some(10), Some(20)])],
            )],
            vec![t.batch(
                &[1, 3],
                &[2, 3],
                "-D -D",
                vec![int_col(&[Some(11), Some(30)])],
            )],
        ]
    };
    let t = Table::new(vec![("v", TypeKind::Int, AT::Int32)], &[]);
    let b = t.merge(rows(&t)).unwrap();
    assert_eq!(i64s(&b, 0), vec![Some(2)]);
    let t = Table::new(
        vec![("v", TypeKind::Int, AT::Int32)],
        &[("ignore-delete", "true")],
    );
    let b = t.merge(rows(&t)).unwrap();
    // key 1 keeps its insert; key 3 (a lone delete) passes through and is dropped.
    assert_eq!(i64s(&b, 0), vec![Some(1), Some(2)]);
    assert_eq!(i32s(b.column(1)), vec![Some(10), Some(20)]);
}

#[test]
fn dedup_sequence_field() {
    for (order, expected) in [
        ("ascending", vec![Some(3), Some(9)]),
        ("descending", vec![Some(1), Some(7)]),
    ] {
        let t = Table::new(
            vec![
                ("s", TypeKind::Int, AT::Int32),
                ("v", TypeKind::Int, AT::Int32),
            ],
            &[
                ("sequence.field", "s"),
                ("sequence.field.sort-order", order),
            ],
        );
        // key 1: s=5 (seq 0), s=9 (seq 1), s=9 (seq 2, wins the tie by sequence number
        // when ascending), s=null (seq 3, nulls sort first in both orders). Descending:
        // null < 9 (seq 1) < 9 (seq 2) < 5, so s=5 wins.
        // key 2: s=1 (seq 4) v=7, s=2 (seq 5) v=9.
        let runs = vec![
            vec![t.batch(
                &[1, 2],
                &[0, 4],
                "+I +I",
                vec![int_col(&[Some(5), Some(1)]), int_col(&[Some(1), Some(7)])],
            )],
            vec![t.batch(
                &[1],
                &[1],
                "+I",
                vec![int_col(&[Some(9)]), int_col(&[Some(2)])],
            )],
            vec![t.batch(
                &[1, 2],
                &[2, 5],
                "+U +I",
                vec![int_col(&[Some(9), Some(2)]), int_col(&[Some(3), Some(9)])],
            )],
            vec![t.batch(
                &[1],
                &[3],
                "+I",
                vec![int_col(&[None]), int_col(&[Some(4)])],
            )],
        ];
        let b = t.merge(runs).unwrap();
        assert_eq!(i32s(b.column(2)), expected, "{order}");
    }
}

#[test]
fn first_row() {
    let t = Table::new(
        vec![("v", TypeKind::Int, AT::Int32)],
        &[("merge-engine", "first-row")],
    );
    let runs = vec![
        vec![t.batch(
            &[1, 2],
            &[0, 1],
            "+I +I",
            vec![int_col(&[Some(10), Some(20)])],
        )],
        vec![t.batch(
            &[1, 2, 3],
            &[2, 3, 4],
            "+U +I -D",
            vec![int_col(&[Some(11), Some(21), Some(3)])],
        )],
    ];
    let b = t.merge(runs).unwrap();
    assert_eq!(i64s(&b, 0), vec![Some(1), Some(2)]);
    assert_eq!(i32s(b.column(1)), vec![Some(10), Some(20)]);
    // A retract among several records is an error unless ignore-delete.
    let runs = |t: &Table| {
        vec![
            vec![t.batch(&[1], &[0], "-D", vec![int_col(&[Some(1)])])],
            vec![t.batch(&[1], &[1], "+I", vec![int_col(&[Some(2)])])],
        ]
    };
    let err = t.merge(runs(&t)).unwrap_err();
    assert!(err.to_string().contains("First row merge engine"), "{err}");
    // Errors are final.
    let sources: Vec<Box<dyn RunSource>> = runs(&t)
        .into_iter()
        .map(|r| Box::new(MemoryRunSource::new(r)) as Box<dyn RunSource>)
        .collect();
    let mut reader =
        MergeReader::try_new(&t.cfg, Arc::clone(&t.schema), vec![0], sources, 8).unwrap();
    assert!(block_on(reader.next_batch()).is_err());
    assert!(
        block_on(reader.next_batch())
            .unwrap_err()
            .to_string()
            .contains("after the merge reader failed")
    );
    let t = Table::new(
        vec![("v", TypeKind::Int, AT::Int32)],
        &[
            ("merge-engine", "first-row"),
            ("first-row.ignore-delete", "true"),
        ],
    );
    let b = t.merge(runs(&t)).unwrap();
    assert_eq!(i32s(b.column(1)), vec![Some(2)]);
}

#[test]
fn bad_value_kind_and_layout() {
    let t = Table::new(vec![("v", TypeKind::Int, AT::Int32)], &[]);
    let mut b = t.batch(&[1], &[0], "+I", vec![int_col(&[Some(1)])]);
    let mut cols = b.columns().to_vec();
    cols[2] = Arc::new(Int8Array::from(vec![9]));
    b = RecordBatch::try_new(Arc::clone(&t.schema), cols).unwrap();
    let err = t.merge(vec![vec![b]]).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    assert!(
        err.to_string().contains("Unsupported byte value 9"),
        "{err}"
    );
    let unsorted = t.batch(
        &[2, 1],
        &[0, 1],
        "+I +I",
        vec![int_col(&[Some(1), Some(2)])],
    );
    let err = t.merge(vec![vec![unsorted]]).unwrap_err();
    assert!(err.to_string().contains("not sorted by key"), "{err}");
    let across = vec![
        t.batch(&[2], &[0], "+I", vec![int_col(&[Some(1)])]),
        t.batch(&[1], &[1], "+I", vec![int_col(&[Some(2)])]),
    ];
    let err = t.merge(vec![across]).unwrap_err();
    assert!(err.to_string().contains("not sorted by key"), "{err}");
    let bad_schema = Arc::new(Schema::new(vec![Field::new("_KEY_k", AT::Int64, false)]));
    assert!(MergeReader::try_new(&t.cfg, bad_schema, vec![], vec![], 1).is_err());
}

// ---------------------------------------------------------------------------------------
// Partial update

fn pu_table(options: &[(&str, &str)]) -> Table {
    let mut opts = vec![("merge-engine", "partial-update")];
    opts.extend_from_slice(options);
    Table::new(
        vec![
            ("a", TypeKind::Int, AT::Int32),
            ("g1", TypeKind::Int, AT::Int32),
            ("b", TypeKind::Int, AT::Int32),
            ("g2", TypeKind::Int, AT::Int32),
        ],
        &opts,
    )
}

fn cols4(
    a: &[Option<i32>],
    g1: &[Option<i32>],
    b: &[Option<i32>],
    g2: &[Option<i32>],
) -> Vec<ArrayRef> {
    vec![int_col(a), int_col(g1), int_col(b), int_col(g2)]
}

#[test]
fn partial_update_nulls_do_not_overwrite() {
    let t = pu_table(&[]);
    let runs = vec![
        vec![t.batch(
            &[1, 2],
            &[0, 1],
            "+I +I",
            cols4(
                &[Some(1), Some(5)],
                &[None, None],
                &[Some(2), None],
                &[None, None],
            ),
        )],
        vec![t.batch(
            &[1],
            &[2],
            "+I",
            cols4(&[None], &[Some(7)], &[Some(3)], &[None]),
        )],
        vec![t.batch(
            &[1],
            &[3],
            "+U",
            cols4(&[Some(4)], &[None], &[None], &[None]),
        )],
    ];
    let b = t.merge(runs).unwrap();
    assert_eq!(i64s(&b, 0), vec![Some(1), Some(2)]);
    assert_eq!(i32s(b.column(1)), vec![Some(4), Some(5)]);
    assert_eq!(i32s(b.column(2)), vec![Some(7), None]);
    assert_eq!(i32s(b.column(3)), vec![Some(3), None]);
}

#[test]
fn partial_update_deletes() {
    let runs = |t: &Table| {
        vec![
            vec![t.batch(
                &[1, 2],
                &[0, 1],
                "+I +I",
                cols4(
                    &[Some(1), Some(2)],
                    &[None, None],
                    &[None, None],
                    &[None, None],
                ),
            )],
            vec![t.batch(
                &[1, 2],
                &[2, 3],
                "-D -U",
                cols4(
                    &[Some(1), Some(2)],
                    &[None, None],
                    &[None, None],
                    &[None, None],
                ),
            )],
        ]
    };
    let t = pu_table(&[]);
    let err = t.merge(runs(&t)).unwrap_err();
    assert!(
        err.to_string()
            .contains("Partial update can not accept delete records"),
        "{err}"
    );
    let t = pu_table(&[("ignore-delete", "true")]);
    assert_eq!(i64s(&t.merge(runs(&t)).unwrap(), 0), vec![Some(1), Some(2)]);
    // remove-record-on-delete: -D removes the row, -U is ignored.
    let t = pu_table(&[("partial-update.remove-record-on-delete", "true")]);
    let b = t.merge(runs(&t)).unwrap();
    assert_eq!(i64s(&b, 0), vec![Some(2)]);
    assert_eq!(i32s(b.column(1)), vec![Some(2)]);
    // Only retracts for a key: the result is a delete.
    let t = pu_table(&[("ignore-delete", "true")]);
    let only = vec![
        vec![t.batch(
            &[3],
            &[0],
            "-D",
            cols4(&[Some(1)], &[None], &[None], &[None]),
        )],
        vec![t.batch(
            &[3],
            &[1],
            "-U",
            cols4(&[Some(1)], &[None], &[None], &[None]),
        )],
    ];
    assert_eq!(t.merge(only).unwrap().num_rows(), 0);
}

#[test]
fn partial_update_sequence_groups() {
    let t = pu_table(&[
        ("fields.g1.sequence-group", "a"),
        ("fields.g2.sequence-group", "b"),
    ]);
    let runs = vec![
        vec![t.batch(
            &[1],
            &[0],
            "+I",
            cols4(&[Some(1)], &[Some(1)], &[Some(1)], &[Some(1)]),
        )],
        // group 1 newer (2 >= 1): a updated; group 2 older (0 < 1): b kept.
        vec![t.batch(
            &[1],
            &[1],
            "+I",
            cols4(&[Some(2)], &[Some(2)], &[Some(2)], &[Some(0)]),
        )],
        // group 1 has a null ordering field: skipped; group 2 newer: b set even to null.
        vec![t.batch(
            &[1],
            &[2],
            "+I",
            cols4(&[Some(3)], &[None], &[None], &[Some(3)]),
        )],
    ];
    let b = t.merge(runs.clone()).unwrap();
    assert_eq!(i32s(b.column(1)), vec![Some(2)]);
    assert_eq!(i32s(b.column(2)), vec![Some(2)]);
    assert_eq!(i32s(b.column(3)), vec![None]);
    assert_eq!(i32s(b.column(4)), vec![Some(3)]);
    // A -U of group 1 (not older): a becomes null, g1 copied; the row stays an insert.
    let mut more = runs.clone();
    more.push(vec![t.batch(
        &[1],
        &[3],
        "-U",
        cols4(&[Some(2)], &[Some(2)], &[Some(9)], &[None]),
    )]);
    let b = t.merge(more).unwrap();
    assert_eq!(i32s(b.column(1)), vec![None]);
    assert_eq!(i32s(b.column(2)), vec![Some(2)]);
    assert_eq!(i32s(b.column(4)), vec![Some(3)]);
    // remove-record-on-sequence-group: a -D of group g1 deletes the row.
    let t = pu_table(&[
        ("fields.g1.sequence-group", "a"),
        ("fields.g2.sequence-group", "b"),
        ("partial-update.remove-record-on-sequence-group", "g1"),
    ]);
    let mut del = runs.clone();
    del.push(vec![t.batch(
        &[1],
        &[3],
        "-D",
        cols4(&[Some(2)], &[Some(5)], &[None], &[None]),
    )]);
    assert_eq!(t.merge(del).unwrap().num_rows(), 0);
    // ...but an older -D of g1 does not.
    let mut old = runs;
    old.push(vec![t.batch(
        &[1],
        &[3],
        "-D",
        cols4(&[Some(2)], &[Some(1)], &[None], &[None]),
    )]);
    assert_eq!(t.merge(old).unwrap().num_rows(), 1);
}

#[test]
fn partial_update_group_aggregation() {
    let t = pu_table(&[
        ("fields.g1.sequence-group", "a,b"),
        ("fields.b.aggregate-function", "sum"),
        ("fields.a.aggregate-function", "max"),
    ]);
    let runs = vec![
        vec![t.batch(
            &[1],
            &[0],
            "+I",
            cols4(&[Some(5)], &[Some(2)], &[Some(10)], &[None]),
        )],
        // older group value: aggReversed still aggregates sum and max.
        vec![t.batch(
            &[1],
            &[1],
            "+I",
            cols4(&[Some(7)], &[Some(1)], &[Some(1)], &[None]),
        )],
        vec![t.batch(
            &[1],
            &[2],
            "+I",
            cols4(&[Some(3)], &[Some(3)], &[Some(100)], &[None]),
        )],
        // a retract of the group: sum retracts, max cannot -> ignore-retract needed
    ];
    let b = t.merge(runs.clone()).unwrap();
    assert_eq!(i32s(b.column(1)), vec![Some(7)]);
    assert_eq!(i32s(b.column(2)), vec![Some(3)]);
    assert_eq!(i32s(b.column(3)), vec![Some(111)]);
    let mut r = runs.clone();
    r.push(vec![t.batch(
        &[1],
        &[3],
        "-U",
        cols4(&[Some(3)], &[Some(3)], &[Some(100)], &[None]),
    )]);
    let err = t.merge(r).unwrap_err();
    assert!(
        err.to_string().contains("does not support retraction"),
        "{err}"
    );
    let t = pu_table(&[
        ("fields.g1.sequence-group", "a,b"),
        ("fields.b.aggregate-function", "sum"),
        ("fields.a.aggregate-function", "max"),
        ("fields.a.ignore-retract", "true"),
    ]);
    let mut r = runs;
    r.push(vec![t.batch(
        &[1],
        &[3],
        "-U",
        cols4(&[Some(3)], &[Some(3)], &[Some(100)], &[None]),
    )]);
    let b = t.merge(r).unwrap();
    assert_eq!(i32s(b.column(1)), vec![Some(7)]);
    assert_eq!(i32s(b.column(3)), vec![Some(11)]);
}

#[test]
fn partial_update_validation() {
    let check = |opts: &[(&str, &str)], needle: &str| {
        let t = pu_table(opts);
        let err =
            MergeReader::try_new(&t.cfg, Arc::clone(&t.schema), vec![0], vec![], 4).unwrap_err();
        assert!(err.to_string().contains(needle), "{opts:?}: {err}");
    };
    check(
        &[("fields.g1.sequence-group", "k")],
        "contains primary key field 'k'",
    );
    check(
        &[
            ("fields.g1.sequence-group", "a"),
            ("fields.g2.sequence-group", "a"),
        ],
        "defined repeatedly",
    );
    check(
        &[("fields.b.aggregate-function", "sum")],
        "Must use sequence group",
    );
    check(
        &[("fields.default-aggregate-function", "sum")],
        "Must use sequence group",
    );
    check(
        &[
            ("ignore-delete", "true"),
            ("partial-update.remove-record-on-delete", "true"),
        ],
        "conflicting behavior",
    );
    check(
        &[
            ("fields.g1.sequence-group", "a"),
            ("partial-update.remove-record-on-delete", "true"),
        ],
        "conflicting behavior",
    );
    check(
        &[
            ("fields.g1.sequence-group", "a"),
            ("partial-update.remove-record-on-sequence-group", "a"),
        ],
        "must be part of sequence groups",
    );
    check(
        &[("fields.x.sequence-group", "a")],
        "Field x can not be found",
    );
    // last_non_null_value needs no group.
    let t = pu_table(&[("fields.b.aggregate-function", "last_non_null_value")]);
    assert!(MergeReader::try_new(&t.cfg, Arc::clone(&t.schema), vec![0], vec![], 4).is_ok());
}

// ---------------------------------------------------------------------------------------
// Aggregation

/// Aggregate column `v` of type (`kind`, `at`) over records of key 1 (one record per run,
/// sequence numbers ascending) and return the output column (0 or 1 rows).
fn agg(
    func: &str,
    kind: TypeKind,
    at: AT,
    values: ArrayRef,
    kinds: &str,
    extra: &[(&str, &str)],
) -> crate::Result<ArrayRef> {
    let key = "fields.v.aggregate-function".to_string();
    let mut opts: Vec<(&str, &str)> = vec![("merge-engine", "aggregation"), (key.as_str(), func)];
    opts.extend_from_slice(extra);
    let t = Table::new(vec![("v", kind, at)], &opts);
    let kinds: Vec<&str> = kinds.split_whitespace().collect();
    let runs = (0..values.len())
        .map(|i| vec![t.batch(&[1], &[i as i64], kinds[i], vec![values.slice(i, 1)])])
        .collect();
    let b = t.merge(runs)?;
    Ok(Arc::clone(b.column(1)))
}

fn int_agg(func: &str, v: &[Option<i32>], kinds: &str) -> crate::Result<Vec<Option<i32>>> {
    agg(func, TypeKind::Int, AT::Int32, int_col(v), kinds, &[]).map(|a| i32s(&a))
}

#[test]
fn agg_sum_product_with_retractions() {
    assert_eq!(
        int_agg("sum", &[Some(5), None, Some(3)], "+I +I +I").unwrap(),
        vec![Some(8)]
    );
    assert_eq!(
        int_agg("sum", &[Some(5), Some(3), Some(2)], "+I +U -U").unwrap(),
        vec![Some(6)]
    );
    // retract into a null accumulator: the negated input.
    assert_eq!(
        int_agg("sum", &[None, Some(4)], "+I -D").unwrap(),
        vec![Some(-4)]
    );
    let err = int_agg("sum", &[Some(i32::MAX), Some(1)], "+I +I").unwrap_err();
    assert!(err.to_string().contains("overflow"), "{err}");
    assert_eq!(
        int_agg("product", &[Some(3), Some(-4), None], "+I +I +I").unwrap(),
        vec![Some(-12)]
    );
    assert_eq!(
        int_agg("product", &[Some(12), Some(5)], "+I -U").unwrap(),
        vec![Some(2)]
    );
    assert_eq!(
        int_agg("product", &[None, Some(5)], "+I -U").unwrap(),
        vec![None]
    );
    // BIGINT and DOUBLE
    let a = agg(
        "sum",
        TypeKind::BigInt,
        AT::Int64,
        Arc::new(Int64Array::from(vec![1i64 << 40, 1])),
        "+I +I",
        &[],
    )
    .unwrap();
    assert_eq!(a.as_primitive::<Int64Type>().value(0), (1i64 << 40) + 1);
    let a = agg(
        "sum",
        TypeKind::Double,
        AT::Float64,
        Arc::new(arrow_array::Float64Array::from(vec![0.5, 0.25, 1.0])),
        "+I +I -U",
        &[],
    )
    .unwrap();
    assert_eq!(
        a.as_primitive::<arrow_array::types::Float64Type>().value(0),
        -0.25
    );
}

#[test]
fn agg_decimal() {
    let dec = |v: Vec<i128>| -> ArrayRef {
        Arc::new(
            Decimal128Array::from(v)
                .with_precision_and_scale(6, 2)
                .unwrap(),
        )
    };
    let kind = TypeKind::Decimal {
        precision: 6,
        scale: 2,
    };
    let at = AT::Decimal128(6, 2);
    let out = |a: ArrayRef| {
        a.as_primitive::<arrow_array::types::Decimal128Type>()
            .iter()
            .collect::<Vec<_>>()
    };
    // 1.50 + 2.25 - 0.05
    assert_eq!(
        out(agg(
            "sum",
            kind.clone(),
            at.clone(),
            dec(vec![150, 225, 5]),
            "+I +I -D",
            &[]
        )
        .unwrap()),
        vec![Some(370)]
    );
    // 1.50 * 2.25 = 3.375 -> 3.38 (HALF_UP)
    assert_eq!(
        out(agg(
            "product",
            kind.clone(),
            at.clone(),
            dec(vec![150, 225]),
            "+I +I",
            &[]
        )
        .unwrap()),
        vec![Some(338)]
    );
    // 3.00 / 1.50 = 2.00
    assert_eq!(
        out(agg(
            "product",
            kind.clone(),
            at.clone(),
            dec(vec![300, 150]),
            "+I -U",
            &[]
        )
        .unwrap()),
        vec![Some(200)]
    );
    // 1.00 / 3.00 does not terminate: error as Java's BigDecimal.divide.
    assert!(
        agg(
            "product",
            kind.clone(),
            at.clone(),
            dec(vec![100, 300]),
            "+I -U",
            &[]
        )
        .is_err()
    );
    // Overflow beyond the precision: NULL (Java Decimal.fromBigDecimal).
    assert_eq!(
        out(agg("sum", kind, at, dec(vec![999_999, 1]), "+I +I", &[]).unwrap()),
        vec![None]
    );
}

#[test]
fn agg_max_min_and_values() {
    assert_eq!(
        int_agg("max", &[Some(3), None, Some(9), Some(1)], "+I +I +I +I").unwrap(),
        vec![Some(9)]
    );
    assert_eq!(
        int_agg("min", &[None, Some(3), Some(-2), Some(5)], "+I +I +I +I").unwrap(),
        vec![Some(-2)]
    );
    assert!(
        int_agg("max", &[Some(3), Some(1)], "+I -U")
            .unwrap_err()
            .to_string()
            .contains("does not support retraction")
    );
    let a = agg(
        "max",
        TypeKind::VarChar {
            length: i32::MAX as u32,
        },
        AT::Utf8,
        str_col(&[Some("b"), Some("ab"), Some("c")]),
        "+I +I +I",
        &[],
    )
    .unwrap();
    assert_eq!(strs(&a), vec![Some("c".to_string())]);
    assert_eq!(
        int_agg("last_value", &[Some(3), None], "+I +I").unwrap(),
        vec![None]
    );
    assert_eq!(
        int_agg("last_value", &[Some(3), Some(4)], "+I -U").unwrap(),
        vec![None]
    );
    assert_eq!(
        int_agg("last_non_null_value", &[Some(3), None], "+I +I").unwrap(),
        vec![Some(3)]
    );
    assert_eq!(
        int_agg("last_non_null_value", &[Some(3), Some(4)], "+I -U").unwrap(),
        vec![None]
    );
    assert_eq!(
        int_agg("last_non_null_value", &[Some(3), None], "+I -U").unwrap(),
        vec![Some(3)]
    );
    assert_eq!(
        int_agg("first_value", &[None, Some(3)], "+I +I").unwrap(),
        vec![None]
    );
    assert_eq!(
        int_agg(
            "first_non_null_value",
            &[None, Some(3), Some(4)],
            "+I +I +I"
        )
        .unwrap(),
        vec![Some(3)]
    );
    assert_eq!(
        int_agg(
            "first_not_null_value",
            &[None, Some(3), Some(4)],
            "+I +I +I"
        )
        .unwrap(),
        vec![Some(3)]
    );
    assert!(int_agg("first_value", &[Some(1), Some(3)], "+I -U").is_err());
}

#[test]
fn agg_bool_and_listagg() {
    let bools = |v: Vec<Option<bool>>| -> ArrayRef { Arc::new(BooleanArray::from(v)) };
    let out = |a: ArrayRef| a.as_boolean().iter().collect::<Vec<_>>();
    let k = "+I +I +I";
    assert_eq!(
        out(agg(
            "bool_and",
            TypeKind::Boolean,
            AT::Boolean,
            bools(vec![Some(true), None, Some(false)]),
            k,
            &[]
        )
        .unwrap()),
        vec![Some(false)]
    );
    assert_eq!(
        out(agg(
            "bool_or",
            TypeKind::Boolean,
            AT::Boolean,
            bools(vec![Some(false), None, Some(true)]),
            k,
            &[]
        )
        .unwrap()),
        vec![Some(true)]
    );
    let string = TypeKind::VarChar {
        length: i32::MAX as u32,
    };
    let la = |v: &[Option<&str>], extra: &[(&str, &str)]| {
        let kinds = vec!["+I"; v.len()].join(" ");
        strs(
            &agg(
                "listagg",
                string.clone(),
                AT::Utf8,
                str_col(v),
                &kinds,
                extra,
            )
            .unwrap(),
        )
    };
    assert_eq!(
        la(&[Some("a"), None, Some(" "), Some("b")], &[]),
        vec![Some("a,b".into())]
    );
    assert_eq!(la(&[Some(" "), Some("x")], &[]), vec![Some("x".into())]);
    assert_eq!(
        la(
            &[Some("a"), Some("b")],
            &[("fields.v.list-agg-delimiter", ";")]
        ),
        vec![Some("a;b".into())]
    );
    assert_eq!(
        la(
            &[Some("a,b"), Some("b,c,,a"), Some("d")],
            &[("fields.v.distinct", "true")]
        ),
        vec![Some("a,b,c,d".into())]
    );
    // listagg needs an unbounded STRING.
    assert!(
        agg(
            "listagg",
            TypeKind::VarChar { length: 10 },
            AT::Utf8,
            str_col(&[Some("a")]),
            "+I",
            &[]
        )
        .is_err()
    );
}

fn list_col(v: Vec<Option<Vec<Option<i32>>>>) -> ArrayRef {
    Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(v))
}

fn list_out(a: &ArrayRef) -> Vec<Option<Vec<Option<i32>>>> {
    let l = a.as_list::<i32>();
    (0..l.len())
        .map(|i| (!l.is_null(i)).then(|| i32s(&l.value(i))))
        .collect()
}

#[test]
fn agg_collect() {
    let arr = TypeKind::Array(Box::new(DataType::nullable(TypeKind::Int)));
    let at = list_col(vec![]).data_type().clone();
    let c = |v: Vec<Option<Vec<Option<i32>>>>, kinds: &str, extra: &[(&str, &str)]| {
        list_out(
            &agg(
                "collect",
                arr.clone(),
                at.clone(),
                list_col(v),
                kinds,
                extra,
            )
            .unwrap(),
        )
    };
    let input = vec![
        Some(vec![Some(1), Some(2)]),
        None,
        Some(vec![Some(2), Some(3)]),
    ];
    assert_eq!(
        c(input.clone(), "+I +I +I", &[]),
        vec![Some(vec![Some(1), Some(2), Some(2), Some(3)])]
    );
    assert_eq!(
        c(input, "+I +I +I", &[("fields.v.distinct", "true")]),
        vec![Some(vec![Some(1), Some(2), Some(3)])]
    );
    // retract removes one matching element per retracted element.
    let r = vec![
        Some(vec![Some(1), Some(2), Some(2)]),
        Some(vec![Some(2), Some(5)]),
    ];
    assert_eq!(c(r, "+I -U", &[]), vec![Some(vec![Some(1), Some(2)])]);
    // distinct of a single input array
    assert_eq!(
        c(
            vec![None, Some(vec![Some(4), Some(4)])],
            "+I +I",
            &[("fields.v.distinct", "true")]
        ),
        vec![Some(vec![Some(4)])]
    );
}

type MapRows<'a> = Vec<Option<Vec<(&'a str, Option<i32>)>>>;

fn map_col(v: MapRows<'_>) -> ArrayRef {
    let mut b = arrow_array::builder::MapBuilder::new(
        None,
        arrow_array::builder::StringBuilder::new(),
        arrow_array::builder::Int32Builder::new(),
    );
    for m in v {
        match m {
            None => b.append(false).unwrap(),
            Some(entries) => {
                for (k, x) in entries {
                    b.keys().append_value(k);
                    b.values().append_option(x);
                }
                b.append(true).unwrap();
            }
        }
    }
    Arc::new(b.finish())
}

fn map_out(a: &ArrayRef) -> Vec<Vec<(String, Option<i32>)>> {
    let m: &MapArray = a.as_map();
    (0..m.len())
        .map(|i| {
            let e = m.value(i);
            let k = strs(e.column(0));
            let v = i32s(e.column(1));
            k.into_iter().map(|k| k.unwrap()).zip(v).collect()
        })
        .collect()
}

#[test]
fn agg_merge_map() {
    let mt = TypeKind::Map(
        Box::new(DataType::not_null(TypeKind::VarChar {
            length: i32::MAX as u32,
        })),
        Box::new(DataType::nullable(TypeKind::Int)),
    );
    let input = map_col(vec![
        Some(vec![("a", Some(1)), ("b", Some(2))]),
        None,
        Some(vec![("b", Some(3)), ("c", None)]),
        Some(vec![("a", Some(9))]),
    ]);
    let at = input.data_type().clone();
    let out = agg(
        "merge_map",
        mt.clone(),
        at.clone(),
        Arc::clone(&input),
        "+I +I +I -U",
        &[],
    )
    .unwrap();
    assert_eq!(
        map_out(&out),
        vec![vec![("b".to_string(), Some(3)), ("c".to_string(), None)]]
    );
    let out = agg("merge_map", mt, at, input, "+I +I +I +I", &[]).unwrap();
    assert_eq!(
        map_out(&out),
        vec![vec![
            ("a".to_string(), Some(9)),
            ("b".to_string(), Some(3)),
            ("c".to_string(), None)
        ]]
    );
}

#[test]
fn agg_nested_update() {
    let row_fields = Fields::from(vec![
        Field::new("id", AT::Int32, true),
        Field::new("x", AT::Utf8, true),
    ]);
    let row = |ids: Vec<Option<i32>>, xs: Vec<Option<&str>>| -> ArrayRef {
        Arc::new(
            StructArray::try_new(
                row_fields.clone(),
                vec![
                    Arc::new(Int32Array::from(ids)),
                    Arc::new(StringArray::from(xs)),
                ],
                None,
            )
            .unwrap(),
        )
    };
    let elem = Arc::new(Field::new("element", AT::Struct(row_fields.clone()), true));
    // rows: [(1,a),(2,b)] ; [(2,B),(3,c)] ; retract [(1,?)]
    let values = row(
        vec![Some(1), Some(2), Some(2), Some(3), Some(1)],
        vec![Some("a"), Some("b"), Some("B"), Some("c"), Some("zz")],
    );
    let list: ArrayRef = Arc::new(
        ListArray::try_new(
            Arc::clone(&elem),
            arrow_buffer::OffsetBuffer::from_lengths([2, 2, 1]),
            values,
            None,
        )
        .unwrap(),
    );
    let ptype = TypeKind::Array(Box::new(DataType::nullable(TypeKind::Row(vec![
        pfield(10, "id", TypeKind::Int, true),
        pfield(
            11,
            "x",
            TypeKind::VarChar {
                length: i32::MAX as u32,
            },
            true,
        ),
    ]))));
    let at = list.data_type().clone();
    let rows_of = |a: &ArrayRef| -> Vec<(Option<i32>, Option<String>)> {
        let l = a.as_list::<i32>();
        let v = l.value(0);
        let s = v.as_struct();
        i32s(s.column(0))
            .into_iter()
            .zip(strs(s.column(1)))
            .collect()
    };
    let keyed = [("fields.v.nested-key", "id")];
    let out = agg(
        "nested_update",
        ptype.clone(),
        at.clone(),
        Arc::clone(&list),
        "+I +I -D",
        &keyed,
    )
    .unwrap();
    // Java's order: a HashMap<BinaryRow, InternalRow> holding the key rows {1}, {2}, {3} with
    // {1} removed iterates [3, 2] (checked with Java 2.0's BinaryRowWriter and HashMap).
    assert_eq!(
        rows_of(&out),
        vec![(Some(3), Some("c".into())), (Some(2), Some("B".into()))]
    );
    let out = agg(
        "nested_update",
        ptype.clone(),
        at.clone(),
        Arc::clone(&list),
        "+I +I +I",
        &[],
    )
    .unwrap();
    assert_eq!(rows_of(&out).len(), 5);
    let limited = [("fields.v.count-limit", "3")];
    let out = agg(
        "nested_update",
        ptype.clone(),
        at.clone(),
        Arc::clone(&list),
        "+I +I +I",
        &limited,
    )
    .unwrap();
    assert_eq!(rows_of(&out).len(), 3);
    let out = agg("nested_partial_update", ptype, at, list, "+I +I +I", &keyed).unwrap();
    // Java's order: three HashMap<BinaryRow, GenericRow> filled with computeIfAbsent (keys
    // {1, 2}, then {1, 2, 2, 3}, then {.., 1}) iterate [3, 2, 1] (checked with Java 2.0).
    assert_eq!(
        rows_of(&out),
        vec![
            (Some(3), Some("c".into())),
            (Some(2), Some("B".into())),
            (Some(1), Some("zz".into()))
        ]
    );
}

#[test]
fn agg_merge_map_with_keytime() {
    // MAP<STRING, ROW<v INT, ts STRING>>: per key the row with the larger ts wins; a null
    // value removes the key; a null ts is ignored.
    let row_fields = Fields::from(vec![
        Field::new("v", AT::Int32, true),
        Field::new("ts", AT::Utf8, true),
    ]);
    let entries = Fields::from(vec![
        Field::new("key", AT::Utf8, false),
        Field::new("value", AT::Struct(row_fields.clone()), true),
    ]);
    let vals = StructArray::try_new(
        row_fields.clone(),
        vec![
            int_col(&[Some(1), Some(2), Some(3), Some(4), Some(5), Some(6)]),
            str_col(&[
                Some("t5"),
                Some("t5"),
                Some("t3"),
                Some("t9"),
                None,
                Some("t0"),
            ]),
        ],
        Some(vec![true, true, true, true, true, false].into()),
    )
    .unwrap();
    let keys = str_col(&[
        Some("a"),
        Some("b"),
        Some("a"),
        Some("b"),
        Some("c"),
        Some("a"),
    ]);
    let entry_struct =
        StructArray::try_new(entries.clone(), vec![keys, Arc::new(vals)], None).unwrap();
    let entries_field = Arc::new(Field::new("entries", AT::Struct(entries), false));
    let map: ArrayRef = Arc::new(
        MapArray::try_new(
            entries_field,
            arrow_buffer::OffsetBuffer::from_lengths([2, 3, 1]),
            entry_struct,
            None,
            false,
        )
        .unwrap(),
    );
    let string = DataType::nullable(TypeKind::VarChar {
        length: i32::MAX as u32,
    });
    let pt = TypeKind::Map(
        Box::new(string.with_nullable(false)),
        Box::new(DataType::nullable(TypeKind::Row(vec![
            pfield(10, "v", TypeKind::Int, true),
            pfield(
                11,
                "ts",
                TypeKind::VarChar {
                    length: i32::MAX as u32,
                },
                true,
            ),
        ]))),
    );
    let out = agg(
        "merge_map_with_keytime",
        pt,
        map.data_type().clone(),
        map,
        "+I +I +I",
        &[],
    )
    .unwrap();
    let m = out.as_map();
    let e = m.value(0);
    let ks = strs(e.column(0));
    let vs = i32s(e.column(1).as_struct().column(0));
    // a: t5 (v1) beats t3; then the null row removes a. b: t9 (v4) beats t5. c: null ts
    // ignored.
    assert_eq!(ks, vec![Some("b".to_string())]);
    assert_eq!(vs, vec![Some(4)]);
}

#[test]
fn agg_options_and_errors() {
    // ignore-retract keeps the accumulator.
    let v = agg(
        "max",
        TypeKind::Int,
        AT::Int32,
        int_col(&[Some(3), Some(9)]),
        "+I -U",
        &[("fields.v.ignore-retract", "true")],
    )
    .unwrap();
    assert_eq!(i32s(&v), vec![Some(3)]);
    // remove-record-on-delete: a -D deletes the row; -U still aggregates.
    let extra = [("aggregation.remove-record-on-delete", "true")];
    assert_eq!(
        agg(
            "sum",
            TypeKind::Int,
            AT::Int32,
            int_col(&[Some(3), Some(9)]),
            "+I -D",
            &extra
        )
        .unwrap()
        .len(),
        0
    );
    assert_eq!(
        i32s(
            &agg(
                "sum",
                TypeKind::Int,
                AT::Int32,
                int_col(&[Some(3), Some(9)]),
                "+I -U",
                &extra
            )
            .unwrap()
        ),
        vec![Some(-6)]
    );
    let both = [
        ("aggregation.remove-record-on-delete", "true"),
        ("fields.v.ignore-retract", "true"),
    ];
    assert!(
        agg(
            "sum",
            TypeKind::Int,
            AT::Int32,
            int_col(&[Some(3)]),
            "+I",
            &both
        )
        .unwrap_err()
        .to_string()
        .contains("conflicting")
    );
    for f in ["rbm64", "hll_sketch", "theta_sketch"] {
        let e = agg(
            f,
            TypeKind::VarBinary {
                length: i32::MAX as u32,
            },
            AT::Binary,
            Arc::new(arrow_array::BinaryArray::from(vec![&b"x"[..]])),
            "+I",
            &[],
        )
        .unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        assert!(e.to_string().contains(f), "{e}");
    }
    assert!(matches!(
        int_agg("count", &[Some(1)], "+I"),
        Err(Error::Unsupported { .. })
    ));
    assert!(int_agg("bool_and", &[Some(1)], "+I").is_err());
    assert!(int_agg("collect", &[Some(1)], "+I").is_err());
}

#[test]
fn agg_rbm32() {
    let ser = |v: &[u32]| {
        let b: roaring::RoaringBitmap = v.iter().copied().collect();
        let mut out = Vec::new();
        b.serialize_into(&mut out).unwrap();
        out
    };
    let input: ArrayRef = Arc::new(arrow_array::BinaryArray::from(vec![
        Some(ser(&[1, 5, 70000]).as_slice()),
        None,
        Some(ser(&[5, 6]).as_slice()),
    ]));
    let vb = TypeKind::VarBinary {
        length: i32::MAX as u32,
    };
    let out = agg("rbm32", vb.clone(), AT::Binary, input, "+I +I +I", &[]).unwrap();
    let bytes = out.as_binary::<i32>().value(0).to_vec();
    let got = roaring::RoaringBitmap::deserialize_from(bytes.as_slice()).unwrap();
    assert_eq!(got.iter().collect::<Vec<_>>(), vec![1, 5, 6, 70000]);
    let bad: ArrayRef = Arc::new(arrow_array::BinaryArray::from(vec![&b"xx"[..], &b"yy"[..]]));
    assert!(
        agg(
            "rbm32",
            vb.clone(),
            AT::Binary,
            Arc::clone(&bad),
            "+I +I",
            &[]
        )
        .is_err()
    );
    assert!(
        agg("rbm32", vb, AT::Binary, bad, "+I -U", &[])
            .unwrap_err()
            .to_string()
            .contains("does not support retraction")
    );
}

#[test]
fn agg_defaults_and_single_records() {
    // Java's default is last_non_null_value; fields.default-aggregate-function overrides;
    // sequence.field columns use last_value.
    let t = Table::new(
        vec![
            ("a", TypeKind::Int, AT::Int32),
            ("b", TypeKind::Int, AT::Int32),
            ("s", TypeKind::Int, AT::Int32),
        ],
        &[
            ("merge-engine", "aggregation"),
            ("fields.b.aggregate-function", "sum"),
        ],
    );
    let runs = vec![
        vec![t.batch(
            &[1, 2],
            &[0, 1],
            "+I -D",
            vec![
                int_col(&[Some(1), Some(5)]),
                int_col(&[Some(2), Some(5)]),
                int_col(&[Some(1), None]),
            ],
        )],
        vec![t.batch(
            &[1],
            &[2],
            "+I",
            vec![int_col(&[None]), int_col(&[Some(3)]), int_col(&[None])],
        )],
    ];
    let b = t.merge(runs.clone()).unwrap();
    // key 2 is a single -D record: passes through and is dropped.
    assert_eq!(i64s(&b, 0), vec![Some(1)]);
    assert_eq!(i32s(b.column(1)), vec![Some(1)]);
    assert_eq!(i32s(b.column(2)), vec![Some(5)]);
    assert_eq!(i32s(b.column(3)), vec![Some(1)]);
    let t2 = Table::new(
        vec![
            ("a", TypeKind::Int, AT::Int32),
            ("b", TypeKind::Int, AT::Int32),
            ("s", TypeKind::Int, AT::Int32),
        ],
        &[
            ("merge-engine", "aggregation"),
            ("fields.default-aggregate-function", "sum"),
            ("sequence.field", "s"),
        ],
    );
    let runs = vec![
        vec![t2.batch(
            &[1],
            &[0],
            "+I",
            vec![
                int_col(&[Some(1)]),
                int_col(&[Some(2)]),
                int_col(&[Some(1)]),
            ],
        )],
        vec![t2.batch(
            &[1],
            &[1],
            "+I",
            vec![int_col(&[Some(4)]), int_col(&[Some(3)]), int_col(&[None])],
        )],
    ];
    let b = t2.merge(runs).unwrap();
    // s=null sorts first, so the s=1 record is the newest: s keeps 1 (last_value).
    assert_eq!(i32s(b.column(1)), vec![Some(5)]);
    assert_eq!(i32s(b.column(3)), vec![Some(1)]);
}

/// Throughput of the merge over 4 overlapping runs (run with `--ignored --nocapture`).
#[test]
#[ignore]
fn merge_throughput() {
    let rows_per_run = 250_000i64;
    for engine in ["deduplicate", "aggregation"] {
        let t = Table::new(
            vec![
                ("v", TypeKind::Int, AT::Int32),
                (
                    "s",
                    TypeKind::VarChar {
                        length: i32::MAX as u32,
                    },
                    AT::Utf8,
                ),
            ],
            &[
                ("merge-engine", engine),
                ("fields.v.aggregate-function", "sum"),
            ],
        );
        let runs: Vec<Vec<RecordBatch>> = (0..4i64)
            .map(|r| {
                let keys: Vec<i64> = (0..rows_per_run).map(|i| i * 4 / 3 + r).collect();
                let seqs: Vec<i64> = (0..rows_per_run).map(|i| r * rows_per_run + i).collect();
                keys.chunks(8192)
                    .zip(seqs.chunks(8192))
                    .map(|(k, s)| {
                        let kinds = vec!["+I"; k.len()].join(" ");
                        let v: Vec<Option<i32>> = k.iter().map(|x| Some(*x as i32)).collect();
                        let st: Vec<String> = k.iter().map(|x| format!("value-{x}")).collect();
                        let st: Vec<Option<&str>> = st.iter().map(|x| Some(x.as_str())).collect();
                        t.batch(k, s, &kinds, vec![int_col(&v), str_col(&st)])
                    })
                    .collect()
            })
            .collect();
        let start = std::time::Instant::now();
        let out = t.merge_with(vec![0, 1, 2], runs, 4096).unwrap();
        let elapsed = start.elapsed();
        let n: usize = out.iter().map(|b| b.num_rows()).sum();
        println!(
            "{engine}: {} input rows -> {n} rows in {elapsed:?} ({:.2} M input rows/s)",
            4 * rows_per_run,
            (4 * rows_per_run) as f64 / elapsed.as_secs_f64() / 1e6
        );
    }
}

#[test]
fn aggregation_sweep_across_batches_and_runs() {
    // sum + listagg + collect over 3 runs with duplicate keys inside runs, split into batches
    // of 1..=3 rows, checked against a fold in sequence-number order.
    let string = TypeKind::VarChar {
        length: i32::MAX as u32,
    };
    let arr = TypeKind::Array(Box::new(DataType::nullable(TypeKind::Int)));
    let list_type = list_col(vec![]).data_type().clone();
    let t = Table::new(
        vec![
            ("s", TypeKind::Int, AT::Int32),
            ("l", string, AT::Utf8),
            ("c", arr, list_type),
        ],
        &[
            ("merge-engine", "aggregation"),
            ("fields.s.aggregate-function", "sum"),
            ("fields.l.aggregate-function", "listagg"),
            ("fields.c.aggregate-function", "collect"),
        ],
    );
    let mut rng = Lcg(7);
    let mut seq = 0i64;
    let mut runs_rows: Vec<Vec<(i64, i64, i32)>> = Vec::new();
    for _ in 0..3 {
        let mut rows = Vec::new();
        for k in 0..15i64 {
            for _ in 0..rng.next(3) {
                rows.push((k, seq, rng.next(100) as i32));
                seq += 1;
            }
        }
        runs_rows.push(rows);
    }
    let mut model: BTreeMap<i64, Vec<(i64, i32)>> = BTreeMap::new();
    for rows in &runs_rows {
        for &(k, s, v) in rows {
            model.entry(k).or_default().push((s, v));
        }
    }
    let expected: Vec<(i64, i32, String, Vec<Option<i32>>)> = model
        .into_iter()
        .map(|(k, mut recs)| {
            recs.sort();
            let vals: Vec<i32> = recs.iter().map(|r| r.1).collect();
            let l = vals
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",");
            (
                k,
                vals.iter().sum(),
                l,
                vals.iter().map(|v| Some(*v)).collect(),
            )
        })
        .collect();
    for size in 1..=3usize {
        let runs: Vec<Vec<RecordBatch>> = runs_rows
            .iter()
            .map(|rows| {
                rows.chunks(size)
                    .map(|c| {
                        let keys: Vec<i64> = c.iter().map(|r| r.0).collect();
                        let seqs: Vec<i64> = c.iter().map(|r| r.1).collect();
                        let kinds = vec!["+I"; c.len()].join(" ");
                        let vals: Vec<Option<i32>> = c.iter().map(|r| Some(r.2)).collect();
                        let strs_: Vec<String> = c.iter().map(|r| r.2.to_string()).collect();
                        let strs_: Vec<Option<&str>> =
                            strs_.iter().map(|s| Some(s.as_str())).collect();
                        let lists = list_col(c.iter().map(|r| Some(vec![Some(r.2)])).collect());
                        t.batch(
                            &keys,
                            &seqs,
                            &kinds,
                            vec![int_col(&vals), str_col(&strs_), lists],
                        )
                    })
                    .collect()
            })
            .collect();
        let b = t.merge(runs).unwrap();
        let keys = i64s(&b, 0);
        let sums = i32s(b.column(1));
        let ls = strs(b.column(2));
        let cs = list_out(b.column(3));
        let got: Vec<(i64, i32, String, Vec<Option<i32>>)> = (0..b.num_rows())
            .map(|i| {
                (
                    keys[i].unwrap(),
                    sums[i].unwrap(),
                    ls[i].clone().unwrap(),
                    cs[i].clone().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, expected, "batch size {size}");
    }
}

// ---------------------------------------------------------------------------------------
// Fast paths: pass-through of single-record keys, native integer keys, column-wise merges

#[derive(Debug, Clone, Copy, PartialEq)]
enum KeyKind {
    Long,
    Int,
    Str,
}

/// One record of a generated run.
#[derive(Debug, Clone)]
struct FRec {
    key: i64,
    seq: i64,
    kind: i8,
    v: Option<i32>,
    s: Option<String>,
    d: Option<f64>,
}

/// A table keyed by `k` (BIGINT, INT or STRING of zero-padded digits, so every key kind
/// orders the records alike) with value fields `k`, `v` INT, `s` STRING, `d` DOUBLE.
struct FTable {
    cfg: MergeConfig,
    schema: SchemaRef,
    key: KeyKind,
}

impl FTable {
    fn new(key: KeyKind, options: &[(&str, &str)]) -> Self {
        let string = TypeKind::VarChar {
            length: i32::MAX as u32,
        };
        let (kt, kat) = match key {
            KeyKind::Long => (TypeKind::BigInt, AT::Int64),
            KeyKind::Int => (TypeKind::Int, AT::Int32),
            KeyKind::Str => (string.clone(), AT::Utf8),
        };
        let fields = vec![
            pfield(0, "k", kt, false),
            pfield(1, "v", TypeKind::Int, true),
            pfield(2, "s", string, true),
            pfield(3, "d", TypeKind::Double, true),
        ];
        let arrow = vec![
            Field::new("_KEY_k", kat.clone(), false),
            Field::new("_SEQUENCE_NUMBER", AT::Int64, false),
            Field::new("_VALUE_KIND", AT::Int8, false),
            Field::new("k", kat, false),
            Field::new("v", AT::Int32, true),
            Field::new("s", AT::Utf8, true),
            Field::new("d", AT::Float64, true),
        ];
        let opts: BTreeMap<String, String> = options
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let cfg = MergeConfig::from_table_options(fields, vec!["k".into()], vec![], &opts).unwrap();
        FTable {
            cfg,
            schema: Arc::new(Schema::new(arrow)),
            key,
        }
    }

    fn key_col(&self, recs: &[FRec]) -> ArrayRef {
        match self.key {
            KeyKind::Long => Arc::new(Int64Array::from_iter_values(recs.iter().map(|r| r.key))),
            KeyKind::Int => Arc::new(Int32Array::from_iter_values(
                recs.iter().map(|r| r.key as i32),
            )),
            KeyKind::Str => Arc::new(StringArray::from_iter_values(
                recs.iter().map(|r| format!("k{:06}", r.key)),
            )),
        }
    }

    fn batch(&self, recs: &[FRec]) -> RecordBatch {
        let cols: Vec<ArrayRef> = vec![
            self.key_col(recs),
            Arc::new(Int64Array::from_iter_values(recs.iter().map(|r| r.seq))),
            Arc::new(Int8Array::from_iter_values(recs.iter().map(|r| r.kind))),
            self.key_col(recs),
            Arc::new(Int32Array::from(
                recs.iter().map(|r| r.v).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                recs.iter().map(|r| r.s.clone()).collect::<Vec<_>>(),
            )),
            Arc::new(arrow_array::Float64Array::from(
                recs.iter().map(|r| r.d).collect::<Vec<_>>(),
            )),
        ];
        RecordBatch::try_new(Arc::clone(&self.schema), cols).unwrap()
    }

    /// Each run cut into batches of `sizes[i % len]` records.
    fn runs(&self, runs: &[Vec<FRec>], sizes: &[usize]) -> Vec<Vec<RecordBatch>> {
        runs.iter()
            .map(|recs| {
                let mut out = Vec::new();
                let mut at = 0;
                let mut i = 0;
                while at < recs.len() {
                    let n = sizes[i % sizes.len()].max(1).min(recs.len() - at);
                    out.push(self.batch(&recs[at..at + n]));
                    at += n;
                    i += 1;
                }
                out
            })
            .collect()
    }

    /// Merge into one batch (None for no rows), with or without the fast paths; every
    /// output batch holds 1..=`batch_size` rows.
    fn merge(
        &self,
        output: &[usize],
        runs: Vec<Vec<RecordBatch>>,
        batch_size: usize,
        fast: bool,
    ) -> crate::Result<Option<RecordBatch>> {
        let runs: Vec<Box<dyn RunSource>> = runs
            .into_iter()
            .map(|r| Box::new(MemoryRunSource::new(r)) as Box<dyn RunSource>)
            .collect();
        let mut reader = MergeReader::try_new(
            &self.cfg,
            Arc::clone(&self.schema),
            output.to_vec(),
            runs,
            batch_size,
        )?;
        reader.set_fast_paths(fast);
        let mut out = Vec::new();
        while let Some(b) = block_on(reader.next_batch())? {
            assert!(b.num_rows() <= batch_size.max(1) && b.num_rows() > 0);
            out.push(b);
        }
        if out.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            arrow_select::concat::concat_batches(&reader.schema(), &out).unwrap(),
        ))
    }
}

fn frec(key: i64, seq: i64, kind: &str, v: Option<i32>) -> FRec {
    let kind = match kind {
        "+I" => 0,
        "-U" => 1,
        "+U" => 2,
        "-D" => 3,
        other => panic!("kind {other}"),
    };
    FRec {
        key,
        seq,
        kind,
        v,
        s: v.map(|x| format!("s{x}")),
        d: v.map(|x| f64::from(x) / 4.0),
    }
}

/// Random runs: each covers a random key range (densely or sparsely), some keys repeat
/// inside a run (newer sequence number later), later runs are newer.
fn random_runs(rng: &mut Lcg, retracts: bool, big: bool) -> Vec<Vec<FRec>> {
    let nruns = 1 + rng.next(4) as usize;
    let mut seq = 0i64;
    let mut runs = Vec::new();
    for _ in 0..nruns {
        let lo = rng.next(60) as i64;
        let hi = lo + 1 + rng.next(80) as i64;
        let density = 1 + rng.next(4);
        let mut recs = Vec::new();
        for key in lo..hi {
            if rng.next(4) >= density {
                continue;
            }
            let copies = if rng.next(6) == 0 { 2 } else { 1 };
            for _ in 0..copies {
                let kind = if retracts && rng.next(5) == 0 {
                    ["-U", "+U", "-D"][rng.next(3) as usize]
                } else {
                    "+I"
                };
                let v = if rng.next(4) == 0 {
                    None
                } else if big {
                    Some(i32::MAX / 2 + rng.next(1000) as i32)
                } else {
                    Some(rng.next(1000) as i32 - 500)
                };
                let mut r = frec(key, seq, kind, v);
                if rng.next(5) == 0 {
                    r.s = None;
                }
                if rng.next(5) == 0 {
                    r.d = None;
                }
                recs.push(r);
                seq += 1;
            }
        }
        runs.push(recs);
    }
    runs
}

fn error_text(r: &crate::Result<Option<RecordBatch>>) -> Option<String> {
    r.as_ref().err().map(|e| e.to_string())
}

#[test]
fn fast_paths_match_the_record_by_record_merge() {
    // Every configuration, key kind, batch cut and output batch size: the fast paths give
    // the same batches (or the same error) as the record-by-record merge, and every key
    // kind gives the same rows.
    // (options, with retractions, with sums that overflow INT)
    type Config<'a> = (Vec<(&'a str, &'a str)>, bool, bool);
    let configs: Vec<Config<'_>> = vec![
        (vec![], true, false),
        (vec![("ignore-delete", "true")], true, false),
        (vec![("sequence.field", "v")], true, false),
        (vec![("merge-engine", "first-row")], false, false),
        (
            vec![("merge-engine", "first-row"), ("ignore-delete", "true")],
            true,
            false,
        ),
        (vec![("merge-engine", "partial-update")], false, false),
        (
            vec![
                ("merge-engine", "partial-update"),
                ("partial-update.remove-record-on-delete", "true"),
            ],
            true,
            false,
        ),
        (
            vec![
                ("merge-engine", "partial-update"),
                ("fields.v.sequence-group", "d"),
            ],
            false,
            false,
        ),
        (
            vec![
                ("merge-engine", "aggregation"),
                ("fields.v.aggregate-function", "sum"),
                ("fields.d.aggregate-function", "sum"),
            ],
            true,
            false,
        ),
        (
            vec![
                ("merge-engine", "aggregation"),
                ("fields.v.aggregate-function", "sum"),
            ],
            false,
            true,
        ),
        (
            vec![
                ("merge-engine", "aggregation"),
                ("fields.v.aggregate-function", "max"),
                ("fields.s.aggregate-function", "min"),
                ("fields.d.aggregate-function", "max"),
            ],
            false,
            false,
        ),
        (
            vec![
                ("merge-engine", "aggregation"),
                ("fields.v.aggregate-function", "min"),
                ("fields.s.aggregate-function", "first_value"),
                ("fields.d.aggregate-function", "first_non_null_value"),
            ],
            false,
            false,
        ),
        (
            vec![
                ("merge-engine", "aggregation"),
                ("fields.v.aggregate-function", "last_value"),
                ("fields.s.aggregate-function", "listagg"),
            ],
            false,
            false,
        ),
        (
            vec![
                ("merge-engine", "aggregation"),
                ("fields.v.aggregate-function", "max"),
                ("fields.s.aggregate-function", "max"),
                ("fields.d.aggregate-function", "min"),
            ],
            false,
            false,
        ),
        (
            vec![
                ("merge-engine", "aggregation"),
                ("fields.v.aggregate-function", "first_non_null_value"),
                ("fields.s.aggregate-function", "last_value"),
                ("fields.d.aggregate-function", "max"),
            ],
            false,
            false,
        ),
        (
            vec![
                ("merge-engine", "aggregation"),
                ("fields.d.aggregate-function", "sum"),
            ],
            false,
            false,
        ),
    ];
    let cuts: [&[usize]; 5] = [&[1], &[2, 3], &[7], &[1, 5, 2], &[1000]];
    let mut checked = 0;
    for (ci, (opts, retracts, big)) in configs.iter().enumerate() {
        for seed in 0..12u64 {
            let mut rng = Lcg(seed * 31 + ci as u64);
            let runs = random_runs(&mut rng, *retracts, *big);
            let output: Vec<usize> = match seed % 3 {
                0 => vec![0, 1, 2, 3],
                1 => vec![3, 1, 0],
                _ => vec![2],
            };
            let mut by_key_kind: Vec<crate::Result<Option<RecordBatch>>> = Vec::new();
            for key in [KeyKind::Long, KeyKind::Int, KeyKind::Str] {
                let t = FTable::new(key, opts);
                let cut = cuts[(seed as usize + ci) % cuts.len()];
                let batch_size = [1, 3, 16, 4096][(seed as usize / 3) % 4];
                let slow = t.merge(&output, t.runs(&runs, cut), batch_size, false);
                let fast = t.merge(&output, t.runs(&runs, cut), batch_size, true);
                let what = format!("config {opts:?} seed {seed} key {key:?}");
                assert_eq!(error_text(&fast), error_text(&slow), "{what}");
                if let (Ok(f), Ok(s)) = (&fast, &slow) {
                    assert_eq!(f, s, "{what}");
                }
                checked += 1;
                by_key_kind.push(fast);
            }
            // The value columns do not depend on how the key is compared.
            let non_key: Vec<usize> = output
                .iter()
                .enumerate()
                .filter(|(_, c)| **c != 0)
                .map(|(i, _)| i)
                .collect();
            let project = |r: &crate::Result<Option<RecordBatch>>| match r {
                Ok(Some(b)) => Ok(Some(b.project(&non_key).unwrap())),
                Ok(None) => Ok(None),
                Err(e) => Err(e.to_string()),
            };
            assert_eq!(project(&by_key_kind[0]), project(&by_key_kind[1]));
            assert_eq!(project(&by_key_kind[0]), project(&by_key_kind[2]));
        }
    }
    assert_eq!(checked, configs.len() * 12 * 3);
}

#[test]
fn dedup_fast_path_matches_a_model() {
    // The newest record of each key (by sequence number, retract before add on ties) is
    // kept when it is an add.
    for seed in 0..40u64 {
        let mut rng = Lcg(1000 + seed);
        let runs = random_runs(&mut rng, true, false);
        let mut model: BTreeMap<i64, (i64, bool, i8, Option<i32>)> = BTreeMap::new();
        for r in runs.iter().flatten() {
            let add = r.kind == 0 || r.kind == 2;
            let e = model.entry(r.key).or_insert((r.seq, add, r.kind, r.v));
            if (r.seq, add) >= (e.0, e.1) {
                *e = (r.seq, add, r.kind, r.v);
            }
        }
        let expected: Vec<(i64, Option<i32>)> = model
            .into_iter()
            .filter(|(_, e)| e.1)
            .map(|(k, e)| (k, e.3))
            .collect();
        let t = FTable::new(KeyKind::Long, &[]);
        let got = t
            .merge(&[0, 1], t.runs(&runs, &[1 + seed as usize % 9]), 5, true)
            .unwrap();
        let got: Vec<(i64, Option<i32>)> = match got {
            None => vec![],
            Some(b) => i64s(&b, 0)
                .into_iter()
                .zip(i32s(b.column(1)))
                .map(|(k, v)| (k.unwrap(), v))
                .collect(),
        };
        assert_eq!(got, expected, "seed {seed}");
    }
}

#[test]
fn pass_through_of_non_overlapping_runs() {
    // Run 0 holds keys 0..10 and 20..30, run 1 keys 10..20: no key is in two runs, so the
    // rows pass through as slices of their batches (a retract among them is dropped).
    let t = FTable::new(KeyKind::Long, &[]);
    let mut run0: Vec<FRec> = (0..10).map(|k| frec(k, k, "+I", Some(k as i32))).collect();
    run0.extend((20..30).map(|k| frec(k, k, "+I", Some(k as i32))));
    run0[4].kind = 3; // key 4: -D
    let run1: Vec<FRec> = (10..20)
        .map(|k| frec(k, 100 + k, "+I", Some(k as i32)))
        .collect();
    for cut in [&[1usize][..], &[4], &[3, 7], &[100]] {
        for batch_size in [1, 4, 7, 100] {
            let b = t
                .merge(
                    &[0, 1, 2],
                    t.runs(&[run0.clone(), run1.clone()], cut),
                    batch_size,
                    true,
                )
                .unwrap()
                .unwrap();
            let expected: Vec<i64> = (0..30).filter(|k| *k != 4).collect();
            let keys: Vec<i64> = i64s(&b, 0).into_iter().map(Option::unwrap).collect();
            assert_eq!(keys, expected, "cut {cut:?} batch size {batch_size}");
            let vs: Vec<Option<i32>> = expected.iter().map(|k| Some(*k as i32)).collect();
            assert_eq!(i32s(b.column(1)), vs);
            let ss: Vec<Option<String>> = expected.iter().map(|k| Some(format!("s{k}"))).collect();
            assert_eq!(strs(b.column(2)), ss);
        }
    }
    // A single run passes through whole batches: one output batch is a slice of the input.
    let run: Vec<FRec> = (0..50).map(|k| frec(k, k, "+I", Some(k as i32))).collect();
    let b = t
        .merge(&[1], t.runs(&[run], &[1000]), 4096, true)
        .unwrap()
        .unwrap();
    assert_eq!(b.num_rows(), 50);
}

#[test]
fn key_spanning_a_batch_boundary_inside_a_run() {
    // Key 5 is the last row of one batch and the first row of the next batch of the same
    // run: its two records merge (dedup keeps the newer, sum adds both).
    let run: Vec<FRec> = vec![
        frec(3, 0, "+I", Some(1)),
        frec(5, 1, "+I", Some(10)),
        frec(5, 2, "+I", Some(20)),
        frec(6, 3, "+I", Some(100)),
    ];
    let dedup = FTable::new(KeyKind::Long, &[]);
    let sum = FTable::new(
        KeyKind::Long,
        &[
            ("merge-engine", "aggregation"),
            ("fields.v.aggregate-function", "sum"),
        ],
    );
    for key in [KeyKind::Long, KeyKind::Str] {
        let dedup = FTable::new(key, &[]);
        let b = dedup
            .merge(&[1], dedup.runs(std::slice::from_ref(&run), &[2]), 10, true)
            .unwrap()
            .unwrap();
        assert_eq!(i32s(b.column(0)), vec![Some(1), Some(20), Some(100)]);
    }
    let b = dedup
        .merge(
            &[0, 1],
            dedup.runs(std::slice::from_ref(&run), &[2]),
            10,
            true,
        )
        .unwrap()
        .unwrap();
    assert_eq!(i64s(&b, 0), vec![Some(3), Some(5), Some(6)]);
    let b = sum
        .merge(
            &[0, 1, 2],
            sum.runs(std::slice::from_ref(&run), &[2]),
            10,
            true,
        )
        .unwrap()
        .unwrap();
    assert_eq!(i32s(b.column(1)), vec![Some(1), Some(30), Some(100)]);
    // s: last_non_null_value
    assert_eq!(
        strs(b.column(2)),
        vec![Some("s1".into()), Some("s20".into()), Some("s100".into())]
    );
}

#[test]
fn equal_keys_across_runs_at_batch_edges() {
    // Run 0's batches end with keys 2 and 5; run 1's batches start with keys 2 and 5: the
    // records meet at the batch edges and merge; the others pass through.
    let run0 = vec![
        frec(1, 0, "+I", Some(1)),
        frec(2, 1, "+I", Some(2)),
        frec(4, 2, "+I", Some(4)),
        frec(5, 3, "+I", Some(5)),
    ];
    let run1 = vec![
        frec(2, 10, "+I", Some(20)),
        frec(3, 11, "+I", Some(30)),
        frec(5, 12, "-D", None),
        frec(7, 13, "+I", Some(70)),
    ];
    let sum = FTable::new(
        KeyKind::Long,
        &[
            ("merge-engine", "aggregation"),
            ("fields.v.aggregate-function", "sum"),
            ("fields.d.aggregate-function", "max"),
            ("fields.d.ignore-retract", "true"),
        ],
    );
    let dedup = FTable::new(KeyKind::Int, &[]);
    for batch_size in [1, 2, 100] {
        let b = dedup
            .merge(
                &[0, 1],
                dedup.runs(&[run0.clone(), run1.clone()], &[2]),
                batch_size,
                true,
            )
            .unwrap()
            .unwrap();
        let keys: Vec<Option<i32>> = i32s(b.column(0));
        assert_eq!(keys, vec![Some(1), Some(2), Some(3), Some(4), Some(7)]);
        assert_eq!(
            i32s(b.column(1)),
            vec![Some(1), Some(20), Some(30), Some(4), Some(70)]
        );
        // Aggregation: retract -D of key 5 subtracts nothing (null) from the sum.
        let b = sum
            .merge(
                &[0, 1, 3],
                sum.runs(&[run0.clone(), run1.clone()], &[2]),
                batch_size,
                true,
            )
            .unwrap()
            .unwrap();
        assert_eq!(
            i64s(&b, 0),
            vec![Some(1), Some(2), Some(3), Some(4), Some(5), Some(7)]
        );
        assert_eq!(
            i32s(b.column(1)),
            vec![Some(1), Some(22), Some(30), Some(4), Some(5), Some(70)]
        );
        let d: Vec<Option<f64>> = b
            .column(2)
            .as_primitive::<arrow_array::types::Float64Type>()
            .iter()
            .collect();
        assert_eq!(
            d,
            vec![
                Some(0.25),
                Some(5.0),
                Some(7.5),
                Some(1.0),
                Some(1.25),
                Some(17.5)
            ]
        );
    }
}
