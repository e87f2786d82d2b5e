//! Paimon data types.
//!
//! Source: Java `org.apache.paimon.types.DataType` and its subclasses, `DataField`,
//! `DataTypeJsonParser`. JSON and SQL-string forms per `spec/table-layout.md` §2.1-2.2.
//!
//! * JSON (schema files): atomic types are SQL strings (`"INT NOT NULL"`, `"DECIMAL(10, 2)"`),
//!   nested types are objects (`{"type": "ARRAY", "element": ...}`). [`DataType`] implements
//!   `Serialize`/`Deserialize` in exactly that form; pypaimon's redundant `nullable` key on
//!   objects is ignored on read and not written.
//! * SQL strings ([`DataType::parse_sql`], `Display`): Java's `asSQLString`, e.g.
//!   `TIMESTAMP(3) WITH LOCAL TIME ZONE`, `ARRAY<INT NOT NULL>`, `MAP<STRING, INT>`,
//!   ``ROW<`a` INT, `b` STRING>``. The parser accepts everything Java's atomic-type tokenizer
//!   accepts (case-insensitive keywords, `STRING`, `BYTES`, `INTEGER`, `DEC`/`NUMERIC`,
//!   `TIMESTAMP_LTZ(p)`, `DOUBLE PRECISION`, `... WITHOUT TIME ZONE`, suffix `INT ARRAY`,
//!   explicit `NULL`) and, beyond Java's JSON parser, the nested `ARRAY<..>`, `MULTISET<..>`,
//!   `MAP<..>` and `ROW<..>` forms that `asSQLString` prints.

use std::fmt;

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::error::{Error, Result};

/// Largest length of `CHAR`/`VARCHAR`/`BINARY`/`VARBINARY` (Java `Integer.MAX_VALUE`);
/// `VARCHAR(MAX_LENGTH)` is `STRING`, `VARBINARY(MAX_LENGTH)` is `BYTES`.
pub const MAX_LENGTH: u32 = i32::MAX as u32;

/// Deepest nesting the SQL-string parser accepts (guards the stack against hostile input).
const MAX_NESTING: usize = 64;

/// A Paimon data type with its nullability.
///
/// Source: Java `org.apache.paimon.types.DataType`. Serializes to and from the Paimon schema
/// JSON form (table-layout.md §2.2); `Display` is Java's `asSQLString`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DataType {
    /// `false` for `NOT NULL`.
    pub nullable: bool,
    /// The type proper.
    pub kind: TypeKind,
}

/// The kind of a [`DataType`], with its parameters.
///
/// Source: Java `org.apache.paimon.types.DataTypeRoot` and the `*Type` classes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
    /// `DECIMAL(precision, scale)`, precision 1..=38, scale 0..=precision.
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
        /// Number of elements, >= 1.
        length: u32,
    },
    /// `GEOMETRY(...)` / `GEOGRAPHY(...)`, kept as Java's SQL string without `NOT NULL`
    /// (e.g. `GEOMETRY(OGC:CRS84)`, `GEOGRAPHY(OGC:CRS84, spherical)`); reading them is
    /// unsupported, but schemas holding them still parse and re-serialize.
    Other(String),
}

/// A named field with its id.
///
/// Source: Java `org.apache.paimon.types.DataField`. JSON:
/// `{"id": int, "name": string, "type": <type>, "description"?: string, "defaultValue"?: string}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DataField {
    /// Field id, stable across renames.
    pub id: i32,
    /// Field name.
    pub name: String,
    /// Field type.
    #[serde(rename = "type")]
    pub data_type: DataType,
    /// `description` in the JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `defaultValue` in the JSON.
    #[serde(
        default,
        rename = "defaultValue",
        skip_serializing_if = "Option::is_none"
    )]
    pub default_value: Option<String>,
}

impl DataField {
    /// A field without description or default value.
    pub fn new(id: i32, name: impl Into<String>, data_type: DataType) -> Self {
        DataField {
            id,
            name: name.into(),
            data_type,
            description: None,
            default_value: None,
        }
    }

    /// Parse the Paimon JSON form of a field.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming what is missing or unparsable.
    pub fn from_json(value: &Value) -> Result<Self> {
        let Value::Object(map) = value else {
            return Err(Error::invalid(format!(
                "data field must be an object: {value}"
            )));
        };
        let id = match map.get("id") {
            Some(Value::Number(n)) => n
                .as_i64()
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| Error::invalid(format!("data field id {n} is not an int")))?,
            Some(other) => {
                return Err(Error::invalid(format!(
                    "data field id must be a number, got {other}"
                )));
            }
            None => return Err(Error::invalid(format!("data field without id: {value}"))),
        };
        let name = match map.get("name") {
            Some(Value::String(s)) => s.clone(),
            _ => {
                return Err(Error::invalid(format!(
                    "data field {id} without a string name"
                )));
            }
        };
        let data_type = match map.get("type") {
            Some(t) => DataType::from_json(t)
                .map_err(|e| Error::invalid(format!("type of field '{name}' (id {id}): {e}")))?,
            None => return Err(Error::invalid(format!("data field '{name}' without type"))),
        };
        Ok(DataField {
            id,
            name,
            data_type,
            description: opt_text(map.get("description")),
            default_value: opt_text(map.get("defaultValue")),
        })
    }

    /// The Paimon JSON form of this field (Java `DataField.serializeJson`).
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("id".into(), Value::from(self.id));
        m.insert("name".into(), Value::from(self.name.clone()));
        m.insert("type".into(), self.data_type.to_json());
        if let Some(d) = &self.description {
            m.insert("description".into(), Value::from(d.clone()));
        }
        if let Some(d) = &self.default_value {
            m.insert("defaultValue".into(), Value::from(d.clone()));
        }
        Value::Object(m)
    }

    /// Java `DataField.asSQLString`: `` `name` TYPE [COMMENT '...'] [DEFAULT v] ``.
    pub fn sql_string(&self) -> String {
        let mut s = format!("`{}` {}", self.name.replace('`', "``"), self.data_type);
        if let Some(d) = self.description.as_deref().filter(|d| !d.is_empty()) {
            s.push_str(" COMMENT '");
            s.push_str(&d.replace('\'', "''"));
            s.push('\'');
        }
        if let Some(v) = &self.default_value {
            s.push_str(" DEFAULT ");
            s.push_str(v);
        }
        s
    }
}

/// A JSON node's text the way Jackson's `asText` gives it for the values we accept; `null`
/// and absent are `None`.
fn opt_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The field named `name` among `fields` (exact, case-sensitive match as in Java).
pub fn field_by_name<'a>(fields: &'a [DataField], name: &str) -> Option<&'a DataField> {
    fields.iter().find(|f| f.name == name)
}

/// The field with id `id` among `fields` (top level only).
pub fn field_by_id(fields: &[DataField], id: i32) -> Option<&DataField> {
    fields.iter().find(|f| f.id == id)
}

/// The field with id `id` among `fields` or nested in their `ROW` types (also inside arrays,
/// maps, multisets and vectors), depth first.
pub fn field_by_id_nested(fields: &[DataField], id: i32) -> Option<&DataField> {
    for f in fields {
        if f.id == id {
            return Some(f);
        }
        if let Some(found) = nested_field_by_id(&f.data_type, id) {
            return Some(found);
        }
    }
    None
}

fn nested_field_by_id(t: &DataType, id: i32) -> Option<&DataField> {
    match &t.kind {
        TypeKind::Row(fields) => field_by_id_nested(fields, id),
        TypeKind::Array(e) | TypeKind::Multiset(e) => nested_field_by_id(e, id),
        TypeKind::Vector { element, .. } => nested_field_by_id(element, id),
        TypeKind::Map(k, v) => nested_field_by_id(k, id).or_else(|| nested_field_by_id(v, id)),
        _ => None,
    }
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

    /// `CHAR`/`VARCHAR`/`STRING` (Java type family `CHARACTER_STRING`).
    pub fn is_string(&self) -> bool {
        matches!(self.kind, TypeKind::Char { .. } | TypeKind::VarChar { .. })
    }

    /// `BINARY`/`VARBINARY`/`BYTES` (Java type family `BINARY_STRING`; not `BLOB`).
    pub fn is_binary(&self) -> bool {
        matches!(
            self.kind,
            TypeKind::Binary { .. } | TypeKind::VarBinary { .. }
        )
    }

    /// `TINYINT`, `SMALLINT`, `INT`, `BIGINT`.
    pub fn is_integer(&self) -> bool {
        matches!(
            self.kind,
            TypeKind::TinyInt | TypeKind::SmallInt | TypeKind::Int | TypeKind::BigInt
        )
    }

    /// `BLOB`.
    pub fn is_blob(&self) -> bool {
        matches!(self.kind, TypeKind::Blob)
    }

    /// `ARRAY`, `MULTISET`, `MAP`, `ROW`, `VECTOR`.
    pub fn is_nested(&self) -> bool {
        matches!(
            self.kind,
            TypeKind::Array(_)
                | TypeKind::Multiset(_)
                | TypeKind::Map(..)
                | TypeKind::Row(_)
                | TypeKind::Vector { .. }
        )
    }

    /// The fields of a `ROW` type, `None` for other types.
    pub fn row_fields(&self) -> Option<&[DataField]> {
        match &self.kind {
            TypeKind::Row(f) => Some(f),
            _ => None,
        }
    }

    /// Parse a type from its SQL string (the atomic-type form of schema JSON, or any
    /// `asSQLString` output). Nested `ROW<..>` fields parsed from a string get ids 0, 1, 2, ...
    /// in order of appearance (outer fields before their nested fields), as Java assigns ids
    /// to id-less fields.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the input string, the position and the cause, e.g. for an
    /// unknown type name, a missing parameter or an out-of-range precision.
    pub fn parse_sql(input: &str) -> Result<Self> {
        let tokens = tokenize(input).map_err(|(pos, cause)| parse_error(input, pos, &cause))?;
        let mut p = Parser {
            tokens,
            pos: 0,
            next_field_id: 0,
            depth: 0,
        };
        let t = p
            .type_with_nullability()
            .map_err(|(pos, cause)| parse_error(input, pos, &cause))?;
        if let Some(tok) = p.tokens.get(p.pos) {
            return Err(parse_error(
                input,
                tok.at,
                &format!("unexpected token '{}'", tok.text),
            ));
        }
        Ok(t)
    }

    /// Parse the Paimon JSON form: a SQL string for atomic types, an object for `ARRAY`,
    /// `MULTISET`, `MAP`, `ROW` and `VECTOR` (recognized by the prefix of its `type` key;
    /// nullable unless that key contains `NOT NULL`; other keys such as pypaimon's
    /// `nullable` are ignored).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the unparsable string or object.
    pub fn from_json(value: &Value) -> Result<Self> {
        match value {
            Value::String(s) => Self::parse_sql(s),
            Value::Object(m) => {
                let Some(Value::String(t)) = m.get("type") else {
                    return Err(Error::invalid(format!(
                        "cannot parse data type {value}: object without a string 'type'"
                    )));
                };
                let nullable = !t.contains("NOT NULL");
                let child = |key: &str| -> Result<Box<DataType>> {
                    match m.get(key) {
                        Some(v) => Ok(Box::new(DataType::from_json(v)?)),
                        None => Err(Error::invalid(format!(
                            "cannot parse data type {t}: missing '{key}'"
                        ))),
                    }
                };
                let kind = if t.starts_with("ARRAY") {
                    TypeKind::Array(child("element")?)
                } else if t.starts_with("VECTOR") {
                    let element = child("element")?;
                    let length = m
                        .get("length")
                        .and_then(Value::as_i64)
                        .filter(|l| (1..=i64::from(i32::MAX)).contains(l))
                        .ok_or_else(|| {
                            Error::invalid(format!(
                                "cannot parse data type {value}: 'length' must be an int >= 1"
                            ))
                        })?;
                    TypeKind::Vector {
                        element,
                        length: length as u32,
                    }
                } else if t.starts_with("MULTISET") {
                    TypeKind::Multiset(child("element")?)
                } else if t.starts_with("MAP") {
                    TypeKind::Map(child("key")?, child("value")?)
                } else if t.starts_with("ROW") {
                    let Some(Value::Array(fields)) = m.get("fields") else {
                        return Err(Error::invalid(format!(
                            "cannot parse data type {t}: missing 'fields' array"
                        )));
                    };
                    TypeKind::Row(
                        fields
                            .iter()
                            .map(DataField::from_json)
                            .collect::<Result<Vec<_>>>()?,
                    )
                } else {
                    return Err(Error::invalid(format!(
                        "cannot parse data type: unknown nested type '{t}'"
                    )));
                };
                Ok(DataType { nullable, kind })
            }
            other => Err(Error::invalid(format!("cannot parse data type {other}"))),
        }
    }

    /// The Paimon JSON form (Java `DataType.serializeJson`): a string for atomic types, an
    /// object for nested types (without pypaimon's `nullable` key).
    pub fn to_json(&self) -> Value {
        let tag = |name: &str| {
            if self.nullable {
                Value::from(name)
            } else {
                Value::from(format!("{name} NOT NULL"))
            }
        };
        let mut m = serde_json::Map::new();
        match &self.kind {
            TypeKind::Array(e) => {
                m.insert("type".into(), tag("ARRAY"));
                m.insert("element".into(), e.to_json());
            }
            TypeKind::Multiset(e) => {
                m.insert("type".into(), tag("MULTISET"));
                m.insert("element".into(), e.to_json());
            }
            TypeKind::Map(k, v) => {
                m.insert("type".into(), tag("MAP"));
                m.insert("key".into(), k.to_json());
                m.insert("value".into(), v.to_json());
            }
            TypeKind::Row(fields) => {
                m.insert("type".into(), tag("ROW"));
                m.insert(
                    "fields".into(),
                    Value::Array(fields.iter().map(DataField::to_json).collect()),
                );
            }
            TypeKind::Vector { element, length } => {
                m.insert("type".into(), tag("VECTOR"));
                m.insert("element".into(), element.to_json());
                m.insert("length".into(), Value::from(*length));
            }
            _ => return Value::from(self.to_string()),
        }
        Value::Object(m)
    }

    /// Java's `asSQLString` (same as `Display`).
    pub fn sql_string(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            TypeKind::Boolean => f.write_str("BOOLEAN")?,
            TypeKind::TinyInt => f.write_str("TINYINT")?,
            TypeKind::SmallInt => f.write_str("SMALLINT")?,
            TypeKind::Int => f.write_str("INT")?,
            TypeKind::BigInt => f.write_str("BIGINT")?,
            TypeKind::Float => f.write_str("FLOAT")?,
            TypeKind::Double => f.write_str("DOUBLE")?,
            TypeKind::Decimal { precision, scale } => write!(f, "DECIMAL({precision}, {scale})")?,
            TypeKind::Char { length } => write!(f, "CHAR({length})")?,
            TypeKind::VarChar { length } if *length == MAX_LENGTH => f.write_str("STRING")?,
            TypeKind::VarChar { length } => write!(f, "VARCHAR({length})")?,
            TypeKind::Binary { length } => write!(f, "BINARY({length})")?,
            TypeKind::VarBinary { length } if *length == MAX_LENGTH => f.write_str("BYTES")?,
            TypeKind::VarBinary { length } => write!(f, "VARBINARY({length})")?,
            TypeKind::Date => f.write_str("DATE")?,
            TypeKind::Time { precision } => write!(f, "TIME({precision})")?,
            TypeKind::Timestamp { precision } => write!(f, "TIMESTAMP({precision})")?,
            TypeKind::LocalZonedTimestamp { precision } => {
                write!(f, "TIMESTAMP({precision}) WITH LOCAL TIME ZONE")?
            }
            TypeKind::Variant => f.write_str("VARIANT")?,
            TypeKind::Blob => f.write_str("BLOB")?,
            TypeKind::Array(e) => write!(f, "ARRAY<{e}>")?,
            TypeKind::Multiset(e) => write!(f, "MULTISET<{e}>")?,
            TypeKind::Map(k, v) => write!(f, "MAP<{k}, {v}>")?,
            TypeKind::Row(fields) => {
                f.write_str("ROW<")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(&field.sql_string())?;
                }
                f.write_str(">")?;
            }
            TypeKind::Vector { element, length } => write!(f, "VECTOR<{element}, {length}>")?,
            TypeKind::Other(s) => f.write_str(s)?,
        }
        if !self.nullable {
            f.write_str(" NOT NULL")?;
        }
        Ok(())
    }
}

impl Serialize for DataType {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let tag = |name: &str| {
            if self.nullable {
                name.to_string()
            } else {
                format!("{name} NOT NULL")
            }
        };
        match &self.kind {
            TypeKind::Array(e) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("type", &tag("ARRAY"))?;
                m.serialize_entry("element", e)?;
                m.end()
            }
            TypeKind::Multiset(e) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("type", &tag("MULTISET"))?;
                m.serialize_entry("element", e)?;
                m.end()
            }
            TypeKind::Map(k, v) => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("type", &tag("MAP"))?;
                m.serialize_entry("key", k)?;
                m.serialize_entry("value", v)?;
                m.end()
            }
            TypeKind::Row(fields) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("type", &tag("ROW"))?;
                m.serialize_entry("fields", fields)?;
                m.end()
            }
            TypeKind::Vector { element, length } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("type", &tag("VECTOR"))?;
                m.serialize_entry("element", element)?;
                m.serialize_entry("length", length)?;
                m.end()
            }
            _ => s.serialize_str(&self.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for DataType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        DataType::from_json(&v).map_err(D::Error::custom)
    }
}

impl std::str::FromStr for DataType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::parse_sql(s)
    }
}

// ------------------------------------------------------------------------------------------
// SQL string tokenizer and parser (Java DataTypeJsonParser, extended with nested types).
// ------------------------------------------------------------------------------------------

fn parse_error(input: &str, pos: usize, cause: &str) -> Error {
    Error::invalid(format!(
        "cannot parse data type '{input}' at position {pos}: {cause}"
    ))
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Lt,
    Gt,
    LParen,
    RParen,
    Comma,
    Dot,
    /// `'...'` literal, unescaped.
    Str,
    /// Digits.
    Int,
    /// Known keyword; `text` is upper-cased.
    Keyword,
    /// Anything else (or a backtick-quoted identifier); `text` as written.
    Ident,
}

#[derive(Debug, Clone)]
struct Token {
    kind: Tok,
    /// Byte offset in the input.
    at: usize,
    text: String,
    /// Original spelling (differs from `text` for keywords).
    raw: String,
}

const KEYWORDS: &[&str] = &[
    "CHAR",
    "VARCHAR",
    "STRING",
    "BOOLEAN",
    "BINARY",
    "VARBINARY",
    "BYTES",
    "DECIMAL",
    "NUMERIC",
    "DEC",
    "TINYINT",
    "SMALLINT",
    "INT",
    "INTEGER",
    "BIGINT",
    "FLOAT",
    "DOUBLE",
    "PRECISION",
    "DATE",
    "TIME",
    "WITH",
    "WITHOUT",
    "LOCAL",
    "ZONE",
    "TIMESTAMP",
    "TIMESTAMP_LTZ",
    "INTERVAL",
    "YEAR",
    "MONTH",
    "DAY",
    "HOUR",
    "MINUTE",
    "SECOND",
    "TO",
    "ARRAY",
    "VECTOR",
    "MULTISET",
    "MAP",
    "ROW",
    "NULL",
    "RAW",
    "LEGACY",
    "VARIANT",
    "BLOB",
    "GEOMETRY",
    "GEOGRAPHY",
    "NOT",
];

fn is_delimiter(c: char) -> bool {
    c.is_whitespace() || matches!(c, '<' | '>' | '(' | ')' | ',' | '.')
}

type PResult<T> = std::result::Result<T, (usize, String)>;

fn tokenize(input: &str) -> PResult<Vec<Token>> {
    let mut tokens = Vec::new();
    let chars: Vec<(usize, char)> = input.char_indices().collect();
    let mut i = 0;
    let single = |kind: Tok, at: usize, c: char| Token {
        kind,
        at,
        text: c.to_string(),
        raw: c.to_string(),
    };
    while let Some(&(at, c)) = chars.get(i) {
        match c {
            '<' => tokens.push(single(Tok::Lt, at, c)),
            '>' => tokens.push(single(Tok::Gt, at, c)),
            '(' => tokens.push(single(Tok::LParen, at, c)),
            ')' => tokens.push(single(Tok::RParen, at, c)),
            ',' => tokens.push(single(Tok::Comma, at, c)),
            '.' => tokens.push(single(Tok::Dot, at, c)),
            '\'' | '`' => {
                let quote = c;
                let mut text = String::new();
                let mut closed = false;
                i += 1;
                while let Some(&(_, ch)) = chars.get(i) {
                    if ch == quote {
                        if chars.get(i + 1).map(|p| p.1) == Some(quote) {
                            text.push(quote);
                            i += 2;
                            continue;
                        }
                        closed = true;
                        break;
                    }
                    text.push(ch);
                    i += 1;
                }
                if !closed {
                    return Err((at, format!("unterminated {quote}-quoted text")));
                }
                let kind = if quote == '\'' { Tok::Str } else { Tok::Ident };
                tokens.push(Token {
                    kind,
                    at,
                    raw: text.clone(),
                    text,
                });
            }
            c if c.is_whitespace() => {}
            c if c.is_ascii_digit() => {
                let mut text = String::new();
                while let Some(&(_, ch)) = chars.get(i).filter(|p| p.1.is_ascii_digit()) {
                    text.push(ch);
                    i += 1;
                }
                tokens.push(Token {
                    kind: Tok::Int,
                    at,
                    raw: text.clone(),
                    text,
                });
                continue;
            }
            _ => {
                let mut raw = String::new();
                while let Some(&(_, ch)) = chars.get(i).filter(|p| !is_delimiter(p.1)) {
                    raw.push(ch);
                    i += 1;
                }
                let upper = raw.to_uppercase();
                let (kind, text) = if KEYWORDS.contains(&upper.as_str()) {
                    (Tok::Keyword, upper)
                } else {
                    (Tok::Ident, raw.clone())
                };
                tokens.push(Token {
                    kind,
                    at,
                    text,
                    raw,
                });
                continue;
            }
        }
        i += 1;
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    next_field_id: i32,
    depth: usize,
}

impl Parser {
    fn peek(&self, ahead: usize) -> Option<&Token> {
        self.tokens.get(self.pos + ahead)
    }

    fn peek_is(&self, ahead: usize, kind: &Tok) -> bool {
        self.peek(ahead).is_some_and(|t| &t.kind == kind)
    }

    fn peek_keyword(&self, ahead: usize, kw: &str) -> bool {
        self.peek(ahead)
            .is_some_and(|t| t.kind == Tok::Keyword && t.text == kw)
    }

    fn end_pos(&self) -> usize {
        self.tokens
            .last()
            .map(|t| t.at + t.raw.len().max(1))
            .unwrap_or(0)
    }

    fn next(&mut self) -> PResult<Token> {
        match self.tokens.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.clone())
            }
            None => Err((self.end_pos(), "unexpected end".to_string())),
        }
    }

    fn expect(&mut self, kind: Tok, what: &str) -> PResult<Token> {
        let t = self.next()?;
        if t.kind != kind {
            return Err((t.at, format!("{what} expected but was '{}'", t.text)));
        }
        Ok(t)
    }

    fn expect_keyword(&mut self, kw: &str) -> PResult<()> {
        let t = self.next()?;
        if t.kind != Tok::Keyword || t.text != kw {
            return Err((
                t.at,
                format!("keyword '{kw}' expected but was '{}'", t.text),
            ));
        }
        Ok(())
    }

    fn int(&mut self) -> PResult<u32> {
        let t = self.expect(Tok::Int, "integer")?;
        t.text
            .parse::<i32>()
            .ok()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or((t.at, format!("invalid integer value {}", t.text)))
    }

    /// `NOT NULL` → false, `NULL` or nothing → true.
    fn nullability(&mut self) -> PResult<bool> {
        if self.peek_keyword(0, "NOT") && self.peek_keyword(1, "NULL") {
            self.pos += 2;
            Ok(false)
        } else if self.peek_keyword(0, "NULL") {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(true)
        }
    }

    fn type_with_nullability(&mut self) -> PResult<DataType> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            let at = self.peek(0).map(|t| t.at).unwrap_or(0);
            return Err((at, format!("types nested deeper than {MAX_NESTING}")));
        }
        let kind = self.type_by_keyword()?;
        let mut t = DataType {
            nullable: self.nullability()?,
            kind,
        };
        // Suffix notation: `INT ARRAY`, `INT MULTISET`.
        loop {
            if self.peek_keyword(0, "ARRAY") && !self.peek_is(1, &Tok::Lt) {
                self.pos += 1;
                t = DataType {
                    kind: TypeKind::Array(Box::new(t)),
                    nullable: self.nullability()?,
                };
            } else if self.peek_keyword(0, "MULTISET") && !self.peek_is(1, &Tok::Lt) {
                self.pos += 1;
                t = DataType {
                    kind: TypeKind::Multiset(Box::new(t)),
                    nullable: self.nullability()?,
                };
            } else {
                break;
            }
        }
        self.depth -= 1;
        Ok(t)
    }

    fn optional_length(&mut self, default: u32, name: &str) -> PResult<u32> {
        if !self.peek_is(0, &Tok::LParen) {
            return Ok(default);
        }
        self.pos += 1;
        let at = self.peek(0).map(|t| t.at).unwrap_or(0);
        let n = self.int()?;
        self.expect(Tok::RParen, "')'")?;
        if n < 1 {
            return Err((
                at,
                format!("{name} length must be between 1 and {MAX_LENGTH}"),
            ));
        }
        Ok(n)
    }

    fn optional_precision(&mut self, default: u32, name: &str) -> PResult<u32> {
        if !self.peek_is(0, &Tok::LParen) {
            return Ok(default);
        }
        self.pos += 1;
        let at = self.peek(0).map(|t| t.at).unwrap_or(0);
        let p = self.int()?;
        self.expect(Tok::RParen, "')'")?;
        if p > 9 {
            return Err((
                at,
                format!("{name} precision must be between 0 and 9, got {p}"),
            ));
        }
        Ok(p)
    }

    fn without_time_zone(&mut self) -> PResult<()> {
        if self.peek_keyword(0, "WITHOUT") {
            self.pos += 1;
            self.expect_keyword("TIME")?;
            self.expect_keyword("ZONE")?;
        }
        Ok(())
    }

    fn type_by_keyword(&mut self) -> PResult<TypeKind> {
        let t = self.next()?;
        if t.kind != Tok::Keyword {
            return Err((t.at, format!("unknown type '{}'", t.raw)));
        }
        Ok(match t.text.as_str() {
            "CHAR" => TypeKind::Char {
                length: self.optional_length(1, "CHAR")?,
            },
            "VARCHAR" => TypeKind::VarChar {
                length: self.optional_length(1, "VARCHAR")?,
            },
            "STRING" => TypeKind::VarChar { length: MAX_LENGTH },
            "BOOLEAN" => TypeKind::Boolean,
            "BINARY" => TypeKind::Binary {
                length: self.optional_length(1, "BINARY")?,
            },
            "VARBINARY" => TypeKind::VarBinary {
                length: self.optional_length(1, "VARBINARY")?,
            },
            "BYTES" => TypeKind::VarBinary { length: MAX_LENGTH },
            "DECIMAL" | "NUMERIC" | "DEC" => {
                let (mut precision, mut scale) = (10, 0);
                let at = t.at;
                if self.peek_is(0, &Tok::LParen) {
                    self.pos += 1;
                    precision = self.int()?;
                    if self.peek_is(0, &Tok::Comma) {
                        self.pos += 1;
                        scale = self.int()?;
                    }
                    self.expect(Tok::RParen, "')'")?;
                }
                if !(1..=38).contains(&precision) {
                    return Err((
                        at,
                        format!("decimal precision must be between 1 and 38, got {precision}"),
                    ));
                }
                if scale > precision {
                    return Err((
                        at,
                        format!("decimal scale must be between 0 and {precision}, got {scale}"),
                    ));
                }
                TypeKind::Decimal { precision, scale }
            }
            "TINYINT" => TypeKind::TinyInt,
            "SMALLINT" => TypeKind::SmallInt,
            "INT" | "INTEGER" => TypeKind::Int,
            "BIGINT" => TypeKind::BigInt,
            "FLOAT" => TypeKind::Float,
            "DOUBLE" => {
                if self.peek_keyword(0, "PRECISION") {
                    self.pos += 1;
                }
                TypeKind::Double
            }
            "DATE" => TypeKind::Date,
            "TIME" => {
                let precision = self.optional_precision(0, "TIME")?;
                self.without_time_zone()?;
                TypeKind::Time { precision }
            }
            "TIMESTAMP" => {
                let precision = self.optional_precision(6, "TIMESTAMP")?;
                if self.peek_keyword(0, "WITH") {
                    self.pos += 1;
                    self.expect_keyword("LOCAL")?;
                    self.expect_keyword("TIME")?;
                    self.expect_keyword("ZONE")?;
                    TypeKind::LocalZonedTimestamp { precision }
                } else {
                    self.without_time_zone()?;
                    TypeKind::Timestamp { precision }
                }
            }
            "TIMESTAMP_LTZ" => TypeKind::LocalZonedTimestamp {
                precision: self.optional_precision(6, "TIMESTAMP_LTZ")?,
            },
            "VARIANT" => TypeKind::Variant,
            "BLOB" => TypeKind::Blob,
            "GEOMETRY" => {
                let crs = if self.peek_is(0, &Tok::LParen) {
                    self.pos += 1;
                    let crs = self.geo_parameter()?;
                    self.expect(Tok::RParen, "')'")?;
                    crs
                } else {
                    "OGC:CRS84".to_string()
                };
                TypeKind::Other(format!("GEOMETRY({})", format_crs(&crs)))
            }
            "GEOGRAPHY" => {
                let (mut crs, mut algorithm) = ("OGC:CRS84".to_string(), "spherical".to_string());
                if self.peek_is(0, &Tok::LParen) {
                    self.pos += 1;
                    crs = self.geo_parameter()?;
                    if self.peek_is(0, &Tok::Comma) {
                        self.pos += 1;
                        let at = self.peek(0).map(|t| t.at).unwrap_or(0);
                        let a = self.geo_parameter()?.to_lowercase();
                        if !["spherical", "vincenty", "thomas", "andoyer", "karney"]
                            .contains(&a.as_str())
                        {
                            return Err((at, format!("invalid edge interpolation algorithm {a}")));
                        }
                        algorithm = a;
                    }
                    self.expect(Tok::RParen, "')'")?;
                }
                TypeKind::Other(format!("GEOGRAPHY({}, {algorithm})", format_crs(&crs)))
            }
            "VECTOR" => {
                self.expect(Tok::Lt, "'<'")?;
                let element = self.type_with_nullability()?;
                self.expect(Tok::Comma, "','")?;
                let at = self.peek(0).map(|t| t.at).unwrap_or(0);
                let length = self.int()?;
                self.expect(Tok::Gt, "'>'")?;
                if length < 1 {
                    return Err((at, "vector length must be at least 1".to_string()));
                }
                TypeKind::Vector {
                    element: Box::new(element),
                    length,
                }
            }
            "ARRAY" => {
                self.expect(Tok::Lt, "'<'")?;
                let e = self.type_with_nullability()?;
                self.expect(Tok::Gt, "'>'")?;
                TypeKind::Array(Box::new(e))
            }
            "MULTISET" => {
                self.expect(Tok::Lt, "'<'")?;
                let e = self.type_with_nullability()?;
                self.expect(Tok::Gt, "'>'")?;
                TypeKind::Multiset(Box::new(e))
            }
            "MAP" => {
                self.expect(Tok::Lt, "'<'")?;
                let k = self.type_with_nullability()?;
                self.expect(Tok::Comma, "','")?;
                let v = self.type_with_nullability()?;
                self.expect(Tok::Gt, "'>'")?;
                TypeKind::Map(Box::new(k), Box::new(v))
            }
            "ROW" => TypeKind::Row(self.row_fields()?),
            other => return Err((t.at, format!("unsupported type '{other}'"))),
        })
    }

    fn geo_parameter(&mut self) -> PResult<String> {
        let t = self.next()?;
        match t.kind {
            Tok::Ident | Tok::Str | Tok::Keyword => Ok(t.raw),
            _ => Err((t.at, "geospatial type parameter expected".to_string())),
        }
    }

    /// `ROW<name type ['comment' | COMMENT 'comment'], ...>` or `ROW(...)`; `ROW<>` is empty.
    fn row_fields(&mut self) -> PResult<Vec<DataField>> {
        let close = if self.peek_is(0, &Tok::LParen) {
            self.pos += 1;
            Tok::RParen
        } else {
            self.expect(Tok::Lt, "'<' or '('")?;
            Tok::Gt
        };
        let mut fields = Vec::new();
        if self.peek_is(0, &close) {
            self.pos += 1;
            return Ok(fields);
        }
        loop {
            let name_tok = self.next()?;
            let name = match name_tok.kind {
                Tok::Ident | Tok::Keyword => name_tok.raw,
                _ => {
                    return Err((
                        name_tok.at,
                        format!("field name expected but was '{}'", name_tok.text),
                    ));
                }
            };
            let id = self.next_field_id;
            self.next_field_id = self.next_field_id.saturating_add(1);
            let data_type = self.type_with_nullability()?;
            let mut description = None;
            if self.peek_is(0, &Tok::Str) {
                description = Some(self.next()?.text);
            } else if self
                .peek(0)
                .is_some_and(|t| t.kind == Tok::Ident && t.text.eq_ignore_ascii_case("COMMENT"))
                && self.peek_is(1, &Tok::Str)
            {
                self.pos += 1;
                description = Some(self.next()?.text);
            }
            fields.push(DataField {
                id,
                name,
                data_type,
                description,
                default_value: None,
            });
            let t = self.next()?;
            if t.kind == close {
                return Ok(fields);
            }
            if t.kind != Tok::Comma {
                return Err((
                    t.at,
                    format!("',' or end of row expected but was '{}'", t.text),
                ));
            }
        }
    }
}

/// Java `GeometryType.formatCrs`: quote a CRS that starts with a digit or holds a delimiter.
fn format_crs(crs: &str) -> String {
    let needs_quotes = crs.chars().next().is_some_and(|c| c.is_ascii_digit())
        || crs.chars().any(|c| {
            c.is_whitespace() || matches!(c, '<' | '>' | '(' | ')' | ',' | '.' | '\'' | '`')
        });
    if needs_quotes {
        format!("'{}'", crs.replace('\'', "''"))
    } else {
        crs.to_string()
    }
}

#[cfg(test)]
mod tests;
