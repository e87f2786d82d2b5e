use super::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// `/spec/blob-descriptor.md` §8: v2 of (`/test/path`, 100, 200).
fn v2() -> Vec<u8> {
    hex("02 43534544424f4c42 0a000000 2f746573742f70617468 6400000000000000 c800000000000000")
}

/// `/spec/blob-descriptor.md` §8: the v1 resource, same triple, no magic.
fn v1() -> Vec<u8> {
    hex("01 0a000000 2f746573742f70617468 6400000000000000 c800000000000000")
}

/// `/spec/blob-descriptor.md` §8: BlobViewStruct(`default.source`, 7, 5).
fn view() -> Vec<u8> {
    hex("01 57454956424f4c42 0e000000 64656661756c742e736f75726365 07000000 0500000000000000")
}

/// A view struct laid out by hand (field id 1, row id 2), whatever its identifier.
fn view_bytes(identifier: &str) -> Vec<u8> {
    let mut out = hex("01 57454956424f4c42");
    out.extend_from_slice(&(identifier.len() as i32).to_le_bytes());
    out.extend_from_slice(identifier.as_bytes());
    out.extend_from_slice(&1i32.to_le_bytes());
    out.extend_from_slice(&2i64.to_le_bytes());
    out
}

#[test]
fn stored_bytes_of_each_input() {
    use InlineBlobKind::{Descriptor, View};
    // Descriptors and views are stored as Java re-serializes them.
    assert_eq!(encode_inline_blob(&v2(), Descriptor).unwrap(), v2());
    assert_eq!(encode_inline_blob(&view(), View).unwrap(), view());
    // A view in a descriptor column is stored (as Java); bytes after a descriptor dropped.
    assert_eq!(encode_inline_blob(&view(), Descriptor).unwrap(), view());
    let mut longer = v2();
    longer.extend_from_slice(b"tail");
    assert_eq!(encode_inline_blob(&longer, Descriptor).unwrap(), v2());
    // Refused: raw bytes, a v1 descriptor (no magic: Java takes it for raw data), a
    // descriptor in a view column, truncated or bad structs.
    let cases: Vec<(Vec<u8>, InlineBlobKind, &str)> = vec![
        (
            b"raw payload bytes".to_vec(),
            Descriptor,
            "require values to be a BlobDescriptor",
        ),
        (
            Vec::new(),
            Descriptor,
            "require values to be a BlobDescriptor",
        ),
        (v1(), Descriptor, "require values to be a BlobDescriptor"),
        (
            b"raw".to_vec(),
            View,
            "require values to be a BlobDescriptor",
        ),
        (v2(), View, "blob-view-field requires"),
        (v2()[..9].to_vec(), Descriptor, "too short"),
        (
            view()[..20].to_vec(),
            View,
            "identifier length exceeds data size",
        ),
        (view_bytes("unknown.t"), View, "must include database name"),
        (view_bytes("t"), View, "must include database name"),
    ];
    for (bytes, kind, message) in cases {
        let err = encode_inline_blob(&bytes, kind).unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
        assert!(
            err.to_string().contains(message),
            "{kind:?} {bytes:02x?}: {err}"
        );
    }
}

fn schema(options: &str) -> TableSchema {
    serde_json::from_str(&format!(
        r#"{{"version": 3, "id": 0, "fields": [
            {{"id": 0, "name": "id", "type": "INT"}},
            {{"id": 1, "name": "d", "type": "BLOB"}},
            {{"id": 2, "name": "v", "type": "BLOB"}}],
          "highestFieldId": 2, "partitionKeys": [], "primaryKeys": [],
          "options": {{"row-tracking.enabled": "true", "data-evolution.enabled": "true", {options}}},
          "timeMillis": 0}}"#
    ))
    .unwrap()
}

#[test]
fn columns_and_errors() {
    let s = schema(r#""blob-descriptor-field": "d", "blob-view-field": "v""#);
    let cols = InlineBlobColumns::try_new(&s, &s.core_options())
        .unwrap()
        .unwrap();
    assert_eq!(
        cols.columns,
        vec![
            (1, "d".to_string(), InlineBlobKind::Descriptor),
            (2, "v".to_string(), InlineBlobKind::View)
        ]
    );
    // The fallback key.
    let s = schema(r#""blob.stored-descriptor-fields": "d""#);
    let cols = InlineBlobColumns::try_new(&s, &s.core_options())
        .unwrap()
        .unwrap();
    assert_eq!(cols.kind_of("d"), Some(InlineBlobKind::Descriptor));
    assert_eq!(cols.kind_of("v"), None);
    // None without the options.
    let s = schema(r#""bucket": "-1""#);
    assert_eq!(
        InlineBlobColumns::try_new(&s, &s.core_options()).unwrap(),
        None
    );
    // Java's schema rules; the Flink-only existence check.
    let s = schema(r#""blob-descriptor-field": "id""#);
    let err = InlineBlobColumns::try_new(&s, &s.core_options()).unwrap_err();
    assert!(err.to_string().contains("must be a BLOB field"), "{err}");
    let s = schema(r#""blob-descriptor-field": "d", "blob-write-null-on-missing-file": "true""#);
    let err = InlineBlobColumns::try_new(&s, &s.core_options()).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert!(
        err.to_string().contains("blob-write-null-on-missing-file"),
        "{err}"
    );
    let s = schema(r#""blob-descriptor-field": "d", "blob-write-null-on-missing-file": "false""#);
    assert!(InlineBlobColumns::try_new(&s, &s.core_options()).is_ok());
}

#[test]
fn encode_column_names_column_and_row() {
    let mut longer = v2();
    longer.push(9);
    let col: ArrayRef = Arc::new(LargeBinaryArray::from_iter(vec![
        Some(longer.as_slice()),
        None,
        Some(view().as_slice()),
    ]));
    let out = encode_column(&col, "d", InlineBlobKind::Descriptor).unwrap();
    let out = out.as_binary::<i64>();
    assert_eq!(out.value(0), v2().as_slice());
    assert!(out.is_null(1));
    assert_eq!(out.value(2), view().as_slice());
    // Unchanged columns are kept as they are.
    let same: ArrayRef = Arc::new(LargeBinaryArray::from_iter(vec![Some(v2().as_slice())]));
    let out = encode_column(&same, "d", InlineBlobKind::Descriptor).unwrap();
    assert!(Arc::ptr_eq(&out, &same));
    let bad: ArrayRef = Arc::new(LargeBinaryArray::from_iter(vec![
        Some(v2().as_slice()),
        Some(b"raw".as_slice()),
    ]));
    let err = encode_column(&bad, "d", InlineBlobKind::Descriptor).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("column 'd' (blob-descriptor-field), row 1: BLOB inline fields"),
        "{err}"
    );
}
