//! java-check's `write-split` / `read-split` (Java Paimon 2.0.0's own `DataSplit` bytes, see
//! conformance/java-check/README.md): the checker that another implementation's split bytes
//! are tested against must itself round-trip Java's splits. For tables with deletion vectors,
//! several buckets and partitions, and the Java-written tables: Java's plan written as split
//! bytes and read back (all splits, and each split alone in the single-split form) gives the
//! rows Java's and our readers give.

use std::path::Path;

use serde_json::{Value, json};

use crate::delete_dv::{create, ok, write};
use crate::oracle::{java_batch, jcmd};

/// `DataSplit.MAGIC` as int64 big-endian, the first bytes of every serialized split.
const MAGIC: i64 = -2394839472490812314;

/// The length-prefixed splits of a `write-split` file.
fn split_records(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let len = i32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        out.push(&bytes[at + 4..at + 4 + len]);
        at += 4 + len;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javas_split_bytes_read_back_as_the_table() {
    if crate::oracle::java_check("read-split").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pk = create(
        d,
        "pk_dv",
        json!({"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "p", "type": "STRING NOT NULL"},
                          {"name": "v", "type": "STRING"}],
               "partitionKeys": ["p"], "primaryKeys": ["p", "id"],
               "options": {"bucket": "2", "deletion-vectors.enabled": "true"}}),
    );
    let rows = |c: i32| -> Vec<Value> {
        (0..30)
            .map(|i| json!({"id": i, "p": if i % 3 == 0 { "x" } else { "y" }, "v": format!("v{i}-{c}")}))
            .collect()
    };
    write(&pk, &rows(0));
    write(&pk, &rows(1)[..12]);
    let append = create(
        d,
        "append_dv",
        json!({"fields": [{"name": "id", "type": "INT"}, {"name": "v", "type": "STRING"}],
               "options": {"bucket": "-1", "deletion-vectors.enabled": "true"}}),
    );
    write(
        &append,
        &(0..20)
            .map(|i| json!({"id": i, "v": format!("v{i}")}))
            .collect::<Vec<_>>(),
    );
    ok(&["delete", &append, "--where", "id < 4"]);
    let java_tables = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/java-tables");
    let mut tables = vec![pk, append];
    for t in ["p142_orc_pk", "p142_parquet_append", "p090_avro_pk"] {
        tables.push(java_tables.join(t).to_str().unwrap().to_owned());
    }
    let files: Vec<String> = (0..tables.len())
        .map(|i| {
            d.join(format!("splits-{i}.bin"))
                .to_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let mut commands = Vec::new();
    for (t, f) in tables.iter().zip(&files) {
        commands.push(jcmd(&["write-split", t, f]));
        commands.push(jcmd(&["read", t]));
    }
    let java = java_batch(&commands).unwrap();
    let mut second = Vec::new();
    let mut singles = Vec::new(); // (table index, first command index, count)
    for (i, (t, f)) in tables.iter().zip(&files).enumerate() {
        let out = &java[2 * i];
        assert_eq!(out.code, 0, "write-split {t}: {:?}", out.error);
        let bytes = std::fs::read(f).unwrap();
        let records = split_records(&bytes);
        assert_eq!(out.lines, [format!("{} split(s)", records.len())], "{t}");
        assert!(!records.is_empty(), "{t}");
        second.push(jcmd(&["read-split", t, f]));
        let first = second.len();
        for (k, r) in records.iter().enumerate() {
            assert_eq!(
                i64::from_be_bytes(r[..8].try_into().unwrap()),
                MAGIC,
                "{t} split {k}"
            );
            let one = d.join(format!("split-{i}-{k}.bin"));
            std::fs::write(&one, r).unwrap();
            second.push(jcmd(&["read-split", t, one.to_str().unwrap()]));
        }
        singles.push((i, first, records.len()));
    }
    let again = java_batch(&second).unwrap();
    for (i, first, count) in singles {
        let t = &tables[i];
        let want = java[2 * i + 1].sorted(&format!("read {t}"));
        assert!(!want.is_empty(), "{t}");
        assert_eq!(
            again[first - 1].sorted(&format!("read-split {t}")),
            want,
            "{t}"
        );
        let mut union: Vec<String> = (first..first + count)
            .flat_map(|k| again[k].sorted(&format!("read-split {t} split {k}")))
            .collect();
        union.sort();
        assert_eq!(union, want, "{t}: the splits one by one");
        let table = paimon_native::Table::open(t).await.unwrap();
        let ours = crate::oracle::sorted_strings(
            &paimon_kernel::canonical::batches_rows(&table.scan().to_batches().await.unwrap())
                .unwrap(),
        );
        assert_eq!(ours, want, "{t}: our rows");
    }
    // Trailing bytes after a single split are an error, not ignored.
    let one = d.join("split-0-0.bin");
    let mut bytes = std::fs::read(&one).unwrap();
    bytes.push(0);
    let bad = d.join("trailing.bin");
    std::fs::write(&bad, bytes).unwrap();
    let out = java_batch(&[jcmd(&["read-split", &tables[0], bad.to_str().unwrap()])]).unwrap();
    assert_eq!(out[0].code, 1, "{:?}", out[0]);
    assert!(
        out[0]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("byte(s) after the split"),
        "{:?}",
        out[0]
    );
}
