//! The library's errors as Python exceptions (defined in `mnemon/_errors.py`): an argument out
//! of range or malformed -> `mnemon.InvalidArgument` (a `ValueError`), an unknown note (or one
//! newer than an index that may only be read) -> `mnemon.NotFound` (a `KeyError`), anything
//! else -> `mnemon.Error`. The message is the library's `Display` text, as the `mnemon` command
//! prints it, with its fix said in this package's terms where the library names a command or a
//! command-line option (`Memory.index()` for `mnemon index`, `mnemon.Memory.open(path)` for
//! `--dir`).

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
        mnemon::Error::UnknownNode { id, .. }
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
        mnemon::Error::NotAMemoryFolder { path, fix } if fix.starts_with("it was one,") => {
            let kept = fix.split(" or run `").next().unwrap_or(fix);
            format!(
                "{} is not a mnemon memory folder (no memory/ inside); {kept} or create it \
                 again with no notes with mnemon.Memory.init({:?}) (the events are kept)",
                path.display(),
                path.display().to_string()
            )
        }
        mnemon::Error::NotAMemoryFolder { path, fix } if fix.starts_with("run `mnemon init") => {
            format!(
                "{} is not a mnemon memory folder (no memory/ inside); create one with \
                 mnemon.Memory.init({:?})",
                path.display(),
                path.display().to_string()
            )
        }
        _ => python_terms(&e.to_string()),
    }
}

/// The library's fixes that name a command or the command line, and the same fix in Python.
/// Whole phrases first, where the Python fix reads differently; then the commands alone.
const FIXES: &[(&str, &str)] = &[
    (
        "run `mnemon index` if you just added it",
        "call Memory.index() if you just added it",
    ),
    (
        "run `mnemon index` where the folder is writable",
        "call Memory.index() in a process that may write the folder",
    ),
    (
        "`mnemon index` (or the next write or recall that indexes) reads it",
        "Memory.index() (or the next write_note or recall that indexes) reads it",
    ),
    (
        "until `mnemon index` runs where the index is writable",
        "until Memory.index() runs in a process that may write the index",
    ),
    (
        "`mnemon index` brings it up to date where it is writable",
        "Memory.index() in a process that may write it brings it up to date",
    ),
    (
        "run `mnemon doctor --fix` where the folder is writable",
        "delete index/ (derived from the notes) and call Memory.index() where the folder is \
         writable",
    ),
    (
        "Run `mnemon doctor --fix` when no process has this memory open: it makes a new one",
        "Delete index/ (derived from the notes) when no process has this memory open: \
         Memory.index() makes a new one",
    ),
    (
        "pass the sha256 that memory_show / mnemon show returns for the note",
        "pass the sha256 that Memory.show(id) gives for the note (its .sha256)",
    ),
    (
        "as fields (command-line options or tool arguments)",
        "as keyword arguments of Memory.write_note",
    ),
    (
        "(given by --session, session=, or the MNEMON_SESSION environment variable)",
        "(given by session= or the MNEMON_SESSION environment variable)",
    ),
    ("(or give another --dir)", "(or give another path)"),
    (
        "; run `mnemon init`",
        "; create it with mnemon.Memory.init(path)",
    ),
    ("pass `--dir ", "use `--dir "),
    (
        "read it with memory_show / mnemon show and",
        "read it with Memory.show(id) and",
    ),
    ("with memory_show / mnemon show,", "with Memory.show(id),"),
    ("`mnemon index`", "Memory.index()"),
    ("`mnemon doctor`", "Memory.doctor()"),
];

/// Command-line forms taking one argument, up to the next backtick, and the Python call taking
/// it: `` `--dir PATH` `` is `mnemon.Memory.open("PATH")`.
const CALLS: &[(&str, &str)] = &[
    ("`--dir ", "mnemon.Memory.open"),
    ("memory_show / mnemon show `", "Memory.show"),
];

/// `text` (an error's or a notice's) with the fixes that name the command line said in Python:
/// [`FIXES`], then [`CALLS`].
pub(crate) fn python_terms(text: &str) -> String {
    let mut out = text.to_string();
    for (cli, python) in FIXES {
        if out.contains(cli) {
            out = out.replace(cli, python);
        }
    }
    for (cli, call) in CALLS {
        let mut from = 0;
        while let Some(found) = out.get(from..).and_then(|rest| rest.find(cli)) {
            let start = from + found;
            let arg_at = start + cli.len();
            let Some(len) = out.get(arg_at..).and_then(|rest| rest.find('`')) else {
                break;
            };
            let python = format!("{call}({:?})", &out[arg_at..arg_at + len]);
            out.replace_range(start..arg_at + len + 1, &python);
            // On after it: an argument holding the pattern itself is not read again.
            from = start + python.len();
        }
    }
    out
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
