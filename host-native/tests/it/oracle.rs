//! What the other implementations read: Java Paimon 1.4.2 (java-check, when installed: see
//! [`java_check`]) and pypaimon 2.1.0 (the venv `${PAIMON_VENV:-~/.cache/paimon-kernel/venv}`,
//! when installed), shared by the test modules.
//!
//! The checker's source is `conformance/java-check` (a Maven project on `paimon-bundle` 1.4.2);
//! `scripts/install-deps.sh` builds it with `conformance/java-check/install.sh` into
//! `~/.cache/paimon-kernel/java-check`, so CI runs every Java check. `read TABLE [--columns a,_ROW_ID] [--snapshot N]
//! [--tag T] [--branch B] [--option K=V]... [--row-kind]` prints one canonical JSON row per
//! line (`paimon_kernel::canonical`, byte for byte as `serde_json` prints it), so callers may
//! compare the lines as strings; `--row-kind` prefixes each line with `+I`/`-U`/`+U`/`-D` and a
//! tab. See its README for every flag.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A script of the installed java-check (`read`, `files`, `plan` or `write`), or `None` when
/// java-check is not installed (the Java checks are then skipped). The directory is
/// `$PAIMON_JAVA_CHECK_DIR` when set, else `~/.cache/paimon-kernel/java-check` (where
/// `scripts/install-deps.sh` installs it), else `/work/java-check` (install.sh's default).
pub fn java_check(script: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("PAIMON_JAVA_CHECK_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let home = std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/paimon-kernel/java-check"));
            match home {
                Some(h) if h.join("read").exists() => h,
                _ => PathBuf::from("/work/java-check"),
            }
        }
    };
    let path = dir.join(script);
    path.exists().then_some(path)
}

/// Rows as sorted JSON strings.
pub fn sorted_strings(rows: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().map(Value::to_string).collect();
    v.sort();
    v
}

/// Java Paimon 1.4.2's rows of `dir` (canonical JSON, sorted), when the checker exists.
pub fn java_rows(dir: &Path) -> Option<Vec<String>> {
    java_rows_with(dir, &[])
}

/// [`java_rows`] with more arguments of the checker (`--columns a,_ROW_ID`, `--snapshot N`).
pub fn java_rows_with(dir: &Path, args: &[&str]) -> Option<Vec<String>> {
    let script = java_check("read")?;
    let out = Command::new(&script).arg(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "java read of {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Some(sorted_strings(&rows))
}

/// pypaimon's rows of the table at `dir` (`<warehouse>/<db>.db/<table>`), in the corpus'
/// canonical JSON (`make_corpus.canon_table`) and sorted, when its venv is installed.
pub fn pypaimon_rows(dir: &Path) -> Option<Vec<String>> {
    pypaimon_rows_result(dir).map(|r| r.unwrap_or_else(|e| panic!("{e}")))
}

/// [`pypaimon_rows`], with pypaimon's error (`Err`) when it cannot read the table.
pub fn pypaimon_rows_result(dir: &Path) -> Option<Result<Vec<String>, String>> {
    let venv = std::env::var_os("PAIMON_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/paimon-kernel/venv"))
        })?;
    let python = venv.join("bin/python");
    if !python.exists() {
        return None;
    }
    let db_dir = dir.parent().unwrap();
    let db = db_dir.file_name().unwrap().to_str().unwrap();
    let script = r#"
import json, sys
sys.path.insert(0, sys.argv[1])
from make_corpus import canon_table, read_arrow
from pypaimon import CatalogFactory
table = CatalogFactory.create({"warehouse": sys.argv[2]}).get_table(sys.argv[3])
for r in canon_table(read_arrow(table)):
    print(json.dumps(r, ensure_ascii=False))
"#;
    let conformance = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance");
    let name = format!(
        "{}.{}",
        db.trim_end_matches(".db"),
        dir.file_name().unwrap().to_str().unwrap()
    );
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(conformance)
        .arg(db_dir.parent().unwrap())
        .arg(name)
        .output()
        .unwrap();
    if !out.status.success() {
        return Some(Err(format!(
            "pypaimon read of {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let rows: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Some(Ok(sorted_strings(&rows)))
}

/// The `write` script of java-check (Java Paimon 1.4.2 writing and compacting), next to the
/// `read` script [`java_rows`] uses, when installed.
pub fn java_write_script() -> Option<PathBuf> {
    java_check("write")
}

/// Java Paimon 1.4.2 writes `rows` (JSON objects by field name, `_ROW_KIND` optional) to the
/// table at `dir` in one batch commit; `false` when java-check is not installed.
pub fn java_write(dir: &Path, rows: &[Value]) -> bool {
    let Some(script) = java_write_script() else {
        return false;
    };
    let file = tempfile::NamedTempFile::new().unwrap();
    let text: String = rows.iter().map(|r| r.to_string() + "\n").collect();
    std::fs::write(file.path(), text).unwrap();
    let out = Command::new(&script)
        .arg("write")
        .arg(dir)
        .arg(file.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "java write to {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// Java Paimon 1.4.2 compacts every bucket of the table at `dir` (`full` or its strategy),
/// one commit; `false` when java-check is not installed.
pub fn java_compact(dir: &Path, full: bool) -> bool {
    let Some(script) = java_write_script() else {
        return false;
    };
    let mut cmd = Command::new(&script);
    cmd.arg("compact").arg(dir);
    if full {
        cmd.arg("--full");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "java compaction of {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}
