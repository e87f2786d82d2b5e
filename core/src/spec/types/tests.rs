use super::*;

fn sql(s: &str) -> DataType {
    DataType::parse_sql(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn n(kind: TypeKind) -> DataType {
    DataType::nullable(kind)
}

#[test]
fn atomic_types_and_defaults() {
    let cases: Vec<(&str, DataType, &str)> = vec![
        ("INT", n(TypeKind::Int), "INT"),
        ("integer", n(TypeKind::Int), "INT"),
        (
            "BIGINT NOT NULL",
            DataType::not_null(TypeKind::BigInt),
            "BIGINT NOT NULL",
        ),
        ("int null", n(TypeKind::Int), "INT"),
        (
            "STRING",
            n(TypeKind::VarChar { length: MAX_LENGTH }),
            "STRING",
        ),
        (
            "VARCHAR(2147483647)",
            n(TypeKind::VarChar { length: MAX_LENGTH }),
            "STRING",
        ),
        ("VARCHAR", n(TypeKind::VarChar { length: 1 }), "VARCHAR(1)"),
        (
            "VARCHAR(20)",
            n(TypeKind::VarChar { length: 20 }),
            "VARCHAR(20)",
        ),
        ("CHAR", n(TypeKind::Char { length: 1 }), "CHAR(1)"),
        (
            "char(5) not null",
            DataType::not_null(TypeKind::Char { length: 5 }),
            "CHAR(5) NOT NULL",
        ),
        (
            "BYTES",
            n(TypeKind::VarBinary { length: MAX_LENGTH }),
            "BYTES",
        ),
        (
            "VARBINARY(16)",
            n(TypeKind::VarBinary { length: 16 }),
            "VARBINARY(16)",
        ),
        ("BINARY(4)", n(TypeKind::Binary { length: 4 }), "BINARY(4)"),
        (
            "DECIMAL",
            n(TypeKind::Decimal {
                precision: 10,
                scale: 0,
            }),
            "DECIMAL(10, 0)",
        ),
        (
            "DEC(5)",
            n(TypeKind::Decimal {
                precision: 5,
                scale: 0,
            }),
            "DECIMAL(5, 0)",
        ),
        (
            "NUMERIC(38,10)",
            n(TypeKind::Decimal {
                precision: 38,
                scale: 10,
            }),
            "DECIMAL(38, 10)",
        ),
        (
            "DECIMAL(10, 2)",
            n(TypeKind::Decimal {
                precision: 10,
                scale: 2,
            }),
            "DECIMAL(10, 2)",
        ),
        ("TIME", n(TypeKind::Time { precision: 0 }), "TIME(0)"),
        (
            "TIME(3) WITHOUT TIME ZONE",
            n(TypeKind::Time { precision: 3 }),
            "TIME(3)",
        ),
        (
            "TIMESTAMP",
            n(TypeKind::Timestamp { precision: 6 }),
            "TIMESTAMP(6)",
        ),
        (
            "TIMESTAMP(0)",
            n(TypeKind::Timestamp { precision: 0 }),
            "TIMESTAMP(0)",
        ),
        (
            "timestamp(9) without time zone",
            n(TypeKind::Timestamp { precision: 9 }),
            "TIMESTAMP(9)",
        ),
        (
            "TIMESTAMP(3) WITH LOCAL TIME ZONE",
            n(TypeKind::LocalZonedTimestamp { precision: 3 }),
            "TIMESTAMP(3) WITH LOCAL TIME ZONE",
        ),
        (
            "TIMESTAMP WITH LOCAL TIME ZONE NOT NULL",
            DataType::not_null(TypeKind::LocalZonedTimestamp { precision: 6 }),
            "TIMESTAMP(6) WITH LOCAL TIME ZONE NOT NULL",
        ),
        (
            "TIMESTAMP_LTZ(9)",
            n(TypeKind::LocalZonedTimestamp { precision: 9 }),
            "TIMESTAMP(9) WITH LOCAL TIME ZONE",
        ),
        ("DOUBLE PRECISION", n(TypeKind::Double), "DOUBLE"),
        ("FLOAT", n(TypeKind::Float), "FLOAT"),
        ("BOOLEAN", n(TypeKind::Boolean), "BOOLEAN"),
        ("TINYINT", n(TypeKind::TinyInt), "TINYINT"),
        ("SMALLINT", n(TypeKind::SmallInt), "SMALLINT"),
        ("DATE", n(TypeKind::Date), "DATE"),
        ("VARIANT", n(TypeKind::Variant), "VARIANT"),
        (
            "BLOB NOT NULL",
            DataType::not_null(TypeKind::Blob),
            "BLOB NOT NULL",
        ),
        (
            "GEOMETRY",
            n(TypeKind::Other("GEOMETRY(OGC:CRS84)".into())),
            "GEOMETRY(OGC:CRS84)",
        ),
        (
            "GEOMETRY('4326')",
            n(TypeKind::Other("GEOMETRY('4326')".into())),
            "GEOMETRY('4326')",
        ),
        (
            "GEOGRAPHY(OGC:CRS84, KARNEY) NOT NULL",
            DataType::not_null(TypeKind::Other("GEOGRAPHY(OGC:CRS84, karney)".into())),
            "GEOGRAPHY(OGC:CRS84, karney) NOT NULL",
        ),
    ];
    for (input, want, display) in cases {
        let got = sql(input);
        assert_eq!(got, want, "{input}");
        assert_eq!(got.to_string(), display, "{input}");
        // Display output parses back to the same type.
        assert_eq!(sql(display), want, "{display}");
    }
}

#[test]
fn nested_sql_strings() {
    let t = sql("ARRAY<INT NOT NULL>");
    assert_eq!(
        t,
        n(TypeKind::Array(Box::new(DataType::not_null(TypeKind::Int))))
    );
    assert_eq!(t.to_string(), "ARRAY<INT NOT NULL>");

    let t = sql("MAP<STRING, INT>");
    assert_eq!(
        t,
        n(TypeKind::Map(
            Box::new(n(TypeKind::VarChar { length: MAX_LENGTH })),
            Box::new(n(TypeKind::Int))
        ))
    );
    assert_eq!(t.to_string(), "MAP<STRING, INT>");

    let t = sql("ROW<a INT, b STRING>");
    assert_eq!(
        t,
        n(TypeKind::Row(vec![
            DataField::new(0, "a", n(TypeKind::Int)),
            DataField::new(1, "b", n(TypeKind::VarChar { length: MAX_LENGTH })),
        ]))
    );
    assert_eq!(t.to_string(), "ROW<`a` INT, `b` STRING>");
    assert_eq!(sql("ROW<`a` INT, `b` STRING>"), t);

    // Comments, nested ids in pre-order, NOT NULL rows, quoting.
    let t = sql("ROW<`x y` ROW<i INT 'an ''i'''> NOT NULL COMMENT 'outer', date DATE> NOT NULL");
    let TypeKind::Row(fields) = &t.kind else {
        panic!()
    };
    assert!(!t.nullable);
    assert_eq!(fields[0].name, "x y");
    assert_eq!(fields[0].id, 0);
    assert_eq!(fields[0].description.as_deref(), Some("outer"));
    let inner = fields[0].data_type.row_fields().unwrap();
    assert_eq!(
        (inner[0].id, inner[0].description.as_deref()),
        (1, Some("an 'i'"))
    );
    assert_eq!((fields[1].id, fields[1].name.as_str()), (2, "date"));
    assert_eq!(
        t.to_string(),
        "ROW<`x y` ROW<`i` INT COMMENT 'an ''i'''> NOT NULL COMMENT 'outer', `date` DATE> NOT NULL"
    );

    assert_eq!(sql("INT ARRAY"), sql("ARRAY<INT>"));
    assert_eq!(
        sql("INT NOT NULL MULTISET NOT NULL").to_string(),
        "MULTISET<INT NOT NULL> NOT NULL"
    );
    let v = sql("VECTOR<FLOAT NOT NULL, 128>");
    assert_eq!(v.to_string(), "VECTOR<FLOAT NOT NULL, 128>");
    assert_eq!(
        sql("ARRAY<MAP<INT, ARRAY<DECIMAL(4, 2)>>>").to_string(),
        "ARRAY<MAP<INT, ARRAY<DECIMAL(4, 2)>>>"
    );
}

#[test]
fn bad_strings_are_errors_naming_the_input() {
    for bad in [
        "",
        "INTT",
        "FOO(3)",
        "DECIMAL(39, 2)",
        "DECIMAL(5, 6)",
        "DECIMAL(0)",
        "TIMESTAMP(10)",
        "TIME(12)",
        "CHAR(0)",
        "VARCHAR(2147483648)",
        "VARCHAR(",
        "INT NOT",
        "INT INT",
        "TIMESTAMP WITH TIME ZONE",
        "ARRAY<INT",
        "MAP<INT>",
        "ROW<a>",
        "VECTOR<FLOAT, 0>",
        "'abc",
        "INTERVAL",
        "GEOGRAPHY(OGC:CRS84, flat)",
    ] {
        let err = DataType::parse_sql(bad).expect_err(bad);
        assert!(matches!(err, Error::Invalid(_)), "{bad}: {err:?}");
        assert!(
            err.to_string().contains(&format!("'{bad}'")),
            "{bad}: {err}"
        );
    }
    let deep = format!("{}INT{}", "ARRAY<".repeat(100), ">".repeat(100));
    assert!(DataType::parse_sql(&deep).is_err());
}

#[test]
fn json_forms() {
    let json = r#"{"type": "ARRAY", "element": {"type": "ARRAY", "element": "BIGINT", "nullable": true}, "nullable": true}"#;
    let t: DataType = serde_json::from_str(json).unwrap();
    assert_eq!(t.to_string(), "ARRAY<ARRAY<BIGINT>>");
    assert_eq!(
        serde_json::to_string(&t).unwrap(),
        r#"{"type":"ARRAY","element":{"type":"ARRAY","element":"BIGINT"}}"#
    );
    assert_eq!(
        t.to_json(),
        serde_json::from_str::<Value>(&serde_json::to_string(&t).unwrap()).unwrap()
    );

    let json =
        r#"{"type": "MAP NOT NULL", "key": "STRING NOT NULL", "value": "BLOB", "nullable": false}"#;
    let t: DataType = serde_json::from_str(json).unwrap();
    assert!(!t.nullable);
    assert_eq!(t.to_string(), "MAP<STRING NOT NULL, BLOB> NOT NULL");

    let json = r#"{"type": "ROW", "fields": [{"id": 29, "name": "x", "type": "INT"}, {"id": 30, "name": "y", "type": "STRING", "description": "d", "defaultValue": "7"}]}"#;
    let t: DataType = serde_json::from_str(json).unwrap();
    let f = t.row_fields().unwrap();
    assert_eq!((f[0].id, f[1].id), (29, 30));
    assert_eq!(f[1].description.as_deref(), Some("d"));
    assert_eq!(f[1].default_value.as_deref(), Some("7"));
    assert_eq!(
        serde_json::to_string(&t).unwrap(),
        r#"{"type":"ROW","fields":[{"id":29,"name":"x","type":"INT"},{"id":30,"name":"y","type":"STRING","description":"d","defaultValue":"7"}]}"#
    );

    let json = r#"{"type": "VECTOR NOT NULL", "element": "FLOAT NOT NULL", "length": 3}"#;
    let t: DataType = serde_json::from_str(json).unwrap();
    assert_eq!(t.to_string(), "VECTOR<FLOAT NOT NULL, 3> NOT NULL");
    assert_eq!(
        serde_json::to_string(&t).unwrap(),
        r#"{"type":"VECTOR NOT NULL","element":"FLOAT NOT NULL","length":3}"#
    );

    let t: DataType = serde_json::from_str(r#""TIMESTAMP_LTZ(3)""#).unwrap();
    assert_eq!(
        serde_json::to_string(&t).unwrap(),
        r#""TIMESTAMP(3) WITH LOCAL TIME ZONE""#
    );

    for bad in [
        r#"{"type": "STRUCT", "fields": []}"#,
        r#"{"element": "INT"}"#,
        r#"{"type": "ARRAY"}"#,
        r#"{"type": "ROW", "fields": [{"name": "a", "type": "INT"}]}"#,
        r#"{"type": "VECTOR", "element": "INT", "length": 0}"#,
        r#"42"#,
        r#""GEOMETRYX""#,
    ] {
        let err = serde_json::from_str::<DataType>(bad).expect_err(bad);
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn field_lookup() {
    let t = sql("ROW<a INT, b ROW<c INT, d ARRAY<ROW<e INT>>>>");
    let fields = t.row_fields().unwrap();
    assert_eq!(field_by_name(fields, "b").map(|f| f.id), Some(1));
    assert!(field_by_name(fields, "B").is_none());
    assert_eq!(field_by_id(fields, 0).map(|f| f.name.as_str()), Some("a"));
    assert!(field_by_id(fields, 4).is_none());
    assert_eq!(
        field_by_id_nested(fields, 4).map(|f| f.name.as_str()),
        Some("e")
    );
}
