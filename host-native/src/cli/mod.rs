//! The CLI's commands: each returns the text to print (JSON or a human table).

use std::io::Write;

use paimon_kernel::spec::binary_row::format_timestamp;
use paimon_kernel::spec::schema::TableSchema;
use paimon_kernel::spec::snapshot::{JavaDuration, LocalDateTime, Snapshot, Tag};
use paimon_native::system::FileRow;
use paimon_native::{Error, Result, Table, TableScan};
use serde_json::{Value, json};

pub(crate) mod alter;
pub(crate) mod blob;
pub(crate) mod compact;
pub(crate) mod delete;
pub(crate) mod input;
pub(crate) mod maintenance;
pub(crate) mod scan;
pub(crate) mod scenario;
#[cfg(feature = "sql")]
pub(crate) mod sql;
mod text_table;
pub(crate) mod update;
pub(crate) mod write;

use text_table::{TextTable, render_pairs};

/// Write `out` to stdout; a closed pipe (`| head`) is not an error worth a panic.
pub(crate) fn print(out: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(out.as_bytes());
    if !out.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
}

/// `--io-stats`: the IO `table`'s host did so far, one line on stderr.
pub(crate) fn print_io_stats(table: &Table) {
    let s = table.host().stats();
    eprintln!(
        "io: {} rounds, {} requests, {} store calls, {} bytes fetched, {} retries",
        s.rounds, s.requests, s.store_calls, s.bytes_fetched, s.retries
    );
}

/// The error and its sources, `: `-separated, without repeating a source already shown.
pub(crate) fn error_chain(e: &Error) -> String {
    let mut text = e.to_string();
    let mut cur = std::error::Error::source(e);
    while let Some(s) = cur {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cur = s.source();
    }
    text
}

fn to_json(value: &impl serde::Serialize) -> String {
    // Serializing plain data (no maps with non-string keys) cannot fail.
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

fn time(millis: i64) -> String {
    format_timestamp(millis, 0, 3)
}

/// Java `LocalDateTime#toString`: `yyyy-MM-ddTHH:mm[:ss[.fff…]]`.
fn local_date_time(t: &LocalDateTime) -> String {
    let mut s = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute
    );
    if t.second != 0 || t.nano != 0 {
        s.push_str(&format!(":{:02}", t.second));
    }
    if t.nano != 0 {
        let frac = if t.nano.is_multiple_of(1_000_000) {
            format!("{:03}", t.nano / 1_000_000)
        } else if t.nano.is_multiple_of(1_000) {
            format!("{:06}", t.nano / 1_000)
        } else {
            format!("{:09}", t.nano)
        };
        s.push('.');
        s.push_str(&frac);
    }
    s
}

/// Java `Duration#toString`-like `PT<seconds>S` (fraction when present).
fn duration(d: &JavaDuration) -> String {
    if d.nanos == 0 {
        format!("PT{}S", d.seconds)
    } else {
        format!("PT{}.{:09}S", d.seconds, d.nanos)
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

async fn scan(table: &Table, snapshot: Option<i64>, tag: Option<&str>) -> TableScan {
    let scan = table.scan();
    match (snapshot, tag) {
        (Some(id), _) => scan.with_snapshot_id(id),
        (None, Some(tag)) => scan.with_tag(tag),
        (None, None) => scan,
    }
}

/// The schema a command shows: the snapshot's, or the latest for a table without snapshots.
async fn snapshot_and_schema(
    table: &Table,
    snapshot: Option<i64>,
    tag: Option<&str>,
) -> Result<(Option<Snapshot>, TableSchema)> {
    match scan(table, snapshot, tag).await.snapshot().await? {
        Some((s, schema)) => Ok((Some(s), schema)),
        None => Ok((None, table.schema().await?)),
    }
}

fn schema_json(schema: &TableSchema) -> Value {
    json!({
        "id": schema.id,
        "fields": schema.fields.iter().map(|f| f.to_json()).collect::<Vec<_>>(),
        "partitionKeys": schema.partition_keys,
        "primaryKeys": schema.primary_keys,
        "options": schema.options,
        "comment": schema.comment,
    })
}

/// `info`: location, the snapshot, its schema, counts and tags.
pub(crate) async fn info(
    table: &Table,
    snapshot: Option<i64>,
    tag: Option<&str>,
    json: bool,
) -> Result<String> {
    let (snap, schema) = snapshot_and_schema(table, snapshot, tag).await?;
    let snapshots = table.snapshots().await?;
    // Tags need a listing; plain HTTP cannot list, which should not hide the rest.
    let tags = match table.tags().await {
        Ok(tags) => Some(tags),
        Err(e)
            if matches!(
                e.as_kernel(),
                Some(paimon_kernel::Error::Unsupported { .. })
            ) =>
        {
            None
        }
        Err(e) => return Err(e),
    };
    let table_type = if schema.primary_keys.is_empty() {
        "append"
    } else {
        "primary-key"
    };
    if json {
        return Ok(to_json(&json!({
            "location": table.location(),
            "tableType": table_type,
            "snapshot": snap,
            "schema": schema_json(&schema),
            "snapshotIds": snapshots.iter().map(|s| s.id).collect::<Vec<_>>(),
            "tags": tags.as_ref().map(|t| t.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>()),
        })));
    }
    let options = schema.core_options();
    let mut pairs: Vec<(&str, String)> = vec![
        ("location", table.location().to_string()),
        ("table type", table_type.to_string()),
    ];
    match &snap {
        Some(s) => {
            pairs.push((
                "snapshot",
                format!("{} ({}, {})", s.id, s.commit_kind, time(s.time_millis)),
            ));
            pairs.push(("records", s.total_record_count.to_string()));
            if let Some(n) = s.next_row_id {
                pairs.push(("next row id", n.to_string()));
            }
        }
        None => pairs.push(("snapshot", "none".to_string())),
    }
    pairs.push((
        "snapshots",
        match (snapshots.first(), snapshots.last()) {
            (Some(a), Some(b)) => format!("{} ({}..={})", snapshots.len(), a.id, b.id),
            _ => "0".to_string(),
        },
    ));
    pairs.push(("schema id", schema.id.to_string()));
    pairs.push((
        "columns",
        schema
            .fields
            .iter()
            .map(|f| format!("{} {}", f.name, f.data_type.sql_string()))
            .collect::<Vec<_>>()
            .join(", "),
    ));
    pairs.push(("partition keys", schema.partition_keys.join(", ")));
    pairs.push(("primary keys", schema.primary_keys.join(", ")));
    pairs.push(("bucket", opt(options.get("bucket"))));
    pairs.push(("file format", options.file_format()));
    pairs.push((
        "tags",
        match &tags {
            Some(tags) => tags
                .iter()
                .map(|(n, t)| format!("{n}@{}", t.snapshot.id))
                .collect::<Vec<_>>()
                .join(", "),
            None => "(unknown: this store cannot list tag/)".to_string(),
        },
    ));
    let mut out = render_pairs(&pairs);
    if !schema.options.is_empty() {
        out.push_str("\noptions\n");
        let mut t = TextTable::new(["key", "value"]);
        for (k, v) in &schema.options {
            t.push([k.as_str(), v.as_str()]);
        }
        out.push_str(&t.render());
    }
    Ok(out)
}

/// `snapshots`: every snapshot still present.
pub(crate) async fn snapshots(table: &Table, json: bool) -> Result<String> {
    let snapshots = table.snapshots().await?;
    if json {
        return Ok(to_json(&snapshots));
    }
    let mut t = TextTable::new([
        "id",
        "schema_id",
        "commit_kind",
        "commit_time",
        "total_records",
        "delta_records",
        "changelog_records",
        "next_row_id",
        "commit_user",
    ]);
    for s in &snapshots {
        t.push([
            s.id.to_string(),
            s.schema_id.to_string(),
            s.commit_kind.to_string(),
            time(s.time_millis),
            s.total_record_count.to_string(),
            s.delta_record_count.to_string(),
            opt(s.changelog_record_count),
            opt(s.next_row_id),
            s.commit_user.clone(),
        ]);
    }
    Ok(t.render())
}

/// `schema`: the schema a snapshot uses; `--json` prints the stored file verbatim.
pub(crate) async fn schema(
    table: &Table,
    snapshot: Option<i64>,
    tag: Option<&str>,
    json: bool,
) -> Result<String> {
    let (_, schema) = snapshot_and_schema(table, snapshot, tag).await?;
    if json {
        return Ok(match &schema.raw_json {
            Some(raw) => raw.clone(),
            None => to_json(&schema_json(&schema)),
        });
    }
    let mut out = render_pairs(&[
        ("schema id", schema.id.to_string()),
        ("partition keys", schema.partition_keys.join(", ")),
        ("primary keys", schema.primary_keys.join(", ")),
        ("highest field id", schema.highest_field_id.to_string()),
        ("comment", schema.comment.clone().unwrap_or_default()),
    ]);
    out.push('\n');
    let mut t = TextTable::new(["id", "name", "type", "description"]);
    for f in &schema.fields {
        t.push([
            f.id.to_string(),
            f.name.clone(),
            f.data_type.sql_string(),
            f.description.clone().unwrap_or_default(),
        ]);
    }
    out.push_str(&t.render());
    if !schema.options.is_empty() {
        out.push_str("\noptions\n");
        let mut t = TextTable::new(["key", "value"]);
        for (k, v) in &schema.options {
            t.push([k.as_str(), v.as_str()]);
        }
        out.push_str(&t.render());
    }
    Ok(out)
}

/// `files`: live data files of a snapshot (`$files`).
pub(crate) async fn files(
    table: &Table,
    snapshot: Option<i64>,
    tag: Option<&str>,
    json: bool,
) -> Result<String> {
    let rows: Vec<FileRow> = scan(table, snapshot, tag).await.files().await?;
    if json {
        return Ok(to_json(&rows));
    }
    let mut t = TextTable::new([
        "partition",
        "bucket",
        "file",
        "format",
        "schema_id",
        "level",
        "records",
        "bytes",
        "min_seq",
        "max_seq",
        "first_row_id",
        "write_cols",
    ]);
    for r in &rows {
        let name = r.file_path.rsplit('/').next().unwrap_or(&r.file_path);
        t.push([
            r.partition.clone(),
            r.bucket.to_string(),
            name.to_string(),
            r.file_format.clone(),
            r.schema_id.to_string(),
            r.level.to_string(),
            r.record_count.to_string(),
            r.file_size_in_bytes.to_string(),
            r.min_sequence_number.to_string(),
            r.max_sequence_number.to_string(),
            opt(r.first_row_id),
            r.write_cols.as_ref().map_or(String::new(), |c| c.join(",")),
        ]);
    }
    Ok(t.render())
}

/// `manifests`: the data manifests of a snapshot (`$manifests`).
pub(crate) async fn manifests(
    table: &Table,
    snapshot: Option<i64>,
    tag: Option<&str>,
    json: bool,
) -> Result<String> {
    let rows = scan(table, snapshot, tag).await.manifest_rows().await?;
    if json {
        return Ok(to_json(&rows));
    }
    let mut t = TextTable::new([
        "file_name",
        "file_size",
        "added",
        "deleted",
        "schema_id",
        "min_partition",
        "max_partition",
        "min_row_id",
        "max_row_id",
    ]);
    for r in &rows {
        t.push([
            r.file_name.clone(),
            r.file_size.to_string(),
            r.num_added_files.to_string(),
            r.num_deleted_files.to_string(),
            r.schema_id.to_string(),
            r.min_partition_stats.clone().unwrap_or_default(),
            r.max_partition_stats.clone().unwrap_or_default(),
            opt(r.min_row_id),
            opt(r.max_row_id),
        ]);
    }
    Ok(t.render())
}

/// A `$tags` row (Java `TagsTable` columns; times as epoch millis / text).
fn tag_json(name: &str, tag: &Tag) -> Value {
    json!({
        "tag_name": name,
        "snapshot_id": tag.snapshot.id,
        "schema_id": tag.snapshot.schema_id,
        "commit_time": tag.snapshot.time_millis,
        "record_count": tag.snapshot.total_record_count,
        "create_time": tag.tag_create_time.as_ref().map(local_date_time),
        "time_retained": tag.tag_time_retained.as_ref().map(duration),
    })
}

/// `tags`: tags and their snapshots.
pub(crate) async fn tags(table: &Table, json: bool) -> Result<String> {
    let tags = table.tags().await?;
    if json {
        let rows: Vec<Value> = tags.iter().map(|(n, t)| tag_json(n, t)).collect();
        return Ok(to_json(&rows));
    }
    let mut t = TextTable::new([
        "tag_name",
        "snapshot_id",
        "schema_id",
        "commit_time",
        "record_count",
        "create_time",
        "time_retained",
    ]);
    for (name, tag) in &tags {
        t.push([
            name.clone(),
            tag.snapshot.id.to_string(),
            tag.snapshot.schema_id.to_string(),
            time(tag.snapshot.time_millis),
            tag.snapshot.total_record_count.to_string(),
            tag.tag_create_time
                .as_ref()
                .map_or(String::new(), local_date_time),
            tag.tag_time_retained
                .as_ref()
                .map_or(String::new(), duration),
        ]);
    }
    Ok(t.render())
}
