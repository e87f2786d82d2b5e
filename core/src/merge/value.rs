//! Field values held by the merge functions, and building Arrow columns from them.
//!
//! A value taken from an input batch stays a reference into that batch's array
//! ([`Value::Ref`]); only aggregate functions that compute something new (sum, listagg,
//! collect, merge_map...) produce owned values. Columns are built with
//! `arrow_select::interleave` over the referenced arrays plus one array built from the owned
//! values, so unchanged values of any type (nested included) are copied, never re-encoded.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, BooleanArray, Decimal128Array,
    FixedSizeBinaryArray, Float32Array, Float64Array, Int8Array, Int16Array, Int32Array,
    Int64Array, LargeBinaryArray, LargeListArray, LargeStringArray, ListArray, MapArray,
    StringArray, StringViewArray, StructArray, make_array, new_null_array,
};
use arrow_buffer::OffsetBuffer;
use arrow_data::transform::MutableArrayData;
use arrow_row::{RowConverter, SortField};
use arrow_schema::{DataType, SortOptions};

use crate::error::{Error, Result};

/// One field value.
#[derive(Debug, Clone)]
pub(crate) enum Value {
    /// SQL NULL.
    Null,
    /// The non-null value at `row` of `array` (any type).
    Ref(ArrayRef, usize),
    /// BOOLEAN.
    Bool(bool),
    /// TINYINT.
    I8(i8),
    /// SMALLINT.
    I16(i16),
    /// INT.
    I32(i32),
    /// BIGINT.
    I64(i64),
    /// FLOAT.
    F32(f32),
    /// DOUBLE.
    F64(f64),
    /// DECIMAL unscaled value (precision and scale from the column type).
    Dec(i128),
    /// STRING / VARCHAR / CHAR.
    Str(String),
    /// BYTES / VARBINARY / BINARY.
    Bin(Vec<u8>),
    /// ARRAY / MULTISET elements.
    List(Vec<Value>),
    /// MAP entries, in order.
    Map(Vec<(Value, Value)>),
    /// ROW fields.
    Struct(Vec<Value>),
}

impl Value {
    /// The value at `row` of `array` (`Null` when null).
    pub(crate) fn at(array: &ArrayRef, row: usize) -> Value {
        if array.is_null(row) {
            Value::Null
        } else {
            Value::Ref(Arc::clone(array), row)
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Resolve a reference to a primitive/string/binary scalar; other values unchanged.
    pub(crate) fn scalar(&self) -> Result<Value> {
        let Value::Ref(a, i) = self else {
            return Ok(self.clone());
        };
        let i = *i;
        Ok(match a.data_type() {
            DataType::Boolean => Value::Bool(a.as_boolean().value(i)),
            DataType::Int8 => Value::I8(a.as_primitive::<Int8Type>().value(i)),
            DataType::Int16 => Value::I16(a.as_primitive::<Int16Type>().value(i)),
            DataType::Int32 => Value::I32(a.as_primitive::<Int32Type>().value(i)),
            DataType::Date32 => Value::I32(a.as_primitive::<Date32Type>().value(i)),
            DataType::Int64 => Value::I64(a.as_primitive::<Int64Type>().value(i)),
            DataType::Float32 => Value::F32(a.as_primitive::<Float32Type>().value(i)),
            DataType::Float64 => Value::F64(a.as_primitive::<Float64Type>().value(i)),
            DataType::Decimal128(_, _) => Value::Dec(a.as_primitive::<Decimal128Type>().value(i)),
            DataType::Utf8 => Value::Str(a.as_string::<i32>().value(i).to_string()),
            DataType::LargeUtf8 => Value::Str(a.as_string::<i64>().value(i).to_string()),
            DataType::Utf8View => Value::Str(a.as_string_view().value(i).to_string()),
            DataType::Binary => Value::Bin(a.as_binary::<i32>().value(i).to_vec()),
            DataType::LargeBinary => Value::Bin(a.as_binary::<i64>().value(i).to_vec()),
            DataType::BinaryView => Value::Bin(a.as_binary_view().value(i).to_vec()),
            DataType::FixedSizeBinary(_) => Value::Bin(a.as_fixed_size_binary().value(i).to_vec()),
            _ => self.clone(),
        })
    }

    /// The string of a STRING value, `None` for NULL.
    pub(crate) fn as_string(&self) -> Result<Option<String>> {
        match self.scalar()? {
            Value::Null => Ok(None),
            Value::Str(s) => Ok(Some(s)),
            other => Err(type_error("a string", &other)),
        }
    }

    /// The elements of an ARRAY value (empty for NULL).
    pub(crate) fn list_elements(&self) -> Result<Vec<Value>> {
        match self {
            Value::Null => Ok(Vec::new()),
            Value::List(v) => Ok(v.clone()),
            Value::Ref(a, i) => {
                let (child, range) = match a.data_type() {
                    DataType::List(_) => {
                        let l = a.as_list::<i32>();
                        let o = l.value_offsets();
                        (l.values(), o[*i] as usize..o[*i + 1] as usize)
                    }
                    DataType::LargeList(_) => {
                        let l = a.as_list::<i64>();
                        let o = l.value_offsets();
                        (l.values(), o[*i] as usize..o[*i + 1] as usize)
                    }
                    DataType::FixedSizeList(_, n) => {
                        let l = a.as_fixed_size_list();
                        let n = *n as usize;
                        (l.values(), i * n..(i + 1) * n)
                    }
                    _ => return Err(type_error("an array", self)),
                };
                Ok(range.map(|j| Value::at(child, j)).collect())
            }
            other => Err(type_error("an array", other)),
        }
    }

    /// The entries of a MAP value (empty for NULL).
    pub(crate) fn map_entries(&self) -> Result<Vec<(Value, Value)>> {
        match self {
            Value::Null => Ok(Vec::new()),
            Value::Map(v) => Ok(v.clone()),
            Value::Ref(a, i) if matches!(a.data_type(), DataType::Map(_, _)) => {
                let m = a.as_map();
                let o = m.value_offsets();
                let keys = m.keys();
                let vals = m.values();
                Ok((o[*i] as usize..o[*i + 1] as usize)
                    .map(|j| (Value::at(keys, j), Value::at(vals, j)))
                    .collect())
            }
            other => Err(type_error("a map", other)),
        }
    }

    /// The fields of a ROW value (`n` nulls for NULL).
    pub(crate) fn struct_fields(&self, n: usize) -> Result<Vec<Value>> {
        match self {
            Value::Null => Ok(vec![Value::Null; n]),
            Value::Struct(v) => Ok(v.clone()),
            Value::Ref(a, i) if matches!(a.data_type(), DataType::Struct(_)) => {
                let s = a.as_struct();
                Ok(s.columns().iter().map(|c| Value::at(c, *i)).collect())
            }
            other => Err(type_error("a row", other)),
        }
    }
}

fn type_error(expected: &str, got: &Value) -> Error {
    let got = match got {
        Value::Ref(a, _) => format!("{}", a.data_type()),
        other => format!("{other:?}").chars().take(40).collect(),
    };
    Error::invalid(format!("merge: expected {expected} value, got {got}"))
}

/// Total order of two non-null values of the same type, ascending (Java
/// `InternalRowUtils.compare`).
pub(crate) fn compare_values(a: &Value, b: &Value) -> Result<Ordering> {
    if let (Value::Ref(x, i), Value::Ref(y, j)) = (a, b) {
        let cmp = arrow_ord::ord::make_comparator(x.as_ref(), y.as_ref(), SortOptions::default())
            .map_err(|e| Error::arrow("merge: comparing values", e))?;
        return Ok(cmp(*i, *j));
    }
    let (a, b) = (a.scalar()?, b.scalar()?);
    Ok(match (&a, &b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::I8(x), Value::I8(y)) => x.cmp(y),
        (Value::I16(x), Value::I16(y)) => x.cmp(y),
        (Value::I32(x), Value::I32(y)) => x.cmp(y),
        (Value::I64(x), Value::I64(y)) => x.cmp(y),
        (Value::F32(x), Value::F32(y)) => x.total_cmp(y),
        (Value::F64(x), Value::F64(y)) => x.total_cmp(y),
        (Value::Dec(x), Value::Dec(y)) => x.cmp(y),
        (Value::Str(x), Value::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bin(x), Value::Bin(y)) => x.cmp(y),
        _ => {
            return Err(Error::unsupported(format!(
                "merge: comparing values {:?} and {:?}",
                type_name(&a),
                type_name(&b)
            )));
        }
    })
}

fn type_name(v: &Value) -> String {
    match v {
        Value::Ref(a, _) => a.data_type().to_string(),
        other => format!("{other:?}").chars().take(20).collect(),
    }
}

/// Compare the values of ordering fields, nulls first, ascending (Java
/// `UserDefinedSeqComparator` as used by sequence groups).
pub(crate) fn compare_nulls_first(a: &Value, b: &Value) -> Result<Ordering> {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ok(Ordering::Equal),
        (true, false) => Ok(Ordering::Less),
        (false, true) => Ok(Ordering::Greater),
        (false, false) => compare_values(a, b),
    }
}

/// Build a column of type `dt` from `values` ([`Value::Ref`]s point into arrays of type
/// `dt`).
pub(crate) fn build_column<'a>(
    dt: &DataType,
    values: impl IntoIterator<Item = &'a Value>,
) -> Result<ArrayRef> {
    let mut col = ColumnBuilder::default();
    for v in values {
        col.push_value(Cow::Borrowed(v));
    }
    col.finish(dt, &[])
}

/// A cell of a merged output row: a row of a base array (a window batch's column), or a
/// value.
#[derive(Debug, Clone)]
pub(crate) enum OutCell {
    /// A value (`Null`, a reference into any array of the column type, or owned).
    Val(Value),
}

/// Where the rows of a segment come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    /// A base array (given to [`ColumnBuilder::finish`]).
    Base(usize),
    /// An array a [`Value::Ref`] pointed into.
    Extra(usize),
    /// The owned values.
    Owned,
    /// Nulls.
    Null,
    /// Deferred key groups (`start` is the first group's index), replaced by
    /// [`ColumnBuilder::resolve_deferred`] before the column is built.
    Deferred,
}

/// Consecutive rows of one source.
#[derive(Debug, Clone, Copy)]
struct Segment {
    src: Src,
    start: usize,
    len: usize,
}

/// Builds one output column incrementally from runs of rows of base arrays, nulls and
/// values.
///
/// Consecutive rows of one array are kept as one segment; [`ColumnBuilder::finish`] then
/// copies the column with `MutableArrayData` segment by segment (or with `interleave` when
/// segments are short), so unchanged values of any type are copied, never re-encoded.
#[derive(Debug, Default)]
pub(crate) struct ColumnBuilder<'a> {
    segments: Vec<Segment>,
    extras: Vec<ArrayRef>,
    extra_ptrs: BTreeMap<usize, usize>,
    owned: Vec<Cow<'a, Value>>,
    rows: usize,
    /// Some segment is [`Src::Deferred`].
    has_deferred: bool,
}

impl<'a> ColumnBuilder<'a> {
    #[inline]
    fn push_segment(&mut self, src: Src, start: usize, len: usize) {
        self.rows += len;
        if let Some(last) = self.segments.last_mut()
            && last.src == src
            && (src == Src::Null || last.start + last.len == start)
        {
            last.len += len;
            return;
        }
        self.segments.push(Segment { src, start, len });
    }

    /// Append rows `start..start + len` of base array `base`.
    #[inline]
    pub(crate) fn push_base(&mut self, base: usize, start: usize, len: usize) {
        self.push_segment(Src::Base(base), start, len);
    }

    /// Append one null.
    #[inline]
    pub(crate) fn push_null(&mut self) {
        self.push_segment(Src::Null, 0, 1);
    }

    /// Append the row of deferred key group `group` (groups are numbered consecutively),
    /// to be supplied by [`ColumnBuilder::resolve_deferred`].
    pub(crate) fn push_deferred(&mut self, group: usize) {
        self.has_deferred = true;
        self.push_segment(Src::Deferred, group, 1);
    }

    /// Replace every run of deferred groups by the rows `fill(first_group, count, self)`
    /// appends (exactly one row per group, in order).
    ///
    /// # Errors
    /// Errors of `fill`; [`Error::Invalid`] if it appends another number of rows.
    pub(crate) fn resolve_deferred(
        &mut self,
        mut fill: impl FnMut(usize, usize, &mut Self) -> Result<()>,
    ) -> Result<()> {
        if !self.has_deferred {
            return Ok(());
        }
        self.has_deferred = false;
        let segments = std::mem::take(&mut self.segments);
        self.segments.reserve(segments.len());
        self.rows = 0;
        for seg in &segments {
            if seg.src == Src::Deferred {
                let before = self.rows;
                fill(seg.start, seg.len, self)?;
                if self.rows != before + seg.len || self.has_deferred {
                    return Err(Error::invalid(
                        "merge: a deferred key group did not yield exactly one row",
                    ));
                }
            } else {
                self.push_segment(seg.src, seg.start, seg.len);
            }
        }
        Ok(())
    }

    /// Append one value.
    pub(crate) fn push_value(&mut self, v: Cow<'a, Value>) {
        match v.as_ref() {
            Value::Null => self.push_segment(Src::Null, 0, 1),
            Value::Ref(a, r) => {
                let p = ptr_of(a);
                let idx = match self.extra_ptrs.get(&p) {
                    Some(i) => *i,
                    None => {
                        self.extras.push(Arc::clone(a));
                        self.extra_ptrs.insert(p, self.extras.len() - 1);
                        self.extras.len() - 1
                    }
                };
                let r = *r;
                self.push_segment(Src::Extra(idx), r, 1);
            }
            _ => {
                let at = self.owned.len();
                self.owned.push(v);
                self.push_segment(Src::Owned, at, 1);
            }
        }
    }

    /// Append one cell.
    pub(crate) fn push_cell(&mut self, c: OutCell) {
        match c {
            OutCell::Val(v) => self.push_value(Cow::Owned(v)),
        }
    }

    /// The column of type `dt` of the rows pushed so far; `bases` are the arrays of type
    /// `dt` that [`ColumnBuilder::push_base`] addressed. The builder is empty afterwards.
    ///
    /// # Errors
    /// A value or referenced array that does not have the column type, a base row out of
    /// range.
    pub(crate) fn finish(&mut self, dt: &DataType, bases: &[ArrayRef]) -> Result<ArrayRef> {
        if std::mem::take(&mut self.has_deferred) {
            *self = ColumnBuilder::default();
            return Err(Error::invalid(
                "merge: output column built with unresolved key groups",
            ));
        }
        let segments = std::mem::take(&mut self.segments);
        let extras = std::mem::take(&mut self.extras);
        let owned = std::mem::take(&mut self.owned);
        self.extra_ptrs.clear();
        let rows = std::mem::take(&mut self.rows);
        let owned = if owned.is_empty() {
            None
        } else {
            let refs: Vec<&Value> = owned.iter().map(|v| v.as_ref()).collect();
            Some(build_owned(dt, &refs)?)
        };
        for a in &extras {
            if a.data_type() != dt {
                return Err(Error::invalid(format!(
                    "merge: value of type {} does not fit column type {dt}",
                    a.data_type()
                )));
            }
        }
        let source = |src: Src| -> Option<&ArrayRef> {
            match src {
                Src::Base(i) => bases.get(i),
                Src::Extra(i) => extras.get(i),
                Src::Owned => owned.as_ref(),
                Src::Null | Src::Deferred => None,
            }
        };
        for seg in &segments {
            if seg.src == Src::Null {
                continue;
            }
            let ok = source(seg.src).is_some_and(|a| {
                a.data_type() == dt
                    && seg
                        .start
                        .checked_add(seg.len)
                        .is_some_and(|end| end <= a.len())
            });
            if !ok {
                return Err(Error::invalid(format!(
                    "merge: output cell out of range or not of type {dt}"
                )));
            }
        }
        match segments.as_slice() {
            [] => return Ok(new_null_array(dt, 0)),
            [seg] => {
                return Ok(match source(seg.src) {
                    Some(a) => a.slice(seg.start, seg.len),
                    None => new_null_array(dt, seg.len),
                });
            }
            _ => {}
        }
        // Sources: bases, extras, owned, then (interleave only) one null.
        let mut sources: Vec<&ArrayRef> = bases.iter().chain(extras.iter()).collect();
        let owned_at = sources.len();
        if let Some(o) = &owned {
            sources.push(o);
        }
        let index = |src: Src| match src {
            Src::Base(i) => i,
            Src::Extra(i) => bases.len() + i,
            Src::Owned | Src::Null | Src::Deferred => owned_at,
        };
        let has_nulls = segments.iter().any(|s| s.src == Src::Null);
        let err = |e| Error::arrow("merge: building an output column", e);
        if segments.len() * 2 > rows {
            // Mostly single rows: gather with interleave.
            let null_array;
            let mut null_at = usize::MAX;
            if has_nulls {
                null_array = new_null_array(dt, 1);
                sources.push(&null_array);
                null_at = sources.len() - 1;
            }
            let mut indices = Vec::with_capacity(rows);
            for seg in &segments {
                if seg.src == Src::Null {
                    indices.extend(std::iter::repeat_n((null_at, 0), seg.len));
                } else {
                    let i = index(seg.src);
                    indices.extend((seg.start..seg.start + seg.len).map(|r| (i, r)));
                }
            }
            let refs: Vec<&dyn Array> = sources.iter().map(|a| a.as_ref()).collect();
            return arrow_select::interleave::interleave(&refs, &indices).map_err(err);
        }
        let datas: Vec<arrow_data::ArrayData> = sources.iter().map(|a| a.to_data()).collect();
        let mut m = MutableArrayData::new(datas.iter().collect(), has_nulls, rows);
        for seg in &segments {
            if seg.src == Src::Null {
                m.try_extend_nulls(seg.len).map_err(err)?;
            } else {
                m.try_extend(index(seg.src), seg.start, seg.start + seg.len)
                    .map_err(err)?;
            }
        }
        Ok(make_array(m.freeze()))
    }
}

fn ptr_of(a: &ArrayRef) -> usize {
    Arc::as_ptr(a) as *const () as usize
}

fn mismatch(dt: &DataType, v: &Value) -> Error {
    Error::invalid(format!(
        "merge: value {} does not fit column type {dt}",
        type_name(v)
    ))
}

/// Build an array of type `dt` from owned (non-null, non-`Ref`) values.
fn build_owned(dt: &DataType, values: &[&Value]) -> Result<ArrayRef> {
    macro_rules! prim {
        ($arr:ty, $var:ident) => {{
            let v: Vec<_> = values
                .iter()
                .map(|v| match v {
                    Value::$var(x) => Ok(*x),
                    other => Err(mismatch(dt, other)),
                })
                .collect::<Result<_>>()?;
            Arc::new(<$arr>::from(v)) as ArrayRef
        }};
    }
    let strs = || -> Result<Vec<&str>> {
        values
            .iter()
            .map(|v| match v {
                Value::Str(s) => Ok(s.as_str()),
                other => Err(mismatch(dt, other)),
            })
            .collect()
    };
    let bins = || -> Result<Vec<&[u8]>> {
        values
            .iter()
            .map(|v| match v {
                Value::Bin(s) => Ok(s.as_slice()),
                other => Err(mismatch(dt, other)),
            })
            .collect()
    };
    Ok(match dt {
        DataType::Boolean => prim!(BooleanArray, Bool),
        DataType::Int8 => prim!(Int8Array, I8),
        DataType::Int16 => prim!(Int16Array, I16),
        DataType::Int32 => prim!(Int32Array, I32),
        DataType::Int64 => prim!(Int64Array, I64),
        DataType::Float32 => prim!(Float32Array, F32),
        DataType::Float64 => prim!(Float64Array, F64),
        DataType::Date32 => {
            let a = prim!(Int32Array, I32);
            arrow_cast::cast(&a, dt).map_err(|e| Error::arrow("merge: date column", e))?
        }
        DataType::Decimal128(p, s) => {
            let v: Vec<i128> = values
                .iter()
                .map(|v| match v {
                    Value::Dec(x) => Ok(*x),
                    other => Err(mismatch(dt, other)),
                })
                .collect::<Result<_>>()?;
            Arc::new(
                Decimal128Array::from(v)
                    .with_precision_and_scale(*p, *s)
                    .map_err(|e| Error::arrow("merge: decimal column", e))?,
            )
        }
        DataType::Utf8 => Arc::new(StringArray::from(strs()?)),
        DataType::LargeUtf8 => Arc::new(LargeStringArray::from(strs()?)),
        DataType::Utf8View => Arc::new(StringViewArray::from(strs()?)),
        DataType::Binary => Arc::new(BinaryArray::from(bins()?)),
        DataType::LargeBinary => Arc::new(LargeBinaryArray::from(bins()?)),
        DataType::BinaryView => Arc::new(BinaryViewArray::from(bins()?)),
        DataType::FixedSizeBinary(_) => Arc::new(
            FixedSizeBinaryArray::try_from_iter(bins()?.into_iter())
                .map_err(|e| Error::arrow("merge: binary column", e))?,
        ),
        DataType::List(field) | DataType::LargeList(field) => {
            let mut lens = Vec::with_capacity(values.len());
            let mut cells = Vec::new();
            for v in values {
                let Value::List(items) = v else {
                    return Err(mismatch(dt, v));
                };
                lens.push(items.len());
                cells.extend(items.iter());
            }
            let child = build_column(field.data_type(), cells)?;
            if matches!(dt, DataType::List(_)) {
                Arc::new(
                    ListArray::try_new(
                        Arc::clone(field),
                        OffsetBuffer::from_lengths(lens),
                        child,
                        None,
                    )
                    .map_err(|e| Error::arrow("merge: list column", e))?,
                )
            } else {
                Arc::new(
                    LargeListArray::try_new(
                        Arc::clone(field),
                        OffsetBuffer::from_lengths(lens),
                        child,
                        None,
                    )
                    .map_err(|e| Error::arrow("merge: list column", e))?,
                )
            }
        }
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(mismatch(dt, values[0]));
            };
            if kv.len() != 2 {
                return Err(mismatch(dt, values[0]));
            }
            let mut lens = Vec::with_capacity(values.len());
            let mut kcells = Vec::new();
            let mut vcells = Vec::new();
            for v in values {
                let Value::Map(items) = v else {
                    return Err(mismatch(dt, v));
                };
                lens.push(items.len());
                for (k, x) in items {
                    kcells.push(k);
                    vcells.push(x);
                }
            }
            let keys = build_column(kv[0].data_type(), kcells)?;
            let vals = build_column(kv[1].data_type(), vcells)?;
            let st = StructArray::try_new(kv.clone(), vec![keys, vals], None)
                .map_err(|e| Error::arrow("merge: map entries", e))?;
            Arc::new(
                MapArray::try_new(
                    Arc::clone(entries),
                    OffsetBuffer::from_lengths(lens),
                    st,
                    None,
                    *sorted,
                )
                .map_err(|e| Error::arrow("merge: map column", e))?,
            )
        }
        DataType::Struct(fields) => {
            let mut cols: Vec<Vec<&Value>> = fields.iter().map(|_| Vec::new()).collect();
            for v in values {
                let Value::Struct(items) = v else {
                    return Err(mismatch(dt, v));
                };
                if items.len() != fields.len() {
                    return Err(mismatch(dt, v));
                }
                for (c, item) in cols.iter_mut().zip(items) {
                    c.push(item);
                }
            }
            let children = fields
                .iter()
                .zip(cols)
                .map(|(f, c)| build_column(f.data_type(), c))
                .collect::<Result<Vec<_>>>()?;
            Arc::new(
                StructArray::try_new(fields.clone(), children, None)
                    .map_err(|e| Error::arrow("merge: row column", e))?,
            )
        }
        other => {
            return Err(Error::unsupported(format!(
                "merge: building computed values of type {other}"
            )));
        }
    })
}

/// Byte strings that are equal iff the values are equal (the `arrow-row` encoding), one per
/// row of the tuples formed by `columns` (each a list of values of the given type).
pub(crate) fn fingerprints(columns: &[(&DataType, &[Value])]) -> Result<Vec<Vec<u8>>> {
    let Some(first) = columns.first() else {
        return Ok(Vec::new());
    };
    let n = first.1.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let fields: Vec<SortField> = columns
        .iter()
        .map(|(dt, _)| SortField::new((*dt).clone()))
        .collect();
    let converter =
        RowConverter::new(fields).map_err(|e| Error::arrow("merge: value fingerprints", e))?;
    let arrays = columns
        .iter()
        .map(|(dt, vals)| build_column(dt, vals.iter()))
        .collect::<Result<Vec<_>>>()?;
    let rows = converter
        .convert_columns(&arrays)
        .map_err(|e| Error::arrow("merge: value fingerprints", e))?;
    Ok(rows.iter().map(|r| r.data().to_vec()).collect())
}

/// Parse a Java `Character.isWhitespace` character.
pub(crate) fn java_is_whitespace(c: char) -> bool {
    (c.is_whitespace() && !matches!(c, '\u{00A0}' | '\u{2007}' | '\u{202F}' | '\u{0085}'))
        || matches!(c, '\u{1C}'..='\u{1F}')
}

/// Java `StringUtils.isBlank`.
pub(crate) fn is_blank(s: &str) -> bool {
    s.chars().all(java_is_whitespace)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn builds_mixed_columns() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(3)]));
        let b: ArrayRef = Arc::new(Int64Array::from(vec![10, 20]));
        let vals = [Value::I64(7), Value::Ref(Arc::clone(&b), 1), Value::Null];
        let mut col = ColumnBuilder::default();
        col.push_base(0, 2, 1);
        for v in &vals {
            col.push_value(Cow::Borrowed(v));
        }
        col.push_base(0, 0, 1);
        let out = col.finish(&DataType::Int64, &[Arc::clone(&a)]).unwrap();
        let out = out.as_primitive::<Int64Type>();
        assert_eq!(
            out.iter().collect::<Vec<_>>(),
            vec![Some(3), Some(7), Some(20), None, Some(1)]
        );
    }

    #[test]
    fn builds_nested_lists_and_maps() {
        let list: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), Some(2)]),
            Some(vec![Some(3)]),
        ]));
        let v0 = Value::at(&list, 0);
        let v1 = Value::at(&list, 1);
        let mut items = v0.list_elements().unwrap();
        items.extend(v1.list_elements().unwrap());
        let merged = Value::List(items);
        let out = build_column(list.data_type(), [&merged, &v1]).unwrap();
        let l = out.as_list::<i32>();
        let first = l.value(0);
        assert_eq!(
            first.as_primitive::<Int32Type>().values().to_vec(),
            vec![1, 2, 3]
        );
        assert_eq!(
            l.value(1).as_primitive::<Int32Type>().values().to_vec(),
            vec![3]
        );
        assert_eq!(
            compare_values(&Value::I32(3), &Value::Ref(l.values().clone(), 0)).unwrap(),
            Ordering::Greater
        );
    }

    #[test]
    fn blank_is_java_blank() {
        assert!(is_blank(""));
        assert!(is_blank(" \t\n"));
        assert!(!is_blank("\u{00A0}"));
        assert!(!is_blank(" a "));
    }
}
