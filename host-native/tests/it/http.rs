//! Tables served over plain HTTP (a loopback static file server that cannot list): snapshots
//! are found by probing, data files are read with ranged GETs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use paimon_native::Table;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn corpus_db() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables/corpus.db")
}

/// Serves files under `root` on 127.0.0.1: `GET` (with `Range: bytes=a-b`) and `HEAD`; 404 for
/// missing files, 405 for anything else (so WebDAV `PROPFIND` listing fails). Counts requests.
struct StaticServer {
    base: String,
    requests: Arc<AtomicUsize>,
}

async fn serve(root: PathBuf) -> StaticServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&requests);
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let root = root.clone();
            counter.fetch_add(1, Ordering::Relaxed);
            tokio::spawn(async move {
                let _ = answer(sock, &root).await;
            });
        }
    });
    StaticServer { base, requests }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn answer(mut sock: TcpStream, root: &Path) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    let mut lines = head.split("\r\n");
    let mut parts = lines.next().unwrap_or("").split(' ');
    let method = parts.next().unwrap_or("");
    let path = percent_decode(parts.next().unwrap_or("/"));
    let range = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.eq_ignore_ascii_case("range"))
        .and_then(|(_, v)| v.trim().strip_prefix("bytes="))
        .and_then(|r| r.split_once('-'))
        .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)));
    let file = root.join(path.trim_start_matches('/'));
    let respond = |status: &str, headers: String, body: &[u8]| {
        let mut out = format!(
            "HTTP/1.1 {status}\r\n{headers}content-length: {}\r\nlast-modified: Thu, 01 Jan 2026 00:00:00 GMT\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        out.extend_from_slice(body);
        out
    };
    let response = match method {
        "GET" | "HEAD" if file.is_file() => {
            let data = std::fs::read(&file)?;
            let len = data.len() as u64;
            let (status, headers, body) = match range {
                Some((a, b)) if a < len => {
                    let end = b.min(len - 1);
                    (
                        "206 Partial Content",
                        format!("content-range: bytes {a}-{end}/{len}\r\n"),
                        data[a as usize..=end as usize].to_vec(),
                    )
                }
                Some(_) => ("416 Range Not Satisfiable", String::new(), Vec::new()),
                None => ("200 OK", String::new(), data),
            };
            if method == "HEAD" {
                // HEAD carries the real length and no body.
                let mut r = respond(status, headers, &body);
                r.truncate(r.len() - body.len());
                r
            } else {
                respond(status, headers, &body)
            }
        }
        "GET" | "HEAD" => respond("404 Not Found", String::new(), b""),
        _ => respond("405 Method Not Allowed", String::new(), b""),
    };
    sock.write_all(&response).await?;
    sock.shutdown().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_table_without_listing_reads_like_local() {
    let server = serve(corpus_db()).await;
    for name in ["append_tags_rollback", "pk_dedup_partitioned", "evo_pk"] {
        let local = Table::open(corpus_db().join(name).to_str().unwrap())
            .await
            .unwrap();
        let remote = Table::open(&format!("{}/{name}", server.base))
            .await
            .unwrap();
        assert_eq!(
            remote.snapshots().await.unwrap(),
            local.snapshots().await.unwrap(),
            "{name}: snapshots found by probing"
        );
        assert_eq!(
            remote.latest_snapshot().await.unwrap(),
            local.latest_snapshot().await.unwrap()
        );
        let names = |rows: Vec<paimon_native::system::FileRow>| {
            let mut v: Vec<(String, i64)> = rows
                .into_iter()
                .map(|r| {
                    let n = r.file_path.rsplit('/').next().unwrap().to_string();
                    (n, r.record_count)
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            names(remote.scan().files().await.unwrap()),
            names(local.scan().files().await.unwrap()),
            "{name}: live data files"
        );
        // Tags need a listing: a precise error, not a wrong answer.
        let err = remote.tags().await.unwrap_err().to_string();
        assert!(err.contains("list"), "{err}");
    }
    // A named tag does not need listing.
    let remote = Table::open(&format!("{}/append_tags_rollback", server.base))
        .await
        .unwrap();
    let at_tag = remote
        .scan()
        .with_tag("v1")
        .snapshot()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(at_tag.0.id, 1);
    assert!(server.requests.load(Ordering::Relaxed) > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_reads_http_table() {
    let server = serve(corpus_db()).await;
    let url = format!("{}/pk_postpone", server.base);
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
            .args(["files", "--json", &url])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(corpus_db().join("../pk_postpone.expected.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        rows.as_array().unwrap().len(),
        expected["files"].as_array().unwrap().len()
    );
    let missing = tokio::task::spawn_blocking({
        let url = format!("{}/no_such_table", server.base);
        move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
                .args(["snapshots", &url])
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no Paimon table"));
}
