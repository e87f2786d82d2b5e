//! Integration tests of paimon-native: the `paimon-kernel` CLI over the conformance corpus.

#![allow(clippy::unwrap_used)]

mod alter_delete;
mod append_dv_compact;
mod auto_expire;
mod blob_refs;
mod changelog;
mod cli;
mod cli_blob;
mod commit_messages;
mod compact_append;
mod compact_pk;
mod compact_row_tracking;
mod cross_partition;
mod data_evolution_dv;
mod delete_dv;
mod dynamic_bucket;
mod external_paths;
mod http;
mod incremental;
mod inline_blob;
mod java_continues;
mod maintenance;
mod managed_blob;
mod oracle;
mod orc_nested;
mod partition_expire;
mod pk_dv;
mod plan_java;
mod postpone;
mod postpone_fixed;
mod record_level_expire;
mod restore;
mod retract;
mod scan;
mod scenarios;
mod streamed_write;
mod table;
mod write;

/// Copy the directory tree `from` to `to` (tests work on copies; the repo's tables are never
/// modified).
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
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
