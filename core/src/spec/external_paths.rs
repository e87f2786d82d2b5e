//! The roots of `data-file.external-paths` (data files outside the table directory): the
//! option keys and the roots as Java prints them. Which root a new file goes to is the
//! writers' choice ([`crate::write::external`]); orphan-file cleaning lists every root.
//!
//! Source: Java `CoreOptions#DATA_FILE_EXTERNAL_PATHS*`, `org.apache.paimon.fs.Path`
//! (how a root prints), `OrphanFilesClean` (every root listed).

use crate::error::{Error, Result};
use crate::io::uri_scheme;
use crate::spec::CoreOptions;

/// Option key of the external roots.
pub const DATA_FILE_EXTERNAL_PATHS: &str = "data-file.external-paths";
/// Option key of the strategy choosing a root per new file.
pub const DATA_FILE_EXTERNAL_PATHS_STRATEGY: &str = "data-file.external-paths.strategy";
/// Option key of the scheme the `specific-fs` strategy keeps.
pub const DATA_FILE_EXTERNAL_PATHS_SPECIFIC_FS: &str = "data-file.external-paths.specific-fs";
/// Option key of the `weight-robin` strategy's weights.
pub const DATA_FILE_EXTERNAL_PATHS_WEIGHTS: &str = "data-file.external-paths.weights";

/// Every root `data-file.external-paths` names, as Java prints them, whatever the strategy
/// (files written under an earlier strategy may live there); roots that do not parse are
/// left out. Orphan-file cleaning lists them, as Java's `OrphanFilesClean` does.
pub fn listed_roots(options: &CoreOptions) -> Vec<String> {
    options
        .get(DATA_FILE_EXTERNAL_PATHS)
        .map(|v| {
            v.split(',')
                .filter_map(|r| normalize_root(r.trim()).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// A root as Java's `org.apache.paimon.fs.Path` prints it: `scheme:[//authority]/path`, an
/// empty authority dropped (`file:///tmp/a` → `file:/tmp/a`), repeated and trailing `/`
/// removed.
///
/// # Errors
/// [`Error::Invalid`] naming `data-file.external-paths` for an empty root or one without a
/// scheme (Java: "scheme should not be null").
pub(crate) fn normalize_root(root: &str) -> Result<String> {
    if root.is_empty() {
        return Err(Error::invalid(format!(
            "option '{DATA_FILE_EXTERNAL_PATHS}': an external path is empty"
        )));
    }
    let Some(scheme) = uri_scheme(root) else {
        return Err(Error::invalid(format!(
            "option '{DATA_FILE_EXTERNAL_PATHS}': external path '{root}' has no scheme (e.g. \
             file:/..., s3://...)"
        )));
    };
    let rest = &root[scheme.len() + 1..];
    let (authority, path) = match rest.strip_prefix("//") {
        Some(r) => match r.find('/') {
            Some(i) => (&r[..i], &r[i..]),
            None => (r, ""),
        },
        None => ("", rest),
    };
    let mut out = format!("{scheme}:");
    if !authority.is_empty() {
        out.push_str("//");
        out.push_str(authority);
    }
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        out.push('/');
    } else {
        for p in parts {
            out.push('/');
            out.push_str(p);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_print_as_java_paths() {
        for (raw, want) in [
            ("file:///tmp/a/", "file:/tmp/a"),
            ("file:/tmp//a", "file:/tmp/a"),
            ("s3://bucket/p/", "s3://bucket/p"),
            ("oss://bucket", "oss://bucket/"),
            ("hdfs://nn:8020/x", "hdfs://nn:8020/x"),
        ] {
            assert_eq!(normalize_root(raw).unwrap(), want, "{raw}");
        }
    }
}
