//! Paimon data types.
//!
//! Source: Java `org.apache.paimon.types.DataType` and its subclasses, `DataField`.
//! JSON and SQL-string forms per `spec/table-layout.md` §2.1-2.2.

use serde::{Deserialize, Serialize};

/// A Paimon data type with its nullability.
///
/// Source: Java `org.apache.paimon.types.DataType`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DataType {
    /// `false` for `NOT NULL`.
    pub nullable: bool,
    /// The type proper.
    pub kind: TypeKind,
}

/// The kind of a [`DataType`], with its parameters.
///
/// Source: Java `org.apache.paimon.types.DataTypeRoot` and the `*Type` classes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TypeKind {
    /// `BOOLEAN`
    Boolean,
    /// `TINYINT` (i8)
    TinyInt,
    /// `SMALLINT` (i16)
    SmallInt,
    /// `INT` (i32)
    Int,
    /// `BIGINT` (i64)
    BigInt,
    /// `FLOAT` (f32)
    Float,
    /// `DOUBLE` (f64)
    Double,
    /// `DECIMAL(precision, scale)`, precision 1..=38.
    Decimal {
        /// Total digits.
        precision: u32,
        /// Fraction digits.
        scale: u32,
    },
    /// `CHAR(length)`
    Char {
        /// Length in characters.
        length: u32,
    },
    /// `VARCHAR(length)`; `STRING` is `VARCHAR(2147483647)`.
    VarChar {
        /// Max length in characters.
        length: u32,
    },
    /// `BINARY(length)`
    Binary {
        /// Length in bytes.
        length: u32,
    },
    /// `VARBINARY(length)`; `BYTES` is `VARBINARY(2147483647)`.
    VarBinary {
        /// Max length in bytes.
        length: u32,
    },
    /// `DATE` (days since 1970-01-01).
    Date,
    /// `TIME(precision)` (millis of day in storage).
    Time {
        /// Fraction digits of seconds, 0..=9.
        precision: u32,
    },
    /// `TIMESTAMP(precision)` without time zone.
    Timestamp {
        /// Fraction digits of seconds, 0..=9.
        precision: u32,
    },
    /// `TIMESTAMP(precision) WITH LOCAL TIME ZONE` (pypaimon: `TIMESTAMP_LTZ(p)`).
    LocalZonedTimestamp {
        /// Fraction digits of seconds, 0..=9.
        precision: u32,
    },
    /// `VARIANT` (semi-structured; Parquet variant `value` + `metadata` bytes).
    Variant,
    /// `BLOB` (large binary stored in `.blob` files on data-evolution tables).
    Blob,
    /// `ARRAY<element>`
    Array(Box<DataType>),
    /// `MULTISET<element>`
    Multiset(Box<DataType>),
    /// `MAP<key, value>`
    Map(Box<DataType>, Box<DataType>),
    /// `ROW<fields>`
    Row(Vec<DataField>),
    /// `VECTOR<element, length>`
    Vector {
        /// Element type.
        element: Box<DataType>,
        /// Number of elements.
        length: u32,
    },
    /// `GEOMETRY(...)` / `GEOGRAPHY(...)` and other types kept as their SQL string; reading
    /// them is unsupported, but schemas holding them still parse.
    Other(String),
}

/// A named field with its id.
///
/// Source: Java `org.apache.paimon.types.DataField`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DataField {
    /// Field id, stable across renames.
    pub id: i32,
    /// Field name.
    pub name: String,
    /// Field type.
    pub data_type: DataType,
    /// `description` in the JSON.
    pub description: Option<String>,
    /// `defaultValue` in the JSON.
    pub default_value: Option<String>,
}

impl DataType {
    /// A nullable type of `kind`.
    pub fn nullable(kind: TypeKind) -> Self {
        DataType {
            nullable: true,
            kind,
        }
    }

    /// A `NOT NULL` type of `kind`.
    pub fn not_null(kind: TypeKind) -> Self {
        DataType {
            nullable: false,
            kind,
        }
    }

    /// The same type with nullability `nullable`.
    pub fn with_nullable(&self, nullable: bool) -> Self {
        DataType {
            nullable,
            kind: self.kind.clone(),
        }
    }
}
