use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::join_all;
use object_store::memory::InMemory;
use object_store::{ObjectStore, ObjectStoreExt};
use paimon_kernel::io::Io;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

fn object(len: usize) -> Bytes {
    Bytes::from((0..len).map(|i| (i * 7 % 251) as u8).collect::<Vec<u8>>())
}

async fn memory_host(objects: &[(&str, Bytes)]) -> ObjectStoreHost {
    let store = Arc::new(InMemory::new());
    for (path, bytes) in objects {
        store
            .put(&Path::from(*path), PutPayload::from(bytes.clone()))
            .await
            .unwrap();
    }
    ObjectStoreHost::new(TableLocation::from_store(
        store,
        StoreKind::Memory,
        "memory://",
    ))
}

fn read(id: u64, path: &str, range: Option<Range<u64>>) -> IoRequest {
    IoRequest {
        id: RequestId(id),
        op: IoOp::Read {
            path: path.to_string(),
            range,
        },
    }
}

#[test]
fn coalesce_merges_near_ranges_within_bounds() {
    let ranges = vec![
        (RequestId(0), 100..110),
        (RequestId(1), 0..10),
        (RequestId(2), 5..30),
        (RequestId(3), 40..50),
        (RequestId(4), 1000..1010),
    ];
    let groups = coalesce(ranges, 10, 100);
    let shape: Vec<_> = groups
        .iter()
        .map(|(f, m)| (f.clone(), m.iter().map(|(id, _)| id.0).collect::<Vec<_>>()))
        .collect();
    assert_eq!(
        shape,
        vec![
            (0..50, vec![1, 2, 3]),
            (100..110, vec![0]),
            (1000..1010, vec![4])
        ]
    );
    // The size bound splits a run of adjacent ranges.
    let ranges = (0..4)
        .map(|i| (RequestId(i), i * 40..i * 40 + 40))
        .collect();
    let groups = coalesce(ranges, 0, 100);
    let fetches: Vec<_> = groups.iter().map(|(f, _)| f.clone()).collect();
    assert_eq!(fetches, vec![0..80, 80..160]);
}

#[tokio::test]
async fn coalesced_round_answers_exact_bytes_with_fewer_calls() {
    let data = object(10_000);
    let host = memory_host(&[("f", data.clone()), ("g", object(100))]).await;
    let wanted: Vec<Range<u64>> = vec![9000..9100, 0..4, 2..10, 10..20, 500..9000, 9999..10_000];
    let mut round: Vec<IoRequest> = wanted
        .iter()
        .enumerate()
        .map(|(i, r)| read(i as u64, "f", Some(r.clone())))
        .collect();
    round.push(read(6, "g", None));
    let answers = host.answer_round(round).await;
    assert_eq!(answers.len(), 7);
    for (id, answer) in answers {
        let expected = match id.0 {
            6 => object(100),
            i => {
                let r = &wanted[i as usize];
                data.slice(r.start as usize..r.end as usize)
            }
        };
        assert_eq!(answer, IoAnswer::bytes(expected), "request {id}");
    }
    // All ranges of "f" are within 64 KiB of each other: one fetch, plus one for "g".
    assert_eq!(host.stats().store_calls, 2);
    assert_eq!(host.stats().bytes_fetched, 10_100);
}

#[tokio::test]
async fn range_past_end_fails_alone() {
    let host = memory_host(&[("f", object(100))]).await;
    let answers: BTreeMap<_, _> = host
        .answer_round(vec![
            read(0, "f", Some(10..20)),
            read(1, "f", Some(90..120)),
            read(2, "f", Some(200..210)),
            read(3, "missing", Some(0..1)),
            read(4, "f", Some(5..5)),
            #[allow(clippy::reversed_empty_ranges)]
            read(5, "f", Some(7..3)),
        ])
        .await
        .into_iter()
        .collect();
    assert_eq!(
        answers[&RequestId(0)],
        IoAnswer::bytes(object(100).slice(10..20))
    );
    for id in [1, 2, 5] {
        assert!(
            matches!(
                answers[&RequestId(id)],
                IoAnswer::Error {
                    kind: IoErrorKind::Other,
                    ..
                }
            ),
            "{id}: {:?}",
            answers[&RequestId(id)]
        );
    }
    assert!(matches!(
        answers[&RequestId(3)],
        IoAnswer::Error {
            kind: IoErrorKind::NotFound,
            ..
        }
    ));
    assert_eq!(answers[&RequestId(4)], IoAnswer::bytes(Bytes::new()));
}

/// A store whose reads of object "n" wait longer for smaller n: answers complete out of order.
#[derive(Debug)]
struct ReverseDelayStore(InMemory);

impl std::fmt::Display for ReverseDelayStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReverseDelayStore")
    }
}

#[async_trait::async_trait]
impl ObjectStore for ReverseDelayStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<object_store::PutResult> {
        self.0.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: object_store::PutMultipartOptions,
    ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
        self.0.put_multipart_opts(location, opts).await
    }
    async fn get_opts(
        &self,
        location: &Path,
        options: object_store::GetOptions,
    ) -> object_store::Result<object_store::GetResult> {
        let n: u64 = location.as_ref().parse().unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(10u64.saturating_sub(n) * 10)).await;
        self.0.get_opts(location, options).await
    }
    fn delete_stream(
        &self,
        locations: futures::stream::BoxStream<'static, object_store::Result<Path>>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<Path>> {
        self.0.delete_stream(locations)
    }
    fn list(
        &self,
        prefix: Option<&Path>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
        self.0.list(prefix)
    }
    async fn list_with_delimiter(
        &self,
        prefix: Option<&Path>,
    ) -> object_store::Result<object_store::ListResult> {
        self.0.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: object_store::CopyOptions,
    ) -> object_store::Result<()> {
        self.0.copy_opts(from, to, options).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn machine_gets_out_of_order_answers_right() {
    let inner = InMemory::new();
    for n in 0..10u8 {
        inner
            .put(
                &Path::from(n.to_string()),
                PutPayload::from(vec![n; n as usize + 1]),
            )
            .await
            .unwrap();
    }
    let host = ObjectStoreHost::new(TableLocation::from_store(
        Arc::new(ReverseDelayStore(inner)),
        StoreKind::Memory,
        "test://",
    ));
    let order = host
        .answer_round((0..10).map(|n| read(n, &n.to_string(), None)).collect())
        .await
        .into_iter()
        .map(|(id, _)| id.0)
        .collect::<Vec<_>>();
    assert_ne!(
        order,
        (0..10).collect::<Vec<_>>(),
        "answers should complete out of order"
    );

    let machine: Machine<Vec<usize>> = Machine::once("lengths", |io: Io<Vec<usize>>| async move {
        let reads = join_all((0..10).map(|n| {
            let io = io.clone();
            async move { io.read(&n.to_string()).await }
        }))
        .await;
        reads
            .into_iter()
            .map(|r| r.map(|b| b.len()))
            .collect::<paimon_kernel::Result<Vec<_>>>()
    });
    let lengths = host.run_once(machine).await.unwrap();
    assert_eq!(lengths, (1..=10).collect::<Vec<_>>());
}

#[tokio::test]
async fn memory_location_put_list_head_delete() {
    let host = ObjectStoreHost::open("memory://").unwrap();
    let machine: Machine<String> = Machine::once("crud", |io: Io<String>| async move {
        let first = io
            .put(
                "snapshot/snapshot-1",
                Bytes::from_static(b"{}"),
                PutMode::CreateNew,
            )
            .await?;
        let second = io
            .put(
                "snapshot/snapshot-1",
                Bytes::from_static(b"[]"),
                PutMode::CreateNew,
            )
            .await?;
        io.put(
            "snapshot/LATEST",
            Bytes::from_static(b"1"),
            PutMode::Overwrite,
        )
        .await?;
        io.put("snapshotx", Bytes::from_static(b"x"), PutMode::Overwrite)
            .await?;
        let listed = io.list("snapshot/").await?.unwrap_or_default();
        let snaps = io.list("snapshot/snap").await?.unwrap_or_default();
        let size = io.head("snapshot/snapshot-1").await?;
        io.delete("snapshot/snapshot-1").await?;
        let gone = io.head("snapshot/snapshot-1").await?;
        let none = io.list("nothing/").await?.unwrap_or_default();
        Ok(format!(
            "{first} {second} {:?} {:?} {size:?} {gone:?} {}",
            listed.iter().map(|o| o.path.as_str()).collect::<Vec<_>>(),
            snaps.iter().map(|o| o.path.as_str()).collect::<Vec<_>>(),
            none.len()
        ))
    });
    assert_eq!(
        host.run_once(machine).await.unwrap(),
        "true false [\"snapshot/LATEST\", \"snapshot/snapshot-1\"] [\"snapshot/snapshot-1\"] Some(2) None 0"
    );
}

#[tokio::test]
async fn local_location_reads_relative_to_table_root() {
    let dir = std::env::temp_dir().join(format!("paimon-native-host-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("snapshot")).unwrap();
    std::fs::write(dir.join("snapshot/LATEST"), b"3").unwrap();
    let host = ObjectStoreHost::open(dir.to_str().unwrap()).unwrap();
    assert_eq!(host.location().kind, StoreKind::Local);
    let answer = host
        .answer(&IoOp::Read {
            path: "snapshot/LATEST".into(),
            range: None,
        })
        .await;
    assert_eq!(answer, IoAnswer::bytes(Bytes::from_static(b"3")));
    let mut listed = host
        .answer(&IoOp::List {
            prefix: "snapshot/".into(),
        })
        .await;
    if let IoAnswer::List { objects } = &mut listed {
        for o in objects.iter_mut() {
            assert!(o.modified_millis.is_some(), "{o:?}");
            o.modified_millis = None;
        }
    }
    assert_eq!(
        listed,
        IoAnswer::List {
            objects: vec![ObjectMeta {
                path: "snapshot/LATEST".into(),
                size_bytes: 1,
                modified_millis: None,
            }]
        }
    );
    let missing = host
        .answer(&IoOp::Head {
            path: "snapshot/snapshot-4".into(),
        })
        .await;
    assert!(matches!(
        missing,
        IoAnswer::Error {
            kind: IoErrorKind::NotFound,
            ..
        }
    ));
    let exists = host
        .answer(&IoOp::Put {
            path: "snapshot/LATEST".into(),
            bytes: Bytes::from_static(b"4"),
            mode: PutMode::CreateNew,
        })
        .await;
    assert!(
        matches!(
            exists,
            IoAnswer::Error {
                kind: IoErrorKind::AlreadyExists,
                ..
            }
        ),
        "{exists:?}"
    );
    let url_host = ObjectStoreHost::open(&format!("file://{}", dir.to_str().unwrap())).unwrap();
    assert_eq!(url_host.url(), host.url());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `Read` answer's bytes, or the error as `(kind, detail)`.
fn read_answer(answer: IoAnswer) -> Result<Bytes, (IoErrorKind, String)> {
    match answer {
        IoAnswer::Bytes { bytes } => Ok(bytes),
        IoAnswer::Error { kind, detail } => Err((kind, detail)),
        other => panic!("unexpected answer {other:?}"),
    }
}

#[tokio::test]
async fn absolute_uris_resolve_to_external_local_files() {
    // <tmp>/table is the table; <tmp>/ext holds an external data file (as written with
    // data-file.external-paths = file://<tmp>/ext).
    let base = std::env::temp_dir().join(format!("paimon-native-ext-{}", std::process::id()));
    let table = base.join("table");
    let ext = base.join("ext/bucket-0");
    std::fs::create_dir_all(table.join("snapshot")).unwrap();
    std::fs::create_dir_all(&ext).unwrap();
    std::fs::write(table.join("snapshot/LATEST"), b"7").unwrap();
    std::fs::write(ext.join("data-1.parquet"), b"external bytes").unwrap();
    let base = std::fs::canonicalize(&base).unwrap();
    let base = base.to_str().unwrap();
    let host = ObjectStoreHost::open(&format!("{base}/table")).unwrap();
    // Java's Path renders file URIs as file:/abs/path; file:///abs/path is the same file.
    for uri in [
        format!("file:{base}/ext/bucket-0/data-1.parquet"),
        format!("file://{base}/ext/bucket-0/data-1.parquet"),
    ] {
        let whole = host
            .answer(&IoOp::Read {
                path: uri.clone(),
                range: None,
            })
            .await;
        assert_eq!(
            read_answer(whole).unwrap(),
            Bytes::from_static(b"external bytes")
        );
        let part = host
            .answer(&IoOp::Read {
                path: uri.clone(),
                range: Some(9..14),
            })
            .await;
        assert_eq!(read_answer(part).unwrap(), Bytes::from_static(b"bytes"));
        let head = host.answer(&IoOp::Head { path: uri }).await;
        assert_eq!(head, IoAnswer::Head { size_bytes: 14 });
    }
    // Under the table root: the table's own store.
    let inside = host
        .answer(&IoOp::Read {
            path: format!("file:{base}/table/snapshot/LATEST"),
            range: None,
        })
        .await;
    assert_eq!(read_answer(inside).unwrap(), Bytes::from_static(b"7"));
    // Paths are literal (Java Path strings): `%3A` is part of the directory name. pypaimon
    // writes such local paths without `file:`.
    let escaped = std::path::Path::new(base).join("ext/dt=a%3Ab/bucket-0");
    std::fs::create_dir_all(&escaped).unwrap();
    std::fs::write(escaped.join("data-3.parquet"), b"escaped").unwrap();
    for uri in [
        format!("{base}/ext/dt=a%3Ab/bucket-0/data-3.parquet"),
        format!("file:{base}/ext/dt=a%3Ab/bucket-0/data-3.parquet"),
    ] {
        let got = host
            .answer(&IoOp::Read {
                path: uri,
                range: None,
            })
            .await;
        assert_eq!(read_answer(got).unwrap(), Bytes::from_static(b"escaped"));
    }
    let inside = host
        .answer(&IoOp::Read {
            path: format!("{base}/table/snapshot/LATEST"),
            range: None,
        })
        .await;
    assert_eq!(read_answer(inside).unwrap(), Bytes::from_static(b"7"));
    let missing = host
        .answer(&IoOp::Read {
            path: format!("file:{base}/ext/bucket-0/data-2.parquet"),
            range: None,
        })
        .await;
    assert_eq!(read_answer(missing).unwrap_err().0, IoErrorKind::NotFound);
    // One local store for every file: URI.
    let a = host
        .location()
        .resolve(&format!("file:{base}/ext/a"))
        .unwrap();
    let b = host.location().resolve("file:///elsewhere/b").unwrap();
    assert!(Arc::ptr_eq(&a.store, &b.store));
    assert!(!Arc::ptr_eq(&a.store, host.store()));
    assert_eq!(b.path.as_ref(), "elsewhere/b");
    // Listing an external root answers absolute paths of the prefix's form.
    let listed = host
        .answer(&IoOp::List {
            prefix: format!("file:{base}/ext/bucket-"),
        })
        .await;
    let IoAnswer::List { objects } = &listed else {
        panic!("{listed:?}");
    };
    let paths: Vec<(&str, u64)> = objects
        .iter()
        .map(|o| (o.path.as_str(), o.size_bytes))
        .collect();
    assert_eq!(
        paths,
        [(
            format!("file:{base}/ext/bucket-0/data-1.parquet").as_str(),
            14
        )]
    );
    std::fs::remove_dir_all(base).unwrap();
}

#[tokio::test]
async fn absolute_uris_of_other_stores_or_unknown_schemes() {
    let store = InMemory::new();
    store
        .put(
            &Path::from("t/bucket-0/f"),
            PutPayload::from_static(b"in table"),
        )
        .await
        .unwrap();
    let prefixed: Arc<dyn ObjectStore> =
        Arc::new(object_store::prefix::PrefixStore::new(store, "t"));
    let host = ObjectStoreHost::new(TableLocation::from_store(
        prefixed,
        StoreKind::Memory,
        "memory://wh/t",
    ));
    let answer = |path: &str| {
        let host = host.clone();
        let path = path.to_string();
        async move { read_answer(host.answer(&IoOp::Read { path, range: None }).await) }
    };
    assert_eq!(
        answer("memory://wh/t/bucket-0/f").await.unwrap(),
        Bytes::from_static(b"in table")
    );
    // Another authority: a store of its own (an empty in-memory one here).
    assert_eq!(
        answer("memory://other/t/bucket-0/f").await.unwrap_err().0,
        IoErrorKind::NotFound
    );
    let (kind, detail) = answer("oss://bucket/ext/bucket-0/f").await.unwrap_err();
    assert_eq!(kind, IoErrorKind::Unsupported);
    assert!(
        detail.contains("oss://bucket/ext/bucket-0/f") && detail.contains("\"oss\""),
        "{detail}"
    );
    // Metadata of a table that is not local may not make the host read local files.
    let (kind, detail) = answer("file:/etc/hostname").await.unwrap_err();
    assert_eq!(kind, IoErrorKind::Unsupported, "{detail}");
}

#[test]
fn locations_parse_or_fail_precisely() {
    for (loc, kind) in [
        ("memory://", StoreKind::Memory),
        ("memory:///a/b", StoreKind::Memory),
        ("http://127.0.0.1:1/warehouse/t", StoreKind::Http),
        ("relative/dir", StoreKind::Local),
    ] {
        assert_eq!(TableLocation::parse(loc).unwrap().kind, kind, "{loc}");
    }
    let err = TableLocation::parse("ftp://host/x")
        .unwrap_err()
        .to_string();
    assert!(err.contains("unsupported scheme \"ftp\""), "{err}");
    let err = TableLocation::parse("s3:// bad").unwrap_err().to_string();
    assert!(err.contains("s3:// bad"), "{err}");
}

#[test]
fn object_store_errors_are_mapped() {
    use object_store::Error as E;
    let src = || -> Box<dyn std::error::Error + Send + Sync> { "x".into() };
    let io_src = |kind| -> Box<dyn std::error::Error + Send + Sync> {
        Box::new(std::io::Error::new(kind, "io"))
    };
    let cases = [
        (
            E::NotFound {
                path: "p".into(),
                source: src(),
            },
            false,
            IoErrorKind::NotFound,
        ),
        (
            E::AlreadyExists {
                path: "p".into(),
                source: src(),
            },
            true,
            IoErrorKind::AlreadyExists,
        ),
        (
            E::Precondition {
                path: "p".into(),
                source: src(),
            },
            true,
            IoErrorKind::AlreadyExists,
        ),
        (
            E::Precondition {
                path: "p".into(),
                source: src(),
            },
            false,
            IoErrorKind::Other,
        ),
        (
            E::NotImplemented {
                operation: "put".into(),
                implementer: "test".into(),
            },
            false,
            IoErrorKind::Unsupported,
        ),
        (
            E::NotSupported { source: src() },
            false,
            IoErrorKind::Unsupported,
        ),
        (
            E::Generic {
                store: "S3",
                source: io_src(std::io::ErrorKind::TimedOut),
            },
            false,
            IoErrorKind::Transient,
        ),
        (
            E::Generic {
                store: "S3",
                source: io_src(std::io::ErrorKind::PermissionDenied),
            },
            false,
            IoErrorKind::Other,
        ),
        (
            E::Generic {
                store: "HTTP",
                source: "Server returned non-2xx status code: 503 Service Unavailable".into(),
            },
            false,
            IoErrorKind::Transient,
        ),
        (
            E::Generic {
                store: "HTTP",
                source: "Server returned non-2xx status code: 501 Not Implemented".into(),
            },
            false,
            IoErrorKind::Other,
        ),
        (
            E::PermissionDenied {
                path: "p".into(),
                source: src(),
            },
            false,
            IoErrorKind::Other,
        ),
    ];
    for (err, create_new, kind) in cases {
        assert_eq!(map_error(&err, create_new), kind, "{err}");
    }
}

/// A loopback HTTP/1.1 server answering every request with `status` (and `body` for 200),
/// closing each connection; it stops after `max_requests` connections.
async fn tiny_http_server(status: u16, body: &'static [u8], max_requests: usize) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        for _ in 0..max_requests {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let mut buf = vec![0u8; 8192];
            let _ = sock.read(&mut buf).await;
            let reason = if status == 200 { "OK" } else { "Error" };
            let payload: &[u8] = if status == 200 { body } else { b"" };
            let head = format!(
                "HTTP/1.1 {status} {reason}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                payload.len()
            );
            let _ = sock.write_all(head.as_bytes()).await;
            let _ = sock.write_all(payload).await;
            let _ = sock.shutdown().await;
        }
    });
    format!("http://{addr}")
}

/// A server answering every request with `status` and counting the requests it got.
async fn counting_http_server(status: u16) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = vec![0u8; 8192];
            let _ = sock.read(&mut buf).await;
            counter.fetch_add(1, Ordering::SeqCst);
            let head = format!(
                "HTTP/1.1 {status} Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
            let _ = sock.write_all(head.as_bytes()).await;
            let _ = sock.shutdown().await;
        }
    });
    (format!("http://{addr}"), seen)
}

/// A server without listing (python's http.server answers 501 to PROPFIND): the host built
/// from the URL answers `List` with `Unsupported` after one request, without object_store's
/// or its own retries (those would take seconds before the core could probe instead).
#[tokio::test]
async fn http_list_answered_501_is_unsupported_after_one_request() {
    let (base, seen) = counting_http_server(501).await;
    let host = ObjectStoreHost::new(TableLocation::parse(&format!("{base}/wh/t")).unwrap());
    let answer = host
        .answer(&IoOp::List {
            prefix: "snapshot/".into(),
        })
        .await;
    assert!(
        matches!(&answer, IoAnswer::Error { kind: IoErrorKind::Unsupported, detail } if detail.contains("501")),
        "{answer:?}"
    );
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);
}

fn http_host(base: &str) -> ObjectStoreHost {
    let store = object_store::http::HttpBuilder::new()
        .with_url(base)
        .with_client_options(object_store::ClientOptions::new().with_allow_http(true))
        .with_retry(object_store::RetryConfig {
            max_retries: 0,
            ..Default::default()
        })
        .build()
        .unwrap();
    let options = HostOptions {
        retry_backoff: Duration::from_millis(1),
        ..HostOptions::default()
    };
    ObjectStoreHost::with_options(
        TableLocation::from_store(Arc::new(store), StoreKind::Http, base),
        options,
    )
}

#[tokio::test]
async fn http_list_is_unsupported_and_5xx_is_transient_after_retries() {
    let base = tiny_http_server(405, b"", 4).await;
    let answer = http_host(&base)
        .answer(&IoOp::List {
            prefix: "snapshot/".into(),
        })
        .await;
    assert!(
        matches!(&answer, IoAnswer::Error { kind: IoErrorKind::Unsupported, detail } if detail.contains("405")),
        "{answer:?}"
    );

    let base = tiny_http_server(503, b"", 8).await;
    let host = http_host(&base);
    let answer = host
        .answer(&IoOp::Read {
            path: "snapshot/LATEST".into(),
            range: None,
        })
        .await;
    assert!(
        matches!(
            answer,
            IoAnswer::Error {
                kind: IoErrorKind::Transient,
                ..
            }
        ),
        "{answer:?}"
    );
    assert_eq!(host.stats().retries, 2);
    assert_eq!(host.stats().store_calls, 3);

    let base = tiny_http_server(404, b"", 2).await;
    let answer = http_host(&base)
        .answer(&IoOp::Head {
            path: "snapshot/snapshot-9".into(),
        })
        .await;
    assert!(
        matches!(
            answer,
            IoAnswer::Error {
                kind: IoErrorKind::NotFound,
                ..
            }
        ),
        "{answer:?}"
    );

    let base = tiny_http_server(200, b"42", 2).await;
    let answer = http_host(&base)
        .answer(&IoOp::Read {
            path: "snapshot/LATEST".into(),
            range: None,
        })
        .await;
    assert_eq!(answer, IoAnswer::bytes(Bytes::from_static(b"42")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_applies_backpressure_and_reports_errors() {
    use std::sync::atomic::AtomicUsize;
    let emitted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&emitted);
    let host = memory_host(&[("f", object(10))]).await;
    let machine: Machine<u8> = Machine::new("counter", move |io: Io<u8>| async move {
        for i in 0..100u8 {
            let b = io
                .read_range("f", u64::from(i % 10)..u64::from(i % 10) + 1)
                .await?;
            counter.fetch_add(1, Ordering::SeqCst);
            io.emit_and_yield(b[0]).await;
        }
        Ok(())
    });
    let mut stream = Box::pin(host.stream(machine, 2));
    let first: Vec<u8> = (&mut stream).take(3).map(|r| r.unwrap()).collect().await;
    assert_eq!(first, object(10).slice(0..3).to_vec());
    tokio::time::sleep(Duration::from_millis(50)).await;
    let so_far = emitted.load(Ordering::SeqCst);
    assert!(
        so_far <= 3 + 2 + 1,
        "{so_far} items produced for 3 taken with a buffer of 2"
    );
    drop(stream);

    let failing: Machine<u8> = Machine::new("failing", |io: Io<u8>| async move {
        io.emit_and_yield(1).await;
        io.read("missing").await?;
        Ok(())
    })
    .describe("reading the missing object");
    let items: Vec<Result<u8>> = host.stream(failing, 4).collect().await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].as_ref().unwrap(), &1);
    let err = items[1].as_ref().unwrap_err().to_string();
    assert!(
        err.starts_with("reading the missing object: ")
            && !err.contains("failing")
            && err.contains("IO error on missing: not found"),
        "{err}"
    );
}
