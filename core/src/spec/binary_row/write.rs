//! Writing [`BinaryRow`] bytes from [`Datum`]s: the fixed part, the variable part, nested
//! arrays and maps.
//!
//! Source: Java `org.apache.paimon.data.BinaryRowWriter`, `BinaryArrayWriter`,
//! `AbstractBinaryWriter`.

use super::*;

fn round_to_word(n: usize) -> usize {
    n.div_ceil(8) * 8
}

fn mismatch(value: &Datum, ty: &DataType) -> Error {
    Error::invalid(format!(
        "binary row encode: value {value:?} does not match type {:?}",
        ty.kind
    ))
}

/// A buffer with a fixed part and a growing var part; offsets are relative to its start.
struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    fn put(&mut self, at: usize, bytes: &[u8]) {
        self.buf[at..at + bytes.len()].copy_from_slice(bytes);
    }

    fn set_slot(&mut self, at: usize, v: u64) {
        self.put(at, &v.to_le_bytes());
    }

    /// Append `bytes` zero-padded to 8; return `(offset << 32) | len`.
    fn append_var(&mut self, bytes: &[u8]) -> Result<u64> {
        let off = self.buf.len();
        self.buf.extend_from_slice(bytes);
        self.buf.resize(off + round_to_word(bytes.len()), 0);
        let (Ok(off32), Ok(len32)) = (u32::try_from(off), u32::try_from(bytes.len())) else {
            return Err(Error::invalid("binary row encode: row exceeds 4 GiB"));
        };
        Ok((u64::from(off32) << 32) | u64::from(len32))
    }

    fn write_var_bytes(&mut self, slot: usize, bytes: &[u8]) -> Result<()> {
        if bytes.len() <= 7 {
            let mut v = [0u8; 8];
            v[..bytes.len()].copy_from_slice(bytes);
            v[7] = 0x80 | bytes.len() as u8;
            self.put(slot, &v);
        } else {
            let v = self.append_var(bytes)?;
            self.set_slot(slot, v);
        }
        Ok(())
    }

    /// Write a non-null `value` of `ty` into the slot at `slot`.
    fn write_value(&mut self, slot: usize, value: &Datum, ty: &DataType) -> Result<()> {
        match (&ty.kind, value) {
            (TypeKind::Boolean, Datum::Boolean(b)) => self.put(slot, &[u8::from(*b)]),
            (TypeKind::TinyInt, Datum::TinyInt(v)) => self.put(slot, &v.to_le_bytes()),
            (TypeKind::SmallInt, Datum::SmallInt(v)) => self.put(slot, &v.to_le_bytes()),
            (TypeKind::Int, Datum::Int(v))
            | (TypeKind::Date, Datum::Date(v))
            | (TypeKind::Time { .. }, Datum::Time(v)) => self.put(slot, &v.to_le_bytes()),
            (TypeKind::Float, Datum::Float(v)) => self.put(slot, &v.to_le_bytes()),
            (TypeKind::BigInt, Datum::BigInt(v)) => self.put(slot, &v.to_le_bytes()),
            (TypeKind::Double, Datum::Double(v)) => self.put(slot, &v.to_le_bytes()),
            (TypeKind::Decimal { precision, .. }, Datum::Decimal { unscaled, .. }) => {
                if *precision <= MAX_COMPACT_DECIMAL_PRECISION {
                    let v = i64::try_from(*unscaled).map_err(|_| mismatch(value, ty))?;
                    self.put(slot, &v.to_le_bytes());
                } else {
                    let bytes =
                        crate::util::minimal_twos_complement(&unscaled.to_be_bytes()).to_vec();
                    let mut region = [0u8; 16];
                    region[..bytes.len()].copy_from_slice(&bytes);
                    let v = self.append_var(&region)?;
                    // The slot records the real length, not the reserved 16.
                    let v = (v & !0xffff_ffff) | bytes.len() as u64;
                    self.set_slot(slot, v);
                }
            }
            (
                TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision },
                Datum::Timestamp {
                    millis,
                    nanos_of_milli,
                },
            ) => {
                if *precision <= MAX_COMPACT_TIMESTAMP_PRECISION {
                    self.put(slot, &millis.to_le_bytes());
                } else {
                    let v = self.append_var(&millis.to_le_bytes())?;
                    let v = (v & !0xffff_ffff) | u64::from(*nanos_of_milli as u32);
                    self.set_slot(slot, v);
                }
            }
            (TypeKind::Char { .. } | TypeKind::VarChar { .. }, Datum::String(s)) => {
                self.write_var_bytes(slot, s.as_bytes())?;
            }
            (
                TypeKind::Binary { .. } | TypeKind::VarBinary { .. } | TypeKind::Blob,
                Datum::Binary(b),
            ) => self.write_var_bytes(slot, b)?,
            (TypeKind::Variant, Datum::Variant { value: v, metadata }) => {
                let vlen = i32::try_from(v.len()).map_err(|_| mismatch(value, ty))?;
                let mut bytes = Vec::with_capacity(4 + v.len() + metadata.len());
                bytes.extend_from_slice(&vlen.to_le_bytes());
                bytes.extend_from_slice(v);
                bytes.extend_from_slice(metadata);
                let v = self.append_var(&bytes)?;
                self.set_slot(slot, v);
            }
            (TypeKind::Array(elem), Datum::Array(items)) => {
                let bytes = write_array(items, elem)?;
                let v = self.append_var(&bytes)?;
                self.set_slot(slot, v);
            }
            (TypeKind::Map(k, v), Datum::Map(entries)) => {
                let bytes = write_map(entries, k, v)?;
                let v = self.append_var(&bytes)?;
                self.set_slot(slot, v);
            }
            (TypeKind::Multiset(elem), Datum::Map(entries)) => {
                let count = DataType::not_null(TypeKind::Int);
                let bytes = write_map(entries, elem, &count)?;
                let v = self.append_var(&bytes)?;
                self.set_slot(slot, v);
            }
            (TypeKind::Row(fields), Datum::Row(values)) => {
                let types: Vec<DataType> = fields.iter().map(|f| f.data_type.clone()).collect();
                if types.len() != values.len() {
                    return Err(mismatch(value, ty));
                }
                let bytes = write_row(values, &types)?;
                let v = self.append_var(&bytes)?;
                self.set_slot(slot, v);
            }
            _ => return Err(mismatch(value, ty)),
        }
        Ok(())
    }
}

pub(super) fn write_row(values: &[Datum], types: &[DataType]) -> Result<Vec<u8>> {
    let arity = values.len();
    let null_bytes = null_bits_size_in_bytes(arity);
    let fixed = fixed_part_size(arity)
        .ok_or_else(|| Error::invalid("binary row encode: too many fields"))?;
    let mut w = Writer {
        buf: vec![0; fixed],
    };
    for (i, (value, ty)) in values.iter().zip(types).enumerate() {
        let slot = null_bytes + 8 * i;
        if value.is_null() {
            let bit = i + 8;
            w.buf[bit >> 3] |= 1 << (bit & 7);
            // RowHelper writes nulls of non-compact DECIMAL/TIMESTAMP through the writer, which
            // still reserves their var bytes and records the offset with length 0.
            let reserve = match &ty.kind {
                TypeKind::Decimal { precision, .. }
                    if *precision > MAX_COMPACT_DECIMAL_PRECISION =>
                {
                    16
                }
                TypeKind::Timestamp { precision } | TypeKind::LocalZonedTimestamp { precision }
                    if *precision > MAX_COMPACT_TIMESTAMP_PRECISION =>
                {
                    8
                }
                _ => 0,
            };
            if reserve > 0 {
                let v = w.append_var(&[0; 16][..reserve])?;
                w.set_slot(slot, v & !0xffff_ffff);
            }
        } else {
            w.write_value(slot, value, ty)?;
        }
    }
    Ok(w.buf)
}

pub(super) fn write_array(items: &[Datum], elem: &DataType) -> Result<Vec<u8>> {
    let n = items.len();
    let width = element_size(elem)?;
    let header = array_header_size(n)
        .ok_or_else(|| Error::invalid("binary array encode: too many elements"))?;
    let fixed = round_to_word(header + width * n);
    let n32 = i32::try_from(n).map_err(|_| Error::invalid("binary array encode: too large"))?;
    let mut w = Writer {
        buf: vec![0; fixed],
    };
    w.put(0, &n32.to_le_bytes());
    for (i, item) in items.iter().enumerate() {
        if item.is_null() {
            w.buf[4 + (i >> 3)] |= 1 << (i & 7);
        } else {
            w.write_value(header + i * width, item, elem)?;
        }
    }
    Ok(w.buf)
}

fn write_map(entries: &[(Datum, Datum)], key: &DataType, value: &DataType) -> Result<Vec<u8>> {
    let keys: Vec<Datum> = entries.iter().map(|(k, _)| k.clone()).collect();
    let values: Vec<Datum> = entries.iter().map(|(_, v)| v.clone()).collect();
    let kb = write_array(&keys, key)?;
    let vb = write_array(&values, value)?;
    let kb_len =
        i32::try_from(kb.len()).map_err(|_| Error::invalid("binary map encode: too large"))?;
    let mut out = Vec::with_capacity(4 + kb.len() + vb.len());
    out.extend_from_slice(&kb_len.to_le_bytes());
    out.extend_from_slice(&kb);
    out.extend_from_slice(&vb);
    Ok(out)
}
