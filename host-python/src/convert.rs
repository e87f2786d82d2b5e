//! Arrow and JSON across the boundary.

use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_pyarrow::FromPyArrow;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::InvalidInput;

/// A JSON (de)serialization error as an exception.
pub fn json_err(e: serde_json::Error) -> PyErr {
    crate::errors::PaimonError::new_err(e.to_string())
}

/// A JSON value as Python objects (dict, list, str, int, float, bool, None).
pub fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<Py<PyAny>> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any().unbind(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any().unbind(),
            _ => n
                .as_f64()
                .unwrap_or(f64::NAN)
                .into_pyobject(py)?
                .into_any()
                .unbind(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Array(a) => {
            let list = PyList::empty(py);
            for x in a {
                list.append(json_to_py(py, x)?)?;
            }
            list.into_any().unbind()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}

/// A reader over Arrow data from Python: anything with `__arrow_c_stream__` (pyarrow tables
/// and readers, polars, DuckDB results...) or `__arrow_c_array__` (a record batch), or a
/// pyarrow object exported through its C interface.
pub fn input_reader(data: &Bound<'_, PyAny>) -> PyResult<Box<dyn RecordBatchReader + Send>> {
    if data.hasattr("__arrow_c_stream__")? {
        let reader = arrow_array::ffi_stream::ArrowArrayStreamReader::from_pyarrow_bound(data)?;
        return Ok(Box::new(reader));
    }
    if data.hasattr("__arrow_c_array__")? {
        let batch = RecordBatch::from_pyarrow_bound(data)?;
        let schema = batch.schema();
        return Ok(Box::new(RecordBatchIterator::new(vec![Ok(batch)], schema)));
    }
    Err(InvalidInput::new_err(format!(
        "expected Arrow data (an object with __arrow_c_stream__ or __arrow_c_array__, e.g. a \
         pyarrow.Table), got {}",
        data.get_type().name()?
    )))
}

/// Every batch of Arrow data from Python (see [`input_reader`]).
pub fn input_batches(data: &Bound<'_, PyAny>) -> PyResult<Vec<RecordBatch>> {
    let reader = input_reader(data)?;
    let py = data.py();
    py.detach(|| reader.collect::<Result<Vec<_>, _>>())
        .map_err(|e| InvalidInput::new_err(e.to_string()))
}

/// The type of column `name` of `schema` (`Null` when absent).
pub fn arrow_type_of(schema: &SchemaRef, name: &str) -> DataType {
    schema
        .field_with_name(name)
        .map_or(DataType::Null, |f| f.data_type().clone())
}

/// The target of a cast between string (or binary) encodings: `Some(target)` when `from`
/// and `to` are both string types or both binary types and differ.
fn string_cast(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    let string = |t: &DataType| matches!(t, Utf8 | LargeUtf8 | Utf8View);
    let binary = |t: &DataType| matches!(t, Binary | LargeBinary | BinaryView);
    from != to && ((string(from) && string(to)) || (binary(from) && binary(to)))
}

/// `batch` with its string/binary columns cast to the encodings of the same-named columns of
/// `target` (string/large_string/string_view, binary/large_binary/binary_view: Arrow producers
/// differ); other columns unchanged (the writer checks them and names a misfit).
pub fn conform_batch(batch: &RecordBatch, target: &SchemaRef) -> PyResult<RecordBatch> {
    let schema = batch.schema();
    let mut changed = false;
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (f, c) in schema.fields().iter().zip(batch.columns()) {
        match target.field_with_name(f.name()) {
            Ok(t) if string_cast(f.data_type(), t.data_type()) => {
                let cast = arrow_cast::cast(c, t.data_type())
                    .map_err(|e| InvalidInput::new_err(format!("column '{}': {e}", f.name())))?;
                fields.push(Arc::new(Field::new(
                    f.name(),
                    t.data_type().clone(),
                    f.is_nullable(),
                )));
                columns.push(cast);
                changed = true;
            }
            _ => {
                fields.push(Arc::clone(f));
                columns.push(Arc::clone(c));
            }
        }
    }
    if !changed {
        return Ok(batch.clone());
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| InvalidInput::new_err(e.to_string()))
}
