//! Which cast Java's `CastExecutors.resolve` picks for a type change: the rule table in Java's
//! registration order, the lookup by type, root and family, and whether the rule builds an
//! executor (and this crate runs it).
//!
//! Source: Java `org.apache.paimon.casting.CastExecutors`, `org.apache.paimon.types.DataTypeRoot`,
//! `DataTypeFamily`.

use super::*;

/// One of Java's cast rules (`org.apache.paimon.casting.*CastRule`), named after the class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CastRule {
    /// `DecimalToDecimalCastRule`
    DecimalToDecimal,
    /// `NumericPrimitiveToDecimalCastRule`
    NumericPrimitiveToDecimal,
    /// `DecimalToNumericPrimitiveCastRule`
    DecimalToNumericPrimitive,
    /// `NumericPrimitiveCastRule`
    NumericPrimitive,
    /// `NumericPrimitiveToTimestamp`
    NumericPrimitiveToTimestamp,
    /// `BooleanToNumericCastRule`
    BooleanToNumeric,
    /// `NumericToBooleanCastRule`
    NumericToBoolean,
    /// `NumericToStringCastRule`
    NumericToString,
    /// `BooleanToStringCastRule`
    BooleanToString,
    /// `TimestampToStringCastRule`
    TimestampToString,
    /// `TimeToStringCastRule`
    TimeToString,
    /// `DateToStringCastRule`
    DateToString,
    /// `StringToStringCastRule`
    StringToString,
    /// `ArrayToStringCastRule`
    ArrayToString,
    /// `MapToStringCastRule`
    MapToString,
    /// `RowToStringCastRule`
    RowToString,
    /// `StringToBooleanCastRule`
    StringToBoolean,
    /// `StringToDecimalCastRule`
    StringToDecimal,
    /// `StringToNumericPrimitiveCastRule`
    StringToNumericPrimitive,
    /// `StringToDateCastRule`
    StringToDate,
    /// `StringToTimeCastRule`
    StringToTime,
    /// `StringToTimestampCastRule`
    StringToTimestamp,
    /// `StringToBinaryCastRule`
    StringToBinary,
    /// `StringToArrayCastRule`
    StringToArray,
    /// `StringToMapCastRule`
    StringToMap,
    /// `StringToRowCastRule`
    StringToRow,
    /// `TimestampToTimestampCastRule`
    TimestampToTimestamp,
    /// `TimestampToDateCastRule`
    TimestampToDate,
    /// `TimestampToTimeCastRule`
    TimestampToTime,
    /// `DateToTimestampCastRule`
    DateToTimestamp,
    /// `TimeToTimestampCastRule`
    TimeToTimestamp,
    /// `TimestampToNumericPrimitiveCastRule`
    TimestampToNumericPrimitive,
    /// `BinaryToBinaryCastRule`
    BinaryToBinary,
    /// `BinaryToStringCastRule`
    BinaryToString,
}

/// Java `DataTypeRoot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Root {
    Char,
    VarChar,
    Boolean,
    Binary,
    VarBinary,
    Decimal,
    TinyInt,
    SmallInt,
    Integer,
    BigInt,
    Float,
    Double,
    Date,
    Time,
    Timestamp,
    LocalZonedTimestamp,
    Variant,
    Blob,
    Array,
    Vector,
    Multiset,
    Map,
    Row,
    Other,
}

/// Java `DataTypeFamily`, in its declaration order (the order of `EnumSet` iteration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    Predefined,
    Constructed,
    CharacterString,
    BinaryString,
    Numeric,
    IntegerNumeric,
    ExactNumeric,
    ApproximateNumeric,
    Datetime,
    Time,
    Timestamp,
    Collection,
    Extension,
}

pub(super) fn root(t: &TypeKind) -> Root {
    match t {
        TypeKind::Char { .. } => Root::Char,
        TypeKind::VarChar { .. } => Root::VarChar,
        TypeKind::Boolean => Root::Boolean,
        TypeKind::Binary { .. } => Root::Binary,
        TypeKind::VarBinary { .. } => Root::VarBinary,
        TypeKind::Decimal { .. } => Root::Decimal,
        TypeKind::TinyInt => Root::TinyInt,
        TypeKind::SmallInt => Root::SmallInt,
        TypeKind::Int => Root::Integer,
        TypeKind::BigInt => Root::BigInt,
        TypeKind::Float => Root::Float,
        TypeKind::Double => Root::Double,
        TypeKind::Date => Root::Date,
        TypeKind::Time { .. } => Root::Time,
        TypeKind::Timestamp { .. } => Root::Timestamp,
        TypeKind::LocalZonedTimestamp { .. } => Root::LocalZonedTimestamp,
        TypeKind::Variant => Root::Variant,
        TypeKind::Blob => Root::Blob,
        TypeKind::Array(_) => Root::Array,
        TypeKind::Vector { .. } => Root::Vector,
        TypeKind::Multiset(_) => Root::Multiset,
        TypeKind::Map(..) => Root::Map,
        TypeKind::Row(_) => Root::Row,
        TypeKind::Other(_) => Root::Other,
    }
}

/// The families of a root, in `DataTypeFamily` order (Java `DataTypeRoot.getFamilies`).
pub(super) fn families(r: Root) -> &'static [Family] {
    use Family::*;
    match r {
        Root::Char | Root::VarChar => &[Predefined, CharacterString],
        Root::Boolean | Root::Variant | Root::Blob => &[Predefined],
        Root::Binary | Root::VarBinary => &[Predefined, BinaryString],
        Root::Decimal => &[Predefined, Numeric, ExactNumeric],
        Root::TinyInt | Root::SmallInt | Root::Integer | Root::BigInt => {
            &[Predefined, Numeric, IntegerNumeric, ExactNumeric]
        }
        Root::Float | Root::Double => &[Predefined, Numeric, ApproximateNumeric],
        Root::Date => &[Predefined, Datetime],
        Root::Time => &[Predefined, Datetime, Time],
        Root::Timestamp => &[Predefined, Datetime, Timestamp],
        Root::LocalZonedTimestamp => &[Predefined, Datetime, Timestamp, Extension],
        Root::Array | Root::Vector | Root::Multiset => &[Constructed, Collection],
        Root::Map => &[Constructed, Extension],
        Root::Row => &[Constructed],
        Root::Other => &[],
    }
}

/// A key of Java's rule map: a whole type (only `STRING`, i.e. nullable `VARCHAR(MAX)`, is
/// used as one), a root or a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key {
    StringType,
    Root(Root),
    Family(Family),
}

/// The rules as Java registers them: (rule, input keys, target keys), in registration order.
pub(super) fn rule_table() -> &'static [(CastRule, &'static [Key], &'static [Key])] {
    use CastRule::*;
    use Family as F;
    use Key::{Family as Fa, Root as R};
    const STR: &[Key] = &[Fa(F::CharacterString)];
    const PRIM: &[Key] = &[Fa(F::IntegerNumeric), Fa(F::ApproximateNumeric)];
    const TS: &[Key] = &[R(Root::Timestamp), R(Root::LocalZonedTimestamp)];
    &[
        (DecimalToDecimal, &[R(Root::Decimal)], &[R(Root::Decimal)]),
        (NumericPrimitiveToDecimal, PRIM, &[R(Root::Decimal)]),
        (DecimalToNumericPrimitive, &[R(Root::Decimal)], PRIM),
        (NumericPrimitive, PRIM, PRIM),
        (NumericPrimitiveToTimestamp, &[Fa(F::Numeric)], TS),
        (BooleanToNumeric, &[R(Root::Boolean)], &[Fa(F::Numeric)]),
        (
            NumericToBoolean,
            &[Fa(F::IntegerNumeric)],
            &[R(Root::Boolean)],
        ),
        (NumericToString, &[Fa(F::Numeric)], STR),
        (BooleanToString, &[R(Root::Boolean)], STR),
        (TimestampToString, &[Fa(F::Timestamp)], &[Key::StringType]),
        (TimeToString, &[R(Root::Time)], &[Key::StringType]),
        (DateToString, &[R(Root::Date)], &[Key::StringType]),
        (StringToString, STR, STR),
        (ArrayToString, &[R(Root::Array)], STR),
        (MapToString, &[R(Root::Map)], STR),
        (RowToString, &[R(Root::Row)], STR),
        (StringToBoolean, STR, &[R(Root::Boolean)]),
        (StringToDecimal, STR, &[R(Root::Decimal)]),
        (StringToNumericPrimitive, STR, PRIM),
        (StringToDate, STR, &[R(Root::Date)]),
        (StringToTime, STR, &[R(Root::Time)]),
        (StringToTimestamp, STR, &[Fa(F::Timestamp)]),
        (StringToBinary, STR, &[Fa(F::BinaryString)]),
        (StringToArray, STR, &[R(Root::Array)]),
        (StringToMap, STR, &[R(Root::Map)]),
        (StringToRow, STR, &[R(Root::Row)]),
        (TimestampToTimestamp, TS, TS),
        (TimestampToDate, TS, &[R(Root::Date)]),
        (TimestampToTime, TS, &[R(Root::Time)]),
        (DateToTimestamp, &[R(Root::Date)], TS),
        (TimeToTimestamp, &[R(Root::Time)], TS),
        (
            TimestampToNumericPrimitive,
            TS,
            &[R(Root::BigInt), R(Root::Integer)],
        ),
        (
            BinaryToBinary,
            &[Fa(F::BinaryString)],
            &[Fa(F::BinaryString)],
        ),
        (BinaryToString, &[Fa(F::BinaryString)], STR),
    ]
}

/// The rule registered last for (target key, input key), as Java's map of maps holds it.
pub(super) fn lookup(target: Key, input: Key) -> Option<CastRule> {
    rule_table()
        .iter()
        .rev()
        .find(|(_, inputs, targets)| targets.contains(&target) && inputs.contains(&input))
        .map(|(rule, _, _)| *rule)
}

pub(super) fn is_string_type(t: &DataType) -> bool {
    t.nullable && matches!(t.kind, TypeKind::VarChar { length } if length == MAX_LENGTH)
}

/// The rule Java's `CastExecutors` resolves for a cast of `input` values to `target` (`None`:
/// no rule). Nullability matters only where Java's does: the rules that target the `STRING`
/// type itself (timestamps, times and dates to strings) need a nullable `STRING` target.
pub fn resolve_rule(input: &DataType, target: &DataType) -> Option<CastRule> {
    let target_root = root(&target.kind);
    let input_root = root(&input.kind);
    let mut target_keys = Vec::with_capacity(6);
    if is_string_type(target) {
        target_keys.push(Key::StringType);
    }
    target_keys.push(Key::Root(target_root));
    target_keys.extend(families(target_root).iter().map(|f| Key::Family(*f)));
    for t in target_keys {
        let found = std::iter::once(Key::Root(input_root))
            .chain(families(input_root).iter().map(|f| Key::Family(*f)))
            .find_map(|i| lookup(t, i));
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Whether Java's `CastExecutors.resolve(input, target)` returns an executor: a rule exists
/// and builds one for these types (`NumericPrimitiveToTimestamp` only for `INT` and `BIGINT`
/// inputs; `StringToArray` only when its element type can be cast from `STRING`).
pub fn has_cast_executor(input: &DataType, target: &DataType) -> bool {
    match resolve_rule(input, target) {
        None => false,
        Some(CastRule::NumericPrimitiveToTimestamp) => {
            matches!(input.kind, TypeKind::Int | TypeKind::BigInt)
        }
        Some(CastRule::StringToArray) => match &target.kind {
            TypeKind::Array(e) => has_cast_executor(
                &DataType::nullable(TypeKind::VarChar { length: MAX_LENGTH }),
                e,
            ),
            _ => false,
        },
        Some(_) => true,
    }
}

/// Whether [`evolve_column`] converts values of `file` columns to `read`: the same type (up to
/// nullability), `ROW`/`ARRAY`/`MAP` whose fields, elements or values convert (map keys
/// unchanged), or a Java cast executor this crate runs (all of them but `STRING` parsed into
/// `ARRAY`, `MAP` or `ROW`, which no `ALTER TABLE` can produce: Java's `DataTypeCasts` allows
/// no such change).
pub fn evolution_supported(file: &DataType, read: &DataType) -> bool {
    if file.kind == read.kind {
        return true;
    }
    match (&file.kind, &read.kind) {
        (TypeKind::Row(ff), TypeKind::Row(rf)) => rf.iter().all(|r| {
            ff.iter()
                .find(|f| f.id == r.id)
                .is_none_or(|f| evolution_supported(&f.data_type, &r.data_type))
        }),
        (TypeKind::Array(fe), TypeKind::Array(re)) => evolution_supported(fe, re),
        (TypeKind::Map(fk, fv), TypeKind::Map(rk, rv)) => fk == rk && evolution_supported(fv, rv),
        _ => {
            has_cast_executor(file, read)
                && !matches!(
                    resolve_rule(file, read),
                    Some(CastRule::StringToArray | CastRule::StringToMap | CastRule::StringToRow)
                )
                && to_string_supported(file, read)
        }
    }
}

/// Nested values cast to strings element by element: every element type needs a rule to
/// `STRING` (Java fails on the first non-null element without one).
pub(super) fn to_string_supported(file: &DataType, read: &DataType) -> bool {
    let string = DataType::nullable(TypeKind::VarChar { length: MAX_LENGTH });
    let elem_ok = |t: &DataType| {
        matches!(
            t.kind,
            TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Row(_)
        ) && to_string_supported(t, &string)
            || !matches!(
                t.kind,
                TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Row(_)
            ) && has_cast_executor(t, &string)
    };
    match (resolve_rule(file, read), &file.kind) {
        (Some(CastRule::ArrayToString), TypeKind::Array(e)) => elem_ok(e),
        (Some(CastRule::MapToString), TypeKind::Map(k, v)) => elem_ok(k) && elem_ok(v),
        (Some(CastRule::RowToString), TypeKind::Row(fields)) => {
            fields.iter().all(|f| elem_ok(&f.data_type))
        }
        _ => true,
    }
}
