//! The bucket of a row of a fixed-bucket table (`bucket = N > 0`).
//!
//! Source: Java `org.apache.paimon.table.sink.FixedBucketRowKeyExtractor` (which columns form
//! the bucket key), `org.apache.paimon.schema.TableSchema#bucketKeys` (the `bucket-key` option,
//! else the trimmed primary keys), `org.apache.paimon.bucket.BucketFunction` and its
//! `DefaultBucketFunction`, `ModBucketFunction` and `HiveBucketFunction` (option
//! `bucket-function.type`: `default`, `mod`, `hive`), `org.apache.paimon.bucket.HiveHasher`,
//! `BinaryRow#hashCode` → `MemorySegmentUtils#hashByWords` →
//! `org.apache.paimon.utils.MurmurHashUtils#hashBytesByWords`.
//!
//! * `default`: the bucket key columns are written as a [`BinaryRow`] (row kind INSERT,
//!   exactly as Java's generated projection writes it, see [`crate::encode::row`]); its bytes
//!   are hashed with 32-bit Murmur3 over little-endian 4-byte words (seed 42, finalised with
//!   the byte length, [`murmur::hash_bytes`]), and the bucket is `|hash % N|` ([`bucket_of`]).
//! * `mod`: one `INT` or `BIGINT` bucket key; the bucket is `floorMod(value, N)`. A NULL key
//!   reads as 0 (Java reads the zeroed slot), so it lands in bucket 0.
//! * `hive`: Hive's hash (`31 × h + hash(field)` over the fields, `hash(NULL) = 0`), then
//!   `(h & i32::MAX) % N`. Values of `BOOLEAN`, integer, `DATE`, `TIME`, `FLOAT`, `DOUBLE`,
//!   string, binary and `DECIMAL` types; a non-null value of another type (a timestamp) is
//!   [`Error::Unsupported`], as Java throws.
//!
//! Rows are hashed straight from the Arrow columns ([`crate::encode::row::BinaryRowEncoder`]
//! into one reused buffer): no allocation per row for flat bucket keys.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef};

use crate::encode::row::{BinaryRowEncoder, datum_at};
use crate::error::{Error, Result};
use crate::spec::binary_row::{BinaryRow, Datum};
use crate::spec::murmur;
use crate::spec::options::CoreOptions;
use crate::spec::schema::TableSchema;
use crate::spec::types::{DataType, TypeKind};

/// Option key of the bucket function (Java `CoreOptions.BUCKET_FUNCTION_TYPE`).
pub const BUCKET_FUNCTION_TYPE: &str = "bucket-function.type";

/// Java `BinaryRow#hashCode` of a bucket key row: [`BinaryRow::hash_code`] (Murmur3 over the
/// row bytes: header with the row kind, null bits, fixed part and var part).
pub fn bucket_hash(row: &BinaryRow) -> i32 {
    row.hash_code()
}

/// Java `DefaultBucketFunction`: `|hash % num_buckets|`, in `0..num_buckets`.
///
/// `num_buckets` must be positive (Java asserts it); for `num_buckets <= 0` this returns 0.
pub fn bucket_of(hash: i32, num_buckets: i32) -> i32 {
    if num_buckets <= 0 {
        return 0;
    }
    (hash % num_buckets).abs()
}

fn check_num_buckets(num_buckets: i32) -> Result<()> {
    if num_buckets <= 0 {
        return Err(Error::invalid(format!(
            "the number of buckets must be positive, got {num_buckets}"
        )));
    }
    Ok(())
}

/// The bucket of every row of `columns` (the bucket key columns, typed by `types`) with the
/// default bucket function ([`bucket_of`] of the [`BinaryRow`] hash).
///
/// # Errors
/// [`Error::Invalid`] if `num_buckets <= 0` or the columns do not match the types (see
/// [`BinaryRowEncoder::try_new`]).
pub fn buckets(columns: &[ArrayRef], types: &[DataType], num_buckets: i32) -> Result<Vec<i32>> {
    check_num_buckets(num_buckets)?;
    let encoder = BinaryRowEncoder::try_new(columns, types)?;
    let mut buf = Vec::new();
    (0..encoder.num_rows())
        .map(|row| {
            encoder.encode_into(row, &mut buf)?;
            Ok(bucket_of(murmur::hash_bytes(&buf), num_buckets))
        })
        .collect()
}

/// Java `CoreOptions.BucketFunctionType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketFunctionType {
    /// `default`: hash of the bucket key [`BinaryRow`].
    Default,
    /// `mod`: `floorMod` of a single `INT`/`BIGINT` bucket key.
    Mod,
    /// `hive`: Hive-compatible hash.
    Hive,
}

impl BucketFunctionType {
    /// The option value (`default`, `mod`, `hive`).
    pub fn as_str(self) -> &'static str {
        match self {
            BucketFunctionType::Default => "default",
            BucketFunctionType::Mod => "mod",
            BucketFunctionType::Hive => "hive",
        }
    }

    /// `bucket-function.type` of `options` (case-insensitive; default `default`).
    ///
    /// # Errors
    /// [`Error::Invalid`] for another value.
    pub fn from_options(options: &CoreOptions) -> Result<Self> {
        match options.get(BUCKET_FUNCTION_TYPE) {
            None => Ok(BucketFunctionType::Default),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "default" => Ok(BucketFunctionType::Default),
                "mod" => Ok(BucketFunctionType::Mod),
                "hive" => Ok(BucketFunctionType::Hive),
                _ => Err(Error::invalid(format!(
                    "option {BUCKET_FUNCTION_TYPE} = '{v}': expected default, mod or hive"
                ))),
            },
        }
    }
}

/// A bucket function over bucket key rows of given types.
///
/// Source: Java `org.apache.paimon.bucket.BucketFunction#create`.
#[derive(Debug, Clone)]
pub struct BucketFunction {
    kind: BucketFunctionType,
    key_types: Vec<DataType>,
}

impl BucketFunction {
    /// The function `kind` for bucket keys of `key_types`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for `mod` unless there is exactly one key of type `INT` or `BIGINT`
    /// (as Java's `ModBucketFunction`).
    pub fn try_new(kind: BucketFunctionType, key_types: &[DataType]) -> Result<Self> {
        match kind {
            BucketFunctionType::Default => {}
            BucketFunctionType::Mod => {
                let ok = matches!(
                    key_types,
                    [DataType {
                        kind: TypeKind::Int | TypeKind::BigInt,
                        ..
                    }]
                );
                if !ok {
                    return Err(Error::invalid(format!(
                        "bucket-function.type = mod needs exactly one INT or BIGINT bucket key, \
                         got {:?}",
                        key_types
                            .iter()
                            .map(DataType::sql_string)
                            .collect::<Vec<_>>()
                    )));
                }
            }
            // Java's `HiveBucketFunction` accepts any key type and fails on the first
            // non-null value it cannot hash.
            BucketFunctionType::Hive => {}
        }
        Ok(BucketFunction {
            kind,
            key_types: key_types.to_vec(),
        })
    }

    /// The function named by `bucket-function.type` of `options` (see
    /// [`BucketFunction::try_new`]).
    ///
    /// # Errors
    /// As [`BucketFunctionType::from_options`] and [`BucketFunction::try_new`].
    pub fn from_options(options: &CoreOptions, key_types: &[DataType]) -> Result<Self> {
        Self::try_new(BucketFunctionType::from_options(options)?, key_types)
    }

    /// The function type.
    pub fn kind(&self) -> BucketFunctionType {
        self.kind
    }

    /// The bucket of one bucket key row.
    ///
    /// # Errors
    /// [`Error::Invalid`] if `num_buckets <= 0`; [`Error::Corrupt`] if the row does not
    /// decode with the key types (`mod`, `hive`); [`Error::Unsupported`] for `hive` and a
    /// non-null value Java cannot hash (timestamps, nested values).
    pub fn bucket(&self, row: &BinaryRow, num_buckets: i32) -> Result<i32> {
        check_num_buckets(num_buckets)?;
        match self.kind {
            BucketFunctionType::Default => Ok(bucket_of(row.hash_code(), num_buckets)),
            BucketFunctionType::Mod => {
                let v = match row.field(0, &self.key_types[0])? {
                    Datum::Int(v) => i64::from(v),
                    Datum::BigInt(v) => v,
                    _ => 0,
                };
                Ok(v.rem_euclid(i64::from(num_buckets)) as i32)
            }
            BucketFunctionType::Hive => {
                let values = row.fields(&self.key_types)?;
                let mut h = 0i32;
                for v in &values {
                    h = h.wrapping_mul(31).wrapping_add(hive_hash_datum(v)?);
                }
                Ok(hive_bucket(h, num_buckets))
            }
        }
    }

    /// The bucket of every row of `columns` (the bucket key columns, in key order).
    ///
    /// # Errors
    /// [`Error::Invalid`] if `num_buckets <= 0` or the columns do not match the key types;
    /// as [`BucketFunction::bucket`] for `hive`.
    pub fn buckets(&self, columns: &[ArrayRef], num_buckets: i32) -> Result<Vec<i32>> {
        check_num_buckets(num_buckets)?;
        if columns.len() != self.key_types.len() {
            return Err(Error::invalid(format!(
                "{} bucket key columns for {} bucket key types",
                columns.len(),
                self.key_types.len()
            )));
        }
        match self.kind {
            BucketFunctionType::Default => buckets(columns, &self.key_types, num_buckets),
            BucketFunctionType::Mod => mod_buckets(&columns[0], num_buckets),
            BucketFunctionType::Hive => {
                let rows = columns.first().map_or(0, |c| c.len());
                let mut hashes = vec![0i32; rows];
                for (c, ty) in columns.iter().zip(&self.key_types) {
                    if c.len() != rows {
                        return Err(Error::invalid("bucket key columns of different lengths"));
                    }
                    for (row, h) in hashes.iter_mut().enumerate() {
                        let field = hive_hash_at(c.as_ref(), ty, row)?;
                        *h = h.wrapping_mul(31).wrapping_add(field);
                    }
                }
                Ok(hashes
                    .into_iter()
                    .map(|h| hive_bucket(h, num_buckets))
                    .collect())
            }
        }
    }
}

fn mod_buckets(column: &ArrayRef, num_buckets: i32) -> Result<Vec<i32>> {
    let n = i64::from(num_buckets);
    // A NULL reads as the zeroed slot (0), as Java's `row.getInt(0)` on a null field.
    if let Some(a) = column.as_primitive_opt::<Int32Type>() {
        return Ok((0..a.len())
            .map(|i| {
                let v = if a.is_null(i) { 0 } else { a.value(i) };
                i64::from(v).rem_euclid(n) as i32
            })
            .collect());
    }
    if let Some(a) = column.as_primitive_opt::<Int64Type>() {
        return Ok((0..a.len())
            .map(|i| {
                let v = if a.is_null(i) { 0 } else { a.value(i) };
                v.rem_euclid(n) as i32
            })
            .collect());
    }
    Err(Error::invalid(format!(
        "bucket-function.type = mod: bucket key column of arrow type {} (expected Int32 or Int64)",
        column.data_type()
    )))
}

fn hive_bucket(hash: i32, num_buckets: i32) -> i32 {
    (hash & i32::MAX) % num_buckets
}

/// Java `HiveHasher.hashBytes` / `hashUnsafeBytes`: `31 × h + b` over signed bytes.
fn hive_hash_bytes(bytes: &[u8]) -> i32 {
    bytes.iter().fold(0i32, |h, b| {
        h.wrapping_mul(31).wrapping_add(i32::from(*b as i8))
    })
}

fn hive_hash_long(v: i64) -> i32 {
    (v ^ ((v as u64) >> 32) as i64) as i32
}

/// Java `BigDecimal#hashCode` of `HiveHasher.normalizeDecimal(value)`: trailing zeros stripped
/// (scale not below 0), zero as `0` with scale 0; then `31 × BigInteger#hashCode + scale`.
fn hive_hash_decimal(unscaled: i128, scale: u32) -> i32 {
    let (mut u, mut s) = (unscaled, scale);
    if u == 0 {
        s = 0;
    }
    while s > 0 && u % 10 == 0 {
        u /= 10;
        s -= 1;
    }
    // BigInteger#hashCode: 31 × h + word over the big-endian 32-bit words of the magnitude,
    // times the signum.
    let mag = u.unsigned_abs();
    let mut h = 0i32;
    for shift in [96u32, 64, 32, 0] {
        h = h
            .wrapping_mul(31)
            .wrapping_add((mag >> shift) as u32 as i32);
    }
    let signum = match u.signum() {
        -1 => -1,
        0 => 0,
        _ => 1,
    };
    h.wrapping_mul(signum)
        .wrapping_mul(31)
        .wrapping_add(s as i32)
}

fn hive_hash_datum(v: &Datum) -> Result<i32> {
    Ok(match v {
        Datum::Null => 0,
        Datum::Boolean(b) => i32::from(*b),
        Datum::TinyInt(x) => i32::from(*x),
        Datum::SmallInt(x) => i32::from(*x),
        Datum::Int(x) | Datum::Date(x) | Datum::Time(x) => *x,
        Datum::BigInt(x) => hive_hash_long(*x),
        Datum::Float(f) => {
            if *f == 0.0 {
                0
            } else if f.is_nan() {
                0x7fc0_0000
            } else {
                f.to_bits() as i32
            }
        }
        Datum::Double(d) => {
            if *d == 0.0 {
                0
            } else if d.is_nan() {
                hive_hash_long(0x7ff8_0000_0000_0000)
            } else {
                hive_hash_long(d.to_bits() as i64)
            }
        }
        Datum::String(s) => hive_hash_bytes(s.as_bytes()),
        Datum::Binary(b) => hive_hash_bytes(b),
        Datum::Decimal {
            unscaled, scale, ..
        } => hive_hash_decimal(*unscaled, *scale),
        other => {
            return Err(Error::unsupported(format!(
                "hive bucket hash of value {other:?}"
            )));
        }
    })
}

fn hive_hash_at(array: &dyn Array, ty: &DataType, row: usize) -> Result<i32> {
    if array.is_null(row) {
        return Ok(0);
    }
    // Strings and binaries hash their bytes in place (no per-row allocation).
    let bytes = match array.data_type() {
        arrow_schema::DataType::Utf8 => Some(array.as_string::<i32>().value(row).as_bytes()),
        arrow_schema::DataType::LargeUtf8 => Some(array.as_string::<i64>().value(row).as_bytes()),
        arrow_schema::DataType::Binary => Some(array.as_binary::<i32>().value(row)),
        arrow_schema::DataType::LargeBinary => Some(array.as_binary::<i64>().value(row)),
        _ => None,
    };
    match bytes {
        Some(b) if !matches!(ty.kind, TypeKind::Decimal { .. }) => Ok(hive_hash_bytes(b)),
        _ => hive_hash_datum(&datum_at(array, ty, row)?),
    }
}

/// The bucket of rows of a fixed-bucket table, from the columns of its schema.
///
/// Source: Java `org.apache.paimon.table.sink.FixedBucketRowKeyExtractor`: bucket key =
/// `bucket-key` option, else the trimmed primary keys ([`TableSchema::bucket_keys`]); the
/// function from `bucket-function.type`; the bucket count from `bucket`.
#[derive(Debug, Clone)]
pub struct FixedBucketRowKeyExtractor {
    key_indices: Vec<usize>,
    function: BucketFunction,
    num_buckets: i32,
}

impl FixedBucketRowKeyExtractor {
    /// The extractor of `schema`.
    ///
    /// # Errors
    /// [`Error::Invalid`] if `bucket` is not positive, the bucket keys are invalid, or the
    /// table has no bucket key and more than one bucket (Java: "You should define a
    /// 'bucket-key' for bucketed append mode"); as [`BucketFunction::from_options`].
    pub fn try_new(schema: &TableSchema) -> Result<Self> {
        let options = schema.core_options();
        let num_buckets = options.bucket()?;
        check_num_buckets(num_buckets)?;
        let keys = schema.bucket_keys()?;
        if keys.is_empty() && num_buckets != 1 {
            return Err(Error::invalid(format!(
                "table with {num_buckets} buckets has no bucket key: define 'bucket-key' for \
                 a bucketed append table"
            )));
        }
        let mut key_indices = Vec::with_capacity(keys.len());
        let mut key_types = Vec::with_capacity(keys.len());
        for k in &keys {
            let i = schema
                .fields
                .iter()
                .position(|f| &f.name == k)
                .ok_or_else(|| Error::invalid(format!("bucket key '{k}' is not a field")))?;
            key_indices.push(i);
            key_types.push(schema.fields[i].data_type.clone());
        }
        Ok(FixedBucketRowKeyExtractor {
            key_indices,
            function: BucketFunction::from_options(&options, &key_types)?,
            num_buckets,
        })
    }

    /// Positions of the bucket key fields in the schema's fields, in key order.
    pub fn bucket_key_indices(&self) -> &[usize] {
        &self.key_indices
    }

    /// The `bucket` option.
    pub fn num_buckets(&self) -> i32 {
        self.num_buckets
    }

    /// The bucket function.
    pub fn function(&self) -> &BucketFunction {
        &self.function
    }

    /// The bucket of every row; `columns` are the table's fields in schema order.
    ///
    /// # Errors
    /// [`Error::Invalid`] if a bucket key column is missing or does not match its type.
    pub fn buckets(&self, columns: &[ArrayRef]) -> Result<Vec<i32>> {
        self.buckets_with(columns, self.num_buckets)
    }

    /// The bucket of every row for `num_buckets` buckets instead of the `bucket` option
    /// (postpone-bucket tables written into real buckets choose the count per partition).
    ///
    /// # Errors
    /// As [`FixedBucketRowKeyExtractor::buckets`]; [`Error::Invalid`] for a count that is
    /// not positive.
    pub fn buckets_with(&self, columns: &[ArrayRef], num_buckets: i32) -> Result<Vec<i32>> {
        check_num_buckets(num_buckets)?;
        let keys = self
            .key_indices
            .iter()
            .map(|i| {
                columns.get(*i).cloned().ok_or_else(|| {
                    Error::invalid(format!(
                        "bucket key column {i} missing from {} columns",
                        columns.len()
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        if keys.is_empty() {
            let rows = columns.first().map_or(0, |c| c.len());
            let empty = bucket_of(BinaryRow::empty().hash_code(), num_buckets);
            return Ok(vec![empty; rows]);
        }
        self.function.buckets(&keys, num_buckets)
    }
}

#[cfg(test)]
mod tests;
