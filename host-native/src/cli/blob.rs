//! `blob`: write the bytes of one blob of a data-evolution table, found by `_ROW_ID` and
//! column, with ranged reads only (the plan is restricted to the row; then the `.blob` file's
//! footer and index and the one record). `blob-descriptor`: print the serialized blob
//! descriptor of bytes of a file, for input rows that reference blobs instead of holding them.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use paimon_native::Table;

use super::{error_chain, print_io_stats};

/// Arguments of `blob`.
#[derive(Debug, Args)]
pub(crate) struct BlobArgs {
    /// Table directory or URL (s3://, gs://, az://, abfs://, http(s)://, file://).
    table: String,
    /// `_ROW_ID` of the row.
    #[arg(long, value_name = "N")]
    row_id: i64,
    /// The BLOB column.
    #[arg(long, value_name = "C")]
    column: String,
    /// Read this snapshot id instead of the latest.
    #[arg(long, value_name = "N", conflicts_with = "tag")]
    snapshot: Option<i64>,
    /// Read the snapshot of this tag.
    #[arg(long, value_name = "T")]
    tag: Option<String>,
    /// Write to this file instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Run `blob`; `Err` holds the message for stderr (exit code 1). A NULL blob is an error
/// ("is NULL"), so that empty output always means an empty blob. With `io_stats`, the IO
/// done (rounds, requests, bytes) goes to stderr once the blob is read.
pub(crate) async fn run(args: BlobArgs, io_stats: bool) -> Result<(), String> {
    let table = Table::open(&args.table)
        .await
        .map_err(|e| error_chain(&e))?;
    let mut scan = table.scan();
    if let Some(id) = args.snapshot {
        scan = scan.with_snapshot_id(id);
    } else if let Some(tag) = &args.tag {
        scan = scan.with_tag(tag.clone());
    }
    let bytes = scan
        .read_blob(args.row_id, &args.column)
        .await
        .map_err(|e| error_chain(&e))?
        .ok_or_else(|| format!("column {} of row id {} is NULL", args.column, args.row_id))?;
    if io_stats {
        print_io_stats(&table);
    }
    match &args.output {
        Some(path) => std::fs::write(path, &bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(&bytes).and_then(|()| out.flush()) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(format!("cannot write stdout: {e}")),
            }
        }
    }
}

/// Arguments of `blob-descriptor`.
#[derive(Debug, Args)]
pub(crate) struct DescriptorArgs {
    /// The file: a URI (`file:/data/video.mp4`, `s3://bucket/key`) or a local path (made
    /// absolute, with the `file:` scheme).
    uri: String,
    /// First byte.
    #[arg(long, default_value_t = 0, value_name = "N")]
    offset: i64,
    /// Number of bytes; -1 (the default) means to the end of the file, looked up when the
    /// row is written.
    #[arg(long, default_value_t = -1, value_name = "N", allow_negative_numbers = true)]
    length: i64,
}

/// The lowercase hex of the version-2 descriptor of `args` (Java `BlobDescriptor#serialize`).
pub(crate) fn descriptor_hex(args: &DescriptorArgs) -> String {
    let uri = if paimon_kernel::io::uri_scheme(&args.uri).is_some() {
        args.uri.clone()
    } else {
        let path = std::path::Path::new(&args.uri);
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        format!("file:{}", abs.display())
    };
    let bytes =
        paimon_kernel::format::blob_descriptor::BlobDescriptor::new(uri, args.offset, args.length)
            .serialize();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
