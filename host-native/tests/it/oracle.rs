//! What the other implementations read: Java Paimon 2.0.0 (java-check, when installed: see
//! [`java_check`]) and pypaimon 2.1.0 (the venv `${PAIMON_VENV:-~/.cache/paimon-kernel/venv}`,
//! when installed), shared by the test modules.
//!
//! The checker's source is `conformance/java-check` (a Maven project on `paimon-bundle` 2.0.0
//! from `../shared/java/m2`); `scripts/install-deps.sh` builds it with
//! `conformance/java-check/install.sh` into `~/.cache/paimon-kernel/java-check-2.0.0`, so CI runs
//! every Java check. `read TABLE [--columns a,_ROW_ID] [--snapshot N]
//! [--tag T] [--branch B] [--option K=V]... [--row-kind]` prints one canonical JSON row per
//! line (`paimon_kernel::canonical`, byte for byte as `serde_json` prints it), so callers may
//! compare the lines as strings; `--row-kind` prefixes each line with `+I`/`-U`/`+U`/`-D` and a
//! tab. See its README for every flag.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The Java Paimon release java-check must be built on (its `paimon.version` file).
pub const JAVA_PAIMON_VERSION: &str = "2.0.0";

/// A script of the installed java-check (`read`, `files`, `plan`, `write`, `commits`, `run`),
/// or `None` when java-check is not installed (the Java checks are then skipped, except under
/// `CI`, where that panics). The directory
/// is `$PAIMON_JAVA_CHECK_DIR` when set, else `~/.cache/paimon-kernel/java-check-2.0.0` (where
/// `scripts/install-deps.sh` installs it).
///
/// # Panics
/// When the directory holds a checker built on another Paimon release than
/// [`JAVA_PAIMON_VERSION`] (its `paimon.version` file differs or is missing, as in the old 1.4.2
/// installs): comparing with the wrong release would not fail loudly otherwise.
pub fn java_check(script: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("PAIMON_JAVA_CHECK_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME")?).join(format!(
            ".cache/paimon-kernel/java-check-{JAVA_PAIMON_VERSION}"
        )),
    };
    let path = dir.join(script);
    if !path.exists() {
        // CI installs it (scripts/install-deps.sh): there a missing checker is a failure.
        assert!(
            std::env::var_os("CI").is_none(),
            "java-check missing at {} (CI must run the Java checks)",
            path.display()
        );
        return None;
    }
    let version = std::fs::read_to_string(dir.join("paimon.version")).unwrap_or_default();
    assert_eq!(
        version.trim(),
        JAVA_PAIMON_VERSION,
        "{} is not a java-check of Java Paimon {JAVA_PAIMON_VERSION} (reinstall it with \
         conformance/java-check/install.sh)",
        dir.display()
    );
    Some(path)
}

/// Rows as sorted JSON strings.
pub fn sorted_strings(rows: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().map(Value::to_string).collect();
    v.sort();
    v
}

/// Java Paimon 2.0.0's rows of `dir` (canonical JSON, sorted), when the checker exists.
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

/// The `write` script of java-check (Java Paimon 2.0.0 writing and compacting), next to the
/// `read` script [`java_rows`] uses, when installed.
pub fn java_write_script() -> Option<PathBuf> {
    java_check("write")
}

/// Java Paimon 2.0.0 writes `rows` (JSON objects by field name, `_ROW_KIND` optional) to the
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

/// Java Paimon 2.0.0 compacts every bucket of the table at `dir` (`full` or its strategy),
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

/// What one command of [`java_batch`] did.
#[derive(Debug, Clone)]
pub struct JavaOutcome {
    /// Its exit code (0 ok, 1 failed, 2 bad command line, 3 unsupported).
    pub code: i32,
    /// Its output lines (stdout), in order.
    pub lines: Vec<String>,
    /// Its error, when it failed (`Class: message; caused by: ...`).
    pub error: Option<String>,
}

impl JavaOutcome {
    /// The output lines, sorted; panics with the error when the command failed.
    pub fn sorted(&self, what: &str) -> Vec<String> {
        assert_eq!(self.code, 0, "Java {what}: {:?}", self.error);
        let mut v = self.lines.clone();
        v.sort();
        v
    }
}

/// Runs java-check commands in one JVM (its `batch` script): each command is the script name
/// and its arguments (`["read", dir, "--columns", "a"]`, `["plan", dir, "--append"]`,
/// `["write", "compact", dir]`, `["messages", "check", file]`, ...). `None` when java-check is
/// not installed; otherwise one [`JavaOutcome`] per command, in order.
pub fn java_batch(commands: &[Vec<String>]) -> Option<Vec<JavaOutcome>> {
    let script = java_check("batch")?;
    let input = tempfile::NamedTempFile::new().unwrap();
    let text: String = commands
        .iter()
        .map(|c| serde_json::to_string(c).unwrap() + "\n")
        .collect();
    std::fs::write(input.path(), text).unwrap();
    let out = Command::new(&script).arg(input.path()).output().unwrap();
    assert!(
        out.status.success(),
        "java batch failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut outcomes: Vec<JavaOutcome> = Vec::new();
    for line in stdout.lines() {
        if let Some(n) = line.strip_prefix(">>> ") {
            assert_eq!(n.parse::<usize>().ok(), Some(outcomes.len()), "{line}");
            outcomes.push(JavaOutcome {
                code: -1,
                lines: Vec::new(),
                error: None,
            });
        } else if let Some(rest) = line.strip_prefix("<<< ") {
            let cur = outcomes
                .last_mut()
                .expect("output before the first command");
            let (_, what) = rest.split_once(' ').unwrap();
            if let Some(e) = what.strip_prefix("error: ") {
                cur.error = Some(e.to_owned());
            } else {
                cur.code = what.strip_prefix("exit=").unwrap().parse().unwrap();
            }
        } else if !line.trim().is_empty() {
            outcomes
                .last_mut()
                .expect("output before the first command")
                .lines
                .push(line.to_owned());
        }
    }
    assert_eq!(
        outcomes.len(),
        commands.len(),
        "java batch ran {} of {} commands: {}",
        outcomes.len(),
        commands.len(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(outcomes)
}

/// A command of [`java_batch`] from string slices.
pub fn jcmd(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}
