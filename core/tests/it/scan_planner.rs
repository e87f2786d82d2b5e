//! Scan planning over the corpus: live files, level-0 and postpone-bucket rules, deletion
//! files, time travel, schemas of the files.

use std::collections::BTreeSet;

use paimon_kernel::io::{Io, Machine};
use paimon_kernel::scan::{Plan, ScanRequest, TableKind, plan_scan};

use crate::common::{corpus_tables, expected, load_table};

fn plan(table: &str, request: ScanRequest) -> Plan {
    let mut store = load_table(table);
    let machine: Machine<Plan> = Machine::once("plan", move |io: Io<Plan>| async move {
        plan_scan(&io, &request).await
    });
    let mut out = store
        .run(machine)
        .unwrap_or_else(|e| panic!("{table}: {e}"));
    assert_eq!(out.len(), 1);
    out.remove(0)
}

fn planned_files(plan: &Plan) -> BTreeSet<(i32, String)> {
    plan.splits
        .iter()
        .flat_map(|s| s.data_files.iter().map(|f| (s.bucket, f.file_name.clone())))
        .collect()
}

#[test]
fn latest_plan_lists_the_readable_live_files_of_every_corpus_table() {
    for table in corpus_tables() {
        let exp = expected(&table);
        let p = plan(&table, ScanRequest::default());
        assert_eq!(
            p.snapshot.as_ref().map(|s| s.id),
            exp["snapshot_id"].as_i64(),
            "{table}"
        );
        let opts = &exp["options"];
        let is_pk = !exp["primary_keys"].as_array().unwrap().is_empty();
        let opt = |k: &str| opts.get(k).and_then(|v| v.as_str()).unwrap_or("");
        // Java CoreOptions.batchScanSkipLevel0.
        let skip_level0 = is_pk
            && if opt("deletion-vectors.enabled") == "true" {
                opt("deletion-vectors.merge-on-read") != "true"
            } else {
                opt("merge-engine") == "first-row"
            };
        let want: BTreeSet<(i32, String)> = exp["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| !(skip_level0 && f["level"].as_i64() == Some(0)))
            .filter(|f| f["bucket"].as_i64().unwrap() >= 0 || opt("bucket") != "-2")
            .map(|f| {
                (
                    f["bucket"].as_i64().unwrap() as i32,
                    f["file_path"]
                        .as_str()
                        .unwrap()
                        .rsplit('/')
                        .next()
                        .unwrap()
                        .to_string(),
                )
            })
            .collect();
        assert_eq!(planned_files(&p), want, "{table}");
        // Every file's schema is in the plan.
        for s in &p.splits {
            for f in &s.data_files {
                assert!(
                    p.schemas.contains_key(&f.schema_id),
                    "{table}: schema {}",
                    f.schema_id
                );
            }
            // Splits of one bucket hold files of that bucket's directory.
            assert!(
                s.bucket_path.ends_with(&format!("bucket-{}", s.bucket)),
                "{table}: {}",
                s.bucket_path
            );
        }
        let kind = if is_pk {
            TableKind::PrimaryKey
        } else if opt("data-evolution.enabled") == "true" {
            TableKind::DataEvolution
        } else {
            TableKind::Append
        };
        assert_eq!(p.table_kind, kind, "{table}");
    }
}

#[test]
fn level0_rule_empties_first_row_and_dv_tables() {
    assert!(
        plan("pk_first_row", ScanRequest::default())
            .splits
            .is_empty()
    );
    assert!(plan("pk_dv", ScanRequest::default()).splits.is_empty());
    assert!(!plan("pk_dv_mor", ScanRequest::default()).splits.is_empty());
    assert!(
        !plan("pk_first_row_dv_mor", ScanRequest::default())
            .splits
            .is_empty()
    );
}

#[test]
fn deletion_files_are_attached_to_their_data_files() {
    for table in ["de_dv_delete", "de_merge_into"] {
        let exp = expected(table);
        let p = plan(table, ScanRequest::default());
        let mut attached = BTreeSet::new();
        for s in &p.splits {
            let dvs = s.deletion_files.as_ref().expect("deletion files");
            assert_eq!(dvs.len(), s.data_files.len());
            for (f, dv) in s.data_files.iter().zip(dvs) {
                if let Some(dv) = dv {
                    assert!(dv.path.starts_with("index/"), "{}", dv.path);
                    attached.insert((f.file_name.clone(), dv.cardinality));
                }
            }
        }
        let mut want = BTreeSet::new();
        for idx in exp["index_files"].as_array().unwrap() {
            if idx["index_type"] != "DELETION_VECTORS" {
                continue;
            }
            for r in idx["dv_ranges"].as_array().unwrap() {
                want.insert((
                    r["f0"].as_str().unwrap().to_string(),
                    r["_CARDINALITY"].as_i64(),
                ));
            }
        }
        assert!(!want.is_empty(), "{table}");
        assert_eq!(attached, want, "{table}");
    }
}

#[test]
fn time_travel_reads_the_snapshot_and_its_schema() {
    for table in corpus_tables() {
        let exp = expected(&table);
        for read in exp["additional_reads"].as_array().unwrap() {
            let mut request = ScanRequest::default();
            for (k, v) in read["options"].as_object().unwrap() {
                request = request.with_option(k, v.as_str().unwrap());
            }
            let p = plan(&table, request);
            let label = read["label"].as_str().unwrap();
            assert_eq!(
                p.snapshot.as_ref().map(|s| s.id),
                read["snapshot_id"].as_i64(),
                "{table} {label}"
            );
            assert_eq!(
                Some(p.schema.id),
                read["schema_id"].as_i64(),
                "{table} {label}"
            );
        }
    }
}

#[test]
fn plans_are_serde_values() {
    let p = plan("pk_dedup_partitioned", ScanRequest::default());
    let json = serde_json::to_string(&p).unwrap();
    let back: Plan = serde_json::from_str(&json).unwrap();
    assert_eq!(back, p);
    assert!(p.splits.iter().all(|s| s.bucket_path.starts_with("dt=")));
}

#[test]
fn append_bin_packing_follows_target_size() {
    // Tiny target: every file its own split; default: one split per bucket.
    let p = plan("append_parquet", ScanRequest::default());
    assert_eq!(p.splits.len(), 1);
    let p = plan(
        "append_parquet",
        ScanRequest::default()
            .with_option("source.split.target-size", "1 b")
            .with_option("source.split.open-file-cost", "1 b"),
    );
    assert_eq!(p.splits.len(), 2);
    // Ordered by min sequence number within the bucket.
    let seqs: Vec<i64> = p
        .splits
        .iter()
        .map(|s| s.data_files[0].min_sequence_number)
        .collect();
    let mut sorted = seqs.clone();
    sorted.sort();
    assert_eq!(seqs, sorted);
}
