//! Scans over corpus tables in a `MemoryStore`: the same rows as the expected files.

use paimon_kernel::io::MemoryStore;
use serde_json::Value;

use super::*;
use crate::ops::tests_support::{expected, load};

fn scan_native(store: &mut MemoryStore, q: &Query) -> Result<Value> {
    let request = scan_request(q)?;
    let plan = store
        .run(Machine::once("plan", |io| async move {
            plan_scan(&io, &request).await
        }))?
        .pop()
        .unwrap();
    let setup = setup(&plan, q)?;
    let batches = store.run(read_splits(
        Arc::new(setup.ctx.clone()),
        setup.splits.clone(),
    ))?;
    let out = ScanOutput {
        snapshot_id: plan.snapshot.as_ref().map(|s| s.id),
        schema: setup.ctx.output_schema.clone(),
        columns: columns_of(&setup),
        batches,
    };
    // The IPC stream reads back as the same batches.
    let ipc = to_ipc(&out)?;
    let back: Vec<RecordBatch> =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(ipc), None)
            .unwrap()
            .collect::<std::result::Result<_, _>>()
            .unwrap();
    assert_eq!(back, out.batches);
    to_json(&out)
}

fn sorted(rows: &Value) -> Vec<String> {
    let mut v: Vec<String> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn latest_and_additional_reads_match_the_expected_rows() {
    for table in [
        "pk_dedup",
        "append_partitioned",
        "evo_append",
        "append_tags_rollback",
        "pk_aggregation",
    ] {
        let mut store = load(table);
        let exp = expected(table);
        let got = scan_native(&mut store, &Query::default()).unwrap();
        assert_eq!(got["snapshotId"], exp["snapshot_id"], "{table}");
        assert_eq!(sorted(&got["rows"]), sorted(&exp["rows"]), "{table}");
        for r in exp["additional_reads"].as_array().unwrap() {
            let q: Query = serde_json::from_value(serde_json::json!({
                "options": r["options"],
                "columns": r["projection"],
            }))
            .unwrap();
            let got = scan_native(&mut store, &q).unwrap();
            assert_eq!(
                sorted(&got["rows"]),
                sorted(&r["rows"]),
                "{table} {}",
                r["label"]
            );
        }
    }
}

#[test]
fn row_ids_limit_and_projection() {
    let mut store = load("blob_single");
    let exp = expected("blob_single");
    let with_ids = exp["additional_reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "latest-with-row-id")
        .unwrap();
    let q: Query =
        serde_json::from_value(serde_json::json!({"columns": ["_ROW_ID", "id", "label"]})).unwrap();
    let got = scan_native(&mut store, &q).unwrap();
    let want: Vec<Value> = with_ids["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| serde_json::json!({"_ROW_ID": r["_ROW_ID"], "id": r["id"], "label": r["label"]}))
        .collect();
    assert_eq!(sorted(&got["rows"]), sorted(&Value::Array(want.clone())));
    // Row ids: two ranges, pushed down; _ROW_ID need not be projected.
    let q: Query =
        serde_json::from_value(serde_json::json!({"columns": ["id"], "rowIds": "0-1,7"})).unwrap();
    let got = scan_native(&mut store, &q).unwrap();
    let want_ids: Vec<Value> = want
        .iter()
        .filter(|r| matches!(r["_ROW_ID"].as_i64().unwrap(), 0 | 1 | 7))
        .map(|r| serde_json::json!({"id": r["id"]}))
        .collect();
    assert!(!want_ids.is_empty());
    assert_eq!(sorted(&got["rows"]), sorted(&Value::Array(want_ids)));
    assert_eq!(
        got["columns"],
        serde_json::json!([{"name": "id", "type": "INT"}])
    );
    let q: Query =
        serde_json::from_value(serde_json::json!({"columns": ["id"], "limit": 3})).unwrap();
    assert_eq!(scan_native(&mut store, &q).unwrap()["rowCount"], 3);
    // Errors, not panics.
    for bad in [
        serde_json::json!({"columns": ["nope"]}),
        serde_json::json!({"rowIds": "5-1"}),
        serde_json::json!({"filter": "id >"}),
    ] {
        let q: Query = serde_json::from_value(bad).unwrap();
        assert!(scan_native(&mut store, &q).is_err());
    }
    let mut pk = load("pk_dedup");
    let q: Query = serde_json::from_value(serde_json::json!({"rowIds": "0"})).unwrap();
    let err = scan_native(&mut pk, &q).unwrap_err();
    assert!(err.to_string().contains("row-tracking"), "{err}");
}

#[test]
fn bigint_beyond_the_safe_range_becomes_an_exact_string_for_js() {
    let mut store = load("all_types_parquet");
    let exp = expected("all_types_parquet");
    let q: Query =
        serde_json::from_value(serde_json::json!({"columns": ["id", "t_bigint", "t_int"]}))
            .unwrap();
    let got = crate::js_safe_integers(scan_native(&mut store, &q).unwrap());
    let by_id = |rows: &Value, id: &Value| -> Value {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| &r["id"] == id)
            .unwrap()
            .clone()
    };
    let mut strings = 0;
    for want in exp["rows"].as_array().unwrap() {
        let row = by_id(&got["rows"], &want["id"]);
        let b = &want["t_bigint"];
        match b.as_i64() {
            Some(v) if v.unsigned_abs() > crate::MAX_SAFE_INTEGER => {
                assert_eq!(row["t_bigint"], Value::String(v.to_string()));
                strings += 1;
            }
            _ => assert_eq!(&row["t_bigint"], b),
        }
        // INT never becomes a string.
        assert_eq!(row["t_int"], want["t_int"]);
    }
    assert!(strings >= 6, "the corpus has BIGINT extremes");
    assert_eq!(
        crate::js_safe_integers(serde_json::json!([
            9007199254740991_i64,
            -9007199254740992_i64,
            1.5e300,
            u64::MAX
        ])),
        serde_json::json!([
            9007199254740991_i64,
            "-9007199254740992",
            1.5e300,
            "18446744073709551615"
        ])
    );
}
