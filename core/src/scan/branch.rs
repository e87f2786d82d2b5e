//! Branches: where a named branch keeps its metadata, and the path mapping a host applies to
//! read a branch with the main-branch machines.
//!
//! Source: Java `org.apache.paimon.utils.BranchManager` (`branchPath`, `normalizeBranch`,
//! `isMainBranch`), `CoreOptions.BRANCH` (`branch`, default `main`). Layout:
//! `spec/table-layout.md` §1: branch `b` keeps `snapshot/`, `schema/`, `tag/`, `changelog/`
//! (and `consumer/`) under `<root>/branch/branch-b/`; data files, manifests, index files and
//! statistics stay under the table root, shared by every branch.
//!
//! Every machine of the core asks for table-root-relative paths (`snapshot/LATEST`,
//! `schema/schema-0`, `manifest/manifest-...`). To read branch `b`, a host rewrites each
//! request with [`BranchPaths::to_storage`] before answering it and maps `List` answers back
//! with [`BranchPaths::answer_from_storage`]; the machines and their request order are the
//! same as on the main branch.

use crate::io::{IoAnswer, IoOp, ObjectMeta};

/// Name of the main branch (Java `DEFAULT_MAIN_BRANCH`).
pub const MAIN_BRANCH: &str = "main";

/// Table option naming the branch that supplies the partitions the read branch lacks
/// (Java `CoreOptions.SCAN_FALLBACK_BRANCH`).
pub const SCAN_FALLBACK_BRANCH: &str = "scan.fallback-branch";

/// Table option naming the branch whose partitions are read first; the read branch supplies
/// the partitions it lacks (Java `CoreOptions.SCAN_PRIMARY_BRANCH`; ignored when
/// [`SCAN_FALLBACK_BRANCH`] is set).
pub const SCAN_PRIMARY_BRANCH: &str = "scan.primary-branch";

/// Dynamic option choosing the branch to read (Java `CoreOptions.BRANCH`, default `main`).
pub const BRANCH_OPTION: &str = "branch";

/// Directory holding every branch, relative to the table root.
pub const BRANCH_DIR: &str = "branch/";

/// Prefix of a branch directory's name (Java `BranchManager.BRANCH_PREFIX`).
pub const BRANCH_PREFIX: &str = "branch-";

/// Metadata directories that live per branch (the others are shared).
const PER_BRANCH_DIRS: [&str; 5] = ["snapshot/", "schema/", "tag/", "changelog/", "consumer/"];

/// The branch a name means: blank names mean `main` (Java `BranchManager.normalizeBranch`).
pub fn normalize_branch(name: &str) -> &str {
    if name.trim().is_empty() {
        MAIN_BRANCH
    } else {
        name
    }
}

/// Whether `name` is the main branch (Java `BranchManager.isMainBranch`, after
/// normalizing).
pub fn is_main_branch(name: &str) -> bool {
    normalize_branch(name) == MAIN_BRANCH
}

/// The directory of branch `name` relative to the table root, with a trailing `/`; empty for
/// the main branch (Java `BranchManager.branchPath`).
pub fn branch_root(name: &str) -> String {
    if is_main_branch(name) {
        String::new()
    } else {
        format!("{BRANCH_DIR}{BRANCH_PREFIX}{name}/")
    }
}

/// The path rewriting that reads a non-main branch through the main-branch machines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchPaths {
    name: String,
    root: String,
}

impl BranchPaths {
    /// The mapping for branch `name`; `None` for the main branch (no rewriting).
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] for a name that cannot be a branch directory (holds `/`).
    pub fn new(name: &str) -> crate::Result<Option<Self>> {
        if is_main_branch(name) {
            return Ok(None);
        }
        if name.contains('/') {
            return Err(crate::Error::invalid(format!(
                "branch name {name:?} holds a '/'"
            )));
        }
        Ok(Some(BranchPaths {
            name: name.to_string(),
            root: branch_root(name),
        }))
    }

    /// The branch name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The branch directory (`branch/branch-<name>/`).
    pub fn root(&self) -> &str {
        &self.root
    }

    /// `path` as stored: per-branch metadata paths move under the branch directory, every
    /// other path (manifests, data, index files, absolute paths) is unchanged.
    pub fn storage_path(&self, path: &str) -> String {
        if PER_BRANCH_DIRS.iter().any(|d| path.starts_with(d)) {
            format!("{}{path}", self.root)
        } else {
            path.to_string()
        }
    }

    /// The operation a host performs for the machine's `op`.
    pub fn to_storage(&self, op: &IoOp) -> IoOp {
        let mut op = op.clone();
        match &mut op {
            IoOp::Read { path, .. }
            | IoOp::Head { path }
            | IoOp::Put { path, .. }
            | IoOp::Delete { path }
            | IoOp::PutPart { path, .. }
            | IoOp::PutComplete { path, .. }
            | IoOp::PutAbort { path } => *path = self.storage_path(path),
            IoOp::List { prefix } => *prefix = self.storage_path(prefix),
        }
        op
    }

    /// The answer the machine gets for its `op` when the host answered the rewritten one:
    /// listed paths are made relative to the branch again (entries outside it dropped).
    pub fn answer_from_storage(&self, op: &IoOp, answer: IoAnswer) -> IoAnswer {
        match (op, answer) {
            (IoOp::List { prefix }, IoAnswer::List { objects })
                if self.storage_path(prefix) != *prefix =>
            {
                let objects = objects
                    .into_iter()
                    .filter_map(|o| {
                        let path = o.path.strip_prefix(self.root.as_str())?.to_string();
                        Some(ObjectMeta { path, ..o })
                    })
                    .collect();
                IoAnswer::List { objects }
            }
            (_, answer) => answer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_branch_needs_no_mapping() {
        assert!(BranchPaths::new("main").unwrap().is_none());
        assert!(BranchPaths::new("  ").unwrap().is_none());
        assert_eq!(branch_root("main"), "");
        assert_eq!(branch_root("b1"), "branch/branch-b1/");
        assert!(BranchPaths::new("a/b").is_err());
    }

    #[test]
    fn per_branch_dirs_move_shared_dirs_stay() {
        let b = BranchPaths::new("b1").unwrap().unwrap();
        assert_eq!(
            b.storage_path("snapshot/LATEST"),
            "branch/branch-b1/snapshot/LATEST"
        );
        assert_eq!(
            b.storage_path("schema/schema-0"),
            "branch/branch-b1/schema/schema-0"
        );
        assert_eq!(b.storage_path("tag/tag-t1"), "branch/branch-b1/tag/tag-t1");
        assert_eq!(
            b.storage_path("manifest/manifest-x-0"),
            "manifest/manifest-x-0"
        );
        assert_eq!(
            b.storage_path("dt=1/bucket-0/data-1.parquet"),
            "dt=1/bucket-0/data-1.parquet"
        );
        assert_eq!(b.storage_path("index/index-1"), "index/index-1");
    }

    #[test]
    fn list_answers_map_back() {
        let b = BranchPaths::new("b1").unwrap().unwrap();
        let op = IoOp::List {
            prefix: "snapshot/".into(),
        };
        assert_eq!(
            b.to_storage(&op),
            IoOp::List {
                prefix: "branch/branch-b1/snapshot/".into()
            }
        );
        let meta = |p: &str| ObjectMeta {
            path: p.into(),
            size_bytes: 3,
            modified_millis: None,
        };
        let answer = IoAnswer::List {
            objects: vec![
                meta("branch/branch-b1/snapshot/snapshot-2"),
                meta("elsewhere"),
            ],
        };
        assert_eq!(
            b.answer_from_storage(&op, answer),
            IoAnswer::List {
                objects: vec![meta("snapshot/snapshot-2")]
            }
        );
        // Shared directories are listed as is.
        let op = IoOp::List {
            prefix: "manifest/".into(),
        };
        let answer = IoAnswer::List {
            objects: vec![meta("manifest/m-0")],
        };
        assert_eq!(b.answer_from_storage(&op, answer.clone()), answer);
    }
}
