//! ORC files Java Paimon 2.0.0 wrote (`conformance/java-tables`, see its README).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use arrow_array::Array;
use arrow_array::cast::AsArray;
use bytes::Bytes;

use crate::format::data_file::{FileFormat, decode_data_file};
use crate::format::shared_map::{SHARED_SHREDDING, STORAGE_LAYOUT, SharedMapLayout};

/// The ORC data files of Java table `table`, bucket 0.
fn orc_files(table: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/java-tables")
        .join(table)
        .join("bucket-0");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "orc"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no ORC file in {}", dir.display());
    files
}

fn decode(path: &Path, columns: &[&str]) -> crate::format::data_file::DecodedDataFile {
    let projection: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    decode_data_file(
        Bytes::from(std::fs::read(path).unwrap()),
        &path.display().to_string(),
        FileFormat::Orc,
        Some(&projection),
        1024,
    )
    .unwrap()
}

/// Java pads CHAR(5) values to 5 characters in ORC and its reader trims them: `c0` reads back
/// as `c0`, as from Parquet (j20_all_types_orc: c_char = 'c' || id).
#[test]
fn orc_char_values_read_without_their_padding() {
    let mut seen = 0;
    for file in orc_files("j20_all_types_orc") {
        let decoded = decode(&file, &["id", "c_char"]);
        for b in &decoded.batches {
            let ids = b.column(0).as_primitive::<arrow_array::types::Int32Type>();
            let chars = b.column(1).as_string::<i32>();
            for i in 0..b.num_rows() {
                if chars.is_valid(i) {
                    assert_eq!(
                        chars.value(i),
                        format!("c{}", ids.value(i)),
                        "{}",
                        file.display()
                    );
                    seen += 1;
                }
            }
        }
    }
    assert!(seen >= 8, "{seen} CHAR values");
}

/// Java writes the shared-shredding layout of a MAP column into the ORC user metadata
/// `ARROW:schema`: the decoded field carries it and the field dictionary decodes.
#[test]
fn orc_shared_shredding_layout_comes_from_the_arrow_schema_user_metadata() {
    for file in orc_files("j20_map_shared_orc") {
        let decoded = decode(&file, &["m"]);
        let field = decoded.schema.field(0);
        assert_eq!(
            field.metadata().get(STORAGE_LAYOUT).map(String::as_str),
            Some(SHARED_SHREDDING),
            "{}: {:?}",
            file.display(),
            field.metadata()
        );
        let layout = SharedMapLayout::from_field(field, "f").unwrap().unwrap();
        assert_eq!(layout.num_columns, 8);
        assert!(
            layout.names.values().all(|n| n.starts_with("key")),
            "{layout:?}"
        );
        let map = layout
            .assemble(decoded.batches[0].column(0), "f", "m")
            .unwrap();
        assert_eq!(map.len(), decoded.batches[0].num_rows());
    }
}
