//! Shredded VARIANT columns: rebuilding the variant `value` and `metadata` of each row from a
//! Parquet variant group that carries `typed_value` sub-columns, byte for byte as Java Paimon
//! rebuilds it.
//!
//! A shredded variant column is a group `{metadata, value?, typed_value?}` (Parquet
//! `VariantShredding.md`): `typed_value` holds the shredded part (a scalar, an object of shredded
//! fields, each itself such a group, or an array of such groups) and `value` the rest in the
//! variant binary encoding. A file may also hold plain variants (`{value, metadata}`, no
//! `typed_value`): those are read as stored.
//!
//! Java rebuilds a shredded value with a fresh builder (`GenericVariantBuilder(false)`): the
//! rebuilt value has a **new metadata dictionary** holding the keys in the order the rebuild
//! meets them (shredded fields in schema order, then the residual fields of `value` in their
//! stored order, recursively), integers take the smallest integer type that holds them,
//! decimals the smallest decimal type of their scale and digits, and objects list their fields
//! sorted by key (Java `String.compareTo`, UTF-16 order). This module does the same, so the
//! bytes equal Java's.
//!
//! Source: Java `org.apache.paimon.data.variant.{ShreddingUtils#rebuild, GenericVariantBuilder,
//! GenericVariantUtil, PaimonShreddingUtils#buildVariantSchema}` and
//! `org.apache.paimon.format.parquet.VariantShreddingReadPlanFactory` (release-2.0.0).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::BinaryBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrayRef, StructArray};
use arrow_schema::{DataType as ArrowType, Field, Fields, TimeUnit};

use crate::error::{Error, Result};

/// Name of the variant metadata child.
pub const METADATA: &str = "metadata";
/// Name of the variant value child.
pub const VALUE: &str = "value";
/// Name of the shredded child.
pub const TYPED_VALUE: &str = "typed_value";

// Variant binary encoding (Parquet `VariantEncoding.md`).
const PRIMITIVE: u8 = 0;
const SHORT_STR: u8 = 1;
const OBJECT: u8 = 2;
const ARRAY: u8 = 3;
const NULL: u8 = 0;
const TRUE: u8 = 1;
const FALSE: u8 = 2;
const INT1: u8 = 3;
const INT2: u8 = 4;
const INT4: u8 = 5;
const INT8: u8 = 6;
const DOUBLE: u8 = 7;
const DECIMAL4: u8 = 8;
const DECIMAL8: u8 = 9;
const DECIMAL16: u8 = 10;
const DATE: u8 = 11;
const TIMESTAMP: u8 = 12;
const TIMESTAMP_NTZ: u8 = 13;
const FLOAT: u8 = 14;
const BINARY: u8 = 15;
const LONG_STR: u8 = 16;
const MAX_SHORT_STR_SIZE: usize = 0x3F;
const VERSION: u8 = 1;
/// Java's `SIZE_LIMIT` of a variant value or metadata.
const SIZE_LIMIT: usize = 128 * 1024 * 1024;

/// Whether `data_type` (the Arrow type a Parquet variant group decodes to) is a shredded
/// variant: a struct with a `metadata` and a `typed_value` child.
pub fn is_shredded(data_type: &ArrowType) -> bool {
    matches!(data_type, ArrowType::Struct(f)
        if f.iter().any(|f| f.name() == TYPED_VALUE) && f.iter().any(|f| f.name() == METADATA))
}

/// The Arrow type of a rebuilt variant: `Struct{value: Binary NOT NULL, metadata: Binary NOT
/// NULL}` (as [`crate::types::paimon_to_arrow_type`] maps `VARIANT`).
pub fn variant_arrow_type() -> ArrowType {
    ArrowType::Struct(Fields::from(vec![
        Field::new(VALUE, ArrowType::Binary, false),
        Field::new(METADATA, ArrowType::Binary, false),
    ]))
}

/// Rebuild every row of a shredded variant column (see the module docs) into
/// `Struct{value, metadata}`; NULL rows stay NULL.
///
/// # Errors
/// [`Error::Corrupt`] naming `path` and `column` for a group that is not a valid shredding
/// schema or a row that is not a valid shredded variant (Java's `MALFORMED_VARIANT`);
/// [`Error::Unsupported`] for shredded types Java does not write (UUID, times).
pub fn rebuild_column(column: &ArrayRef, path: &str, name: &str) -> Result<ArrayRef> {
    let corrupt = |m: String| {
        Error::corrupt(
            path,
            "data-file",
            format!("shredded VARIANT column {name}: {m}"),
        )
    };
    let s = column
        .as_struct_opt()
        .ok_or_else(|| corrupt(format!("a {} is not a variant group", column.data_type())))?;
    let schema = Schema::build(s.fields(), true).map_err(|e| match e {
        Bad::Unsupported(m) => {
            Error::unsupported(format!("shredded VARIANT column {name} of {path}: {m}"))
        }
        Bad::Malformed(m) => corrupt(m),
    })?;
    let mut values = BinaryBuilder::with_capacity(s.len(), s.len() * 16);
    let mut metadatas = BinaryBuilder::with_capacity(s.len(), s.len() * 16);
    for row in 0..s.len() {
        if s.is_null(row) {
            values.append_value([]);
            metadatas.append_value([]);
            continue;
        }
        let (value, metadata) = rebuild_row(s, &schema, row).map_err(|e| match e {
            Bad::Unsupported(m) => Error::unsupported(format!(
                "shredded VARIANT column {name} of {path}, row {row}: {m}"
            )),
            Bad::Malformed(m) => corrupt(format!("row {row}: {m}")),
        })?;
        values.append_value(value);
        metadatas.append_value(metadata);
    }
    let ArrowType::Struct(fields) = variant_arrow_type() else {
        unreachable!("a struct type")
    };
    let out = StructArray::try_new(
        fields,
        vec![
            Arc::new(values.finish()) as ArrayRef,
            Arc::new(metadatas.finish()) as ArrayRef,
        ],
        s.nulls().cloned(),
    )
    .map_err(|e| corrupt(e.to_string()))?;
    Ok(Arc::new(out))
}

/// Why a rebuild failed.
#[derive(Debug)]
enum Bad {
    Malformed(String),
    Unsupported(String),
}

type Outcome<T> = std::result::Result<T, Bad>;

fn malformed(m: impl Into<String>) -> Bad {
    Bad::Malformed(m.into())
}

/// The kind of a shredded scalar (Java `VariantSchema.ScalarType`).
#[derive(Debug, Clone, Copy)]
enum Scalar {
    String,
    Integral,
    Float,
    Double,
    Boolean,
    Binary,
    Decimal,
    Date,
    Timestamp,
    TimestampNtz,
}

/// A shredding schema level (Java `VariantSchema`): positions of `typed_value`, `value` and
/// (top level) `metadata` among the group's children, and what `typed_value` holds.
#[derive(Debug)]
struct Schema {
    typed: Option<usize>,
    variant: Option<usize>,
    metadata: Option<usize>,
    kind: Typed,
}

#[derive(Debug)]
enum Typed {
    None,
    Scalar(Scalar),
    /// Shredded object fields: name, schema.
    Object(Vec<(String, Schema)>),
    Array(Box<Schema>),
}

impl Schema {
    /// Java `PaimonShreddingUtils.buildVariantSchema` over the Arrow fields of a group.
    fn build(fields: &Fields, top_level: bool) -> Outcome<Schema> {
        if fields.is_empty() {
            return Err(malformed("an empty variant group"));
        }
        let mut schema = Schema {
            typed: None,
            variant: None,
            metadata: None,
            kind: Typed::None,
        };
        for (i, f) in fields.iter().enumerate() {
            let binary = matches!(
                f.data_type(),
                ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView
            );
            match f.name().as_str() {
                TYPED_VALUE if schema.typed.is_none() => {
                    schema.typed = Some(i);
                    schema.kind = Typed::of(f.data_type())?;
                }
                VALUE if schema.variant.is_none() && binary => schema.variant = Some(i),
                METADATA if schema.metadata.is_none() && binary => schema.metadata = Some(i),
                other => {
                    return Err(malformed(format!(
                        "unexpected field {other} ({}) in a variant group",
                        f.data_type()
                    )));
                }
            }
        }
        if top_level != schema.metadata.is_some() {
            return Err(malformed(if top_level {
                "no metadata in a variant group"
            } else {
                "metadata in a nested variant group"
            }));
        }
        Ok(schema)
    }
}

impl Typed {
    fn of(t: &ArrowType) -> Outcome<Typed> {
        Ok(match t {
            ArrowType::Struct(fields) => Typed::Object(
                fields
                    .iter()
                    .map(|f| match f.data_type() {
                        ArrowType::Struct(inner) => {
                            Ok((f.name().clone(), Schema::build(inner, false)?))
                        }
                        other => Err(malformed(format!(
                            "shredded field {} is a {other}, not a group",
                            f.name()
                        ))),
                    })
                    .collect::<Outcome<_>>()?,
            ),
            ArrowType::List(item) | ArrowType::LargeList(item) => match item.data_type() {
                ArrowType::Struct(inner) => Typed::Array(Box::new(Schema::build(inner, false)?)),
                other => {
                    return Err(malformed(format!(
                        "shredded array elements are {other}, not groups"
                    )));
                }
            },
            ArrowType::Boolean => Typed::Scalar(Scalar::Boolean),
            ArrowType::Int8 | ArrowType::Int16 | ArrowType::Int32 | ArrowType::Int64 => {
                Typed::Scalar(Scalar::Integral)
            }
            ArrowType::Float32 => Typed::Scalar(Scalar::Float),
            ArrowType::Float64 => Typed::Scalar(Scalar::Double),
            ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => {
                Typed::Scalar(Scalar::String)
            }
            ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView => {
                Typed::Scalar(Scalar::Binary)
            }
            ArrowType::Date32 => Typed::Scalar(Scalar::Date),
            ArrowType::Decimal32(..)
            | ArrowType::Decimal64(..)
            | ArrowType::Decimal128(..)
            | ArrowType::Decimal256(..) => Typed::Scalar(Scalar::Decimal),
            ArrowType::Timestamp(_, Some(_)) => Typed::Scalar(Scalar::Timestamp),
            ArrowType::Timestamp(_, None) => Typed::Scalar(Scalar::TimestampNtz),
            other => {
                return Err(Bad::Unsupported(format!(
                    "shredded values of Arrow type {other}"
                )));
            }
        })
    }
}

/// The rebuilt (value, metadata) of one non-null row of the top-level group `s`.
fn rebuild_row(s: &StructArray, schema: &Schema, row: usize) -> Outcome<(Vec<u8>, Vec<u8>)> {
    let metadata_col = s.column(schema.metadata.unwrap_or(0));
    if metadata_col.is_null(row) {
        return Err(malformed("NULL metadata"));
    }
    let metadata = binary_at(metadata_col.as_ref(), row)?;
    if matches!(schema.kind, Typed::None) || schema.typed.is_none() {
        let Some(v) = schema.variant.filter(|v| !s.column(*v).is_null(row)) else {
            return Err(malformed("NULL value of an unshredded variant"));
        };
        return Ok((
            binary_at(s.column(v).as_ref(), row)?.to_vec(),
            metadata.to_vec(),
        ));
    }
    let mut builder = Builder::default();
    builder.rebuild(s, row, metadata, schema)?;
    builder.result()
}

fn binary_at(a: &dyn Array, row: usize) -> Outcome<&[u8]> {
    match a.data_type() {
        ArrowType::Binary => Ok(a.as_binary::<i32>().value(row)),
        ArrowType::LargeBinary => Ok(a.as_binary::<i64>().value(row)),
        ArrowType::BinaryView => Ok(a.as_binary_view().value(row)),
        other => Err(malformed(format!("a {other} where bytes are expected"))),
    }
}

/// Java `GenericVariantBuilder` (without duplicate keys).
#[derive(Default)]
struct Builder {
    buf: Vec<u8>,
    dictionary: HashMap<String, u32>,
    keys: Vec<String>,
}

/// Java `GenericVariantBuilder.FieldEntry`.
struct FieldEntry {
    key: String,
    id: u32,
    offset: usize,
}

/// Bytes needed for an unsigned `value` (1 to 4).
fn int_size(value: usize) -> usize {
    match value {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFF_FFFF => 3,
        _ => 4,
    }
}

fn push_le(out: &mut Vec<u8>, value: u64, n: usize) {
    for i in 0..n {
        out.push((value >> (8 * i)) as u8);
    }
}

impl Builder {
    fn add_key(&mut self, key: &str) -> u32 {
        if let Some(id) = self.dictionary.get(key) {
            return *id;
        }
        let id = self.keys.len() as u32;
        self.dictionary.insert(key.to_owned(), id);
        self.keys.push(key.to_owned());
        id
    }

    fn primitive(&mut self, type_id: u8) {
        self.buf.push(type_id << 2 | PRIMITIVE);
    }

    fn append_string(&mut self, s: &str) {
        let b = s.as_bytes();
        if b.len() > MAX_SHORT_STR_SIZE {
            self.primitive(LONG_STR);
            push_le(&mut self.buf, b.len() as u64, 4);
        } else {
            self.buf.push((b.len() as u8) << 2 | SHORT_STR);
        }
        self.buf.extend_from_slice(b);
    }

    fn append_long(&mut self, v: i64) {
        if v == i64::from(v as i8) {
            self.primitive(INT1);
            push_le(&mut self.buf, v as u64, 1);
        } else if v == i64::from(v as i16) {
            self.primitive(INT2);
            push_le(&mut self.buf, v as u64, 2);
        } else if v == i64::from(v as i32) {
            self.primitive(INT4);
            push_le(&mut self.buf, v as u64, 4);
        } else {
            self.primitive(INT8);
            push_le(&mut self.buf, v as u64, 8);
        }
    }

    /// Java `appendDecimal`: DECIMAL4 when scale and digits are at most 9, DECIMAL8 up to 18,
    /// else DECIMAL16.
    fn append_decimal(&mut self, unscaled: i128, scale: u32) {
        let digits = unscaled.unsigned_abs().to_string().len() as u32;
        if scale <= 9 && digits <= 9 {
            self.primitive(DECIMAL4);
            self.buf.push(scale as u8);
            push_le(&mut self.buf, unscaled as u64, 4);
        } else if scale <= 18 && digits <= 18 {
            self.primitive(DECIMAL8);
            self.buf.push(scale as u8);
            push_le(&mut self.buf, unscaled as u64, 8);
        } else {
            self.primitive(DECIMAL16);
            self.buf.push(scale as u8);
            self.buf.extend_from_slice(&unscaled.to_le_bytes());
        }
    }

    /// Java `finishWritingObject`: sort the fields by key, reject duplicates, then insert the
    /// header (size, field ids, offsets) before the field data written since `start`.
    fn finish_object(&mut self, start: usize, mut fields: Vec<FieldEntry>) -> Outcome<()> {
        fields.sort_by(|a, b| a.key.encode_utf16().cmp(b.key.encode_utf16()));
        if fields.windows(2).any(|w| w[0].key == w[1].key) {
            return Err(malformed("VARIANT_DUPLICATE_KEY"));
        }
        let size = fields.len();
        let max_id = fields.iter().map(|f| f.id).max().unwrap_or(0) as usize;
        let data_size = self.buf.len() - start;
        let large = size > 0xFF;
        let size_bytes = if large { 4 } else { 1 };
        let id_size = int_size(max_id);
        let offset_size = int_size(data_size);
        let mut header =
            Vec::with_capacity(1 + size_bytes + size * id_size + (size + 1) * offset_size);
        header.push(
            (u8::from(large) << 6)
                | ((id_size as u8 - 1) << 4)
                | ((offset_size as u8 - 1) << 2)
                | OBJECT,
        );
        push_le(&mut header, size as u64, size_bytes);
        for f in &fields {
            push_le(&mut header, u64::from(f.id), id_size);
        }
        for f in &fields {
            push_le(&mut header, f.offset as u64, offset_size);
        }
        push_le(&mut header, data_size as u64, offset_size);
        self.buf.splice(start..start, header);
        self.check_size()
    }

    /// Java `finishWritingArray`.
    fn finish_array(&mut self, start: usize, offsets: &[usize]) -> Outcome<()> {
        let size = offsets.len();
        let data_size = self.buf.len() - start;
        let large = size > 0xFF;
        let size_bytes = if large { 4 } else { 1 };
        let offset_size = int_size(data_size);
        let mut header = Vec::with_capacity(1 + size_bytes + (size + 1) * offset_size);
        header.push((u8::from(large) << 4) | ((offset_size as u8 - 1) << 2) | ARRAY);
        push_le(&mut header, size as u64, size_bytes);
        for o in offsets {
            push_le(&mut header, *o as u64, offset_size);
        }
        push_le(&mut header, data_size as u64, offset_size);
        self.buf.splice(start..start, header);
        self.check_size()
    }

    fn check_size(&self) -> Outcome<()> {
        if self.buf.len() > SIZE_LIMIT {
            return Err(malformed("VARIANT_CONSTRUCTOR_SIZE_LIMIT"));
        }
        Ok(())
    }

    /// Java `appendVariant`: copy the value at `pos` of `value`, re-keying objects into this
    /// builder's dictionary.
    fn append_variant(&mut self, value: &[u8], metadata: &[u8], pos: usize) -> Outcome<()> {
        let header = *value
            .get(pos)
            .ok_or_else(|| malformed("value out of bounds"))?;
        match header & 0x3 {
            OBJECT => {
                let o = Container::object(value, pos)?;
                let start = self.buf.len();
                let mut fields = Vec::with_capacity(o.size);
                for i in 0..o.size {
                    let id = read_unsigned(value, o.id_start + o.id_size * i, o.id_size)?;
                    let offset =
                        read_unsigned(value, o.offset_start + o.offset_size * i, o.offset_size)?;
                    let key = metadata_key(metadata, id)?;
                    let new_id = self.add_key(&key);
                    fields.push(FieldEntry {
                        key,
                        id: new_id,
                        offset: self.buf.len() - start,
                    });
                    self.append_variant(value, metadata, o.data_start + offset)?;
                }
                self.finish_object(start, fields)
            }
            ARRAY => {
                let a = Container::array(value, pos)?;
                let start = self.buf.len();
                let mut offsets = Vec::with_capacity(a.size);
                for i in 0..a.size {
                    let offset =
                        read_unsigned(value, a.offset_start + a.offset_size * i, a.offset_size)?;
                    offsets.push(self.buf.len() - start);
                    self.append_variant(value, metadata, a.data_start + offset)?;
                }
                self.finish_array(start, &offsets)
            }
            _ => {
                let size = value_size(value, pos)?;
                let bytes = value
                    .get(pos..pos + size)
                    .ok_or_else(|| malformed("value out of bounds"))?;
                self.buf.extend_from_slice(bytes);
                self.check_size()
            }
        }
    }

    /// Java `ShreddingUtils.rebuild` of row `row` of the group `g` (a struct array whose
    /// children follow `schema`).
    fn rebuild(
        &mut self,
        g: &StructArray,
        row: usize,
        metadata: &[u8],
        schema: &Schema,
    ) -> Outcome<()> {
        let typed = schema
            .typed
            .map(|i| g.column(i))
            .filter(|c| !c.is_null(row));
        let variant = schema
            .variant
            .map(|i| g.column(i))
            .filter(|c| !c.is_null(row));
        if let Some(typed) = typed {
            match &schema.kind {
                Typed::Scalar(kind) => self.append_scalar(typed.as_ref(), *kind, row)?,
                Typed::Array(element) => {
                    let (values, start_i, end_i) = list_slice(typed.as_ref(), row)?;
                    let values = values
                        .as_struct_opt()
                        .ok_or_else(|| malformed("shredded array elements are not groups"))?;
                    let start = self.buf.len();
                    let mut offsets = Vec::with_capacity(end_i - start_i);
                    for i in start_i..end_i {
                        offsets.push(self.buf.len() - start);
                        if values.is_null(i) {
                            return Err(malformed("NULL shredded array element"));
                        }
                        self.rebuild(values, i, metadata, element)?;
                    }
                    self.finish_array(start, &offsets)?;
                }
                Typed::Object(shredded) => {
                    let object = typed
                        .as_struct_opt()
                        .ok_or_else(|| malformed("shredded object is not a group"))?;
                    let start = self.buf.len();
                    let mut fields = Vec::new();
                    for (i, (name, field_schema)) in shredded.iter().enumerate() {
                        let fv = object.column(i);
                        if fv.is_null(row) {
                            return Err(malformed(format!("NULL shredded field {name}")));
                        }
                        let fv = fv
                            .as_struct_opt()
                            .ok_or_else(|| malformed("shredded field is not a group"))?;
                        let present = field_schema
                            .typed
                            .is_some_and(|t| !fv.column(t).is_null(row))
                            || field_schema
                                .variant
                                .is_some_and(|v| !fv.column(v).is_null(row));
                        if present {
                            let id = self.add_key(name);
                            fields.push(FieldEntry {
                                key: name.clone(),
                                id,
                                offset: self.buf.len() - start,
                            });
                            self.rebuild(fv, row, metadata, field_schema)?;
                        }
                    }
                    if let Some(v) = variant {
                        // The fields that were not shredded.
                        let value = binary_at(v.as_ref(), row)?;
                        check_metadata(metadata)?;
                        if value.first().map(|h| h & 0x3) != Some(OBJECT) {
                            return Err(malformed("the residual value of an object is no object"));
                        }
                        let o = Container::object(value, 0)?;
                        for i in 0..o.size {
                            let id = read_unsigned(value, o.id_start + o.id_size * i, o.id_size)?;
                            let offset = read_unsigned(
                                value,
                                o.offset_start + o.offset_size * i,
                                o.offset_size,
                            )?;
                            let key = metadata_key(metadata, id)?;
                            if shredded.iter().any(|(n, _)| *n == key) {
                                return Err(malformed(format!(
                                    "field {key} is both shredded and in the residual value"
                                )));
                            }
                            let new_id = self.add_key(&key);
                            fields.push(FieldEntry {
                                key,
                                id: new_id,
                                offset: self.buf.len() - start,
                            });
                            self.append_variant(value, metadata, o.data_start + offset)?;
                        }
                    }
                    self.finish_object(start, fields)?;
                }
                Typed::None => return Err(malformed("typed_value without a type")),
            }
            Ok(())
        } else if let Some(v) = variant {
            check_metadata(metadata)?;
            let value = binary_at(v.as_ref(), row)?;
            self.append_variant(value, metadata, 0)
        } else {
            Err(malformed("neither value nor typed_value"))
        }
    }

    fn append_scalar(&mut self, a: &dyn Array, kind: Scalar, row: usize) -> Outcome<()> {
        match kind {
            Scalar::String => {
                let s = match a.data_type() {
                    ArrowType::Utf8 => a.as_string::<i32>().value(row),
                    ArrowType::LargeUtf8 => a.as_string::<i64>().value(row),
                    ArrowType::Utf8View => a.as_string_view().value(row),
                    other => return Err(malformed(format!("a {other} shredded as a string"))),
                };
                self.append_string(s);
            }
            Scalar::Integral => {
                let v = match a.data_type() {
                    ArrowType::Int8 => i64::from(a.as_primitive::<Int8Type>().value(row)),
                    ArrowType::Int16 => i64::from(a.as_primitive::<Int16Type>().value(row)),
                    ArrowType::Int32 => i64::from(a.as_primitive::<Int32Type>().value(row)),
                    _ => a.as_primitive::<Int64Type>().value(row),
                };
                self.append_long(v);
            }
            Scalar::Float => {
                self.primitive(FLOAT);
                let bits = a.as_primitive::<Float32Type>().value(row).to_bits();
                push_le(&mut self.buf, u64::from(bits), 4);
            }
            Scalar::Double => {
                self.primitive(DOUBLE);
                let bits = a.as_primitive::<Float64Type>().value(row).to_bits();
                push_le(&mut self.buf, bits, 8);
            }
            Scalar::Boolean => {
                let b = a.as_boolean().value(row);
                self.primitive(if b { TRUE } else { FALSE });
            }
            Scalar::Binary => {
                let b = binary_at(a, row)?;
                self.primitive(BINARY);
                push_le(&mut self.buf, b.len() as u64, 4);
                self.buf.extend_from_slice(b);
            }
            Scalar::Decimal => {
                let (unscaled, scale) = match a.data_type() {
                    ArrowType::Decimal128(_, s) => {
                        (a.as_primitive::<Decimal128Type>().value(row), *s)
                    }
                    other => {
                        let d = arrow_cast::cast(
                            &a.slice(row, 1),
                            &ArrowType::Decimal128(
                                38,
                                match other {
                                    ArrowType::Decimal32(_, s)
                                    | ArrowType::Decimal64(_, s)
                                    | ArrowType::Decimal256(_, s) => *s,
                                    _ => 0,
                                },
                            ),
                        )
                        .map_err(|e| malformed(e.to_string()))?;
                        let ArrowType::Decimal128(_, s) = d.data_type() else {
                            unreachable!("cast to Decimal128")
                        };
                        (d.as_primitive::<Decimal128Type>().value(0), *s)
                    }
                };
                let scale = u32::try_from(scale)
                    .map_err(|_| Bad::Unsupported(format!("decimal scale {scale}")))?;
                self.append_decimal(unscaled, scale);
            }
            Scalar::Date => {
                self.primitive(DATE);
                let d = a.as_primitive::<Date32Type>().value(row);
                push_le(&mut self.buf, d as u32 as u64, 4);
            }
            Scalar::Timestamp | Scalar::TimestampNtz => {
                let micros = match a.data_type() {
                    ArrowType::Timestamp(TimeUnit::Microsecond, _) => {
                        a.as_primitive::<TimestampMicrosecondType>().value(row)
                    }
                    other => {
                        return Err(Bad::Unsupported(format!(
                            "shredded timestamps of Arrow type {other}"
                        )));
                    }
                };
                self.primitive(if matches!(kind, Scalar::Timestamp) {
                    TIMESTAMP
                } else {
                    TIMESTAMP_NTZ
                });
                push_le(&mut self.buf, micros as u64, 8);
            }
        }
        self.check_size()
    }

    /// Java `GenericVariantBuilder.result`: the value, and a metadata dictionary of the keys
    /// added (in order of first use; not flagged as sorted).
    fn result(self) -> Outcome<(Vec<u8>, Vec<u8>)> {
        let string_size: usize = self.keys.iter().map(String::len).sum();
        let max_size = string_size.max(self.keys.len());
        if max_size > SIZE_LIMIT {
            return Err(malformed("VARIANT_CONSTRUCTOR_SIZE_LIMIT"));
        }
        let offset_size = int_size(max_size);
        let mut metadata =
            Vec::with_capacity(1 + (self.keys.len() + 2) * offset_size + string_size);
        metadata.push(VERSION | ((offset_size as u8 - 1) << 6));
        push_le(&mut metadata, self.keys.len() as u64, offset_size);
        let mut offset = 0;
        for k in &self.keys {
            push_le(&mut metadata, offset as u64, offset_size);
            offset += k.len();
        }
        push_le(&mut metadata, offset as u64, offset_size);
        for k in &self.keys {
            metadata.extend_from_slice(k.as_bytes());
        }
        Ok((self.buf, metadata))
    }
}

/// The element range of row `row` of a list array, with its values.
fn list_slice(a: &dyn Array, row: usize) -> Outcome<(&ArrayRef, usize, usize)> {
    match a.data_type() {
        ArrowType::List(_) => {
            let l = a.as_list::<i32>();
            let o = l.value_offsets();
            Ok((l.values(), o[row] as usize, o[row + 1] as usize))
        }
        ArrowType::LargeList(_) => {
            let l = a.as_list::<i64>();
            let o = l.value_offsets();
            Ok((l.values(), o[row] as usize, o[row + 1] as usize))
        }
        other => Err(malformed(format!("a {other} shredded as an array"))),
    }
}

/// Header fields of an object or array value (Java `handleObject` / `handleArray`).
struct Container {
    size: usize,
    id_size: usize,
    id_start: usize,
    offset_size: usize,
    offset_start: usize,
    data_start: usize,
}

impl Container {
    fn object(value: &[u8], pos: usize) -> Outcome<Container> {
        let info = (value[pos] >> 2) & 0x3F;
        let size_bytes = if (info >> 4) & 1 == 1 { 4 } else { 1 };
        let size = read_unsigned(value, pos + 1, size_bytes)?;
        let id_size = usize::from((info >> 2) & 0x3) + 1;
        let offset_size = usize::from(info & 0x3) + 1;
        let id_start = pos + 1 + size_bytes;
        let offset_start = id_start + size * id_size;
        let data_start = offset_start + (size + 1) * offset_size;
        Ok(Container {
            size,
            id_size,
            id_start,
            offset_size,
            offset_start,
            data_start,
        })
    }

    fn array(value: &[u8], pos: usize) -> Outcome<Container> {
        let info = (value[pos] >> 2) & 0x3F;
        let size_bytes = if (info >> 2) & 1 == 1 { 4 } else { 1 };
        let size = read_unsigned(value, pos + 1, size_bytes)?;
        let offset_size = usize::from(info & 0x3) + 1;
        let offset_start = pos + 1 + size_bytes;
        Ok(Container {
            size,
            id_size: 0,
            id_start: offset_start,
            offset_size,
            offset_start,
            data_start: offset_start + (size + 1) * offset_size,
        })
    }
}

fn read_unsigned(b: &[u8], pos: usize, n: usize) -> Outcome<usize> {
    let bytes = b
        .get(pos..pos + n)
        .ok_or_else(|| malformed("value out of bounds"))?;
    Ok(bytes
        .iter()
        .enumerate()
        .fold(0usize, |acc, (i, x)| acc | (usize::from(*x) << (8 * i))))
}

/// Java `GenericVariantUtil.valueSize` of a primitive or short string at `pos`.
fn value_size(value: &[u8], pos: usize) -> Outcome<usize> {
    let header = value[pos];
    let info = (header >> 2) & 0x3F;
    Ok(match header & 0x3 {
        SHORT_STR => 1 + usize::from(info),
        OBJECT => {
            let o = Container::object(value, pos)?;
            o.data_start - pos
                + read_unsigned(
                    value,
                    o.offset_start + o.size * o.offset_size,
                    o.offset_size,
                )?
        }
        ARRAY => {
            let a = Container::array(value, pos)?;
            a.data_start - pos
                + read_unsigned(
                    value,
                    a.offset_start + a.size * a.offset_size,
                    a.offset_size,
                )?
        }
        _ => match info {
            NULL | TRUE | FALSE => 1,
            INT1 => 2,
            INT2 => 3,
            INT4 | DATE | FLOAT => 5,
            INT8 | DOUBLE | TIMESTAMP | TIMESTAMP_NTZ => 9,
            // TIME, TIMESTAMP_NANOS, TIMESTAMP_NTZ_NANOS.
            17..=19 => 9,
            DECIMAL4 => 6,
            DECIMAL8 => 10,
            DECIMAL16 => 18,
            BINARY | LONG_STR => 5 + read_unsigned(value, pos + 1, 4)?,
            // UUID
            20 => 17,
            other => {
                return Err(malformed(format!(
                    "UNKNOWN_PRIMITIVE_TYPE_IN_VARIANT, id: {other}"
                )));
            }
        },
    })
}

fn check_metadata(metadata: &[u8]) -> Outcome<()> {
    match metadata.first() {
        Some(h) if h & 0x0F == VERSION => Ok(()),
        _ => Err(malformed("variant metadata of an unknown version")),
    }
}

/// Key `id` of a variant metadata dictionary.
fn metadata_key(metadata: &[u8], id: usize) -> Outcome<String> {
    check_metadata(metadata)?;
    let offset_size = usize::from((metadata[0] >> 6) & 0x3) + 1;
    let dict_size = read_unsigned(metadata, 1, offset_size)?;
    if id >= dict_size {
        return Err(malformed(format!(
            "key id {id} out of a dictionary of {dict_size}"
        )));
    }
    let string_start = 1 + (dict_size + 2) * offset_size;
    let offset = read_unsigned(metadata, 1 + (id + 1) * offset_size, offset_size)?;
    let next = read_unsigned(metadata, 1 + (id + 2) * offset_size, offset_size)?;
    let bytes = metadata
        .get(string_start + offset..string_start + next)
        .ok_or_else(|| malformed("metadata key out of bounds"))?;
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
