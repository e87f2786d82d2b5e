//! Decode every manifest-family file of the pypaimon corpus and replay every snapshot
//! (`spec/table-layout.md` §5, §7; corpus in `conformance/tables`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use paimon_kernel::Error;
use paimon_kernel::format::deletion_vector::decode_deletion_vector_index;
use paimon_kernel::format::hash_index::decode_hash_index;
use paimon_kernel::spec::partition::{
    PartitionNaming, bucket_path, partition_path, render_partition_pypaimon,
};
use paimon_kernel::spec::{
    BinaryRow, DataField, DataType, Datum, FileKind, ManifestEntry, TableSchema,
    decode_index_manifest, decode_manifest, decode_manifest_list, decode_schema, merge_entries,
};
use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

fn tables() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus().join("corpus.db"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(names.len() >= 40, "corpus has {} tables", names.len());
    names
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&read(path)).unwrap()
}

fn schema(root: &Path, id: i64) -> TableSchema {
    let path = root.join(format!("schema/schema-{id}"));
    decode_schema(&read(&path), &path.display().to_string()).unwrap()
}

fn partition_fields(schema: &TableSchema) -> Vec<DataField> {
    schema
        .partition_fields()
        .unwrap()
        .into_iter()
        .cloned()
        .collect()
}

fn types_of(schema: &TableSchema, names: &[String]) -> Vec<DataType> {
    names
        .iter()
        .map(|n| schema.field(n).unwrap().data_type.clone())
        .collect()
}

struct Table {
    name: String,
    root: PathBuf,
}

impl Table {
    fn manifest(&self, name: &str) -> PathBuf {
        self.root.join("manifest").join(name)
    }

    fn snapshots(&self) -> Vec<(i64, Value)> {
        let mut out: Vec<(i64, Value)> = std::fs::read_dir(self.root.join("snapshot"))
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                let id = name.strip_prefix("snapshot-")?.parse().ok()?;
                Some((id, json(&self.root.join("snapshot").join(&name))))
            })
            .collect();
        out.sort_by_key(|(id, _)| *id);
        // Tags are snapshot JSON too (spec §1): replay them as well.
        if let Ok(dir) = std::fs::read_dir(self.root.join("tag")) {
            let mut tags: Vec<_> = dir.map(|e| e.unwrap().path()).collect();
            tags.sort();
            for tag in tags {
                let snapshot = json(&tag);
                out.push((snapshot["id"].as_i64().unwrap(), snapshot));
            }
        }
        out
    }

    /// Entries of base + delta manifest lists, in order, checking each manifest against its
    /// `ManifestFileMeta`.
    fn entries(&self, snapshot: &Value) -> Vec<ManifestEntry> {
        let mut out = Vec::new();
        for key in ["baseManifestList", "deltaManifestList"] {
            let list_name = snapshot[key].as_str().unwrap();
            let list_path = self.manifest(list_name);
            let metas = decode_manifest_list(&read(&list_path), list_name).unwrap();
            for meta in metas {
                let bytes = read(&self.manifest(&meta.file_name));
                assert_eq!(meta.file_size, bytes.len() as i64, "{}", meta.file_name);
                let entries = decode_manifest(&bytes, &meta.file_name).unwrap();
                let adds = entries.iter().filter(|e| e.kind == FileKind::Add).count();
                assert_eq!(meta.num_added_files, adds as i64);
                assert_eq!(meta.num_deleted_files, (entries.len() - adds) as i64);
                if !entries.is_empty() {
                    let min_b = entries.iter().map(|e| e.bucket).min();
                    let max_l = entries.iter().map(|e| e.file.level).max();
                    assert_eq!(meta.min_bucket, min_b);
                    assert_eq!(meta.max_level, max_l);
                }
                for e in &entries {
                    assert_eq!(e.partition.origin(), meta.file_name);
                }
                out.extend(entries);
            }
        }
        out
    }
}

fn all_tables() -> Vec<Table> {
    tables()
        .into_iter()
        .map(|name| Table {
            root: corpus().join("corpus.db").join(&name),
            name,
        })
        .collect()
}

#[test]
fn every_manifest_family_file_decodes() {
    let mut counts = BTreeMap::<&str, usize>::new();
    for table in all_tables() {
        for e in std::fs::read_dir(table.root.join("manifest")).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            let bytes = read(&table.manifest(&name));
            if name.starts_with("manifest-list-") {
                let metas = decode_manifest_list(&bytes, &name)
                    .unwrap_or_else(|e| panic!("{}/{name}: {e}", table.name));
                for m in &metas {
                    let size = std::fs::metadata(table.manifest(&m.file_name))
                        .unwrap()
                        .len();
                    assert_eq!(size as i64, m.file_size, "{}", m.file_name);
                }
                *counts.entry("list").or_default() += 1;
            } else if name.starts_with("index-manifest-") {
                let entries = decode_index_manifest(&bytes, &name)
                    .unwrap_or_else(|e| panic!("{}/{name}: {e}", table.name));
                for e in &entries {
                    assert_eq!(e.kind, FileKind::Add);
                    let path = table.root.join("index").join(&e.index_file.file_name);
                    let size = std::fs::metadata(&path).unwrap().len();
                    assert_eq!(size as i64, e.index_file.file_size);
                    if e.index_file.index_type == "HASH" {
                        assert_eq!(size as i64, 4 * e.index_file.row_count);
                    } else {
                        assert_eq!(e.index_file.index_type, "DELETION_VECTORS");
                        let ranges = e.index_file.dv_ranges.as_ref().unwrap();
                        assert_eq!(ranges.len() as i64, e.index_file.row_count);
                    }
                }
                *counts.entry("index").or_default() += 1;
            } else if name.starts_with("manifest-") {
                let entries = decode_manifest(&bytes, &name)
                    .unwrap_or_else(|e| panic!("{}/{name}: {e}", table.name));
                assert!(!entries.is_empty());
                *counts.entry("manifest").or_default() += 1;
            } else {
                panic!("unexpected file {name} in {}/manifest", table.name);
            }
        }
    }
    // The spec audit counted 229 manifest lists in the corpus.
    assert_eq!(counts["list"], 229, "{counts:?}");
    assert!(
        counts["manifest"] > 100 && counts["index"] >= 5,
        "{counts:?}"
    );
}

#[test]
fn replay_every_snapshot() {
    let mut snapshots = 0;
    for table in all_tables() {
        let keys = partition_fields(&schema(&table.root, 0));
        let naming = PartitionNaming::default();
        for (id, snapshot) in table.snapshots() {
            let entries = table.entries(&snapshot);
            let merged = merge_entries(entries)
                .unwrap_or_else(|e| panic!("{} snapshot {id}: {e}", table.name));
            assert!(
                merged.iter().all(|e| e.kind == FileKind::Add),
                "{} snapshot {id}: unmatched DELETE",
                table.name
            );
            let total: i64 = merged.iter().map(|e| e.file.row_count).sum();
            assert_eq!(
                Some(total),
                snapshot["totalRecordCount"].as_i64(),
                "{} snapshot {id}",
                table.name
            );
            // Every live file lies at <partition path>/bucket-<N>/<file>.
            for e in &merged {
                let part = partition_path(&keys, &e.partition, &naming).unwrap();
                let path = e.file.path_in_bucket(&bucket_path("", &part, e.bucket));
                assert!(
                    table.root.join(&path).is_file(),
                    "{}: {path} missing",
                    table.name
                );
            }
            if let Some(list) = snapshot["changelogManifestList"].as_str() {
                let metas = decode_manifest_list(&read(&table.manifest(list)), list).unwrap();
                for m in metas {
                    decode_manifest(&read(&table.manifest(&m.file_name)), &m.file_name).unwrap();
                }
            }
            snapshots += 1;
        }
    }
    // 112 snapshot files and 2 tags in the corpus (spec §3 counted 114).
    assert_eq!(snapshots, 114);
}

#[test]
fn latest_live_files_match_expected() {
    for table in all_tables() {
        let expected = json(&corpus().join(format!("{}.expected.json", table.name)));
        let snapshot_id = expected["snapshot_id"].as_i64().unwrap();
        let snapshot = json(&table.root.join(format!("snapshot/snapshot-{snapshot_id}")));
        let schema_id = expected["schema_id"].as_i64().unwrap();
        let keys = partition_fields(&schema(&table.root, schema_id));
        let live = merge_entries(table.entries(&snapshot)).unwrap();

        let mut got: Vec<Value> = live
            .iter()
            .map(|e| {
                let f = &e.file;
                serde_json::json!({
                    "partition": render_partition_pypaimon(&keys, &e.partition).unwrap(),
                    "bucket": e.bucket,
                    "file_path": f.file_name,
                    "file_format": f.file_format(),
                    "schema_id": f.schema_id,
                    "level": f.level,
                    "record_count": f.row_count,
                    "min_sequence_number": f.min_sequence_number,
                    "max_sequence_number": f.max_sequence_number,
                    "first_row_id": f.first_row_id,
                    "write_cols": f.write_cols,
                })
            })
            .collect();
        let mut want: Vec<Value> = expected["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let mut f = f.clone();
                f.as_object_mut().unwrap().remove("deleteRowCount");
                f
            })
            .collect();
        let key = |v: &Value| v["file_path"].as_str().unwrap().to_owned();
        got.sort_by_key(key);
        want.sort_by_key(key);
        assert_eq!(got, want, "{}", table.name);
        // pypaimon 2.1.0 writes _DELETE_ROW_COUNT = 0 (spec §5.5), matching deleteRowCount.
        for e in &live {
            assert_eq!(e.file.delete_row_count, Some(0), "{}", table.name);
        }
    }
}

#[test]
fn partition_rows_of_partitioned_tables() {
    // append_partitioned: NULL region / yr land in __DEFAULT_PARTITION__ (spec §1.2).
    let table = corpus().join("corpus.db/append_partitioned");
    let keys = partition_fields(&schema(&table, 0));
    assert_eq!(keys.len(), 2);
    let snapshot = json(&table.join("snapshot/snapshot-3"));
    let t = Table {
        name: "append_partitioned".into(),
        root: table.clone(),
    };
    let live = merge_entries(t.entries(&snapshot)).unwrap();
    let paths: std::collections::BTreeSet<String> = live
        .iter()
        .map(|e| partition_path(&keys, &e.partition, &PartitionNaming::default()).unwrap())
        .collect();
    assert!(paths.contains("region=__DEFAULT_PARTITION__/yr=2023/"));
    assert!(paths.contains("region=apac/yr=__DEFAULT_PARTITION__/"));
}

#[test]
fn corrupt_avro_names_the_file() {
    let table = corpus().join("corpus.db/pk_dedup/manifest");
    let mut files: Vec<_> = std::fs::read_dir(&table)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let manifest = files
        .iter()
        .find(|n| n.starts_with("manifest-") && !n.starts_with("manifest-list-"))
        .unwrap();
    let list = files
        .iter()
        .find(|n| n.starts_with("manifest-list-"))
        .unwrap();
    for (is_list, name, bytes) in [
        (false, manifest, read(&table.join(manifest))),
        (true, list, read(&table.join(list))),
    ] {
        for cut in [0, 3, 10, bytes.len() / 2, bytes.len() - 1] {
            let truncated = &bytes[..cut];
            let errs = [
                decode_manifest(truncated, name).err(),
                decode_manifest_list(truncated, name).err(),
                decode_index_manifest(truncated, name).err(),
            ];
            for err in errs {
                match err {
                    Some(Error::Corrupt { path, format, .. }) => {
                        assert_eq!(&path, name);
                        assert_eq!(format, "avro-manifest");
                    }
                    other => panic!("{name} cut at {cut}: {other:?}"),
                }
            }
        }
        // Flip bytes in the middle of the data block.
        let mut bad = bytes.clone();
        let mid = bad.len() - 40;
        for b in &mut bad[mid..mid + 8] {
            *b ^= 0x5a;
        }
        let err = if is_list {
            decode_manifest_list(&bad, name).err()
        } else {
            decode_manifest(&bad, name).err()
        };
        assert!(
            matches!(&err, Some(Error::Corrupt { path, .. }) if path == name),
            "{err:?}"
        );
    }
    // A manifest list is not a manifest: required fields are missing.
    let err = decode_manifest(&read(&table.join(list)), list).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    let _ = BinaryRow::empty();
}

/// Key rows and key stats of every PK file, value stats and partition stats decode with the
/// schema's types and are consistent (spec §5.5-5.6, §6).
#[test]
fn key_and_partition_stats_decode() {
    let mut kv_files = 0;
    for table in all_tables() {
        let latest = table.snapshots().last().unwrap().1.clone();
        let schema0 = schema(&table.root, 0);
        let keys = partition_fields(&schema0);
        let part_types: Vec<DataType> = keys.iter().map(|f| f.data_type.clone()).collect();
        // Partition stats of the manifest lists bound the entries' partitions.
        for key in ["baseManifestList", "deltaManifestList"] {
            let name = latest[key].as_str().unwrap();
            for meta in decode_manifest_list(&read(&table.manifest(name)), name).unwrap() {
                let stats = &meta.partition_stats;
                let entries =
                    decode_manifest(&read(&table.manifest(&meta.file_name)), &meta.file_name)
                        .unwrap();
                if keys.is_empty() {
                    assert_eq!(stats.min_values.arity(), 0);
                    continue;
                }
                let min = stats.min_values.fields(&part_types).unwrap();
                let max = stats.max_values.fields(&part_types).unwrap();
                assert_eq!(stats.null_counts.len(), keys.len());
                for (i, ty) in part_types.iter().enumerate() {
                    let values: Vec<Datum> = entries
                        .iter()
                        .map(|e| e.partition.field(i, ty).unwrap())
                        .collect();
                    let non_null: Vec<&Datum> = values.iter().filter(|d| !d.is_null()).collect();
                    let nulls = (values.len() - non_null.len()) as i64;
                    assert_eq!(stats.null_counts.get(i), Some(nulls), "{}", table.name);
                    if let (Some(lo), Some(hi)) = (non_null.iter().min(), non_null.iter().max()) {
                        assert_eq!(&&min[i], lo, "{} {}", table.name, meta.file_name);
                        assert_eq!(&&max[i], hi, "{} {}", table.name, meta.file_name);
                    }
                }
            }
        }
        let live = merge_entries(table.entries(&latest)).unwrap();
        for e in &live {
            let file_schema = schema(&table.root, e.file.schema_id);
            let f = &e.file;
            if file_schema.primary_keys.is_empty() || f.is_blob_file() {
                assert_eq!(f.min_key, BinaryRow::empty());
                assert_eq!(f.max_key, BinaryRow::empty());
                continue;
            }
            let key_types = types_of(&file_schema, &file_schema.trimmed_primary_keys().unwrap());
            let min_key = f.min_key.fields(&key_types).unwrap();
            let max_key = f.max_key.fields(&key_types).unwrap();
            assert!(min_key <= max_key, "{} {}", table.name, f.file_name);
            let stats_min = f.key_stats.min_values.fields(&key_types).unwrap();
            let stats_max = f.key_stats.max_values.fields(&key_types).unwrap();
            // Single-column keys: the stats are the first/last key of the sorted file.
            if key_types.len() == 1 {
                assert_eq!(stats_min, min_key, "{}", table.name);
                assert_eq!(stats_max, max_key, "{}", table.name);
            }
            assert_eq!(f.key_stats.null_counts, vec![Some(0); key_types.len()]);
            // pypaimon writes no value stats without stats-mode=full (spec §5.6).
            assert_eq!(f.value_stats_cols, Some(vec![]), "{}", table.name);
            assert_eq!(f.value_stats.min_values.arity(), 0);
            kv_files += 1;
        }
    }
    assert!(kv_files >= 50, "{kv_files} KV files");
}

/// Index manifests of the latest snapshots: DV index files decode (CRC checked) with the
/// expected ranges and cardinalities; HASH files hold `_ROW_COUNT` ints (spec §7).
#[test]
fn index_files_match_expected() {
    let mut dv_files = 0;
    let mut hash_files = 0;
    for table in all_tables() {
        let expected = json(&corpus().join(format!("{}.expected.json", table.name)));
        let snapshot_id = expected["snapshot_id"].as_i64().unwrap();
        let snapshot = json(&table.root.join(format!("snapshot/snapshot-{snapshot_id}")));
        let want: Vec<Value> = expected["index_files"].as_array().unwrap().clone();
        let Some(index_manifest) = snapshot["indexManifest"].as_str() else {
            assert!(want.is_empty(), "{}", table.name);
            continue;
        };
        let live = merge_entries(table.entries(&snapshot)).unwrap();
        let entries =
            decode_index_manifest(&read(&table.manifest(index_manifest)), index_manifest).unwrap();
        let mut got = Vec::new();
        for e in &entries {
            let meta = &e.index_file;
            let path = table.root.join("index").join(&meta.file_name);
            let bytes = read(&path);
            let ranges = meta.dv_ranges.clone();
            got.push(serde_json::json!({
                "partition": null,
                "bucket": e.bucket,
                "index_type": meta.index_type,
                "file_name": meta.file_name,
                "row_count": meta.row_count,
                "dv_ranges": ranges.as_ref().map(|rs| rs.iter().map(|r| serde_json::json!({
                    "f0": r.data_file_name, "f1": r.offset, "f2": r.length,
                    "_CARDINALITY": r.cardinality,
                })).collect::<Vec<_>>()),
            }));
            if meta.index_type == "HASH" {
                let hashes = decode_hash_index(&bytes, &meta.file_name).unwrap();
                assert_eq!(hashes.len() as i64, meta.row_count);
                hash_files += 1;
                continue;
            }
            let ranges = ranges.unwrap();
            let dvs = decode_deletion_vector_index(&bytes, &ranges, &meta.file_name, true).unwrap();
            // Entries back to back, nothing after the last (spec §7.2).
            let last = ranges.last().unwrap();
            assert_eq!((last.offset + 4 + last.length + 4) as usize, bytes.len());
            for (name, dv) in &dvs {
                let file = live
                    .iter()
                    .find(|l| &l.file.file_name == name)
                    .unwrap_or_else(|| panic!("DV of {name} without a live data file"));
                assert!(dv.max_position().unwrap() < file.file.row_count as u64);
                assert!(dv.cardinality() > 0);
            }
            // Re-encoding reproduces the file byte for byte.
            let (again, metas) =
                paimon_kernel::format::deletion_vector::encode_deletion_vector_index(&dvs, false)
                    .unwrap();
            assert_eq!(again, bytes, "{}", meta.file_name);
            assert_eq!(metas, ranges);
            dv_files += 1;
        }
        let key = |v: &Value| v["file_name"].as_str().unwrap().to_owned();
        let mut want = want;
        got.sort_by_key(key);
        want.sort_by_key(key);
        assert_eq!(got, want, "{}", table.name);
    }
    assert_eq!(dv_files, 2);
    assert!(hash_files >= 5, "{hash_files} hash files");
}

/// Encoders: every manifest-family file of the corpus decodes, re-encodes with Java's schema
/// (each codec) and decodes to the same values.
#[test]
fn re_encoded_manifests_decode_equal() {
    use paimon_kernel::spec::{
        AvroWriteOptions, ManifestCodec, encode_index_manifest, encode_manifest,
        encode_manifest_list,
    };
    let codecs = [
        ManifestCodec::Null,
        ManifestCodec::Deflate,
        ManifestCodec::Snappy,
        ManifestCodec::Zstd(1),
    ];
    let mut n = 0;
    for (t, table) in all_tables().into_iter().enumerate() {
        let options = AvroWriteOptions {
            codec: codecs[t % codecs.len()],
            sync_marker: [t as u8; 16],
        };
        for e in std::fs::read_dir(table.root.join("manifest")).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            let bytes = read(&table.manifest(&name));
            if name.starts_with("manifest-list-") {
                let v = decode_manifest_list(&bytes, &name).unwrap();
                let again = encode_manifest_list(&v, &options).unwrap();
                assert_eq!(decode_manifest_list(&again, &name).unwrap(), v);
            } else if name.starts_with("index-manifest-") {
                let v = decode_index_manifest(&bytes, &name).unwrap();
                let again = encode_index_manifest(&v, &options).unwrap();
                assert_eq!(decode_index_manifest(&again, &name).unwrap(), v);
            } else {
                let v = decode_manifest(&bytes, &name).unwrap();
                let again = encode_manifest(&v, &options).unwrap();
                assert_eq!(decode_manifest(&again, &name).unwrap(), v);
                // Java's schema: top-level record name and `_VERSION` first.
                let header = String::from_utf8_lossy(&again[..again.len().min(400)]).into_owned();
                assert!(
                    header.contains("org.apache.paimon.avro.generated"),
                    "{header}"
                );
            }
            n += 1;
        }
    }
    // Every manifest-family file of the corpus (229 manifest lists, manifests, index manifests).
    assert_eq!(n, 348);
}

/// Untrusted bytes never panic: every single-byte mutation (xor 0xff, and set to 0xff) of a
/// manifest list, a manifest and an index manifest decodes or fails with an error.
#[test]
fn mutated_manifests_never_panic() {
    let table = corpus().join("corpus.db/de_dv_delete/manifest");
    let mut names: Vec<String> = std::fs::read_dir(&table)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let pick = |prefix: &str, not: &str| {
        names
            .iter()
            .find(|n| n.starts_with(prefix) && (not.is_empty() || !n.starts_with(not)))
            .unwrap()
            .clone()
    };
    let files = [
        pick("manifest-list-", ""),
        pick("manifest-", "manifest-list-"),
        pick("index-manifest-", ""),
    ];
    let mut errors = 0;
    for name in files {
        let bytes = read(&table.join(&name));
        for i in 0..bytes.len() {
            for m in [0xffu8, 0x80] {
                let mut b = bytes.clone();
                b[i] ^= m;
                let r = std::panic::catch_unwind(|| {
                    (
                        decode_manifest_list(&b, &name).is_err(),
                        decode_manifest(&b, &name).is_err(),
                        decode_index_manifest(&b, &name).is_err(),
                    )
                });
                let (a, c, d) = r.unwrap_or_else(|_| panic!("{name}: panic at byte {i} ^ {m:#x}"));
                errors += usize::from(a) + usize::from(c) + usize::from(d);
            }
        }
    }
    assert!(errors > 0);
}

/// `manifest_file_meta_for` recomputes every manifest list row of the corpus exactly,
/// including the partition stats bytes pypaimon wrote.
#[test]
fn manifest_file_meta_recomputed() {
    use paimon_kernel::spec::manifest_list::manifest_file_meta_for;
    let mut checked = 0;
    for table in all_tables() {
        let part_types: Vec<DataType> = partition_fields(&schema(&table.root, 0))
            .iter()
            .map(|f| f.data_type.clone())
            .collect();
        for e in std::fs::read_dir(table.root.join("manifest")).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            if !name.starts_with("manifest-list-") {
                continue;
            }
            for meta in decode_manifest_list(&read(&table.manifest(&name)), &name).unwrap() {
                let entries =
                    decode_manifest(&read(&table.manifest(&meta.file_name)), &meta.file_name)
                        .unwrap();
                let again = manifest_file_meta_for(
                    &meta.file_name,
                    meta.file_size,
                    meta.schema_id,
                    &entries,
                    &part_types,
                )
                .unwrap();
                assert_eq!(again, meta, "{} {}", table.name, meta.file_name);
                assert_eq!(
                    again.partition_stats.min_values.to_serialized(),
                    meta.partition_stats.min_values.to_serialized()
                );
                checked += 1;
            }
        }
    }
    // Rows of all 229 manifest lists of the corpus.
    assert_eq!(checked, 233);
}
