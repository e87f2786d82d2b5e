//! `paimon-kernel serve PATH`: the table inspector page and the files of a table or warehouse
//! over HTTP, read-only, with `Range` support, for opening tables in a browser.
//!
//! Routes:
//! * `/` → the inspector (`host-wasm/www/`), `/pkg/` → the wasm package (`host-wasm/pkg/`,
//!   built by `scripts/build-wasm.sh`).
//! * `/data/...` → files under PATH (GET and HEAD only; `Range` answered with 206).
//!
//! Safety: bound to 127.0.0.1 unless `--bind` says otherwise; only GET/HEAD; a request path
//! with a `..`, `.` or empty segment (also percent-encoded), a backslash or a NUL is refused;
//! the file's canonical path must lie under PATH's canonical path, so symlinks pointing out
//! are refused too.

use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use clap::Args;
use tower_http::services::ServeDir;

/// Arguments of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Table or warehouse directory to serve (read-only) under /data/.
    pub path: PathBuf,
    /// TCP port (0 = any free port).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Address to bind (default loopback only).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Directory of the inspector page (default: host-wasm/www of this source tree, or
    /// $PAIMON_INSPECTOR_DIR).
    #[arg(long, value_name = "DIR")]
    pub www: Option<PathBuf>,
    /// Directory of the wasm package (default: host-wasm/pkg next to the page, or
    /// $PAIMON_WASM_PKG).
    #[arg(long, value_name = "DIR")]
    pub pkg: Option<PathBuf>,
}

fn default_www() -> PathBuf {
    std::env::var_os("PAIMON_INSPECTOR_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../host-wasm/www"))
}

fn default_pkg() -> PathBuf {
    std::env::var_os("PAIMON_WASM_PKG")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../host-wasm/pkg"))
}

/// Percent-decode a URL path; `None` for invalid escapes or non-UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3)?;
            let v = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The file a `/data/...` request path names under `root` (canonical), or why not.
///
/// # Errors
/// `FORBIDDEN` for traversal attempts and paths resolving outside `root`; `NOT_FOUND` for
/// missing files.
pub fn resolve_data_path(root: &Path, url_path: &str) -> Result<PathBuf, StatusCode> {
    let decoded = percent_decode(url_path).ok_or(StatusCode::BAD_REQUEST)?;
    let rel = decoded.trim_start_matches('/');
    let mut path = root.to_path_buf();
    for seg in rel.split('/') {
        if seg.is_empty() && rel.is_empty() {
            break;
        }
        if seg.is_empty() || seg == "." || seg == ".." || seg.contains(['\\', '\0', ':']) {
            return Err(StatusCode::FORBIDDEN);
        }
        let mut c = Path::new(seg).components();
        if !matches!((c.next(), c.next()), (Some(Component::Normal(_)), None)) {
            return Err(StatusCode::FORBIDDEN);
        }
        path.push(seg);
    }
    match path.canonicalize() {
        Ok(p) if p.starts_with(root) => Ok(p),
        Ok(_) => Err(StatusCode::FORBIDDEN),
        Err(_) => Err(StatusCode::NOT_FOUND),
    }
}

async fn guard(State(root): State<PathBuf>, req: Request, next: Next) -> Response {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return (StatusCode::METHOD_NOT_ALLOWED, "read-only").into_response();
    }
    match resolve_data_path(&root, req.uri().path()) {
        Ok(_) => next.run(req).await,
        Err(code) => (code, Body::empty()).into_response(),
    }
}

/// The router: inspector at `/`, package at `/pkg`, data at `/data` (guarded).
pub fn router(root: PathBuf, www: PathBuf, pkg: PathBuf) -> Router {
    let data = Router::new()
        .fallback_service(ServeDir::new(&root).append_index_html_on_directories(false))
        .layer(middleware::from_fn_with_state(root, guard));
    let pkg = Router::new().fallback_service(ServeDir::new(pkg));
    let www = Router::new().fallback_service(ServeDir::new(www));
    Router::new()
        .nest("/data", data)
        .nest("/pkg", pkg)
        .fallback_service(www)
        .layer(middleware::from_fn(read_only))
}

async fn read_only(req: Request, next: Next) -> Response {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return (StatusCode::METHOD_NOT_ALLOWED, "read-only").into_response();
    }
    next.run(req).await
}

/// Serve until interrupted.
///
/// # Errors
/// PATH missing or not a directory, the page or package missing, the address in use.
pub async fn run(args: ServeArgs) -> Result<(), String> {
    let root = args
        .path
        .canonicalize()
        .map_err(|e| format!("{}: {e}", args.path.display()))?;
    if !root.is_dir() {
        return Err(format!("{} is not a directory", root.display()));
    }
    let www = args.www.unwrap_or_else(default_www);
    let pkg = args.pkg.unwrap_or_else(default_pkg);
    if !www.join("index.html").is_file() {
        return Err(format!(
            "inspector page not found at {} (use --www DIR)",
            www.display()
        ));
    }
    if !pkg.join("paimon_wasm_bg.wasm").is_file() {
        return Err(format!(
            "wasm package not found at {} (run scripts/build-wasm.sh, or use --pkg DIR)",
            pkg.display()
        ));
    }
    let addr = SocketAddr::new(args.bind, args.port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    println!(
        "serving {} at http://{local}/ (data under /data/)",
        root.display()
    );
    axum::serve(listener, router(root, www, pkg))
        .await
        .map_err(|e| format!("server failed: {e}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn traversal_and_symlinks_out_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("t/snapshot")).unwrap();
        std::fs::write(root.join("t/snapshot/LATEST"), "1").unwrap();
        std::fs::write(dir.path().join("secret"), "x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("t/link")).unwrap();
        let root = root.canonicalize().unwrap();
        assert!(resolve_data_path(&root, "/t/snapshot/LATEST").is_ok());
        for bad in [
            "/../secret",
            "/t/../../secret",
            "/%2e%2e/secret",
            "/t/%2E%2E/%2e%2e/secret",
            "/t//snapshot/LATEST",
            "/t/./snapshot/LATEST",
            "/t\\..\\..\\secret",
            "/t/%5c..%5csecret",
        ] {
            assert_eq!(
                resolve_data_path(&root, bad),
                Err(StatusCode::FORBIDDEN),
                "{bad}"
            );
        }
        #[cfg(unix)]
        assert_eq!(
            resolve_data_path(&root, "/t/link"),
            Err(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            resolve_data_path(&root, "/t/nope"),
            Err(StatusCode::NOT_FOUND)
        );
        assert_eq!(
            resolve_data_path(&root, "/%zz"),
            Err(StatusCode::BAD_REQUEST)
        );
    }
}
