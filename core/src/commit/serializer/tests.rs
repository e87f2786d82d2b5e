//! Golden bytes written by Java's `CommitMessageSerializer` (release-1.4.2: version 11;
//! release-2.0.0 classes: version 12), see `conformance/commit-messages/README.md`. The
//! expected values mirror `conformance/java-serializer-check/.../SerializerCheck.java`.

use std::path::PathBuf;

use super::*;

fn golden(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/commit-messages")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn string_ty() -> DataType {
    string(true)
}

fn key(id: i64) -> BinaryRow {
    BinaryRow::encode(&[Datum::BigInt(id)], &[bigint(false)]).unwrap()
}

fn value_row(id: i64, name: &str) -> BinaryRow {
    BinaryRow::encode(
        &[Datum::BigInt(id), Datum::String(name.into())],
        &[bigint(true), string_ty()],
    )
    .unwrap()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn file_full() -> DataFileMeta {
    DataFileMeta {
        file_name: "data-5a1b2c3d-0.parquet".into(),
        file_size: 4096,
        row_count: 100,
        min_key: key(1),
        max_key: key(99),
        key_stats: SimpleStats {
            min_values: key(1),
            max_values: key(99),
            null_counts: vec![Some(0)],
        },
        value_stats: SimpleStats {
            min_values: value_row(1, "alice"),
            max_values: value_row(99, "a-longer-name-value"),
            null_counts: vec![Some(0), None],
        },
        min_sequence_number: 10,
        max_sequence_number: 109,
        schema_id: 1,
        level: 0,
        extra_files: strs(&["data-5a1b2c3d-0.parquet.index"]),
        creation_time_millis: Some(1_700_000_000_123),
        delete_row_count: Some(3),
        embedded_index: Some((0u8..16).collect()),
        file_source: Some(FileSource::Append),
        value_stats_cols: Some(strs(&["id", "name"])),
        external_path: Some("s3://bucket/ext/data-5a1b2c3d-0.parquet".into()),
        first_row_id: Some(1000),
        write_cols: Some(strs(&["id", "name"])),
        write_cols_sequences: None,
    }
}

fn file_minimal() -> DataFileMeta {
    DataFileMeta {
        file_name: "data-min-1.orc".into(),
        file_size: 10,
        row_count: 1,
        min_key: BinaryRow::empty(),
        max_key: BinaryRow::empty(),
        key_stats: SimpleStats::empty(),
        value_stats: SimpleStats::empty(),
        min_sequence_number: 0,
        max_sequence_number: 0,
        schema_id: 0,
        level: 5,
        extra_files: vec![],
        creation_time_millis: Some(1_699_999_999_000),
        delete_row_count: None,
        embedded_index: None,
        file_source: None,
        value_stats_cols: None,
        external_path: None,
        first_row_id: None,
        write_cols: None,
        write_cols_sequences: None,
    }
}

fn file_compact() -> DataFileMeta {
    DataFileMeta {
        file_name: "data-c-2.parquet".into(),
        file_size: 2048,
        row_count: 50,
        min_key: key(5),
        max_key: key(60),
        key_stats: SimpleStats {
            min_values: key(5),
            max_values: key(60),
            null_counts: vec![Some(0)],
        },
        value_stats: SimpleStats::empty(),
        min_sequence_number: 20,
        max_sequence_number: 69,
        schema_id: 2,
        level: 1,
        extra_files: vec![],
        creation_time_millis: Some(1_700_000_001_000),
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: Some(FileSource::Compact),
        value_stats_cols: Some(vec![]),
        external_path: None,
        first_row_id: None,
        write_cols: None,
        write_cols_sequences: None,
    }
}

fn dv_index() -> IndexFileMeta {
    IndexFileMeta {
        index_type: "DELETION_VECTORS".into(),
        file_name: "index-dv-0".into(),
        file_size: 200,
        row_count: 2,
        dv_ranges: Some(vec![
            DeletionVectorMeta {
                data_file_name: "data-5a1b2c3d-0.parquet".into(),
                offset: 1,
                length: 40,
                cardinality: Some(3),
            },
            DeletionVectorMeta {
                data_file_name: "data-min-1.orc".into(),
                offset: 41,
                length: 20,
                cardinality: None,
            },
        ]),
        external_path: None,
        global_index: None,
    }
}

fn hash_index() -> IndexFileMeta {
    IndexFileMeta {
        index_type: "HASH".into(),
        file_name: "index-hash-0".into(),
        file_size: 64,
        row_count: 16,
        dv_ranges: None,
        external_path: Some("s3://bucket/ext/index-hash-0".into()),
        global_index: None,
    }
}

/// `version` 12 carries `source_meta`; 11 does not.
fn global_index(version: i32) -> IndexFileMeta {
    IndexFileMeta {
        index_type: "BTREE".into(),
        file_name: "index-global-0".into(),
        file_size: 512,
        row_count: 100,
        dv_ranges: None,
        external_path: None,
        global_index: Some(GlobalIndexMeta {
            row_range_start: 0,
            row_range_end: 99,
            index_field_id: 2,
            extra_field_ids: Some(vec![3, 4]),
            index_meta: Some((1u8..=9).collect()),
            source_meta: (version >= 12).then(|| vec![10, 11]),
        }),
    }
}

fn global_index_old() -> IndexFileMeta {
    IndexFileMeta {
        index_type: "BTREE".into(),
        file_name: "index-global-1".into(),
        file_size: 256,
        row_count: 100,
        dv_ranges: None,
        external_path: None,
        global_index: Some(GlobalIndexMeta {
            row_range_start: 100,
            row_range_end: 199,
            index_field_id: 2,
            extra_field_ids: None,
            index_meta: None,
            source_meta: None,
        }),
    }
}

fn full(version: i32) -> CommitMessage {
    CommitMessage {
        partition: BinaryRow::encode(
            &[Datum::String("2024-01-01".into()), Datum::Int(7)],
            &[string_ty(), int(true)],
        )
        .unwrap(),
        bucket: 3,
        total_buckets: Some(4),
        data_increment: DataIncrement {
            new_files: vec![file_full(), file_minimal()],
            deleted_files: vec![file_minimal()],
            changelog_files: vec![file_compact()],
            new_index_files: vec![dv_index()],
            deleted_index_files: vec![hash_index()],
        },
        compact_increment: CompactIncrement {
            compact_before: vec![file_full()],
            compact_after: vec![file_compact()],
            changelog_files: vec![],
            new_index_files: vec![global_index(version)],
            deleted_index_files: vec![global_index_old()],
        },
    }
}

fn minimal() -> CommitMessage {
    CommitMessage {
        partition: BinaryRow::empty(),
        bucket: 0,
        total_buckets: None,
        data_increment: DataIncrement {
            new_files: vec![file_minimal()],
            ..Default::default()
        },
        compact_increment: CompactIncrement::default(),
    }
}

#[test]
fn decodes_java_2_0_bytes() {
    assert_eq!(decode(12, &golden("full.v12.bin")).unwrap(), full(12));
    assert_eq!(decode(12, &golden("minimal.v12.bin")).unwrap(), minimal());
    assert_eq!(
        decode_file(&golden("list.v12.bin"), "list.v12.bin").unwrap(),
        vec![full(12), minimal()]
    );
}

#[test]
fn encodes_java_2_0_bytes() {
    assert_eq!(VERSION, 12);
    assert_eq!(encode(&full(12)).unwrap(), golden("full.v12.bin"));
    assert_eq!(encode(&minimal()).unwrap(), golden("minimal.v12.bin"));
    assert_eq!(
        encode_file(&[full(12), minimal()]).unwrap(),
        golden("list.v12.bin")
    );
    let list = golden("list.v12.bin");
    assert_eq!(
        encode_list(&[full(12), minimal()]).unwrap(),
        list[8..].to_vec()
    );
    assert_eq!(
        decode_list(12, &list[8..]).unwrap(),
        vec![full(12), minimal()]
    );
}

#[test]
fn decodes_and_encodes_java_1_4_bytes() {
    assert_eq!(decode(11, &golden("full.v11.bin")).unwrap(), full(11));
    assert_eq!(decode(11, &golden("minimal.v11.bin")).unwrap(), minimal());
    assert_eq!(
        decode_file(&golden("list.v11.bin"), "list.v11.bin").unwrap(),
        vec![full(11), minimal()]
    );
    assert_eq!(
        encode_version(11, &full(11)).unwrap(),
        golden("full.v11.bin")
    );
    assert_eq!(
        encode_file_version(VERSION_1_4, &[full(11), minimal()]).unwrap(),
        golden("list.v11.bin")
    );
    // Version 11 cannot carry a global index's source meta.
    let err = encode_version(11, &full(12)).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
}

#[test]
fn older_versions() {
    // Without index files, versions 10-12 write the same bytes.
    let min = golden("minimal.v11.bin");
    assert_eq!(encode_version(10, &minimal()).unwrap(), min);
    assert_eq!(decode(10, &min).unwrap(), minimal());
    // Version 9: six data-file lists, then two index-file lists (here: 10 lists → 8).
    assert_eq!(decode(9, &min[..min.len() - 8]).unwrap(), minimal());
    // Version 10 has no global index field.
    let err = encode_version(10, &full(11)).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    let mut no_global = full(11);
    no_global.compact_increment.new_index_files.clear();
    no_global.compact_increment.deleted_index_files.clear();
    let v10 = encode_version(10, &no_global).unwrap();
    assert_ne!(v10, encode_version(11, &no_global).unwrap());
    assert_eq!(decode(10, &v10).unwrap(), no_global);
}

/// Mirrors `LegacyCheck.expected(v)` of the Java oracle.
fn legacy(v: i32) -> Vec<CommitMessage> {
    let mut file = file_full();
    if v < 4 {
        file.value_stats_cols = None;
    }
    if v < 6 {
        file.external_path = None;
    }
    if v < 8 {
        file.first_row_id = None;
    }
    if v < 9 {
        file.write_cols = None;
    }
    let mut hash = hash_index();
    if v < 9 {
        hash.external_path = None;
    }
    let dv = if v >= 5 { dv_index() } else { hash.clone() };
    vec![
        CommitMessage {
            partition: full(v).partition,
            bucket: 1,
            total_buckets: (v >= 7).then_some(4),
            data_increment: DataIncrement {
                new_files: vec![file.clone()],
                new_index_files: vec![dv],
                deleted_index_files: vec![hash.clone()],
                ..Default::default()
            },
            compact_increment: CompactIncrement::default(),
        },
        CommitMessage {
            partition: BinaryRow::empty(),
            bucket: 0,
            total_buckets: None,
            data_increment: DataIncrement::default(),
            compact_increment: CompactIncrement {
                compact_before: vec![file.clone()],
                compact_after: vec![file],
                new_index_files: vec![hash],
                ..Default::default()
            },
        },
    ]
}

#[test]
fn decodes_legacy_versions_java_reads() {
    // legacy.vN.bin: list form of versions 3-10, accepted by Java's
    // `CommitMessageSerializer#deserializeList(N, ..)` (1.4.2 and 2.0.0) as exactly these
    // messages (see the README).
    for v in 3..=10 {
        let bytes = golden(&format!("legacy.v{v}.bin"));
        assert_eq!(decode_list(v, &bytes).unwrap(), legacy(v), "version {v}");
    }
    // Version 10 is also what we encode at 10.
    assert_eq!(
        encode_list_version(10, &legacy(10)).unwrap(),
        golden("legacy.v10.bin")
    );
}

#[test]
fn errors() {
    let full12 = golden("full.v12.bin");
    for v in [2, 13] {
        let err = decode(v, &full12).unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{v}: {err}");
    }
    let err = decode(12, &full12[..full12.len() - 1]).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    let mut longer = full12.clone();
    longer.push(0);
    let err = decode(12, &longer).unwrap_err();
    assert!(err.to_string().contains("1 trailing bytes"), "{err}");
    let mut list = golden("list.v12.bin");
    list[7] ^= 1;
    let err = decode_file(&list, "x.bin").unwrap_err();
    assert!(err.to_string().contains("x.bin"), "{err}");
    let mut msg = minimal();
    msg.data_increment.new_files[0].write_cols_sequences = Some(vec![1]);
    let err = encode(&msg).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
}

/// With `PAIMON_COMMIT_MESSAGES_OUT=DIR`, writes the Rust encodings for the Java oracle
/// (`conformance/java-serializer-check/oracle [--v2] check DIR/rust-list.vN.bin`).
#[test]
fn write_for_java_oracle() {
    let Some(dir) = std::env::var_os("PAIMON_COMMIT_MESSAGES_OUT") else {
        return;
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("rust-list.v12.bin"),
        encode_file(&[full(12), minimal()]).unwrap(),
    )
    .unwrap();
    std::fs::write(
        dir.join("rust-list.v11.bin"),
        encode_file_version(11, &[full(11), minimal()]).unwrap(),
    )
    .unwrap();
}
