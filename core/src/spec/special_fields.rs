//! System fields: the columns Paimon adds to a table's own (`_KEY_<name>`, `_SEQUENCE_NUMBER`,
//! `_VALUE_KIND`, `_ROW_ID`), their names and field ids, and the input column that gives a
//! written row's kind. Every layer takes them from here.
//!
//! Source: Java `org.apache.paimon.table.SpecialFields`.

use crate::spec::{DataField, DataType, TypeKind};

/// Java `SpecialFields.SYSTEM_FIELD_ID_START` (`Integer.MAX_VALUE / 2`): a field id at or above
/// it is a system field; ids of `_KEY_` columns are this plus the field id.
pub const SYSTEM_FIELD_ID_START: i32 = i32::MAX / 2;
/// Name prefix of the key columns of primary-key files (Java `SpecialFields.KEY_FIELD_PREFIX`).
pub const KEY_FIELD_PREFIX: &str = "_KEY_";
/// Field id offset of the `_KEY_<name>` columns of key-value files (Java
/// `SpecialFields.KEY_FIELD_ID_START`, equal to [`SYSTEM_FIELD_ID_START`]).
pub const KEY_FIELD_ID_START: i32 = SYSTEM_FIELD_ID_START;

/// Name of the sequence-number system column of key-value files and row-tracking tables
/// (Java `SpecialFields.SEQUENCE_NUMBER`).
pub const SEQUENCE_NUMBER: &str = "_SEQUENCE_NUMBER";
/// Field id of `_SEQUENCE_NUMBER` (`Integer.MAX_VALUE - 1`).
pub const SEQUENCE_NUMBER_FIELD_ID: i32 = i32::MAX - 1;
/// Name of the value-kind system column of key-value files (Java `SpecialFields.VALUE_KIND`).
pub const VALUE_KIND: &str = "_VALUE_KIND";
/// Field id of `_VALUE_KIND` (`Integer.MAX_VALUE - 2`).
pub const VALUE_KIND_FIELD_ID: i32 = i32::MAX - 2;
/// Name of the level system field (Java `SpecialFields.LEVEL`).
pub const LEVEL: &str = "_LEVEL";
/// Name of the row-kind system field of Java's audit-log table (Java `SpecialFields.ROW_KIND`).
pub const ROW_KIND: &str = "rowkind";
/// Name of the row-id system column of row-tracking tables (Java `SpecialFields.ROW_ID`).
pub const ROW_ID: &str = "_ROW_ID";
/// Field id of `_ROW_ID` (`Integer.MAX_VALUE - 5`).
pub const ROW_ID_FIELD_ID: i32 = i32::MAX - 5;

/// The names of the system fields (Java `SpecialFields.SYSTEM_FIELD_NAMES`).
pub const SYSTEM_FIELD_NAMES: [&str; 5] = [SEQUENCE_NUMBER, VALUE_KIND, LEVEL, ROW_KIND, ROW_ID];

/// Name of the optional input column of a write that gives each row's kind (`+I`, `-U`, `+U`,
/// `-D`; a Utf8 column, or Int8 with the `_VALUE_KIND` bytes 0..=3). Rows without it are
/// inserts. Not a Java system field: Java's engines carry the kind in the row itself.
pub const ROW_KIND_COLUMN: &str = "_ROW_KIND";

/// True for a `_KEY_` column or a system field name (Java `SpecialFields.isSystemField`).
pub fn is_system_field(name: &str) -> bool {
    name.starts_with(KEY_FIELD_PREFIX) || SYSTEM_FIELD_NAMES.contains(&name)
}

/// The two columns a compaction of a row-tracking table writes after the table's fields:
/// `_ROW_ID` and `_SEQUENCE_NUMBER`, both `BIGINT NOT NULL`, with their system field ids.
///
/// Source: Java `SpecialFields.rowTypeWithRowTracking(rowType)` (the write type Java's
/// compactors set on row-tracking tables).
pub fn row_tracking_fields() -> [DataField; 2] {
    [
        DataField::new(
            ROW_ID_FIELD_ID,
            ROW_ID,
            DataType::not_null(TypeKind::BigInt),
        ),
        DataField::new(
            SEQUENCE_NUMBER_FIELD_ID,
            SEQUENCE_NUMBER,
            DataType::not_null(TypeKind::BigInt),
        ),
    ]
}

/// The fields of a key-value (primary-key) data file: each key field as `_KEY_<name>` (id
/// [`KEY_FIELD_ID_START`] plus its id, NOT NULL), `_SEQUENCE_NUMBER BIGINT NOT NULL`,
/// `_VALUE_KIND TINYINT NOT NULL`, then the value fields as they are.
///
/// Source: Java `org.apache.paimon.KeyValue.createKeyValueFields` (with
/// `SpecialFields.SEQUENCE_NUMBER`, `SpecialFields.VALUE_KIND`).
pub fn key_value_fields(key_fields: &[DataField], value_fields: &[DataField]) -> Vec<DataField> {
    let mut fields: Vec<DataField> = key_fields
        .iter()
        .map(|f| {
            DataField::new(
                KEY_FIELD_ID_START + f.id,
                format!("{KEY_FIELD_PREFIX}{}", f.name),
                f.data_type.with_nullable(false),
            )
        })
        .collect();
    fields.push(DataField::new(
        SEQUENCE_NUMBER_FIELD_ID,
        SEQUENCE_NUMBER,
        DataType::not_null(TypeKind::BigInt),
    ));
    fields.push(DataField::new(
        VALUE_KIND_FIELD_ID,
        VALUE_KIND,
        DataType::not_null(TypeKind::TinyInt),
    ));
    fields.extend(value_fields.iter().cloned());
    fields
}
