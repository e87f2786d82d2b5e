//! Managed BLOBs in primary-key tables and blob placeholders, against Java Paimon 2.0.0
//! (java-check, `crate::oracle`; every Java step of a test runs in one or two JVMs through
//! `batch`):
//!
//! * we write a managed-BLOB table (`BLOB`, `ARRAY<BLOB>`, `MAP<INT, BLOB>`; packs rolling
//!   small) through writes, overwrites, retractions, a delete, a full compaction, expire and
//!   pack collection: Java reads every snapshot (and the collected copy) with every blob's
//!   bytes as we read them;
//! * Java writes one (writes, retractions, its full compaction): we read every snapshot as
//!   Java does, our sidecar encoder gives Java's `.blobref` bytes for Java's pack names, and for
//!   the same input rows our packs and sidecars equal Java's (names aside);
//! * a data-evolution table with a `.blob` column updated through placeholders, by us and by
//!   Java (`update --placeholders`) in turns, then compacted by us and by Java: each side reads
//!   every snapshot of the other's as its writer does, and both equal the model.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use paimon_kernel::canonical;
use paimon_kernel::format::blob_ref::{decode_blobref, encode_blobref, java_string_cmp};
use paimon_native::Table;
use serde_json::{Value, json};

use crate::delete_dv::{create, ok, write};
use crate::oracle::{JavaOutcome, java_batch, jcmd};

/// Deterministic payload `i` of `len` bytes.
fn payload(i: u64, len: usize) -> Vec<u8> {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Our rows of `loc` (at `snapshot`, else the latest) as sorted canonical JSON lines.
async fn our_rows(loc: &str, snapshot: Option<i64>) -> Vec<String> {
    let table = Table::open(loc).await.unwrap();
    let mut scan = table.scan();
    if let Some(s) = snapshot {
        scan = scan.with_snapshot_id(s);
    }
    let mut rows: Vec<String> = Vec::new();
    for b in scan.to_batches().await.unwrap() {
        for r in canonical::rows(&b).unwrap() {
            rows.push(serde_json::to_string(&r).unwrap());
        }
    }
    rows.sort();
    rows
}

/// Snapshot ids of the table (from its `snapshot/` directory), ascending.
fn snapshot_ids(loc: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = std::fs::read_dir(Path::new(loc).join("snapshot"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_prefix("snapshot-")?.parse().ok()
        })
        .collect();
    ids.sort();
    ids
}

/// Every file under `dir` whose name ends with `suffix`, by name.
fn files_ending(dir: &Path, suffix: &str) -> BTreeMap<String, PathBuf> {
    fn walk(d: &Path, suffix: &str, out: &mut BTreeMap<String, PathBuf>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, suffix, out);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.insert(p.file_name().unwrap().to_string_lossy().into_owned(), p);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, suffix, &mut out);
    out
}

/// A copy of the table at `loc` (as `dir/collected`) with every snapshot but the last expired.
fn expired_copy(loc: &str, dir: &Path) -> PathBuf {
    let collected = dir.join("collected");
    crate::copy_dir(Path::new(loc), &collected);
    ok(&[
        "expire",
        collected.to_str().unwrap(),
        "--retain-max",
        "1",
        "--retain-min",
        "1",
        "--older-than",
        "0 s",
    ]);
    collected
}

fn java_rows_at(loc: &str, snapshot: Option<i64>) -> Vec<String> {
    let mut c = jcmd(&["read", loc]);
    if let Some(s) = snapshot {
        c.extend(["--snapshot".to_owned(), s.to_string()]);
    }
    c
}

/// The managed-BLOB table of these tests: deduplicate, 2 buckets, packs rolling at 300 bytes.
fn managed_schema() -> Value {
    json!({"fields": [
        {"name": "id", "type": "INT NOT NULL"},
        {"name": "name", "type": "STRING"},
        {"name": "b", "type": "BLOB"},
        {"name": "a", "type": "ARRAY<BLOB>"},
        {"name": "m", "type": "MAP<INT NOT NULL, BLOB>"}],
      "primaryKeys": ["id"],
      "options": {"bucket": "2", "blob.target-file-size": "300 b"}})
}

/// Input rows of commit `c`: ids 0..12 (some skipped, some retracted in commit 2), payloads
/// of 0, 5, 120 and 700 bytes, NULLs, empty arrays and maps.
fn managed_rows(c: u64) -> Vec<Value> {
    let mut rows = Vec::new();
    for id in 0..12u64 {
        if c > 0 && (id + c).is_multiple_of(3) {
            continue;
        }
        let len = [0usize, 5, 120, 700][((id + c) % 4) as usize];
        let seed = c * 1000 + id * 10;
        let b = if id % 5 == 4 {
            Value::Null
        } else {
            json!(hex(&payload(seed, len)))
        };
        let a: Value = match id % 3 {
            0 => json!([]),
            1 => json!([
                hex(&payload(seed + 1, 40)),
                null,
                hex(&payload(seed + 2, 300))
            ]),
            _ => Value::Null,
        };
        let m: Value = match id % 4 {
            0 => json!([[1, hex(&payload(seed + 3, 64))], [2, null]]),
            1 => json!([]),
            _ => json!([[7, hex(&payload(seed + 4, 200))]]),
        };
        let mut row = json!({"id": id, "name": format!("n{id}-c{c}"), "b": b, "a": a, "m": m});
        if c == 2 && id % 4 == 1 {
            row["_ROW_KIND"] = json!("-D");
        }
        rows.push(row);
    }
    rows
}

/// We write a managed-BLOB table through three commits (overwrites, retractions), a delete
/// and a full compaction; Java reads every snapshot as we do. A copy then expires every
/// snapshot but the last and collects the unreferenced packs: Java reads it as we do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_reads_every_snapshot_of_our_managed_blob_table() {
    let dir = tempfile::tempdir().unwrap();
    let loc = create(dir.path(), "mb", managed_schema());
    for c in 0..3 {
        write(&loc, &managed_rows(c));
    }
    ok(&["delete", &loc, "--where", "id = 6"]);
    ok(&["compact", &loc, "--full"]);
    let ids = snapshot_ids(&loc);
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    assert!(files_ending(Path::new(&loc), ".managed.blob").len() > 6);
    // The expired and collected copy.
    let collected = expired_copy(&loc, dir.path());
    let col = collected.to_str().unwrap();
    let packs_before = files_ending(&collected, ".managed.blob").len();
    let out: Value = serde_json::from_str(&ok(&[
        "collect-packs",
        col,
        "--older-than",
        "0 s",
        "--json",
    ]))
    .unwrap();
    assert!(out["deleted_files"].as_u64().unwrap() > 0, "{out}");
    assert!(files_ending(&collected, ".managed.blob").len() < packs_before);

    let mut commands: Vec<Vec<String>> = ids.iter().map(|s| java_rows_at(&loc, Some(*s))).collect();
    commands.push(java_rows_at(col, None));
    let Some(java) = java_batch(&commands) else {
        return;
    };
    for (s, j) in ids.iter().zip(&java) {
        let ours = our_rows(&loc, Some(*s)).await;
        assert!(!ours.is_empty() || *s == 0);
        assert_eq!(
            j.sorted(&format!("read of snapshot {s}")),
            ours,
            "snapshot {s}"
        );
    }
    assert_eq!(
        java[ids.len()].sorted("read after expire and collect-packs"),
        our_rows(col, None).await
    );
    assert_eq!(our_rows(col, None).await, our_rows(&loc, None).await);
}

/// Java writes a managed-BLOB table (three commits, retractions, its full compaction): we read
/// every snapshot as Java does; every `.blobref` sidecar is what our encoder writes for the
/// pack names Java's sidecar lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn we_read_every_snapshot_of_a_java_managed_blob_table() {
    let dir = tempfile::tempdir().unwrap();
    let loc = create(dir.path(), "jmb", managed_schema());
    let mut commands = Vec::new();
    for c in 0..3 {
        let file = dir.path().join(format!("rows-{c}.jsonl"));
        let text: String = managed_rows(c).iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(&file, text).unwrap();
        commands.push(jcmd(&["write", "write", &loc, file.to_str().unwrap()]));
    }
    commands.push(jcmd(&["write", "compact", &loc, "--full"]));
    let Some(written) = java_batch(&commands) else {
        return;
    };
    for (i, w) in written.iter().enumerate() {
        assert_eq!(w.code, 0, "Java step {i}: {:?}", w.error);
    }
    let ids = snapshot_ids(&loc);
    assert_eq!(ids, [1, 2, 3, 4]);
    let commands: Vec<Vec<String>> = ids.iter().map(|s| java_rows_at(&loc, Some(*s))).collect();
    let java = java_batch(&commands).unwrap();
    for (s, j) in ids.iter().zip(&java) {
        assert_eq!(
            our_rows(&loc, Some(*s)).await,
            j.sorted(&format!("read of snapshot {s}")),
            "snapshot {s}"
        );
    }
    // Java's sidecars decode and re-encode to the same bytes.
    let sidecars = files_ending(Path::new(&loc), ".blobref");
    assert!(!sidecars.is_empty());
    for (name, path) in &sidecars {
        let bytes = std::fs::read(path).unwrap();
        let refs = decode_blobref(&bytes, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(encode_blobref(&refs).unwrap(), bytes, "{name}");
    }
}

/// Writes `rows` to `path` as the JSON lines Java's `write` command takes.
fn rows_file(path: &Path, rows: &[Value]) -> String {
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Both writers on one managed-BLOB table, in turns: we write two commits; Java writes one
/// (with retractions) and fully compacts; we write, delete and fully compact; Java writes
/// again. Every snapshot reads the same through Java and us, and a copy expired to its last
/// snapshot, its unreferenced packs collected by us, still reads the same through both (our
/// collection keeps the packs Java's sidecars name).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_and_we_write_in_turns_on_one_managed_blob_table() {
    let dir = tempfile::tempdir().unwrap();
    let loc = create(dir.path(), "turns", managed_schema());
    write(&loc, &managed_rows(0));
    write(&loc, &managed_rows(1));
    let rows2 = rows_file(&dir.path().join("rows-2.jsonl"), &managed_rows(2));
    let Some(java) = java_batch(&[
        jcmd(&["write", "write", &loc, &rows2]),
        jcmd(&["write", "compact", &loc, "--full"]),
    ]) else {
        return;
    };
    check_outcomes(&java);
    write(&loc, &managed_rows(3));
    ok(&["delete", &loc, "--where", "id = 7"]);
    ok(&["compact", &loc, "--full"]);
    let rows4 = rows_file(&dir.path().join("rows-4.jsonl"), &managed_rows(4));
    check_outcomes(&java_batch(&[jcmd(&["write", "write", &loc, &rows4])]).unwrap());
    let ids = snapshot_ids(&loc);
    assert_eq!(ids, (1..=8).collect::<Vec<i64>>());
    // Both writers' packs are live: ours (named by us) and Java's.
    assert!(files_ending(Path::new(&loc), ".managed.blob").len() > 6);

    let collected = expired_copy(&loc, dir.path());
    let col = collected.to_str().unwrap();
    ok(&["collect-packs", col, "--older-than", "0 s"]);

    let mut commands: Vec<Vec<String>> = ids.iter().map(|s| java_rows_at(&loc, Some(*s))).collect();
    commands.push(java_rows_at(col, None));
    let java = java_batch(&commands).unwrap();
    for (s, j) in ids.iter().zip(&java) {
        let ours = our_rows(&loc, Some(*s)).await;
        assert!(!ours.is_empty(), "snapshot {s} has rows");
        assert_eq!(
            j.sorted(&format!("read of snapshot {s}")),
            ours,
            "snapshot {s}"
        );
    }
    let last = our_rows(&loc, None).await;
    // The last snapshot holds Java's commit 4 on top of ours: some rows carry blobs.
    assert!(last.iter().any(|r| r.contains("\"n1-c4\"")), "{last:?}");
    assert_eq!(
        java[ids.len()].sorted("read after expire and collect-packs"),
        last
    );
    assert_eq!(our_rows(col, None).await, last);
}

/// The same input rows (one commit, one bucket) written by us and by Java: the packs are the
/// same bytes, and the sidecars list the same packs under the same directory (Java names its
/// packs with random UUIDs and the tables sit at different paths, so pack names are mapped by
/// content and directories taken relative to the table first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_packs_and_sidecars_equal_javas_for_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut schema = managed_schema();
    schema["options"]["bucket"] = json!("1");
    let ours = create(dir.path(), "ours", schema.clone());
    let theirs = create(dir.path(), "theirs", schema);
    let rows = managed_rows(0);
    write(&ours, &rows);
    let file = dir.path().join("rows.jsonl");
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let Some(w) = java_batch(&[jcmd(&["write", "write", &theirs, file.to_str().unwrap()])]) else {
        return;
    };
    assert_eq!(w[0].code, 0, "{:?}", w[0].error);
    let packs = |loc: &str| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = files_ending(Path::new(loc), ".managed.blob")
            .into_iter()
            .map(|(n, p)| (n, std::fs::read(p).unwrap()))
            .collect();
        v.sort_by(|a, b| a.1.cmp(&b.1));
        v
    };
    let (our_packs, java_packs) = (packs(&ours), packs(&theirs));
    assert_eq!(
        our_packs.iter().map(|p| p.1.len()).collect::<Vec<_>>(),
        java_packs.iter().map(|p| p.1.len()).collect::<Vec<_>>(),
        "pack sizes"
    );
    let mut rename: BTreeMap<String, String> = BTreeMap::new();
    for (o, j) in our_packs.iter().zip(&java_packs) {
        assert_eq!(o.1, j.1, "pack {} vs Java's {}", o.0, j.0);
        rename.insert(o.0.clone(), j.0.clone());
    }
    // Sidecars: the same packs (renamed), under the same directory relative to the table.
    let sidecars =
        |loc: &str, rename: Option<&BTreeMap<String, String>>| -> Vec<Vec<(String, String)>> {
            let mut v: Vec<Vec<(String, String)>> = files_ending(Path::new(loc), ".blobref")
                .iter()
                .map(|(name, p)| {
                    let refs = decode_blobref(&std::fs::read(p).unwrap(), name).unwrap();
                    let mut refs: Vec<(String, String)> = refs
                        .into_iter()
                        .map(|r| {
                            let root = r
                                .storage_root_id
                                .trim_start_matches("file:")
                                .strip_prefix(loc)
                                .unwrap_or_else(|| panic!("{} not under {loc}", r.storage_root_id))
                                .to_owned();
                            let name = match rename {
                                Some(m) => m[&r.relative_path].clone(),
                                None => r.relative_path,
                            };
                            (root, name)
                        })
                        .collect();
                    refs.sort_by(|a, b| java_string_cmp(&a.1, &b.1));
                    refs
                })
                .collect();
            v.sort();
            v
        };
    let (our_refs, java_refs) = (sidecars(&ours, Some(&rename)), sidecars(&theirs, None));
    assert!(!java_refs.is_empty());
    assert_eq!(our_refs, java_refs);
}

/// The data-evolution table of the placeholder test: a `.blob` column among normal ones.
fn placeholder_schema() -> Value {
    json!({"fields": [
        {"name": "id", "type": "INT"},
        {"name": "name", "type": "STRING"},
        {"name": "b", "type": "BLOB"}],
      "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true",
                  "blob.target-file-size": "200 b", "compaction.min.file-num": "2"}})
}

/// Rows updated by `_ROW_ID`: `b` of `ids` set to payloads of `seed` (NULL for id % 7 == 6).
fn blob_updates(ids: &[i64], seed: u64) -> Vec<Value> {
    ids.iter()
        .map(|id| {
            let b = if id % 7 == 6 {
                Value::Null
            } else {
                json!(hex(&payload(
                    seed + *id as u64,
                    30 + (*id as usize % 5) * 40
                )))
            };
            json!({"_ROW_ID": id, "b": b})
        })
        .collect()
}

/// Applies updates to the model (row id → row).
fn apply(model: &mut BTreeMap<i64, Value>, updates: &[Value]) {
    for u in updates {
        let id = u["_ROW_ID"].as_i64().unwrap();
        let cell = match u["b"].as_str() {
            None => Value::Null,
            Some(h) => {
                let bytes: Vec<u8> = (0..h.len() / 2)
                    .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
                    .collect();
                canonical_blob(&bytes)
            }
        };
        model.get_mut(&id).unwrap()["b"] = cell;
    }
}

/// A canonical BLOB cell (`paimon_kernel::canonical`'s and java-check's encoding).
fn canonical_blob(bytes: &[u8]) -> Value {
    use sha2::Digest;
    let mut cell = json!({"len": bytes.len(), "sha256": hex(&sha2::Sha256::digest(bytes))});
    if bytes.len() <= 64 {
        cell["hex"] = json!(hex(bytes));
    }
    cell
}

fn model_lines(model: &BTreeMap<i64, Value>) -> Vec<String> {
    let mut v: Vec<String> = model.values().map(Value::to_string).collect();
    v.sort();
    v
}

/// A data-evolution table with a `.blob` column: rows written in two commits (row-id ranges
/// [0, 7] and [8, 15]), then updated through placeholders by us, by Java, by us again (three
/// layers over some rows, NULLs among the updates), then compacted by us on one copy and by
/// Java on another, and updated once more by Java on ours. After every step both readers give
/// the model, at every snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn placeholder_updates_by_us_and_java_read_alike_through_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let loc = create(dir.path(), "de_blob", placeholder_schema());
    let mut model: BTreeMap<i64, Value> = BTreeMap::new();
    for c in 0..2i64 {
        let rows: Vec<Value> = (0..8i64)
            .map(|i| {
                let id = c * 8 + i;
                let b = hex(&payload(id as u64, 20 + (id as usize % 3) * 50));
                model.insert(
                    id,
                    json!({"id": id, "name": format!("n{id}"), "b": canonical_blob(&payload(id as u64, 20 + (id as usize % 3) * 50))}),
                );
                json!({"id": id, "name": format!("n{id}"), "b": b})
            })
            .collect();
        write(&loc, &rows);
    }
    let upd_file = |name: &str, rows: &[Value]| -> String {
        let f = dir.path().join(name);
        std::fs::write(
            &f,
            rows.iter().map(|r| format!("{r}\n")).collect::<String>(),
        )
        .unwrap();
        f.to_str().unwrap().to_owned()
    };
    let mut expected: Vec<(i64, Vec<String>)> = vec![(2, model_lines(&model))];
    // Layer 1, ours: rows of both ranges.
    let u1 = blob_updates(&[1, 2, 6, 9, 15], 100);
    ok(&["update", &loc, "--input", &upd_file("u1.jsonl", &u1)]);
    apply(&mut model, &u1);
    expected.push((3, model_lines(&model)));
    // Layer 2, Java's (placeholders for the other rows of each touched range).
    let u2 = blob_updates(&[2, 3, 13], 200);
    let Some(w) = java_batch(&[jcmd(&[
        "write",
        "update",
        &loc,
        &upd_file("u2.jsonl", &u2),
        "--placeholders",
    ])]) else {
        return;
    };
    assert_eq!(w[0].code, 0, "Java update: {:?}", w[0].error);
    apply(&mut model, &u2);
    expected.push((4, model_lines(&model)));
    // Layer 3, ours again.
    let u3 = blob_updates(&[3, 9, 10, 13], 300);
    ok(&["update", &loc, "--input", &upd_file("u3.jsonl", &u3)]);
    apply(&mut model, &u3);
    expected.push((5, model_lines(&model)));
    // Compactions: ours on `loc`, Java's on a copy (blob files kept, normal files merged).
    let jcopy = dir.path().join("java_compacted");
    crate::copy_dir(Path::new(&loc), &jcopy);
    let jc = jcopy.to_str().unwrap();
    ok(&["compact", &loc]);
    expected.push((6, model_lines(&model)));
    // Then Java updates our compacted table once more, over the compacted range.
    let u4 = blob_updates(&[0, 4, 12], 400);
    let mut after = model.clone();
    apply(&mut after, &u4);
    let mut commands = vec![
        jcmd(&["write", "compact", jc]),
        jcmd(&[
            "write",
            "update",
            &loc,
            &upd_file("u4.jsonl", &u4),
            "--placeholders",
        ]),
    ];
    for (s, _) in &expected {
        commands.push(java_rows_at(&loc, Some(*s)));
    }
    commands.push(java_rows_at(&loc, None));
    commands.push(java_rows_at(jc, None));
    let java = java_batch(&commands).unwrap();
    assert_eq!(java[0].code, 0, "Java compaction: {:?}", java[0].error);
    assert_eq!(
        snapshot_ids(jc).last(),
        Some(&6),
        "Java compacted into snapshot 6"
    );
    assert_eq!(java[1].code, 0, "Java update: {:?}", java[1].error);
    for (i, (s, want)) in expected.iter().enumerate() {
        assert_eq!(
            &our_rows(&loc, Some(*s)).await,
            want,
            "ours at snapshot {s}"
        );
        assert_eq!(
            &java[2 + i].sorted(&format!("read of snapshot {s}")),
            want,
            "Java at snapshot {s}"
        );
    }
    let n = expected.len();
    assert_eq!(our_rows(&loc, None).await, model_lines(&after), "ours last");
    assert_eq!(java[2 + n].sorted("last read"), model_lines(&after));
    assert_eq!(
        our_rows(jc, None).await,
        model_lines(&model),
        "Java's compaction"
    );
    assert_eq!(
        java[3 + n].sorted("read of Java's compaction"),
        model_lines(&model)
    );
    check_outcomes(&java);
}

fn check_outcomes(outcomes: &[JavaOutcome]) {
    for (i, o) in outcomes.iter().enumerate() {
        assert_eq!(o.code, 0, "Java command {i}: {:?}", o.error);
    }
}
