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
            null_counts: vec![Some(0)].into(),
        },
        value_stats: SimpleStats {
            min_values: value_row(1, "alice"),
            max_values: value_row(99, "a-longer-name-value"),
            null_counts: vec![Some(0), None].into(),
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
            null_counts: vec![Some(0)].into(),
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

/// Mirrors `LegacyCheck.dvNoCardinality()`: versions 1-4 carry no cardinality.
fn dv_no_cardinality() -> IndexFileMeta {
    let range = |name: &str, offset, length| DeletionVectorMeta {
        data_file_name: name.into(),
        offset,
        length,
        cardinality: None,
    };
    IndexFileMeta {
        index_type: "DELETION_VECTORS".into(),
        file_name: "index-dv-1".into(),
        file_size: 32,
        row_count: 2,
        dv_ranges: Some(vec![
            range("data-a.parquet", 1, 22),
            range("data-b.parquet", 23, 9),
        ]),
        external_path: None,
        global_index: None,
    }
}

/// Mirrors `LegacyCheck.expected(v)` of the Java oracle.
fn legacy(v: i32) -> Vec<CommitMessage> {
    let mut file = file_full();
    if v < 3 {
        file.file_source = None;
    }
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
    if v <= 2 {
        // No deleted index files: the one index list goes to the compaction when it has
        // files, else to the data increment.
        return vec![
            CommitMessage {
                partition: full(v).partition,
                bucket: 1,
                total_buckets: None,
                data_increment: DataIncrement {
                    new_files: vec![file.clone()],
                    deleted_files: vec![file.clone()],
                    changelog_files: vec![file.clone()],
                    new_index_files: vec![dv_no_cardinality(), hash.clone()],
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
                    compact_after: vec![file.clone()],
                    changelog_files: vec![file],
                    new_index_files: vec![hash],
                    ..Default::default()
                },
            },
        ];
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
    // legacy.vN.bin: list form of versions 1-10, accepted by Java's
    // `CommitMessageSerializer#deserializeList(N, ..)` (1.4.2 and 2.0.0) as exactly these
    // messages (see the README). Versions 1 and 2 have the same layout (same bytes).
    assert_eq!(golden("legacy.v1.bin"), golden("legacy.v2.bin"));
    for v in 1..=10 {
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
    for v in [0, -1, 13] {
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
    // Java reads the hand-built version-2 bytes with `./oracle dump DIR/hand.v2.bin`.
    let hand = hand_built_v2();
    let mut file = 2i32.to_be_bytes().to_vec();
    file.extend_from_slice(&(4 + hand.len() as i32).to_be_bytes());
    file.extend_from_slice(&1i32.to_be_bytes());
    file.extend_from_slice(&hand);
    std::fs::write(dir.join("hand.v2.bin"), file).unwrap();
    std::fs::write(
        dir.join("rust-list.v11.bin"),
        encode_file_version(11, &[full(11), minimal()]).unwrap(),
    )
    .unwrap();
}

/// A Java `BinaryRow` laid out by hand, independent of [`BinaryRow::encode`]: a header of
/// `(arity + 63 + 8) / 64 * 8` bytes (byte 0 the row kind, then one null bit per field from
/// bit 8, least significant bit first), one 8-byte little-endian slot per field, then the
/// variable part in 8-byte words. A string or bytes value of at most 7 bytes sits in its slot
/// (bytes `0..len`, byte 7 = `0x80 | len`); longer ones, nested rows and arrays are appended
/// to the variable part (zero-padded to 8 bytes) and their slot holds
/// `offset_from_row_start << 32 | length`. An `INT` is 4 bytes LE at the slot start.
/// Source: Java `BinaryRowWriter`, `AbstractBinaryWriter`, `BinarySegmentUtils`.
struct HandRow {
    fixed: Vec<u8>,
    var: Vec<u8>,
    header: usize,
}

impl HandRow {
    fn new(arity: usize) -> Self {
        let header = (arity + 63 + 8) / 64 * 8;
        HandRow {
            fixed: vec![0; header + 8 * arity],
            var: Vec::new(),
            header,
        }
    }

    fn slot(&mut self, i: usize) -> &mut [u8] {
        let at = self.header + 8 * i;
        &mut self.fixed[at..at + 8]
    }

    fn long(mut self, i: usize, v: i64) -> Self {
        self.slot(i).copy_from_slice(&v.to_le_bytes());
        self
    }

    fn int(mut self, i: usize, v: i32) -> Self {
        self.slot(i)[..4].copy_from_slice(&v.to_le_bytes());
        self
    }

    fn null(mut self, i: usize) -> Self {
        self.fixed[(i + 8) / 8] |= 1 << ((i + 8) % 8);
        self
    }

    /// A string or bytes value: inline when at most 7 bytes.
    fn var(mut self, i: usize, bytes: &[u8]) -> Self {
        if bytes.len() <= 7 {
            let slot = self.slot(i);
            slot[..bytes.len()].copy_from_slice(bytes);
            slot[7] = 0x80 | bytes.len() as u8;
            self
        } else {
            self.nested(i, bytes)
        }
    }

    /// A nested row or array: always in the variable part.
    fn nested(mut self, i: usize, bytes: &[u8]) -> Self {
        let offset = (self.fixed.len() + self.var.len()) as i64;
        self.var.extend_from_slice(bytes);
        self.var.resize(self.var.len().div_ceil(8) * 8, 0);
        self.long(i, (offset << 32) | bytes.len() as i64)
    }

    fn build(self) -> Vec<u8> {
        [self.fixed, self.var].concat()
    }
}

/// `SerializationUtils#serializeBinaryRow` of the empty row: `int32 BE arity 0` then the
/// 8-byte header of an arity-0 row.
const EMPTY_ROW_SERIALIZED: [u8; 12] = [0; 12];

/// An empty `BinaryArray`: `int32 LE count 0`, no null bits, padded to 8 bytes.
const EMPTY_ARRAY: [u8; 8] = [0; 8];

/// Java `SimpleStats.EMPTY_STATS.toRow()` (3 fields): min and max values as serialized empty
/// rows, null counts an empty array.
fn hand_empty_stats() -> Vec<u8> {
    HandRow::new(3)
        .var(0, &EMPTY_ROW_SERIALIZED)
        .var(1, &EMPTY_ROW_SERIALIZED)
        .nested(2, &EMPTY_ARRAY)
        .build()
}

/// `int32 BE length ‖ row bytes`, how `BinaryRowSerializer` frames each list element.
fn framed(row: Vec<u8>) -> Vec<u8> {
    [(row.len() as i32).to_be_bytes().to_vec(), row].concat()
}

/// One commit message of version 1 or 2 (the same layout), built byte by byte as Java 2.0's
/// `CommitMessageSerializer#deserialize` reads it for `version <= 2`:
///
/// ```text
/// int32 BE partition length ‖ int32 BE arity ‖ partition row   (SerializationUtils)
/// int32 BE bucket                                               (no total-buckets flag below 7)
/// data increment:  new ‖ deleted ‖ changelog    data-file lists (DataFileMeta08Serializer)
/// compaction:      before ‖ after ‖ changelog   data-file lists
/// index files:     new                          one index-file list (IndexFileMetaV1Deserializer)
/// ```
///
/// A list is `int32 BE count ‖ count × (int32 BE row length ‖ BinaryRow)`. The data-file row
/// has the 15 fields of `DataFileMeta08Serializer.schemaFor08()`: `_FILE_NAME` STRING,
/// `_FILE_SIZE`, `_ROW_COUNT` BIGINT, `_MIN_KEY`, `_MAX_KEY` BYTES (serialized rows),
/// `_KEY_STATS`, `_VALUE_STATS` ROW(BYTES, BYTES, ARRAY<BIGINT>), `_MIN_SEQUENCE_NUMBER`,
/// `_MAX_SEQUENCE_NUMBER`, `_SCHEMA_ID` BIGINT, `_LEVEL` INT, `_EXTRA_FILES` ARRAY<STRING>,
/// `_CREATION_TIME` TIMESTAMP(3) (compact: epoch millis in the slot), `_DELETE_ROW_COUNT`
/// BIGINT, `_EMBEDDED_FILE_INDEX` BYTES. The index-file row has the 5 fields of
/// `IndexFileMetaV1Deserializer.SCHEMA`: `_INDEX_TYPE`, `_FILE_NAME` STRING, `_FILE_SIZE`,
/// `_ROW_COUNT` BIGINT, `_DELETIONS_VECTORS_RANGES` ARRAY<ROW(STRING, INT, INT)>.
fn hand_built_v2() -> Vec<u8> {
    let data_file = HandRow::new(15)
        .var(0, b"data-0.orc") // 10 bytes: variable part
        .long(1, 321)
        .long(2, 4)
        .var(3, &EMPTY_ROW_SERIALIZED)
        .var(4, &EMPTY_ROW_SERIALIZED)
        .nested(5, &hand_empty_stats())
        .nested(6, &hand_empty_stats())
        .long(7, 0)
        .long(8, 3)
        .long(9, 0)
        .int(10, 0)
        .nested(11, &EMPTY_ARRAY)
        .long(12, 1_600_000_000_000)
        .long(13, 1)
        .null(14)
        .build();
    // A deletion-vector range (ROW(STRING, INT, INT)) and the array holding it: count 1, a
    // 4-byte null-bit word, one 8-byte element slot (offset from the array start, length).
    let range = HandRow::new(3)
        .var(0, b"data-0.orc")
        .int(1, 1)
        .int(2, 30)
        .build();
    let mut ranges = Vec::new();
    ranges.extend_from_slice(&1i32.to_le_bytes());
    ranges.extend_from_slice(&[0; 4]);
    ranges.extend_from_slice(&((16i64 << 32) | range.len() as i64).to_le_bytes());
    ranges.extend_from_slice(&range);
    let index_file = HandRow::new(5)
        .var(0, b"DELETION_VECTORS")
        .var(1, b"index-0")
        .long(2, 31)
        .long(3, 1)
        .nested(4, &ranges)
        .build();
    let mut out = Vec::new();
    // Partition: the empty row, serialized.
    out.extend_from_slice(&12i32.to_be_bytes());
    out.extend_from_slice(&EMPTY_ROW_SERIALIZED);
    out.extend_from_slice(&2i32.to_be_bytes()); // bucket
    // Data increment: one new file, no deleted or changelog files.
    out.extend_from_slice(&1i32.to_be_bytes());
    out.extend_from_slice(&framed(data_file));
    out.extend_from_slice(&0i32.to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    // Compaction: no files.
    for _ in 0..3 {
        out.extend_from_slice(&0i32.to_be_bytes());
    }
    // New index files (the data increment's: the compaction is empty).
    out.extend_from_slice(&1i32.to_be_bytes());
    out.extend_from_slice(&framed(index_file));
    out
}

fn hand_built_expected() -> CommitMessage {
    CommitMessage {
        partition: BinaryRow::empty(),
        bucket: 2,
        total_buckets: None,
        data_increment: DataIncrement {
            new_files: vec![DataFileMeta {
                file_name: "data-0.orc".into(),
                file_size: 321,
                row_count: 4,
                min_key: BinaryRow::empty(),
                max_key: BinaryRow::empty(),
                key_stats: SimpleStats::empty(),
                value_stats: SimpleStats::empty(),
                min_sequence_number: 0,
                max_sequence_number: 3,
                schema_id: 0,
                level: 0,
                extra_files: vec![],
                creation_time_millis: Some(1_600_000_000_000),
                delete_row_count: Some(1),
                embedded_index: None,
                file_source: None,
                value_stats_cols: None,
                external_path: None,
                first_row_id: None,
                write_cols: None,
                write_cols_sequences: None,
            }],
            new_index_files: vec![IndexFileMeta {
                index_type: "DELETION_VECTORS".into(),
                file_name: "index-0".into(),
                file_size: 31,
                row_count: 1,
                dv_ranges: Some(vec![DeletionVectorMeta {
                    data_file_name: "data-0.orc".into(),
                    offset: 1,
                    length: 30,
                    cardinality: None,
                }]),
                external_path: None,
                global_index: None,
            }],
            ..Default::default()
        },
        compact_increment: CompactIncrement::default(),
    }
}

#[test]
fn decodes_hand_built_version_1_and_2() {
    for version in [1, 2] {
        check_hand_built(version);
    }
}

fn check_hand_built(version: i32) {
    let bytes = hand_built_v2();
    assert_eq!(decode(version, &bytes).unwrap(), hand_built_expected());
    // Version 3 reads a deleted-index list after it (and 16 data-file fields): the same bytes
    // are not a version-3 message.
    assert!(decode(3, &bytes).is_err());
    // Cut anywhere, the message is corrupt, never a panic.
    for cut in 0..bytes.len() {
        let err = decode(version, &bytes[..cut]).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "cut {cut}: {err}");
    }
    // The file form carries the version.
    let mut file = Vec::new();
    file.extend_from_slice(&version.to_be_bytes());
    file.extend_from_slice(&(4 + bytes.len() as i32).to_be_bytes());
    file.extend_from_slice(&1i32.to_be_bytes());
    file.extend_from_slice(&bytes);
    assert_eq!(
        decode_file(&file, "m.bin").unwrap(),
        vec![hand_built_expected()]
    );
}
