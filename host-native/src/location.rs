//! Table locations: a plain local path or a URL, turned into an object store rooted at the table
//! directory.
//!
//! | location | store | credentials / configuration |
//! |---|---|---|
//! | `/data/t`, `rel/dir`, `file:///data/t` | `LocalFileSystem` | - |
//! | `s3://bucket/path`, `s3a://` | `AmazonS3` | `AmazonS3Builder::from_env` (`AWS_*`) |
//! | `gs://bucket/path` | `GoogleCloudStorage` | `GoogleCloudStorageBuilder::from_env` (`GOOGLE_*`) |
//! | `az://container/path`, `abfs[s]://container@account.dfs.core.windows.net/path`, `adl://`, `azure://` | `MicrosoftAzure` | `MicrosoftAzureBuilder::from_env` (`AZURE_*`) |
//! | `http://host/path`, `https://` | `HttpStore` (read-only servers cannot `List`: answered `Unsupported`) | - |
//! | `memory://` | `InMemory` (empty, for tests) | - |
//!
//! Anything without `://` is a local path, relative to the current directory when not absolute.
//! The store is wrapped in a `PrefixStore` at the table directory, so core paths such as
//! `snapshot/LATEST` are relative to the table root.
//!
//! # Absolute paths (external data and index files)
//!
//! A request path that is absolute ([`paimon_kernel::io::is_absolute`]: the `_EXTERNAL_PATH` of
//! files written with `data-file.external-paths`, e.g. `file:/tmp/ext/bucket-0/data-1.parquet`,
//! `s3://other/ext/...`, or `/tmp/ext/...` for a local path) is resolved by
//! [`TableLocation::resolve`]. The path after `scheme://authority` is taken literally, as Java's
//! `org.apache.paimon.fs.Path` strings are (no percent-decoding: `dt=a%3Ab` is a directory of
//! that name); a path without a scheme is a local file.
//! 1. under the table root (same scheme, with `s3a` as `s3`, same authority, path below the
//!    root's): the table's own store with the remaining relative path;
//! 2. otherwise a store for the URI's scheme and authority, built like a table location's
//!    (same table above, same environment credentials) but without a prefix, on first use and
//!    then kept per `scheme://authority` for the life of the location (clones share it);
//! 3. a scheme with no store in the table above (`oss:`, `hdfs:`...), or a `file:` URI while the
//!    table itself is not local (metadata of a remote table may not make the host read local
//!    files), is answered `Unsupported` with the URI in the detail.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::http::HttpBuilder;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::{ClientOptions, ObjectStore, RetryConfig};
use paimon_kernel::io::{IoErrorKind, uri_scheme};
use url::Url;

use crate::error::{Error, Result};

/// The kind of store behind a location; decides a few host behaviours (HTTP cannot list,
/// local reads are coalesced less aggressively).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreKind {
    /// Local filesystem (`LocalFileSystem`).
    Local,
    /// Amazon S3 or compatible.
    S3,
    /// Google Cloud Storage.
    Gcs,
    /// Azure Blob Storage / ADLS Gen2.
    Azure,
    /// Plain HTTP(S) (`HttpStore`); `List` is answered `Unsupported` unless the server speaks
    /// WebDAV.
    Http,
    /// In-memory store (tests).
    Memory,
}

/// A parsed table location: the store rooted at the table directory and a display form.
#[derive(Debug, Clone)]
pub struct TableLocation {
    /// The store; paths are relative to the table root.
    pub store: Arc<dyn ObjectStore>,
    /// What kind of store it is.
    pub kind: StoreKind,
    /// The location as a URL (`file:///abs/path` for local paths), for messages.
    pub url: String,
    /// The store `List` requests go to: `store` itself, except over HTTP, where it is a
    /// client without object_store's internal retries. Plain HTTP servers answer a listing
    /// with 405 or 501; object_store retries every 5xx for seconds before giving up, while
    /// the host maps this answer to `Unsupported` at once (the core then probes instead of
    /// listing) and still retries transient failures with its own loop.
    pub list_store: Arc<dyn ObjectStore>,
    /// The table root, for absolute request paths; `None` when unknown
    /// ([`TableLocation::from_store`] with a `url` that does not parse).
    root: Option<Root>,
    /// Stores of absolute URIs outside the table root, by `scheme://authority`.
    external: Arc<Mutex<BTreeMap<String, Arc<dyn ObjectStore>>>>,
}

/// A request path resolved to a store and a path within it (see the module docs).
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The store to ask.
    pub store: Arc<dyn ObjectStore>,
    /// The path within `store`.
    pub path: Path,
}

/// Why a request path could not be resolved: the kind to answer the core with and a detail.
pub type ResolveError = (IoErrorKind, String);

/// A store built for a URL: the store, its kind, and for HTTP a retry-free client for listings.
type SchemeStore = (
    Arc<dyn ObjectStore>,
    StoreKind,
    Option<Arc<dyn ObjectStore>>,
);

/// The store of a URL's scheme (no prefix applied), its kind and, for HTTP, a retry-free
/// client for listings (see [`TableLocation::list_store`]). `file:` URLs are handled by the
/// callers. `Err(None)` for an unknown scheme.
fn scheme_store(
    url: &Url,
    location: &str,
    options: &[(String, String)],
) -> std::result::Result<SchemeStore, Option<object_store::Error>> {
    Ok(match url.scheme() {
        "s3" | "s3a" => {
            let mut b = AmazonS3Builder::from_env().with_url(location);
            for (k, v) in options {
                b = b.with_config(k.parse()?, v);
            }
            (Arc::new(b.build()?), StoreKind::S3, None)
        }
        "gs" => {
            let mut b = GoogleCloudStorageBuilder::from_env().with_url(location);
            for (k, v) in options {
                b = b.with_config(k.parse()?, v);
            }
            (Arc::new(b.build()?), StoreKind::Gcs, None)
        }
        "az" | "adl" | "azure" | "abfs" | "abfss" => {
            let mut b = MicrosoftAzureBuilder::from_env().with_url(location);
            for (k, v) in options {
                b = b.with_config(k.parse()?, v);
            }
            (Arc::new(b.build()?), StoreKind::Azure, None)
        }
        "http" | "https" => {
            let origin = url.origin().ascii_serialization();
            let http = |retry: RetryConfig| {
                HttpBuilder::new()
                    .with_url(origin.clone())
                    .with_client_options(
                        ClientOptions::new().with_allow_http(url.scheme() == "http"),
                    )
                    .with_retry(retry)
                    .build()
            };
            let no_retry = RetryConfig {
                max_retries: 0,
                ..RetryConfig::default()
            };
            let list: Arc<dyn ObjectStore> = Arc::new(http(no_retry)?);
            (
                Arc::new(http(RetryConfig::default())?),
                StoreKind::Http,
                Some(list),
            )
        }
        "memory" => (Arc::new(InMemory::new()), StoreKind::Memory, None),
        _ => return Err(None),
    })
}

/// Where a table root is: scheme (`s3a` as `s3`), authority, and its object path (literal,
/// without leading or trailing `/`; `""` for the root of the store).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Root {
    scheme: String,
    authority: String,
    path: String,
}

impl Root {
    fn new(scheme: &str, authority: &str, path: &str) -> Self {
        Root {
            scheme: normalized_scheme(scheme).to_string(),
            authority: normalized_authority(scheme, authority).to_string(),
            path: path.trim_matches('/').to_string(),
        }
    }

    /// The root of a table at `url` (object path: the URL's path, percent-decoded).
    fn of_url(url: &Url) -> Option<Self> {
        let path = Path::from_url_path(url.path()).ok()?;
        Some(Root::new(url.scheme(), url.authority(), path.as_ref()))
    }
}

fn normalized_scheme(scheme: &str) -> &str {
    match scheme {
        "s3a" | "s3n" => "s3",
        s => s,
    }
}

fn normalized_authority<'a>(scheme: &str, authority: &'a str) -> &'a str {
    if scheme == "file" && authority == "localhost" {
        ""
    } else {
        authority
    }
}

/// Split an absolute path into scheme, authority and literal path: `file:/a/b` →
/// (`file`, ``, `/a/b`); `s3://bkt/k` → (`s3`, `bkt`, `/k`); `/a/b` → (`file`, ``, `/a/b`).
fn split_absolute(path: &str) -> Option<(&str, &str, &str)> {
    if path.starts_with('/') {
        return Some(("file", "", path));
    }
    let scheme = uri_scheme(path)?;
    let rest = &path[scheme.len() + 1..];
    Some(match rest.strip_prefix("//") {
        Some(r) => {
            let at = r.find('/').unwrap_or(r.len());
            (scheme, &r[..at], &r[at..])
        }
        None => (scheme, "", rest),
    })
}

impl TableLocation {
    /// Parse `location` (a local path or a URL, see the module docs) and build the store.
    ///
    /// Errors: [`Error::Location`] for an unknown scheme or a malformed URL/path,
    /// [`Error::ObjectStore`] when object_store rejects the configuration (for example an S3
    /// URL without a bucket).
    pub fn parse(location: &str) -> Result<Self> {
        Self::parse_with_options(location, &[])
    }

    /// As [`TableLocation::parse`], with object-store options applied over the environment's:
    /// `(key, value)` pairs of object_store's configuration keys for the URL's scheme
    /// (`AmazonS3ConfigKey`: `aws_endpoint` / `endpoint`, `aws_region` / `region`,
    /// `aws_access_key_id`, `aws_secret_access_key`, `aws_session_token`, `aws_allow_http`,
    /// `aws_virtual_hosted_style_request`...; `GoogleConfigKey`; `AzureConfigKey`). The
    /// stores of external files under other roots use the environment only.
    ///
    /// Errors: as [`TableLocation::parse`]; [`Error::ObjectStore`] for an unknown key;
    /// [`Error::Location`] for options given with a location whose store takes none (local
    /// paths, `memory://`, `http(s)://`).
    pub fn parse_with_options(location: &str, options: &[(String, String)]) -> Result<Self> {
        let bad = |reason: String| Error::Location {
            location: location.to_string(),
            reason,
        };
        let takes_options = ["s3", "s3a", "gs", "az", "adl", "azure", "abfs", "abfss"]
            .iter()
            .any(|scheme| location.starts_with(&format!("{scheme}://")));
        if !options.is_empty() && !takes_options {
            let keys: Vec<&str> = options.iter().map(|(k, _)| k.as_str()).collect();
            return Err(bad(format!(
                "store options ({}) apply to s3://, gs:// and az:// locations only",
                keys.join(", ")
            )));
        }
        if !location.contains("://") {
            return Self::local(location, std::path::Path::new(location));
        }
        let url = Url::parse(location).map_err(|e| bad(format!("not a valid URL: {e}")))?;
        let prefix = Path::from_url_path(url.path())
            .map_err(|e| bad(format!("invalid path in URL: {e}")))?;
        let store_err = |source| Error::ObjectStore {
            location: location.to_string(),
            source,
        };
        if url.scheme() == "file" {
            let path = url
                .to_file_path()
                .map_err(|()| bad("not a local file URL".to_string()))?;
            return Self::local(location, &path);
        }
        let (store, kind, list_store) =
            scheme_store(&url, location, options).map_err(|e| match e {
                Some(source) => store_err(source),
                None => bad(format!("unsupported scheme {:?}", url.scheme())),
            })?;
        let rooted = |s: Arc<dyn ObjectStore>| -> Arc<dyn ObjectStore> {
            if prefix.as_ref().is_empty() {
                s
            } else {
                Arc::new(PrefixStore::new(s, prefix.clone()))
            }
        };
        let store = rooted(store);
        let list_store = list_store.map_or_else(|| Arc::clone(&store), rooted);
        Ok(TableLocation {
            store,
            kind,
            url: location.trim_end_matches('/').to_string(),
            list_store,
            root: Root::of_url(&url),
            external: Arc::default(),
        })
    }

    /// A location over an existing store (tests, custom stores); paths are used as they are.
    /// Absolute request paths under `url` (when it parses as a URL) resolve to `store`.
    pub fn from_store(
        store: Arc<dyn ObjectStore>,
        kind: StoreKind,
        url: impl Into<String>,
    ) -> Self {
        let url = url.into();
        TableLocation {
            list_store: Arc::clone(&store),
            store,
            kind,
            root: Url::parse(&url).ok().as_ref().and_then(Root::of_url),
            url,
            external: Arc::default(),
        }
    }

    /// Where a request path goes (see the module docs): a relative path to the table store;
    /// an absolute URI to the table store when under the table root, else to the cached store
    /// of its scheme and authority.
    ///
    /// Errors: `Other` for a path object_store cannot represent or a malformed URI,
    /// `Unsupported` for a scheme without a store (or a local URI of a remote table), the
    /// store's configuration error as `Other`.
    pub fn resolve(&self, path: &str) -> std::result::Result<Resolved, ResolveError> {
        let parse = |p: &str| {
            Path::parse(p).map_err(|e| (IoErrorKind::Other, format!("invalid path {path:?}: {e}")))
        };
        let Some((scheme, authority, literal)) = split_absolute(path) else {
            return Ok(Resolved {
                store: Arc::clone(&self.store),
                path: parse(path)?,
            });
        };
        let literal = literal.trim_start_matches('/');
        if let Some(root) = &self.root
            && root.scheme == normalized_scheme(scheme)
            && root.authority == normalized_authority(scheme, authority)
        {
            let rel = if root.path.is_empty() {
                Some(literal)
            } else {
                literal
                    .strip_prefix(root.path.as_str())
                    .and_then(|r| r.strip_prefix('/'))
            };
            if let Some(rel) = rel {
                return Ok(Resolved {
                    store: Arc::clone(&self.store),
                    path: parse(rel)?,
                });
            }
        }
        let unsupported = |why: &str| {
            (
                IoErrorKind::Unsupported,
                format!("external path {path:?} of table {}: {why}", self.url),
            )
        };
        if scheme == "file" && self.kind != StoreKind::Local {
            return Err(unsupported(
                "a local file outside a table that is not local is not read",
            ));
        }
        let key = format!("{}://{}", scheme, normalized_authority(scheme, authority));
        let mut stores = self.external.lock().map_err(|_| {
            (
                IoErrorKind::Other,
                "external store cache poisoned".to_string(),
            )
        })?;
        let store = match stores.get(&key) {
            Some(s) => Arc::clone(s),
            None => {
                let store: Arc<dyn ObjectStore> = if scheme == "file" {
                    Arc::new(LocalFileSystem::new())
                } else {
                    let url = Url::parse(&key)
                        .map_err(|e| (IoErrorKind::Other, format!("invalid URI {path:?}: {e}")))?;
                    match scheme_store(&url, &key, &[]) {
                        Ok((s, _, _)) => s,
                        Err(None) => {
                            return Err(unsupported(&format!("no store for scheme {scheme:?}")));
                        }
                        Err(Some(e)) => {
                            return Err((
                                IoErrorKind::Other,
                                format!("cannot open a store for external path {path:?}: {e}"),
                            ));
                        }
                    }
                };
                stores.insert(key, Arc::clone(&store));
                store
            }
        };
        Ok(Resolved {
            store,
            path: parse(literal)?,
        })
    }

    fn local(location: &str, path: &std::path::Path) -> Result<Self> {
        let bad = |reason: String| Error::Location {
            location: location.to_string(),
            reason,
        };
        let abs = match std::fs::canonicalize(path) {
            Ok(p) => p,
            // Not there (yet): make it absolute without resolving symlinks; reads answer
            // NotFound, writes create it.
            Err(_) => std::path::absolute(path)
                .map_err(|e| bad(format!("cannot make the path absolute: {e}")))?,
        };
        if abs.is_file() {
            return Err(bad("is a file, expected a table directory".to_string()));
        }
        let url = Url::from_directory_path(&abs)
            .map(|u| u.to_string().trim_end_matches('/').to_string())
            .unwrap_or_else(|()| abs.display().to_string());
        let prefix = Path::from_absolute_path(&abs).map_err(|e| {
            bad(format!(
                "path cannot be used as an object store prefix: {e}"
            ))
        })?;
        let root = Root::new("file", "", prefix.as_ref());
        let store: Arc<dyn ObjectStore> =
            Arc::new(PrefixStore::new(LocalFileSystem::new(), prefix));
        Ok(TableLocation {
            list_store: Arc::clone(&store),
            store,
            kind: StoreKind::Local,
            root: Some(root),
            url,
            external: Arc::default(),
        })
    }
}
