//! Conversions between Python values and the library's: integer arguments checked against the
//! library's ranges (`mnemon::args`), and any `Serialize` report as plain Python data (dicts,
//! lists, str, int, float, None) in the shape of its JSON (what `mnemon ... --json` prints).

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde::Serialize;
use serde_json::Value;

/// An integer argument as Python gave it: checked by the library's [`mnemon::args::Range`], so a
/// value out of range raises the same message as the CLI's, even one too large for an `i64`.
#[derive(Debug, Clone)]
pub(crate) enum Int {
    /// Fits an `i64`.
    Fits(i64),
    /// Too large for an `i64`: the decimal digits, for the error message.
    Huge(String),
}

impl Int {
    /// The value as the type the facade takes, or the library's out-of-range error.
    pub(crate) fn check<T: TryFrom<i64>>(&self, range: mnemon::args::Range) -> mnemon::Result<T> {
        match self {
            Int::Fits(v) => range.parse(*v),
            Int::Huge(digits) => Err(mnemon::Error::OutOfRange {
                what: range.what,
                value: digits.clone(),
                allowed: range.allowed(),
            }),
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Int {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Int> {
        match obj.extract::<i64>() {
            Ok(v) => Ok(Int::Fits(v)),
            Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
                Ok(Int::Huge(obj.str()?.to_string()))
            }
            Err(e) => Err(e),
        }
    }
}

/// A `str` argument as UTF-8 text. A lone surrogate (half of a UTF-16 pair: `json.loads` makes
/// one of `"\ud800"`) is no text: it is refused as every other bad argument is
/// (`mnemon.InvalidArgument`, a `mnemon.Error`), not with Python's `UnicodeEncodeError`, which
/// `except mnemon.Error` would let through.
#[derive(Debug, Clone, Default)]
pub(crate) struct Text(pub(crate) String);

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<Text> for String {
    fn from(t: Text) -> String {
        t.0
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Text {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Text> {
        let s = obj.cast::<PyString>()?;
        match s.to_cow() {
            Ok(t) => Ok(Text(t.into_owned())),
            Err(_) => {
                let shown = s.to_string_lossy().chars().take(80).collect::<String>();
                Err(crate::errors::to_py(
                    obj.py(),
                    mnemon::Error::InvalidArgument {
                        what: "text",
                        message: format!(
                            "{shown:?} holds a lone surrogate (half of a UTF-16 pair, shown as \
                             U+FFFD), which is no Unicode text: remove it, or decode the text \
                             with errors='replace'"
                        ),
                    },
                ))
            }
        }
    }
}

/// A list of strings (note ids, tags) as Python gave it. A `str` is refused with the fix: it is
/// a sequence of strings too, and would otherwise read as one id per character or fail with
/// pyo3's "Can't extract `str` to `Vec`".
#[derive(Debug, Clone, Default)]
pub(crate) struct Strings(pub(crate) Vec<String>);

impl<'a, 'py> FromPyObject<'a, 'py> for Strings {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Strings> {
        if let Ok(s) = obj.cast::<PyString>() {
            return Err(PyTypeError::new_err(format!(
                "takes a list of strings, not one string: write [{}]",
                s.repr()?
            )));
        }
        let texts: Vec<Text> = obj.extract()?;
        Ok(Strings(texts.into_iter().map(String::from).collect()))
    }
}

/// `value` as Python data in the shape of its JSON.
pub(crate) fn to_data<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    let json = serde_json::to_value(value)
        .map_err(|e| crate::errors::plain(py, format!("could not convert a report: {e}")))?;
    json_to_py(py, &json)
}

fn json_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|x| json_to_py(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(map) => {
            let d = PyDict::new(py);
            for (k, x) in map {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}
