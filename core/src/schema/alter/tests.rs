use super::*;
use crate::io::{IoOp, MemoryStore, Step};
use crate::schema::create::new_table_schema;
use crate::spec::decode_schema;

fn ty(s: &str) -> DataType {
    DataType::parse_sql(s).unwrap()
}

/// `k INT` (pk), `p STRING` (partition), `v INT`, `s STRING`; bucket 2.
fn pk_table() -> TableSchema {
    new_table_schema(
        br#"{"fields": [
            {"name": "k", "type": "INT"}, {"name": "p", "type": "STRING"},
            {"name": "v", "type": "INT"}, {"name": "s", "type": "STRING"}],
          "primaryKeys": ["k", "p"], "partitionKeys": ["p"],
          "options": {"bucket": "2", "sequence.field": "v", "bucket-key": "k",
                      "fields.s.aggregate-function": "max",
                      "fields.v,s.sequence-group": "s,v"}}"#,
        1,
    )
    .unwrap()
}

fn append_table() -> TableSchema {
    new_table_schema(
        br#"{"fields": [{"name": "a", "type": "INT"}, {"name": "b", "type": "STRING"},
                        {"name": "p", "type": "STRING"}],
             "partitionKeys": ["p"]}"#,
        1,
    )
    .unwrap()
}

fn apply(
    schema: &TableSchema,
    changes: &[SchemaChange],
    has_snapshots: bool,
) -> Result<TableSchema> {
    apply_schema_changes(schema, changes, has_snapshots, 99)
}

fn err(schema: &TableSchema, changes: &[SchemaChange], has_snapshots: bool) -> String {
    apply(schema, changes, has_snapshots)
        .unwrap_err()
        .to_string()
}

fn names(s: &TableSchema) -> Vec<&str> {
    s.field_names()
}

#[test]
fn add_column_takes_the_next_ids_and_its_position() {
    let old = append_table();
    assert_eq!(old.highest_field_id, 2);
    let new = apply(
        &old,
        &[
            SchemaChange::add_column("c", ty("BIGINT")),
            SchemaChange::AddColumn {
                name: "first".into(),
                data_type: ty("STRING"),
                description: Some("hi".into()),
                position: Some(ColumnMove::First),
            },
            SchemaChange::AddColumn {
                name: "after_a".into(),
                data_type: ty("ROW<x INT, y ROW<z INT>>"),
                description: None,
                position: Some(ColumnMove::After("a".into())),
            },
            SchemaChange::AddColumn {
                name: "before_b".into(),
                data_type: ty("DATE"),
                description: None,
                position: Some(ColumnMove::Before("b".into())),
            },
        ],
        false,
    )
    .unwrap();
    assert_eq!(
        names(&new),
        ["first", "a", "after_a", "before_b", "b", "p", "c"]
    );
    assert_eq!(new.id, 1);
    assert_eq!(new.time_millis, 99);
    assert_eq!(new.field("c").unwrap().id, 3);
    assert_eq!(new.field("first").unwrap().id, 4);
    assert_eq!(
        new.field("first").unwrap().description.as_deref(),
        Some("hi")
    );
    // Java's ReassignFieldId: the column first, then each nested field after its own
    // nested fields.
    let row = new.field("after_a").unwrap();
    assert_eq!(row.id, 5);
    let nested = row.data_type.row_fields().unwrap();
    assert_eq!((nested[0].name.as_str(), nested[0].id), ("x", 6));
    assert_eq!((nested[1].name.as_str(), nested[1].id), ("y", 8));
    assert_eq!(nested[1].data_type.row_fields().unwrap()[0].id, 7);
    assert_eq!(new.field("before_b").unwrap().id, 9);
    assert_eq!(new.highest_field_id, 9);
    assert_eq!(new.version, 3);
}

#[test]
fn add_column_before_partition_when_the_table_says_so() {
    let mut old = append_table();
    old.options
        .insert("add-column-before-partition".into(), "true".into());
    let new = apply(&old, &[SchemaChange::add_column("c", ty("INT"))], true).unwrap();
    assert_eq!(names(&new), ["a", "b", "c", "p"]);
}

#[test]
fn add_column_rejections() {
    let old = append_table();
    let e = err(
        &old,
        &[SchemaChange::add_column("c", ty("INT NOT NULL"))],
        false,
    );
    assert!(e.contains("'c'") && e.contains("NOT NULL"), "{e}");
    let e = err(&old, &[SchemaChange::add_column("a", ty("INT"))], false);
    assert!(e.contains("'a' already exists"), "{e}");
    let e = err(
        &old,
        &[SchemaChange::AddColumn {
            name: "c".into(),
            data_type: ty("INT"),
            description: None,
            position: Some(ColumnMove::After("nope".into())),
        }],
        false,
    );
    assert!(e.contains("'nope' does not exist"), "{e}");
}

#[test]
fn rename_keeps_the_id_and_follows_keys_and_options() {
    let old = pk_table();
    let new = apply(
        &old,
        &[
            SchemaChange::rename_column("k", "key"),
            SchemaChange::rename_column("v", "val"),
            SchemaChange::rename_column("s", "str"),
        ],
        true,
    )
    .unwrap();
    assert_eq!(names(&new), ["key", "p", "val", "str"]);
    assert_eq!(new.field("key").unwrap().id, old.field("k").unwrap().id);
    assert_eq!(new.primary_keys, ["key", "p"]);
    assert_eq!(new.partition_keys, ["p"]);
    let o = &new.options;
    assert_eq!(o["bucket-key"], "key");
    assert_eq!(o["sequence.field"], "val");
    assert_eq!(o["fields.str.aggregate-function"], "max");
    assert!(!o.contains_key("fields.s.aggregate-function"));
    assert_eq!(o["fields.val,str.sequence-group"], "str,val");
    assert!(!o.contains_key("fields.v,s.sequence-group"));
}

#[test]
fn rename_rejections() {
    let old = pk_table();
    let e = err(&old, &[SchemaChange::rename_column("p", "q")], false);
    assert!(e.contains("partition column 'p'"), "{e}");
    let e = err(&old, &[SchemaChange::rename_column("v", "s")], false);
    assert!(e.contains("'s' already exists"), "{e}");
    let e = err(&old, &[SchemaChange::rename_column("x", "y")], false);
    assert!(
        e.contains("'x' does not exist") && e.contains("\"k\""),
        "{e}"
    );
}

#[test]
fn drop_rules() {
    let old = append_table();
    let new = apply(&old, &[SchemaChange::drop_column("b")], true).unwrap();
    assert_eq!(names(&new), ["a", "p"]);
    assert_eq!(new.highest_field_id, 2, "dropped ids are not reused");
    let e = err(&old, &[SchemaChange::drop_column("p")], false);
    assert!(e.contains("'p'") && e.contains("partition key"), "{e}");
    let pk = pk_table();
    let e = err(&pk, &[SchemaChange::drop_column("k")], false);
    assert!(e.contains("'k'") && e.contains("primary key"), "{e}");
    // sequence.field still names it: the new schema does not validate.
    let e = err(&pk, &[SchemaChange::drop_column("v")], false);
    assert!(e.contains("sequence.field"), "{e}");
    let one = new_table_schema(br#"{"fields": [{"name": "a", "type": "INT"}]}"#, 0).unwrap();
    let e = err(&one, &[SchemaChange::drop_column("a")], false);
    assert!(e.contains("at least one column"), "{e}");
    // Dropped then added again: a new id.
    let new = apply(
        &old,
        &[
            SchemaChange::drop_column("b"),
            SchemaChange::add_column("b", ty("STRING")),
        ],
        true,
    )
    .unwrap();
    assert_eq!(new.field("b").unwrap().id, 3);
}

#[test]
fn type_changes_follow_javas_casts() {
    let old = append_table();
    // Widening and to-string casts.
    for (to, want) in [
        ("BIGINT", "BIGINT"),
        ("STRING", "STRING"),
        ("DOUBLE", "DOUBLE"),
        ("DECIMAL(12, 2)", "DECIMAL(12, 2)"),
    ] {
        let new = apply(&old, &[SchemaChange::update_column_type("a", ty(to))], true).unwrap();
        assert_eq!(new.field("a").unwrap().data_type.to_string(), want);
        assert_eq!(new.field("a").unwrap().id, 0);
    }
    // Explicit casts are allowed unless disable-explicit-type-casting.
    let new = apply(
        &old,
        &[SchemaChange::update_column_type("a", ty("SMALLINT"))],
        true,
    )
    .unwrap();
    assert_eq!(new.field("a").unwrap().data_type, ty("SMALLINT"));
    let mut strict = old.clone();
    strict
        .options
        .insert("disable-explicit-type-casting".into(), "true".into());
    let e = err(
        &strict,
        &[SchemaChange::update_column_type("a", ty("SMALLINT"))],
        true,
    );
    assert!(
        e.contains("'a'") && e.contains("INT") && e.contains("SMALLINT"),
        "{e}"
    );
    // Not a cast Paimon knows: both types named.
    let e = err(
        &old,
        &[SchemaChange::update_column_type("a", ty("DATE"))],
        false,
    );
    assert!(e.contains("column 'a' from INT to DATE"), "{e}");
    let e = err(
        &old,
        &[SchemaChange::update_column_type("a", ty("ARRAY<INT>"))],
        false,
    );
    assert!(e.contains("from INT to ARRAY<INT>"), "{e}");
    // Keys cannot change type.
    let e = err(
        &old,
        &[SchemaChange::update_column_type("p", ty("INT"))],
        false,
    );
    assert!(e.contains("'p'") && e.contains("partition key"), "{e}");
    let e = err(
        &pk_table(),
        &[SchemaChange::update_column_type("k", ty("BIGINT"))],
        false,
    );
    assert!(e.contains("'k'") && e.contains("primary key"), "{e}");
}

#[test]
fn type_changes_this_reader_cannot_apply_are_unsupported_once_there_is_data() {
    // Java casts TIMESTAMP(3) to STRING on read (TimestampToStringCastRule); so does this reader.
    let ts =
        new_table_schema(br#"{"fields": [{"name": "t", "type": "TIMESTAMP(3)"}]}"#, 0).unwrap();
    let change = [SchemaChange::update_column_type("t", ty("STRING"))];
    assert!(apply(&ts, &change, true).is_ok());
    // ARRAY<VARIANT> to STRING: Java accepts the change (ArrayToStringCastRule) but has no
    // cast of a VARIANT element to STRING; with data files this reader refuses it.
    let arr = new_table_schema(
        br#"{"fields": [{"name": "a", "type": "ARRAY<VARIANT>"}]}"#,
        0,
    )
    .unwrap();
    let change = [SchemaChange::update_column_type("a", ty("STRING"))];
    // Without data files there is nothing to convert.
    assert!(apply(&arr, &change, false).is_ok());
    let e = apply(&arr, &change, true).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    assert!(
        e.to_string().contains("'a' from ARRAY<VARIANT> to STRING"),
        "{e}"
    );
}

#[test]
fn nullability_rules() {
    let old = new_table_schema(
        br#"{"fields": [{"name": "k", "type": "INT"}, {"name": "n", "type": "INT NOT NULL"},
                        {"name": "v", "type": "INT"}], "primaryKeys": ["k"],
             "options": {"bucket": "1"}}"#,
        0,
    )
    .unwrap();
    // The type's nullability is taken unless keep_nullability.
    let new = apply(
        &old,
        &[SchemaChange::update_column_type("n", ty("BIGINT"))],
        true,
    )
    .unwrap();
    assert_eq!(new.field("n").unwrap().data_type, ty("BIGINT"));
    let new = apply(
        &old,
        &[SchemaChange::UpdateColumnType {
            name: "n".into(),
            data_type: ty("BIGINT"),
            keep_nullability: true,
        }],
        true,
    )
    .unwrap();
    assert_eq!(new.field("n").unwrap().data_type, ty("BIGINT NOT NULL"));
    let e = err(
        &old,
        &[SchemaChange::update_column_type("v", ty("BIGINT NOT NULL"))],
        true,
    );
    assert!(
        e.contains("'v'") && e.contains("alter-column-null-to-not-null.disabled"),
        "{e}"
    );
    let not_null = [SchemaChange::UpdateColumnNullability {
        name: "v".into(),
        nullable: false,
    }];
    assert!(err(&old, &not_null, true).contains("nullable to NOT NULL"));
    let mut lenient = old.clone();
    lenient.options.insert(
        "alter-column-null-to-not-null.disabled".into(),
        "false".into(),
    );
    let new = apply(&lenient, &not_null, true).unwrap();
    assert!(!new.field("v").unwrap().data_type.nullable);
    let e = err(
        &old,
        &[SchemaChange::UpdateColumnNullability {
            name: "k".into(),
            nullable: true,
        }],
        true,
    );
    assert!(e.contains("primary key column 'k'"), "{e}");
}

#[test]
fn option_rules_with_and_without_snapshots() {
    let old = pk_table();
    let set = |k: &str, v: &str| [SchemaChange::set_option(k, v)];
    // Immutable options: only before the first snapshot.
    let e = err(&old, &set("merge-engine", "partial-update"), true);
    assert!(e.contains("'merge-engine'"), "{e}");
    let new = apply(&old, &set("merge-engine", "first-row"), false).unwrap();
    assert_eq!(new.options["merge-engine"], "first-row");
    let e = err(&old, &[SchemaChange::remove_option("bucket-key")], true);
    assert!(e.contains("'bucket-key'"), "{e}");
    // bucket: not from or to -1, never reset.
    let new = apply(&old, &set("bucket", "4"), true).unwrap();
    assert_eq!(new.options["bucket"], "4");
    assert!(err(&old, &set("bucket", "-1"), true).contains("to -1"));
    assert!(err(&old, &[SchemaChange::remove_option("bucket")], true).contains("reset"));
    let unaware = append_table();
    assert!(err(&unaware, &set("bucket", "3"), true).contains("when it is -1"));
    // Deletion vectors, ignore-delete.
    assert!(
        err(&old, &set("deletion-vectors.enabled", "true"), true)
            .contains("deletion-vectors.modifiable")
    );
    let mut dv = old.clone();
    dv.options
        .insert("deletion-vectors.modifiable".into(), "true".into());
    assert!(apply(&dv, &set("deletion-vectors.enabled", "true"), true).is_ok());
    let mut ignoring = old.clone();
    ignoring
        .options
        .insert("ignore-delete".into(), "true".into());
    assert!(err(&ignoring, &set("ignore-delete", "false"), true).contains("true to false"));
    // 'type' never changes; 'primary-key' set to the current keys is a no-op.
    assert!(err(&old, &set("type", "format-table"), false).contains("'type'"));
    assert!(apply(&old, &set("type", "TABLE"), true).is_ok());
    let same = apply(&old, &set("primary-key", "k, p"), true).unwrap();
    assert_eq!(same.primary_keys, ["k", "p"]);
    assert!(!same.options.contains_key("primary-key"));
    // Plain options, set and reset.
    let new = apply(
        &old,
        &[
            SchemaChange::set_option("snapshot.num-retained.max", "5"),
            SchemaChange::remove_option("fields.s.aggregate-function"),
        ],
        true,
    )
    .unwrap();
    assert_eq!(new.options["snapshot.num-retained.max"], "5");
    assert!(!new.options.contains_key("fields.s.aggregate-function"));
}

#[test]
fn primary_key_option_on_an_empty_append_table_makes_it_a_pk_table() {
    let old = new_table_schema(
        br#"{"fields": [{"name": "a", "type": "INT"}, {"name": "b", "type": "STRING"}]}"#,
        0,
    )
    .unwrap();
    let new = apply(
        &old,
        &[
            SchemaChange::set_option("primary-key", "a"),
            SchemaChange::set_option("bucket", "1"),
        ],
        false,
    )
    .unwrap();
    assert_eq!(new.primary_keys, ["a"]);
    assert!(!new.field("a").unwrap().data_type.nullable);
    let e = err(&old, &[SchemaChange::set_option("primary-key", "a")], true);
    assert!(e.contains("'primary-key'"), "{e}");
}

#[test]
fn moves_and_comments() {
    let old = append_table();
    let new = apply(
        &old,
        &[
            SchemaChange::UpdateColumnPosition {
                name: "p".into(),
                position: ColumnMove::First,
            },
            SchemaChange::UpdateColumnPosition {
                name: "a".into(),
                position: ColumnMove::After("b".into()),
            },
            SchemaChange::UpdateColumnComment {
                name: "b".into(),
                comment: Some("bee".into()),
            },
            SchemaChange::UpdateComment {
                comment: Some("table".into()),
            },
        ],
        true,
    )
    .unwrap();
    assert_eq!(names(&new), ["p", "b", "a"]);
    assert_eq!(new.field("b").unwrap().description.as_deref(), Some("bee"));
    assert_eq!(new.comment.as_deref(), Some("table"));
    let e = err(
        &old,
        &[SchemaChange::UpdateColumnPosition {
            name: "a".into(),
            position: ColumnMove::First,
        }],
        true,
    );
    assert!(e.contains("itself"), "{e}");
}

fn store_with(schema: &TableSchema) -> MemoryStore {
    let mut store = MemoryStore::new();
    store.objects.insert(
        schema_path(schema.id),
        encode_schema(schema).unwrap().into(),
    );
    store
}

#[test]
fn machine_writes_the_next_schema_file() {
    let mut store = store_with(&append_table());
    let out = store
        .run(alter_table_machine(
            vec![SchemaChange::add_column("c", ty("INT"))],
            7,
        ))
        .unwrap();
    assert_eq!(out.len(), 1);
    let written = decode_schema(&store.objects["schema/schema-1"], "schema-1").unwrap();
    assert_eq!(written, out[0]);
    assert_eq!(written.time_millis, 7);
    assert_eq!(names(&written), ["a", "b", "p", "c"]);
    // No table: an error, nothing written.
    let mut empty = MemoryStore::new();
    let e = empty
        .run(alter_table_machine(vec![SchemaChange::drop_column("a")], 0))
        .unwrap_err();
    assert!(e.to_string().contains("no table"), "{e}");
    assert!(empty.objects.is_empty());
}

#[test]
fn machine_retries_on_the_new_latest_schema_after_losing_the_race() {
    let old = append_table();
    let mut store = store_with(&old);
    // Another writer's schema 1 lands between our read and our Put.
    let theirs = apply(
        &old,
        &[SchemaChange::add_column("theirs", ty("INT"))],
        false,
    )
    .unwrap();
    let mut machine = alter_table_machine(vec![SchemaChange::add_column("ours", ty("INT"))], 5);
    let mut raced = false;
    let mut puts = Vec::new();
    let mut out = Vec::new();
    loop {
        match machine.step().unwrap() {
            Step::NeedIo(round) => {
                for req in round {
                    if let IoOp::Put { path, .. } = &req.op {
                        puts.push(path.clone());
                        if !raced {
                            raced = true;
                            store
                                .objects
                                .insert(schema_path(1), encode_schema(&theirs).unwrap().into());
                        }
                    }
                    let answer = store.answer(&req.op);
                    machine.provide(req.id, answer).unwrap();
                }
            }
            Step::Emit(s) => out.push(s),
            Step::Done => break,
            Step::Work(_) | Step::Wait => unreachable!(),
        }
    }
    assert_eq!(puts, ["schema/schema-1", "schema/schema-2"]);
    let written = decode_schema(&store.objects["schema/schema-2"], "schema-2").unwrap();
    assert_eq!(names(&written), ["a", "b", "p", "theirs", "ours"]);
    assert_eq!(written.field("ours").unwrap().id, 4);
    assert_eq!(out, vec![written]);
}

#[test]
fn option_checks_read_whether_a_snapshot_exists() {
    let old = pk_table();
    let mut store = store_with(&old);
    // No snapshot yet: an immutable option may change.
    store
        .run(alter_table_machine(
            vec![SchemaChange::set_option("merge-engine", "first-row")],
            0,
        ))
        .unwrap();
    store.objects.insert(
        "snapshot/snapshot-1".into(),
        bytes::Bytes::from_static(b"{}"),
    );
    store
        .objects
        .insert("snapshot/LATEST".into(), bytes::Bytes::from_static(b"1"));
    let e = store
        .run(alter_table_machine(
            vec![SchemaChange::set_option("merge-engine", "deduplicate")],
            0,
        ))
        .unwrap_err();
    assert!(e.to_string().contains("'merge-engine'"), "{e}");
    assert!(!store.objects.contains_key("schema/schema-2"));
}
