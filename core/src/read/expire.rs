//! Record-level expiry of primary-key tables (`record-level.expire-time` with
//! `record-level.time-field`): rows whose time field is older than the expire time are dropped
//! when compaction rewrites the files that hold them.
//!
//! What Java does, and so what this does:
//!
//! * The time field is a column of the table of type `INT` (epoch seconds), `BIGINT` (epoch
//!   seconds, or epoch millis when the value is ≥ 10¹²: divided by 1000), `TIMESTAMP(p)` or
//!   `TIMESTAMP_LTZ(p)` (the millisecond of the value, floored, divided by 1000 with the
//!   quotient truncated toward zero; a `TIMESTAMP` without time zone is taken as UTC). Any
//!   other type is refused.
//! * The current time comes from the host, as epoch millis (the planning time of the
//!   compaction, [`crate::compact::pk::PkCompactRequest::now_millis`]); it is truncated to seconds. The
//!   expire time is the option's duration in whole seconds (`Duration#getSeconds`).
//! * A row with time `t` (seconds) is **expired** when `now - expire > t`, i.e. kept while
//!   `now <= t + expire`. A NULL time never expires.
//! * Compaction reads every input file (and, in lookup tables other than first-row, the
//!   lookup-only files above the output level) without its expired rows, before the merge.
//!   Nothing else drops them: writes keep them, and **reads return expired rows** until a
//!   compaction rewrites their file.
//! * A file whose statistics give a minimum time that is expired (read through the file's own
//!   schema and `_VALUE_STATS_COLS`, by field id) is rewritten rather than upgraded, and a full
//!   compaction of a bucket that is already one max-level run rewrites such files one by one.
//!   A file without statistics for the field (stats mode `none`, a column added later) is not
//!   picked that way; its rows are still filtered whenever it is rewritten.
//!
//! Source: Java `org.apache.paimon.io.RecordLevelExpire` (`create`, `isExpireFile`, `wrap`,
//! `createFieldGetterAndConvertToSecond`), `MergeTreeCompactTask#upgrade`,
//! `CompactStrategy#pickFullCompaction`, `MergeTreeCompactManagerFactory#createRewriter` (the
//! wrapped reader, also for lookups but not first-row's) and
//! `SchemaValidation#validateTableSchema` (the field's existence and type). Java 1.4.2's
//! `RecordLevelExpire` is the same class.

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int32Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, BooleanArray};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::predicate::value_stats_fields;
use crate::spec::{CoreOptions, DataField, DataFileMeta, Datum, TableSchema, TypeKind};
use crate::util::parse_duration_millis;

/// `record-level.expire-time`: a duration.
pub const EXPIRE_TIME_OPTION: &str = "record-level.expire-time";
/// `record-level.time-field`: the column holding each row's time.
pub const TIME_FIELD_OPTION: &str = "record-level.time-field";

/// BIGINT values at or above this are epoch millis (Java's heuristic).
const MILLIS_THRESHOLD: i64 = 1_000_000_000_000;

/// The record-level expiry of one compaction: the time field, the expire time and the
/// current time, fixed when the compaction is planned (a serde value travelling with each
/// [`super::PkCompactTask`]).
///
/// Source: Java `org.apache.paimon.io.RecordLevelExpire`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordLevelExpire {
    /// The time field of the table's latest schema (name, id and type).
    pub time_field: DataField,
    /// `record-level.expire-time` in whole seconds.
    pub expire_seconds: i64,
    /// The current time, epoch seconds (the host's millis divided by 1000).
    pub now_seconds: i64,
}

impl RecordLevelExpire {
    /// The expiry of `schema`'s options at `now_millis` (epoch millis, from the host);
    /// `None` when `record-level.expire-time` is not set. Java builds it for every
    /// key-value write and compaction of the table.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the option: an expire time that is not a duration,
    /// `record-level.time-field` unset, naming no column, or a column of another type than
    /// `INT`, `BIGINT`, `TIMESTAMP` or `TIMESTAMP_LTZ` (Java's messages).
    pub fn try_from_schema(schema: &TableSchema, now_millis: i64) -> Result<Option<Self>> {
        let options = schema.core_options();
        let Some(raw) = options.get(EXPIRE_TIME_OPTION) else {
            return Ok(None);
        };
        let millis = parse_duration_millis(raw)
            .map_err(|e| Error::invalid(format!("option '{EXPIRE_TIME_OPTION}' = '{raw}': {e}")))?;
        let Some(name) = options.get(TIME_FIELD_OPTION) else {
            return Err(Error::invalid(format!(
                "option '{EXPIRE_TIME_OPTION}' needs '{TIME_FIELD_OPTION}': You should set \
                 time field for record-level expire."
            )));
        };
        let time_field = time_field(schema, name)?.clone();
        Ok(Some(Self {
            time_field,
            expire_seconds: millis / 1000,
            now_seconds: now_millis / 1000,
        }))
    }

    /// Whether a row whose time is `seconds` is expired: `now - expire > seconds`.
    pub fn is_expired(&self, seconds: i64) -> bool {
        i128::from(self.now_seconds) - i128::from(self.expire_seconds) > i128::from(seconds)
    }

    /// Whether `file` holds expired rows by its statistics: the minimum of the time field
    /// in its `_VALUE_STATS`, read with the file's schema (`schemas` by id; `current` is the
    /// latest schema) and `_VALUE_STATS_COLS`, found by field id, is expired. `false` when
    /// the statistics do not tell (no stats for the field, all NULL, the field missing from
    /// the file's schema, or retyped to another kind than `INT` → `BIGINT`).
    ///
    /// # Errors
    /// [`Error::Invalid`] when the file's schema is not in `schemas` (nor `current`).
    pub fn is_expire_file(
        &self,
        file: &DataFileMeta,
        current: &TableSchema,
        schemas: &BTreeMap<i64, TableSchema>,
    ) -> Result<bool> {
        let file_schema = if file.schema_id == current.id {
            current
        } else {
            schemas.get(&file.schema_id).ok_or_else(|| {
                Error::invalid(format!(
                    "data file {} has schema id {} that was not loaded",
                    file.file_name, file.schema_id
                ))
            })?
        };
        let Some(fields) = value_stats_fields(file, &file_schema.fields) else {
            return Ok(false);
        };
        let mins = &file.value_stats.min_values;
        if mins.arity() != fields.len() {
            return Ok(false);
        }
        let Some((pos, field)) = fields
            .iter()
            .enumerate()
            .find(|(_, f)| f.id == self.time_field.id)
        else {
            return Ok(false);
        };
        let (now_kind, file_kind) = (&self.time_field.data_type.kind, &field.data_type.kind);
        let comparable = std::mem::discriminant(now_kind) == std::mem::discriminant(file_kind)
            || matches!((file_kind, now_kind), (TypeKind::Int, TypeKind::BigInt));
        if !comparable {
            return Ok(false);
        }
        let Ok(min) = mins.field(pos, &field.data_type) else {
            return Ok(false);
        };
        let seconds = match min {
            Datum::Int(v) => Some(i64::from(v)),
            Datum::BigInt(v) => Some(bigint_seconds(v)),
            Datum::Timestamp { millis, .. } => Some(millis / 1000),
            _ => None,
        };
        Ok(seconds.is_some_and(|s| self.is_expired(s)))
    }

    /// The rows of `column` (the time field of a batch, in the latest schema's Arrow type)
    /// to keep: not expired, or NULL.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a column of another Arrow type than the time field's.
    pub fn keep_mask(&self, column: &ArrayRef) -> Result<BooleanArray> {
        let keep = |seconds: i64| !self.is_expired(seconds);
        let mask: BooleanArray = match column.data_type() {
            ArrowType::Int32 => column
                .as_primitive::<Int32Type>()
                .iter()
                .map(|v| Some(v.is_none_or(|v| keep(i64::from(v)))))
                .collect(),
            ArrowType::Int64 => column
                .as_primitive::<Int64Type>()
                .iter()
                .map(|v| Some(v.is_none_or(|v| keep(bigint_seconds(v)))))
                .collect(),
            ArrowType::Timestamp(unit, _) => {
                let millis: Vec<Option<i64>> = match unit {
                    TimeUnit::Second => column
                        .as_primitive::<TimestampSecondType>()
                        .iter()
                        .map(|v| v.map(|s| s.saturating_mul(1000)))
                        .collect(),
                    TimeUnit::Millisecond => column
                        .as_primitive::<TimestampMillisecondType>()
                        .iter()
                        .collect(),
                    TimeUnit::Microsecond => column
                        .as_primitive::<TimestampMicrosecondType>()
                        .iter()
                        .map(|v| v.map(|us| us.div_euclid(1000)))
                        .collect(),
                    TimeUnit::Nanosecond => column
                        .as_primitive::<TimestampNanosecondType>()
                        .iter()
                        .map(|v| v.map(|ns| ns.div_euclid(1_000_000)))
                        .collect(),
                };
                millis
                    .into_iter()
                    .map(|m| Some(m.is_none_or(|m| keep(m / 1000))))
                    .collect()
            }
            other => {
                return Err(Error::invalid(format!(
                    "record-level expiry: column '{}' is read as {other}, not as its type {}",
                    self.time_field.name, self.time_field.data_type
                )));
            }
        };
        Ok(mask)
    }
}

/// A BIGINT time in seconds: values ≥ 10¹² are millis (divided by 1000).
fn bigint_seconds(v: i64) -> i64 {
    if v >= MILLIS_THRESHOLD { v / 1000 } else { v }
}

/// The column `name` of `schema`, checked to be a possible time field.
fn time_field<'a>(schema: &'a TableSchema, name: &str) -> Result<&'a DataField> {
    let field = schema.field(name).ok_or_else(|| {
        Error::invalid(format!(
            "option '{TIME_FIELD_OPTION}': Can not find time field {name} for record level \
             expire."
        ))
    })?;
    match field.data_type.kind {
        TypeKind::Int
        | TypeKind::BigInt
        | TypeKind::Timestamp { .. }
        | TypeKind::LocalZonedTimestamp { .. } => Ok(field),
        _ => Err(Error::invalid(format!(
            "option '{TIME_FIELD_OPTION}': The record level time field type should be one of \
             INT, BIGINT, or TIMESTAMP, but field type is {}.",
            field.data_type
        ))),
    }
}

/// Java's check of `record-level.time-field` when a schema is created or altered (any
/// table): when set it names a column of type `INT`, `BIGINT`, `TIMESTAMP` or
/// `TIMESTAMP_LTZ`.
///
/// Source: Java `SchemaValidation#validateTableSchema`.
///
/// # Errors
/// [`Error::Invalid`] naming the option, with Java's message.
pub fn validate_time_field(schema: &TableSchema, options: &CoreOptions) -> Result<()> {
    match options.get(TIME_FIELD_OPTION) {
        Some(name) => time_field(schema, name).map(|_| ()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{
        Int32Array, Int64Array, TimestampMicrosecondArray, TimestampMillisecondArray,
    };

    use super::*;
    use crate::spec::{BinaryRow, DataType, SimpleStats};

    fn schema(time_type: &str, options: &str) -> TableSchema {
        let json = format!(
            r#"{{"fields": [{{"name": "k", "type": "INT NOT NULL"}},
                {{"name": "t", "type": "{time_type}"}}, {{"name": "v", "type": "STRING"}}],
            "primaryKeys": ["k"], "options": {{"bucket": "1",
            "record-level.time-field": "t"{options}}}}}"#
        );
        crate::schema::create::new_table_schema(json.as_bytes(), 0).unwrap()
    }

    fn expiry(time_type: &str, expire: &str, now_millis: i64) -> RecordLevelExpire {
        let s = schema(
            time_type,
            &format!(r#", "record-level.expire-time": "{expire}""#),
        );
        RecordLevelExpire::try_from_schema(&s, now_millis)
            .unwrap()
            .unwrap()
    }

    fn mask(x: &RecordLevelExpire, column: ArrayRef) -> Vec<bool> {
        x.keep_mask(&column).unwrap().values().iter().collect()
    }

    #[test]
    fn options_as_java_reads_them() {
        // No expire time: no expiry, whatever the time field.
        assert_eq!(
            RecordLevelExpire::try_from_schema(&schema("INT", ""), 5_000).unwrap(),
            None
        );
        // `Duration#getSeconds`: 1500 ms is one second; the now is truncated to seconds.
        let x = expiry("INT", "1500 ms", 10_999);
        assert_eq!((x.expire_seconds, x.now_seconds), (1, 10));
        assert_eq!(x.time_field.name, "t");
        assert_eq!(expiry("BIGINT", "2 d", 0).expire_seconds, 172_800);
        // A bad duration names the option.
        let s = schema("INT", r#", "record-level.expire-time": "soon""#);
        let e = RecordLevelExpire::try_from_schema(&s, 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("'record-level.expire-time' = 'soon'"), "{e}");
        // The expire time without a time field is Java's error.
        let json = br#"{"fields": [{"name": "k", "type": "INT NOT NULL"}],
            "primaryKeys": ["k"], "options": {"record-level.expire-time": "1 h"}}"#;
        let s = crate::schema::create::new_table_schema(json, 0).unwrap();
        let e = RecordLevelExpire::try_from_schema(&s, 0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("You should set time field for record-level expire."),
            "{e}"
        );
    }

    #[test]
    fn time_field_types_as_java_accepts_them() {
        for ok in [
            "INT",
            "BIGINT",
            "TIMESTAMP(3)",
            "TIMESTAMP(6)",
            "TIMESTAMP_LTZ(9)",
        ] {
            let s = schema(ok, "");
            validate_time_field(&s, &s.core_options()).unwrap();
        }
        for bad in ["STRING", "SMALLINT", "DATE", "DECIMAL(10, 0)", "DOUBLE"] {
            let json = format!(
                r#"{{"fields": [{{"name": "k", "type": "INT NOT NULL"}},
                    {{"name": "t", "type": "{bad}"}}], "primaryKeys": ["k"],
                "options": {{"record-level.time-field": "t"}}}}"#
            );
            let e = crate::schema::create::new_table_schema(json.as_bytes(), 0)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("'record-level.time-field'")
                    && e.contains("should be one of INT, BIGINT, or TIMESTAMP, but field type is"),
                "{bad}: {e}"
            );
        }
        let json = br#"{"fields": [{"name": "k", "type": "INT NOT NULL"}], "primaryKeys": ["k"],
            "options": {"record-level.time-field": "nope"}}"#;
        let e = crate::schema::create::new_table_schema(json, 0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("Can not find time field nope for record level expire."),
            "{e}"
        );
    }

    #[test]
    fn rows_expire_strictly_before_now_minus_expire() {
        // now = 1000 s, expire = 100 s: a row of t = 899 is expired, t = 900 is kept.
        let x = expiry("INT", "100 s", 1_000_000);
        assert!(x.is_expired(899));
        assert!(!x.is_expired(900));
        assert!(!x.is_expired(i64::MAX));
        let ints = Arc::new(Int32Array::from(vec![
            Some(899),
            Some(900),
            None,
            Some(-5),
            Some(2_000),
        ])) as ArrayRef;
        assert_eq!(mask(&x, ints), vec![false, true, true, false, true]);
    }

    #[test]
    fn bigint_seconds_and_millis() {
        // Java: values ≥ 10^12 are millis. now = 2_000_000_000 s (2033), expire 1 h.
        let x = expiry("BIGINT", "1 h", 2_000_000_000_000);
        let cutoff = 2_000_000_000 - 3_600;
        let col = Arc::new(Int64Array::from(vec![
            Some(cutoff - 1),                // seconds, expired
            Some(cutoff),                    // seconds, kept
            Some((cutoff - 1) * 1000 + 999), // millis of second cutoff - 1, expired
            Some(cutoff * 1000),             // millis, kept
            Some(999_999_999_999),           // < 10^12: seconds (year 33658), kept
            None,
        ])) as ArrayRef;
        assert_eq!(mask(&x, col), vec![false, true, false, true, true, true]);
        assert_eq!(bigint_seconds(1_000_000_000_000), 1_000_000_000);
        assert_eq!(bigint_seconds(1_000_000_000_001), 1_000_000_000);
        assert_eq!(bigint_seconds(2_147_483_649), 2_147_483_649);
    }

    #[test]
    fn timestamps_by_their_millisecond() {
        // now = 100 s, expire = 10 s: kept from second 90.
        let x = expiry("TIMESTAMP(6)", "10 s", 100_000);
        let micros = Arc::new(TimestampMicrosecondArray::from(vec![
            Some(89_999_999),
            Some(90_000_000),
            None,
            // Before 1970: millisecond -1 (floored), second -1 / 1000 = 0 (truncated, as
            // Java's long division): expired either way.
            Some(-1),
        ])) as ArrayRef;
        assert_eq!(mask(&x, micros), vec![false, true, true, false]);
        let x = expiry("TIMESTAMP_LTZ(3)", "10 s", 100_000);
        let millis = Arc::new(
            TimestampMillisecondArray::from(vec![Some(89_999), Some(90_000)]).with_timezone("UTC"),
        ) as ArrayRef;
        assert_eq!(mask(&x, millis), vec![false, true]);
        // Java's test: TIMESTAMP(6) of epoch millis 2147483649 is second 2147483.
        let x = expiry("TIMESTAMP(6)", "0 s", 2_147_484_000);
        let one = Arc::new(TimestampMicrosecondArray::from(vec![2_147_483_649_000])) as ArrayRef;
        assert_eq!(mask(&x, one), vec![false]);
        let x = expiry("TIMESTAMP(6)", "0 s", 2_147_483_999);
        let one = Arc::new(TimestampMicrosecondArray::from(vec![2_147_483_649_000])) as ArrayRef;
        assert_eq!(mask(&x, one), vec![true]);
    }

    fn stats_file(schema_id: i64, types: &[DataType], mins: Vec<ArrayRef>) -> DataFileMeta {
        let min = crate::encode::row::binary_row_at(&mins, types, 0).unwrap();
        DataFileMeta {
            file_name: "f.parquet".into(),
            file_size: 1,
            row_count: 1,
            min_key: BinaryRow::empty(),
            max_key: BinaryRow::empty(),
            key_stats: SimpleStats::empty(),
            value_stats: SimpleStats {
                max_values: min.clone(),
                min_values: min,
                null_counts: vec![Some(0); types.len()].into(),
            },
            min_sequence_number: 0,
            max_sequence_number: 0,
            schema_id,
            level: 5,
            extra_files: Vec::new(),
            creation_time_millis: Some(0),
            delete_row_count: Some(0),
            embedded_index: None,
            file_source: None,
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            write_cols_sequences: None,
        }
    }

    #[test]
    fn expired_files_by_min_statistics() {
        let s = schema("INT", r#", "record-level.expire-time": "100 s""#);
        let x = RecordLevelExpire::try_from_schema(&s, 1_000_000)
            .unwrap()
            .unwrap();
        let types: Vec<DataType> = s.fields.iter().map(|f| f.data_type.clone()).collect();
        let file = |t: Option<i32>| {
            stats_file(
                0,
                &types,
                vec![
                    Arc::new(Int32Array::from(vec![1])),
                    Arc::new(Int32Array::from(vec![t])),
                    Arc::new(arrow_array::StringArray::from(vec!["a"])),
                ],
            )
        };
        let none = BTreeMap::new();
        assert!(x.is_expire_file(&file(Some(899)), &s, &none).unwrap());
        assert!(!x.is_expire_file(&file(Some(900)), &s, &none).unwrap());
        // All NULL: no minimum, not expired.
        assert!(!x.is_expire_file(&file(None), &s, &none).unwrap());
        // Dense stats without the time field: unknown.
        let mut dense = stats_file(
            0,
            &types[2..],
            vec![Arc::new(arrow_array::StringArray::from(vec!["a"]))],
        );
        dense.value_stats_cols = Some(vec!["v".into()]);
        assert!(!x.is_expire_file(&dense, &s, &none).unwrap());
        // Dense stats with it, at its position in the dense row.
        let mut dense = stats_file(0, &types[1..2], vec![Arc::new(Int32Array::from(vec![5]))]);
        dense.value_stats_cols = Some(vec!["t".into()]);
        assert!(x.is_expire_file(&dense, &s, &none).unwrap());

        // A file of schema 0 read with schema 1 (a column added before `t`): found by id.
        let mut s1 = s.clone();
        s1.id = 1;
        s1.fields.insert(
            1,
            DataField::new(7, "c0", DataType::parse_sql("INT").unwrap()),
        );
        let x1 = RecordLevelExpire::try_from_schema(&s1, 1_000_000)
            .unwrap()
            .unwrap();
        let old = BTreeMap::from([(0, s.clone())]);
        assert!(x1.is_expire_file(&file(Some(899)), &s1, &old).unwrap());
        assert!(!x1.is_expire_file(&file(Some(900)), &s1, &old).unwrap());
        // The file's schema must be loaded.
        let e = x1
            .is_expire_file(&file(Some(1)), &s1, &none)
            .unwrap_err()
            .to_string();
        assert!(e.contains("schema id 0"), "{e}");
    }
}
