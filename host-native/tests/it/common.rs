//! Test support shared by the modules: the `paimon-kernel` CLI, tables created and written
//! through it, the rows of a table read back as sorted canonical JSON, copies of tables.
//! Each test module states only what differs (its schema, its rows, its checks).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use paimon_kernel::canonical;
use paimon_native::Table;
use serde_json::Value;

use crate::oracle::sorted_strings;

/// Run the `paimon-kernel` CLI with `args`, whatever its exit status.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_paimon-kernel"))
        .args(args)
        .output()
        .unwrap()
}

/// Run the CLI; its stdout on success, a panic with its stderr otherwise.
pub fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `create` the table `dir/name` from `schema` (written beside it as `name.schema.json`);
/// the table's location.
pub fn create(dir: &Path, name: &str, schema: Value) -> String {
    let loc = dir.join(name);
    let file = dir.join(format!("{name}.schema.json"));
    std::fs::write(&file, schema.to_string()).unwrap();
    ok(&[
        "create",
        loc.to_str().unwrap(),
        "--schema",
        file.to_str().unwrap(),
    ]);
    loc.to_str().unwrap().to_owned()
}

/// Write JSON rows with the `write` command (one snapshot; the rows pass through the file
/// `<table>.input.jsonl`).
pub fn write(table: &str, rows: &[Value]) {
    let file = PathBuf::from(format!("{table}.input.jsonl"));
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&file, text).unwrap();
    ok(&["write", table, "--input", file.to_str().unwrap()]);
}

/// The rows of `table`'s latest snapshot as canonical JSON strings, sorted.
pub async fn table_rows(table: &Table) -> Vec<String> {
    let batches = table.scan().to_batches().await.unwrap();
    sorted_strings(&canonical::batches_rows(&batches).unwrap())
}

/// Java 2.0.0's rows of `dir` as java-check's `read` prints them (its lines starting with
/// `{`, sorted); `None` when the checker is not installed. Panics when Java cannot read it.
pub fn java_read_lines(dir: &str) -> Option<Vec<String>> {
    java_read_lines_result(dir)
        .map(|r| r.unwrap_or_else(|stderr| panic!("Java 2.0.0 cannot read {dir}: {stderr}")))
}

/// [`java_read_lines`], with Java's stderr (`Err`) when it cannot read the table.
pub fn java_read_lines_result(dir: &str) -> Option<Result<Vec<String>, String>> {
    java_read_lines_with(dir, &[])
}

/// [`java_read_lines_result`] with more arguments of java-check's `read` (`--option K=V`, ...).
pub fn java_read_lines_with(dir: &str, args: &[&str]) -> Option<Result<Vec<String>, String>> {
    let read = crate::oracle::java_check("read")?;
    let out = Command::new(&read).arg(dir).args(args).output().unwrap();
    if !out.status.success() {
        return Some(Err(String::from_utf8_lossy(&out.stderr).into_owned()));
    }
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(str::to_string)
        .collect();
    lines.sort();
    Some(Ok(lines))
}

/// Copy the directory tree `from` to `to` (tests work on copies; the repo's tables are never
/// modified).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}
