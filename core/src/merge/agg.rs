//! Field aggregate functions of the `aggregation` and `partial-update` merge engines.
//!
//! Source: Java `org.apache.paimon.mergetree.compact.aggregate.Field*Agg` and their factories
//! in `aggregate.factory`. The ARRAY results Java gathers in a `HashSet` / `HashMap`
//! (`collect` with `distinct`, `nested_update` and `nested_partial_update` with a nested key)
//! come out in Java's iteration order ([`crate::util::java_hash`], [`super::java_order`]); MAP results
//! (`merge_map`), whose entry order is not part of the value, keep first-seen order.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use arrow_schema::{DataType as ArrowType, Fields};

use super::config::FieldMergeOptions;
use super::java_order::{Distinct, KeyRow, java_element};
use super::value::{Value, compare_values, fingerprints, is_blank};
use crate::error::{Error, Result};
use crate::spec::{DataField, DataType, TypeKind};
use crate::util::java_hash::JavaHashMap;

/// What to do when a nested key has a null field (`fields.<f>.nested-key-null-strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NullKeyStrategy {
    Merge,
    Ignore,
    Error,
}

#[derive(Debug, Clone)]
enum AggKind {
    Sum,
    Product,
    Max,
    Min,
    LastValue,
    LastNonNull,
    FirstValue,
    FirstNonNull,
    Listagg {
        delimiter: String,
        distinct: bool,
    },
    BoolAnd,
    BoolOr,
    Collect {
        distinct: bool,
        element: ArrowType,
        /// How `distinct` gathers elements of this type.
        gather: Distinct,
    },
    MergeMap {
        key: ArrowType,
    },
    MergeMapWithKeyTime {
        key: ArrowType,
        ts: usize,
        width: usize,
    },
    NestedUpdate {
        element: ArrowType,
        fields: Fields,
        key: Vec<usize>,
        /// Paimon types of the `key` fields (the key row Java hashes).
        key_types: Vec<DataType>,
        seq: Vec<usize>,
        nulls: NullKeyStrategy,
        limit: usize,
    },
    NestedPartialUpdate {
        fields: Fields,
        key: Vec<usize>,
        /// Paimon types of the `key` fields (the key row Java hashes).
        key_types: Vec<DataType>,
        nulls: NullKeyStrategy,
    },
    PrimaryKey,
    Rbm32,
}

/// One field's aggregator, with its per-key state (`first_value`'s "seen" flag).
///
/// Source: Java `org.apache.paimon.mergetree.compact.aggregate.FieldAggregator`.
#[derive(Debug, Clone)]
pub(crate) struct FieldAgg {
    func: String,
    field: String,
    dt: ArrowType,
    kind: AggKind,
    ignore_retract: bool,
    initialized: bool,
}

fn is_numeric(kind: &TypeKind) -> bool {
    matches!(
        kind,
        TypeKind::TinyInt
            | TypeKind::SmallInt
            | TypeKind::Int
            | TypeKind::BigInt
            | TypeKind::Float
            | TypeKind::Double
            | TypeKind::Decimal { .. }
    )
}

fn is_comparable(kind: &TypeKind) -> bool {
    !matches!(
        kind,
        TypeKind::Map(_, _)
            | TypeKind::Multiset(_)
            | TypeKind::Row(_)
            | TypeKind::Array(_)
            | TypeKind::Vector { .. }
            | TypeKind::Variant
            | TypeKind::Blob
            | TypeKind::Other(_)
    )
}

fn struct_fields_of(dt: &ArrowType) -> Option<Fields> {
    match dt {
        ArrowType::Struct(f) => Some(f.clone()),
        _ => None,
    }
}

fn list_element(dt: &ArrowType) -> Option<ArrowType> {
    match dt {
        ArrowType::List(f) | ArrowType::LargeList(f) | ArrowType::FixedSizeList(f, _) => {
            Some(f.data_type().clone())
        }
        _ => None,
    }
}

fn map_types(dt: &ArrowType) -> Option<(ArrowType, ArrowType)> {
    match dt {
        ArrowType::Map(entries, _) => match entries.data_type() {
            ArrowType::Struct(kv) if kv.len() == 2 => {
                Some((kv[0].data_type().clone(), kv[1].data_type().clone()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// An aggregate the column-wise fast path computes for groups of add records: every
/// result is one of the inputs, except `Sum` of two or more values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SimpleAgg {
    /// `last_value`, `primary-key`: the newest value.
    Last,
    /// `first_value`: the oldest value.
    First,
    /// `last_non_null_value`.
    LastNonNull,
    /// `first_non_null_value`.
    FirstNonNull,
    /// `sum` of a non-decimal numeric column of this type (integer overflow: not simple).
    Sum(SumType),
    /// `max` of a column of a type `native_cmp_supported` accepts.
    Max,
    /// `min` of a column of a type `native_cmp_supported` accepts.
    Min,
}

/// The Arrow column type of a [`SimpleAgg::Sum`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SumType {
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

/// The column types whose `max`/`min` the deferred merge compares natively (as
/// [`compare_values`] orders them).
fn native_cmp_supported(dt: &ArrowType) -> bool {
    matches!(
        dt,
        ArrowType::Int8
            | ArrowType::Int16
            | ArrowType::Int32
            | ArrowType::Int64
            | ArrowType::Float32
            | ArrowType::Float64
            | ArrowType::Date32
            | ArrowType::Decimal128(_, _)
            | ArrowType::Timestamp(_, _)
            | ArrowType::Utf8
    )
}

impl FieldAgg {
    /// Create the aggregator `func` for `field` whose Arrow column type is `dt`.
    ///
    /// Errors: unknown function, wrong field type, conflicting options (as Java's
    /// factories), and [`Error::Unsupported`] for `hll_sketch`, `theta_sketch`, `rbm32`,
    /// `rbm64`.
    pub(crate) fn try_new(
        func: &str,
        field: &DataField,
        dt: &ArrowType,
        opts: &FieldMergeOptions,
        agg_remove_record_on_delete: bool,
    ) -> Result<Self> {
        let name = field.name.as_str();
        let pt = &field.data_type.kind;
        let bad_type = |what: &str| {
            Error::invalid(format!(
                "aggregate function '{func}' on field '{name}': data type must be {what} but was {pt:?}"
            ))
        };
        let nulls = match opts
            .nested_key_null_strategy
            .as_deref()
            .map(|s| s.trim().to_ascii_lowercase())
            .as_deref()
        {
            None | Some("merge") => NullKeyStrategy::Merge,
            Some("ignore") => NullKeyStrategy::Ignore,
            Some("error") => NullKeyStrategy::Error,
            Some(other) => {
                return Err(Error::invalid(format!(
                    "fields.{name}.nested-key-null-strategy: unknown value '{other}' (merge, ignore, error)"
                )));
            }
        };
        let kind = match func {
            "sum" | "product" => {
                if !is_numeric(pt) {
                    return Err(bad_type("numeric"));
                }
                if func == "sum" {
                    AggKind::Sum
                } else {
                    AggKind::Product
                }
            }
            "max" | "min" => {
                if !is_comparable(pt) {
                    return Err(bad_type("comparable"));
                }
                if func == "max" {
                    AggKind::Max
                } else {
                    AggKind::Min
                }
            }
            "last_value" => AggKind::LastValue,
            "last_non_null_value" => AggKind::LastNonNull,
            "first_value" => AggKind::FirstValue,
            "first_non_null_value" | "first_not_null_value" => AggKind::FirstNonNull,
            "listagg" => match pt {
                TypeKind::VarChar { length } if *length == i32::MAX as u32 => AggKind::Listagg {
                    delimiter: opts
                        .list_agg_delimiter
                        .clone()
                        .unwrap_or_else(|| ",".to_string()),
                    distinct: opts.distinct,
                },
                _ => return Err(bad_type("STRING (unbounded VARCHAR)")),
            },
            "bool_and" | "bool_or" => {
                if *pt != TypeKind::Boolean {
                    return Err(bad_type("BOOLEAN"));
                }
                if func == "bool_and" {
                    AggKind::BoolAnd
                } else {
                    AggKind::BoolOr
                }
            }
            "collect" => {
                let TypeKind::Array(element_type) = pt else {
                    return Err(bad_type("ARRAY"));
                };
                let element = list_element(dt).ok_or_else(|| bad_type("ARRAY"))?;
                AggKind::Collect {
                    distinct: opts.distinct,
                    element,
                    gather: Distinct::of(element_type),
                }
            }
            "merge_map" => {
                if !matches!(pt, TypeKind::Map(_, _)) {
                    return Err(bad_type("MAP"));
                }
                let (key, _) = map_types(dt).ok_or_else(|| bad_type("MAP"))?;
                AggKind::MergeMap { key }
            }
            "merge_map_with_keytime" => {
                let TypeKind::Map(_, v) = pt else {
                    return Err(bad_type("MAP"));
                };
                let TypeKind::Row(row) = &v.kind else {
                    return Err(bad_type("MAP<K, ROW<...>>"));
                };
                if row.len() < 2 {
                    return Err(bad_type("MAP<K, ROW> with at least 2 row fields"));
                }
                let ts = match &opts.map_ts_field {
                    None => row.len() - 1,
                    Some(ts) => row.iter().position(|f| &f.name == ts).ok_or_else(|| {
                        Error::invalid(format!(
                            "timestamp field '{ts}' not found in ROW type of field '{name}'"
                        ))
                    })?,
                };
                let (key, value) = map_types(dt).ok_or_else(|| bad_type("MAP"))?;
                if struct_fields_of(&value).map(|f| f.len()) != Some(row.len()) {
                    return Err(bad_type("MAP<K, ROW> (Arrow value type does not match)"));
                }
                AggKind::MergeMapWithKeyTime {
                    key,
                    ts,
                    width: row.len(),
                }
            }
            "nested_update" | "nested_partial_update" => {
                let row_fields = match pt {
                    TypeKind::Array(e) => match &e.kind {
                        TypeKind::Row(r) => r,
                        _ => return Err(bad_type("ARRAY<ROW>")),
                    },
                    _ => return Err(bad_type("ARRAY<ROW>")),
                };
                let element = list_element(dt).ok_or_else(|| bad_type("ARRAY<ROW>"))?;
                let fields = struct_fields_of(&element).ok_or_else(|| bad_type("ARRAY<ROW>"))?;
                if fields.len() != row_fields.len() {
                    return Err(bad_type("ARRAY<ROW> (Arrow element type does not match)"));
                }
                let index_of = |n: &String| {
                    row_fields.iter().position(|f| &f.name == n).ok_or_else(|| {
                        Error::invalid(format!(
                            "nested field '{n}' of field '{name}' does not exist"
                        ))
                    })
                };
                let key = opts
                    .nested_key
                    .iter()
                    .map(index_of)
                    .collect::<Result<Vec<_>>>()?;
                let key_types: Vec<DataType> = key
                    .iter()
                    .map(|k| row_fields[*k].data_type.clone())
                    .collect();
                if func == "nested_partial_update" {
                    if key.is_empty() {
                        return Err(Error::invalid(format!(
                            "nested_partial_update on field '{name}' requires 'fields.{name}.nested-key'"
                        )));
                    }
                    AggKind::NestedPartialUpdate {
                        fields,
                        key,
                        key_types,
                        nulls,
                    }
                } else {
                    if key.is_empty() && opts.nested_key_null_strategy.is_some() {
                        return Err(Error::invalid(
                            "Option 'fields.<field-name>.nested-key-null-strategy' requires 'fields.<field-name>.nested-key' to be configured.",
                        ));
                    }
                    if key.is_empty() && !opts.nested_sequence_field.is_empty() {
                        return Err(Error::invalid(
                            "Option 'fields.<field-name>.nested-sequence-field' requires 'fields.<field-name>.nested-key' to be configured.",
                        ));
                    }
                    let seq = opts
                        .nested_sequence_field
                        .iter()
                        .map(index_of)
                        .collect::<Result<Vec<_>>>()?;
                    let limit = match opts.count_limit {
                        None => usize::MAX,
                        Some(n) => usize::try_from(n).unwrap_or(0),
                    };
                    AggKind::NestedUpdate {
                        element,
                        fields,
                        key,
                        key_types,
                        seq,
                        nulls,
                        limit,
                    }
                }
            }
            "primary-key" => AggKind::PrimaryKey,
            "rbm32" => {
                if !matches!(pt, TypeKind::VarBinary { .. }) {
                    return Err(bad_type("VARBINARY"));
                }
                AggKind::Rbm32
            }
            "hll_sketch" | "theta_sketch" | "rbm64" => {
                return Err(Error::unsupported(format!(
                    "aggregate function '{func}' (field '{name}'): needs a {} implementation, which this build does not include",
                    match func {
                        "hll_sketch" => "DataSketches HLL sketch",
                        "theta_sketch" => "DataSketches Theta sketch",
                        _ => "RoaringBitmap (64-bit, Roaring64Bitmap)",
                    }
                )));
            }
            other => {
                return Err(Error::unsupported(format!(
                    "aggregate function '{other}' on field '{name}': unknown name (Java: \"Use unsupported aggregation: {other} or spell aggregate function incorrectly!\")"
                )));
            }
        };
        if agg_remove_record_on_delete && opts.ignore_retract {
            return Err(Error::invalid(format!(
                "aggregation.remove-record-on-delete and fields.{name}.ignore-retract have conflicting behavior so should not be enabled at the same time."
            )));
        }
        Ok(FieldAgg {
            func: func.to_string(),
            field: name.to_string(),
            dt: dt.clone(),
            kind,
            ignore_retract: opts.ignore_retract,
            initialized: false,
        })
    }

    /// The fast-path form of this aggregate, `None` if it has none.
    pub(crate) fn simple(&self) -> Option<SimpleAgg> {
        Some(match self.kind {
            AggKind::LastValue | AggKind::PrimaryKey => SimpleAgg::Last,
            AggKind::FirstValue => SimpleAgg::First,
            AggKind::LastNonNull => SimpleAgg::LastNonNull,
            AggKind::FirstNonNull => SimpleAgg::FirstNonNull,
            AggKind::Sum => SimpleAgg::Sum(match self.dt {
                ArrowType::Int8 => SumType::I8,
                ArrowType::Int16 => SumType::I16,
                ArrowType::Int32 => SumType::I32,
                ArrowType::Int64 => SumType::I64,
                ArrowType::Float32 => SumType::F32,
                ArrowType::Float64 => SumType::F64,
                _ => return None,
            }),
            AggKind::Max if native_cmp_supported(&self.dt) => SimpleAgg::Max,
            AggKind::Min if native_cmp_supported(&self.dt) => SimpleAgg::Min,
            _ => return None,
        })
    }

    /// Forget per-key state (Java `reset`).
    pub(crate) fn reset(&mut self) {
        self.initialized = false;
    }

    fn err(&self, msg: impl std::fmt::Display) -> Error {
        Error::invalid(format!(
            "aggregate function '{}' on field '{}': {msg}",
            self.func, self.field
        ))
    }

    /// `agg(accumulator, input)`.
    pub(crate) fn agg(&mut self, acc: Value, input: Value) -> Result<Value> {
        match &self.kind {
            AggKind::LastValue | AggKind::PrimaryKey => Ok(input),
            AggKind::LastNonNull => Ok(if input.is_null() { acc } else { input }),
            AggKind::FirstValue => {
                if self.initialized {
                    Ok(acc)
                } else {
                    self.initialized = true;
                    Ok(input)
                }
            }
            AggKind::FirstNonNull => {
                if !self.initialized && !input.is_null() {
                    self.initialized = true;
                    Ok(input)
                } else {
                    Ok(acc)
                }
            }
            _ if matches!(
                self.kind,
                AggKind::Sum
                    | AggKind::Product
                    | AggKind::Max
                    | AggKind::Min
                    | AggKind::BoolAnd
                    | AggKind::BoolOr
                    | AggKind::MergeMap { .. }
                    | AggKind::Rbm32
            ) && (acc.is_null() || input.is_null()) =>
            {
                Ok(if acc.is_null() { input } else { acc })
            }
            AggKind::Sum => self.arith(&acc, &input, Op::Add),
            AggKind::Rbm32 => {
                let bitmap = |v: &Value| -> Result<roaring::RoaringBitmap> {
                    match v.scalar()? {
                        Value::Bin(b) => roaring::RoaringBitmap::deserialize_from(b.as_slice())
                            .map_err(|e| {
                                self.err(format!("invalid serialized RoaringBitmap: {e}"))
                            }),
                        _ => Err(self.err("expected a VARBINARY value")),
                    }
                };
                let mut a = bitmap(&acc)?;
                a |= bitmap(&input)?;
                a.optimize();
                let mut out = Vec::with_capacity(a.serialized_size());
                a.serialize_into(&mut out)
                    .map_err(|e| self.err(format!("serializing RoaringBitmap: {e}")))?;
                Ok(Value::Bin(out))
            }
            AggKind::Product => self.arith(&acc, &input, Op::Mul),
            AggKind::Max | AggKind::Min => {
                let ord = compare_values(&acc, &input)?;
                let keep_acc = if matches!(self.kind, AggKind::Max) {
                    ord != Ordering::Less
                } else {
                    ord == Ordering::Less
                };
                Ok(if keep_acc { acc } else { input })
            }
            AggKind::BoolAnd | AggKind::BoolOr => match (acc.scalar()?, input.scalar()?) {
                (Value::Bool(a), Value::Bool(b)) => {
                    Ok(Value::Bool(if matches!(self.kind, AggKind::BoolAnd) {
                        a && b
                    } else {
                        a || b
                    }))
                }
                _ => Err(self.err("expected BOOLEAN values")),
            },
            AggKind::Listagg {
                delimiter,
                distinct,
            } => listagg(acc, input, delimiter, *distinct),
            AggKind::Collect {
                distinct,
                element,
                gather,
            } => collect(acc, input, *distinct, element, *gather),
            AggKind::MergeMap { key } => {
                let key = key.clone();
                let mut m = OrderedMap::default();
                m.put_all(&key, acc.map_entries()?)?;
                m.put_all(&key, input.map_entries()?)?;
                Ok(Value::Map(m.into_entries()))
            }
            AggKind::MergeMapWithKeyTime { key, ts, width } => {
                if acc.is_null() {
                    return Ok(input);
                }
                if input.is_null() {
                    return Ok(acc);
                }
                let (key, ts, width) = (key.clone(), *ts, *width);
                let mut m = OrderedMap::default();
                m.put_all(&key, acc.map_entries()?)?;
                let entries = input.map_entries()?;
                let keys: Vec<Value> = entries.iter().map(|e| e.0.clone()).collect();
                let fps = fingerprints(&[(&key, &keys)])?;
                for (fp, (k, v)) in fps.into_iter().zip(entries) {
                    if v.is_null() {
                        m.remove(&fp);
                        continue;
                    }
                    let new_ts = v.struct_fields(width)?[ts].as_string()?;
                    let Some(new_ts) = new_ts else {
                        continue;
                    };
                    let replace = match m.get(&fp) {
                        None | Some(Value::Null) => true,
                        Some(old) => match old.struct_fields(width)?[ts].as_string()? {
                            None => true,
                            Some(old_ts) => new_ts.as_str() > old_ts.as_str(),
                        },
                    };
                    if replace {
                        m.put(fp, k, v);
                    }
                }
                Ok(Value::Map(m.into_entries()))
            }
            AggKind::NestedUpdate { .. } => self.nested_update(acc, input),
            AggKind::NestedPartialUpdate {
                fields,
                key,
                key_types,
                nulls,
            } => {
                if input.is_null() {
                    return Ok(acc);
                }
                let width = fields.len();
                let mut rows: Vec<Vec<Value>> = Vec::new();
                for r in acc
                    .list_elements()?
                    .into_iter()
                    .chain(input.list_elements()?)
                {
                    if !r.is_null() {
                        rows.push(r.struct_fields(width)?);
                    }
                }
                // Java: a HashMap from the key row, filled with computeIfAbsent.
                let mut merged: JavaHashMap<KeyRow, Vec<Value>> = JavaHashMap::new();
                for row in rows {
                    let key_values: Vec<&Value> = key.iter().map(|k| &row[*k]).collect();
                    if KeyRow::any_null(&key_values) && !self.null_key_ok(*nulls)? {
                        continue;
                    }
                    let key_row = KeyRow::encode(&key_values, key_types)?;
                    let slot = merged.compute_if_absent(Some(key_row), || vec![Value::Null; width]);
                    for (dst, v) in slot.iter_mut().zip(row) {
                        if !v.is_null() {
                            *dst = v;
                        }
                    }
                }
                Ok(Value::List(
                    merged
                        .into_values()
                        .into_iter()
                        .map(Value::Struct)
                        .collect(),
                ))
            }
        }
    }

    /// `aggReversed(accumulator, input)` = `agg(input, accumulator)`, except `collect`.
    pub(crate) fn agg_reversed(&mut self, acc: Value, input: Value) -> Result<Value> {
        if matches!(self.kind, AggKind::Collect { .. }) {
            self.agg(acc, input)
        } else {
            self.agg(input, acc)
        }
    }

    /// `retract(accumulator, input)`.
    pub(crate) fn retract(&mut self, acc: Value, input: Value) -> Result<Value> {
        if self.ignore_retract {
            return Ok(acc);
        }
        match &self.kind {
            AggKind::PrimaryKey => Ok(input),
            AggKind::LastValue => Ok(Value::Null),
            AggKind::LastNonNull => Ok(if input.is_null() { acc } else { Value::Null }),
            AggKind::Sum => {
                if input.is_null() {
                    Ok(acc)
                } else if acc.is_null() {
                    self.negate(&input)
                } else {
                    self.arith(&acc, &input, Op::Sub)
                }
            }
            AggKind::Product => {
                if acc.is_null() || input.is_null() {
                    Ok(acc)
                } else {
                    self.arith(&acc, &input, Op::Div)
                }
            }
            AggKind::Collect {
                element, gather, ..
            } => {
                // Java compares BINARY elements (`byte[]`) by identity: nothing is retracted.
                if acc.is_null() || input.is_null() || *gather == Distinct::Identity {
                    return Ok(acc);
                }
                let retract = input.list_elements()?;
                if retract.is_empty() {
                    return Ok(acc);
                }
                let element = element.clone();
                let accs = acc.list_elements()?;
                let afp = fingerprints(&[(&element, &accs)])?;
                let rfp = fingerprints(&[(&element, &retract)])?;
                let mut pending: Vec<Option<Vec<u8>>> = rfp.into_iter().map(Some).collect();
                let mut out = Vec::new();
                for (v, fp) in accs.into_iter().zip(afp) {
                    match pending.iter_mut().find(|p| p.as_ref() == Some(&fp)) {
                        Some(slot) => *slot = None,
                        None => out.push(v),
                    }
                }
                Ok(Value::List(out))
            }
            AggKind::MergeMap { key } => {
                if acc.is_null() || input.is_null() {
                    return Ok(acc);
                }
                let retract = input.map_entries()?;
                if retract.is_empty() {
                    return Ok(acc);
                }
                let key = key.clone();
                let rkeys: Vec<Value> = retract.into_iter().map(|e| e.0).collect();
                let gone: BTreeSet<Vec<u8>> =
                    fingerprints(&[(&key, &rkeys)])?.into_iter().collect();
                let mut m = OrderedMap::default();
                let entries = acc.map_entries()?;
                let keys: Vec<Value> = entries.iter().map(|e| e.0.clone()).collect();
                for (fp, (k, v)) in fingerprints(&[(&key, &keys)])?.into_iter().zip(entries) {
                    if !gone.contains(&fp) {
                        m.put(fp, k, v);
                    }
                }
                Ok(Value::Map(m.into_entries()))
            }
            AggKind::NestedUpdate {
                element,
                fields,
                key,
                key_types,
                nulls,
                ..
            } => {
                if acc.is_null() || input.is_null() {
                    return Ok(acc);
                }
                let rows: Vec<Value> = acc
                    .list_elements()?
                    .into_iter()
                    .filter(|r| !r.is_null())
                    .collect();
                let retract: Vec<Value> = input
                    .list_elements()?
                    .into_iter()
                    .filter(|r| !r.is_null())
                    .collect();
                if key.is_empty() {
                    let gone: BTreeSet<Vec<u8>> =
                        fingerprints(&[(element, &retract)])?.into_iter().collect();
                    let fps = fingerprints(&[(element, &rows)])?;
                    return Ok(Value::List(
                        rows.into_iter()
                            .zip(fps)
                            .filter(|(_, fp)| !gone.contains(fp))
                            .map(|(r, _)| r)
                            .collect(),
                    ));
                }
                // Java: a HashMap from the key rows of the accumulator (put), then the
                // retracted keys removed.
                let width = fields.len();
                let mut m: JavaHashMap<KeyRow, Value> = JavaHashMap::new();
                for r in rows {
                    let f = r.struct_fields(width)?;
                    let key_values: Vec<&Value> = key.iter().map(|k| &f[*k]).collect();
                    if KeyRow::any_null(&key_values) && !self.null_key_ok(*nulls)? {
                        continue;
                    }
                    let key_row = KeyRow::encode(&key_values, key_types)?;
                    m.put(Some(key_row), r);
                }
                for r in retract {
                    let f = r.struct_fields(width)?;
                    let key_values: Vec<&Value> = key.iter().map(|k| &f[*k]).collect();
                    if KeyRow::any_null(&key_values) && !self.null_key_ok(*nulls)? {
                        continue;
                    }
                    m.remove(&Some(KeyRow::encode(&key_values, key_types)?));
                }
                Ok(Value::List(m.into_values()))
            }
            _ => Err(Error::unsupported(format!(
                "Aggregate function '{}' does not support retraction (field '{}'); set 'fields.{}.ignore-retract'='true' to ignore retraction messages",
                self.func, self.field, self.field
            ))),
        }
    }

    fn null_key_ok(&self, nulls: NullKeyStrategy) -> Result<bool> {
        match nulls {
            NullKeyStrategy::Merge => Ok(true),
            NullKeyStrategy::Ignore => Ok(false),
            NullKeyStrategy::Error => {
                Err(self
                    .err("Nested key contains null values. Primary key fields must not be null."))
            }
        }
    }

    fn nested_update(&mut self, acc: Value, input: Value) -> Result<Value> {
        let AggKind::NestedUpdate {
            fields,
            key,
            key_types,
            seq,
            nulls,
            limit,
            ..
        } = &self.kind
        else {
            return Ok(acc);
        };
        if input.is_null() {
            return Ok(acc);
        }
        let (fields, key, key_types, seq, nulls, limit) = (
            fields.clone(),
            key.clone(),
            key_types.clone(),
            seq.clone(),
            *nulls,
            *limit,
        );
        let inputs = input.list_elements()?;
        if key.is_empty() {
            let non_null = |v: Vec<Value>| v.into_iter().filter(|r| !r.is_null());
            if acc.is_null() {
                return Ok(Value::List(non_null(inputs).take(limit).collect()));
            }
            let accs = acc.list_elements()?;
            if accs.len() >= limit {
                return Ok(acc);
            }
            let remain = limit - accs.len();
            let mut rows: Vec<Value> = non_null(accs).collect();
            rows.extend(non_null(inputs).take(remain));
            return Ok(Value::List(rows));
        }
        let width = fields.len();
        // Java: a HashMap from the key row to (sequence fingerprint, row), filled with put.
        let mut m: JavaHashMap<KeyRow, (Value, Value)> = JavaHashMap::new();
        let mut add = |rows: Vec<Value>, limit_new: bool, this: &Self| -> Result<()> {
            let rows: Vec<Value> = rows.into_iter().filter(|r| !r.is_null()).collect();
            let split: Vec<Vec<Value>> = rows
                .iter()
                .map(|r| r.struct_fields(width))
                .collect::<Result<_>>()?;
            let sfps = if seq.is_empty() {
                Vec::new()
            } else {
                key_fingerprints(&fields, &seq, &split)?
            };
            for (i, row) in rows.into_iter().enumerate() {
                let key_values: Vec<&Value> = key.iter().map(|k| &split[i][*k]).collect();
                if KeyRow::any_null(&key_values) && !this.null_key_ok(nulls)? {
                    continue;
                }
                let key_row = Some(KeyRow::encode(&key_values, &key_types)?);
                match m.get(&key_row) {
                    Some((old_seq, _)) => {
                        let newer = seq.is_empty()
                            || sfps[i].as_slice().cmp(old_seq_bytes(old_seq)) != Ordering::Less;
                        if newer {
                            m.put(key_row, (seq_value(&sfps, i), row));
                        }
                    }
                    None => {
                        if !limit_new || m.len() < limit {
                            m.put(key_row, (seq_value(&sfps, i), row));
                        }
                    }
                }
            }
            Ok(())
        };
        let this = self.clone();
        if !acc.is_null() {
            add(acc.list_elements()?, false, &this)?;
        }
        add(inputs, true, &this)?;
        Ok(Value::List(
            m.into_values().into_iter().map(|(_, v)| v).collect(),
        ))
    }

    fn negate(&self, v: &Value) -> Result<Value> {
        let s = v.scalar()?;
        let over = || self.err(format!("overflow: -{}", fmt_num(&s)));
        Ok(match &s {
            Value::I8(x) => Value::I8(x.checked_neg().ok_or_else(over)?),
            Value::I16(x) => Value::I16(x.checked_neg().ok_or_else(over)?),
            Value::I32(x) => Value::I32(x.checked_neg().ok_or_else(over)?),
            Value::I64(x) => Value::I64(x.checked_neg().ok_or_else(over)?),
            Value::F32(x) => Value::F32(-x),
            Value::F64(x) => Value::F64(-x),
            Value::Dec(x) => Value::Dec(-x),
            _ => return Err(self.err("expected a numeric value")),
        })
    }

    fn decimal_ps(&self) -> Result<(u8, i8)> {
        match self.dt {
            ArrowType::Decimal128(p, s) => Ok((p, s)),
            _ => Err(self.err(format!("unsupported decimal column type {}", self.dt))),
        }
    }

    fn arith(&self, a: &Value, b: &Value, op: Op) -> Result<Value> {
        let (a, b) = (a.scalar()?, b.scalar()?);
        let over = || {
            self.err(format!(
                "overflow: {} {} {}",
                fmt_num(&a),
                op.symbol(),
                fmt_num(&b)
            ))
        };
        macro_rules! int {
            ($x:expr, $y:expr, $var:ident) => {{
                let r = match op {
                    Op::Add => $x.checked_add(*$y),
                    Op::Sub => $x.checked_sub(*$y),
                    Op::Mul => $x.checked_mul(*$y),
                    Op::Div => {
                        if *$y == 0 {
                            return Err(self.err("division by zero"));
                        }
                        $x.checked_div(*$y)
                    }
                };
                Value::$var(r.ok_or_else(over)?)
            }};
        }
        macro_rules! float {
            ($x:expr, $y:expr, $var:ident) => {{
                Value::$var(match op {
                    Op::Add => $x + $y,
                    Op::Sub => $x - $y,
                    Op::Mul => $x * $y,
                    Op::Div => $x / $y,
                })
            }};
        }
        Ok(match (&a, &b) {
            (Value::I8(x), Value::I8(y)) => int!(x, y, I8),
            (Value::I16(x), Value::I16(y)) => int!(x, y, I16),
            (Value::I32(x), Value::I32(y)) => int!(x, y, I32),
            (Value::I64(x), Value::I64(y)) => int!(x, y, I64),
            (Value::F32(x), Value::F32(y)) => float!(x, y, F32),
            (Value::F64(x), Value::F64(y)) => float!(x, y, F64),
            (Value::Dec(x), Value::Dec(y)) => {
                let (p, s) = self.decimal_ps()?;
                let scale = 10i128.pow(s.max(0) as u32);
                let r = match op {
                    Op::Add => x.checked_add(*y),
                    Op::Sub => x.checked_sub(*y),
                    Op::Mul => match x.checked_mul(*y) {
                        Some(m) => Some(div_round_half_up(m, scale)),
                        None => {
                            return Err(Error::unsupported(format!(
                                "aggregate function '{}' on field '{}': DECIMAL product exceeds 128-bit intermediate precision",
                                self.func, self.field
                            )));
                        }
                    },
                    Op::Div => Some(self.decimal_div(*x, *y, scale)?),
                };
                // Java Decimal.fromBigDecimal: a result beyond the precision is NULL.
                match r {
                    Some(r) if fits_precision(r, p) => Value::Dec(r),
                    _ => Value::Null,
                }
            }
            _ => return Err(self.err("expected numeric values of the column type")),
        })
    }

    /// Exact `BigDecimal.divide` of two decimals of the same scale, rounded HALF_UP to that
    /// scale; a non-terminating quotient is an error as in Java.
    fn decimal_div(&self, x: i128, y: i128, scale: i128) -> Result<i128> {
        if y == 0 {
            return Err(self.err("division by zero"));
        }
        let g = gcd(x.unsigned_abs(), y.unsigned_abs());
        let mut d = y.unsigned_abs() / g.max(1);
        while d.is_multiple_of(2) {
            d /= 2;
        }
        while d.is_multiple_of(5) {
            d /= 5;
        }
        if d != 1 {
            return Err(self
                .err("Non-terminating decimal expansion; no exact representable decimal result."));
        }
        let num = x
            .checked_mul(scale)
            .ok_or_else(|| self.err("DECIMAL division overflow"))?;
        Ok(div_round_half_up_signed(num, y))
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

fn div_round_half_up(m: i128, scale: i128) -> i128 {
    div_round_half_up_signed(m, scale)
}

/// `n / d` rounded half away from zero (Java `RoundingMode.HALF_UP`).
fn div_round_half_up_signed(n: i128, d: i128) -> i128 {
    let q = n / d;
    let r = n % d;
    if r.unsigned_abs() * 2 >= d.unsigned_abs() {
        if (n < 0) != (d < 0) { q - 1 } else { q + 1 }
    } else {
        q
    }
}

fn fits_precision(v: i128, p: u8) -> bool {
    match 10i128.checked_pow(p as u32) {
        Some(limit) => v.unsigned_abs() < limit.unsigned_abs(),
        None => true,
    }
}

fn fmt_num(v: &Value) -> String {
    match v {
        Value::I8(x) => x.to_string(),
        Value::I16(x) => x.to_string(),
        Value::I32(x) => x.to_string(),
        Value::I64(x) => x.to_string(),
        Value::F32(x) => x.to_string(),
        Value::F64(x) => x.to_string(),
        Value::Dec(x) => format!("{x} (unscaled)"),
        _ => "?".into(),
    }
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
        }
    }
}

fn seq_value(sfps: &[Vec<u8>], i: usize) -> Value {
    match sfps.get(i) {
        Some(b) => Value::Bin(b.clone()),
        None => Value::Null,
    }
}

fn old_seq_bytes(v: &Value) -> &[u8] {
    match v {
        Value::Bin(b) => b,
        _ => &[],
    }
}

/// Fingerprints of the `key` fields of split rows.
fn key_fingerprints(fields: &Fields, key: &[usize], rows: &[Vec<Value>]) -> Result<Vec<Vec<u8>>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let cols: Vec<Vec<Value>> = key
        .iter()
        .map(|k| rows.iter().map(|r| r[*k].clone()).collect())
        .collect();
    let spec: Vec<(&ArrowType, &[Value])> = key
        .iter()
        .zip(&cols)
        .map(|(k, c)| (fields[*k].data_type(), c.as_slice()))
        .collect();
    fingerprints(&spec)
}

/// An insertion-ordered map keyed by value fingerprints (a re-put keeps the position): the
/// entries of `merge_map` results.
#[derive(Default)]
struct OrderedMap {
    entries: Vec<Option<(Value, Value)>>,
    index: BTreeMap<Vec<u8>, usize>,
}

impl OrderedMap {
    fn put(&mut self, fp: Vec<u8>, k: Value, v: Value) {
        match self.index.get(&fp) {
            Some(i) => self.entries[*i] = Some((k, v)),
            None => {
                self.index.insert(fp, self.entries.len());
                self.entries.push(Some((k, v)));
            }
        }
    }

    fn put_all(&mut self, key_type: &ArrowType, entries: Vec<(Value, Value)>) -> Result<()> {
        let keys: Vec<Value> = entries.iter().map(|e| e.0.clone()).collect();
        for (fp, (k, v)) in fingerprints(&[(key_type, &keys)])?.into_iter().zip(entries) {
            self.put(fp, k, v);
        }
        Ok(())
    }

    fn get(&self, fp: &[u8]) -> Option<&Value> {
        self.index
            .get(fp)
            .and_then(|i| self.entries[*i].as_ref())
            .map(|e| &e.1)
    }

    fn remove(&mut self, fp: &[u8]) {
        if let Some(i) = self.index.remove(fp) {
            self.entries[i] = None;
        }
    }

    fn into_entries(self) -> Vec<(Value, Value)> {
        self.entries.into_iter().flatten().collect()
    }
}

fn listagg(acc: Value, input: Value, delimiter: &str, distinct: bool) -> Result<Value> {
    let Some(inp) = input.as_string()? else {
        return Ok(acc);
    };
    if is_blank(&inp) {
        return Ok(acc);
    }
    let a = match acc.as_string()? {
        Some(a) if !is_blank(&a) => a,
        _ => return Ok(input),
    };
    if !distinct {
        return Ok(Value::Str(format!("{a}{delimiter}{inp}")));
    }
    let mut seen: BTreeSet<String> = split_tokens(&a, delimiter).into_iter().collect();
    let mut out = a;
    for tok in split_tokens(&inp, delimiter) {
        if is_blank(&tok) || seen.contains(&tok) {
            continue;
        }
        out.push_str(delimiter);
        out.push_str(&tok);
        seen.insert(tok);
    }
    Ok(Value::Str(out))
}

/// Commons-lang `splitByWholeSeparatorPreserveAllTokens` (an empty separator splits on
/// whitespace).
fn split_tokens(s: &str, sep: &str) -> Vec<String> {
    if s.is_empty() {
        return Vec::new();
    }
    if sep.is_empty() {
        return s
            .split(super::value::java_is_whitespace)
            .map(str::to_string)
            .collect();
    }
    s.split(sep).map(str::to_string).collect()
}

/// Java `FieldCollectAgg#agg`: with `distinct`, a NULL side still goes through the gathering
/// (a lone accumulator is re-gathered too).
fn collect(
    acc: Value,
    input: Value,
    distinct: bool,
    element: &ArrowType,
    gather: Distinct,
) -> Result<Value> {
    if acc.is_null() && input.is_null() {
        return Ok(Value::Null);
    }
    if !distinct && (acc.is_null() || input.is_null()) {
        return Ok(if acc.is_null() { input } else { acc });
    }
    let acc = acc.list_elements()?;
    let input = input.list_elements()?;
    if !distinct {
        return Ok(Value::List(acc.into_iter().chain(input).collect()));
    }
    Ok(Value::List(match gather {
        Distinct::HashSet(kind) => {
            let mut set: JavaHashMap<_, Value> = JavaHashMap::new();
            for v in acc.into_iter().chain(input) {
                set.add(java_element(kind, &v)?, v);
            }
            set.into_values()
        }
        // The accumulator is taken as it is (Java assumes it distinct), then each input
        // element not equal to one gathered so far.
        Distinct::Equaliser => {
            let fps = fingerprints(&[(element, &input)])?;
            let mut seen: BTreeSet<Vec<u8>> =
                fingerprints(&[(element, &acc)])?.into_iter().collect();
            let mut out = acc;
            for (v, fp) in input.into_iter().zip(fps) {
                if seen.insert(fp) {
                    out.push(v);
                }
            }
            out
        }
        Distinct::Identity => acc.into_iter().chain(input).collect(),
        Distinct::FirstSeen => {
            let items: Vec<Value> = acc.into_iter().chain(input).collect();
            let fps = fingerprints(&[(element, &items)])?;
            let mut seen = BTreeSet::new();
            items
                .into_iter()
                .zip(fps)
                .filter(|(_, fp)| seen.insert(fp.clone()))
                .map(|(v, _)| v)
                .collect()
        }
    }))
}
