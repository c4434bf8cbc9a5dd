//! The MCP server's stdio transport: our [`LineReader`] in front of the MCP service (rmcp), so
//! that every line gets an answer and none stops the server.
//!
//! Three parts, joined by channels:
//! - a reader task reads the input, classifies each line, writes the error replies and hands
//!   well-formed messages to the service;
//! - the service (rmcp) receives them through [`LineTransport`] and sends its replies through it;
//! - one writer task writes every reply, the reader's and the service's, one whole line at a
//!   time, so no two replies ever interleave within a line.
//!
//! Reading happens in its own task rather than in `Transport::receive`, which rmcp polls inside a
//! `select!` and may cancel: a line half read is never lost that way.
//!
//! Requests rmcp would answer without saying why are answered here: params that do not fit a
//! method this server serves (`-32602`, naming the field), a method MCP does not have or one
//! this server does not serve, such as `resources/list` (`-32601`, listing the ones served),
//! and a request before `initialize` that is not a call outside a session (`-32600`, saying to
//! initialize first), a call of a tool this server does not have (`-32602`, listing its tools),
//! and a request whose id is that of one still unanswered (`-32600`: rmcp would run both and
//! drop one answer).

use super::lines::{ErrorReply, Line, LineReader};
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde_json::Value;
use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Bytes asked of the input per read.
const READ_CHUNK_BYTES: usize = 64 * 1024;
/// Messages waiting for the service, and replies waiting for the writer, before their producer
/// waits: the input is read no faster than it is served.
const CHANNEL_MESSAGES: usize = 32;

/// The requests handed to the service and not yet answered. Each gets an id of the
/// transport's own, mapped back to the client's as its answer is sent: rmcp keys its answers by
/// id, so a request reusing the id of one it still runs (refused here) or of one cancelled (whose
/// handler runs on, rmcp dropping only its answer) would get the other's answer.
#[derive(Clone, Default)]
struct InFlight(Arc<Mutex<Ids>>);

#[derive(Default)]
struct Ids {
    /// The last id given to the service.
    last: i64,
    /// The service's id of each client id still in flight.
    to_service: HashMap<RequestId, RequestId>,
    /// The client's id of each service id whose answer is awaited.
    to_client: HashMap<RequestId, RequestId>,
}

impl InFlight {
    fn ids(&self) -> std::sync::MutexGuard<'_, Ids> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The service's id for a request the client sent as `id`; `None` when a request with it
    /// is still being answered.
    fn take(&self, id: &RequestId) -> Option<RequestId> {
        let mut ids = self.ids();
        if ids.to_service.contains_key(id) {
            return None;
        }
        ids.last += 1;
        let service = RequestId::Number(ids.last);
        ids.to_service.insert(id.clone(), service.clone());
        ids.to_client.insert(service.clone(), id.clone());
        Some(service)
    }

    /// The client's id of the request the service answers as `id`, forgotten; `None` when no
    /// answer is awaited (the request was cancelled).
    fn answered(&self, id: &RequestId) -> Option<RequestId> {
        let mut ids = self.ids();
        let client = ids.to_client.remove(id)?;
        ids.to_service.remove(&client);
        Some(client)
    }

    /// The service's id of the client's request `id`, which the client cancels: its id is free
    /// again and its answer not awaited. `None` when it is not in flight.
    fn cancel(&self, id: &RequestId) -> Option<RequestId> {
        let mut ids = self.ids();
        let service = ids.to_service.remove(id)?;
        ids.to_client.remove(&service);
        Some(service)
    }
}

/// The service's side of the transport.
pub struct LineTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    outgoing: mpsc::Sender<Vec<u8>>,
    in_flight: InFlight,
}

impl Transport<RoleServer> for LineTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        mut item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let outgoing = self.outgoing.clone();
        // The client's id put back, and freed before the answer is queued: a client that reuses
        // it once it has read the answer finds it free. The answer of a cancelled request is
        // dropped, as MCP has it.
        let id = match &mut item {
            ServerJsonRpcMessage::Response(r) => Some(&mut r.id),
            ServerJsonRpcMessage::Error(e) => e.id.as_mut(),
            _ => None,
        };
        let wanted = match id {
            Some(id) => self.in_flight.answered(id).map(|client| *id = client),
            None => Some(()),
        };
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        async move {
            if wanted.is_none() {
                return Ok(());
            }
            let line = line.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            outgoing
                .send(line)
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the output is closed"))
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        let msg = self.incoming.recv().await?;
        // The output is closed (the writer is gone): requests the reader queued before it knew
        // would still change the memory, their answers lost.
        (!self.outgoing.is_closed()).then_some(msg)
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.incoming.close();
        Ok(())
    }
}

/// The running reader and writer tasks behind a [`LineTransport`].
pub struct Tasks {
    reader: tokio::task::JoinHandle<()>,
    writer: tokio::task::JoinHandle<()>,
    sessionless: Arc<AtomicBool>,
}

impl Tasks {
    /// Whether the client made calls without a session (no `initialize`): its leaving then ends
    /// the service before any handshake, which is no failure.
    pub fn served_sessionless(&self) -> bool {
        self.sessionless.load(Ordering::Relaxed)
    }

    /// Once the service has ended: stop reading, then let the writer write what is queued.
    pub async fn finish(self) {
        self.reader.abort();
        let _ = self.reader.await;
        let _ = self.writer.await;
    }
}

/// Start the reader and writer tasks over `read` and `write`; the service gets the transport.
/// `tools` names the tools the service has. Must run inside a Tokio runtime.
pub fn start<R, W>(read: R, write: W, tools: Vec<String>) -> (LineTransport, Tasks)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_service, incoming) = mpsc::channel(CHANNEL_MESSAGES);
    let (outgoing, to_writer) = mpsc::channel(CHANNEL_MESSAGES);
    let sessionless = Arc::new(AtomicBool::new(false));
    let in_flight = InFlight::default();
    let session = Session {
        sessionless: sessionless.clone(),
        in_flight: in_flight.clone(),
        tools,
        ..Session::default()
    };
    let writer = tokio::spawn(write_loop(write, to_writer));
    let reader = tokio::spawn(read_loop(read, to_service, outgoing.clone(), session));
    (
        LineTransport {
            incoming,
            outgoing,
            in_flight,
        },
        Tasks {
            reader,
            writer,
            sessionless,
        },
    )
}

async fn write_loop<W: AsyncWrite + Unpin>(mut write: W, mut lines: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        if let Err(e) = async {
            write.write_all(&line).await?;
            write.flush().await
        }
        .await
        {
            // The client is gone: nothing more can be answered. Dropping the receiver makes
            // every later send fail and stops the reader (`read_loop`), which ends the service:
            // a request read now would still change the memory, its answer lost.
            errln!("mnemon: MCP output closed: {e}");
            return;
        }
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    mut read: R,
    to_service: mpsc::Sender<ClientJsonRpcMessage>,
    replies: mpsc::Sender<Vec<u8>>,
    mut session: Session,
) {
    let mut reader = LineReader::new();
    let mut chunk = vec![0u8; READ_CHUNK_BYTES];
    let mut lines = Vec::new();
    loop {
        let read = tokio::select! {
            read = read.read(&mut chunk) => read,
            // The writer is gone (the output closed): nothing read now could be answered.
            () = replies.closed() => return,
        };
        let n = match read {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                errln!("mnemon: MCP input failed: {e}");
                break;
            }
        };
        reader.feed(&chunk[..n], &mut lines);
        for line in lines.drain(..) {
            if replies.is_closed() || !session.dispatch(line, &to_service, &replies).await {
                return;
            }
        }
    }
    if let Some(line) = reader.finish() {
        session.dispatch(line, &to_service, &replies).await;
    }
}

/// Messages ignored (not requests, so nothing can be answered) that are each reported on
/// stderr; later ones are counted in one last line. A client that never reads stderr would
/// otherwise fill its pipe with them and stop the server mid-write.
pub const MAX_IGNORED_REPORTS: usize = 64;

/// What the reader knows of the session.
#[derive(Default)]
struct Session {
    /// Ignored messages reported on stderr so far.
    ignored_reports: usize,
    /// An `initialize` request has been handed to the service.
    initialize_sent: bool,
    /// A call without a session (its `_meta` naming the protocol) has been handed to the
    /// service before any `initialize`: the service then answers such calls only.
    sessionless: Arc<AtomicBool>,
    /// Ids of requests handed to the service and not yet answered.
    in_flight: InFlight,
    /// The tools the service has.
    tools: Vec<String>,
}

impl Session {
    /// Act on one line; false once the service or the output is gone.
    async fn dispatch(
        &mut self,
        line: Line,
        to_service: &mpsc::Sender<ClientJsonRpcMessage>,
        replies: &mpsc::Sender<Vec<u8>>,
    ) -> bool {
        let reply = match line {
            Line::Blank => return true,
            Line::Dropped(why) => {
                self.report_ignored(&why);
                return true;
            }
            Line::Error(reply) => reply,
            Line::Message(v) => match self.typed(v) {
                Ok(None) => return true,
                Ok(Some(msg)) => return to_service.send(msg).await.is_ok(),
                Err(reply) => reply,
            },
        };
        replies.send(reply.to_line()).await.is_ok()
    }

    /// Say on stderr why a message was ignored, up to [`MAX_IGNORED_REPORTS`] of them.
    fn report_ignored(&mut self, why: &dyn std::fmt::Display) {
        self.ignored_reports = self.ignored_reports.saturating_add(1);
        if self.ignored_reports <= MAX_IGNORED_REPORTS {
            errln!("mnemon: MCP message ignored: {why}");
        }
        if self.ignored_reports == MAX_IGNORED_REPORTS {
            errln!(
                "mnemon: {MAX_IGNORED_REPORTS} MCP messages ignored; later ones are not reported"
            );
        }
    }

    /// The service's type of a message in a valid envelope; `Ok(None)` when it is to be ignored,
    /// an error reply when a request's parameters do not fit its method.
    fn typed(&mut self, v: Value) -> Result<Option<ClientJsonRpcMessage>, ErrorReply> {
        let id = v.get("id").cloned();
        let is_request = v.get("method").is_some() && id.is_some();
        if let (Some(id), true) = (id.clone(), is_request)
            && let Some(why) = params_misfit(&v)
        {
            return Err(ErrorReply::invalid_params(id, why));
        }
        let params_meta = v.pointer("/params/_meta").cloned();
        let method = v.get("method").and_then(Value::as_str).map(str::to_string);
        let msg = match serde_json::from_value::<ClientJsonRpcMessage>(v) {
            Ok(msg) => msg,
            Err(e) => {
                return match id {
                    Some(id) if is_request => Err(ErrorReply::invalid_params(id, e)),
                    _ => {
                        self.report_ignored(&e);
                        Ok(None)
                    }
                };
            }
        };
        match &msg {
            ClientJsonRpcMessage::Request(r) => {
                let served = matches!(
                    r.request,
                    ClientRequest::InitializeRequest(_)
                        | ClientRequest::DiscoverRequest(_)
                        | ClientRequest::PingRequest(_)
                        | ClientRequest::ListToolsRequest(_)
                        | ClientRequest::CallToolRequest(_)
                );
                if !served && let Some(id) = id.clone() {
                    // A method of MCP whose params do not fit it is no custom method: rmcp
                    // reads it as one when its params fail to parse.
                    if let ClientRequest::CustomRequest(c) = &r.request
                        && let Some(reply) = misfit_mcp_method(id.clone(), &c.method)
                    {
                        return Err(reply);
                    }
                    // rmcp answers an MCP method this server does not serve (resources,
                    // prompts, ...) with the method's name alone.
                    let (method, what) = match &r.request {
                        ClientRequest::CustomRequest(c) => (c.method.clone(), "is no MCP method"),
                        _ => (method.unwrap_or_default(), NOT_SERVED),
                    };
                    return Err(not_served(id, &method, what));
                }
                if matches!(r.request, ClientRequest::InitializeRequest(_)) {
                    if self.sessionless.load(Ordering::Relaxed)
                        && let Some(id) = id
                    {
                        // rmcp keeps serving calls without a session after one: the session
                        // would answer `initialize` and then refuse every plain request.
                        return Err(ErrorReply::invalid_request(
                            id,
                            "this server has answered calls without a session (their `_meta` \
                             named the protocol): one `mnemon serve` process serves either such \
                             calls or one session; start another for a session",
                        ));
                    }
                    if self.initialize_sent
                        && let Some(id) = id
                    {
                        // A second handshake would change the session's protocol version under
                        // the replies already given.
                        return Err(ErrorReply::invalid_request(
                            id,
                            "this session is already initialized: one `mnemon serve` process \
                             serves one session; start another for a new one",
                        ));
                    }
                    self.initialize_sent = true;
                } else if !self.initialize_sent
                    && served_without_a_session(&r.request)
                    && !matches!(
                        r.request,
                        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_)
                    )
                {
                    self.sessionless.store(true, Ordering::Relaxed);
                } else if !self.initialize_sent
                    && !matches!(
                        r.request,
                        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_)
                    )
                    && !names_its_protocol(&params_meta)
                    && let Some(id) = id
                {
                    // rmcp answers such a request with the `_meta` fields of a session-less
                    // call it lacks; the client that forgot the handshake needs to hear of it.
                    return Err(ErrorReply::invalid_request(
                        id,
                        "the session has not been initialized: send `initialize` first (the MCP \
                         handshake), or give this request's `_meta` the \
                         `io.modelcontextprotocol/protocolVersion` and \
                         `io.modelcontextprotocol/clientCapabilities` of a call without a session",
                    ));
                }
            }
            // The service ends the session on a notification or response before `initialize`
            // (rmcp's handshake): one such line must not stop the server.
            _ if !self.initialize_sent => {
                self.report_ignored(&"a message before `initialize`");
                return Ok(None);
            }
            _ => {}
        }
        let mut msg = msg;
        if let ClientJsonRpcMessage::Notification(n) = &mut msg
            && let ClientNotification::CancelledNotification(c) = &mut n.notification
            && let Some(id) = &mut c.params.request_id
        {
            // Told to the service by its own id; one for a request not in flight (answered
            // already, or never sent) has nothing to cancel.
            match self.in_flight.cancel(id) {
                Some(service) => *id = service,
                None => return Ok(None),
            }
        }
        if let ClientJsonRpcMessage::Request(r) = &mut msg {
            let id = || serde_json::to_value(&r.id).unwrap_or(Value::Null);
            if let ClientRequest::CallToolRequest(call) = &r.request
                && !self.tools.iter().any(|t| *t == call.params.name)
            {
                // rmcp says "tool not found" and no more: the caller needs the names.
                return Err(ErrorReply::invalid_params(
                    id(),
                    format!(
                        "no tool `{}` here; this server's tools are {} (tools/list describes \
                         them)",
                        call.params.name,
                        self.tools.join(", ")
                    ),
                ));
            }
            match self.in_flight.take(&r.id) {
                Some(service) => r.id = service,
                None => {
                    return Err(ErrorReply::invalid_request(
                        id(),
                        "a request with this id is still being answered: give every request \
                         in flight its own id (JSON-RPC), or wait for the answer before reusing \
                         it",
                    ));
                }
            }
        }
        Ok(Some(msg))
    }
}

/// Whether rmcp serves `request` as a call without a session: its `_meta` holds every key such
/// a call needs, and names a protocol version the server speaks (rmcp's own test, else it
/// answers with an error and still waits for `initialize`).
fn served_without_a_session(request: &ClientRequest) -> bool {
    use rmcp::model::{GetMeta, ProtocolVersion};
    let meta = request.get_meta();
    meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
        .is_empty()
        && meta
            .protocol_version()
            .is_some_and(|v| ProtocolVersion::KNOWN_VERSIONS.contains(&v))
}

/// Whether a request's `_meta` names the protocol version, as a call outside a session must.
fn names_its_protocol(meta: &Option<Value>) -> bool {
    meta.as_ref()
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .is_some()
}

/// Why a request to a method this server answers carries params that do not fit it, if they do
/// not. rmcp reads such a request as one of an unknown method and answers "method not found";
/// JSON-RPC calls it invalid params (`-32602`), and the client needs to know which field.
fn params_misfit(v: &Value) -> Option<String> {
    use rmcp::model::{CallToolRequestParams, InitializeRequestParams};
    let method = v.get("method")?.as_str()?;
    let params = v.get("params").cloned().unwrap_or(Value::Null);
    let fit = match method {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).map(drop),
        "initialize" => serde_json::from_value::<InitializeRequestParams>(params).map(drop),
        "tools/list" | "ping" => {
            return (!params.is_null() && !params.is_object())
                .then(|| format!("the params of `{method}` must be an object or left out"));
        }
        _ => return None,
    };
    fit.err().map(|e| match method {
        "tools/call" => format!(
            "`tools/call` takes an object with `name` (the tool, text) and `arguments` (an \
             object): {e}"
        ),
        _ => format!("the params of `{method}` do not fit it: {e}"),
    })
}

/// The requests of MCP this server serves, and the others of the protocol.
const SERVED_METHODS: [&str; 5] = [
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "tools/call",
];
const OTHER_MCP_METHODS: [&str; 9] = [
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The reply to a request naming a method of MCP that rmcp could not read as that method (its
/// params do not fit it), or to a notification sent with an id; `None` for a method MCP does
/// not have.
fn misfit_mcp_method(id: Value, method: &str) -> Option<ErrorReply> {
    if method.starts_with("notifications/") {
        return Some(ErrorReply::invalid_request(
            id,
            format!("`{method}` is a notification: send it without an `id`, and expect no reply"),
        ));
    }
    if SERVED_METHODS.contains(&method) {
        return Some(ErrorReply::invalid_params(
            id,
            format!(
                "the params of `{method}` do not fit the method: give them as the MCP \
                 specification defines them"
            ),
        ));
    }
    OTHER_MCP_METHODS
        .contains(&method)
        .then(|| not_served(id, method, NOT_SERVED))
}

/// Why a method of MCP is not answered here.
const NOT_SERVED: &str =
    "is not served here (this server has tools only, no resources, prompts or completions)";

/// The reply to a request for `method`, which `what` says is not answered here.
fn not_served(id: Value, method: &str, what: &str) -> ErrorReply {
    ErrorReply::method_not_found(
        id,
        format!(
            "`{method}` {what}; this server answers initialize, server/discover, ping, \
             tools/list and tools/call"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::lines::{INVALID_PARAMS, INVALID_REQUEST};
    use serde_json::json;

    /// A session past its handshake, serving `tools`.
    fn initialized(tools: &[&str]) -> Session {
        let mut session = Session {
            tools: tools.iter().map(|t| t.to_string()).collect(),
            ..Session::default()
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "0"}}});
        let init = service_id(&mut session, init);
        assert_eq!(
            session.in_flight.answered(&init),
            Some(RequestId::Number(0))
        );
        session
    }

    /// The id the service gets for the request `v`, which the session must hand on.
    fn service_id(s: &mut Session, v: Value) -> RequestId {
        match s.typed(v) {
            Ok(Some(ClientJsonRpcMessage::Request(r))) => r.id,
            other => panic!("not handed on as a request: {other:?}"),
        }
    }

    /// An output that fails every write, as a pipe whose reader has gone.
    struct ClosedOutput;

    impl AsyncWrite for ClosedOutput {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            _: &[u8],
        ) -> std::task::Poll<io::Result<usize>> {
            std::task::Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()))
        }
        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    /// Regression: requests the reader had queued for the service when the output closed
    /// (up to 32) were still carried out, writes included, though no answer could be written.
    #[tokio::test]
    async fn requests_queued_when_the_output_closes_are_not_served() {
        let (mut client, input) = tokio::io::duplex(1 << 16);
        let (mut transport, tasks) = start(input, ClosedOutput, vec!["memory_write".into()]);
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "0"}}});
        // The initialize is queued for the service at once; the line after it is answered by
        // the reader itself, a write that fails and closes the output.
        let mut lines = format!("{init}\nnot json\n");
        for id in 1..=3 {
            lines += &format!("{}\n", call(json!(id), "memory_write"));
        }
        client.write_all(lines.as_bytes()).await.expect("write");
        transport.outgoing.closed().await;
        assert!(transport.receive().await.is_none());
        drop(transport);
        tasks.finish().await;
    }

    fn call(id: Value, tool: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": tool, "arguments": {}}})
    }

    /// Regression: two requests in flight with one id both ran and one answer was dropped
    /// (rmcp keys its answers by id). The second is refused, and the id is free again once
    /// the first is answered or cancelled.
    #[test]
    fn a_request_reusing_an_unanswered_id_is_refused_until_it_is_answered() {
        let mut s = initialized(&["memory_recall"]);
        let first = service_id(&mut s, call(json!(7), "memory_recall"));
        let refused = s.typed(call(json!(7), "memory_recall")).err();
        assert_eq!(refused.as_ref().map(|r| r.code), Some(INVALID_REQUEST));
        assert_eq!(refused.as_ref().map(|r| r.id.clone()), Some(json!(7)));
        assert!(
            refused
                .as_ref()
                .is_some_and(|r| r.message.contains("still being answered")),
            "{refused:?}"
        );
        // A string id "7" is another id, and the service knows each by an id of its own.
        let text = service_id(&mut s, call(json!("7"), "memory_recall"));
        assert_ne!(text, first);
        assert_eq!(s.in_flight.answered(&first), Some(RequestId::Number(7)));
        // Answered: free again.
        let again = service_id(&mut s, call(json!(7), "memory_recall"));
        assert_ne!(again, first);
        assert_eq!(
            s.in_flight.answered(&text),
            Some(RequestId::String("7".into()))
        );
    }

    /// Regression (found in review): a request cancelled and then sent again with its id got
    /// the cancelled one's answer, whose handler rmcp lets run on. The cancel reaches the
    /// service by the service's id, the request sent again gets another, and the cancelled
    /// one's answer is not awaited (dropped); a cancel for a request not in flight is dropped.
    #[test]
    fn a_cancelled_id_sent_again_gets_its_own_answer() {
        let mut s = initialized(&["memory_recall"]);
        let cancelled = service_id(&mut s, call(json!(7), "memory_recall"));
        let cancel = |id: Value| {
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": id}})
        };
        match s.typed(cancel(json!(7))) {
            Ok(Some(ClientJsonRpcMessage::Notification(n))) => match n.notification {
                ClientNotification::CancelledNotification(c) => {
                    assert_eq!(c.params.request_id, Some(cancelled.clone()));
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        let resent = service_id(&mut s, call(json!(7), "memory_recall"));
        assert_ne!(resent, cancelled);
        assert_eq!(s.in_flight.answered(&cancelled), None, "not awaited");
        assert_eq!(s.in_flight.answered(&resent), Some(RequestId::Number(7)));
        assert!(matches!(s.typed(cancel(json!(7))), Ok(None)));
        assert!(matches!(s.typed(cancel(json!(99))), Ok(None)));
    }

    /// Regression: a call of a tool the server lacks was answered "tool not found", naming no
    /// tool the caller could use instead.
    #[test]
    fn a_call_of_an_unknown_tool_lists_the_tools() {
        let mut s = initialized(&["memory_core", "memory_recall"]);
        let refused = s.typed(call(json!(3), "memory_search")).err();
        assert_eq!(refused.as_ref().map(|r| r.code), Some(INVALID_PARAMS));
        let message = refused.map(|r| r.message).unwrap_or_default();
        assert!(message.contains("`memory_search`"), "{message}");
        assert!(message.contains("memory_core, memory_recall"), "{message}");
        // Refused before its id was taken: the id is free for the next request.
        service_id(&mut s, call(json!(3), "memory_core"));
    }
}
