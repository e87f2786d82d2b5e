//! Round trips: encode with [`DataFileEncoder`], decode with the crate's readers
//! ([`crate::format::data_file::decode_data_file`]) and [`crate::types::cast_batch_to`], compare.

use std::sync::Arc;

use ::parquet::file::reader::{FileReader, SerializedFileReader};
use arrow_array::builder::{
    Int32Builder, Int64Builder, ListBuilder, MapBuilder, MapFieldNames, StringBuilder,
};
use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeListArray,
    Float32Array, Float64Array, Int8Array, Int16Array, Int32Array, Int64Array, ListArray,
    RecordBatch, StringArray, StructArray, Time32MillisecondArray, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType as ArrowType, Field};
use bytes::Bytes;

use super::*;
use crate::format::data_file::{FileFormat, decode_data_file};
use crate::spec::TypeKind;
use crate::types::{cast_batch_to, paimon_to_arrow_type};

fn t(sql: &str) -> DataType {
    DataType::parse_sql(sql).unwrap()
}

fn field(id: i32, name: &str, sql: &str) -> DataField {
    DataField::new(id, name, t(sql))
}

/// Fields, one batch per entry of `batches`.
struct Case {
    fields: Vec<DataField>,
    batches: Vec<RecordBatch>,
}

impl Case {
    fn new(fields: Vec<DataField>) -> Self {
        Case {
            fields,
            batches: Vec::new(),
        }
    }

    fn batch(mut self, columns: Vec<ArrayRef>) -> Self {
        let schema = paimon_to_arrow_schema(&self.fields).unwrap();
        let options = arrow_array::RecordBatchOptions::new()
            .with_row_count(Some(columns.first().map_or(0, |c| c.len())));
        self.batches
            .push(RecordBatch::try_new_with_options(schema, columns, &options).unwrap());
        self
    }

    fn encode(&self, format: &str, options: &CoreOptions) -> Vec<u8> {
        let mut encoder = DataFileEncoder::try_new(&self.fields, format, options).unwrap();
        for b in &self.batches {
            encoder.write(b).unwrap();
        }
        let rows: usize = self.batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(encoder.row_count(), rows as u64);
        encoder.finish().unwrap()
    }

    /// Encode, decode, compare with the written rows.
    fn round_trip(&self, format: &str, options: &CoreOptions) -> Vec<u8> {
        let bytes = self.encode(format, options);
        let decoded = decode(&bytes, format, &self.fields);
        let schema = paimon_to_arrow_schema(&self.fields).unwrap();
        let expected = arrow_select::concat::concat_batches(&schema, &self.batches).unwrap();
        assert_eq!(
            decoded.num_rows(),
            expected.num_rows(),
            "{format}: row count"
        );
        for (i, f) in self.fields.iter().enumerate() {
            let want = if format == "orc" && f.data_type.to_string().starts_with("CHAR") {
                trim_char(expected.column(i).as_ref())
            } else {
                expected.column(i).clone()
            };
            assert_eq!(
                decoded.column(i).as_ref(),
                want.as_ref(),
                "{format}: column {} ({})",
                f.name,
                f.data_type
            );
        }
        bytes
    }
}

/// The ORC file's columns as stored (orc-rust's reader alone, without the right trim of CHAR
/// values that Java's ORC reader and ours apply), one batch.
fn orc_stored(bytes: &[u8]) -> RecordBatch {
    let reader = orc_rust::arrow_reader::ArrowReaderBuilder::try_new(Bytes::copy_from_slice(bytes))
        .unwrap()
        .build();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap()
}

/// `array` with every CHAR value right-trimmed of spaces (what Java's ORC reader returns for a
/// CHAR column: the writer pads, `CharTreeReader` trims back).
fn trim_char(array: &dyn Array) -> ArrayRef {
    let strings = array.as_any().downcast_ref::<StringArray>().unwrap();
    Arc::new(
        strings
            .iter()
            .map(|v| v.map(|s| s.trim_end_matches(' ')))
            .collect::<StringArray>(),
    )
}

fn decode(bytes: &[u8], format: &str, fields: &[DataField]) -> RecordBatch {
    let format = FileFormat::from_name(format).unwrap();
    let file = decode_data_file(
        Bytes::copy_from_slice(bytes),
        "test-file",
        format,
        None,
        1000,
    )
    .unwrap();
    let schema = paimon_to_arrow_schema(fields).unwrap();
    let batches = file
        .batches
        .iter()
        .map(|b| cast_batch_to(b, &schema, "test-file").unwrap())
        .collect::<Vec<_>>();
    arrow_select::concat::concat_batches(&schema, &batches).unwrap()
}

fn opts(pairs: &[(&str, &str)]) -> CoreOptions {
    CoreOptions::from_pairs(pairs.iter().copied())
}

fn nulls(valid: &[bool]) -> Option<NullBuffer> {
    Some(NullBuffer::from(valid.to_vec()))
}

/// One column of every primitive type with a NULL, a negative/pre-1970 value and extremes.
/// `orc`: timestamps within the nanosecond range (the ORC reader decodes at nanosecond
/// precision).
fn primitive_case(orc: bool) -> Case {
    let far = if orc { 1 } else { 62_135_596_800 };
    let mut fields = vec![
        field(0, "b", "BOOLEAN"),
        field(1, "i8", "TINYINT"),
        field(2, "i16", "SMALLINT"),
        field(3, "i32", "INT NOT NULL"),
        field(4, "i64", "BIGINT"),
        field(5, "f32", "FLOAT"),
        field(6, "f64", "DOUBLE"),
        field(7, "s", "STRING"),
        field(8, "vc", "VARCHAR(10)"),
        field(9, "c", "CHAR(3)"),
        field(10, "bin", "BYTES"),
        field(11, "bin4", "BINARY(4)"),
        field(12, "d", "DATE"),
        field(13, "tm", "TIME"),
        field(14, "ts0", "TIMESTAMP(0)"),
        field(15, "ts3", "TIMESTAMP(3)"),
        field(16, "ts6", "TIMESTAMP(6)"),
        field(17, "ltz3", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
        field(18, "ltz6", "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
    ];
    fields.push(field(19, "dec1", "DECIMAL(1, 0)"));
    fields.push(field(20, "dec9", "DECIMAL(9, 2)"));
    fields.push(field(21, "dec18", "DECIMAL(18, 6)"));
    fields.push(field(22, "dec38", "DECIMAL(38, 10)"));
    let valid = [true, false, true, true];
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(BooleanArray::new(
            vec![true, false, false, true].into(),
            nulls(&valid),
        )),
        Arc::new(Int8Array::new(vec![-128, 0, 1, 127].into(), nulls(&valid))),
        Arc::new(Int16Array::new(
            vec![i16::MIN, 0, -1, i16::MAX].into(),
            nulls(&valid),
        )),
        Arc::new(Int32Array::from(vec![i32::MIN, 0, -7, i32::MAX])),
        Arc::new(Int64Array::new(
            vec![i64::MIN, 0, -7, i64::MAX].into(),
            nulls(&valid),
        )),
        Arc::new(Float32Array::new(
            vec![-1.5, 0.0, f32::NAN, f32::MAX].into(),
            nulls(&valid),
        )),
        Arc::new(Float64Array::new(
            vec![-1.5, 0.0, 1e300, f64::MIN].into(),
            nulls(&valid),
        )),
        Arc::new(StringArray::from(vec![
            Some("héllo"),
            None,
            Some(""),
            Some("x"),
        ])),
        Arc::new(StringArray::from(vec![
            Some("abc"),
            None,
            Some("0123456789"),
            Some("z"),
        ])),
        Arc::new(StringArray::from(vec![
            Some("ab "),
            None,
            Some("xyz"),
            Some("   "),
        ])),
        Arc::new(BinaryArray::from(vec![
            Some(&b"\x00\xff"[..]),
            None,
            Some(b""),
            Some(b"x"),
        ])),
        Arc::new(BinaryArray::from(vec![
            Some(&b"abcd"[..]),
            None,
            Some(b"\0\0\0\0"),
            Some(b"wxyz"),
        ])),
        Arc::new(Date32Array::new(
            vec![-719_162, 0, -1, 2_932_896].into(),
            nulls(&valid),
        )),
        Arc::new(Time32MillisecondArray::new(
            vec![0, 1, 86_399_999, 43_200_000].into(),
            nulls(&valid),
        )),
        Arc::new(TimestampSecondArray::new(
            vec![-1, 0, 1_700_000_000, -far].into(),
            nulls(&valid),
        )),
        Arc::new(TimestampMillisecondArray::new(
            vec![-86_400_123, 0, 1_700_000_000_123, -far * 1000].into(),
            nulls(&valid),
        )),
        Arc::new(TimestampMicrosecondArray::new(
            vec![-86_400_123_456, 0, 1_700_000_000_123_456, -far * 1_000_000].into(),
            nulls(&valid),
        )),
        Arc::new(
            TimestampMillisecondArray::new(
                vec![-86_400_123, 0, 1_700_000_000_123, 1].into(),
                nulls(&valid),
            )
            .with_timezone("UTC"),
        ),
        Arc::new(
            TimestampMicrosecondArray::new(
                vec![-86_400_123_456, 0, 1_700_000_000_123_456, 1].into(),
                nulls(&valid),
            )
            .with_timezone("UTC"),
        ),
    ];
    let dec = |values: Vec<i128>, p: u8, s: i8| -> ArrayRef {
        Arc::new(
            Decimal128Array::new(values.into(), nulls(&valid))
                .with_precision_and_scale(p, s)
                .unwrap(),
        )
    };
    columns.push(dec(vec![-9, 0, 5, 9], 1, 0));
    columns.push(dec(vec![-999_999_999, 0, 12_345, 999_999_999], 9, 2));
    columns.push(dec(
        vec![-999_999_999_999_999_999, 0, -1, 123_456_789_012_345_678],
        18,
        6,
    ));
    let max38 = 10i128.pow(38) - 1;
    columns.push(dec(vec![-max38, 0, -128, max38], 38, 10));
    Case::new(fields).batch(columns)
}

#[test]
fn primitives_round_trip() {
    for format in ["parquet", "avro"] {
        primitive_case(false).round_trip(format, &CoreOptions::default());
    }
}

#[test]
fn orc_primitives_round_trip() {
    primitive_case(true).round_trip("orc", &CoreOptions::default());
}

/// `ARRAY`, `MAP` (string and int keys), `MULTISET`, `ROW`, `VECTOR`, nested, with NULLs at
/// every level.
fn nested_case() -> Case {
    let fields = vec![
        field(0, "id", "INT"),
        field(1, "arr", "ARRAY<INT>"),
        field(2, "arr_arr", "ARRAY<ARRAY<STRING> NOT NULL>"),
        field(3, "m_str", "MAP<STRING, BIGINT>"),
        field(4, "m_int", "MAP<INT NOT NULL, ARRAY<STRING>>"),
        DataField::new(
            5,
            "r",
            DataType::nullable(TypeKind::Row(vec![
                field(10, "x", "INT"),
                field(11, "y", "STRING NOT NULL"),
                field(12, "z", "ARRAY<DOUBLE>"),
            ])),
        ),
        field(6, "ms", "MULTISET<STRING>"),
        field(7, "vec", "VECTOR<FLOAT, 2>"),
    ];
    let valid = [true, false, true, true];

    let mut arr = ListBuilder::new(Int32Builder::new());
    arr.values().append_value(1);
    arr.values().append_null();
    arr.append(true);
    arr.append(false);
    arr.append(true); // empty
    arr.values().append_value(-5);
    arr.append(true);

    let mut arr_arr = ListBuilder::new(ListBuilder::new(StringBuilder::new())).with_field(
        Field::new("item", ArrowType::new_list(ArrowType::Utf8, true), false),
    );
    arr_arr.values().values().append_value("a");
    arr_arr.values().values().append_null();
    arr_arr.values().append(true);
    arr_arr.values().append(true);
    arr_arr.append(true);
    arr_arr.append(false);
    arr_arr.append(true);
    arr_arr.values().append(true);
    arr_arr.append(true);

    let names = MapFieldNames {
        entry: "entries".into(),
        key: "key".into(),
        value: "value".into(),
    };
    let mut m_str = MapBuilder::new(
        Some(names.clone()),
        StringBuilder::new(),
        Int64Builder::new(),
    );
    m_str.keys().append_value("k1");
    m_str.values().append_value(1);
    m_str.keys().append_value("k2");
    m_str.values().append_null();
    m_str.append(true).unwrap();
    m_str.append(false).unwrap();
    m_str.append(true).unwrap();
    m_str.keys().append_value("");
    m_str.values().append_value(-1);
    m_str.append(true).unwrap();

    let mut m_int = MapBuilder::new(
        Some(names.clone()),
        Int32Builder::new(),
        ListBuilder::new(StringBuilder::new()),
    );
    m_int.keys().append_value(7);
    m_int.values().values().append_value("v");
    m_int.values().append(true);
    m_int.keys().append_value(-7);
    m_int.values().append(false);
    m_int.append(true).unwrap();
    m_int.append(false).unwrap();
    m_int.append(true).unwrap();
    m_int.keys().append_value(0);
    m_int.values().append(true);
    m_int.append(true).unwrap();

    let row_fields = match paimon_to_arrow_type(&fields[5].data_type).unwrap() {
        ArrowType::Struct(f) => f,
        _ => unreachable!(),
    };
    let z = ListArray::from_iter_primitive::<arrow_array::types::Float64Type, _, _>(vec![
        Some(vec![Some(1.5)]),
        None,
        Some(vec![]),
        Some(vec![None, Some(2.0)]),
    ]);
    let row = StructArray::new(
        row_fields,
        vec![
            Arc::new(Int32Array::from(vec![Some(1), None, None, Some(4)])),
            Arc::new(StringArray::from(vec!["a", "", "c", "d"])),
            Arc::new(z),
        ],
        Some(NullBuffer::from(vec![true, false, true, true])),
    );

    let mut ms = MapBuilder::new(Some(names), StringBuilder::new(), Int32Builder::new())
        .with_values_field(Field::new("value", ArrowType::Int32, false));
    ms.keys().append_value("a");
    ms.values().append_value(2);
    ms.append(true).unwrap();
    ms.append(false).unwrap();
    ms.append(true).unwrap();
    ms.keys().append_value("b");
    ms.values().append_value(1);
    ms.keys().append_value("c");
    ms.values().append_value(3);
    ms.append(true).unwrap();

    let vec_field = Arc::new(Field::new("item", ArrowType::Float32, true));
    let vec = FixedSizeListArray::new(
        vec_field,
        2,
        Arc::new(Float32Array::from(vec![
            Some(1.0),
            Some(2.0),
            Some(0.0),
            Some(0.0),
            Some(3.0),
            Some(-4.0),
            Some(5.0),
            Some(6.0),
        ])),
        nulls(&valid),
    );

    let with_type = |array: ArrayRef, i: usize| -> ArrayRef {
        let target = paimon_to_arrow_type(&fields[i].data_type).unwrap();
        let data = array
            .to_data()
            .into_builder()
            .data_type(target)
            .build()
            .unwrap();
        arrow_array::make_array(data)
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(vec![1, 2, 3, 4])),
        with_type(Arc::new(arr.finish()), 1),
        with_type(Arc::new(arr_arr.finish()), 2),
        with_type(Arc::new(m_str.finish()), 3),
        with_type(Arc::new(m_int.finish()), 4),
        Arc::new(row),
        with_type(Arc::new(ms.finish()), 6),
        Arc::new(vec),
    ];
    Case::new(fields.clone()).batch(columns)
}

#[test]
fn nested_round_trip() {
    for format in ["parquet", "avro"] {
        nested_case().round_trip(format, &CoreOptions::default());
    }
}

#[test]
fn variant_round_trips_in_parquet() {
    let fields = vec![field(0, "v", "VARIANT"), field(1, "w", "VARIANT NOT NULL")];
    let variant = |valid: Option<NullBuffer>| -> ArrayRef {
        let ArrowType::Struct(f) = paimon_to_arrow_type(&t("VARIANT")).unwrap() else {
            unreachable!()
        };
        Arc::new(StructArray::new(
            f,
            vec![
                Arc::new(BinaryArray::from(vec![
                    &b"\x0c\x01"[..],
                    b"\x00",
                    b"\x0c\x02",
                ])),
                Arc::new(BinaryArray::from(vec![
                    &b"\x01\x00\x00"[..],
                    b"\x01\x00\x00",
                    b"\x01\x00\x00",
                ])),
            ],
            valid,
        ))
    };
    Case::new(fields)
        .batch(vec![variant(nulls(&[true, false, true])), variant(None)])
        .round_trip("parquet", &CoreOptions::default());
}

#[test]
fn int96_timestamps_round_trip_and_match_java_layout() {
    let fields = vec![
        field(0, "ts9", "TIMESTAMP(9)"),
        field(1, "ltz7", "TIMESTAMP(7) WITH LOCAL TIME ZONE NOT NULL"),
        DataField::new(
            2,
            "r",
            DataType::nullable(TypeKind::Row(vec![
                field(10, "a", "INT"),
                field(11, "t", "TIMESTAMP(9)"),
            ])),
        ),
    ];
    let ns = vec![
        -1,
        0,
        1_700_000_000_123_456_789,
        -9_000_000_000_000_000_000 + 999,
        86_400_000_000_000 - 1,
    ];
    let valid = [true, false, true, true, true];
    let ArrowType::Struct(row_fields) = paimon_to_arrow_type(&fields[2].data_type).unwrap() else {
        unreachable!()
    };
    let row = StructArray::new(
        row_fields,
        vec![
            Arc::new(Int32Array::from(vec![
                Some(1),
                Some(2),
                None,
                Some(4),
                Some(5),
            ])),
            Arc::new(TimestampNanosecondArray::new(
                ns.clone().into(),
                nulls(&[true, true, false, true, true]),
            )),
        ],
        nulls(&[true, false, true, true, true]),
    );
    let case = Case::new(fields).batch(vec![
        Arc::new(TimestampNanosecondArray::new(
            ns.clone().into(),
            nulls(&valid),
        )),
        Arc::new(TimestampNanosecondArray::new(ns.into(), None).with_timezone("UTC")),
        Arc::new(row),
    ]);
    let bytes = case.round_trip("parquet", &CoreOptions::default());
    let reader = SerializedFileReader::new(Bytes::from(bytes)).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr();
    for i in 0..schema.num_columns() {
        let c = schema.column(i);
        if c.name() == "a" {
            continue;
        }
        assert_eq!(
            c.physical_type(),
            ::parquet::basic::Type::INT96,
            "{}",
            c.path()
        );
    }
    // Java's split of -1 ns: epoch millis -1, Julian day 2440588, nanos of day -1 ms + 999999.
    let v = super::parquet::test_int96(-1);
    assert_eq!(v.data(), &[(-1_i64) as u32, u32::MAX, 2_440_588]);
}

#[test]
fn int96_inside_an_array_is_unsupported() {
    let fields = vec![field(0, "a", "ARRAY<TIMESTAMP(9)>")];
    let err = DataFileEncoder::try_new(&fields, "parquet", &CoreOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
}

#[test]
fn empty_files_and_empty_batches() {
    for format in ["parquet", "orc", "avro"] {
        empty_files_and_empty_batches_in(format);
    }
}

fn empty_files_and_empty_batches_in(format: &str) {
    let fields = vec![field(0, "a", "INT"), field(1, "s", "STRING")];
    let empty = Case::new(fields.clone());
    let bytes = empty.round_trip(format, &CoreOptions::default());
    assert!(!bytes.is_empty());
    let empty_batch = Case::new(fields)
        .batch(vec![
            Arc::new(Int32Array::from(Vec::<i32>::new())),
            Arc::new(StringArray::from(Vec::<&str>::new())),
        ])
        .batch(vec![
            Arc::new(Int32Array::from(vec![1])),
            Arc::new(StringArray::from(vec!["x"])),
        ])
        .batch(vec![
            Arc::new(Int32Array::from(Vec::<i32>::new())),
            Arc::new(StringArray::from(Vec::<&str>::new())),
        ]);
    empty_batch.round_trip(format, &CoreOptions::default());
}

fn many_rows_case(batches: usize, rows: usize) -> Case {
    let fields = vec![
        field(0, "k", "BIGINT NOT NULL"),
        field(1, "s", "STRING"),
        field(2, "arr", "ARRAY<INT>"),
    ];
    let mut case = Case::new(fields);
    for b in 0..batches {
        let base = (b * rows) as i64;
        let k = Int64Array::from_iter_values(base..base + rows as i64);
        let s = StringArray::from_iter(
            (0..rows).map(|i| (i % 7 != 0).then(|| format!("value-{}-{}", b, i * 7919 % 1000))),
        );
        let arr = ListArray::from_iter_primitive::<Int32Type, _, _>(
            (0..rows)
                .map(|i| (i % 5 != 0).then(|| (0..(i % 4) as i32).map(Some).collect::<Vec<_>>())),
        );
        case = case.batch(vec![Arc::new(k), Arc::new(s), Arc::new(arr)]);
    }
    case
}

#[test]
fn parquet_many_batches_make_many_row_groups() {
    let case = many_rows_case(12, 5000);
    let options = opts(&[("parquet.block.size", "64kb"), ("parquet.page.size", "8kb")]);
    let bytes = case.round_trip("parquet", &options);
    let reader = SerializedFileReader::new(Bytes::from(bytes)).unwrap();
    let groups = reader.metadata().num_row_groups();
    assert!(groups > 3, "{groups} row groups");
    let total: i64 = reader
        .metadata()
        .row_groups()
        .iter()
        .map(|g| g.num_rows())
        .sum();
    assert_eq!(total, 60_000);
}

#[test]
fn parquet_one_large_batch_is_split_into_row_groups() {
    let case = many_rows_case(1, 50_000);
    let options = opts(&[("file.block-size", "100kb")]);
    let bytes = case.round_trip("parquet", &options);
    let reader = SerializedFileReader::new(Bytes::from(bytes)).unwrap();
    assert!(reader.metadata().num_row_groups() > 2);
}

#[test]
fn orc_many_batches_make_many_stripes() {
    let fields = vec![field(0, "k", "BIGINT NOT NULL"), field(1, "s", "STRING")];
    let mut case = Case::new(fields);
    for b in 0..10i64 {
        case = case.batch(vec![
            Arc::new(Int64Array::from_iter_values(b * 3000..(b + 1) * 3000)),
            Arc::new(StringArray::from_iter(
                (0..3000).map(|i| (i % 3 != 0).then(|| format!("s{i}"))),
            )),
        ]);
    }
    let bytes = case.round_trip("orc", &opts(&[("orc.stripe.size", "64kb")]));
    let reader = orc_rust::reader::metadata::read_metadata(&mut Bytes::from(bytes)).unwrap();
    assert!(
        reader.stripe_metadatas().len() > 3,
        "{} stripes",
        reader.stripe_metadatas().len()
    );
}

#[test]
fn avro_many_batches_make_many_blocks() {
    let case = many_rows_case(5, 4000);
    let bytes = case.round_trip("avro", &CoreOptions::default());
    assert!(bytes.len() > 64_000);
}

#[test]
fn codecs_round_trip() {
    for (format, compression) in [
        ("parquet", "none"),
        ("parquet", "snappy"),
        ("parquet", "gzip"),
        ("parquet", "lz4"),
        ("parquet", "lz4_raw"),
        ("parquet", "brotli"),
        ("parquet", "ZSTD"),
        ("orc", "none"),
        ("orc", "zlib"),
        ("orc", "snappy"),
        ("orc", "lz4"),
        ("orc", "zstd"),
        ("avro", "null"),
        ("avro", "deflate"),
        ("avro", "snappy"),
        ("avro", "zstd"),
        ("avro", "bzip2"),
        ("avro", "xz"),
    ] {
        codec_round_trip(format, compression);
    }
}

fn codec_round_trip(format: &str, compression: &str) {
    let case = many_rows_case(2, 3000);
    let case = if format == "orc" {
        Case {
            fields: case.fields[..2].to_vec(),
            batches: case
                .batches
                .iter()
                .map(|b| b.project(&[0, 1]).unwrap())
                .collect(),
        }
    } else {
        case
    };
    case.round_trip(format, &opts(&[("file.compression", compression)]));
}

#[test]
fn unknown_codecs_are_unsupported() {
    let fields = vec![field(0, "a", "INT")];
    for (format, codec) in [("parquet", "lzo"), ("orc", "lzo"), ("avro", "lz4")] {
        let err = DataFileEncoder::try_new(&fields, format, &opts(&[("file.compression", codec)]))
            .unwrap_err();
        assert!(
            matches!(err, Error::Unsupported { .. }),
            "{format} {codec}: {err}"
        );
    }
}

#[test]
fn parquet_schema_follows_java() {
    let fields = vec![
        field(0, "id", "INT NOT NULL"),
        field(1, "d1", "DECIMAL(1, 0)"),
        field(2, "d10", "DECIMAL(10, 2)"),
        field(3, "d20", "DECIMAL(20, 0)"),
        field(4, "ts0", "TIMESTAMP(0)"),
        field(5, "ts6", "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
        field(6, "tm", "TIME"),
        field(7, "arr", "ARRAY<ARRAY<INT>>"),
        field(8, "m", "MAP<STRING, INT>"),
        DataField::new(
            9,
            "r",
            DataType::not_null(TypeKind::Row(vec![field(20, "x", "ARRAY<STRING>")])),
        ),
        field(10, "ms", "MULTISET<INT>"),
        field(11, "v", "VARIANT"),
    ];
    let schema = super::parquet::parquet_schema(&fields).unwrap();
    let mut text = Vec::new();
    ::parquet::schema::printer::print_schema(&mut text, &schema);
    let text = String::from_utf8(text).unwrap();
    let expected = "\
message paimon_schema {
  REQUIRED INT32 id [0];
  OPTIONAL INT32 d1 [1] (DECIMAL(1,0));
  OPTIONAL INT64 d10 [2] (DECIMAL(10,2));
  OPTIONAL FIXED_LEN_BYTE_ARRAY (9) d20 [3] (DECIMAL(20,0));
  OPTIONAL INT64 ts0 [4] (TIMESTAMP(MILLIS,false));
  OPTIONAL INT64 ts6 [5] (TIMESTAMP(MICROS,true));
  OPTIONAL INT32 tm [6] (TIME(MILLIS,true));
  OPTIONAL group arr [7] (LIST) {
    REPEATED group list {
      OPTIONAL group element [536878080] (LIST) {
        REPEATED group list {
          OPTIONAL INT32 element [536878081];
        }
      }
    }
  }
  OPTIONAL group m [8] (MAP) {
    REPEATED group key_value {
      REQUIRED BYTE_ARRAY key [536862718] (STRING);
      OPTIONAL INT32 value [536879104];
    }
  }
  REQUIRED group r [9] {
    OPTIONAL group x [20] (LIST) {
      REPEATED group list {
        OPTIONAL BYTE_ARRAY element [536891392] (STRING);
      }
    }
  }
  OPTIONAL group ms [10] (MAP) {
    REPEATED group key_value {
      REQUIRED INT32 key [536860670];
      REQUIRED INT32 value [536881152];
    }
  }
  OPTIONAL group v [11] {
    REQUIRED BYTE_ARRAY value [0];
    REQUIRED BYTE_ARRAY metadata [1];
  }
}
";
    assert_eq!(text, expected);
}

#[test]
fn structured_field_ids_wrap_like_java() {
    // Java: Integer.MAX_VALUE / 4 + id * 1024 + depth, in 32-bit arithmetic.
    assert_eq!(array_element_field_id(7, 1), 536_870_911 + 7 * 1024 + 1);
    assert_eq!(map_key_field_id(7, 1), 536_870_911 - 7 * 1024 - 1);
    let system = 2_147_483_646; // _SEQUENCE_NUMBER
    assert_eq!(
        array_element_field_id(system, 1),
        536_870_911_i32
            .wrapping_add(system.wrapping_mul(1024))
            .wrapping_add(1)
    );
}

#[test]
fn parquet_footer_has_no_key_value_metadata_and_honours_options() {
    let case = many_rows_case(1, 100);
    let options = opts(&[
        ("file.compression", "snappy"),
        ("parquet.enable.dictionary", "false"),
        ("parquet.writer.version", "v2"),
    ]);
    let bytes = case.encode("parquet", &options);
    let reader = SerializedFileReader::new(Bytes::from(bytes)).unwrap();
    let meta = reader.metadata();
    assert!(meta.file_metadata().key_value_metadata().is_none());
    assert_eq!(meta.file_metadata().schema().name(), "paimon_schema");
    let column = meta.row_group(0).column(1);
    assert_eq!(column.compression(), ::parquet::basic::Compression::SNAPPY);
    assert!(column.dictionary_page_offset().is_none());

    let bytes = case.encode("parquet", &CoreOptions::default());
    let reader = SerializedFileReader::new(Bytes::from(bytes)).unwrap();
    let column = reader.metadata().row_group(0).column(1);
    assert!(matches!(
        column.compression(),
        ::parquet::basic::Compression::ZSTD(_)
    ));
    assert!(column.dictionary_page_offset().is_some());
}

#[test]
fn avro_schema_follows_java() {
    let fields = vec![
        field(0, "id", "INT NOT NULL"),
        field(1, "ts", "TIMESTAMP(6)"),
        field(2, "dec", "DECIMAL(10, 2)"),
        DataField::new(
            3,
            "r",
            DataType::nullable(TypeKind::Row(vec![field(10, "x", "INT")])),
        ),
        field(4, "m", "MAP<INT, STRING>"),
        field(5, "ms", "MULTISET<STRING>"),
    ];
    let json = avro::avro_schema_json(&fields, &CoreOptions::default()).unwrap();
    let expected = r#"{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"id","type":"int"},{"name":"ts","type":["null",{"type":"long","logicalType":"timestamp-micros"}],"default":null},{"name":"dec","type":["null",{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}],"default":null},{"name":"r","type":["null",{"type":"record","name":"record_r","fields":[{"name":"x","type":["null","int"],"default":null}]}],"default":null},{"name":"m","type":["null",{"type":"array","items":{"type":"record","name":"record_m","fields":[{"name":"key","type":["null","int"]},{"name":"value","type":["null","string"],"default":null}]},"logicalType":"map"}],"default":null},{"name":"ms","type":["null",{"type":"map","values":["null","int"]}],"default":null}]}"#;
    assert_eq!(json, expected);
}

#[test]
fn avro_rejects_what_java_rejects() {
    for sql in ["VARIANT", "TIMESTAMP(9)", "TIME(6)", "ARRAY<TIMESTAMP(7)>"] {
        let fields = vec![field(0, "a", sql)];
        let err = DataFileEncoder::try_new(&fields, "avro", &CoreOptions::default()).unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{sql}: {err}");
    }
}

#[test]
fn orc_rejects_what_java_has_no_orc_type_for() {
    for sql in [
        "VARIANT",
        "VECTOR<FLOAT, 2>",
        "ARRAY<VARIANT>",
        "MAP<STRING, VECTOR<INT, 3>>",
        "ROW<a INT, v VARIANT>",
    ] {
        let fields = vec![field(0, "a", sql)];
        let err = DataFileEncoder::try_new(&fields, "orc", &CoreOptions::default()).unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{sql}: {err}");
    }
}

#[test]
fn blob_columns_are_plain_binary_in_data_files() {
    // Managed BLOBs and inline descriptors of primary-key tables: the column holds serialized
    // descriptors, written as Java writes a BLOB column (Parquet BYTE_ARRAY without logical
    // type, ORC binary, Avro bytes).
    let fields = vec![field(0, "b", "BLOB")];
    let case = Case::new(fields).batch(vec![Arc::new(arrow_array::LargeBinaryArray::from(vec![
        Some(&b"\x02descriptor"[..]),
        None,
        Some(&b""[..]),
    ]))]);
    for format in ["parquet", "orc", "avro"] {
        let bytes = case.round_trip(format, &CoreOptions::default());
        if format == "parquet" {
            let reader = SerializedFileReader::new(Bytes::from(bytes)).unwrap();
            let col = reader.metadata().file_metadata().schema_descr().column(0);
            assert_eq!(col.physical_type(), ::parquet::basic::Type::BYTE_ARRAY);
            assert_eq!(col.logical_type_ref(), None);
        }
    }
}

#[test]
fn orc_footer_carries_java_ids_and_char_kinds() {
    let fields = vec![
        field(5, "c", "CHAR(3)"),
        field(6, "vc", "VARCHAR(10)"),
        field(7, "s", "STRING"),
        field(1_073_741_830, "_KEY_k", "INT NOT NULL"),
    ];
    let case = Case::new(fields).batch(vec![
        Arc::new(StringArray::from(vec!["abc"])),
        Arc::new(StringArray::from(vec!["x"])),
        Arc::new(StringArray::from(vec!["y"])),
        Arc::new(Int32Array::from(vec![1])),
    ]);
    for compression in ["zstd", "none"] {
        let bytes = case.round_trip("orc", &opts(&[("file.compression", compression)]));
        let meta = orc_rust::reader::metadata::read_metadata(&mut Bytes::from(bytes)).unwrap();
        let root = meta.root_data_type();
        let kinds: Vec<String> = root
            .children()
            .iter()
            .map(|c| format!("{}={:?}", c.name(), c.data_type()))
            .collect();
        let text = kinds.join(" ");
        assert!(text.contains("Char"), "{text}");
        assert!(text.contains("Varchar"), "{text}");
    }
}

#[test]
fn null_in_not_null_column_is_an_error() {
    let fields = vec![field(0, "a", "INT NOT NULL")];
    let mut encoder =
        DataFileEncoder::try_new(&fields, "parquet", &CoreOptions::default()).unwrap();
    let schema = Arc::new(arrow_schema::Schema::new(vec![Field::new(
        "a",
        ArrowType::Int32,
        true,
    )]));
    let batch = RecordBatch::try_new(
        schema,
        vec![Arc::new(Int32Array::from(vec![Some(1), None]))],
    )
    .unwrap();
    let err = encoder.write(&batch).unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
}

#[test]
fn other_arrow_types_are_converted() {
    // A LargeUtf8 / Int16 column is converted to the expected Utf8 / Int32.
    let fields = vec![field(0, "s", "STRING"), field(1, "i", "INT")];
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        Field::new("s", ArrowType::LargeUtf8, true),
        Field::new("i", ArrowType::Int16, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(arrow_array::LargeStringArray::from(vec!["a", "b"])),
            Arc::new(Int16Array::from(vec![1, 2])),
        ],
    )
    .unwrap();
    let mut encoder =
        DataFileEncoder::try_new(&fields, "parquet", &CoreOptions::default()).unwrap();
    encoder.write(&batch).unwrap();
    let decoded = decode(&encoder.finish().unwrap(), "parquet", &fields);
    assert_eq!(
        decoded.column(0).as_ref(),
        &StringArray::from(vec!["a", "b"]) as &dyn Array
    );
}

#[test]
fn estimated_size_grows_and_bounds_the_file() {
    for format in ["parquet", "orc", "avro"] {
        let case = many_rows_case(4, 2000);
        let case = Case {
            fields: case.fields[..2].to_vec(),
            batches: case
                .batches
                .iter()
                .map(|b| b.project(&[0, 1]).unwrap())
                .collect(),
        };
        let mut encoder =
            DataFileEncoder::try_new(&case.fields, format, &CoreOptions::default()).unwrap();
        let first = encoder.estimated_size_bytes();
        for b in &case.batches {
            encoder.write(b).unwrap();
        }
        let last = encoder.estimated_size_bytes();
        assert!(last > first, "{format}: {last} after {first}");
        let size = encoder.finish().unwrap().len() as u64;
        assert!(
            last * 2 > size && last < size * 20,
            "{format}: estimate {last}, file {size}"
        );
    }
}

#[test]
fn decimal_bytes_are_minimal_twos_complement() {
    for (v, expected) in [
        (0i128, vec![0u8]),
        (127, vec![0x7f]),
        (128, vec![0x00, 0x80]),
        (-1, vec![0xff]),
        (-128, vec![0x80]),
        (-129, vec![0xff, 0x7f]),
        (65_535, vec![0x00, 0xff, 0xff]),
    ] {
        assert_eq!(avro::test_minimal_twos_complement(v), expected, "{v}");
    }
}

#[test]
fn sync_marker_is_settable_and_deterministic() {
    let case = many_rows_case(1, 10);
    let a = case.encode("avro", &CoreOptions::default());
    let b = case.encode("avro", &CoreOptions::default());
    assert_eq!(a, b);
    let mut encoder = DataFileEncoder::try_new(&case.fields, "avro", &CoreOptions::default())
        .unwrap()
        .with_sync_marker([7; 16]);
    encoder.write(&case.batches[0]).unwrap();
    let c = encoder.finish().unwrap();
    assert!(c.ends_with(&[7; 16]));
    let decoded = decode(&c, "avro", &case.fields);
    assert_eq!(decoded.num_rows(), 10);
}

#[test]
fn orc_writes_the_second_before_the_epoch_as_the_cpp_writer_does() {
    // ORC-763: (-1 s, fraction > 1 ms) has no encoding with a positive nanosecond field; it
    // is written as (0 s, negative nanos), as pyarrow writes it, and reads back the same.
    // Neighbours: -1 ms, -999 ms, -1001 ms (second -2: the usual ORC-763 adjustment), 0.
    let fields = vec![
        field(0, "ms", "TIMESTAMP(3)"),
        field(1, "us", "TIMESTAMP(6)"),
    ];
    let ms: ArrayRef = Arc::new(TimestampMillisecondArray::from(vec![
        -1, -999, -1001, 0, -1500,
    ]));
    let us: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![
        -1, -999_999, -1_000_001, 1, -1_500_000,
    ]));
    let case = Case::new(fields).batch(vec![ms.clone(), us.clone()]);
    let bytes = case.encode("orc", &CoreOptions::default());
    let decoded = decode(&bytes, "orc", &case.fields);
    assert_eq!(decoded.column(0).as_ref(), ms.as_ref());
    assert_eq!(decoded.column(1).as_ref(), us.as_ref());
}

/// Writes sample files for `conformance/check_encoded_files.py` (pypaimon and pyarrow read them):
/// `<dir>/<name>.<format>`, `<name>.fields.json` (Paimon fields), `<name>.arrow` (the rows, IPC).
#[test]
#[ignore = "writes files for the Python check"]
fn dump_sample_files() {
    let dir = std::env::temp_dir().join("paimon-encoded-files");
    std::fs::create_dir_all(&dir).unwrap();
    let int96 = {
        let fields = vec![
            field(0, "ts9", "TIMESTAMP(9)"),
            field(1, "ltz9", "TIMESTAMP(9) WITH LOCAL TIME ZONE"),
        ];
        let ns = vec![-1i64, 0, 1_700_000_000_123_456_789];
        Case::new(fields).batch(vec![
            Arc::new(TimestampNanosecondArray::new(
                ns.clone().into(),
                nulls(&[true, false, true]),
            )),
            Arc::new(TimestampNanosecondArray::new(ns.into(), None).with_timezone("UTC")),
        ])
    };
    let nested = nested_case();
    let mut cases = vec![
        (
            "primitives".to_string(),
            primitive_case(false),
            vec!["parquet", "avro"],
        ),
        (
            "primitives_orc".to_string(),
            primitive_case(true),
            vec!["orc"],
        ),
        ("int96".to_string(), int96, vec!["parquet"]),
        (
            "many".to_string(),
            many_rows_case(3, 20_000),
            vec!["parquet", "avro"],
        ),
    ];
    for (i, f) in nested.fields.iter().enumerate() {
        let one = Case {
            fields: vec![f.clone()],
            batches: nested
                .batches
                .iter()
                .map(|b| b.project(&[i]).unwrap())
                .collect(),
        };
        // VECTOR: Java has no ORC type for it.
        let formats = if f.name == "vec" {
            vec!["parquet", "avro"]
        } else {
            vec!["parquet", "avro", "orc"]
        };
        cases.push((format!("nested_{}", f.name), one, formats));
    }
    cases.push(("nested".to_string(), nested, vec!["parquet", "avro"]));
    cases.push(("orc_nested".to_string(), orc_nested_case(), vec!["orc"]));
    let many = many_rows_case(3, 20_000);
    for codec in ["none", "zlib", "snappy", "lz4", "zstd"] {
        let two = Case {
            fields: many.fields[..2].to_vec(),
            batches: many
                .batches
                .iter()
                .map(|b| b.project(&[0, 1]).unwrap())
                .collect(),
        };
        cases.push((format!("many_orc_{codec}"), two, vec!["orc"]));
    }
    for (name, case, formats) in cases {
        for format in formats {
            let codec = name.strip_prefix("many_orc_").unwrap_or("zstd");
            // Nested ORC rows over several stripes, NULLs first appearing in a later one.
            let stripe_size = if name == "orc_nested" { "4kb" } else { "256kb" };
            let options = opts(&[
                ("parquet.block.size", "256kb"),
                ("orc.stripe.size", stripe_size),
                ("file.compression", codec),
            ]);
            let bytes = case.round_trip(format, &options);
            std::fs::write(dir.join(format!("{name}.{format}")), bytes).unwrap();
        }
        let fields: Vec<_> = case.fields.iter().map(DataField::to_json).collect();
        std::fs::write(
            dir.join(format!("{name}.fields.json")),
            serde_json::to_string_pretty(&fields).unwrap(),
        )
        .unwrap();
        let schema = paimon_to_arrow_schema(&case.fields).unwrap();
        let mut ipc = Vec::new();
        let mut w = arrow_ipc::writer::FileWriter::try_new(&mut ipc, &schema).unwrap();
        for b in &case.batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
        drop(w);
        std::fs::write(dir.join(format!("{name}.arrow")), ipc).unwrap();
        let rows = crate::canonical::batches_rows(&case.batches).unwrap();
        let lines: String = rows
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        std::fs::write(dir.join(format!("{name}.rows.jsonl")), lines).unwrap();
    }
}

#[test]
fn orc_pads_char_and_cuts_varchar_like_java() {
    let fields = vec![field(0, "c", "CHAR(3)"), field(1, "vc", "VARCHAR(2)")];
    let case = Case::new(fields.clone()).batch(vec![
        Arc::new(StringArray::from(vec![
            Some("a"),
            None,
            Some("héllo"),
            Some("abc"),
        ])),
        Arc::new(StringArray::from(vec![
            Some("abc"),
            Some("x"),
            None,
            Some("éé"),
        ])),
    ]);
    let bytes = case.encode("orc", &CoreOptions::default());
    assert_eq!(
        orc_stored(&bytes).column(0).as_ref(),
        &StringArray::from(vec![Some("a  "), None, Some("hél"), Some("abc")]) as &dyn Array
    );
    let decoded = decode(&bytes, "orc", &fields);
    assert_eq!(
        decoded.column(0).as_ref(),
        &StringArray::from(vec![Some("a"), None, Some("hél"), Some("abc")]) as &dyn Array
    );
    assert_eq!(
        decoded.column(1).as_ref(),
        &StringArray::from(vec![Some("ab"), Some("x"), None, Some("éé")]) as &dyn Array
    );
}

/// Rough speed against the parquet crate's `ArrowWriter` on the same rows (run with
/// `--release -- --ignored --nocapture`).
#[test]
#[ignore = "timing, not a check"]
fn encode_speed_against_arrow_writer() {
    let case = many_rows_case(100, 10_000);
    let options = CoreOptions::default();
    let schema = paimon_to_arrow_schema(&case.fields).unwrap();
    let two = Case {
        fields: case.fields[..2].to_vec(),
        batches: case
            .batches
            .iter()
            .map(|b| b.project(&[0, 1]).unwrap())
            .collect(),
    };
    for round in 0..3 {
        for (format, case) in [
            ("parquet", &case),
            ("avro", &case),
            ("orc", &two),
            ("parquet", &two),
        ] {
            let start = std::time::Instant::now();
            let bytes = case.encode(format, &options);
            println!(
                "round {round} {format} ({} columns): {:?} for 1M rows, {} bytes",
                case.fields.len(),
                start.elapsed(),
                bytes.len()
            );
        }
        let props = ::parquet::file::properties::WriterProperties::builder()
            .set_compression(::parquet::basic::Compression::ZSTD(Default::default()))
            .build();
        let start = std::time::Instant::now();
        let mut w =
            ::parquet::arrow::ArrowWriter::try_new(Vec::new(), Arc::clone(&schema), Some(props))
                .unwrap();
        for b in &case.batches {
            w.write(b).unwrap();
        }
        let bytes = w.into_inner().unwrap();
        println!(
            "round {round} ArrowWriter: {:?} for 1M rows, {} bytes",
            start.elapsed(),
            bytes.len()
        );
    }
}

#[test]
fn every_decimal_precision_round_trips() {
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for p in 1..=38u8 {
        let s = (p / 3) as i8;
        fields.push(field(
            i32::from(p),
            &format!("d{p}"),
            &format!("DECIMAL({p}, {s})"),
        ));
        let max = 10i128.pow(u32::from(p)) - 1;
        let values = vec![
            Some(max),
            Some(-max),
            None,
            Some(0),
            Some(-1),
            Some(max / 7),
        ];
        columns.push(Arc::new(
            Decimal128Array::from(values)
                .with_precision_and_scale(p, s)
                .unwrap(),
        ));
    }
    let case = Case::new(fields).batch(columns);
    for format in ["parquet", "avro"] {
        case.round_trip(format, &CoreOptions::default());
    }
}

#[test]
fn encoders_can_move_between_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<DataFileEncoder>();
}

#[test]
fn avro_row_name_mapping_renames_records() {
    let fields = vec![DataField::new(
        0,
        "r",
        DataType::nullable(TypeKind::Row(vec![field(1, "x", "INT")])),
    )];
    let options = opts(&[(
        "avro.row-name-mapping",
        "org.apache.paimon.avro.generated.record:KeyValue,KeyValue_r:Inner",
    )]);
    let json = avro::avro_schema_json(&fields, &options).unwrap();
    assert!(
        json.starts_with(r#"{"type":"record","name":"KeyValue","fields""#),
        "{json}"
    );
    assert!(json.contains(r#""name":"Inner""#), "{json}");
}

/// A nullable `ROW` of `fields`.
fn row(fields: Vec<DataField>) -> DataType {
    DataType::nullable(TypeKind::Row(fields))
}

#[test]
fn orc_nested_round_trip() {
    // The nested columns of the other formats' case, VECTOR left out.
    let case = nested_case();
    let keep: Vec<usize> = (0..case.fields.len())
        .filter(|&i| case.fields[i].name != "vec")
        .collect();
    let case = Case {
        fields: keep.iter().map(|&i| case.fields[i].clone()).collect(),
        batches: case
            .batches
            .iter()
            .map(|b| b.project(&keep).unwrap())
            .collect(),
    };
    for compression in ["zstd", "none"] {
        case.round_trip("orc", &opts(&[("file.compression", compression)]));
    }
}

/// Lists of rows, maps with row values, rows of lists of maps, MULTISET, decimals, timestamps,
/// TIME, CHAR and VARCHAR inside nested types, with NULLs at every level and empty lists and
/// maps; the first rows hold no NULL (PRESENT streams start in the middle of a stripe).
fn orc_nested_case() -> Case {
    let fields = vec![
        field(0, "id", "INT NOT NULL"),
        field(1, "tags", "ARRAY<STRING>"),
        DataField::new(
            2,
            "points",
            DataType::nullable(TypeKind::Array(Box::new(row(vec![
                field(20, "x", "DECIMAL(10, 2)"),
                field(21, "y", "TIMESTAMP(6)"),
                field(22, "c", "CHAR(3)"),
            ])))),
        ),
        DataField::new(
            3,
            "attrs",
            DataType::nullable(TypeKind::Map(
                Box::new(t("STRING NOT NULL")),
                Box::new(row(vec![
                    field(30, "v", "INT"),
                    field(31, "d", "DECIMAL(38, 10)"),
                ])),
            )),
        ),
        DataField::new(
            4,
            "deep",
            row(vec![
                field(40, "a", "ARRAY<MAP<INT NOT NULL, VARCHAR(2)>>"),
                field(41, "t", "TIME(3)"),
                DataField::new(
                    42,
                    "b",
                    row(vec![
                        field(43, "z", "BIGINT"),
                        field(44, "ltz", "TIMESTAMP_LTZ(3)"),
                    ]),
                ),
            ]),
        ),
        field(5, "ms", "MULTISET<VARCHAR(3)>"),
        field(6, "nums", "ARRAY<ARRAY<DECIMAL(5, 2) NOT NULL>>"),
        DataField::new(
            7,
            "misc",
            row(vec![
                field(70, "b", "BYTES"),
                field(71, "ti", "TINYINT"),
                field(72, "si", "SMALLINT"),
                field(73, "f", "FLOAT"),
                field(74, "d", "DOUBLE"),
                field(75, "dt", "DATE"),
                field(76, "bo", "BOOLEAN"),
                field(77, "ts9", "TIMESTAMP(9)"),
            ]),
        ),
    ];
    let full = serde_json::json!({
        "tags": ["a", "b"],
        "points": [{"x": "1.50", "y": "2024-01-02T03:04:05.123456", "c": "abc"}],
        "attrs": [["k", {"v": 1, "d": "1234567890123456789.0123456789"}]],
        "deep": {"a": [[[1, "xy"]]], "t": "12:34:56.789", "b": {"z": 5, "ltz": "2024-01-01T00:00:00.001Z"}},
        "ms": [["x", 2]],
        "nums": [["1.25", "-3.00"]],
        "misc": {"b": "00ff", "ti": -128, "si": 32767, "f": 1.5, "d": -2.25, "dt": "1969-12-31", "bo": true, "ts9": "1999-12-31T23:59:59.123456789"},
    });
    let patterns = [
        serde_json::json!({}),
        serde_json::json!({
            "tags": [],
            "points": [],
            "attrs": [],
            "deep": {"a": [], "t": null, "b": null},
            "ms": [],
            "nums": [[]],
            "misc": {},
        }),
        serde_json::json!({
            "tags": [null, "c"],
            "points": [null, {"x": null, "y": null, "c": null}, {"x": "-0.01", "y": "1900-01-01T00:00:00", "c": "é z"}],
            "attrs": [["n", null], ["m", {"v": null, "d": null}], ["", {"v": -1, "d": "-0.0000000001"}]],
            "deep": {"a": [null, [], [[2, null], [3, "z"]]], "t": "00:00:00", "b": {"z": null, "ltz": null}},
            "ms": [["y", 1], ["z", 3]],
            "nums": [null, ["0.00"], []],
            "misc": {"b": "", "ti": null, "si": -1, "f": null, "d": null, "dt": null, "bo": false, "ts9": null},
        }),
        full.clone(),
        serde_json::json!({"tags": ["x"], "deep": null, "misc": null}),
    ];
    let schema = paimon_to_arrow_schema(&fields).unwrap();
    let rows = |from: usize, to: usize| -> Vec<serde_json::Map<String, serde_json::Value>> {
        (from..to)
            .map(|i| {
                // 40 rows without NULL, then the patterns in turn.
                let pattern = if i < 40 {
                    &full
                } else {
                    &patterns[i % patterns.len()]
                };
                let mut row = pattern.as_object().unwrap().clone();
                row.insert("id".into(), serde_json::json!(i));
                row
            })
            .collect()
    };
    let mut case = Case::new(fields);
    for (from, to) in [(0, 25), (25, 30), (30, 30), (30, 200), (200, 401)] {
        case.batches
            .push(crate::canonical::parse::batch_from_rows(&rows(from, to), &schema).unwrap());
    }
    case
}

#[test]
fn orc_nested_rows_round_trip_over_many_stripes() {
    let case = orc_nested_case();
    // One stripe, then small stripes and small orc-rust batches (sliced arrays).
    for options in [
        opts(&[]),
        opts(&[("orc.stripe.size", "2kb"), ("write.batch-size", "7")]),
    ] {
        let bytes = case.round_trip("orc", &options);
        let meta = orc_rust::reader::metadata::read_metadata(&mut Bytes::from(bytes)).unwrap();
        assert_eq!(meta.number_of_rows(), 401);
    }
    let bytes = case.encode("orc", &opts(&[("orc.stripe.size", "2kb")]));
    let meta = orc_rust::reader::metadata::read_metadata(&mut Bytes::from(bytes)).unwrap();
    assert!(meta.stripe_metadatas().len() > 3);
}

#[test]
fn orc_nested_values_under_nulls_are_not_written() {
    // Arrow lets a NULL list own entries and a NULL row hold field values; ORC has no entry
    // for them (a NULL list has no length, a NULL row no field values).
    let fields = vec![
        field(0, "l", "ARRAY<INT>"),
        DataField::new(
            1,
            "r",
            row(vec![
                field(10, "x", "INT"),
                field(11, "s", "STRING NOT NULL"),
            ]),
        ),
        field(2, "m", "MAP<STRING, INT>"),
    ];
    let schema = paimon_to_arrow_schema(&fields).unwrap();
    let item = match schema.field(0).data_type() {
        ArrowType::List(f) => Arc::clone(f),
        _ => unreachable!(),
    };
    let list = ListArray::new(
        item,
        arrow_buffer::OffsetBuffer::new(vec![0, 2, 4, 4, 6, 7].into()),
        Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5, 6, 7])),
        nulls(&[true, false, true, true, false]),
    );
    let row_fields = match schema.field(1).data_type() {
        ArrowType::Struct(f) => f.clone(),
        _ => unreachable!(),
    };
    let rows = StructArray::new(
        row_fields,
        vec![
            Arc::new(Int32Array::from(vec![
                Some(1),
                Some(99),
                None,
                Some(4),
                Some(5),
            ])),
            Arc::new(StringArray::from(vec!["a", "garbage", "c", "d", "e"])),
        ],
        nulls(&[true, false, true, true, false]),
    );
    let (entries_field, sorted) = match schema.field(2).data_type() {
        ArrowType::Map(f, sorted) => (Arc::clone(f), *sorted),
        _ => unreachable!(),
    };
    let kv = match entries_field.data_type() {
        ArrowType::Struct(f) => f.clone(),
        _ => unreachable!(),
    };
    let entries = StructArray::new(
        kv,
        vec![
            Arc::new(StringArray::from(vec!["a", "b", "c", "d", "e"])),
            Arc::new(Int32Array::from(vec![
                Some(1),
                None,
                Some(3),
                Some(4),
                Some(5),
            ])),
        ],
        None,
    );
    let map = arrow_array::MapArray::new(
        entries_field,
        arrow_buffer::OffsetBuffer::new(vec![0, 1, 3, 3, 4, 5].into()),
        entries,
        nulls(&[true, false, true, false, true]),
        sorted,
    );
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![Arc::new(list), Arc::new(rows), Arc::new(map)],
    )
    .unwrap();
    // Whole, and sliced (offsets not starting at 0).
    for batch in [batch.clone(), batch.slice(1, 4)] {
        let case = Case {
            fields: fields.clone(),
            batches: vec![batch.clone(), batch],
        };
        case.round_trip("orc", &CoreOptions::default());
    }
}

#[test]
fn orc_nested_types_carry_java_ids_and_char_kinds() {
    let fields = vec![
        field(5, "a", "ARRAY<ARRAY<CHAR(2)>>"),
        field(6, "m", "MAP<VARCHAR(4), ARRAY<INT>>"),
        DataField::new(
            7,
            "r",
            row(vec![field(8, "x", "INT"), field(9, "l", "ARRAY<STRING>")]),
        ),
        field(10, "ms", "MULTISET<STRING>"),
        DataField::new(
            11,
            "lr",
            DataType::nullable(TypeKind::Array(Box::new(row(vec![field(
                12, "k", "BIGINT",
            )])))),
        ),
    ];
    let case = Case::new(fields.clone());
    let bytes = case.round_trip("orc", &CoreOptions::default());
    let (list, map, strukt, int, long, string, varchar, char_) = (10, 11, 12, 3, 4, 7, 16, 17);
    let id = |v: i32| Some(v.to_string());
    let expected = vec![
        (strukt, None, None),
        (list, None, id(5)),
        (list, None, id(array_element_field_id(5, 1))),
        (char_, Some(2), id(array_element_field_id(5, 2))),
        (map, None, id(6)),
        (varchar, Some(4), id(map_key_field_id(6, 1))),
        (list, None, id(map_value_field_id(6, 1))),
        (int, None, id(array_element_field_id(6, 2))),
        (strukt, None, id(7)),
        (int, None, id(8)),
        (list, None, id(9)),
        (string, None, id(array_element_field_id(9, 1))),
        (map, None, id(10)),
        (string, None, id(map_key_field_id(10, 1))),
        (int, None, id(map_value_field_id(10, 1))),
        (list, None, id(11)),
        (strukt, None, id(array_element_field_id(11, 1))),
        (long, None, id(12)),
    ];
    assert_eq!(orc::test_footer_types(&bytes), expected);
}

#[test]
fn orc_pads_char_and_cuts_varchar_inside_nested_types() {
    let fields = vec![
        field(0, "l", "ARRAY<CHAR(3)>"),
        field(1, "m", "MAP<VARCHAR(2), TIME(3)>"),
        DataField::new(2, "r", row(vec![field(20, "v", "VARCHAR(1)")])),
    ];
    let schema = paimon_to_arrow_schema(&fields).unwrap();
    let rows: Vec<_> = [
        serde_json::json!({"l": ["a", null, "héllo"], "m": [["abc", "01:02:03.004"], ["é", null]], "r": {"v": "xyz"}}),
        serde_json::json!({"l": null, "m": null, "r": null}),
        serde_json::json!({"l": [], "m": [], "r": {"v": null}}),
    ]
    .iter()
    .map(|v| v.as_object().unwrap().clone())
    .collect();
    let case = Case::new(fields.clone()).batch(
        crate::canonical::parse::batch_from_rows(&rows, &schema)
            .unwrap()
            .columns()
            .to_vec(),
    );
    let bytes = case.encode("orc", &CoreOptions::default());
    let decoded = decode(&bytes, "orc", &fields);
    let got = crate::canonical::rows(&decoded).unwrap();
    let stored = crate::canonical::rows(&orc_stored(&bytes)).unwrap();
    assert_eq!(stored[0]["l"], serde_json::json!(["a  ", null, "hél"]));
    let expected = vec![
        serde_json::json!({"l": ["a", null, "hél"], "m": [["ab", "01:02:03.004"], ["é", null]], "r": {"v": "x"}}),
        serde_json::json!({"l": null, "m": null, "r": null}),
        serde_json::json!({"l": [], "m": [], "r": {"v": null}}),
    ];
    assert_eq!(got, expected);
}

#[test]
fn orc_varints_of_large_zigzagged_integers_are_unsigned() {
    // A run of 12 equal values is an RLE v2 fixed-delta run: header, the base value as a
    // zigzag varint, delta 0. Zigzagged, SMALLINT 32767, INT 2^30 and BIGINT 2^62 have their
    // type's top bit set; their varints must still be those of the unsigned values (Java and
    // pyarrow decode them in 64 bits).
    let fields = vec![
        field(0, "s", "SMALLINT NOT NULL"),
        field(1, "i", "INT NOT NULL"),
        field(2, "b", "BIGINT NOT NULL"),
    ];
    let case = Case::new(fields).batch(vec![
        Arc::new(Int16Array::from(vec![i16::MAX; 12])),
        Arc::new(Int32Array::from(vec![1 << 30; 12])),
        Arc::new(Int64Array::from(vec![1 << 62; 12])),
    ]);
    let bytes = case.round_trip("orc", &opts(&[("file.compression", "none")]));
    let header = [0xc0, 0x0b];
    let runs: [&[u8]; 3] = [
        &[0xfe, 0xff, 0x03],
        &[0x80, 0x80, 0x80, 0x80, 0x08],
        &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
    ];
    for base in runs {
        let run = [&header[..], base, &[0x00]].concat();
        assert!(
            bytes.windows(run.len()).any(|w| w == run.as_slice()),
            "no run {run:02x?}"
        );
    }
}

/// Bytes taken while a file is encoded, followed by what `finish` returns, are the file that
/// an encoder never taken from gives: for every format, with row groups, stripes and blocks
/// closing between takes.
#[test]
fn bytes_taken_while_encoding_are_the_file_without_takes() {
    let cases = [
        (
            "parquet",
            opts(&[("parquet.block.size", "64kb"), ("parquet.page.size", "8kb")]),
        ),
        ("orc", opts(&[("orc.stripe.size", "64kb")])),
        ("avro", CoreOptions::default()),
    ];
    let case = many_rows_case(12, 5000);
    for (format, options) in cases {
        let whole = case.encode(format, &options);
        let mut encoder = DataFileEncoder::try_new(&case.fields, format, &options).unwrap();
        let mut taken = Vec::new();
        let mut takes = 0;
        for b in &case.batches {
            encoder.write(b).unwrap();
            let laid_out = encoder.laid_out_bytes();
            let estimate = encoder.estimated_size_bytes();
            let part = encoder.take_laid_out().unwrap();
            assert_eq!(part.len(), laid_out, "{format}: laid-out count");
            assert_eq!(
                encoder.laid_out_bytes(),
                0,
                "{format}: nothing left after a take"
            );
            assert_eq!(
                encoder.estimated_size_bytes(),
                estimate,
                "{format}: a take leaves the size estimate unchanged"
            );
            takes += usize::from(!part.is_empty());
            taken.extend_from_slice(&part);
        }
        taken.extend_from_slice(&encoder.finish().unwrap());
        assert!(takes > 3, "{format}: only {takes} non-empty takes");
        assert_eq!(taken.len(), whole.len(), "{format}: file size");
        assert!(
            taken == whole,
            "{format}: bytes differ from the untaken file"
        );
    }
}
