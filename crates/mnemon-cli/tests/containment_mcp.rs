//! `mnemon serve` contains malformed input: every line that is not a usable message gets a
//! JSON-RPC error reply (-32700 with `"id": null` when it cannot be read, -32600 with its id when
//! the id could be read), and the server keeps serving (issue 27, item 11).

mod common;

use common::fresh;
use common::mcp::spawn_serve;
use mnemon_cli::mcp::lines::{MAX_LINE_BYTES, MAX_NESTING_DEPTH};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a reply may take before the test calls it missing (a guard against hanging, not a
/// timing assertion).
const REPLY_GUARD: Duration = Duration::from_secs(120);

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: mpsc::Receiver<String>,
    _tmp: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let (tmp, memory) = fresh();
        let root = memory.dir().root().to_path_buf();
        drop(memory);
        let mut child = spawn_serve(&root, Stdio::null());
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            replies,
            _tmp: tmp,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().expect("flush");
    }

    fn send_line(&mut self, bytes: &[u8]) {
        let mut line = bytes.to_vec();
        line.push(b'\n');
        self.send(&line);
    }

    fn reply(&self) -> Value {
        let line = self
            .replies
            .recv_timeout(REPLY_GUARD)
            .expect("the server answered the line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("reply is not JSON ({e}): {line}"))
    }

    /// Send `line` and return the error reply's (code, id), checking its shape.
    fn error_for(&mut self, line: &[u8]) -> (i64, Value) {
        self.send_line(line);
        let r = self.reply();
        assert_eq!(r["jsonrpc"], "2.0", "{r}");
        assert!(r.get("result").is_none(), "{r}");
        let message = r["error"]["message"].as_str().unwrap_or("");
        assert!(!message.is_empty(), "the error says what was wrong: {r}");
        (r["error"]["code"].as_i64().unwrap_or(0), r["id"].clone())
    }

    fn rpc(&mut self, id: u64, method: &str, params: Value) -> Value {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(msg.to_string().as_bytes());
        let r = self.reply();
        assert_eq!(r["id"], id, "replies come in order here: {r}");
        r
    }

    fn initialize_and_list_tools(&mut self, first_id: u64) -> Vec<String> {
        let init = self.rpc(
            first_id,
            "initialize",
            json!({"protocolVersion": "2024-11-05", "capabilities": {},
                   "clientInfo": {"name": "containment", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "mnemon", "{init}");
        self.send_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let tools = self.rpc(first_id + 1, "tools/list", json!({}));
        let mut names: Vec<String> = tools["result"]["tools"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| t["name"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Close stdin and check the server ends cleanly.
    fn close(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait for the server");
        assert!(status.success(), "serve exits 0 at end of input: {status}");
    }
}

const TOOLS: [&str; 6] = [
    "memory_core",
    "memory_feedback",
    "memory_recall",
    "memory_set_importance",
    "memory_show",
    "memory_write",
];

#[test]
fn mcp_malformed_lines_get_json_rpc_errors_and_the_server_keeps_serving() {
    let mut s = Server::start();
    // Not JSON.
    assert_eq!(s.error_for(b"this is not json"), (-32700, Value::Null));
    // A number out of range: JSON whose id can be read.
    assert_eq!(
        s.error_for(br#"{"jsonrpc":"2.0","id":7,"method":1e999}"#),
        (-32600, json!(7))
    );
    // 100k `[`: far past any parser's recursion limit, and not JSON.
    assert_eq!(s.error_for(&vec![b'['; 100_000]), (-32700, Value::Null));
    // Well-formed but nested past the limit, with a readable id.
    let levels = MAX_NESTING_DEPTH * 4;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":"deep","method":"tools/list","params":{{"a":{}{}}}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    );
    assert_eq!(s.error_for(deep.as_bytes()), (-32600, json!("deep")));
    // A line over the length limit (17 MB): skipped to its newline and answered.
    let mut long = br#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"pad":""#.to_vec();
    long.resize(17_000_000, b'a');
    assert!(long.len() > MAX_LINE_BYTES);
    long.extend_from_slice(br#""}}"#);
    assert_eq!(s.error_for(&long), (-32700, Value::Null));
    // An invalid request whose id is readable: missing `method`.
    assert_eq!(
        s.error_for(br#"{"jsonrpc":"2.0","id":9}"#),
        (-32600, json!(9))
    );
    assert_eq!(
        s.error_for(br#"{"jsonrpc":"2.0","id":"ten","method":"tools/list","params":3}"#),
        (-32600, json!("ten"))
    );
    // Lines that get no reply (a blank line, an invalid notification, a notification and a
    // response before `initialize`) do not end the session either: the next reply answers the
    // next line.
    s.send_line(b"");
    s.send_line(br#"{"jsonrpc":"2.0","method":"notifications/x","params":1}"#);
    s.send_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send_line(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    assert_eq!(s.error_for(b"{"), (-32700, Value::Null));
    // Still serving.
    assert_eq!(s.initialize_and_list_tools(100), TOOLS);
    // And after initialize too.
    assert_eq!(s.error_for(b"\xff\xfe"), (-32700, Value::Null));
    assert_eq!(
        s.error_for(br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"x":1e999}}"#),
        (-32600, json!(11))
    );
    let tools = s.rpc(12, "tools/list", json!({}));
    assert_eq!(
        tools["result"]["tools"].as_array().map(Vec::len),
        Some(TOOLS.len())
    );
    s.close();
}

#[test]
fn mcp_last_line_without_newline_is_answered_at_end_of_input() {
    let mut s = Server::start();
    assert_eq!(s.initialize_and_list_tools(1), TOOLS);
    s.send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":"#);
    drop(s.stdin.take());
    let r = s.reply();
    assert_eq!(
        (&r["error"]["code"], &r["id"]),
        (&json!(-32700), &Value::Null)
    );
    s.close();
}

/// The server's own error replies and rmcp's replies share stdout: many of both at once must
/// each arrive as one whole line of JSON.
#[test]
fn mcp_error_replies_and_service_replies_never_interleave() {
    let mut s = Server::start();
    assert_eq!(s.initialize_and_list_tools(1), TOOLS);
    const PAIRS: u64 = 150;
    let mut burst = Vec::new();
    for i in 0..PAIRS {
        let id = 1000 + i;
        burst.extend_from_slice(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
                .to_string()
                .as_bytes(),
        );
        burst.push(b'\n');
        burst.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{}}}\n", id + 5000).as_bytes(),
        );
    }
    s.send(&burst);
    let mut listed = Vec::new();
    let mut refused = Vec::new();
    for _ in 0..2 * PAIRS {
        let r = s.reply();
        let id = r["id"].as_u64().unwrap_or(0);
        if r.get("error").is_some() {
            assert_eq!(r["error"]["code"], -32600, "{r}");
            refused.push(id);
        } else {
            assert_eq!(
                r["result"]["tools"].as_array().map(Vec::len),
                Some(TOOLS.len()),
                "{r}"
            );
            listed.push(id);
        }
    }
    listed.sort();
    refused.sort();
    assert_eq!(listed, (1000..1000 + PAIRS).collect::<Vec<_>>());
    assert_eq!(refused, (6000..6000 + PAIRS).collect::<Vec<_>>());
    s.close();
}

/// `tools/call` with its params left out or its `arguments` not an object was answered "method
/// not found" with only the method's name; an unknown method got its name alone. Both now say
/// what is wrong, with JSON-RPC's codes.
#[test]
fn mcp_params_that_do_not_fit_are_invalid_params_and_unknown_methods_are_named() {
    let mut s = Server::start();
    assert_eq!(s.initialize_and_list_tools(1), TOOLS);
    let message = |s: &mut Server, line: &[u8]| -> (i64, String) {
        s.send_line(line);
        let r = s.reply();
        (
            r["error"]["code"].as_i64().unwrap_or(0),
            r["error"]["message"].as_str().unwrap_or("").to_string(),
        )
    };
    for line in [
        &br#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#[..],
        &br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory_recall","arguments":"deploy"}}"#[..],
        &br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}"#[..],
    ] {
        let (code, text) = message(&mut s, line);
        assert_eq!(code, -32602, "{text}");
        assert!(text.contains("`arguments` (an object)"), "{text}");
    }
    let (code, text) = message(&mut s, br#"{"jsonrpc":"2.0","id":6,"method":"nope/nope"}"#);
    assert_eq!(code, -32601, "{text}");
    assert!(
        text.contains("`nope/nope`") && text.contains("tools/call"),
        "{text}"
    );
    // MCP methods this server does not serve were answered with their name alone.
    for (id, method) in [
        (7, "resources/list"),
        (8, "prompts/list"),
        (9, "resources/read"),
    ] {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"uri": "x"}});
        let (code, text) = message(&mut s, line.to_string().as_bytes());
        assert_eq!(code, -32601, "{text}");
        assert!(
            text.contains(&format!("`{method}` is not served here")) && text.contains("tools only"),
            "{text}"
        );
    }
    // A method of MCP whose params do not fit it was called "no MCP method" (rmcp reads it as
    // a custom one), a notification sent with an id too.
    let (code, text) = message(
        &mut s,
        br#"{"jsonrpc":"2.0","id":10,"method":"server/discover"}"#,
    );
    assert_eq!(code, -32602, "{text}");
    assert!(
        text.contains("the params of `server/discover` do not fit"),
        "{text}"
    );
    for (id, method) in [(11, "completion/complete"), (12, "prompts/get")] {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}});
        let (code, text) = message(&mut s, line.to_string().as_bytes());
        assert_eq!(code, -32601, "{text}");
        assert!(
            text.contains(&format!("`{method}` is not served here")),
            "{text}"
        );
    }
    let (code, text) = message(
        &mut s,
        br#"{"jsonrpc":"2.0","id":13,"method":"notifications/initialized"}"#,
    );
    assert_eq!(code, -32600, "{text}");
    assert!(text.contains("is a notification"), "{text}");
    // A call that fits still works.
    let r = s.rpc(
        7,
        "tools/call",
        json!({"name": "memory_recall", "arguments": {"query": "anything"}}),
    );
    assert!(r.get("result").is_some(), "{r}");
    s.close();
}

/// A client that skipped the handshake got rmcp's "request _meta is missing or has malformed
/// required fields" for every call: true of a call outside a session, but it never said to send
/// `initialize`. A request before `initialize` is answered with the handshake named; `ping`,
/// the handshake after it, and a call that carries its session-less `_meta` are served.
#[test]
fn mcp_requests_before_initialize_are_told_to_initialize_first() {
    let mut s = Server::start();
    for line in [
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#.as_slice(),
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_recall","arguments":{"query":"pool"}}}"#,
    ] {
        s.send_line(line);
        let r = s.reply();
        assert_eq!(r["error"]["code"], -32600, "{r}");
        let message = r["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains("send `initialize` first"), "{r}");
    }
    let ping = s.rpc(3, "ping", json!({}));
    assert_eq!(ping["result"], json!({}), "{ping}");
    assert_eq!(s.initialize_and_list_tools(4), TOOLS);
    s.close();
    // A client without a session: every call carries the protocol in its `_meta`, discovery
    // included.
    let mut s = Server::start();
    let discover = s.rpc(
        2,
        "server/discover",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                         "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    assert!(
        discover["result"]["supportedVersions"].is_array(),
        "{discover}"
    );
    let outside = s.rpc(
        1,
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-06-18",
                         "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    assert_eq!(
        outside["result"]["tools"].as_array().map(Vec::len),
        Some(TOOLS.len()),
        "{outside}"
    );
    s.close();
}

/// Regression: after a call without a session (its `_meta` naming the protocol), `initialize`
/// was answered and every plain request after it, `ping` included, was refused for its missing
/// `_meta` (rmcp stays in that mode); and a client that made only such calls and left got exit 3,
/// "initialisation failed". `initialize` is refused with the reason, and leaving is a clean end.
#[test]
fn mcp_calls_without_a_session_then_initialize_are_told_the_mode() {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2025-06-18",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let mut s = Server::start();
    let called = s.rpc(
        1,
        "tools/call",
        json!({"_meta": meta, "name": "memory_core", "arguments": {}}),
    );
    assert!(called.get("result").is_some(), "{called}");
    let init = s.rpc(
        2,
        "initialize",
        json!({"protocolVersion": "2024-11-05", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}}),
    );
    assert_eq!(init["error"]["code"], -32600, "{init}");
    assert!(
        init["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("start another")),
        "{init}"
    );
    let again = s.rpc(
        3,
        "tools/call",
        json!({"_meta": meta, "name": "memory_core", "arguments": {}}),
    );
    assert!(again.get("result").is_some(), "{again}");
    s.close();
    // A call rmcp refuses (a protocol version it does not speak, a `_meta` key missing) leaves
    // the server waiting for the handshake, which is then served.
    let mut s = Server::start();
    for (id, meta) in [
        (
            1,
            json!({"io.modelcontextprotocol/protocolVersion": "2099-01-01",
                   "io.modelcontextprotocol/clientCapabilities": {}}),
        ),
        (
            2,
            json!({"io.modelcontextprotocol/protocolVersion": "2025-06-18"}),
        ),
    ] {
        let refused = s.rpc(
            id,
            "tools/call",
            json!({"_meta": meta, "name": "memory_core", "arguments": {}}),
        );
        assert!(refused.get("error").is_some(), "{refused}");
    }
    assert_eq!(s.initialize_and_list_tools(3), TOOLS);
    s.close();
}

/// Regression: feedback tied to no question (no memory_recall yet, no `query`) was answered as
/// any other, while the CLI says that only use counts change.
#[test]
fn mcp_feedback_tied_to_no_question_says_so() {
    let mut s = Server::start();
    assert_eq!(s.initialize_and_list_tools(1), TOOLS);
    let text = |r: &Value| {
        assert_ne!(r["result"]["isError"], true, "{r}");
        let t = r["result"]["content"][0]["text"].as_str().unwrap_or("");
        serde_json::from_str::<Value>(t).unwrap_or(Value::Null)
    };
    let args = json!({"id": "okapi", "body": "Okapis have striped legs."});
    let written = text(&s.rpc(
        2,
        "tools/call",
        json!({"name": "memory_write", "arguments": args}),
    ));
    assert_eq!(written["written"], true, "{written}");
    let call = json!({"name": "memory_feedback", "arguments": {"used": ["okapi"]}});
    let untied = text(&s.rpc(3, "tools/call", call.clone()));
    assert_eq!(untied["query"], "", "{untied}");
    assert!(
        untied["warning"]
            .as_str()
            .is_some_and(|w| w.starts_with("tied to no question")),
        "{untied}"
    );
    let recall = json!({"name": "memory_recall", "arguments": {"query": "okapi legs"}});
    text(&s.rpc(4, "tools/call", recall));
    let tied = text(&s.rpc(5, "tools/call", call));
    assert_eq!(tied["query"], "okapi legs", "{tied}");
    assert_eq!(tied.get("warning"), None, "{tied}");
    s.close();
}

/// Regression: an argument of the wrong type was refused without its name ("invalid type:
/// string \"a\", expected a sequence"): the agent had to guess which of its arguments to fix;
/// an unknown (misspelt) argument was ignored.
#[test]
fn mcp_an_argument_of_the_wrong_type_is_named_in_the_tool_error() {
    let mut s = Server::start();
    assert_eq!(s.initialize_and_list_tools(1), TOOLS);
    let cases = [
        (
            "memory_feedback",
            json!({"used": "a"}),
            "argument `used`: invalid type: string",
        ),
        (
            "memory_feedback",
            json!({"used": ["a", 7]}),
            "argument `used[1]`: invalid type: integer",
        ),
        (
            "memory_recall",
            json!({"query": "x", "limit": "five"}),
            "argument `limit`: invalid type: string",
        ),
        (
            "memory_recall",
            json!({"query": "x", "min_score": "high"}),
            "argument `min_score`: invalid type: string",
        ),
        (
            "memory_write",
            json!({"id": "a", "body": "b", "pin": "yes"}),
            "argument `pin`: invalid type: string",
        ),
        (
            "memory_set_importance",
            json!({"node": "a"}),
            "missing argument `importance`",
        ),
    ];
    for (id, (tool, arguments, said)) in (2u64..).zip(cases) {
        let r = s.rpc(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        let text = r["result"]["content"][0]["text"].as_str().unwrap_or("");
        assert_eq!(r["result"]["isError"], true, "{tool}: {r}");
        assert!(text.contains(said), "{tool}: {text}");
        assert!(text.contains("tools/list"), "{tool}: {text}");
    }
    s.close();
}

/// Regression: the tools declare `limit`, `depth`, `budget_tokens` and `importance`
/// as JSON Schema integers, where `5.0` is one, yet `5.0` was refused ("invalid type: floating
/// point"); `budget_tokens` gave no range. A whole float is taken, a fraction is refused.
#[test]
fn mcp_integer_arguments_take_whole_floats_and_state_their_ranges() {
    let mut s = Server::start();
    assert_eq!(s.initialize_and_list_tools(1), TOOLS);
    let call = |s: &mut Server, id: u64, name: &str, arguments: Value| -> (bool, String) {
        let r = s.rpc(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        (
            r["result"]["isError"].as_bool().unwrap_or(true),
            r["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        )
    };
    let (failed, text) = call(
        &mut s,
        3,
        "memory_recall",
        json!({"query": "x", "limit": 5.0, "depth": 1.0}),
    );
    assert!(!failed, "{text}");
    let (failed, text) = call(&mut s, 4, "memory_core", json!({"budget_tokens": 500.0}));
    assert!(!failed, "{text}");
    let (failed, text) = call(
        &mut s,
        5,
        "memory_recall",
        json!({"query": "x", "limit": 5.5}),
    );
    assert!(failed && text.contains("expected a whole number"), "{text}");
    // Past i64 (2^63) and past it below (a float rounded to i64::MIN): named as written, not as
    // a number of another size.
    for (id, limit) in [(7, "9223372036854775808"), (8, "-9223372036854775809")] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"memory_recall","arguments":{{"query":"x","limit":{limit}}}}}}}"#
        );
        s.send_line(line.as_bytes());
        let r = s.reply();
        let text = r["result"]["content"][0]["text"].as_str().unwrap_or("");
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert!(text.contains("too large for any argument"), "{r}");
        assert!(!text.contains("-9223372036854775808"), "{r}");
    }
    let tools = s.rpc(6, "tools/list", json!({}));
    let core = tools["result"]["tools"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["name"] == "memory_core"))
        .cloned()
        .unwrap_or(Value::Null);
    let budget = &core["inputSchema"]["properties"]["budget_tokens"];
    assert!(
        budget["description"]
            .as_str()
            .is_some_and(|d| d.contains("1..200000")),
        "{budget}"
    );
    assert_eq!(budget["type"], json!(["integer", "null"]), "{budget}");
    s.close();
}

/// Regression: a second `initialize` in one session was answered, and changed the protocol
/// version under the replies already given. One process serves one session.
#[test]
fn mcp_a_second_initialize_is_refused() {
    let mut s = Server::start();
    assert_eq!(s.initialize_and_list_tools(1), TOOLS);
    let again = s.rpc(
        3,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "containment", "version": "0"}}),
    );
    assert_eq!(again["error"]["code"], -32600, "{again}");
    let message = again["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("already initialized"), "{again}");
    let ping = s.rpc(4, "ping", json!({}));
    assert_eq!(ping["result"], json!({}), "{ping}");
    s.close();
}

/// Regression: two requests in flight with one id both ran and only one was answered (rmcp keys
/// its answers by id): the client waited forever for the other. Each gets an answer, the
/// second (when the first is still running) a -32600 saying to give each request its own id;
/// an unknown tool's error names the tools.
#[test]
fn mcp_a_reused_id_in_flight_is_answered_and_an_unknown_tool_named() {
    let mut s = Server::start();
    assert_eq!(s.initialize_and_list_tools(1), TOOLS);
    let call = |q: &str| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": "memory_recall", "arguments": {"query": q}}})
        .to_string()
    };
    s.send(format!("{}\n{}\n", call("pool sizing"), call("deploy rollback")).as_bytes());
    let answers = [s.reply(), s.reply()];
    for a in &answers {
        assert_eq!(a["id"], 7, "{a}");
        assert!(
            a.get("result").is_some() || a["error"]["code"] == -32600,
            "answered or refused: {a}"
        );
    }
    assert!(
        answers.iter().any(|a| a.get("result").is_some()),
        "{answers:?}"
    );
    // Answered: the id may be used again.
    let again = s.rpc(7, "ping", json!({}));
    assert_eq!(again["result"], json!({}), "{again}");
    let unknown = s.rpc(
        8,
        "tools/call",
        json!({"name": "memory_search", "arguments": {}}),
    );
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let message = unknown["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains(&TOOLS.join(", ")), "{unknown}");
    s.close();
}

/// Regression: with its output closed (the client stopped reading) the server kept reading
/// requests and carrying them out, `memory_write` included, though no answer could reach
/// anyone. It ends as soon as a reply cannot be written.
#[test]
fn mcp_output_closed_ends_the_server_before_it_reads_more() {
    let (_tmp, memory) = fresh();
    let root = memory.dir().root().to_path_buf();
    drop(memory);
    let mut child = spawn_serve(&root, Stdio::piped());
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "containment", "version": "0"}}});
    writeln!(stdin, "{init}").expect("write");
    let mut line = String::new();
    stdout.read_line(&mut line).expect("initialize answered");
    assert!(line.contains("\"result\""), "{line}");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .expect("write");
    // The server's log, line by line, kept for the end.
    let stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let (log_tx, log_rx) = mpsc::channel();
    let logger = std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = log_tx.send(line);
        }
    });
    let mut log = Vec::new();
    // The client stops reading: the next reply fails to be written.
    drop(stdout);
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"ping"}}"#).expect("write");
    stdin.flush().expect("flush");
    // Once the server has said so (not after a fixed wait a loaded machine may outlast).
    while !log.iter().any(|l: &String| l.contains("MCP output closed")) {
        match log_rx.recv_timeout(REPLY_GUARD) {
            Ok(line) => log.push(line),
            Err(e) => panic!("the server never said its output closed ({e}): {log:?}"),
        }
    }
    let write = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                       "params": {"name": "memory_write",
                                  "arguments": {"id": "after-close", "body": "written after the output closed"}}});
    // The server may be gone already: the write then fails, as it should.
    let _ = writeln!(stdin, "{write}").and_then(|()| stdin.flush());
    let deadline = std::time::Instant::now() + REPLY_GUARD;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the server") {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server still runs with its output closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    logger.join().expect("the log reader");
    log.extend(log_rx.try_iter());
    assert!(status.success(), "{status}: {log:?}");
    assert!(
        !root.join("memory").join("after-close.md").exists(),
        "a request read after the output closed was carried out"
    );
    drop(stdin);
}

/// Regression: every ignored message (an invalid notification, which gets no reply) wrote a
/// line to stderr; a client that never reads stderr filled its pipe and the server stopped
/// mid-write, answering nothing more. The first ones are reported, then one line says the
/// rest are not.
#[test]
fn mcp_ignored_messages_are_reported_a_bounded_number_of_times() {
    let (_tmp, memory) = fresh();
    let root = memory.dir().root().to_path_buf();
    drop(memory);
    let mut s = common::mcp::Server::start_logged(&root);
    for _ in 0..300 {
        s.send_line(r#"{"jsonrpc":"2.0","method":"tools/list","params":5}"#);
    }
    let ping = s.rpc(2, "ping", json!({}));
    assert_eq!(ping["result"], json!({}), "{ping}");
    let (ok, log) = s.finish_with_log();
    assert!(ok, "{log}");
    let reported = log.matches("MCP message ignored").count();
    assert_eq!(
        reported,
        mnemon_cli::mcp::transport::MAX_IGNORED_REPORTS,
        "{log}"
    );
    assert_eq!(
        log.matches("later ones are not reported").count(),
        1,
        "{log}"
    );
}
