//! A table directory as a zip archive (the `zip` crate; entries stored, not compressed).

use std::collections::BTreeMap;
use std::io::{Cursor, Write};

use bytes::Bytes;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// `objects` (path → bytes, paths relative to the table root) as a zip, each entry at
/// `prefix/path` (or `path` without a prefix), in path order. Entries are stored: Paimon's
/// data files and manifests are compressed already. Large archives use zip64.
///
/// # Errors
/// The zip writer's message (e.g. an invalid entry name).
pub fn zip_objects(
    objects: &BTreeMap<String, Bytes>,
    prefix: Option<&str>,
) -> Result<Vec<u8>, String> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .large_file(objects.values().any(|b| b.len() >= u32::MAX as usize));
    for (path, bytes) in objects {
        let name = match prefix {
            Some(p) => format!("{p}/{path}"),
            None => path.clone(),
        };
        zip.start_file(name.as_str(), options)
            .map_err(|e| format!("zip entry {name}: {e}"))?;
        zip.write_all(bytes)
            .map_err(|e| format!("zip entry {name}: {e}"))?;
    }
    let out = zip.finish().map_err(|e| format!("zip: {e}"))?;
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn entries_read_back_with_their_bytes() {
        let mut objects = BTreeMap::new();
        objects.insert(
            "schema/schema-0".to_string(),
            Bytes::from_static(b"{\"id\":0}"),
        );
        objects.insert(
            "bucket-0/data-1.parquet".to_string(),
            Bytes::from(vec![7u8; 1000]),
        );
        let bytes = zip_objects(&objects, Some("t")).unwrap();
        let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
        let mut names: Vec<String> = archive
            .file_names()
            .map(|n| n.unwrap().to_string())
            .collect();
        names.sort();
        assert_eq!(names, ["t/bucket-0/data-1.parquet", "t/schema/schema-0"]);
        let mut got = Vec::new();
        archive
            .by_name("t/bucket-0/data-1.parquet")
            .unwrap()
            .read_to_end(&mut got)
            .unwrap();
        assert_eq!(got, vec![7u8; 1000]);
    }
}
