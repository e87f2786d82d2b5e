//! Python exceptions, one class per error kind, all subclasses of `PaimonError`.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use paimon_kernel::io::IoErrorKind;

create_exception!(
    paimon_kernel,
    PaimonError,
    PyException,
    "Every error of paimon_kernel."
);
create_exception!(
    paimon_kernel,
    InvalidInput,
    PaimonError,
    "Input that cannot be used: an unknown column, option, snapshot or tag, rows that do not fit the table (the message names the column), a bad location."
);
create_exception!(
    paimon_kernel,
    Unsupported,
    PaimonError,
    "Valid input using something paimon-kernel does not support (the message names it)."
);
create_exception!(
    paimon_kernel,
    CommitConflict,
    PaimonError,
    "A commit conflicts with the table as it is now, or lost every race to publish; nothing of it was published."
);
create_exception!(
    paimon_kernel,
    CorruptFile,
    PaimonError,
    "Bytes that do not follow the format: a table file (named) or split/commit-message/task bytes."
);
create_exception!(
    paimon_kernel,
    NotFound,
    PaimonError,
    "No table at the location, or a file the table needs is missing (named)."
);
create_exception!(
    paimon_kernel,
    IoError,
    PaimonError,
    "The object store failed (the message names the path)."
);

/// Add the exception classes to the module.
pub fn register_exceptions(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PaimonError", py.get_type::<PaimonError>())?;
    m.add("InvalidInput", py.get_type::<InvalidInput>())?;
    m.add("Unsupported", py.get_type::<Unsupported>())?;
    m.add("CommitConflict", py.get_type::<CommitConflict>())?;
    m.add("CorruptFile", py.get_type::<CorruptFile>())?;
    m.add("NotFound", py.get_type::<NotFound>())?;
    m.add("IoError", py.get_type::<IoError>())?;
    Ok(())
}

/// The exception of a core error (by its innermost kind), with `message`.
fn kernel_err(e: &paimon_kernel::Error, message: String) -> PyErr {
    use paimon_kernel::Error as E;
    match e {
        E::Context { source, .. } => kernel_err(source, message),
        E::Io {
            kind: IoErrorKind::NotFound,
            ..
        } => NotFound::new_err(message),
        E::Io {
            kind: IoErrorKind::Unsupported,
            ..
        } => Unsupported::new_err(message),
        E::Io { .. } => IoError::new_err(message),
        E::Corrupt { .. } => CorruptFile::new_err(message),
        E::Unsupported { .. } => Unsupported::new_err(message),
        E::Invalid(_) | E::Arrow { .. } => InvalidInput::new_err(message),
        E::CommitConflict { .. } | E::CommitContended { .. } => CommitConflict::new_err(message),
        _ => PaimonError::new_err(message),
    }
}

/// The exception of a native-host error.
pub fn native_err(e: paimon_native::Error) -> PyErr {
    let message = e.to_string();
    native_err_with(&e, message)
}

/// The exception class of a native-host error, with `message` (e.g. the text of a DataFusion
/// error that wraps it).
pub fn native_err_with(e: &paimon_native::Error, message: String) -> PyErr {
    use paimon_native::Error as E;
    match e {
        E::Location { .. } => InvalidInput::new_err(message),
        E::ObjectStore { .. } => IoError::new_err(message),
        E::NotATable { .. } => NotFound::new_err(message),
        E::Kernel { source, .. } => kernel_err(source, message),
        _ => PaimonError::new_err(message),
    }
}

/// The exception of a core error.
pub fn to_py_err(e: paimon_kernel::Error) -> PyErr {
    let message = e.to_string();
    kernel_err(&e, message)
}

/// `.py_err()` on native results.
pub trait PyResultExt<T> {
    /// The result with a native error as its Python exception.
    fn py_err(self) -> PyResult<T>;
}

impl<T> PyResultExt<T> for paimon_native::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(native_err)
    }
}
