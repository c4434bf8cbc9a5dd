//! A tool call's arguments, read as rmcp's `Parameters` reads them, with the argument a misfit
//! is in named: serde alone says "invalid type: string \"a\", expected a sequence", and an agent
//! calling a tool with six arguments has to guess which one.

use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::schemars::{self, JsonSchema};
use serde::de::DeserializeOwned;

/// A tool's arguments, `P` as its JSON Schema describes them. Named `Parameters` as rmcp's own
/// wrapper is: its `#[tool]` macro finds the input schema by that name.
pub struct Parameters<P>(pub P);

impl<P: JsonSchema> JsonSchema for Parameters<P> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        P::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        P::json_schema(generator)
    }
}

/// The start rmcp looks for to answer a misfit as the tool's error (`isError: true`, read by
/// the agent) rather than as a JSON-RPC error (read by its client, if at all).
const RMCP_ARGUMENT_ERROR_PREFIX: &str = "failed to deserialize parameters:";

impl<S, P: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Parameters<P> {
    fn from_context_part(context: &mut ToolCallContext<S>) -> Result<Self, rmcp::ErrorData> {
        let arguments = serde_json::Value::Object(context.arguments.take().unwrap_or_default());
        serde_path_to_error::deserialize(arguments)
            .map(Parameters)
            .map_err(|e| rmcp::ErrorData::invalid_params(misfit(&e), None))
    }
}

/// What is wrong with the arguments, naming the one at fault and what to do.
fn misfit(e: &serde_path_to_error::Error<serde_json::Error>) -> String {
    // Missing and unknown arguments: serde names them itself, as fields. An unknown one is
    // refused, not ignored: a misspelt `tag` or `supersede` would leave the agent believing it
    // tagged a note or recorded what it replaces.
    let why = e
        .inner()
        .to_string()
        .replace("missing field", "missing argument")
        .replace("unknown field", "unknown argument");
    let at = e.path().to_string();
    let what = if at == "." || at.is_empty() || why.starts_with("unknown argument") {
        why
    } else {
        format!("argument `{at}`: {why}")
    };
    format!(
        "{RMCP_ARGUMENT_ERROR_PREFIX} {what}; give the arguments as the tool's input schema \
         (tools/list) says"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        used: Vec<String>,
        #[serde(default)]
        limit: Option<i64>,
    }

    fn read(v: serde_json::Value) -> Result<Args, String> {
        serde_path_to_error::deserialize(v).map_err(|e| misfit(&e))
    }

    #[test]
    fn a_misfit_names_its_argument_and_a_missing_one_is_called_an_argument() {
        let e = read(serde_json::json!({"used": "a"})).unwrap_err();
        assert_eq!(
            e,
            "failed to deserialize parameters: argument `used`: invalid type: string \"a\", \
             expected a sequence; give the arguments as the tool's input schema (tools/list) says"
        );
        let e = read(serde_json::json!({"used": ["a", 3]})).unwrap_err();
        assert!(
            e.contains("argument `used[1]`: invalid type: integer `3`"),
            "{e}"
        );
        let e = read(serde_json::json!({"limit": 3})).unwrap_err();
        assert!(e.contains(": missing argument `used`;"), "{e}");
        let e = read(serde_json::json!({"used": [], "tag": "x"})).unwrap_err();
        assert!(
            e.contains(": unknown argument `tag`, expected `used` or `limit`;"),
            "{e}"
        );
        assert!(read(serde_json::json!({"used": []})).is_ok());
    }
}
