//! The scenario set (`conformance/scenarios/*.json`, written by `gen_scenarios.py` there) run
//! by `paimon-kernel run`: every checkpoint of every scenario reads the rows of the
//! generator's model (`run` fails otherwise), the `.expected.json` it writes holds them, and
//! the final table reads the same in Java Paimon 2.0.0 and pypaimon 2.1.0 (where installed and
//! where the scenario says pypaimon supports the table). Then Java writes on top of our table
//! (the rows of the scenario's last write again) and Java and we read the same rows.

use crate::oracle::{java_rows, java_write, pypaimon_rows_result, sorted_strings};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;

fn scenario_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Our rows of the table at `dir` (sorted canonical JSON), through the CLI.
fn our_rows(dir: &Path) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(["scan", "--format", "jsonl"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scan {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    sorted_strings(&rows)
}

/// Runs one scenario; returns what failed (empty when all passed) and the checks done.
fn check(file: &Path, root: &Path) -> (Vec<String>, Vec<&'static str>) {
    let name = file.file_stem().unwrap().to_string_lossy().into_owned();
    let scenario: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let steps = scenario["steps"].as_array().unwrap();
    let warehouse = root.join(&name);
    let mut failed = Vec::new();
    let mut done = vec!["ours"];
    let out = Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .arg("run")
        .arg(file)
        .arg(&warehouse)
        .output()
        .unwrap();
    if !out.status.success() {
        failed.push(format!(
            "{name}: run failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
        return (failed, done);
    }
    // The expected file holds one entry per checkpoint step, with the step's rows.
    let expected: Value = serde_json::from_slice(
        &std::fs::read(warehouse.join("t.expected.json")).expect("t.expected.json"),
    )
    .unwrap();
    let checkpoints: Vec<&Value> = steps.iter().filter(|s| s["op"] == "checkpoint").collect();
    let recorded = expected["checkpoints"].as_array().unwrap();
    assert_eq!(recorded.len(), checkpoints.len(), "{name}: checkpoints");
    for (step, rec) in checkpoints.iter().zip(recorded) {
        assert_eq!(rec["name"], step["name"], "{name}");
        let want = sorted_strings(step["rows"].as_array().unwrap());
        let got = sorted_strings(rec["rows"].as_array().unwrap());
        if want != got {
            failed.push(format!(
                "{name}: checkpoint {} recorded other rows",
                rec["name"]
            ));
        }
    }
    let last = sorted_strings(expected["rows"].as_array().unwrap());
    let dir = warehouse.join("db.db/t");
    if our_rows(&dir) != last {
        failed.push(format!(
            "{name}: scan after run differs from the last checkpoint"
        ));
    }
    if scenario["java"] != false
        && let Some(java) = java_rows(&dir)
    {
        done.push("java");
        if java != last {
            failed.push(format!(
                "{name}: Java 2.0.0 reads {} rows, the model {}",
                java.len(),
                last.len()
            ));
        }
    }
    if scenario["pypaimon"] != false {
        match pypaimon_rows_result(&dir) {
            None => {}
            Some(Err(e)) => failed.push(format!("{name}: pypaimon: {e}")),
            Some(Ok(py)) => {
                done.push("pypaimon");
                if py != last {
                    failed.push(format!(
                        "{name}: pypaimon reads {} rows, the model {}",
                        py.len(),
                        last.len()
                    ));
                }
            }
        }
    }
    // Java continues: the scenario's last written rows again, through Java's batch writer;
    // for tables it cannot write alone (`java_write` false: dynamic bucket and
    // cross-partition upsert, "Can't extract bucket from row in dynamic bucket mode"), through
    // java-check's `run`, which assigns buckets as Flink's and Spark's writers do.
    let last_write = steps.iter().rev().find(|s| s["op"] == "write");
    if scenario["java"] != false
        && let Some(rows) = last_write.and_then(|s| s["rows"].as_array())
    {
        let rows: Vec<Value> = rows.iter().take(8).cloned().collect();
        let wrote = if scenario["java_write"] != false {
            java_write(&dir, &rows)
        } else {
            java_run_write(&warehouse, &rows)
        };
        if wrote {
            done.push("java-continues");
            let java = java_rows(&dir).unwrap();
            let ours = our_rows(&dir);
            if java != ours {
                failed.push(format!(
                    "{name}: after Java's write, Java reads {} rows and we read {}",
                    java.len(),
                    ours.len()
                ));
            }
        }
    }
    (failed, done)
}

#[test]
fn every_scenario_runs_as_its_model_and_java_and_pypaimon_read_it() {
    let files = scenario_files();
    assert!(files.len() >= 60, "{} scenarios", files.len());
    let (failed, counts) = over_scenarios(check);
    println!("{} scenarios; checks done: {counts:?}", files.len());
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// A checkpoint whose rows the table does not read fails the run, naming the checkpoint; an
/// unknown step is "unsupported scenario step".
#[test]
fn run_fails_on_a_wrong_checkpoint_and_an_unknown_step() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = |steps: Value| {
        let path = dir.path().join("s.json");
        std::fs::write(
            &path,
            serde_json::json!({"format_version": 1, "steps": steps}).to_string(),
        )
        .unwrap();
        path
    };
    let create = serde_json::json!({"op": "create", "table": "db.t", "schema": {
        "fields": [{"name": "k", "type": "INT NOT NULL"}, {"name": "v", "type": "STRING"}],
        "primaryKeys": ["k"], "options": {"bucket": "1"}}});
    let write = serde_json::json!({"op": "write", "table": "db.t",
        "rows": [{"k": 1, "v": "a"}, {"k": 1, "v": "b"}]});
    let run = |path: &Path, wh: &str| {
        Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
            .arg("run")
            .arg(path)
            .arg(dir.path().join(wh))
            .output()
            .unwrap()
    };
    let wrong = scenario(serde_json::json!([create, write,
        {"op": "checkpoint", "table": "db.t", "name": "c1", "rows": [{"k": 1, "v": "a"}]}]));
    let out = run(&wrong, "w1");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "checkpoint c1: the table's rows differ from the scenario's (1 read, 1 expected)"
        ) && err.contains(r#"{"k":1,"v":"b"}"#),
        "{err}"
    );
    let right = scenario(serde_json::json!([create, write,
        {"op": "checkpoint", "table": "db.t", "name": "c1", "rows": [{"k": 1, "v": "b"}]}]));
    assert!(run(&right, "w2").status.success());
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("w2/t.expected.json")).unwrap())
            .unwrap();
    assert_eq!(expected["rows"], serde_json::json!([{"k": 1, "v": "b"}]));
    assert_eq!(expected["snapshot_id"], 1);
    let unknown = scenario(serde_json::json!([create, {"op": "expire", "table": "db.t"}]));
    let out = run(&unknown, "w3");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unsupported scenario step expire"), "{err}");
}

/// One `write` of `rows` into `WAREHOUSE/db.db/t` by java-check's `run` (false when it is not
/// installed; panics when the write fails).
fn java_run_write(warehouse: &Path, rows: &[Value]) -> bool {
    let Some(run) = crate::oracle::java_check("run") else {
        return false;
    };
    let scenario = serde_json::json!({
        "format_version": 1,
        "name": "java-continues",
        "steps": [{"op": "write", "table": "db.t", "rows": rows}],
    });
    let file = warehouse.join("java-continues.json");
    std::fs::write(&file, scenario.to_string()).unwrap();
    if let Err(e) = run_with(&run, &file, warehouse) {
        panic!("{e}");
    }
    true
}

/// Runs `check` over every scenario file, two at a time (most of the time goes to JVM and
/// Python starts); returns the failures and how often each check ran.
fn over_scenarios(
    check: impl Fn(&Path, &Path) -> (Vec<String>, Vec<&'static str>) + Sync,
) -> (Vec<String>, std::collections::BTreeMap<&'static str, usize>) {
    let files = scenario_files();
    let root = tempfile::tempdir().unwrap();
    let queue = Mutex::new(files);
    let failed = Mutex::new(Vec::new());
    let counts = Mutex::new(std::collections::BTreeMap::<&str, usize>::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let Some(file) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let (f, done) = check(&file, root.path());
                    failed.lock().unwrap().extend(f);
                    let mut c = counts.lock().unwrap();
                    for d in done {
                        *c.entry(d).or_default() += 1;
                    }
                }
            });
        }
    });
    (failed.into_inner().unwrap(), counts.into_inner().unwrap())
}

/// Runs `scenario` with `runner` (`paimon-kernel` or java-check's `run`) into `warehouse`;
/// `Err` with the runner's stderr when it fails, a checkpoint differs or Java calls a step
/// unsupported (exit 3).
fn run_with(runner: &Path, scenario: &Path, warehouse: &Path) -> Result<(), String> {
    let mut cmd = Command::new(runner);
    if runner.ends_with("paimon-kernel") {
        cmd.arg("run");
    }
    let out = cmd.arg(scenario).arg(warehouse).output().unwrap();
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{} by {} ({}): {}",
        scenario.display(),
        runner.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    ))
}

/// The scenario with `write-only` = true added to its table's options, and only its `create`
/// and the `write` steps before the first step of another kind (checkpoints dropped): level-0
/// files only, so the writers alone decide the files.
fn write_only_variant(scenario: &Value) -> Option<Value> {
    let mut steps = Vec::new();
    for s in scenario["steps"].as_array().unwrap() {
        match s["op"].as_str().unwrap() {
            "create" => {
                let mut s = s.clone();
                s["schema"]["options"]["write-only"] = Value::from("true");
                steps.push(s);
            }
            "write" => steps.push(s.clone()),
            "checkpoint" => {}
            _ => break,
        }
    }
    (steps.len() > 1).then(|| {
        let mut v = scenario.clone();
        v["steps"] = Value::from(steps);
        v
    })
}

/// Data files per (partition, bucket) of the table's latest snapshot, from Java's `$files`.
fn files_per_bucket(files: &Path, table: &Path) -> std::collections::BTreeMap<String, usize> {
    let out = Command::new(files).arg(table).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut per = std::collections::BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            *per.entry(format!("{} bucket {}", v["partition"], v["bucket"]))
                .or_default() += 1;
        }
    }
    per
}

/// Java Paimon 2.0.0 runs every scenario too (java-check's `run`, where installed), and
/// passes every checkpoint: the model's rows, so the rows ours gives at the same checkpoint.
/// Where 2.0.0's core API has no batch path (append and data-evolution deletes and updates,
/// dynamic-bucket and cross-partition writes, fixed-bucket writes of postpone tables), the
/// runner does what Java's Flink/Spark writers do around the core (`conformance/java-check`
/// README). Then, with `write-only` = true on both sides, the writes of each scenario give
/// the same number of data files per partition and bucket.
#[test]
fn java_runs_the_scenarios_as_we_do_and_write_only_files_per_bucket_match() {
    let Some(java_run) = crate::oracle::java_check("run") else {
        println!("java-check not installed: Java's scenario runs skipped");
        return;
    };
    let java_files = crate::oracle::java_check("files").unwrap();
    let ours = Path::new(env!("CARGO_BIN_EXE_paimon-kernel"));
    let (failed, counts) = over_scenarios(|file, root| {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let mut failed = Vec::new();
        let mut done = Vec::new();
        let (java_wh, our_wh) = (root.join(format!("{name}-java")), root.join(&name));
        match (
            run_with(&java_run, file, &java_wh),
            run_with(ours, file, &our_wh),
        ) {
            (Err(e), _) | (_, Err(e)) => failed.push(e),
            (Ok(()), Ok(())) => {
                done.push("java passed");
                let read = |wh: &Path| -> Value {
                    serde_json::from_slice(&std::fs::read(wh.join("t.expected.json")).unwrap())
                        .unwrap()
                };
                let (j, o) = (read(&java_wh), read(&our_wh));
                let rows = |v: &Value| -> Vec<(Value, Vec<String>)> {
                    v["checkpoints"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| {
                            (
                                c["name"].clone(),
                                sorted_strings(c["rows"].as_array().unwrap()),
                            )
                        })
                        .collect()
                };
                if rows(&j) != rows(&o) {
                    failed.push(format!("{name}: Java's checkpoints differ from ours"));
                }
            }
        }
        let scenario: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        let Some(variant) = write_only_variant(&scenario) else {
            return (failed, done);
        };
        let vfile = root.join(format!("{name}-write-only.json"));
        std::fs::write(&vfile, variant.to_string()).unwrap();
        let (jw, ow) = (
            root.join(format!("{name}-wo-java")),
            root.join(format!("{name}-wo")),
        );
        match (
            run_with(&java_run, &vfile, &jw),
            run_with(ours, &vfile, &ow),
        ) {
            (Err(e), _) | (_, Err(e)) => failed.push(e),
            (Ok(()), Ok(())) => {
                done.push("write-only files compared");
                let j = files_per_bucket(&java_files, &jw.join("db.db/t"));
                let o = files_per_bucket(&java_files, &ow.join("db.db/t"));
                if o.is_empty() {
                    failed.push(format!("{name} (write-only): our table has no data file"));
                } else if j != o {
                    failed.push(format!(
                        "{name} (write-only): files per bucket, Java {j:?}, ours {o:?}"
                    ));
                }
                done.extend(std::iter::repeat_n(
                    "write-only data files",
                    o.values().sum(),
                ));
            }
        }
        (failed, done)
    });
    println!("Java's scenario runs: {counts:?}");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
