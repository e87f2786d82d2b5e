//! Helpers shared by the integration tests: the pypaimon 2.1.0 corpus shipped in
//! `conformance/tables`.

use std::path::{Path, PathBuf};

use paimon_kernel::io::MemoryStore;

/// `conformance/tables`.
pub fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tables")
}

/// Names of every corpus table (directories of `corpus.db`), sorted.
pub fn corpus_tables() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus_root().join("corpus.db"))
        .expect("corpus.db")
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 40, "corpus has {} tables", names.len());
    names
}

/// The table directory of `table`.
pub fn table_dir(table: &str) -> PathBuf {
    corpus_root().join("corpus.db").join(table)
}

/// `<table>.expected.json`.
pub fn expected(table: &str) -> serde_json::Value {
    let path = corpus_root().join(format!("{table}.expected.json"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// Sorted file names of `<table>/<dir>/` (empty if the directory does not exist).
pub fn files_in(table: &str, dir: &str) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(table_dir(table).join(dir)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A MemoryStore holding every file of `table`, keyed by path relative to the table root.
pub fn load_table(table: &str) -> MemoryStore {
    fn walk(root: &Path, dir: &Path, store: &mut MemoryStore) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(root, &p, store);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                store
                    .objects
                    .insert(rel, bytes::Bytes::from(std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut store = MemoryStore::new();
    let root = table_dir(table);
    walk(&root, &root, &mut store);
    store
}
