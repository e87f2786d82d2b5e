//! The snapshot resolver over corpus tables loaded into memory: hint handling, listing and
//! probing, tags, timestamp travel, `resolve` against the expected time-travel reads, and the
//! exact IO it asks for.

use bytes::Bytes;
use paimon_kernel::Error;
use paimon_kernel::io::{IoAnswer, IoErrorKind, IoOp, Machine, MemoryStore, Step};
use paimon_kernel::scan::snapshot_resolver::{
    TimeTravel, earliest_snapshot_id, latest_snapshot_id, list_snapshots, list_tags, read_tag,
    resolve, snapshot_at_or_before_timestamp,
};
use paimon_kernel::spec::snapshot::decode_snapshot;
use paimon_kernel::spec::{CoreOptions, Snapshot};

use crate::common::{corpus_tables, expected, load_table};

/// A host over a MemoryStore that can refuse `List` and logs every request and answer.
struct Host {
    store: MemoryStore,
    list_unsupported: bool,
    log: Vec<String>,
}

impl Host {
    fn new(table: &str) -> Self {
        Host {
            store: load_table(table),
            list_unsupported: false,
            log: Vec::new(),
        }
    }

    fn put(&mut self, path: &str, bytes: &[u8]) {
        self.store
            .objects
            .insert(path.to_string(), Bytes::copy_from_slice(bytes));
    }

    fn remove(&mut self, path: &str) {
        assert!(self.store.objects.remove(path).is_some(), "{path}");
    }

    fn run<T: Send + 'static>(&mut self, mut m: Machine<T>) -> paimon_kernel::Result<T> {
        self.log.clear();
        let mut out = Vec::new();
        loop {
            match m.step()? {
                Step::NeedIo(round) => {
                    for req in round {
                        let answer = match &req.op {
                            IoOp::List { .. } if self.list_unsupported => {
                                IoAnswer::error(IoErrorKind::Unsupported)
                            }
                            op => self.store.answer(op),
                        };
                        let (verb, path) = match &req.op {
                            IoOp::Read { path, .. } => ("Read", path),
                            IoOp::Head { path } => ("Head", path),
                            IoOp::List { prefix } => ("List", prefix),
                            other => panic!("unexpected {other:?}"),
                        };
                        let result = match &answer {
                            IoAnswer::Bytes { .. } | IoAnswer::Head { .. } => "ok".to_string(),
                            IoAnswer::List { objects } => format!("{} objects", objects.len()),
                            IoAnswer::Error { kind, .. } => format!("{kind:?}"),
                            IoAnswer::Done => "done".to_string(),
                        };
                        self.log.push(format!("{verb} {path} -> {result}"));
                        m.provide(req.id, answer)?;
                    }
                }
                Step::Emit(v) => out.push(v),
                Step::Work(items) => items.into_iter().for_each(|w| w.run()),
                Step::Wait => {}
                Step::Done => break,
            }
        }
        assert_eq!(out.len(), 1);
        Ok(out.pop().unwrap())
    }

    fn latest(&mut self) -> Option<i64> {
        self.run(Machine::once("latest", |io| async move {
            latest_snapshot_id(&io).await
        }))
        .unwrap()
    }

    fn earliest(&mut self) -> Option<i64> {
        self.run(Machine::once("earliest", |io| async move {
            earliest_snapshot_id(&io).await
        }))
        .unwrap()
    }

    fn resolve(&mut self, pairs: &[(&str, &str)]) -> paimon_kernel::Result<Option<(i64, i64)>> {
        let options = CoreOptions::from_pairs(pairs.iter().copied());
        self.run(Machine::once("resolve", move |io| async move {
            Ok(resolve(&io, &options).await?.map(|(s, schema)| {
                assert_eq!(s.schema_id, schema.id);
                (s.id, schema.id)
            }))
        }))
    }
}

/// The snapshots of `table`, decoded straight from the files (the oracle).
fn snapshots_on_disk(table: &str) -> Vec<Snapshot> {
    let store = load_table(table);
    let mut v: Vec<Snapshot> = store
        .objects
        .iter()
        .filter(|(k, _)| {
            k.strip_prefix("snapshot/snapshot-")
                .is_some_and(|n| n.parse::<i64>().is_ok())
        })
        .map(|(k, b)| decode_snapshot(b, k).unwrap())
        .collect();
    v.sort_by_key(|s| s.id);
    v
}

const T: &str = "append_tags_rollback"; // snapshots 1..=5, tags v1 -> 1, v4 -> 4

#[test]
fn latest_from_a_valid_hint_is_two_requests() {
    let mut h = Host::new(T);
    assert_eq!(h.latest(), Some(5));
    assert_eq!(
        h.log,
        [
            "Read snapshot/LATEST -> ok",
            "Head snapshot/snapshot-6 -> NotFound"
        ]
    );
}

#[test]
fn latest_without_hint_lists() {
    let mut h = Host::new(T);
    h.remove("snapshot/LATEST");
    assert_eq!(h.latest(), Some(5));
    assert_eq!(
        h.log,
        [
            "Read snapshot/LATEST -> NotFound",
            "List snapshot/ -> 5 objects"
        ]
    );
    for garbage in [&b"abc"[..], b"", b"0", b"-3"] {
        h.put("snapshot/LATEST", garbage);
        assert_eq!(h.latest(), Some(5));
        assert_eq!(h.log.len(), 2, "{:?}", h.log);
    }
    h.put("snapshot/LATEST", b" 5\n");
    assert_eq!(h.latest(), Some(5));
    assert_eq!(h.log.len(), 2);
}

#[test]
fn stale_hint_falls_back_to_listing() {
    let mut h = Host::new(T);
    h.put("snapshot/LATEST", b"3");
    assert_eq!(h.latest(), Some(5));
    assert_eq!(
        h.log,
        [
            "Read snapshot/LATEST -> ok",
            "Head snapshot/snapshot-4 -> ok",
            "List snapshot/ -> 6 objects"
        ]
    );
}

#[test]
fn without_listing_the_resolver_probes() {
    let mut h = Host::new(T);
    h.list_unsupported = true;
    h.remove("snapshot/LATEST");
    assert_eq!(h.latest(), Some(5));
    assert_eq!(
        h.log,
        [
            "Read snapshot/LATEST -> NotFound",
            "List snapshot/ -> Unsupported",
            "Read snapshot/EARLIEST -> NotFound",
            "Head snapshot/snapshot-1 -> ok",
            "Head snapshot/snapshot-2 -> ok",
            "Head snapshot/snapshot-4 -> ok",
            "Head snapshot/snapshot-8 -> NotFound",
            "Head snapshot/snapshot-6 -> NotFound",
            "Head snapshot/snapshot-5 -> ok",
        ]
    );
    // Stale hint, no listing: probe forward from the hint.
    h.put("snapshot/LATEST", b"2");
    assert_eq!(h.latest(), Some(5));
    assert_eq!(
        h.log,
        [
            "Read snapshot/LATEST -> ok",
            "Head snapshot/snapshot-3 -> ok",
            "List snapshot/ -> Unsupported",
            "Head snapshot/snapshot-4 -> ok",
            "Head snapshot/snapshot-6 -> NotFound",
            "Head snapshot/snapshot-5 -> ok",
        ]
    );
    // Every corpus table: probing gives the expected latest snapshot.
    for table in corpus_tables() {
        let want = expected(&table)["snapshot_id"].as_i64();
        let mut h = Host::new(&table);
        h.list_unsupported = true;
        assert_eq!(h.latest(), want, "{table} with hint");
        h.remove("snapshot/LATEST");
        assert_eq!(h.latest(), want, "{table} probing");
        h.list_unsupported = false;
        assert_eq!(h.latest(), want, "{table} listing");
    }
}

#[test]
fn earliest_with_expired_snapshots() {
    let mut h = Host::new(T);
    assert_eq!(h.earliest(), Some(1));
    h.remove("snapshot/snapshot-1");
    h.remove("snapshot/snapshot-2");
    assert_eq!(h.earliest(), Some(3));
    assert_eq!(
        h.log,
        [
            "Read snapshot/EARLIEST -> NotFound",
            "List snapshot/ -> 4 objects"
        ]
    );
    h.list_unsupported = true;
    assert_eq!(h.earliest(), Some(3));
    h.put("snapshot/EARLIEST", b"3");
    assert_eq!(h.earliest(), Some(3));
    assert_eq!(
        h.log,
        [
            "Read snapshot/EARLIEST -> ok",
            "Head snapshot/snapshot-3 -> ok"
        ]
    );
    // A stale EARLIEST (expired further) is checked and then searched from.
    h.remove("snapshot/snapshot-3");
    assert_eq!(h.earliest(), Some(4));
    // Listing tolerates the gaps.
    h.list_unsupported = false;
    let ids: Vec<i64> = h
        .run(Machine::once("list", |io| async move {
            list_snapshots(&io).await
        }))
        .unwrap()
        .iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, [4, 5]);
}

#[test]
fn list_snapshots_reads_all_in_one_round_and_skips_gaps() {
    let mut h = Host::new(T);
    h.remove("snapshot/snapshot-3");
    let got = h
        .run(Machine::once("list", |io| async move {
            list_snapshots(&io).await
        }))
        .unwrap();
    let want: Vec<Snapshot> = snapshots_on_disk(T)
        .into_iter()
        .filter(|s| s.id != 3)
        .collect();
    assert_eq!(got, want);
    // Without listing: ids between earliest and latest. Ids are contiguous in Paimon (only the
    // front expires), so probing finds the earliest by binary search and cannot see past a
    // hole in the middle: here it starts after it.
    h.list_unsupported = true;
    let got = h
        .run(Machine::once("list", |io| async move {
            list_snapshots(&io).await
        }))
        .unwrap();
    assert_eq!(got, want[2..]);
    let mut h = Host::new(T);
    h.list_unsupported = true;
    h.remove("snapshot/snapshot-1");
    let got = h
        .run(Machine::once("list", |io| async move {
            list_snapshots(&io).await
        }))
        .unwrap();
    assert_eq!(got, snapshots_on_disk(T)[1..]);
}

#[test]
fn tags() {
    let mut h = Host::new(T);
    let tags = h
        .run(Machine::once(
            "tags",
            |io| async move { list_tags(&io).await },
        ))
        .unwrap();
    let names: Vec<(&str, i64)> = tags
        .iter()
        .map(|(n, t)| (n.as_str(), t.snapshot.id))
        .collect();
    assert_eq!(names, [("v1", 1), ("v4", 4)]);
    assert_eq!(
        h.log,
        [
            "List tag/ -> 2 objects",
            "Read tag/tag-v1 -> ok",
            "Read tag/tag-v4 -> ok"
        ]
    );
    let missing = h
        .run(Machine::once("tag", |io| async move {
            read_tag(&io, "nope").await
        }))
        .unwrap();
    assert!(missing.is_none());
    h.list_unsupported = true;
    let err = h
        .run(Machine::once(
            "tags",
            |io| async move { list_tags(&io).await },
        ))
        .unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("tag"), "{err}");
    // A named tag still works without listing.
    assert_eq!(h.resolve(&[("scan.tag-name", "v4")]).unwrap(), Some((4, 0)));
}

#[test]
fn timestamp_travel_follows_java() {
    for table in [T, "evo_pk", "pk_dedup", "de_update"] {
        let snaps = snapshots_on_disk(table);
        let mut probes: Vec<i64> = Vec::new();
        for s in &snaps {
            probes.extend([s.time_millis - 1, s.time_millis, s.time_millis + 1]);
        }
        probes.push(i64::MAX);
        for t in probes {
            let want = snaps
                .iter()
                .rev()
                .find(|s| s.time_millis <= t)
                .map(|s| s.id);
            for list_unsupported in [false, true] {
                let mut h = Host::new(table);
                h.list_unsupported = list_unsupported;
                let got = h
                    .run(Machine::once("ts", move |io| async move {
                        snapshot_at_or_before_timestamp(&io, t).await
                    }))
                    .unwrap()
                    .map(|s| s.id);
                assert_eq!(got, want, "{table} t={t}");
                let ts = t.to_string();
                match h.resolve(&[("scan.timestamp-millis", ts.as_str())]) {
                    Ok(r) => assert_eq!(r.map(|r| r.0), want, "{table} t={t}"),
                    Err(e) => {
                        assert!(want.is_none(), "{table} t={t}: {e}");
                        let msg = e.to_string();
                        assert!(msg.contains(&snaps[0].time_millis.to_string()), "{msg}");
                    }
                }
            }
        }
    }
}

#[test]
fn resolve_matches_every_expected_time_travel_read() {
    let mut checked = 0;
    for table in corpus_tables() {
        let exp = expected(&table);
        let mut h = Host::new(&table);
        let latest = h.resolve(&[]).unwrap();
        assert_eq!(
            latest,
            Some((
                exp["snapshot_id"].as_i64().unwrap(),
                exp["schema_id"].as_i64().unwrap()
            )),
            "{table}"
        );
        for read in exp["additional_reads"].as_array().unwrap() {
            let opts: Vec<(String, String)> = read["options"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect();
            let pairs: Vec<(&str, &str)> =
                opts.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let got = h.resolve(&pairs).unwrap();
            assert_eq!(
                got,
                Some((
                    read["snapshot_id"].as_i64().unwrap(),
                    read["schema_id"].as_i64().unwrap()
                )),
                "{table} {}",
                read["label"]
            );
            checked += 1;
        }
    }
    assert!(checked > 40, "{checked}");
}

#[test]
fn resolve_options_and_errors() {
    let mut h = Host::new(T);
    assert_eq!(
        h.resolve(&[("scan.snapshot-id", "2")]).unwrap(),
        Some((2, 0))
    );
    assert_eq!(h.resolve(&[("scan.version", "v1")]).unwrap(), Some((1, 0)));
    assert_eq!(h.resolve(&[("scan.version", "3")]).unwrap(), Some((3, 0)));
    let invalid = |r: paimon_kernel::Result<Option<(i64, i64)>>, needle: &str| {
        let e = r.unwrap_err();
        assert!(matches!(e, Error::Invalid(_)), "{e:?}");
        assert!(e.to_string().contains(needle), "{e} lacks {needle}");
    };
    invalid(
        h.resolve(&[("scan.snapshot-id", "2"), ("scan.tag-name", "v1")]),
        "only one of",
    );
    invalid(
        h.resolve(&[("scan.tag-name", "v1"), ("scan.timestamp-millis", "1")]),
        "only one of",
    );
    invalid(h.resolve(&[("scan.snapshot-id", "99")]), "[1, 5]");
    invalid(h.resolve(&[("scan.snapshot-id", "x")]), "scan.snapshot-id");
    invalid(h.resolve(&[("scan.tag-name", "v9")]), "v9");
    invalid(h.resolve(&[("scan.version", "zzz")]), "zzz");
    let e = h
        .resolve(&[("scan.timestamp", "2026-01-01 00:00:00")])
        .unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    assert_eq!(
        TimeTravel::from_options(&CoreOptions::from_pairs([(
            "log.scan.timestamp-millis",
            "7"
        )]))
        .unwrap(),
        TimeTravel::TimestampMillis(7)
    );

    // Snapshot in range but its file is gone: an IO NotFound naming it.
    h.remove("snapshot/snapshot-3");
    let e = h.resolve(&[("scan.snapshot-id", "3")]).unwrap_err();
    assert!(
        e.is_not_found() && e.to_string().contains("snapshot/snapshot-3"),
        "{e}"
    );

    // A truncated snapshot file is Corrupt, naming the file.
    let full = h.store.objects["snapshot/snapshot-5"].clone();
    h.put("snapshot/snapshot-5", &full[..full.len() / 2]);
    let e = h.resolve(&[]).unwrap_err();
    assert!(
        matches!(&e, Error::Corrupt { path, format: "snapshot", .. } if path == "snapshot/snapshot-5"),
        "{e:?}"
    );
    let e = h.resolve(&[("scan.tag-name", "v1")]);
    assert_eq!(e.unwrap(), Some((1, 0)));
    h.put("tag/tag-v1", b"{\"version\": 3, ");
    let e = h.resolve(&[("scan.tag-name", "v1")]).unwrap_err();
    assert!(
        matches!(&e, Error::Corrupt { path, format: "tag", .. } if path == "tag/tag-v1"),
        "{e:?}"
    );
}

#[test]
fn empty_table_and_no_table() {
    let full = Host::new(T);
    let mut h = Host::new(T);
    h.store.objects.retain(|k, _| k.starts_with("schema/"));
    assert_eq!(h.resolve(&[]).unwrap(), None);
    h.list_unsupported = true;
    assert_eq!(h.resolve(&[]).unwrap(), None);
    invalid_no_table(&mut Host {
        store: MemoryStore::new(),
        list_unsupported: false,
        log: Vec::new(),
    });
    invalid_no_table(&mut Host {
        store: MemoryStore::new(),
        list_unsupported: true,
        log: Vec::new(),
    });
    drop(full);
}

fn invalid_no_table(h: &mut Host) {
    let e = h.resolve(&[]).unwrap_err();
    assert!(
        matches!(e, Error::Invalid(_)) && e.to_string().contains("no Paimon table"),
        "{e}"
    );
}

#[test]
fn same_requests_on_every_run() {
    let mut a = Host::new("evo_pk");
    let mut b = Host::new("evo_pk");
    a.list_unsupported = true;
    b.list_unsupported = true;
    a.resolve(&[("scan.timestamp-millis", "1795967563040")])
        .ok();
    b.resolve(&[("scan.timestamp-millis", "1795967563040")])
        .ok();
    assert!(!a.log.is_empty());
    assert_eq!(a.log, b.log);
}
