//! The inspector's anatomy views as IO-generic `async` functions: read the metadata a view
//! needs (live manifest entries, index manifest, snapshots, tags, manifest lists, schemas)
//! and hand it to the core's pure view models ([`paimon_kernel::inspect`]). Like
//! [`crate::ops`], each runs inside a [`paimon_kernel::io::Machine`] on any host, so they are
//! tested natively over a [`paimon_kernel::io::MemoryStore`] too.
//!
//! * [`levels`]: the [`paimon_kernel::inspect::LevelsView`] of the queried snapshot.
//! * [`compaction_preview`]: a [`paimon_kernel::inspect::CompactionPreview`] (the planners of
//!   `plan-compaction`).
//! * [`field_groups`]: a [`paimon_kernel::inspect::FieldGroupsView`].
//! * [`timeline`]: a [`paimon_kernel::inspect::TimelineView`] plus `tagsListed`.
//! * [`managed_blobs`]: a [`paimon_kernel::inspect::ManagedBlobsView`].

use std::collections::BTreeMap;

use futures_util::future::{try_join, try_join_all};
use paimon_kernel::inspect;
use paimon_kernel::io::{Io, IoErrorKind};
use paimon_kernel::scan::planner::{read_index_entries, read_live_entries, read_manifest_list};
use paimon_kernel::scan::snapshot_resolver::{list_snapshots, list_tags, read_schema};
use paimon_kernel::spec::{IndexManifestEntry, ManifestEntry, Snapshot, TableSchema};
use paimon_kernel::{Error, Result};
use serde::Deserialize;
use serde_json::Value;

use crate::ops::{Query, resolve_query};

/// Snapshots up to which [`timeline`] reads the manifest lists (file counts) unless
/// `fileCounts` says otherwise: two small reads per snapshot.
pub const TIMELINE_FILE_COUNTS_UP_TO: usize = 500;

/// What a view call asks for: the snapshot (as [`Query`]: at most one of `snapshotId`,
/// `tag`, `timestampMillis`; none = the latest), and per view a partition (rendered as
/// `$files` renders it, e.g. `{2024-01-01, 12}`), a bucket, full compaction, file counts.
/// Unknown keys are rejected.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ViewQuery {
    /// `scan.snapshot-id`.
    pub snapshot_id: Option<i64>,
    /// `scan.tag-name`.
    pub tag: Option<String>,
    /// `scan.timestamp-millis`.
    pub timestamp_millis: Option<i64>,
    /// Extra table options.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// levels / fieldGroups: only this partition.
    pub partition: Option<String>,
    /// fieldGroups: only this bucket.
    pub bucket: Option<i32>,
    /// compactionPreview: a full compaction.
    pub full: Option<bool>,
    /// timeline: read the manifest lists for file counts (default: with at most
    /// [`TIMELINE_FILE_COUNTS_UP_TO`] snapshots).
    pub file_counts: Option<bool>,
}

impl ViewQuery {
    /// Parse a JSON object (absent / `null` → the default).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the bad key or value.
    pub fn from_json(text: Option<&str>) -> Result<ViewQuery> {
        match text.map(str::trim) {
            None | Some("" | "null" | "undefined") => Ok(ViewQuery::default()),
            Some(t) => serde_json::from_str(t)
                .map_err(|e| Error::invalid(format!("invalid view options object: {e}"))),
        }
    }

    fn snapshot_query(&self) -> Query {
        Query {
            snapshot_id: self.snapshot_id,
            tag: self.tag.clone(),
            timestamp_millis: self.timestamp_millis,
            options: self.options.clone(),
            ..Query::default()
        }
    }
}

/// The queried snapshot, its schema, live entries and index entries (one round for the
/// manifest lists and index manifest, one for the manifests).
async fn snapshot_files<T>(
    io: &Io<T>,
    q: &ViewQuery,
) -> Result<(
    Option<Snapshot>,
    TableSchema,
    Vec<ManifestEntry>,
    Vec<IndexManifestEntry>,
)> {
    let (snapshot, schema) = resolve_query(io, &q.snapshot_query()).await?;
    let Some(s) = snapshot else {
        return Ok((None, schema, Vec::new(), Vec::new()));
    };
    let (entries, index) = try_join(read_live_entries(io, &s), read_index_entries(io, &s)).await?;
    Ok((Some(s), schema, entries, index))
}

fn to_value(v: impl serde::Serialize, what: &str) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::invalid(format!("{what} to JSON: {e}")))
}

/// The buckets-and-levels view of the queried snapshot (`partition` keeps one).
///
/// # Errors
/// As [`resolve_query`]; IO / corrupt manifests; an unknown partition.
pub async fn levels<T>(io: &Io<T>, q: &ViewQuery) -> Result<Value> {
    let (s, schema, entries, index) = snapshot_files(io, q).await?;
    let view = inspect::levels(
        &schema,
        s.map(|s| s.id),
        &entries,
        &index,
        q.partition.as_deref(),
    )?;
    to_value(view, "levels view")
}

/// What compaction would do on the queried snapshot (`full`: a full compaction), planned at
/// `now_millis`.
///
/// # Errors
/// As [`resolve_query`]; IO / corrupt manifests; malformed compaction options.
pub async fn compaction_preview<T>(io: &Io<T>, q: &ViewQuery, now_millis: i64) -> Result<Value> {
    let (s, schema, entries, index) = snapshot_files(io, q).await?;
    // Record-level expiry reads file statistics with the files' own schemas.
    let mut schemas = BTreeMap::new();
    if schema.options.contains_key("record-level.expire-time") {
        let ids: std::collections::BTreeSet<i64> = entries
            .iter()
            .map(|e| e.file.schema_id)
            .filter(|id| *id != schema.id)
            .collect();
        for s in try_join_all(ids.iter().map(|id| read_schema(io, *id))).await? {
            schemas.insert(s.id, s);
        }
    }
    let view = inspect::compaction_preview_with_schemas(
        &schema,
        s.map(|s| s.id),
        &entries,
        &index,
        &schemas,
        q.full.unwrap_or(false),
        now_millis,
    )?;
    to_value(view, "compaction preview")
}

/// The field-groups view of the queried snapshot (`partition` / `bucket` keep one); the
/// schemas of the files are read to follow renamed and dropped columns.
///
/// # Errors
/// As [`resolve_query`]; IO / corrupt manifests and schemas; files without row ids.
pub async fn field_groups<T>(io: &Io<T>, q: &ViewQuery) -> Result<Value> {
    let (s, schema, entries, index) = snapshot_files(io, q).await?;
    let mut ids: Vec<i64> = entries.iter().map(|e| e.file.schema_id).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.retain(|id| *id != schema.id);
    let read = try_join_all(ids.iter().map(|id| read_schema(io, *id))).await?;
    let mut schemas: BTreeMap<i64, TableSchema> = read.into_iter().map(|s| (s.id, s)).collect();
    schemas.insert(schema.id, schema.clone());
    let view = inspect::field_groups(
        &schema,
        &schemas,
        s.map(|s| s.id),
        &entries,
        &index,
        q.partition.as_deref(),
        q.bucket,
    )?;
    to_value(view, "field groups view")
}

/// A manifest list, `None` when it is gone.
async fn manifest_list_if_present<T>(
    io: &Io<T>,
    name: &str,
) -> Result<Option<Vec<paimon_kernel::spec::ManifestFileMeta>>> {
    match read_manifest_list(io, name).await {
        Ok(v) => Ok(Some(v)),
        Err(Error::Io {
            kind: IoErrorKind::NotFound,
            ..
        }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The snapshot timeline: every snapshot still present, its tags (when the source can list
/// them: `tagsListed`), and the file counts of its manifest lists (see
/// [`ViewQuery::file_counts`]; one round of two reads per snapshot).
///
/// # Errors
/// IO / corrupt snapshot, tag and manifest-list files.
pub async fn timeline<T>(io: &Io<T>, q: &ViewQuery) -> Result<Value> {
    let snapshots = list_snapshots(io).await?;
    let (tags, tags_listed) = match list_tags(io).await {
        Ok(t) => (t, true),
        Err(Error::Unsupported { .. }) => (Vec::new(), false),
        Err(e) => return Err(e),
    };
    let counts = q
        .file_counts
        .unwrap_or(snapshots.len() <= TIMELINE_FILE_COUNTS_UP_TO);
    let mut manifests = BTreeMap::new();
    if counts {
        let lists = try_join_all(snapshots.iter().map(|s| async move {
            let (base, delta) = try_join(
                manifest_list_if_present(io, &s.base_manifest_list),
                manifest_list_if_present(io, &s.delta_manifest_list),
            )
            .await?;
            Ok::<_, Error>((s.id, base.zip(delta)))
        }))
        .await?;
        for (id, got) in lists {
            if let Some((base, delta)) = got {
                manifests.insert(id, inspect::SnapshotManifests { base, delta });
            }
        }
    }
    let mut v = to_value(inspect::timeline(&snapshots, &tags, &manifests), "timeline")?;
    if let Value::Object(m) = &mut v {
        m.insert("tagsListed".into(), tags_listed.into());
    }
    Ok(v)
}

/// The managed-BLOB view of the queried snapshot.
///
/// # Errors
/// As [`resolve_query`]; IO / corrupt manifests.
pub async fn managed_blobs<T>(io: &Io<T>, q: &ViewQuery) -> Result<Value> {
    let (_, schema, entries, _) = snapshot_files(io, q).await?;
    to_value(
        inspect::read_managed_blobs(io, &schema, &entries).await?,
        "managed blobs view",
    )
}

#[cfg(test)]
mod tests {
    use paimon_kernel::io::{Machine, MemoryStore};
    use serde_json::json;

    use super::*;
    use crate::ops::tests_support::{expected, load};

    fn run(store: &mut MemoryStore, m: Machine<Value>) -> Value {
        store.run(m).unwrap().pop().unwrap()
    }

    fn view(table: &str, q: Value, f: fn(ViewQuery) -> Machine<Value>) -> Value {
        let mut store = load(table);
        let q: ViewQuery = serde_json::from_value(q).unwrap();
        run(&mut store, f(q))
    }

    fn levels_m(q: ViewQuery) -> Machine<Value> {
        Machine::once("levels", move |io| async move { levels(&io, &q).await })
    }

    fn preview_m(q: ViewQuery) -> Machine<Value> {
        Machine::once("preview", move |io| async move {
            compaction_preview(&io, &q, 0).await
        })
    }

    fn groups_m(q: ViewQuery) -> Machine<Value> {
        Machine::once(
            "groups",
            move |io| async move { field_groups(&io, &q).await },
        )
    }

    fn timeline_m(q: ViewQuery) -> Machine<Value> {
        Machine::once("timeline", move |io| async move { timeline(&io, &q).await })
    }

    /// (bucket, level) → files, from the expected file (pypaimon's `$files`).
    fn expected_levels(table: &str) -> BTreeMap<(i64, i64), usize> {
        let mut out = BTreeMap::new();
        for f in expected(table)["files"].as_array().unwrap() {
            let key = (f["bucket"].as_i64().unwrap(), f["level"].as_i64().unwrap());
            *out.entry(key).or_insert(0) += 1;
        }
        out
    }

    #[test]
    fn levels_count_the_files_of_each_level() {
        for table in [
            "pk_dedup",
            "pk_dv",
            "pk_dedup_partitioned",
            "append_fixed_bucket",
        ] {
            let v = view(table, json!({}), levels_m);
            let mut got = BTreeMap::new();
            for p in v["partitions"].as_array().unwrap() {
                for b in p["buckets"].as_array().unwrap() {
                    for r in b["runs"].as_array().unwrap() {
                        for f in r["files"].as_array().unwrap() {
                            let key = (b["bucket"].as_i64().unwrap(), f["level"].as_i64().unwrap());
                            *got.entry(key).or_insert(0) += 1;
                        }
                    }
                }
            }
            assert_eq!(got, expected_levels(table), "{table}");
        }
        let v = view("pk_dedup", json!({}), levels_m);
        assert_eq!(v["keyColumns"], json!(["k"]));
        assert_eq!(v["numLevels"], json!(6));
    }

    #[test]
    fn preview_of_a_pk_table_and_a_data_evolution_table_with_deletion_vectors() {
        let v = view("pk_dedup", json!({"full": true}), preview_m);
        assert_eq!(v["available"], json!(true));
        assert_eq!(v["planner"], json!("primary-key-full"));
        // Every live file of both buckets goes to the max level (what plan-compaction --full
        // says for this table).
        let tasks = v["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 2);
        let files: usize = tasks
            .iter()
            .map(|t| t["files"].as_array().unwrap().len())
            .sum();
        assert_eq!(
            files,
            expected("pk_dedup")["files"].as_array().unwrap().len()
        );
        assert!(tasks.iter().all(|t| t["outputLevel"] == json!(5)));
        // Data evolution with deletion vectors: planned as without them (one task over its
        // five files; the vectors move to the output when the task runs).
        let v = view("de_merge_into", json!({}), preview_m);
        assert_eq!(v["available"], json!(true), "{v}");
        assert_eq!(v["planner"], json!("data-evolution"));
        let tasks = v["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 1);
        assert_eq!(tasks[0]["files"].as_array().unwrap().len(), 5);
    }

    #[test]
    fn field_groups_of_a_data_evolution_table() {
        let v = view("de_update", json!({}), groups_m);
        let files = &v["buckets"][0]["files"];
        assert_eq!(
            files.as_array().unwrap().len(),
            expected("de_update")["files"].as_array().unwrap().len()
        );
        assert_eq!(v["tableKind"], json!("data-evolution"));
        // Every group's columns are supplied by one of its files.
        for g in v["buckets"][0]["groups"].as_array().unwrap() {
            assert!(!g["sources"].as_array().unwrap().is_empty());
        }
    }

    #[test]
    fn timeline_matches_the_snapshots_and_tags() {
        let table = "append_tags_rollback";
        let v = view(table, json!({}), timeline_m);
        let exp = expected(table);
        let points = v["points"].as_array().unwrap();
        let snaps = exp["snapshots"].as_array().unwrap();
        assert_eq!(points.len(), snaps.len());
        for (p, s) in points.iter().zip(snaps) {
            assert_eq!(p["snapshotId"], s["id"]);
            assert_eq!(p["commitKind"], s["commitKind"]);
            assert_eq!(p["totalRecordCount"], s["totalRecordCount"]);
        }
        assert_eq!(v["tagsListed"], json!(true));
        let tagged: usize = points
            .iter()
            .map(|p| p["tags"].as_array().unwrap().len())
            .sum();
        let detached = v["detachedTags"].as_array().unwrap().len();
        assert_eq!(tagged + detached, exp["tags"].as_object().unwrap().len());
        // The latest point's live files are the files of the latest snapshot.
        assert_eq!(
            points.last().unwrap()["liveFiles"],
            json!(exp["files"].as_array().unwrap().len())
        );
    }
}

/// The JS methods of the views on [`crate::Table`].
mod js {
    use std::rc::Rc;

    use js_sys::Promise;
    use wasm_bindgen::prelude::*;
    use wasm_bindgen_futures::future_to_promise;

    use super::ViewQuery;
    use crate::source::js_message;
    use crate::{Table, js_err, js_err_text};

    #[wasm_bindgen(typescript_custom_section)]
    const TS_VIEW_TYPES: &str = r#"
/** Options of the anatomy views (all optional): the snapshot as in Query, plus per view. */
export interface ViewQuery {
  snapshotId?: number; tag?: string; timestampMillis?: number; options?: Record<string, string>;
  /** levels / fieldGroups: one partition, as `files()` renders it, e.g. "{2024-01-01, 12}". */
  partition?: string;
  /** fieldGroups: one bucket. */
  bucket?: number;
  /** compactionPreview: a full compaction. */
  full?: boolean;
  /** timeline: read the manifest lists for file counts (default: up to 500 snapshots). */
  fileCounts?: boolean;
}
export interface DeletionVectorView { cardinality: number | null; indexFile: string }
export interface LevelFile {
  fileName: string; level: number; fileSize: number; rowCount: number;
  minKey: string | null; maxKey: string | null; x0: number; x1: number;
  minSequenceNumber: number; maxSequenceNumber: number; schemaId: number;
  deleteRowCount: number | null; deletionVector: DeletionVectorView | null;
  creationTimeMillis: number | null; fileSource: string | null; firstRowId: number | null;
  extraFiles: string[];
}
export interface LevelsView {
  snapshotId: number | null; tableKind: string; keyColumns: string[];
  keyAxis: "value" | "rank" | "none"; numLevels: number; allPartitions: string[];
  partitions: { partition: string; partitionValues: Record<string, unknown>;
    buckets: { bucket: number; totalBuckets: number; fileCount: number; totalBytes: number;
      totalRows: number; sortedRunCount: number | null; filesPerLevel: Record<string, number>;
      keyAxis: "value" | "rank" | "none"; runs: { level: number; files: LevelFile[] }[] }[] }[];
}
export interface CompactionPreview {
  snapshotId: number | null; tableKind: string; full: boolean; planner: string;
  available: boolean; unavailableReason: string | null;
  tasks: { partition: string; partitionValues: Record<string, unknown>; bucket: number;
    outputLevel: number | null; upgrade: boolean; files: string[]; inputBytes: number;
    inputRows: number }[];
}
export interface FieldGroupsView {
  snapshotId: number | null; tableKind: string; allPartitions: string[]; placeholders: string;
  columns: { name: string; fieldId: number; blob: boolean }[];
  buckets: { partition: string; partitionValues: Record<string, unknown>; bucket: number;
    rowIdMin: number; rowIdMax: number;
    groups: { firstRowId: number; lastRowId: number; anchor: string | null;
      sources: { column: string; files: string[] }[] }[];
    files: { fileName: string; group: number; layer: number; firstRowId: number;
      lastRowId: number; rowCount: number; columns: string[]; writeCols: string[] | null;
      blob: boolean; minSequenceNumber: number; maxSequenceNumber: number; schemaId: number;
      fileSize: number; deletionVector: DeletionVectorView | null }[] }[];
}
export interface TimelineView {
  points: { snapshotId: number; timeMillis: number; commitKind: string; operation: string | null;
    schemaId: number; totalRecordCount: number; deltaRecordCount: number;
    changelogRecordCount: number | null; liveFiles: number | null; addedFiles: number | null;
    deletedFiles: number | null; commitUser: string; tags: string[] }[];
  detachedTags: [string, number][]; fileCounts: boolean; liveBytes: string; tagsListed: boolean;
}
export interface ManagedBlobsView {
  /** Data files with .blobref sidecars, with the packs their sidecars reference. */
  files: { partition: string; bucket: number; dataFile: string; blobrefs: string[]; packs: string[] }[];
  /** Every referenced pack: where it was looked for, its size (null: not there), its files. */
  packs: { partition: string; bucket: number; pack: string; storageRoot: string; path: string;
    sizeBytes: number | null; referencedBy: string[] }[];
  note: string;
}
"#;

    fn view_query(v: &JsValue) -> Result<ViewQuery, JsValue> {
        if v.is_undefined() || v.is_null() {
            return Ok(ViewQuery::default());
        }
        let text = js_sys::JSON::stringify(v)
            .map_err(|e| js_err_text(format!("options are not JSON: {}", js_message(&e))))?;
        ViewQuery::from_json(text.as_string().as_deref()).map_err(js_err)
    }

    #[wasm_bindgen]
    impl Table {
        /// Buckets and levels of the queried snapshot (`{partition}` keeps one partition):
        /// per bucket the sorted runs and their files on the key axis.
        #[wasm_bindgen(unchecked_return_type = "Promise<LevelsView>")]
        pub fn levels(
            &self,
            #[wasm_bindgen(unchecked_param_type = "ViewQuery")] query: JsValue,
        ) -> Promise {
            let inner = Rc::clone(&self.inner);
            let q = view_query(&query);
            future_to_promise(async move {
                let q = q?;
                inner
                    .json_op("levels", |io| async move { super::levels(&io, &q).await })
                    .await
            })
        }

        /// What compaction would do on the queried snapshot (`{full: true}`: a full
        /// compaction), from the planners `plan-compaction` uses, planned at the page's clock.
        #[wasm_bindgen(js_name = compactionPreview, unchecked_return_type = "Promise<CompactionPreview>")]
        pub fn compaction_preview(
            &self,
            #[wasm_bindgen(unchecked_param_type = "ViewQuery")] query: JsValue,
        ) -> Promise {
            let inner = Rc::clone(&self.inner);
            let q = view_query(&query);
            let now = js_sys::Date::now() as i64;
            future_to_promise(async move {
                let q = q?;
                inner
                    .json_op("compactionPreview", move |io| async move {
                        super::compaction_preview(&io, &q, now).await
                    })
                    .await
            })
        }

        /// Field groups of the queried snapshot (`{partition, bucket}` keep one): one band
        /// per file over its row ids and columns, layers and value sources per row-id group.
        #[wasm_bindgen(js_name = fieldGroups, unchecked_return_type = "Promise<FieldGroupsView>")]
        pub fn field_groups(
            &self,
            #[wasm_bindgen(unchecked_param_type = "ViewQuery")] query: JsValue,
        ) -> Promise {
            let inner = Rc::clone(&self.inner);
            let q = view_query(&query);
            future_to_promise(async move {
                let q = q?;
                inner
                    .json_op("fieldGroups", |io| async move {
                        super::field_groups(&io, &q).await
                    })
                    .await
            })
        }

        /// The snapshot timeline: every snapshot with its kind, record and file counts and
        /// tags (`{fileCounts}` forces or skips the manifest-list reads).
        #[wasm_bindgen(unchecked_return_type = "Promise<TimelineView>")]
        pub fn timeline(
            &self,
            #[wasm_bindgen(unchecked_param_type = "ViewQuery")] query: JsValue,
        ) -> Promise {
            let inner = Rc::clone(&self.inner);
            let q = view_query(&query);
            future_to_promise(async move {
                let q = q?;
                inner
                    .json_op(
                        "timeline",
                        |io| async move { super::timeline(&io, &q).await },
                    )
                    .await
            })
        }

        /// Data files of the queried snapshot with `.blobref` sidecars and the packs those
        /// reference (the sidecars are read; "no managed-blob packs" when there are none).
        #[wasm_bindgen(js_name = managedBlobs, unchecked_return_type = "Promise<ManagedBlobsView>")]
        pub fn managed_blobs(
            &self,
            #[wasm_bindgen(unchecked_param_type = "ViewQuery")] query: JsValue,
        ) -> Promise {
            let inner = Rc::clone(&self.inner);
            let q = view_query(&query);
            future_to_promise(async move {
                let q = q?;
                inner
                    .json_op("managedBlobs", |io| async move {
                        super::managed_blobs(&io, &q).await
                    })
                    .await
            })
        }
    }
}
