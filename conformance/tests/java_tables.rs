//! Tables written by Java Paimon (`conformance/java-tables`, see its README): Paimon 0.9.0
//! Avro manifests, 1.4.2 ORC and Parquet manifests (`manifest.format`), a 1.4.2 table with
//! a branch and `scan.fallback-branch`, and 2.0.0 tables with nested schema evolution and
//! aggregated collections (`j200_*`, issue #41). Every read of every `<table>.expected.json`
//! (rows captured with the Java release it names) is done through the CLI, `paimon-kernel scan
//! TABLE --format arrow ARGS...`, and compared as canonical rows in any order (the elements of
//! an ARRAY in their order). The manifest files themselves are also decoded one by one through
//! the core API.

#![allow(clippy::unwrap_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use paimon_kernel::spec::{decode_index_manifest, decode_manifest, decode_manifest_list};
use support::{binary, check_rows, run_cli, warehouse_tables};

fn java_tables() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("java-tables")
}

/// Canonical rows of `paimon-kernel scan DIR --format arrow ARGS...`.
fn scan_rows(dir: &Path, args: &[String]) -> Result<Vec<Value>, String> {
    let mut all = vec![
        "scan".into(),
        dir.as_os_str().to_owned(),
        "--format".into(),
        "arrow".into(),
    ];
    all.extend(args.iter().map(Into::into));
    support::scan_rows::<std::ffi::OsString>(&all)
}

#[test]
fn every_read_of_the_java_tables_matches_java() {
    let tables = warehouse_tables(&java_tables());
    // 7 tables of Java 0.9 / 1.4.2, 15 of Java 2.0.0 on nested types (`j200_*`, #41) and 42 of Java 2.0 (`j20_*`).
    assert!(
        tables.len() >= 64,
        "{} tables in {}",
        tables.len(),
        java_tables().display()
    );
    assert!(
        tables.iter().filter(|t| t.name.starts_with("j20_")).count() >= 40,
        "Java 2.0 tables in {}",
        java_tables().display()
    );
    let mut failures = Vec::new();
    let mut reads = 0;
    for t in &tables {
        let mut all = vec![(
            "latest".to_string(),
            Vec::new(),
            t.expected["rows"].as_array().cloned().unwrap(),
        )];
        for r in t.expected["additional_reads"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let args: Vec<String> = r["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            all.push((
                r["label"].as_str().unwrap().to_string(),
                args,
                r["rows"].as_array().cloned().unwrap(),
            ));
        }
        for (label, args, want) in all {
            reads += 1;
            // An earlier snapshot may hold no visible row (deletion-vector tables before their
            // first compaction); the latest always does.
            assert!(
                label != "latest" || !want.is_empty(),
                "{} [{label}]: no expected rows",
                t.name
            );
            let outcome =
                scan_rows(&t.dir, &args).and_then(|got| check_rows(&t.name, &label, &got, &want));
            if let Err(e) = outcome {
                failures.push(format!("{e}\n  args: {args:?}"));
            }
        }
    }
    println!(
        "{} java tables, {reads} reads, {} failed",
        tables.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Rows of the fallback table as JSON text, sorted.
fn sorted_text(rows: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().map(Value::to_string).collect();
    v.sort();
    v
}

/// The branch's own tag (`branch/branch-b1/tag/tag-bt`, b1's snapshot 3, its latest). Java
/// 1.4.2 cannot read it through the `branch` dynamic option ("Tag 'bt' doesn't exist"), so it
/// is checked against Java's rows of the branch's latest snapshot.
#[test]
fn a_branch_tag_reads_the_branch_snapshot_it_pins() {
    let dir = java_tables().join("p142_fallback");
    let expected: Value = serde_json::from_slice(
        &std::fs::read(java_tables().join("p142_fallback.expected.json")).unwrap(),
    )
    .unwrap();
    let branch_latest = expected["additional_reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "branch b1")
        .unwrap()["rows"]
        .as_array()
        .cloned()
        .unwrap();
    let got = scan_rows(
        &dir,
        &["--branch".into(), "b1".into(), "--tag".into(), "bt".into()],
    )
    .unwrap();
    assert_eq!(sorted_text(&got), sorted_text(&branch_latest));
    // The main branch has no tag bt.
    let err = scan_rows(&dir, &["--tag".into(), "bt".into()]).unwrap_err();
    assert!(err.contains("bt"), "{err}");
    // A branch that does not exist is an error naming it.
    let err = scan_rows(&dir, &["--branch".into(), "nope".into()]).unwrap_err();
    assert!(err.contains("branch nope"), "{err}");
}

/// Filters and limits apply to both parts of a fallback read: `id > 3` keeps main's d1 row 6
/// and b1's d2 row 5 and d3 row 4; a limit of 4 stops inside the fallback part.
#[test]
fn fallback_reads_filter_and_limit_across_both_branches() {
    let dir = java_tables().join("p142_fallback");
    let got = scan_rows(&dir, &["--where".into(), "id > 3".into()]).unwrap();
    assert_eq!(
        sorted_text(&got),
        vec![
            r#"{"dt":"d1","id":6,"v":"main-6"}"#,
            r#"{"dt":"d2","id":5,"v":"b1-5"}"#,
            r#"{"dt":"d3","id":4,"v":"b1-4"}"#,
        ]
    );
    let got = scan_rows(&dir, &["--limit".into(), "4".into()]).unwrap();
    assert_eq!(got.len(), 4);
    // Partition filters: d2 only exists in the fallback branch.
    let got = scan_rows(&dir, &["--where".into(), "dt = 'd2'".into()]).unwrap();
    assert_eq!(
        sorted_text(&got),
        vec![
            r#"{"dt":"d2","id":3,"v":"b1-3x"}"#,
            r#"{"dt":"d2","id":5,"v":"b1-5"}"#,
        ]
    );
    // Projection.
    let got = scan_rows(&dir, &["--columns".into(), "v".into()]).unwrap();
    assert_eq!(got.len(), 6);
    assert!(got.iter().any(|r| r["v"] == "b1-4"), "{got:?}");
}

/// Every manifest-family file of every Java table decodes through the core API, whatever its
/// container (Avro, ORC, Parquet), with the entry counts the manifest lists announce.
#[test]
fn every_manifest_file_of_the_java_tables_decodes() {
    let mut counts = [0usize; 3];
    for t in warehouse_tables(&java_tables()) {
        let dir = t.dir.join("manifest");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut announced = std::collections::BTreeMap::new();
        for name in names.iter().filter(|n| n.starts_with("manifest-list-")) {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            for m in decode_manifest_list(&bytes, name).unwrap_or_else(|e| panic!("{e}")) {
                announced.insert(m.file_name.clone(), m.num_added_files + m.num_deleted_files);
            }
            counts[0] += 1;
        }
        for name in names
            .iter()
            .filter(|n| n.starts_with("manifest-") && !n.starts_with("manifest-list-"))
        {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            let entries = decode_manifest(&bytes, name).unwrap_or_else(|e| panic!("{e}"));
            assert!(!entries.is_empty(), "{name}");
            if let Some(n) = announced.get(name) {
                assert_eq!(*n, entries.len() as i64, "{}: {name}", t.name);
            }
            for e in &entries {
                // Data files, and the changelog files of a changelog manifest.
                assert!(
                    ["data-", "changelog-"]
                        .iter()
                        .any(|p| e.file.file_name.starts_with(p)),
                    "{name}: {e:?}"
                );
            }
            counts[1] += 1;
        }
        for name in names.iter().filter(|n| n.starts_with("index-manifest-")) {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            let entries = decode_index_manifest(&bytes, name).unwrap_or_else(|e| panic!("{e}"));
            // HASH: dynamic-bucket tables; DELETION_VECTORS: the j200_nested_dv_* tables.
            assert!(
                entries
                    .iter()
                    .all(|e| ["HASH", "DELETION_VECTORS"]
                        .contains(&e.index_file.index_type.as_str())),
                "{name}: {entries:?}"
            );
            counts[2] += 1;
        }
    }
    // Manifest lists, manifests and (dynamic-bucket primary-key tables, deletion vectors)
    // index manifests of all three containers.
    assert!(counts.iter().all(|c| *c >= 6), "{counts:?}");
}

/// Copy a directory tree.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// `scan.primary-branch = b1` instead of the fallback option (set with our `alter`): b1's
/// partitions (d1, d2, d3: all of them) come from b1, so the read equals b1's. Java 1.4.2's
/// reader gave the same five rows on this table (`/work/java-check/read`, by hand).
#[test]
fn a_primary_branch_is_read_first() {
    let dir = std::env::temp_dir().join(format!("java_tables_primary_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&java_tables().join("p142_fallback"), &dir);
    let out = Command::new(binary())
        .arg("alter")
        .arg(&dir)
        .args([
            "--reset",
            "scan.fallback-branch",
            "--set",
            "scan.primary-branch=b1",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected: Value = serde_json::from_slice(
        &std::fs::read(java_tables().join("p142_fallback.expected.json")).unwrap(),
    )
    .unwrap();
    let branch_latest = expected["additional_reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "branch b1")
        .unwrap()["rows"]
        .as_array()
        .cloned()
        .unwrap();
    let got = scan_rows(&dir, &[]).unwrap();
    assert_eq!(sorted_text(&got), sorted_text(&branch_latest));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Run the CLI; its stdout, or `Err` naming the command with its exit status and stderr.
fn cli(args: &[&str]) -> Result<String, String> {
    let out = run_cli(args).map_err(|e| format!("{args:?}: {e}"))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The rows of the read labelled `label` ("latest" or an additional read) of `expected`.
fn expected_rows(expected: &Value, label: &str) -> Vec<Value> {
    if label == "latest" {
        return expected["rows"].as_array().cloned().unwrap();
    }
    expected["additional_reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == label)
        .unwrap_or_else(|| panic!("no read {label}"))["rows"]
        .as_array()
        .cloned()
        .unwrap()
}

/// Java Paimon 2.0.0's reader (java-check's `read`): `$PAIMON_JAVA_CHECK_DIR/read`, else
/// `~/.cache/paimon-kernel/java-check-2.0.0/read`, when that directory's `paimon.version` is
/// 2.0.0; `None` (with a note on stderr) otherwise.
fn java_2_reader() -> Option<PathBuf> {
    let dir = match std::env::var_os("PAIMON_JAVA_CHECK_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            PathBuf::from(std::env::var_os("HOME")?).join(".cache/paimon-kernel/java-check-2.0.0")
        }
    };
    let version = std::fs::read_to_string(dir.join("paimon.version")).unwrap_or_default();
    if version.trim() != "2.0.0" || !dir.join("read").exists() {
        eprintln!(
            "no Java 2.0.0 java-check in {}: our compacted tables are not read by Java",
            dir.display()
        );
        return None;
    }
    Some(dir.join("read"))
}

/// Java's rows of a read (`read TABLE`: one canonical JSON row per line).
fn java_rows(read: &Path, dir: &Path) -> Result<Vec<Value>, String> {
    let out = Command::new(read)
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", read.display()))?;
    if !out.status.success() {
        return Err(format!(
            "Java: exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).map_err(|e| format!("Java row {l}: {e}")))
        .collect()
}

/// Every case of `java-tables/compactions.json` (issue #41): the j200 tables (nested schema
/// evolution with partial-update, deletion vectors, data evolution; aggregated collections in
/// Java's hash order) compacted by our `compact` read as Java 2.0.0 read the uncompacted
/// table, through us and, when java-check 2.0.0 is installed ([`java_2_reader`]), through
/// Java. After a full compaction a key has one record, read as stored: the ARRAY order our
/// compaction wrote is the order a reader sees.
#[test]
fn the_j200_tables_compacted_by_us_read_as_java_read_them() {
    let base = java_tables();
    let spec: Value =
        serde_json::from_slice(&std::fs::read(base.join("compactions.json")).unwrap()).unwrap();
    let work = std::env::temp_dir().join(format!("java_tables_compacted_{}", std::process::id()));
    let java = java_2_reader();
    let mut failures = Vec::new();
    let mut done = 0;
    for case in spec["cases"].as_array().unwrap() {
        for format in spec["formats"].as_array().unwrap() {
            let name = format!(
                "{}_{}",
                case["table"].as_str().unwrap(),
                format.as_str().unwrap()
            );
            let dir = work.join(&name);
            let _ = std::fs::remove_dir_all(&dir);
            copy_dir(&base.join(&name), &dir);
            let d = dir.to_str().unwrap();
            let label = case["expect"].as_str().unwrap();
            let outcome = (|| -> Result<(), String> {
                if let Some(s) = case["rollback"].as_i64() {
                    cli(&["rollback", d, "--snapshot", &s.to_string()])?;
                }
                for o in case["set"].as_array().into_iter().flatten() {
                    cli(&["alter", d, "--set", o.as_str().unwrap()])?;
                }
                let mut compact = vec!["compact", d];
                if case["full"].as_bool().unwrap() {
                    compact.push("--full");
                }
                let out = cli(&compact)?;
                if !out.contains("compacted into snapshot") {
                    return Err(format!("{name}: nothing compacted: {out}"));
                }
                let expected: Value = serde_json::from_slice(
                    &std::fs::read(base.join(format!("{name}.expected.json"))).unwrap(),
                )
                .unwrap();
                let want = expected_rows(&expected, label);
                check_rows(&name, label, &scan_rows(&dir, &[])?, &want)?;
                match &java {
                    Some(read) => check_rows(
                        &name,
                        &format!("Java, {label}"),
                        &java_rows(read, &dir)?,
                        &want,
                    ),
                    None => Ok(()),
                }
            })();
            if let Err(e) = outcome {
                failures.push(format!("{e}\n  case: {case}"));
            }
            done += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert_eq!(done, 30);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
