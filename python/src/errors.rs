//! The library's errors as Python exceptions (defined in `mnemon/_errors.py`): an argument out
//! of range or malformed -> `mnemon.InvalidArgument` (a `ValueError`), an unknown note (or one
//! newer than an index that may only be read) -> `mnemon.NotFound` (a `KeyError`), anything
//! else -> `mnemon.Error`. The message is the library's `Display` text, as the `mnemon` command
//! prints it, but for a missing memory folder, whose fix is `mnemon.Memory.init` here.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

const MODULE: &str = "mnemon._errors";

static ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INVALID_ARGUMENT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static NOT_FOUND: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The Python exception for a library error.
pub(crate) fn to_py(py: Python<'_>, e: mnemon::Error) -> PyErr {
    let message = in_python_terms(&e);
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
        mnemon::Error::UnknownNode { id }
        | mnemon::Error::RemovedNode { id }
        | mnemon::Error::NotIndexedReadOnly { id, .. } => NOT_FOUND
            .import(py, MODULE, "NotFound")
            .and_then(|cls| cls.call1((message, id.as_str()))),
        _ => error(py, message),
    };
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

/// The error's text, its fix said in this package's terms where the library names a command:
/// a folder to create is `mnemon.Memory.init`, not `mnemon init`.
fn in_python_terms(e: &mnemon::Error) -> String {
    match e {
        mnemon::Error::NoMemoryFolder { start } => format!(
            "no memory folder found: looked for .mnemon/ in {} and every parent; create one with \
             mnemon.Memory.init(path), pass its path to mnemon.Memory.open, or set MNEMON_DIR",
            start.display()
        ),
        mnemon::Error::NotAMemoryFolder { path, fix } if fix.starts_with("run `mnemon init") => {
            format!(
                "{} is not a mnemon memory folder (no memory/ inside); create one with \
                 mnemon.Memory.init({:?})",
                path.display(),
                path.display().to_string()
            )
        }
        _ => e.to_string(),
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
