//! Managed-BLOB packs beside running writers: two writers upserting and deleting rows of a
//! primary-key table with a BLOB column (packs rolling at 200 bytes), full compaction, expire
//! and pack collection all at once, while a verifier reads every retained snapshot against a
//! model (every blob's bytes). No read may miss a pack; at the end, after a final expire and
//! collection, every pack left is referenced by a live sidecar and collection removed some.
//!
//! 10 seconds by default (`PAIMON_SOAK_SECS` makes it a soak).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, Int32Array, LargeBinaryArray, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use paimon_kernel::maintenance::ExpireConfig;
use paimon_native::Table;
use paimon_native::compact::CompactOptions;

const SCHEMA: &str = r#"{"fields": [
    {"name": "id", "type": "INT NOT NULL"},
    {"name": "v", "type": "INT"},
    {"name": "b", "type": "BLOB"}],
  "primaryKeys": ["id"],
  "options": {"bucket": "2", "blob.target-file-size": "200 b"}}"#;

fn now() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The blob of row `id` at version `v`.
fn payload(id: i32, v: i32) -> Vec<u8> {
    let len = 20 + ((id * 7 + v * 13) % 90) as usize;
    (0..len)
        .map(|i| (id as usize * 31 + v as usize * 17 + i) as u8)
        .collect()
}

/// id → version, per writer.
type Rows = BTreeMap<i32, i32>;

fn walk(dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p.to_string_lossy().into_owned());
        }
    }
}

fn pack_names(dir: &Path) -> BTreeSet<String> {
    let mut all = Vec::new();
    walk(dir, &mut all);
    all.into_iter()
        .filter(|p| p.ends_with(".managed.blob"))
        .map(|p| p.rsplit('/').next().unwrap().to_owned())
        .collect()
}

/// The rows of snapshot `id` as id → (v, blob bytes).
async fn read_at(table: &Table, id: i64) -> paimon_native::Result<BTreeMap<i32, (i32, Vec<u8>)>> {
    let batches = table.scan().with_snapshot_id(id).to_batches().await?;
    let mut out = BTreeMap::new();
    for b in &batches {
        let ids = b
            .column_by_name("id")
            .unwrap()
            .as_primitive::<arrow_array::types::Int32Type>();
        let vs = b
            .column_by_name("v")
            .unwrap()
            .as_primitive::<arrow_array::types::Int32Type>();
        let bs = b.column_by_name("b").unwrap().as_binary::<i64>();
        for r in 0..b.num_rows() {
            out.insert(ids.value(r), (vs.value(r), bs.value(r).to_vec()));
        }
    }
    Ok(out)
}

fn want_at(model: &BTreeMap<i64, (i32, Rows)>, id: i64) -> Option<BTreeMap<i32, i32>> {
    if (1..=id).any(|s| !model.contains_key(&s)) {
        return None;
    }
    let mut per_writer: BTreeMap<i32, Rows> = BTreeMap::new();
    for (_, (w, rows)) in model.range(..=id).filter(|(_, (w, _))| *w >= 0) {
        per_writer.insert(*w, rows.clone());
    }
    Some(per_writer.into_values().flatten().collect())
}

fn check(got: &BTreeMap<i32, (i32, Vec<u8>)>, want: &BTreeMap<i32, i32>, what: &str) {
    let got_versions: BTreeMap<i32, i32> = got.iter().map(|(k, (v, _))| (*k, *v)).collect();
    assert_eq!(&got_versions, want, "{what}");
    for (id, (v, bytes)) in got {
        assert_eq!(bytes, &payload(*id, *v), "{what}: blob of row {id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_compaction_expire_and_pack_collection_keep_every_blob() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = Table::create(dir.to_str().unwrap(), SCHEMA.as_bytes())
        .await
        .unwrap();
    let run_for = Duration::from_secs(
        std::env::var("PAIMON_SOAK_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10),
    );
    let stop = Arc::new(AtomicBool::new(false));
    type Model = Arc<std::sync::Mutex<BTreeMap<i64, (i32, Rows)>>>;
    let model: Model = Arc::default();
    let mut writers = Vec::new();
    for w in 0..2i32 {
        let (table, stop, model) = (table.clone(), Arc::clone(&stop), Arc::clone(&model));
        writers.push(tokio::spawn(async move {
            let mut rows: Rows = BTreeMap::new();
            let mut x: u64 = 0x9E37_79B9 ^ (w as u64 + 1);
            let mut version = 0;
            while !stop.load(Ordering::Relaxed) {
                version += 1;
                let (mut ids, mut vs, mut bs, mut kinds) = (vec![], vec![], vec![], vec![]);
                for _ in 0..4 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let id = w * 100 + (x % 12) as i32;
                    if ids.contains(&id) {
                        continue;
                    }
                    let delete = x.is_multiple_of(7) && rows.contains_key(&id);
                    ids.push(id);
                    vs.push(version);
                    bs.push(payload(id, version));
                    kinds.push(if delete { "-D" } else { "+I" });
                    if delete {
                        rows.remove(&id);
                    } else {
                        rows.insert(id, version);
                    }
                }
                let schema = Schema::new(vec![
                    Field::new("id", arrow_schema::DataType::Int32, false),
                    Field::new("v", arrow_schema::DataType::Int32, true),
                    Field::new("b", arrow_schema::DataType::LargeBinary, true),
                    Field::new("_ROW_KIND", arrow_schema::DataType::Utf8, false),
                ]);
                let batch = RecordBatch::try_new(
                    Arc::new(schema),
                    vec![
                        Arc::new(Int32Array::from(ids)) as ArrayRef,
                        Arc::new(Int32Array::from(vs)),
                        Arc::new(LargeBinaryArray::from_iter_values(bs)),
                        Arc::new(StringArray::from(kinds)),
                    ],
                )
                .unwrap();
                let mut writer = table.new_write().await.unwrap();
                writer.write(&batch).await.unwrap();
                let messages = writer.prepare_commit().await.unwrap();
                let outcome = table.new_commit(None).commit(messages).await.unwrap();
                model
                    .lock()
                    .unwrap()
                    .insert(outcome.snapshot_ids[0], (w, rows.clone()));
            }
        }));
    }
    let compactor = {
        let (table, stop, model) = (table.clone(), Arc::clone(&stop), Arc::clone(&model));
        tokio::spawn(async move {
            let mut done = 0;
            while !stop.load(Ordering::Relaxed) {
                let options = CompactOptions {
                    full: true,
                    ..CompactOptions::default()
                };
                match table.compact(options).await {
                    Ok(r) => {
                        if let Some(id) = r.snapshot {
                            model.lock().unwrap().insert(id, (-1, BTreeMap::new()));
                            done += 1;
                        }
                    }
                    Err(e) => assert!(e.to_string().contains("conflict"), "{e}"),
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            done
        })
    };
    let expire = {
        let (table, stop) = (table.clone(), Arc::clone(&stop));
        tokio::spawn(async move {
            let config = ExpireConfig {
                retain_max: 4,
                retain_min: 2,
                time_retained_millis: 0,
                max_deletes: 10,
                consumer_changelog_only: false,
            };
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += table
                    .expire_with(config.clone(), now())
                    .await
                    .unwrap()
                    .expired_snapshots
                    .len();
                tokio::time::sleep(Duration::from_millis(70)).await;
            }
            n
        })
    };
    // Packs of writes in flight are at most a second or two old: a 3 s grace keeps them.
    let collector = {
        let (table, stop) = (table.clone(), Arc::clone(&stop));
        tokio::spawn(async move {
            let (mut removed, mut refused) = (0, 0);
            while !stop.load(Ordering::Relaxed) {
                match table.collect_packs_before(now() - 3_000, false).await {
                    Ok(out) => removed += out.removed.len(),
                    Err(e) => {
                        // A concurrent expire may take a sidecar away: then nothing is
                        // deleted and the next round tries again.
                        assert!(e.to_string().contains("no pack was collected"), "{e}");
                        refused += 1;
                    }
                }
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            (removed, refused)
        })
    };
    let verifier = {
        let (table, stop, model) = (table.clone(), Arc::clone(&stop), Arc::clone(&model));
        let dir = dir.clone();
        tokio::spawn(async move {
            let mut verified = 0;
            while !stop.load(Ordering::Relaxed) {
                for s in table.snapshots().await.unwrap() {
                    let Some(want) = want_at(&model.lock().unwrap(), s.id) else {
                        continue;
                    };
                    match read_at(&table, s.id).await {
                        Ok(got) => {
                            check(&got, &want, &format!("snapshot {}", s.id));
                            verified += 1;
                        }
                        Err(e) => {
                            // Only a snapshot being expired may lose files.
                            let path = dir.join(format!("snapshot/snapshot-{}", s.id));
                            let mut waited = 0;
                            while path.exists() && waited < 100 {
                                tokio::time::sleep(Duration::from_millis(100)).await;
                                waited += 1;
                            }
                            assert!(!path.exists(), "snapshot {} lost a file: {e}", s.id);
                        }
                    }
                }
            }
            verified
        })
    };
    tokio::time::sleep(run_for).await;
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    let compactions = compactor.await.unwrap();
    let expired = expire.await.unwrap();
    let (removed, refused) = collector.await.unwrap();
    let verified = verifier.await.unwrap();
    eprintln!(
        "{compactions} compactions, {expired} snapshots expired, {removed} packs collected \
         ({refused} rounds refused), {verified} snapshot reads verified"
    );
    assert!(compactions > 0 && expired > 0 && verified > 2);

    // Final: compact, expire to the minimum, collect with no write in flight, check.
    let full = CompactOptions {
        full: true,
        ..CompactOptions::default()
    };
    if let Some(id) = table.compact(full).await.unwrap().snapshot {
        model.lock().unwrap().insert(id, (-1, BTreeMap::new()));
    }
    let config = ExpireConfig {
        retain_max: 1,
        retain_min: 1,
        time_retained_millis: 0,
        max_deletes: i64::from(i32::MAX),
        consumer_changelog_only: false,
    };
    table.expire_with(config, now()).await.unwrap();
    let before = pack_names(&dir);
    let out = table
        .collect_packs_before(now() + 60_000, false)
        .await
        .unwrap();
    assert!(removed + out.removed.len() > 0, "collection removed packs");
    let after = pack_names(&dir);
    assert_eq!(before.len() - after.len(), out.removed.len());
    assert_eq!(out.referenced, after.len(), "every pack left is referenced");
    let latest = table.latest_snapshot().await.unwrap().unwrap().id;
    let want = want_at(&model.lock().unwrap(), latest).unwrap();
    check(
        &read_at(&table, latest).await.unwrap(),
        &want,
        "latest after collection",
    );
}
