//! `write --prepare-only` and `commit --messages`: commit messages as Java
//! `CommitMessageSerializer` bytes between processes (see
//! `conformance/commit-messages/README.md`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use paimon_kernel::commit::serializer::{VERSION, decode_file};

const SCHEMA: &str = r#"{"fields":[{"id":0,"name":"id","type":"BIGINT NOT NULL"},
 {"id":1,"name":"name","type":"STRING"},{"id":2,"name":"dt","type":"STRING NOT NULL"}],
 "partitionKeys":["dt"],"primaryKeys":["dt","id"],"options":{"bucket":"2"}}"#;

fn run(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn sorted_rows(loc: &str) -> Vec<String> {
    let out = run(&["scan", loc, "--format", "jsonl"]);
    let mut rows: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    rows.sort();
    rows
}

fn snapshot_count(table: &Path) -> usize {
    std::fs::read_dir(table.join("snapshot"))
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("snapshot-")
            })
            .count()
        })
        .unwrap_or(0)
}

#[test]
fn prepare_only_then_commit_messages() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    let loc = table.to_str().unwrap();
    let schema = dir.path().join("schema.json");
    std::fs::write(&schema, SCHEMA).unwrap();
    run(&["create", loc, "--schema", schema.to_str().unwrap()]);
    let rows = dir.path().join("rows.jsonl");
    std::fs::write(
        &rows,
        "{\"id\":1,\"name\":\"a\",\"dt\":\"2024-01-01\"}\n\
         {\"id\":2,\"name\":\"b\",\"dt\":\"2024-01-02\"}\n\
         {\"id\":3,\"name\":\"c\",\"dt\":\"2024-01-01\"}\n",
    )
    .unwrap();
    let messages = dir.path().join("messages.bin");
    let msg_path = messages.to_str().unwrap();
    run(&[
        "write",
        loc,
        "--input",
        rows.to_str().unwrap(),
        "--prepare-only",
        msg_path,
    ]);
    assert_eq!(snapshot_count(&table), 0, "prepare-only must not commit");
    let bytes = std::fs::read(&messages).unwrap();
    assert_eq!(bytes[..4], VERSION.to_be_bytes());
    let decoded = decode_file(&bytes, msg_path).unwrap();
    // (2024-01-01: ids 1 and 3, 2024-01-02: id 2) over 2 buckets.
    let files: usize = decoded
        .iter()
        .map(|m| m.data_increment.new_files.len())
        .sum();
    assert_eq!(files, 3);
    assert!(decoded.iter().all(|m| m.total_buckets == Some(2)));
    run(&["commit", loc, "--messages", msg_path, "--commit-user", "u1"]);
    assert_eq!(snapshot_count(&table), 1);
    assert_eq!(
        sorted_rows(loc),
        [
            r#"{"id":1,"name":"a","dt":"2024-01-01"}"#,
            r#"{"id":2,"name":"b","dt":"2024-01-02"}"#,
            r#"{"id":3,"name":"c","dt":"2024-01-01"}"#,
        ]
    );
    // The same user's batch commit is applied once.
    let out = run(&["commit", loc, "--messages", msg_path, "--commit-user", "u1"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("committed nothing"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(snapshot_count(&table), 1);
    // Messages of this table committed to another one: refused before anything is
    // published (their files are not there).
    let other = dir.path().join("other");
    let other_loc = other.to_str().unwrap();
    run(&["create", other_loc, "--schema", schema.to_str().unwrap()]);
    let out = Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(["commit", other_loc, "--messages", msg_path])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("3 file(s) that are not in table"), "{err}");
    assert_eq!(snapshot_count(&other), 0);
}

#[test]
fn commits_messages_java_wrote() {
    // Data files and messages written by Java Paimon 1.4.2 (`java-write`, version 11), not
    // committed; see conformance/commit-messages/README.md.
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/commit-messages/java-written");
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    crate::copy_dir(&golden.join("table"), &table);
    let loc = table.to_str().unwrap();
    let messages = golden.join("messages.v11.bin");
    let decoded = decode_file(&std::fs::read(&messages).unwrap(), "messages.v11.bin").unwrap();
    assert_eq!(decoded.len(), 3);
    assert_eq!(snapshot_count(&table), 0);
    run(&["commit", loc, "--messages", messages.to_str().unwrap()]);
    assert_eq!(
        sorted_rows(loc),
        [
            r#"{"id":1,"name":"a","dt":"2024-01-01"}"#,
            r#"{"id":2,"name":"bb","dt":"2024-01-02"}"#,
            r#"{"id":3,"name":"c","dt":"2024-01-01"}"#,
        ]
    );
}

/// Our commit-message bytes are Java 2.0.0's, and Java's ours, for every kind of message,
/// taken from real writes and compactions (java-check `messages` and `write --prepare-only`,
/// in two JVMs through `batch`):
///
/// * ours → Java: messages of `write --prepare-only` (append files; primary-key files with
///   `changelog-producer = input` changelog files; data-evolution normal and `.blob` files) and
///   of `compact --prepare-only` (compaction increments of a primary-key table with
///   deletion-vector index files and lookup changelog files; of an append table with
///   deletion vectors, whose index files are replaced; of a data-evolution table). Java
///   deserializes each file and serializes the messages again to the same bytes, and Java
///   commits them: the table reads as the same messages committed by us give.
/// * Java → ours: Java's messages of the same kinds (`write --prepare-only`, `update
///   --prepare-only`, `compact --prepare-only`); we decode them, encode them again to the
///   same bytes, and commit them: both readers give the same rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_message_is_javas_bytes_both_ways() {
    use crate::delete_dv::{create, ok, write};
    use crate::oracle::{java_batch, jcmd};
    use paimon_kernel::commit::serializer::encode_file;
    use serde_json::{Value, json};

    if crate::oracle::java_check("batch").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rows_file = |name: &str, rows: &[Value]| -> String {
        let f = d.join(name);
        std::fs::write(
            &f,
            rows.iter().map(|r| format!("{r}\n")).collect::<String>(),
        )
        .unwrap();
        f.to_str().unwrap().to_owned()
    };
    let hex = |b: &[u8]| -> String { b.iter().map(|x| format!("{x:02x}")).collect() };
    // (what, table, rows input for our write) of each table.
    let tables: Vec<(&str, Value, Vec<Value>)> = vec![
        (
            "append",
            json!({"fields": [{"name": "id", "type": "INT"}, {"name": "p", "type": "STRING"}],
                   "partitionKeys": ["p"],
                   "options": {"bucket": "-1", "compaction.min.file-num": "2"}}),
            (0..20).map(|i| json!({"id": i, "p": if i % 2 == 0 { "a" } else { "b" }})).collect(),
        ),
        (
            "pk_changelog",
            json!({"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "v", "type": "STRING"}],
                   "primaryKeys": ["id"],
                   "options": {"bucket": "2", "changelog-producer": "input"}}),
            (0..20).map(|i| json!({"id": i, "v": format!("v{i}")})).collect(),
        ),
        (
            "pk_dv_lookup",
            json!({"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "v", "type": "STRING"}],
                   "primaryKeys": ["id"],
                   "options": {"bucket": "1", "deletion-vectors.enabled": "true",
                               "changelog-producer": "lookup"}}),
            // The first half: 10 keys with long values; the second: 3 of those keys again,
            // short. So the lookup compaction of the second write moves its small level-0
            // file up above the large one (not merged: size ratio) and marks the updated
            // keys in the large file's deletion vector; a full compaction then has work.
            (0..20u64)
                .map(|i| {
                    if i < 10 {
                        let v: String = (0..20u64)
                            .map(|k| format!("{:016x}", (i * 31 + k + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)))
                            .collect();
                        json!({"id": i, "v": v})
                    } else {
                        json!({"id": i % 3, "v": format!("v{i}")})
                    }
                })
                .collect(),
        ),
        (
            "append_dv",
            json!({"fields": [{"name": "id", "type": "INT"}, {"name": "v", "type": "STRING"}],
                   "options": {"bucket": "-1", "deletion-vectors.enabled": "true",
                               "compaction.min.file-num": "2"}}),
            (0..20).map(|i| json!({"id": i, "v": format!("v{i}")})).collect(),
        ),
        (
            "de_blob",
            json!({"fields": [{"name": "id", "type": "INT"}, {"name": "v", "type": "STRING"},
                              {"name": "b", "type": "BLOB"}],
                   "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true",
                               "compaction.min.file-num": "2"}}),
            (0..20)
                .map(|i| json!({"id": i, "v": format!("v{i}"), "b": hex(format!("blob{i}").as_bytes())}))
                .collect(),
        ),
    ];
    // Each table twice: "ours" (our messages, Java commits) and "mine" (the same committed by
    // us), plus "java" (Java's messages, we commit).
    let mut ours_files: Vec<(String, String)> = Vec::new(); // (table, message file)
    let mut commands = Vec::new();
    let mut java_tables = Vec::new();
    for (name, schema, rows) in &tables {
        let ours = create(d, &format!("{name}_ours"), schema.clone());
        let mine = create(d, &format!("{name}_mine"), schema.clone());
        let theirs = create(d, &format!("{name}_java"), schema.clone());
        // Two commits of ours on both, so that there is something to compact.
        let (first, second) = rows.split_at(rows.len() / 2);
        for loc in [&ours, &mine] {
            write(loc, first);
        }
        let input = rows_file(&format!("{name}-2.jsonl"), second);
        let m1 = d.join(format!("{name}-write.bin"));
        ok(&[
            "write",
            &ours,
            "--input",
            &input,
            "--prepare-only",
            m1.to_str().unwrap(),
        ]);
        ours_files.push((ours.clone(), m1.to_str().unwrap().to_owned()));
        commands.push(jcmd(&["messages", "check", m1.to_str().unwrap()]));
        commands.push(jcmd(&["messages", "commit", &ours, m1.to_str().unwrap()]));
        write(&mine, second);
        // Java's messages: a write of the first half.
        let jin = rows_file(&format!("{name}-j1.jsonl"), first);
        let j1 = d.join(format!("{name}-java-write.bin"));
        commands.push(jcmd(&[
            "write",
            "write",
            &theirs,
            &jin,
            "--prepare-only",
            j1.to_str().unwrap(),
        ]));
        java_tables.push((theirs, j1.to_str().unwrap().to_owned()));
    }
    let java = java_batch(&commands).unwrap();
    for (i, o) in java.iter().enumerate() {
        assert_eq!(
            o.code, 0,
            "Java command {i} ({:?}): {:?}",
            commands[i], o.error
        );
    }
    let mut kinds = std::collections::BTreeSet::new();
    let mut note_kinds = |lines: &[String]| {
        for line in &lines[..lines.len() - 1] {
            let m: Value = serde_json::from_str(line).unwrap();
            for (key, v) in m.as_object().unwrap() {
                if v.as_array().is_some_and(|a| !a.is_empty()) {
                    kinds.insert(key.clone());
                }
            }
        }
    };
    for (i, (name, _, _)) in tables.iter().enumerate() {
        let lines = &java[3 * i].lines;
        assert_eq!(
            lines.last().map(String::as_str),
            Some("same bytes"),
            "{name}"
        );
        note_kinds(lines);
    }
    // Java committed our write messages: the same rows as our own commit of the same rows.
    for (name, _, _) in &tables {
        let (ours, mine) = (
            d.join(format!("{name}_ours")),
            d.join(format!("{name}_mine")),
        );
        assert_eq!(
            sorted_rows(ours.to_str().unwrap()),
            sorted_rows(mine.to_str().unwrap()),
            "{name}: Java committed our messages"
        );
    }
    // Compactions and deletes, ours as messages; Java's write messages decoded, re-encoded
    // and committed by us.
    let mut commands = Vec::new();
    for ((name, _, _), (theirs, j1)) in tables.iter().zip(&java_tables) {
        let bytes = std::fs::read(j1).unwrap();
        let decoded = decode_file(&bytes, j1).unwrap();
        assert!(!decoded.is_empty(), "{name}");
        assert_eq!(
            encode_file(&decoded).unwrap(),
            bytes,
            "{name}: Java's write messages"
        );
        run(&["commit", theirs, "--messages", j1]);
        let ours = d.join(format!("{name}_ours"));
        let ours = ours.to_str().unwrap();
        if *name == "append_dv" {
            ok(&["delete", ours, "--where", "id < 3 OR id = 15"]);
        }
        let m2 = d.join(format!("{name}-compact.bin"));
        ok(&[
            "compact",
            ours,
            "--full",
            "--prepare-only",
            m2.to_str().unwrap(),
        ]);
        let messages = decode_file(&std::fs::read(&m2).unwrap(), "compact").unwrap();
        assert!(!messages.is_empty(), "{name}: nothing compacted");
        commands.push(jcmd(&["messages", "check", m2.to_str().unwrap()]));
        commands.push(jcmd(&["messages", "commit", ours, m2.to_str().unwrap()]));
        commands.push(jcmd(&["read", ours]));
        // Java: a second write, then its compaction, as messages.
        let (_, _, rows) = tables.iter().find(|t| t.0 == *name).unwrap();
        let jin = rows_file(&format!("{name}-j2.jsonl"), &rows[rows.len() / 2..]);
        commands.push(jcmd(&["write", "write", theirs, &jin]));
        let j2 = d.join(format!("{name}-java-compact.bin"));
        commands.push(jcmd(&[
            "write",
            "compact",
            theirs,
            "--full",
            "--prepare-only",
            j2.to_str().unwrap(),
        ]));
    }
    let java = java_batch(&commands).unwrap();
    for (i, o) in java.iter().enumerate() {
        assert_eq!(
            o.code, 0,
            "Java command {i} ({:?}): {:?}",
            commands[i], o.error
        );
    }
    for (i, ((name, _, _), (theirs, _))) in tables.iter().zip(&java_tables).enumerate() {
        let ours = d.join(format!("{name}_ours"));
        let ours = ours.to_str().unwrap();
        let base = 5 * i;
        assert_eq!(
            java[base].lines.last().map(String::as_str),
            Some("same bytes"),
            "{name}: compaction"
        );
        note_kinds(&java[base].lines);
        let mut java_rows = java[base + 2].lines.clone();
        java_rows.sort();
        let table = paimon_native::Table::open(ours).await.unwrap();
        let want = crate::oracle::sorted_strings(
            &paimon_kernel::canonical::batches_rows(&table.scan().to_batches().await.unwrap())
                .unwrap(),
        );
        assert_eq!(
            java_rows, want,
            "{name}: after Java committed our compaction"
        );
        let j2 = d.join(format!("{name}-java-compact.bin"));
        let bytes = std::fs::read(&j2).unwrap();
        let decoded = decode_file(&bytes, "java compact").unwrap();
        assert!(!decoded.is_empty(), "{name}: Java compacted nothing");
        assert_eq!(
            encode_file(&decoded).unwrap(),
            bytes,
            "{name}: Java's compaction messages"
        );
        let before = sorted_rows(theirs);
        run(&["commit", theirs, "--messages", j2.to_str().unwrap()]);
        assert_eq!(
            sorted_rows(theirs),
            before,
            "{name}: after we committed Java's compaction"
        );
    }
    for kind in [
        "new_files",
        "changelog_files",
        "compact_before",
        "compact_after",
        "compact_changelog",
        "compact_new_index_files",
        "compact_deleted_index_files",
    ] {
        assert!(kinds.contains(kind), "no message with {kind}: {kinds:?}");
    }
}

/// Java Paimon 2.0.0's own `CommitMessageSerializer` (conformance/java-serializer-check, built
/// by scripts/install-deps.sh) writes exactly the golden files our encoder is checked against
/// (`core/src/commit/serializer/tests.rs`: `full`, `minimal`, `list` of version 12 and the
/// legacy versions 1-10), and reads the version-11 and version-12 lists back to its expected
/// messages (re-serializing version 12 to the same bytes).
#[test]
fn javas_serializer_writes_the_golden_bytes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance");
    let checker = root.join("java-serializer-check");
    if !checker
        .join("target/paimon-serializer-check-1.0.jar")
        .exists()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "java-serializer-check is not built (scripts/install-deps.sh builds it)"
        );
        eprintln!("skipped: java-serializer-check not built");
        return;
    }
    let oracle = |args: &[&str]| -> String {
        let out = Command::new(checker.join("oracle"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "oracle {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    oracle(&["gen", d]);
    oracle(&["gen-legacy", d]);
    let golden = root.join("commit-messages");
    let mut names: Vec<String> = ["full", "minimal", "list"]
        .iter()
        .map(|n| format!("{n}.v{VERSION}.bin"))
        .collect();
    names.extend((1..=10).map(|v| format!("legacy.v{v}.bin")));
    for name in &names {
        assert_eq!(
            std::fs::read(dir.path().join(name)).unwrap(),
            std::fs::read(golden.join(name)).unwrap(),
            "{name}: Java 2.0.0's bytes differ from the golden file"
        );
    }
    for list in ["list.v11.bin", "list.v12.bin"] {
        let out = oracle(&["check", golden.join(list).to_str().unwrap()]);
        assert!(out.contains("equals expected: OK"), "{list}: {out}");
    }
}

/// The index-file lists of a write's data increment (`new_index_files`,
/// `deleted_index_files`): a dynamic-bucket primary-key table's second write replaces the
/// bucket's hash index file. Our `write --prepare-only` messages are Java 2.0.0's bytes (Java
/// deserializes and re-serializes them to the same bytes), and Java commits them to the rows
/// our own commit of the same write gives.
#[test]
fn hash_index_messages_of_a_dynamic_bucket_write_are_javas_bytes() {
    use crate::delete_dv::{create, ok, write};
    use crate::oracle::{java_batch, jcmd};
    use serde_json::{Value, json};

    if crate::oracle::java_check("batch").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let schema = json!({"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "v", "type": "STRING"}],
                        "primaryKeys": ["id"],
                        "options": {"bucket": "-1", "dynamic-bucket.target-row-num": "8"}});
    let rows: Vec<Value> = (0..30)
        .map(|i| json!({"id": i, "v": format!("v{i}")}))
        .collect();
    let (ours, mine) = (create(d, "ours", schema.clone()), create(d, "mine", schema));
    for loc in [&ours, &mine] {
        write(loc, &rows[..15]);
    }
    let second: Vec<Value> = rows[10..]
        .iter()
        .map(|r| json!({"id": r["id"], "v": format!("{}-2", r["v"].as_str().unwrap())}))
        .collect();
    let input = d.join("second.jsonl");
    std::fs::write(
        &input,
        second.iter().map(|r| format!("{r}\n")).collect::<String>(),
    )
    .unwrap();
    let messages = d.join("second.bin");
    let m = messages.to_str().unwrap();
    ok(&[
        "write",
        &ours,
        "--input",
        input.to_str().unwrap(),
        "--prepare-only",
        m,
    ]);
    write(&mine, &second);
    let decoded = decode_file(&std::fs::read(&messages).unwrap(), m).unwrap();
    assert!(
        decoded
            .iter()
            .any(|x| !x.data_increment.new_index_files.is_empty()),
        "no hash index file in {decoded:?}"
    );
    let java = java_batch(&[
        jcmd(&["messages", "check", m]),
        jcmd(&["messages", "commit", &ours, m]),
    ])
    .unwrap();
    for (i, o) in java.iter().enumerate() {
        assert_eq!(o.code, 0, "Java command {i}: {:?}", o.error);
    }
    assert_eq!(java[0].lines.last().map(String::as_str), Some("same bytes"));
    let lists = |key: &str| {
        java[0].lines[..java[0].lines.len() - 1]
            .iter()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()[key].clone())
            .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
            .count()
    };
    assert!(lists("new_index_files") > 0, "{:?}", java[0].lines);
    assert!(lists("deleted_index_files") > 0, "{:?}", java[0].lines);
    assert_eq!(sorted_rows(&ours), sorted_rows(&mine));
    assert_eq!(
        crate::oracle::java_rows(Path::new(&ours)).unwrap(),
        sorted_rows(&mine)
    );
}
