use super::*;
use crate::error::Error;
use futures_util::future::join_all;

#[test]
fn absolute_uris_are_told_from_relative_paths() {
    assert_eq!(
        uri_scheme("file:/tmp/ext/bucket-0/data-1.parquet"),
        Some("file")
    );
    assert_eq!(uri_scheme("file:///tmp/ext/data-1.parquet"), Some("file"));
    assert_eq!(uri_scheme("s3://bucket/wh/t/bucket-0/f"), Some("s3"));
    assert_eq!(uri_scheme("oss+x-1.y://b/k"), Some("oss+x-1.y"));
    for relative in [
        "bucket-0/data-1.parquet",
        "dt=2024-01-01 10%3A00/bucket-0/f",
        "index/index-1",
        "a:b",
        "1s3://b/k",
        ":/x",
        "",
    ] {
        assert_eq!(uri_scheme(relative), None, "{relative}");
        assert!(!is_absolute(relative), "{relative}");
    }
    assert!(is_absolute("/tmp/ext/dt=a%3Ab/bucket-0/f") && is_absolute("s3://b/k"));
    assert_eq!(uri_scheme("/tmp/ext/f"), None);
}

#[test]
fn rounds_are_sequential_and_concurrent_reads_share_a_round() {
    let mut store = MemoryStore::new();
    store
        .objects
        .insert("a".into(), Bytes::from_static(b"hello"));
    store
        .objects
        .insert("b".into(), Bytes::from_static(b"world"));
    let mut m: Machine<String> = Machine::once("test", |io: Io<String>| async move {
        let first = io.read_range("a", 1..3).await?;
        let both = join_all([io.read("a"), io.read("b")]).await;
        let mut s = String::from_utf8_lossy(&first).to_string();
        for b in both {
            s.push_str(&String::from_utf8_lossy(&b?));
        }
        Ok(s)
    });
    let Step::NeedIo(r1) = m.step().unwrap() else {
        panic!("expected io")
    };
    assert_eq!(r1.len(), 1);
    assert_eq!(r1[0].id, RequestId(0));
    m.provide(r1[0].id, store.answer(&r1[0].op)).unwrap();
    let Step::NeedIo(r2) = m.step().unwrap() else {
        panic!("expected io")
    };
    assert_eq!(
        r2.iter().map(|r| r.id.0).collect::<Vec<_>>(),
        vec![1, 2],
        "both reads in one round, in order"
    );
    // Answer out of order.
    m.provide(r2[1].id, store.answer(&r2[1].op)).unwrap();
    m.provide(r2[0].id, store.answer(&r2[0].op)).unwrap();
    let Step::Emit(s) = m.step().unwrap() else {
        panic!("expected emit")
    };
    assert_eq!(s, "elhelloworld");
    assert!(matches!(m.step().unwrap(), Step::Done));
}

#[test]
fn large_joins_complete_in_one_round() {
    for n in [31usize, 40, 100, 1000] {
        let mut store = MemoryStore::new();
        for i in 0..n {
            store
                .objects
                .insert(format!("o{i}"), Bytes::from(vec![1u8; i % 7]));
        }
        let m: Machine<usize> = Machine::once("join", move |io: Io<usize>| async move {
            let got = futures_util::future::try_join_all((0..n).map(|i| {
                let io = io.clone();
                async move { io.read(&format!("o{i}")).await }
            }))
            .await?;
            Ok(got.iter().map(|b| b.len()).sum())
        });
        let mut rounds = 0;
        let mut m = m;
        let total = loop {
            match m.step().unwrap() {
                Step::NeedIo(round) => {
                    rounds += 1;
                    assert_eq!(round.len(), n);
                    for r in round {
                        let a = store.answer(&r.op);
                        m.provide(r.id, a).unwrap();
                    }
                }
                Step::Emit(t) => break t,
                Step::Work(_) | Step::Wait => panic!("no work at parallelism 1"),
                Step::Done => panic!("no result"),
            }
        };
        assert_eq!(rounds, 1);
        assert_eq!(total, (0..n).map(|i| i % 7).sum::<usize>());
    }
}

/// An operation mixing IO and work: reads two objects, hashes each in a work item while
/// the next read is asked for, then reads an object named by the results.
fn work_machine() -> Machine<String> {
    Machine::once("work", |io: Io<String>| async move {
        let a = io.read("a").await?;
        let ha = io.spawn_work(move || a.iter().map(|&b| u64::from(b)).sum::<u64>());
        let b = io.read("b").await?;
        let hb = io.spawn_work(move || b.len() as u64);
        let (ha, hb) = (ha.await, hb.await);
        let c = io.read(&format!("c{}", (ha + hb) % 2)).await?;
        Ok(format!("{ha} {hb} {}", String::from_utf8_lossy(&c)))
    })
}

fn work_store() -> MemoryStore {
    let mut store = MemoryStore::new();
    for (k, v) in [("a", "xyz"), ("b", "hello"), ("c0", "even"), ("c1", "odd")] {
        store.objects.insert(k.into(), Bytes::from(v));
    }
    store
}

/// Drive `m`, running work items on other threads and joining them only on `Wait`;
/// returns the result, the IO log (id, path) and the steps seen.
fn drive_threaded(mut m: Machine<String>) -> (String, Vec<(u64, String)>, Vec<&'static str>) {
    let store = work_store();
    let (mut log, mut steps, mut threads, mut out) = (vec![], vec![], vec![], None);
    loop {
        match m.step().unwrap() {
            Step::NeedIo(round) => {
                steps.push("io");
                for r in round {
                    log.push((r.id.0, r.op.path().to_string()));
                    m.provide(r.id, store.clone().answer(&r.op)).unwrap();
                }
            }
            Step::Work(items) => {
                steps.push("work");
                for w in items {
                    threads.push(std::thread::spawn(move || {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        w.run()
                    }));
                }
            }
            Step::Wait => {
                steps.push("wait");
                threads.pop().expect("a running item").join().unwrap();
            }
            Step::Emit(s) => out = Some(s),
            Step::Done => break,
        }
    }
    (out.unwrap(), log, steps)
}

#[test]
fn work_runs_inline_at_parallelism_one() {
    let mut store = work_store();
    // MemoryStore::run would run Work items too; check that none are made.
    let mut m = work_machine();
    let mut seen = vec![];
    let out = loop {
        match m.step().unwrap() {
            Step::NeedIo(round) => {
                for r in round {
                    m.provide(r.id, store.answer(&r.op)).unwrap();
                }
            }
            Step::Emit(s) => break s,
            Step::Work(_) => seen.push("work"),
            Step::Wait => seen.push("wait"),
            Step::Done => panic!("no result"),
        }
    };
    assert!(seen.is_empty(), "{seen:?}");
    // x+y+z = 120+121+122 = 363, "hello" = 5: 368 is even.
    assert_eq!(out, "363 5 even");
}

#[test]
fn work_is_handed_out_and_waited_for_without_changing_the_requests() {
    let (inline, inline_log, _) = drive_threaded(work_machine());
    let (parallel, parallel_log, steps) = drive_threaded(work_machine().with_parallelism(4));
    assert_eq!(parallel, "363 5 even");
    assert_eq!(inline, parallel);
    assert_eq!(inline_log, parallel_log, "same requests, same ids");
    assert_eq!(
        parallel_log
            .iter()
            .map(|(_, p)| p.as_str())
            .collect::<Vec<_>>(),
        ["a", "b", "c0"]
    );
    // The first item is handed out before the read of b, and the machine waits for the
    // items (they sleep; one or two waits, as the threads finish) before reading c.
    assert_eq!(steps[..4], ["io", "work", "io", "work"]);
    assert_eq!(steps.last(), Some(&"io"));
    let waits = steps[4..steps.len() - 1].iter();
    assert!(
        waits.len() >= 1 && waits.into_iter().all(|s| *s == "wait"),
        "{steps:?}"
    );
    // MemoryStore::run runs work inline when handed out.
    let out = work_store()
        .run(work_machine().with_parallelism(2))
        .unwrap();
    assert_eq!(out, vec!["363 5 even".to_string()]);
}

#[test]
fn waiting_with_no_work_running_is_a_protocol_error() {
    // A handle awaited twice is a caller bug: reported, never a hang or a panic.
    let mut m: Machine<()> = Machine::new("t", |io: Io<()>| async move {
        let mut h = io.spawn_work(|| 1u8);
        (&mut h).await;
        (&mut h).await;
        Ok(())
    })
    .with_parallelism(2);
    let Step::Work(items) = m.step().unwrap() else {
        panic!("expected work")
    };
    items.into_iter().for_each(Work::run);
    assert!(matches!(m.step(), Err(Error::Protocol { .. })));
}

#[test]
fn protocol_errors_are_reported() {
    let mut m: Machine<()> = Machine::once("test", |io: Io<()>| async move {
        io.read("x").await?;
        Ok(())
    });
    let Step::NeedIo(r) = m.step().unwrap() else {
        panic!()
    };
    assert!(matches!(m.step(), Err(Error::Protocol { .. })));
    assert!(m.provide(RequestId(7), IoAnswer::Done).is_err());
    m.provide(r[0].id, IoAnswer::error(IoErrorKind::NotFound))
        .unwrap();
    let m2: Machine<()> = Machine::once("t", |io: Io<()>| async move {
        io.read("x").await?;
        Ok(())
    });
    let mut store = MemoryStore::new();
    let err = store.run(m2).unwrap_err();
    assert!(err.to_string().contains("x"), "{err}");
}

#[test]
fn short_range_answer_is_an_error() {
    let mut m: Machine<()> = Machine::once("t", |io: Io<()>| async move {
        io.read_range("x", 0..4).await?;
        Ok(())
    });
    let Step::NeedIo(r) = m.step().unwrap() else {
        panic!()
    };
    m.provide(r[0].id, IoAnswer::bytes(vec![1u8, 2])).unwrap();
    assert!(matches!(m.step(), Err(Error::Protocol { .. })));
}

#[test]
fn put_create_new_reports_existing() {
    let mut store = MemoryStore::new();
    let m: Machine<(bool, bool)> = Machine::once("t", |io: Io<(bool, bool)>| async move {
        let a = io
            .put("s", Bytes::from_static(b"1"), PutMode::CreateNew)
            .await?;
        let b = io
            .put("s", Bytes::from_static(b"2"), PutMode::CreateNew)
            .await?;
        Ok((a, b))
    });
    assert_eq!(store.run(m).unwrap(), vec![(true, false)]);
    assert_eq!(store.objects["s"], Bytes::from_static(b"1"));
}
