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

use std::sync::Arc;

use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::http::HttpBuilder;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::{ClientOptions, ObjectStore, RetryConfig};
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
}

impl TableLocation {
    /// Parse `location` (a local path or a URL, see the module docs) and build the store.
    ///
    /// Errors: [`Error::Location`] for an unknown scheme or a malformed URL/path,
    /// [`Error::ObjectStore`] when object_store rejects the configuration (for example an S3
    /// URL without a bucket).
    pub fn parse(location: &str) -> Result<Self> {
        let bad = |reason: String| Error::Location {
            location: location.to_string(),
            reason,
        };
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
        let mut list_store: Option<Arc<dyn ObjectStore>> = None;
        let (store, kind): (Arc<dyn ObjectStore>, StoreKind) = match url.scheme() {
            "file" => {
                let path = url
                    .to_file_path()
                    .map_err(|()| bad("not a local file URL".to_string()))?;
                return Self::local(location, &path);
            }
            "s3" | "s3a" => (
                Arc::new(
                    AmazonS3Builder::from_env()
                        .with_url(location)
                        .build()
                        .map_err(store_err)?,
                ),
                StoreKind::S3,
            ),
            "gs" => (
                Arc::new(
                    GoogleCloudStorageBuilder::from_env()
                        .with_url(location)
                        .build()
                        .map_err(store_err)?,
                ),
                StoreKind::Gcs,
            ),
            "az" | "adl" | "azure" | "abfs" | "abfss" => (
                Arc::new(
                    MicrosoftAzureBuilder::from_env()
                        .with_url(location)
                        .build()
                        .map_err(store_err)?,
                ),
                StoreKind::Azure,
            ),
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
                list_store = Some(Arc::new(http(no_retry).map_err(store_err)?));
                (
                    Arc::new(http(RetryConfig::default()).map_err(store_err)?),
                    StoreKind::Http,
                )
            }
            "memory" => (Arc::new(InMemory::new()), StoreKind::Memory),
            other => return Err(bad(format!("unsupported scheme {other:?}"))),
        };
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
        })
    }

    /// A location over an existing store (tests, custom stores); paths are used as they are.
    pub fn from_store(
        store: Arc<dyn ObjectStore>,
        kind: StoreKind,
        url: impl Into<String>,
    ) -> Self {
        TableLocation {
            list_store: Arc::clone(&store),
            store,
            kind,
            url: url.into(),
        }
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
        let store: Arc<dyn ObjectStore> =
            Arc::new(PrefixStore::new(LocalFileSystem::new(), prefix));
        Ok(TableLocation {
            list_store: Arc::clone(&store),
            store,
            kind: StoreKind::Local,
            url,
        })
    }
}
