//! The library's errors as Python exceptions (defined in `mnemon/_errors.py`): an argument out
//! of range or malformed -> `mnemon.InvalidArgument` (a `ValueError`), an unknown note (or one
//! newer than an index that may only be read) -> `mnemon.NotFound` (a `KeyError`), anything
//! else -> `mnemon.Error`. The message is always the library's `Display` text, as the `mnemon`
//! command prints it.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

const MODULE: &str = "mnemon._errors";

static ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INVALID_ARGUMENT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static NOT_FOUND: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The Python exception for a library error.
pub(crate) fn to_py(py: Python<'_>, e: mnemon::Error) -> PyErr {
    let message = e.to_string();
    let made = match &e {
        mnemon::Error::OutOfRange { what, .. } | mnemon::Error::InvalidArgument { what, .. } => {
            INVALID_ARGUMENT
                .import(py, MODULE, "InvalidArgument")
                .and_then(|cls| cls.call1((message, *what)))
        }
        // A note that cannot be written as given: the id, the body or a field is at fault.
        mnemon::Error::Write { .. } => INVALID_ARGUMENT
            .import(py, MODULE, "InvalidArgument")
            .and_then(|cls| cls.call1((message, "note"))),
        mnemon::Error::UnknownNode { id } | mnemon::Error::NotIndexedReadOnly { id, .. } => {
            NOT_FOUND
                .import(py, MODULE, "NotFound")
                .and_then(|cls| cls.call1((message, id.as_str())))
        }
        _ => error(py, message),
    };
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

/// A `mnemon.Error` with `message` (for failures of the binding itself, such as a closed memory).
pub(crate) fn plain(py: Python<'_>, message: impl Into<String>) -> PyErr {
    match error(py, message.into()) {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

fn error(py: Python<'_>, message: String) -> PyResult<Bound<'_, PyAny>> {
    ERROR.import(py, MODULE, "Error")?.call1((message,))
}

/// `Result<T, mnemon::Error>` -> `PyResult<T>`, once back on the interpreter.
pub(crate) trait IntoPy<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPy<T> for mnemon::Result<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}
