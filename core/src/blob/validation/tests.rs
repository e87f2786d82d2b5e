//! Cases mirror Java's `SchemaValidationTest` (the BLOB ones) plus one per rule of
//! `spec/managed-blob.md` §7. Schemas go through `new_table_schema`, i.e. the create path.

use super::*;
use crate::schema::alter::{SchemaChange, apply_schema_changes};
use crate::schema::create::new_table_schema;

/// A schema with `fields` (JSON objects without ids), primary keys, partition keys and
/// options (JSON object members).
fn create(fields: &str, pk: &[&str], partition: &[&str], options: &str) -> Result<TableSchema> {
    let keys = |k: &[&str]| {
        k.iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let json = format!(
        r#"{{"fields": [{fields}], "primaryKeys": [{}], "partitionKeys": [{}],
            "options": {{{options}}}}}"#,
        keys(pk),
        keys(partition)
    );
    new_table_schema(json.as_bytes(), 0)
}

fn field(name: &str, ty: &str) -> String {
    format!(r#"{{"name": "{name}", "type": "{ty}"}}"#)
}

/// `id INT, payload BLOB`, primary key `id`, bucket 1, plus `options`.
fn pk_blob(options: &str) -> Result<TableSchema> {
    let sep = if options.is_empty() { "" } else { ", " };
    create(
        &format!("{}, {}", field("id", "INT"), field("payload", "BLOB")),
        &["id"],
        &[],
        &format!(r#""bucket": "1"{sep}{options}"#),
    )
}

#[track_caller]
fn ok(s: Result<TableSchema>) -> TableSchema {
    match s {
        Ok(s) => s,
        Err(e) => panic!("expected the schema to validate, got: {e}"),
    }
}

#[track_caller]
fn rejected(s: Result<TableSchema>, message: &str) {
    match s {
        Ok(_) => panic!("expected rejection with '{message}'"),
        Err(e) => {
            assert!(matches!(e, Error::Invalid(_)), "{e:?}");
            assert!(
                e.to_string().contains(message),
                "want '{message}', got: {e}"
            );
        }
    }
}

// §7.2: accepted primary-key tables.

#[test]
fn managed_blob_accepted_with_each_allowed_merge_engine() {
    for options in [
        "",
        r#""merge-engine": "deduplicate""#,
        r#""merge-engine": "partial-update""#,
        r#""merge-engine": "first-row", "changelog-producer": "none""#,
        r#""blob-field": "payload", "merge-engine": "Partial-Update""#,
        r#""pk-clustering-override": "false""#,
    ] {
        let s = ok(pk_blob(options));
        let managed: Vec<&str> = managed_blob_fields(&s)
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(managed, ["payload"], "{options}");
    }
}

#[test]
fn array_and_map_blobs_are_managed_by_type_or_blob_field() {
    for ty in [
        r#"{"type": "ARRAY", "element": "BLOB"}"#,
        r#"{"type": "MAP", "key": "INT", "value": "BLOB"}"#,
        r#"{"type": "MAP", "key": "STRING", "value": "BLOB"}"#,
        r#""ARRAY<BLOB>""#,
        r#""MAP<INT, BLOB>""#,
    ] {
        for blob_field in ["", r#", "blob-field": "payloads""#] {
            let s = ok(create(
                &format!(
                    r#"{}, {{"name": "payloads", "type": {ty}}}"#,
                    field("id", "INT")
                ),
                &["id"],
                &[],
                &format!(r#""bucket": "1"{blob_field}"#),
            ));
            assert!(is_blob_file_field(&s.fields[1].data_type), "{ty}");
            assert_eq!(managed_blob_fields(&s).len(), 1, "{ty}");
        }
    }
}

#[test]
fn inline_blob_fields_do_not_trigger_managed_rules() {
    // Descriptor and view fields are not managed: partial-update, aggregation, a BLOB
    // sequence field or an external path are all fine.
    for options in [
        r#""blob-descriptor-field": "payload", "merge-engine": "partial-update""#,
        r#""blob-view-field": "payload", "merge-engine": "partial-update""#,
        r#""blob-descriptor-field": "payload", "merge-engine": "aggregation""#,
        r#""blob.stored-descriptor-fields": "payload", "merge-engine": "aggregation""#,
        r#""blob-descriptor-field": " payload ,", "changelog-producer": "input""#,
        r#""blob-view-field": "payload", "data-file.external-paths": "file:/x""#,
    ] {
        let s = ok(pk_blob(options));
        assert!(managed_blob_fields(&s).is_empty(), "{options}");
    }
    // Descriptor + view + managed side by side.
    let s = ok(create(
        &[
            field("id", "INT"),
            field("payload", "BLOB"),
            field("view", "BLOB"),
            field("desc", "BLOB"),
        ]
        .join(", "),
        &["id"],
        &[],
        r#""bucket": "1", "blob-field": "payload", "blob-view-field": "view",
           "blob-descriptor-field": "desc", "merge-engine": "partial-update""#,
    ));
    let managed: Vec<&str> = managed_blob_fields(&s)
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(managed, ["payload"]);
    assert_eq!(blob_inline_fields(&s.core_options()), ["desc", "view"]);
}

#[test]
fn partial_update_retract_aggregation_rule() {
    let fields = [
        field("id", "INT"),
        field("payload", "BLOB"),
        field("ts", "INT"),
    ]
    .join(", ");
    let t = |options: &str| {
        create(
            &fields,
            &["id"],
            &[],
            &format!(
                r#""bucket": "1", "blob-field": "payload", "merge-engine": "partial-update",
                   {options}"#
            ),
        )
    };
    let msg = "Managed BLOB field 'payload' cannot use aggregate function 'last_non_null_value' \
               because managed BLOB payloads are not retained in retract messages. Set \
               'fields.payload.ignore-retract' to true to ignore retract messages.";
    rejected(
        t(r#""fields.ts.sequence-group": "payload",
             "fields.payload.aggregate-function": "last_non_null_value""#),
        msg,
    );
    rejected(
        t(r#""fields.ts.sequence-group": "payload",
             "fields.default-aggregate-function": "last_non_null_value""#),
        msg,
    );
    // The field-level function wins over the default.
    ok(t(r#""fields.ts.sequence-group": "payload",
            "fields.payload.aggregate-function": "last_value",
            "fields.default-aggregate-function": "last_non_null_value""#));
    ok(t(r#""fields.ts.sequence-group": "payload",
            "fields.payload.aggregate-function": "last_non_null_value",
            "fields.payload.ignore-retract": "true""#));
    ok(t(r#""fields.ts.sequence-group": "payload",
            "fields.payload.aggregate-function": "last_non_null_value",
            "ignore-delete": "true""#));
    ok(t(r#""fields.ts.sequence-group": "payload",
            "fields.payload.aggregate-function": "last_non_null_value",
            "partial-update.ignore-delete": "true""#));
    // Not protected by a sequence group: no rule.
    ok(t(
        r#""fields.payload.aggregate-function": "last_non_null_value",
            "fields.ts.sequence-group": "id""#,
    ));
    rejected(
        t(r#""fields.ts.sequence-group": "payload",
             "fields.payload.aggregate-function": "last_non_null_value",
             "fields.payload.ignore-retract": "maybe""#),
        "'fields.payload.ignore-retract'",
    );
}

// §7.2: rejected primary-key tables, one per rule.

#[test]
fn managed_blob_keys_rejected() {
    rejected(
        create(
            &format!("{}, {}", field("id", "INT"), field("payload", "BLOB")),
            &["payload"],
            &[],
            r#""bucket": "1", "blob-field": "payload""#,
        ),
        "Managed BLOB fields cannot be primary keys: [payload].",
    );
    rejected(
        create(
            &format!("{}, {}", field("id", "INT"), field("payload", "BLOB")),
            &["payload"],
            &[],
            r#""bucket": "1", "merge-engine": "partial-update""#,
        ),
        "Managed BLOB fields cannot be primary keys: [payload].",
    );
    // Create already requires bucket keys to be primary keys, so this rule is reached only
    // by a schema built elsewhere (as in Java, where validateBucket has the same rule).
    rejected(
        pk_blob(r#""bucket-key": "payload""#),
        "bucket key 'payload' must be one of the primary keys",
    );
    let mut s = ok(pk_blob(""));
    s.options.insert("bucket-key".into(), "payload".into());
    rejected(
        validate_blob_fields(&s).map(|()| s.clone()),
        "Managed BLOB fields cannot be bucket keys: [payload].",
    );
    rejected(
        pk_blob(r#""sequence.field": "id, payload""#),
        "Managed BLOB fields cannot be sequence fields: [payload].",
    );
    rejected(
        pk_blob(r#""merge-engine": "partial-update", "sequence.field": "payload""#),
        "Managed BLOB fields cannot be sequence fields: [payload].",
    );
}

#[test]
fn managed_blob_table_options_rejected() {
    let engine = "Primary-key managed BLOB tables only support the deduplicate, partial-update \
                  or first-row merge engine.";
    rejected(pk_blob(r#""merge-engine": "aggregation""#), engine);
    let producer = "Primary-key managed BLOB tables only support changelog-producer 'none'.";
    for p in ["input", "lookup", "full-compaction"] {
        rejected(
            pk_blob(&format!(r#""changelog-producer": "{p}""#)),
            producer,
        );
    }
    let external = "Primary-key managed BLOB tables do not support 'data-file.external-paths'.";
    rejected(
        pk_blob(r#""data-file.external-paths": "file:///tmp/data""#),
        external,
    );
    // The raw option is enough, even empty.
    rejected(pk_blob(r#""data-file.external-paths": """#), external);
    rejected(
        pk_blob(r#""pk-clustering-override": "TRUE", "clustering.columns": "id""#),
        "Primary-key managed BLOB tables do not support 'pk-clustering-override'.",
    );
}

// §7.1: sequence-group ordering fields (partial-update only, every storage mode).

#[test]
fn blob_sequence_group_ordering_fields_rejected() {
    for ty in [
        r#""BLOB""#,
        r#"{"type": "ARRAY", "element": "BLOB"}"#,
        r#"{"type": "MAP", "key": "STRING", "value": "BLOB"}"#,
    ] {
        let fields = format!(
            r#"{}, {{"name": "ordering", "type": {ty}}}, {}, {}"#,
            field("id", "INT"),
            field("payload", "INT"),
            field("ts", "INT")
        );
        let t = |engine: &str, options: &str| {
            create(
                &fields,
                &["id"],
                &[],
                &format!(
                    r#""bucket": "1", "blob-field": "ordering", "merge-engine": "{engine}",
                       {options}"#
                ),
            )
        };
        rejected(
            t(
                "partial-update",
                r#""fields.ordering.sequence-group": "payload""#,
            ),
            "Field 'ordering' with type ",
        );
        rejected(
            t(
                "partial-update",
                r#""fields.ts,ordering.sequence-group": "payload""#,
            ),
            "cannot be used as a sequence-group ordering field in option \
             'fields.ts,ordering.sequence-group'.",
        );
        // Protected (not ordering): fine. A dormant option on deduplicate: fine.
        ok(t(
            "partial-update",
            r#""fields.ts.sequence-group": "ordering,payload""#,
        ));
        ok(t(
            "deduplicate",
            r#""fields.ordering.sequence-group": "payload""#,
        ));
    }
    // The exact text, with the type as Java prints it; descriptor fields too.
    rejected(
        pk_blob(
            r#""blob-descriptor-field": "payload", "merge-engine": "partial-update",
               "fields.payload.sequence-group": "id""#,
        ),
        "Field 'payload' with type BLOB cannot be used as a sequence-group ordering field in \
         option 'fields.payload.sequence-group'.",
    );
    // Malformed and unknown ordering fields on partial-update.
    rejected(
        pk_blob(r#""merge-engine": "partial-update", "fields.id.xsequence-group": "payload""#),
        "Invalid sequence-group option: fields.id.xsequence-group",
    );
    rejected(
        pk_blob(r#""merge-engine": "partial-update", "fields.nope.sequence-group": "payload""#),
        "Cannot find field: nope",
    );
}

// §7.1: general rules.

#[test]
fn nested_blobs_rejected() {
    for ty in [
        "MAP<BLOB, INT>",
        "ROW<nested_blob BLOB>",
        "ARRAY<ROW<nested_blob BLOB>>",
        "MAP<STRING, ROW<nested_blob BLOB>>",
        "MAP<STRING, ARRAY<BLOB>>",
        "ARRAY<ARRAY<BLOB>>",
        "ROW<nested_map MAP<INT, BLOB>>",
        "MULTISET<BLOB>",
        "MAP<STRING, MAP<INT, BLOB>>",
    ] {
        for pk in [&[][..], &["id"][..]] {
            let options = if pk.is_empty() {
                r#""row-tracking.enabled": "true", "data-evolution.enabled": "true""#
            } else {
                r#""bucket": "1""#
            };
            let e = create(
                &format!("{}, {}", field("id", "INT"), field("payload", ty)),
                pk,
                &[],
                options,
            );
            rejected(e, "Field 'payload' has unsupported nested BLOB type ");
        }
    }
    rejected(
        create(
            &format!(
                "{}, {}",
                field("id", "INT"),
                field("payload", "ROW<b BLOB>")
            ),
            &["id"],
            &[],
            r#""bucket": "1""#,
        ),
        "Field 'payload' has unsupported nested BLOB type ROW<`b` BLOB>. BLOB is only supported \
         as a top-level BLOB, ARRAY<BLOB>, or MAP<X, BLOB> field.",
    );
}

#[test]
fn shared_shredding_maps_hold_no_blob() {
    for ty in ["MAP<STRING, BLOB>", "MAP<STRING, ARRAY<BLOB>>"] {
        rejected(
            create(
                &format!("{}, {}", field("id", "INT"), field("m", ty)),
                &["id"],
                &[],
                r#""bucket": "1", "fields.m.map.storage-layout": "shared-shredding""#,
            ),
            "MAP shared-shredding currently cannot contain BLOB fields.",
        );
    }
}

#[test]
fn blob_field_option_names_blob_file_columns() {
    let t = |value: &str| pk_blob(&format!(r#""blob-field": "{value}""#));
    ok(t("payload"));
    ok(t(" payload ,"));
    let msg = |n: &str| {
        format!(
            "Field '{n}' in 'blob-field' must be a BLOB, ARRAY<BLOB> or MAP<X, BLOB> field in \
             table schema."
        )
    };
    rejected(t("id"), &msg("id"));
    rejected(t("nope"), &msg("nope"));
    // Java splits without dropping empty names: an empty option names ''.
    rejected(t(""), &msg(""));
    rejected(t("payload, "), &msg(""));
}

#[test]
fn inline_field_options_name_scalar_blob_columns() {
    let fields = [
        field("id", "INT"),
        field("payload", "BLOB"),
        field("parts", "ARRAY<BLOB>"),
    ]
    .join(", ");
    let t = |options: &str| {
        create(
            &fields,
            &["id"],
            &[],
            &format!(r#""bucket": "1", {options}"#),
        )
    };
    for (key, shown) in [
        ("blob-descriptor-field", "blob-descriptor-field"),
        ("blob.stored-descriptor-fields", "blob-descriptor-field"),
        ("blob-view-field", "blob-view-field"),
    ] {
        for bad in ["parts", "id", "nope"] {
            rejected(
                t(&format!(r#""{key}": "{bad}""#)),
                &format!(
                    "Field '{bad}' in '{shown}' must be a BLOB field in table schema. \
                     ARRAY<BLOB> and MAP<X, BLOB> are only supported by 'blob-field'."
                ),
            );
        }
    }
    rejected(
        t(r#""blob-descriptor-field": "payload", "blob-view-field": "payload""#),
        "Field 'payload' in 'blob-view-field' can not also be in 'blob-descriptor-field'.",
    );
    // The main key wins over the fallback key.
    ok(t(
        r#""blob-descriptor-field": "payload", "blob.stored-descriptor-fields": "parts""#,
    ));
}

#[test]
fn blob_table_shape_rules() {
    let de = r#""row-tracking.enabled": "true", "data-evolution.enabled": "true""#;
    let blob4 = [
        field("f0", "INT"),
        field("f1", "INT"),
        field("f2", "BLOB"),
        field("f3", "STRING"),
    ]
    .join(", ");
    rejected(
        create(&blob4, &[], &[], r#""row-tracking.enabled": "true""#),
        "Data evolution config must enabled for table with BLOB, ARRAY<BLOB> or MAP<X, BLOB> \
         type column.",
    );
    // Inline descriptor columns count as BLOB columns here too.
    rejected(
        create(&blob4, &[], &[], r#""blob-descriptor-field": "f2""#),
        "Data evolution config must enabled for table with BLOB",
    );
    rejected(
        create(&blob4, &[], &[], r#""data-evolution.enabled": "true""#),
        "Data evolution config must enabled with row-tracking.enabled",
    );
    rejected(
        create(&blob4, &[], &["f2"], de),
        "The BLOB, ARRAY<BLOB> or MAP<X, BLOB> type column can not be part of partition keys.",
    );
    rejected(
        create(&field("f2", "BLOB"), &[], &[], de),
        "Table with BLOB, ARRAY<BLOB> or MAP<X, BLOB> type column must have other normal columns.",
    );
    ok(create(&blob4, &[], &["f1"], de));
    for ty in ["MAP<STRING, BLOB>", "MAP<BOOLEAN, BLOB>", "ARRAY<BLOB>"] {
        ok(create(
            &format!("{}, {}", field("id", "INT"), field("payloads", ty)),
            &[],
            &[],
            &format!(r#"{de}, "blob-field": "payloads""#),
        ));
    }
    // Primary-key tables: no data evolution needed, the other two rules hold.
    rejected(
        create(
            &format!("{}, {}", field("id", "INT"), field("p", "BLOB")),
            &["id", "p"],
            &["p"],
            r#""bucket": "1", "blob-descriptor-field": "p""#,
        ),
        "can not be part of partition keys",
    );
}

#[test]
fn tables_without_blobs_are_untouched() {
    ok(create(
        &[field("id", "INT"), field("v", "STRING")].join(", "),
        &["id"],
        &[],
        r#""bucket": "1", "merge-engine": "aggregation", "changelog-producer": "lookup",
           "data-file.external-paths": "", "pk-clustering-override": "true""#,
    ));
}

// Alter revalidates.

#[test]
fn alter_revalidates_blob_rules() {
    let s = ok(pk_blob(""));
    let set = |key: &str, value: &str| SchemaChange::SetOption {
        key: key.into(),
        value: value.into(),
    };
    let e = apply_schema_changes(&s, &[set("merge-engine", "aggregation")], false, 1);
    rejected(
        e,
        "only support the deduplicate, partial-update or first-row merge engine",
    );
    let e = apply_schema_changes(&s, &[set("data-file.external-paths", "")], false, 1);
    rejected(e, "do not support 'data-file.external-paths'");
    // Making the column a descriptor column lifts the managed rules.
    let altered = apply_schema_changes(
        &s,
        &[
            set("blob-descriptor-field", "payload"),
            set("merge-engine", "aggregation"),
        ],
        false,
        1,
    );
    assert!(managed_blob_fields(&ok(altered)).is_empty());
}

#[test]
fn java_split_drops_trailing_empty_strings_only() {
    assert_eq!(java_split(""), [""]);
    assert_eq!(java_split(","), Vec::<&str>::new());
    assert_eq!(java_split("a,,"), ["a"]);
    assert_eq!(java_split(",a"), ["", "a"]);
    assert_eq!(java_split("a, "), ["a", " "]);
}

/// The schemas of the managed-BLOB tables pypaimon-rust 0.4.0 wrote
/// (`conformance/managed-blob/tables/mb.db/*/schema/schema-0`), as create JSON: all valid.
#[test]
fn schemas_of_pypaimon_rust_managed_blob_tables_validate() {
    let base = [field("id", "INT NOT NULL"), field("v", "STRING")].join(", ");
    /// (extra fields, primary keys, partition keys, options, managed field count)
    type Case<'a> = (&'a str, &'a [&'a str], &'a [&'a str], &'a str, usize);
    let cases: [Case<'_>; 12] = [
        (
            r#", {"name": "a", "type": {"type": "ARRAY", "element": "BLOB"}},
               {"name": "mi", "type": {"type": "MAP", "key": "INT NOT NULL", "value": "BLOB"}},
               {"name": "ms", "type": {"type": "MAP", "key": "STRING NOT NULL", "value": "BLOB"}}"#,
            &["id"],
            &[],
            r#""bucket": "1""#,
            3,
        ),
        (
            r#", {"name": "score", "type": "BIGINT"}, {"name": "payload", "type": "BLOB"}"#,
            &["id"],
            &[],
            r#""bucket": "2""#,
            1,
        ),
        (
            r#", {"name": "m", "type": "BLOB"}, {"name": "d", "type": "BLOB"}"#,
            &["id"],
            &[],
            r#""blob-descriptor-field": "d", "bucket": "1""#,
            1,
        ),
        (
            r#", {"name": "b", "type": "BLOB"}"#,
            &["id"],
            &[],
            r#""bucket": "-1""#,
            1,
        ),
        (
            r#", {"name": "b", "type": "BLOB"}"#,
            &["id"],
            &[],
            r#""bucket": "1", "merge-engine": "first-row""#,
            1,
        ),
        (
            r#", {"name": "b", "type": "BLOB"}"#,
            &["id"],
            &[],
            r#""bucket": "1", "file.format": "avro""#,
            1,
        ),
        (
            r#", {"name": "b", "type": "BLOB"}"#,
            &["id"],
            &[],
            r#""bucket": "1", "file.compression": "none", "file.format": "orc""#,
            1,
        ),
        (
            r#", {"name": "n", "type": "INT"}, {"name": "b", "type": "BLOB"}"#,
            &["id"],
            &[],
            r#""bucket": "1", "merge-engine": "partial-update""#,
            1,
        ),
        (
            r#", {"name": "g", "type": "INT"}, {"name": "b", "type": "BLOB"}"#,
            &["id"],
            &[],
            r#""fields.b.aggregate-function": "last_value", "bucket": "1",
               "fields.g.sequence-group": "b", "merge-engine": "partial-update""#,
            1,
        ),
        (
            r#", {"name": "dt", "type": "STRING NOT NULL"}, {"name": "b", "type": "BLOB"}"#,
            &["dt", "id"],
            &["dt"],
            r#""bucket": "2""#,
            1,
        ),
        (
            r#", {"name": "b", "type": "BLOB"}"#,
            &["id"],
            &[],
            r#""bucket": "1""#,
            1,
        ),
        (
            r#", {"name": "b1", "type": "BLOB"}, {"name": "b2", "type": "BLOB"}"#,
            &["id"],
            &[],
            r#""blob.target-file-size": "2 kb", "bucket": "1""#,
            2,
        ),
    ];
    for (extra, pk, partition, options, managed) in cases {
        let s = ok(create(&format!("{base}{extra}"), pk, partition, options));
        assert_eq!(managed_blob_fields(&s).len(), managed, "{extra}");
    }
}
