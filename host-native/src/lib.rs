//! # paimon-native
//!
//! The native host of [`paimon_kernel`]: it answers the core's rounds of IO with
//! [`object_store`] calls on a tokio runtime and offers a library API over tables.
//!
//! * [`ObjectStoreHost`] drives any core [`Machine`](paimon_kernel::io::Machine): concurrent,
//!   bounded store calls per round, coalesced ranged reads, retries, error mapping.
//! * [`TableLocation`] turns a path or URL (`s3://`, `gs://`, `az://`, `http(s)://`,
//!   `file://`, `memory://`) into a store rooted at the table directory.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> paimon_native::Result<()> {
//! use bytes::Bytes;
//! use paimon_kernel::io::{Io, Machine, PutMode};
//! use paimon_native::ObjectStoreHost;
//!
//! let host = ObjectStoreHost::open("memory://")?;
//! let machine = Machine::once("hello", |io: Io<String>| async move {
//!     io.put("greeting", Bytes::from_static(b"hello"), PutMode::CreateNew).await?;
//!     let bytes = io.read_range("greeting", 1..4).await?;
//!     Ok(String::from_utf8_lossy(&bytes).into_owned())
//! });
//! assert_eq!(host.run_once(machine).await?, "ell");
//! # Ok(())
//! # }
//! ```
//!
//! ## Memory
//!
//! On Linux with glibc, the allocator gives each thread that allocates concurrently its own
//! arena and keeps freed memory in each, so reads decoding on several tokio threads reach a
//! peak RSS well above their live heap. The `paimon-kernel` binary calls
//! `mallopt(M_ARENA_MAX, 1)` first thing in `main` (unless `MALLOC_ARENA_MAX` is set), which
//! cut peak RSS by 25-35% on the benchmark tables at the same CPU time. A library user can do
//! the same in their own binary (`libc::mallopt(libc::M_ARENA_MAX, 1)` before starting the
//! runtime) or set `MALLOC_ARENA_MAX=1` in the environment; a library never changes it.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod compact;
pub mod compact_append;
mod compact_postpone;
pub mod compact_tasks;
pub mod error;
pub mod host;
pub mod location;
pub mod maintenance;
pub mod recording;
pub mod scan;
#[cfg(feature = "sql")]
pub mod sql;
pub mod system;
pub mod table;
pub mod write;

pub use compact_tasks::CompactTask;
pub use error::{Error, Result};
pub use host::{HostOptions, HostStats, ObjectStoreHost};
pub use location::{StoreKind, TableLocation};
pub use scan::{Filter, ReadOptions, RecordBatchStream};
pub use table::{DataFiles, Table, TableScan};
pub use write::{TableCommit, TableWriter};
