//! The bucket the write side computes for every row of the fixed-bucket tables of the pypaimon
//! corpus equals the bucket of the file the row lies in (`paimon_kernel::write::bucket`).
//!
//! pypaimon 2.1.0 ports Java's `DefaultBucketFunction` (Murmur3 over the bucket key
//! `BinaryRow`). Also holds the corpus walker shared with `write_stats`: every data file of
//! every table of `conformance/tables`, `conformance/oracle-tables` and, when set, the
//! warehouse `$PAIMON_WRITE_CHECK_WAREHOUSE` (any `*.db/<table>` under it, e.g. written by
//! `conformance/make_corpus.py` with other seeds).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::ArrayRef;
use bytes::Bytes;
use paimon_kernel::format::data_file::{FileFormat, decode_data_file};
use paimon_kernel::spec::{
    DataField, FileKind, ManifestEntry, TableSchema, decode_manifest, decode_schema,
};
use paimon_kernel::types::{cast_column_to, paimon_to_arrow_field};
use paimon_kernel::write::bucket::{BucketFunction, FixedBucketRowKeyExtractor};

/// Table directories to check: the shipped corpora, plus `$PAIMON_WRITE_CHECK_WAREHOUSE`.
pub(crate) fn table_roots() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance");
    let mut dbs = vec![
        root.join("tables/corpus.db"),
        root.join("oracle-tables/corpus.db"),
    ];
    if let Some(extra) = std::env::var("PAIMON_WRITE_CHECK_WAREHOUSE")
        .ok()
        .filter(|v| !v.is_empty())
    {
        for e in std::fs::read_dir(&extra).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && p.extension().is_some_and(|x| x == "db") {
                dbs.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for db in dbs {
        let mut tables: Vec<PathBuf> = std::fs::read_dir(&db)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("schema").is_dir())
            .collect();
        tables.sort();
        out.extend(tables);
    }
    out
}

/// One data file of a table with the manifest entry that added it and its schema.
pub(crate) struct TableFile {
    pub table: String,
    pub path: PathBuf,
    pub entry: ManifestEntry,
    pub schema: Arc<TableSchema>,
    pub format: FileFormat,
}

fn walk(dir: &Path, out: &mut BTreeMap<String, PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if ![
                "manifest",
                "schema",
                "snapshot",
                "index",
                "tag",
                "changelog",
            ]
            .contains(&name.as_str())
            {
                walk(&p, out);
            }
        } else {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            out.insert(name, p);
        }
    }
}

/// Every Parquet, ORC and Avro data (and changelog) file added by any manifest of `root`,
/// once, with the schema it was written with. Files added by a manifest but gone from disk
/// (expired) are skipped.
pub(crate) fn table_files(root: &Path) -> Vec<TableFile> {
    let table = root.file_name().unwrap().to_string_lossy().to_string();
    let mut on_disk = BTreeMap::new();
    walk(root, &mut on_disk);
    let mut schemas: BTreeMap<i64, Arc<TableSchema>> = BTreeMap::new();
    let mut names: Vec<String> = std::fs::read_dir(root.join("manifest"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("manifest-") && !n.starts_with("manifest-list-"))
        .collect();
    names.sort();
    let mut seen = BTreeMap::new();
    for name in names {
        let bytes = std::fs::read(root.join("manifest").join(&name)).unwrap();
        for entry in decode_manifest(&bytes, &name).unwrap() {
            if entry.kind != FileKind::Add || seen.contains_key(&entry.file.file_name) {
                continue;
            }
            seen.insert(entry.file.file_name.clone(), entry);
        }
    }
    let mut out = Vec::new();
    for (name, entry) in seen {
        let Some(path) = on_disk.get(&name) else {
            continue;
        };
        let Some(format) = FileFormat::from_path(&name) else {
            continue;
        };
        let schema = schemas
            .entry(entry.file.schema_id)
            .or_insert_with(|| {
                let p = root.join(format!("schema/schema-{}", entry.file.schema_id));
                Arc::new(
                    decode_schema(&std::fs::read(&p).unwrap(), &p.display().to_string()).unwrap(),
                )
            })
            .clone();
        out.push(TableFile {
            table: table.clone(),
            path: path.clone(),
            entry,
            schema,
            format,
        });
    }
    out
}

/// The batches of `file`, each as the columns named by `fields` (matched by name in the file),
/// cast to the fields' Arrow types. `Ok(None)` if a field is not in the file, `Err` if a column
/// cannot be read as its field's type (physical layouts the plain data-file reader does not
/// map, such as pypaimon's shared map shredding).
pub(crate) fn read_columns(
    file: &TableFile,
    fields: &[DataField],
) -> Result<Option<Vec<Vec<ArrayRef>>>, String> {
    let path = file.path.to_string_lossy().to_string();
    let bytes = Bytes::from(std::fs::read(&file.path).unwrap());
    let decoded = decode_data_file(bytes, &path, file.format, None, 0)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let targets: Vec<_> = fields
        .iter()
        .map(|f| paimon_to_arrow_field(f).unwrap())
        .collect();
    let mut out = Vec::new();
    for batch in &decoded.batches {
        let mut columns = Vec::with_capacity(fields.len());
        for (f, target) in fields.iter().zip(&targets) {
            let Some(column) = batch.column_by_name(&f.name) else {
                return Ok(None);
            };
            columns.push(cast_column_to(column, target, &path).map_err(|e| e.to_string())?);
        }
        out.push(columns);
    }
    Ok(Some(out))
}

#[test]
fn every_row_lies_in_its_computed_bucket() {
    let mut tables = 0;
    let mut files = 0;
    let mut rows = 0;
    for root in table_roots() {
        let mut table_checked = false;
        for file in table_files(&root) {
            let schema = &file.schema;
            let Ok(num_buckets) = schema.core_options().bucket() else {
                continue;
            };
            if num_buckets <= 0 || file.entry.bucket < 0 {
                continue;
            }
            assert_eq!(file.entry.total_buckets, num_buckets, "{}", file.table);
            // The extractor takes the table's columns in schema order; only the bucket key
            // columns are read from the file.
            let extractor = FixedBucketRowKeyExtractor::try_new(schema).unwrap();
            let key_fields: Vec<DataField> = extractor
                .bucket_key_indices()
                .iter()
                .map(|i| schema.fields[*i].clone())
                .collect();
            let key_types: Vec<_> = key_fields.iter().map(|f| f.data_type.clone()).collect();
            let function =
                BucketFunction::from_options(&schema.core_options(), &key_types).unwrap();
            let batches = read_columns(&file, &key_fields)
                .unwrap()
                .unwrap_or_else(|| panic!("{}: bucket key missing", file.path.display()));
            for columns in batches {
                let buckets = function.buckets(&columns, num_buckets).unwrap();
                // Same through the extractor, with the key columns at their schema positions.
                let mut all: Vec<ArrayRef> = schema
                    .fields
                    .iter()
                    .map(|f| {
                        arrow_array::new_null_array(
                            &paimon_kernel::types::paimon_to_arrow_type(&f.data_type).unwrap(),
                            columns[0].len(),
                        )
                    })
                    .collect();
                for (i, c) in extractor.bucket_key_indices().iter().zip(&columns) {
                    all[*i] = c.clone();
                }
                assert_eq!(extractor.buckets(&all).unwrap(), buckets);
                for (row, b) in buckets.iter().enumerate() {
                    assert_eq!(
                        *b,
                        file.entry.bucket,
                        "{} row {row}: computed bucket {b}, file is in bucket {}",
                        file.path.display(),
                        file.entry.bucket
                    );
                }
                rows += buckets.len();
            }
            files += 1;
            table_checked = true;
        }
        tables += usize::from(table_checked);
    }
    eprintln!("bucket check: {tables} fixed-bucket tables, {files} files, {rows} rows");
    assert!(tables >= 15, "{tables} tables");
    assert!(files >= 60, "{files} files");
}
