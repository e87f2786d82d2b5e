use std::io::Cursor;
use std::sync::Arc;

use arrow_array::{ArrayRef, Decimal128Array, Int32Array, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::*;
use crate::canonical;

fn schema(fields: Vec<Field>) -> SchemaRef {
    Arc::new(Schema::new(fields))
}

fn simple_schema() -> SchemaRef {
    schema(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("amount", DataType::Decimal128(38, 10), true),
        Field::new("tags", DataType::new_list(DataType::Utf8, true), true),
    ])
}

/// Every row of the input `name` (its format from the extension) as canonical JSON text, one
/// string per row.
fn rows_of(name: &str, bytes: &[u8], schema: &SchemaRef) -> Result<Vec<String>> {
    let format = InputFormat::from_path(name).unwrap();
    let mut out = Vec::new();
    for batch in batches_from_bytes(name, Bytes::copy_from_slice(bytes), format, schema)? {
        for row in canonical::rows(&batch).unwrap() {
            out.push(row.to_string());
        }
    }
    Ok(out)
}

fn err_of(name: &str, bytes: &[u8], schema: &SchemaRef) -> String {
    match rows_of(name, bytes, schema) {
        Ok(rows) => panic!("read {rows:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn formats_by_name_and_extension() {
    for (name, f) in [
        ("arrow", InputFormat::Arrow),
        ("IPC", InputFormat::Arrow),
        ("arrows", InputFormat::Arrow),
        ("parquet", InputFormat::Parquet),
        ("csv", InputFormat::Csv),
        ("jsonl", InputFormat::Jsonl),
        ("ndjson", InputFormat::Jsonl),
        ("json", InputFormat::Jsonl),
    ] {
        assert_eq!(InputFormat::from_name(name), Some(f));
    }
    assert_eq!(InputFormat::from_name("orc"), None);
    assert_eq!(
        InputFormat::from_path("/tmp/x.y/rows.ARROWS"),
        Some(InputFormat::Arrow)
    );
    assert_eq!(InputFormat::from_path("a.ipc"), Some(InputFormat::Arrow));
    assert_eq!(
        InputFormat::from_path("d/a.parquet"),
        Some(InputFormat::Parquet)
    );
    assert_eq!(
        InputFormat::from_path("d\\a.parquet"),
        Some(InputFormat::Parquet)
    );
    assert_eq!(
        InputFormat::from_path("rows.ndjson"),
        Some(InputFormat::Jsonl)
    );
    assert_eq!(
        InputFormat::from_path("rows.json"),
        Some(InputFormat::Jsonl)
    );
    assert_eq!(InputFormat::from_path("rows.csv"), Some(InputFormat::Csv));
    assert_eq!(InputFormat::from_path("rows.txt"), None);
    assert_eq!(InputFormat::from_path("a.csv/rows"), None);
}

#[test]
fn json_lines_read_canonical_and_hand_written_values() {
    let text = concat!(
        "{\"k\": 1, \"name\": \"a\", \"amount\": 1234567890123456789012345678.0123456789, \"tags\": [\"x\"]}\r\n",
        "\n",
        "   \n",
        "{\"name\": \"\", \"k\": \"2\", \"amount\": \"-0.5\"}\n",
        "{\"k\": 3, \"amount\": 12, \"tags\": null, \"name\": null}",
    );
    assert_eq!(
        rows_of("rows.jsonl", text.as_bytes(), &simple_schema()).unwrap(),
        [
            r#"{"k":1,"name":"a","amount":"1234567890123456789012345678.0123456789","tags":["x"]}"#,
            r#"{"k":2,"name":"","amount":"-0.5000000000","tags":null}"#,
            r#"{"k":3,"name":null,"amount":"12.0000000000","tags":null}"#,
        ]
    );
}

#[test]
fn json_numbers_keep_their_digits_where_the_column_is_numeric() {
    let t = schema(vec![
        Field::new("d", DataType::Decimal128(38, 2), true),
        Field::new("f", DataType::Float32, true),
        Field::new("big", DataType::Decimal128(20, 0), true),
        Field::new(
            "r",
            DataType::Struct(
                vec![
                    Field::new("x", DataType::Decimal128(30, 3), true),
                    Field::new("s", DataType::Utf8, true),
                ]
                .into(),
            ),
            true,
        ),
        Field::new(
            "m",
            DataType::Map(
                Arc::new(Field::new(
                    "entries",
                    DataType::Struct(
                        vec![
                            Field::new("key", DataType::Decimal128(25, 1), false),
                            Field::new("value", DataType::Float64, true),
                        ]
                        .into(),
                    ),
                    false,
                )),
                false,
            ),
            true,
        ),
        Field::new("s", DataType::Utf8, true),
    ]);
    let text = concat!(
        r#"{"d": 123456789012345678901234567890.12, "f": 0.1, "big": -99999999999999999999, "#,
        r#""r": {"x": 1234567890123456789012345.678, "s": "1.5e3 \"q\" \\u0000"}, "#,
        r#""m": [[123456789012345678901234.5, 1e-3]], "s": "-1.25"}"#,
        "\n",
        r#"{"m": {"1.5": 2.5}}"#,
    );
    assert_eq!(
        rows_of("n.jsonl", text.as_bytes(), &t).unwrap(),
        [
            r#"{"d":"123456789012345678901234567890.12","f":0.10000000149011612,"big":"-99999999999999999999","r":{"x":"1234567890123456789012345.678","s":"1.5e3 \"q\" \\u0000"},"m":[["123456789012345678901234.5",0.001]],"s":"-1.25"}"#,
            r#"{"d":null,"f":null,"big":null,"r":null,"m":[["1.5",2.5]],"s":null}"#,
        ]
    );
    // A number is still not a string.
    let e = err_of("bad.jsonl", b"{\"s\": 1.5}\n", &t);
    assert!(
        e.contains("line 1") && e.contains("column 's', row 0") && e.contains("1.5"),
        "{e}"
    );
    // A line with a \u0000 escape reads numbers as doubles: a decimal that may have lost
    // digits is refused rather than rounded.
    let e = err_of(
        "nul.jsonl",
        b"{\"s\": \"\\u0000\", \"d\": 1.25}\n{\"s\": \"\\u0000\", \"d\": 123456789012345678.25}\n",
        &t,
    );
    assert!(
        e.contains("line 2") && e.contains("column 'd', row 1") && e.contains("as a string"),
        "{e}"
    );
}

#[test]
fn protected_numbers_are_only_valid_json_numbers() {
    assert_eq!(protect_numbers(r#"{"a": 1, "b": -20}"#), None);
    assert_eq!(
        protect_numbers(r#"{"a":1.5,"b":"2.5","c":[1e3,-0.0]}"#).unwrap(),
        r#"{"a":"\u0000#num:1.5","b":"2.5","c":["\u0000#num:1e3","\u0000#num:-0.0"]}"#
    );
    assert_eq!(
        protect_numbers(r#"{"a":12345678901234567890}"#).unwrap(),
        r#"{"a":"\u0000#num:12345678901234567890"}"#
    );
    // Not numbers: left for serde_json to reject.
    for bad in ["1.2.3", "01.5", "1.", ".5", "1e", "--1", "1e+"] {
        assert!(!is_json_number(bad), "{bad}");
        assert_eq!(protect_numbers(&format!("[{bad}]")), None, "{bad}");
    }
    for good in ["0", "-0", "10", "1.5", "-0.25e-7", "6E+2"] {
        assert!(is_json_number(good), "{good}");
    }
    // A string that looks like the mark needs a \u0000 escape, which turns the rewrite
    // off; an escaped backslash before "u0000" does not.
    assert_eq!(protect_numbers(r#"{"s":"\u0000#num:1.5","d":1.5}"#), None);
    assert!(protect_numbers(r#"{"s":"\\u0000","d":1.5}"#).is_some());
    let s = schema(vec![
        Field::new("s", DataType::Utf8, true),
        Field::new("d", DataType::Decimal128(5, 1), true),
    ]);
    let row = json_row(r#"{"s": "\u0000#num:1.5", "d": 1.5}"#, &s).unwrap();
    assert_eq!(row["s"], "\u{0}#num:1.5");
    assert_eq!(row["d"], 1.5);
}

#[test]
fn cut_json_and_csv_text_is_an_error_not_a_panic() {
    // Every prefix of texts with escapes, multi-byte characters and numbers at the end: a
    // backslash as the last byte, a number running into the end, a cut quoted cell.
    let s = simple_schema();
    let json = r#"{"k": 1.5e3, "name": "é\"\\\u0000ü", "amount": -12345678901234567890.5, "tags": ["\€"]}"#;
    let csv = "k,name,tags\n1,\"é\"\"\\\",\"[\"\"ü\"\", 1.5e3]\"\n";
    for (i, _) in json.char_indices().chain([(json.len(), ' ')]) {
        let prefix = &json[..i];
        let _ = protect_numbers(prefix);
        let _ = json_row(prefix, &s);
        let _ = rows_of("cut.jsonl", prefix.as_bytes(), &s);
    }
    for (i, _) in csv.char_indices().chain([(csv.len(), ' ')]) {
        let _ = rows_of("cut.csv", &csv.as_bytes()[..i], &s);
    }
    assert_eq!(protect_numbers("\"\\"), None);
    assert_eq!(
        protect_numbers("[1.5, \"\\"),
        Some("[\"\\u0000#num:1.5\", \"\\".into())
    );
    assert_eq!(protect_numbers("[1.5"), Some("[\"\\u0000#num:1.5\"".into()));
}

#[test]
fn json_lines_errors_name_the_line_and_row() {
    let s = simple_schema();
    // 20 000 rows: batches of 8192; a bad value on line 9002 (row 9000: two blank lines).
    let mut text = String::from("\n\n");
    for i in 0..20_000 {
        if i == 9_000 {
            text.push_str("{\"k\": \"nine\"}\n");
        } else {
            text.push_str(&format!("{{\"k\": {i}}}\n"));
        }
    }
    let mut batches = jsonl_batches("many.jsonl", Cursor::new(text.clone()), Arc::clone(&s));
    assert_eq!(batches.next().unwrap().unwrap().num_rows(), BATCH_ROWS);
    let e = batches.next().unwrap().unwrap_err().to_string();
    assert_eq!(
        e,
        "reading input many.jsonl, line 9003: column 'k', row 9000: cannot read \"nine\" as \
         BIGINT: not an integer"
    );
    assert!(batches.next().is_none(), "the iterator ends after an error");

    // Sizes of good batches.
    let good = text.replace("{\"k\": \"nine\"}", "{\"k\": 9000}");
    let sizes: Vec<usize> = jsonl_batches("good.jsonl", Cursor::new(good), Arc::clone(&s))
        .map(|b| b.unwrap().num_rows())
        .collect();
    assert_eq!(sizes, [8192, 8192, 3616]);

    for (text, want) in [
        (
            "{\"k\": 1}\n{\"k\": 2,}\n",
            "line 2: not valid JSON: trailing comma at column 9",
        ),
        (
            "{\"k\": 1}\n[1, 2]\n",
            "line 2: expected a JSON object keyed by column name, got [1, 2]",
        ),
        (
            "{\"k\": 1, \"nmae\": \"x\"}\n",
            "line 1: column 'nmae', row 0: there is no such column (columns: k, name, amount, tags)",
        ),
        (
            "{\"name\": \"x\"}\n",
            "line 1: column 'k', row 0: NULL in a NOT NULL field of type BIGINT",
        ),
        (
            "{\"k\": 1, \"amount\": \"1.00000000001\"}\n",
            "line 1: column 'amount', row 0: cannot read \"1.00000000001\" as DECIMAL(38, 10): more than 10 fraction digits",
        ),
        (
            "{\"k\": 1, \"tags\": [\"a\", 5]}\n",
            "line 1: column 'tags[]', row 0: cannot read 5 as STRING: expected a JSON string",
        ),
    ] {
        let e = err_of("e.jsonl", text.as_bytes(), &s);
        assert!(
            e.starts_with("reading input e.jsonl, ") && e.ends_with(want),
            "{e}"
        );
    }
    // Not UTF-8.
    let e = err_of("bin.jsonl", b"{\"k\": 1}\n{\"name\": \"\xff\"}\n", &s);
    assert!(e.contains("line 2") && e.contains("UTF-8"), "{e}");
    // Empty input: no batches.
    assert!(rows_of("empty.jsonl", b"\n", &s).unwrap().is_empty());
    assert!(rows_of("empty.jsonl", b"", &s).unwrap().is_empty());
}

#[test]
fn csv_cells_quotes_nulls_and_nested_json() {
    let s = simple_schema();
    let text = concat!(
        "\u{feff}name,k,tags,amount\r\n",
        "a,1,\"[\"\"x\"\", null]\",1.5\r\n",
        "\"\",2,,\r\n",
        "\n",
        ",3,[],-0.1\n",
        "\"multi\nline, \"\"quoted\"\"\",4,\"[\"\"a,b\"\"]\",\"12\"\n",
        "  padded  ,5,,  7  \n",
        "last,6,,",
    );
    assert_eq!(
        rows_of("rows.csv", text.as_bytes(), &s).unwrap(),
        [
            r#"{"k":1,"name":"a","amount":"1.5000000000","tags":["x",null]}"#,
            r#"{"k":2,"name":"","amount":null,"tags":null}"#,
            r#"{"k":3,"name":null,"amount":"-0.1000000000","tags":[]}"#,
            r#"{"k":4,"name":"multi\nline, \"quoted\"","amount":"12.0000000000","tags":["a,b"]}"#,
            r#"{"k":5,"name":"  padded  ","amount":"7.0000000000","tags":null}"#,
            r#"{"k":6,"name":"last","amount":null,"tags":null}"#,
        ]
    );
    // A header without some columns: those are NULL. Spaces around names are dropped.
    assert_eq!(
        rows_of("spaced.csv", b"name , k\nx,1\n", &s).unwrap(),
        [r#"{"k":1,"name":"x","amount":null,"tags":null}"#]
    );
    assert_eq!(
        rows_of("part.csv", b"k\n1\n", &s).unwrap(),
        [r#"{"k":1,"name":null,"amount":null,"tags":null}"#]
    );
    // Only a header, or nothing: no rows.
    for text in ["k,name\n", ""] {
        assert!(rows_of("h.csv", text.as_bytes(), &s).unwrap().is_empty());
    }
}

#[test]
fn csv_errors_name_the_line() {
    let s = simple_schema();
    for (text, want) in [
        (
            "k,nmae,x\n1,a,b\n",
            "line 1: header: the input has columns the table does not: 'nmae', 'x' (table columns: k, name, amount, tags)",
        ),
        ("k,k\n1,1\n", "line 1: header: column 'k' appears twice"),
        (
            "k,name\n1,a\n2\n",
            "line 3: 1 cells, the header has 2 columns",
        ),
        (
            "k,name\n1,\"a\nb\n2,c\n",
            "line 2: a quoted cell is not closed before the end of the input",
        ),
        (
            "k,name\n1,\"a\nb\"\nx,c\n",
            "line 4: column 'k', row 1: cannot read \"x\" as BIGINT: not an integer",
        ),
        (
            "k,tags\n1,[a]\n",
            "line 2: column 'tags', row 0: \"[a]\" is not JSON text (not valid JSON: expected value at column 2); nested values are written as JSON",
        ),
        (
            "k,name\n,a\n",
            "line 2: column 'k', row 0: NULL in a NOT NULL field of type BIGINT",
        ),
    ] {
        let e = err_of("e.csv", text.as_bytes(), &s);
        assert!(
            e.starts_with("reading input e.csv, ") && e.ends_with(want),
            "{e}"
        );
    }
    // The header is read (and checked) when the reader is made.
    let e = csv_batches("e.csv", Cursor::new("k,k\n"), Arc::clone(&s))
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "reading input e.csv, line 1: header: column 'k' appears twice"
    );
    assert!(matches!(e, Error::Context { .. }));
}

#[test]
fn decimals_and_row_kinds_through_csv() {
    // Wide decimals as CSV text are exact; `_ROW_KIND` is a plain string column.
    let s = schema(vec![
        Field::new("d", DataType::Decimal128(38, 0), true),
        Field::new("_ROW_KIND", DataType::Utf8, true),
    ]);
    let text = "_ROW_KIND,d\n+I,99999999999999999999999999999999999999\n-D,-1\n";
    let batches: Vec<RecordBatch> = csv_batches("k.csv", Cursor::new(text), Arc::clone(&s))
        .unwrap()
        .map(|b| b.unwrap())
        .collect();
    let d = batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Decimal128Array>()
        .unwrap();
    assert_eq!(d.value(0), 10_i128.pow(38) - 1);
    assert_eq!(d.value(1), -1);
    assert_eq!(batches[0].schema(), s);
}

fn sample_batch() -> RecordBatch {
    let s = schema(vec![
        Field::new("k", DataType::Int32, false),
        Field::new("name", DataType::Utf8, true),
    ]);
    RecordBatch::try_new(
        s,
        vec![
            Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef,
            Arc::new(StringArray::from(vec![Some("a"), None, Some("c,\"d\"")])),
        ],
    )
    .unwrap()
}

fn ipc(file_format: bool, batches: &[RecordBatch]) -> Vec<u8> {
    let mut out = Vec::new();
    let schema = batches[0].schema();
    if file_format {
        let mut w = arrow_ipc::writer::FileWriter::try_new(&mut out, &schema).unwrap();
        batches.iter().for_each(|b| w.write(b).unwrap());
        w.finish().unwrap();
    } else {
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &schema).unwrap();
        batches.iter().for_each(|b| w.write(b).unwrap());
        w.finish().unwrap();
    }
    out
}

/// `batch` as a Parquet file of row groups of at most 2 rows.
fn parquet(batch: &RecordBatch) -> Vec<u8> {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(2))
        .build();
    let mut out = Vec::new();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    out
}

#[test]
fn bytes_of_each_format_read_to_the_same_rows() {
    let b = sample_batch();
    let target = b.schema();
    let want: Vec<String> = canonical::rows(&b)
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    let jsonl = want.join("\n");
    let csv = "k,name\n1,a\n2,\n3,\"c,\"\"d\"\"\"\n";
    for (name, bytes) in [
        ("s.arrows", ipc(false, std::slice::from_ref(&b))),
        ("f.arrow", ipc(true, std::slice::from_ref(&b))),
        ("p.parquet", parquet(&b)),
        ("r.csv", csv.as_bytes().to_vec()),
        ("r.jsonl", jsonl.into_bytes()),
    ] {
        assert_eq!(rows_of(name, &bytes, &target).unwrap(), want, "{name}");
    }
}

#[test]
fn arrow_streams_and_files_come_back_as_written() {
    let target = schema(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("_ROW_KIND", DataType::Utf8, true),
    ]);
    let b = sample_batch();
    for file_format in [false, true] {
        let bytes = Bytes::from(ipc(file_format, &[b.clone(), b.clone()]));
        let got = batches_from_bytes("in.arrow", bytes, InputFormat::Arrow, &target).unwrap();
        // As written: Int32 stays Int32 (the writer casts).
        assert_eq!(got, [b.clone(), b.clone()], "file {file_format}");
    }
    // Columns the table does not have.
    let narrow = schema(vec![Field::new("k", DataType::Int64, false)]);
    let e = err_of("s.arrow", &ipc(false, std::slice::from_ref(&b)), &narrow);
    assert_eq!(
        e,
        "reading input s.arrow: the input has columns the table does not: 'name' (table \
         columns: k)"
    );
    let e = err_of("f.arrow", &ipc(true, std::slice::from_ref(&b)), &narrow);
    assert!(
        e.starts_with("reading input f.arrow: the input has columns"),
        "{e}"
    );
    // Not Arrow at all.
    let e = err_of("bad.arrow", b"{\"k\": 1}\n", &target);
    assert!(e.starts_with("reading input bad.arrow: arrow error"), "{e}");
    // A truncated stream or file.
    for file_format in [false, true] {
        let bytes = ipc(file_format, &[b.clone(), b.clone()]);
        let e = err_of("cut.arrow", &bytes[..bytes.len() - 20], &target);
        assert!(e.starts_with("reading input cut.arrow: arrow error"), "{e}");
    }
    // The stream reader's batches one at a time.
    let bytes = ipc(false, &[b.clone(), b.clone()]);
    let reader = arrow_ipc::reader::StreamReader::try_new(Cursor::new(bytes), None).unwrap();
    let batches = arrow_ipc_batches("s.arrow", reader, &target).unwrap();
    assert_eq!(batches.count(), 2);
}

#[test]
fn parquet_bytes_read_through_the_core_reader() {
    let b = sample_batch();
    let bytes = parquet(&b);
    let got = batches_from_bytes(
        "p.parquet",
        Bytes::from(bytes.clone()),
        InputFormat::Parquet,
        &b.schema(),
    )
    .unwrap();
    // One batch per row group of 2 rows, in the file's types.
    assert_eq!(
        got.iter().map(RecordBatch::num_rows).collect::<Vec<_>>(),
        [2, 1]
    );
    assert_eq!(got[0], b.slice(0, 2));
    assert_eq!(got[1], b.slice(2, 1));
    // A table without the file's columns.
    let narrow = schema(vec![Field::new("k", DataType::Int64, false)]);
    let e = err_of("p.parquet", &bytes, &narrow);
    assert_eq!(
        e,
        "reading input p.parquet: the input has columns the table does not: 'name' (table \
         columns: k)"
    );
    // Not Parquet, or cut.
    let e = err_of("bad.parquet", b"not a parquet file at all", &b.schema());
    assert!(
        e.starts_with("reading input bad.parquet: corrupt parquet"),
        "{e}"
    );
    let e = err_of("cut.parquet", &bytes[..bytes.len() / 2], &b.schema());
    assert!(e.starts_with("reading input cut.parquet: "), "{e}");
    // A failing read names the input and the failure.
    let e = parquet_batches(
        "f.parquet",
        100,
        |_| Err(std::io::Error::other("disk on fire")),
        &b.schema(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.starts_with("reading input f.parquet: ") && e.contains("disk on fire"),
        "{e}"
    );
}

#[test]
fn readers_are_send_when_their_input_is() {
    fn send<T: Send>(_: &T) {}
    let s = simple_schema();
    send(&jsonl_batches("a", Cursor::new(Vec::new()), Arc::clone(&s)));
    send(&csv_batches("a", Cursor::new(Vec::new()), Arc::clone(&s)).unwrap());
    let bytes = Bytes::from(parquet(&sample_batch()));
    let size = bytes.len() as u64;
    let p = parquet_batches(
        "a",
        size,
        move |r| Ok(bytes.slice(r.start as usize..r.end as usize)),
        &sample_batch().schema(),
    )
    .unwrap();
    send(&p);
    let reader =
        arrow_ipc::reader::StreamReader::try_new(Cursor::new(ipc(false, &[sample_batch()])), None)
            .unwrap();
    send(&arrow_ipc_batches("a", reader, &sample_batch().schema()).unwrap());
}
