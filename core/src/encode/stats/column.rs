//! Per-column statistics accumulators: min, max and null count of each column as Java's
//! collectors and format extractors compute them (Parquet, ORC, Avro), and their truncation.
//!
//! Source: Java `org.apache.paimon.statistics.SimpleColStatsCollector` and its collectors,
//! `org.apache.paimon.format.parquet.ParquetSimpleStatsExtractor`,
//! `org.apache.paimon.format.orc.filter.OrcSimpleStatsExtractor`.

use super::*;

/// Java `Float.compare` / `Double.compare`: NaN equals NaN and is above everything,
/// `-0.0 < 0.0`.
pub(super) trait JavaFloat: Copy {
    fn java_cmp(self, other: Self) -> Ordering;
}

impl JavaFloat for f32 {
    fn java_cmp(self, other: Self) -> Ordering {
        match (self.is_nan(), other.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => self.total_cmp(&other),
        }
    }
}

impl JavaFloat for f64 {
    fn java_cmp(self, other: Self) -> Ordering {
        match (self.is_nan(), other.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => self.total_cmp(&other),
        }
    }
}

/// Min/max in Java order; on ties the first value seen is kept (its NaN bits included).
#[derive(Debug, Clone, Copy)]
pub(super) struct FloatMinMax<T> {
    range: Option<(T, T)>,
}

impl<T: JavaFloat> FloatMinMax<T> {
    pub(super) fn update(&mut self, v: T) {
        match &mut self.range {
            None => self.range = Some((v, v)),
            Some((min, max)) => {
                if v.java_cmp(*min) == Ordering::Less {
                    *min = v;
                }
                if v.java_cmp(*max) == Ordering::Greater {
                    *max = v;
                }
            }
        }
    }
}

/// orc-core `DoubleStatisticsImpl`: `<`/`>` updates (NaN never replaces, a first NaN sticks).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct OrcDouble {
    range: Option<(f64, f64)>,
}

impl OrcDouble {
    pub(super) fn update(&mut self, v: f64) {
        match &mut self.range {
            None => self.range = Some((v, v)),
            Some((min, max)) => {
                if v < *min {
                    *min = v;
                } else if v > *max {
                    *max = v;
                }
            }
        }
    }

    fn merge(&mut self, other: &OrcDouble) {
        match (&mut self.range, other.range) {
            (None, o) => self.range = o,
            (Some((min, max)), Some((omin, omax))) => {
                if omin < *min {
                    *min = omin;
                }
                if omax > *max {
                    *max = omax;
                }
            }
            (Some(_), None) => {}
        }
    }
}

/// orc-core `StringStatisticsImpl`: values over 1024 bytes are kept as truncated bounds.
#[derive(Debug, Clone, Default)]
pub(super) struct OrcString {
    has: bool,
    min: Vec<u8>,
    max: Vec<u8>,
    /// `min` is only a lower bound (`getMinimum()` is null).
    lower: bool,
    /// `max` is only an upper bound (`getMaximum()` is null).
    upper: bool,
}

/// Start of the UTF-8 character containing byte `until` (orc `Utf8Utils.findLastCharacter`).
fn orc_find_last_character(text: &[u8], until: usize) -> usize {
    let mut posn = until.min(text.len().saturating_sub(1));
    loop {
        if text.get(posn).is_some_and(|b| b & 0xC0 != 0x80) || posn == 0 {
            return posn;
        }
        posn -= 1;
    }
}

/// orc `StringStatisticsImpl.truncateLowerBound`.
fn orc_lower_bound(text: &[u8]) -> Vec<u8> {
    text[..orc_find_last_character(text, ORC_MAX_BYTES_RECORDED)].to_vec()
}

/// orc `StringStatisticsImpl.truncateUpperBound` (code point of the last kept character plus
/// one, encoded as orc's `appendCodePoint` does).
fn orc_upper_bound(text: &[u8]) -> Vec<u8> {
    let following = orc_find_last_character(text, ORC_MAX_BYTES_RECORDED);
    let last = orc_find_last_character(text, following.saturating_sub(1));
    let mut out = text[..last].to_vec();
    let cp = std::str::from_utf8(&text[last..following])
        .ok()
        .and_then(|s| s.chars().next())
        .map_or(0xFFFD, |c| c as u32)
        + 1;
    if cp < 0x7f {
        out.push(cp as u8);
    } else if cp <= 0x7ff {
        out.push((0xc0 | (cp >> 6)) as u8);
        out.push((0x80 | (cp & 0x3f)) as u8);
    } else if cp < 0xffff {
        out.push((0xe0 | (cp >> 12)) as u8);
        out.push((0x80 | ((cp >> 6) & 0x3f)) as u8);
        out.push((0x80 | (cp & 0x3f)) as u8);
    } else {
        out.push((0xf0 | (cp >> 18)) as u8);
        out.push((0x80 | ((cp >> 12) & 0x3f)) as u8);
        out.push((0x80 | ((cp >> 6) & 0x3f)) as u8);
        out.push((0x80 | (cp & 0x3f)) as u8);
    }
    out
}

fn set_bytes(dst: &mut Vec<u8>, src: &[u8]) {
    dst.clear();
    dst.extend_from_slice(src);
}

impl OrcString {
    pub(super) fn update(&mut self, v: &[u8]) {
        let long = v.len() > ORC_MAX_BYTES_RECORDED;
        if !self.has {
            self.has = true;
            if long {
                self.min = orc_lower_bound(v);
                self.max = orc_upper_bound(v);
            } else {
                set_bytes(&mut self.min, v);
                set_bytes(&mut self.max, v);
            }
            self.lower = long;
            self.upper = long;
        } else if self.min.as_slice() > v {
            if long {
                self.min = orc_lower_bound(v);
            } else {
                set_bytes(&mut self.min, v);
            }
            self.lower = long;
        } else if self.max.as_slice() < v {
            if long {
                self.max = orc_upper_bound(v);
            } else {
                set_bytes(&mut self.max, v);
            }
            self.upper = long;
        }
    }

    fn merge(&mut self, other: &OrcString) {
        if !other.has {
            return;
        }
        if !self.has {
            *self = other.clone();
            return;
        }
        if self.min > other.min {
            set_bytes(&mut self.min, &other.min);
            self.lower = other.lower;
        }
        if self.max < other.max {
            set_bytes(&mut self.max, &other.max);
            self.upper = other.upper;
        }
    }
}

/// How ORC rewrites string values before it compares them (`CharTreeWriter`,
/// `VarcharTreeWriter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OrcStringShape {
    /// `STRING`: as is.
    Plain,
    /// `CHAR(n)`: cut to / padded with spaces to `n` characters.
    Char(usize),
    /// `VARCHAR(n)`: cut to `n` characters.
    VarChar(usize),
}

/// Bytes of the first `max_chars` characters (orc `Utf8Utils.truncateBytesTo`).
fn orc_truncate_chars(v: &[u8], max_chars: usize) -> &[u8] {
    if v.len() <= max_chars {
        return v;
    }
    let mut chars = 0;
    for (i, b) in v.iter().enumerate() {
        if b & 0xC0 != 0x80 {
            chars += 1;
        }
        if chars > max_chars {
            return &v[..i];
        }
    }
    v
}

/// What a column accumulates.
#[derive(Debug, Clone)]
pub(super) enum Acc {
    /// Not collected: mode `none`, or a column whose stats are discarded.
    Skip,
    /// No statistics in the format (Parquet nested columns): `none` whatever the mode.
    Absent,
    /// Null count only; min/max are null.
    NullsOnly,
    Bool(Option<(bool, bool)>),
    /// Integers, `DATE`, `TIME` (as i64).
    Int(Option<(i64, i64)>),
    Decimal(Option<(i128, i128)>),
    /// Epoch nanoseconds.
    Timestamp(Option<(i128, i128)>),
    Float(FloatMinMax<f32>),
    Double(FloatMinMax<f64>),
    Bytes(Option<(Vec<u8>, Vec<u8>)>),
    OrcDouble {
        group: OrcDouble,
        file: OrcDouble,
    },
    OrcString {
        shape: OrcStringShape,
        group: OrcString,
        file: OrcString,
    },
}

#[derive(Debug, Clone)]
pub(super) struct Column {
    name: String,
    data_type: DataType,
    /// The Arrow type `update` works on (columns of other types are cast to it).
    arrow: Option<ArrowType>,
    pub(super) mode: StatsMode,
    pub(super) acc: Acc,
    null_count: i64,
}

fn merge_range<T: PartialOrd + Copy>(range: &mut Option<(T, T)>, batch: Option<(T, T)>) {
    if let Some((lo, hi)) = batch {
        match range {
            None => *range = Some((lo, hi)),
            Some((min, max)) => {
                if lo < *min {
                    *min = lo;
                }
                if hi > *max {
                    *max = hi;
                }
            }
        }
    }
}

fn both<T>(a: Option<T>, b: Option<T>) -> Option<(T, T)> {
    a.zip(b)
}

/// Batch min/max of an integer-like column, as i64.
fn int_range(array: &dyn Array) -> Result<Option<(i64, i64)>> {
    Ok(match array.data_type() {
        ArrowType::Int8 => {
            let a = array.as_primitive::<Int8Type>();
            both(aggregate::min(a), aggregate::max(a)).map(|(x, y)| (i64::from(x), i64::from(y)))
        }
        ArrowType::Int16 => {
            let a = array.as_primitive::<Int16Type>();
            both(aggregate::min(a), aggregate::max(a)).map(|(x, y)| (i64::from(x), i64::from(y)))
        }
        ArrowType::Int32 => {
            let a = array.as_primitive::<Int32Type>();
            both(aggregate::min(a), aggregate::max(a)).map(|(x, y)| (i64::from(x), i64::from(y)))
        }
        ArrowType::Int64 => {
            let a = array.as_primitive::<Int64Type>();
            both(aggregate::min(a), aggregate::max(a))
        }
        ArrowType::Date32 => {
            let a = array.as_primitive::<Date32Type>();
            both(aggregate::min(a), aggregate::max(a)).map(|(x, y)| (i64::from(x), i64::from(y)))
        }
        ArrowType::Time32(TimeUnit::Millisecond) => {
            let a = array.as_primitive::<Time32MillisecondType>();
            both(aggregate::min(a), aggregate::max(a)).map(|(x, y)| (i64::from(x), i64::from(y)))
        }
        other => {
            return Err(Error::invalid(format!(
                "statistics: unexpected arrow type {other} for an integer column"
            )));
        }
    })
}

/// Batch min/max of a timestamp column in epoch nanoseconds.
fn timestamp_range(array: &dyn Array) -> Result<Option<(i128, i128)>> {
    let (range, nanos_per_unit) = match array.data_type() {
        ArrowType::Timestamp(TimeUnit::Second, _) => {
            let a = array.as_primitive::<TimestampSecondType>();
            (both(aggregate::min(a), aggregate::max(a)), 1_000_000_000)
        }
        ArrowType::Timestamp(TimeUnit::Millisecond, _) => {
            let a = array.as_primitive::<TimestampMillisecondType>();
            (both(aggregate::min(a), aggregate::max(a)), 1_000_000)
        }
        ArrowType::Timestamp(TimeUnit::Microsecond, _) => {
            let a = array.as_primitive::<TimestampMicrosecondType>();
            (both(aggregate::min(a), aggregate::max(a)), 1_000)
        }
        ArrowType::Timestamp(TimeUnit::Nanosecond, _) => {
            let a = array.as_primitive::<TimestampNanosecondType>();
            (both(aggregate::min(a), aggregate::max(a)), 1)
        }
        other => {
            return Err(Error::invalid(format!(
                "statistics: unexpected arrow type {other} for a timestamp column"
            )));
        }
    };
    Ok(range.map(|(lo, hi)| {
        (
            i128::from(lo) * nanos_per_unit,
            i128::from(hi) * nanos_per_unit,
        )
    }))
}

/// Batch min/max of a string or binary column.
fn bytes_range(array: &dyn Array) -> Result<Option<(&[u8], &[u8])>> {
    Ok(match array.data_type() {
        ArrowType::Utf8 => {
            let a = array.as_string::<i32>();
            both(aggregate::min_string(a), aggregate::max_string(a))
                .map(|(x, y)| (x.as_bytes(), y.as_bytes()))
        }
        ArrowType::LargeUtf8 => {
            let a = array.as_string::<i64>();
            both(aggregate::min_string(a), aggregate::max_string(a))
                .map(|(x, y)| (x.as_bytes(), y.as_bytes()))
        }
        ArrowType::Utf8View => {
            let a = array.as_string_view();
            both(aggregate::min_string_view(a), aggregate::max_string_view(a))
                .map(|(x, y)| (x.as_bytes(), y.as_bytes()))
        }
        ArrowType::Binary => {
            let a = array.as_binary::<i32>();
            both(aggregate::min_binary(a), aggregate::max_binary(a))
        }
        ArrowType::LargeBinary => {
            let a = array.as_binary::<i64>();
            both(aggregate::min_binary(a), aggregate::max_binary(a))
        }
        ArrowType::BinaryView => {
            let a = array.as_binary_view();
            both(aggregate::min_binary_view(a), aggregate::max_binary_view(a))
        }
        ArrowType::FixedSizeBinary(_) => {
            let a = array.as_fixed_size_binary();
            both(
                aggregate::min_fixed_size_binary(a),
                aggregate::max_fixed_size_binary(a),
            )
        }
        other => {
            return Err(Error::invalid(format!(
                "statistics: unexpected arrow type {other} for a string or binary column"
            )));
        }
    })
}

/// The per-value bytes of a string column (ORC path).
fn string_values(array: &dyn Array) -> Result<Box<dyn Iterator<Item = Option<&[u8]>> + '_>> {
    Ok(match array.data_type() {
        ArrowType::Utf8 => Box::new(
            array
                .as_string::<i32>()
                .iter()
                .map(|v| v.map(str::as_bytes)),
        ),
        ArrowType::LargeUtf8 => Box::new(
            array
                .as_string::<i64>()
                .iter()
                .map(|v| v.map(str::as_bytes)),
        ),
        ArrowType::Utf8View => {
            Box::new(array.as_string_view().iter().map(|v| v.map(str::as_bytes)))
        }
        other => {
            return Err(Error::invalid(format!(
                "statistics: unexpected arrow type {other} for a string column"
            )));
        }
    })
}

/// Whether a column of Arrow type `from` can be read as `to` (the type
/// [`paimon_to_arrow_type`] gives): `Some(false)` as is (other string/binary flavours, other
/// timestamp units and zones, other decimal precisions of the same scale are read directly),
/// `Some(true)` after a cast (dictionaries, `Date64`, other `TIME` units), `None` not at all.
fn accepts(from: &ArrowType, to: &ArrowType) -> Option<bool> {
    use ArrowType as A;
    if from == to {
        return Some(false);
    }
    match (from, to) {
        (A::Timestamp(..), A::Timestamp(..))
        | (A::Utf8 | A::LargeUtf8 | A::Utf8View, A::Utf8)
        | (A::Binary | A::LargeBinary | A::BinaryView | A::FixedSizeBinary(_), A::Binary) => {
            Some(false)
        }
        (A::Decimal128(_, s1), A::Decimal128(_, s2)) if s1 == s2 => Some(false),
        (A::Date64, A::Date32)
        | (A::Time32(_) | A::Time64(_), A::Time32(TimeUnit::Millisecond)) => Some(true),
        (A::Dictionary(_, values), _) => accepts(values, to).map(|_| true),
        _ => None,
    }
}

impl Column {
    /// Accumulator for `data_type` under `format`, before the mode is applied.
    fn acc_for(format: StatsFormat, data_type: &DataType, orc_shape: OrcStringShape) -> Acc {
        use TypeKind as K;
        let nested = matches!(
            data_type.kind,
            K::Array(_) | K::Map(_, _) | K::Multiset(_) | K::Row(_) | K::Variant | K::Vector { .. }
        );
        match format {
            StatsFormat::Parquet if nested => return Acc::Absent,
            _ if nested => return Acc::NullsOnly,
            _ => {}
        }
        match (&data_type.kind, format) {
            (K::Boolean, _) => Acc::Bool(None),
            (K::TinyInt | K::SmallInt | K::Int | K::BigInt | K::Date | K::Time { .. }, _) => {
                Acc::Int(None)
            }
            (K::Decimal { .. }, _) => Acc::Decimal(None),
            (K::Float | K::Double, StatsFormat::Orc) => Acc::OrcDouble {
                group: OrcDouble::default(),
                file: OrcDouble::default(),
            },
            (K::Float, _) => Acc::Float(FloatMinMax { range: None }),
            (K::Double, _) => Acc::Double(FloatMinMax { range: None }),
            (K::Char { .. } | K::VarChar { .. }, StatsFormat::Orc) => Acc::OrcString {
                shape: orc_shape,
                group: OrcString::default(),
                file: OrcString::default(),
            },
            (K::Char { .. } | K::VarChar { .. }, _) => Acc::Bytes(None),
            (K::Binary { .. } | K::VarBinary { .. }, StatsFormat::Orc) => Acc::NullsOnly,
            (K::Binary { .. } | K::VarBinary { .. }, _) => Acc::Bytes(None),
            (K::Timestamp { precision } | K::LocalZonedTimestamp { precision }, f) => {
                if f == StatsFormat::Parquet && *precision > 6 {
                    Acc::NullsOnly
                } else {
                    Acc::Timestamp(None)
                }
            }
            // BLOB, VARIANT, nested and unknown types: nulls only.
            _ => Acc::NullsOnly,
        }
    }

    pub(super) fn new(field: &DataField, mode: StatsMode, format: StatsFormat) -> Result<Self> {
        let orc_shape = match &field.data_type.kind {
            TypeKind::Char { length } => OrcStringShape::Char(*length as usize),
            TypeKind::VarChar { length } if *length < VARCHAR_MAX_LENGTH => {
                OrcStringShape::VarChar(*length as usize)
            }
            _ => OrcStringShape::Plain,
        };
        let acc = match (mode, Self::acc_for(format, &field.data_type, orc_shape)) {
            (StatsMode::None, _) => Acc::Skip,
            (_, Acc::Absent) => Acc::Absent,
            (StatsMode::Counts, _) => Acc::NullsOnly,
            (_, acc) => acc,
        };
        let arrow = match acc {
            Acc::Skip | Acc::Absent | Acc::NullsOnly => None,
            _ => Some(paimon_to_arrow_type(&field.data_type)?),
        };
        Ok(Column {
            name: field.name.clone(),
            data_type: field.data_type.clone(),
            arrow,
            mode,
            acc,
            null_count: 0,
        })
    }

    pub(super) fn update(
        &mut self,
        array: &ArrayRef,
        first_row: u64,
        row_group: u64,
    ) -> Result<()> {
        if matches!(self.acc, Acc::Skip | Acc::Absent) {
            return Ok(());
        }
        self.null_count += array.logical_null_count() as i64;
        let Some(expected) = &self.arrow else {
            return Ok(());
        };
        let cast;
        let array: &dyn Array = match accepts(array.data_type(), expected) {
            Some(false) => array.as_ref(),
            Some(true) => {
                let options = arrow_cast::CastOptions {
                    safe: false,
                    ..Default::default()
                };
                cast = arrow_cast::cast_with_options(array, expected, &options).map_err(|e| {
                    Error::invalid(format!(
                        "statistics of column {}: arrow type {} is not {}: {e}",
                        self.name,
                        array.data_type(),
                        self.data_type.sql_string()
                    ))
                })?;
                cast.as_ref()
            }
            None => {
                return Err(Error::invalid(format!(
                    "statistics of column {}: arrow type {} cannot hold {} values",
                    self.name,
                    array.data_type(),
                    self.data_type.sql_string()
                )));
            }
        };
        match &mut self.acc {
            Acc::Skip | Acc::Absent | Acc::NullsOnly => {}
            Acc::Bool(range) => {
                let a = array.as_boolean();
                merge_range(
                    range,
                    both(aggregate::min_boolean(a), aggregate::max_boolean(a)),
                );
            }
            Acc::Int(range) => merge_range(range, int_range(array)?),
            Acc::Decimal(range) => {
                let a = array.as_primitive::<Decimal128Type>();
                merge_range(range, both(aggregate::min(a), aggregate::max(a)));
            }
            Acc::Timestamp(range) => merge_range(range, timestamp_range(array)?),
            Acc::Float(mm) => {
                for v in array.as_primitive::<Float32Type>().iter().flatten() {
                    mm.update(v);
                }
            }
            Acc::Double(mm) => {
                for v in array.as_primitive::<Float64Type>().iter().flatten() {
                    mm.update(v);
                }
            }
            Acc::Bytes(range) => {
                if let Some((lo, hi)) = bytes_range(array)? {
                    match range {
                        None => *range = Some((lo.to_vec(), hi.to_vec())),
                        Some((min, max)) => {
                            if lo < min.as_slice() {
                                set_bytes(min, lo);
                            }
                            if hi > max.as_slice() {
                                set_bytes(max, hi);
                            }
                        }
                    }
                }
            }
            Acc::OrcDouble { group, file } => {
                let values: Box<dyn Iterator<Item = Option<f64>>> = match array.data_type() {
                    ArrowType::Float32 => Box::new(
                        array
                            .as_primitive::<Float32Type>()
                            .iter()
                            .map(|v| v.map(f64::from)),
                    ),
                    _ => Box::new(array.as_primitive::<Float64Type>().iter()),
                };
                for (i, v) in values.enumerate() {
                    let row = first_row + i as u64;
                    if row_group > 0 && row > 0 && row.is_multiple_of(row_group) {
                        file.merge(group);
                        *group = OrcDouble::default();
                    }
                    if let Some(v) = v {
                        group.update(v);
                    }
                }
            }
            Acc::OrcString { shape, group, file } => {
                let mut padded = Vec::new();
                for (i, v) in string_values(array)?.enumerate() {
                    let row = first_row + i as u64;
                    if row_group > 0 && row > 0 && row.is_multiple_of(row_group) {
                        file.merge(group);
                        *group = OrcString::default();
                    }
                    let Some(v) = v else { continue };
                    match *shape {
                        OrcStringShape::Plain => group.update(v),
                        OrcStringShape::VarChar(n) => group.update(orc_truncate_chars(v, n)),
                        OrcStringShape::Char(n) => {
                            let chars = v.iter().filter(|b| *b & 0xC0 != 0x80).count();
                            if chars >= n {
                                group.update(orc_truncate_chars(v, n));
                            } else {
                                padded.clear();
                                padded.extend_from_slice(v);
                                padded.resize(v.len() + (n - chars), b' ');
                                group.update(&padded);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Raw `(min, max, null count)` before the mode; `None` for no statistics.
    fn raw(&self) -> Result<Option<SimpleColStats>> {
        let (min, max) = match &self.acc {
            Acc::Skip | Acc::Absent => return Ok(None),
            Acc::NullsOnly => (Datum::Null, Datum::Null),
            Acc::Bool(r) => match r {
                Some((lo, hi)) => (Datum::Boolean(*lo), Datum::Boolean(*hi)),
                None => (Datum::Null, Datum::Null),
            },
            Acc::Int(r) => match r {
                Some((lo, hi)) => (
                    int_datum(&self.data_type, *lo)?,
                    int_datum(&self.data_type, *hi)?,
                ),
                None => (Datum::Null, Datum::Null),
            },
            Acc::Decimal(r) => match (r, &self.data_type.kind) {
                (Some((lo, hi)), TypeKind::Decimal { precision, scale }) => (
                    Datum::Decimal {
                        unscaled: *lo,
                        precision: *precision,
                        scale: *scale,
                    },
                    Datum::Decimal {
                        unscaled: *hi,
                        precision: *precision,
                        scale: *scale,
                    },
                ),
                _ => (Datum::Null, Datum::Null),
            },
            Acc::Timestamp(r) => match r {
                Some((lo, hi)) => {
                    let precision = match &self.data_type.kind {
                        TypeKind::Timestamp { precision }
                        | TypeKind::LocalZonedTimestamp { precision } => *precision,
                        _ => 9,
                    };
                    (
                        timestamp_datum(*lo, precision),
                        timestamp_datum(*hi, precision),
                    )
                }
                None => (Datum::Null, Datum::Null),
            },
            Acc::Float(mm) => match mm.range {
                Some((lo, hi)) => (Datum::Float(lo), Datum::Float(hi)),
                None => (Datum::Null, Datum::Null),
            },
            Acc::Double(mm) => match mm.range {
                Some((lo, hi)) => (Datum::Double(lo), Datum::Double(hi)),
                None => (Datum::Null, Datum::Null),
            },
            Acc::Bytes(r) => match r {
                Some((lo, hi)) => (self.bytes_datum(lo.clone())?, self.bytes_datum(hi.clone())?),
                None => (Datum::Null, Datum::Null),
            },
            Acc::OrcDouble { group, file } => {
                let mut all = *file;
                all.merge(group);
                match (all.range, &self.data_type.kind) {
                    (Some((lo, hi)), TypeKind::Float) => {
                        (Datum::Float(lo as f32), Datum::Float(hi as f32))
                    }
                    (Some((lo, hi)), _) => (Datum::Double(lo), Datum::Double(hi)),
                    (None, _) => (Datum::Null, Datum::Null),
                }
            }
            Acc::OrcString { group, file, .. } => {
                let mut all = file.clone();
                all.merge(group);
                if !all.has {
                    (Datum::Null, Datum::Null)
                } else {
                    let min = if all.lower {
                        Datum::Null
                    } else {
                        Datum::String(String::from_utf8_lossy(&all.min).into_owned())
                    };
                    let max = if all.upper {
                        Datum::Null
                    } else {
                        Datum::String(String::from_utf8_lossy(&all.max).into_owned())
                    };
                    (min, max)
                }
            }
        };
        Ok(Some(SimpleColStats {
            min,
            max,
            null_count: Some(self.null_count),
        }))
    }

    fn bytes_datum(&self, bytes: Vec<u8>) -> Result<Datum> {
        if self.data_type.is_string() {
            String::from_utf8(bytes)
                .map(Datum::String)
                .map_err(|_| Error::invalid(format!("column {}: invalid UTF-8", self.name)))
        } else {
            Ok(Datum::Binary(bytes))
        }
    }

    pub(super) fn stats(&self) -> Result<SimpleColStats> {
        Ok(match self.raw()? {
            None => SimpleColStats::none(),
            Some(raw) => convert(self.mode, raw),
        })
    }
}

fn int_datum(ty: &DataType, v: i64) -> Result<Datum> {
    let range = || {
        Error::invalid(format!(
            "statistics: {v} out of range of {}",
            ty.sql_string()
        ))
    };
    Ok(match ty.kind {
        TypeKind::TinyInt => Datum::TinyInt(i8::try_from(v).map_err(|_| range())?),
        TypeKind::SmallInt => Datum::SmallInt(i16::try_from(v).map_err(|_| range())?),
        TypeKind::Int => Datum::Int(i32::try_from(v).map_err(|_| range())?),
        TypeKind::Date => Datum::Date(i32::try_from(v).map_err(|_| range())?),
        TypeKind::Time { .. } => Datum::Time(i32::try_from(v).map_err(|_| range())?),
        _ => Datum::BigInt(v),
    })
}

/// Epoch nanos at the granularity Paimon stores for `precision` (millis ≤ 3, micros ≤ 6).
fn timestamp_datum(nanos: i128, precision: u32) -> Datum {
    let unit: i128 = match precision {
        0..=3 => 1_000_000,
        4..=6 => 1_000,
        _ => 1,
    };
    let nanos = nanos.div_euclid(unit) * unit;
    Datum::Timestamp {
        millis: nanos.div_euclid(1_000_000) as i64,
        nanos_of_milli: nanos.rem_euclid(1_000_000) as i32,
    }
}
