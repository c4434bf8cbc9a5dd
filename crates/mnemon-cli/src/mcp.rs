//! `mnemon serve`: the memory as an MCP server over stdio (the official Rust SDK, rmcp). One
//! server process is one session. stdout is the protocol; logs go to stderr.
//!
//! Tools: `memory_recall`, `memory_feedback`, `memory_set_importance`, `memory_core`,
//! `memory_show`, `memory_write`. Bad arguments
//! come back as tool errors (`isError: true`) whose text says what to fix. Malformed lines are
//! answered with JSON-RPC errors before the MCP service sees them ([`lines`]).

use crate::live::LiveMemory;
use arguments::Parameters;
use mnemon::args;
use mnemon::recall::{Query, RecallLayout};
use mnemon::{OnDuplicate, WriteRequest};
use rmcp::handler::server::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use std::sync::Arc;

pub mod arguments;
pub mod lines;
pub mod transport;

/// Arguments of `memory_recall`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// The question or keywords (natural language is fine).
    #[serde(default)]
    pub query: Option<String>,
    /// Note ids to start from; their neighbourhood is returned.
    #[serde(default)]
    pub anchors: Option<Vec<String>>,
    /// Hops over links from the direct hits ([`args::DEPTH`]).
    #[serde(default)]
    #[schemars(description = format!(
        "Hops over links from the direct hits ({}..{}, default {}). Anchors at depth 0 fetch \
         those notes, which counts as a use of them.",
        args::DEPTH.min, args::DEPTH.max, args::DEFAULT_DEPTH
    ))]
    #[serde(deserialize_with = "whole::optional")]
    pub depth: Option<i64>,
    /// Results wanted ([`args::LIMIT`]).
    #[serde(default)]
    #[schemars(description = format!(
        "Results wanted ({}..{}, default {}).",
        args::LIMIT.min, args::LIMIT.max, args::DEFAULT_LIMIT
    ))]
    #[serde(deserialize_with = "whole::optional")]
    pub limit: Option<i64>,
    /// Drop results scoring below this.
    #[serde(default)]
    pub min_score: Option<f64>,
}

/// Integer arguments as JSON Schema has integers: `5` and `5.0` alike (a client that holds
/// numbers as floats sends the latter); `5.5` is refused with the type expected, and a whole
/// number past what a float holds exactly (2^53: JSON's integers past i64 arrive as floats,
/// rounded) as too large for any argument, named as it was written.
mod whole {
    use serde::{Deserialize, Deserializer, de::Error};

    /// The largest whole float taken: every whole number up to it is exact.
    const EXACT: f64 = 9_007_199_254_740_992.0;

    fn of<'de, D: Deserializer<'de>>(v: serde_json::Number) -> Result<i64, D::Error> {
        if let Some(i) = v.as_i64() {
            return Ok(i);
        }
        match v.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() <= EXACT => Ok(f as i64),
            Some(f) if f.fract() == 0.0 || v.is_u64() => Err(D::Error::custom(format!(
                "invalid value: {v}, too large for any argument: expected a small whole number"
            ))),
            _ => Err(D::Error::custom(format!(
                "invalid value: {v}, expected a whole number"
            ))),
        }
    }

    pub fn required<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        of::<D>(serde_json::Number::deserialize(d)?)
    }

    pub fn optional<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        Option::<serde_json::Number>::deserialize(d)?
            .map(of::<D>)
            .transpose()
    }
}

/// Arguments of `memory_set_importance`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportanceArgs {
    /// The note id.
    pub node: String,
    /// From a little to always relevant ([`args::IMPORTANCE`]).
    #[schemars(description = format!(
        "{} (a little) to {} (always relevant).",
        args::IMPORTANCE.min, args::IMPORTANCE.max
    ))]
    #[serde(deserialize_with = "whole::required")]
    pub importance: i64,
    /// Free-form tags.
    #[schemars(description = format!(
        "Free-form tags (at most {}, each at most {} bytes, with the note at most {} bytes).",
        args::MAX_IMPORTANCE_TAGS, args::MAX_IMPORTANCE_TEXT_BYTES, args::MAX_IMPORTANCE_TOTAL_BYTES
    ))]
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// Why it matters.
    #[schemars(description = format!(
        "Why it matters (at most {} bytes).",
        args::MAX_IMPORTANCE_TEXT_BYTES
    ))]
    #[serde(default)]
    pub note: Option<String>,
}

/// Arguments of `memory_feedback`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackArgs {
    /// Ids of recalled notes you used in your answer or work.
    pub used: Vec<String>,
    /// Ids of recalled notes that were wrong or misleading for the question.
    #[serde(default)]
    pub wrong: Option<Vec<String>>,
    /// The question the notes were recalled for (default: this session's last memory_recall).
    #[serde(default)]
    pub query: Option<String>,
}

/// Arguments of `memory_core`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoreArgs {
    /// Token budget for the rendered view ([`args::BUDGET_TOKENS`]).
    #[serde(default)]
    #[schemars(description = format!(
        "Token budget for the rendered view ({}..{}, default {}).",
        args::BUDGET_TOKENS.min, args::BUDGET_TOKENS.max, args::DEFAULT_BUDGET_TOKENS
    ))]
    #[serde(deserialize_with = "whole::optional")]
    pub budget_tokens: Option<i64>,
}

/// Arguments of `memory_show`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowArgs {
    /// The note id.
    pub node: String,
}

/// Arguments of `memory_write`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// The note's id: its path below memory/ without `.md`, `/` between folders (for example
    /// `decisions/db-pool-size`). Short, lowercase, words joined by `-`.
    pub id: String,
    /// The note's text in Markdown, without a `---` frontmatter block (pass the fields below
    /// instead). Link other notes with `[[id]]`.
    pub body: String,
    /// A short title.
    #[serde(default)]
    pub name: Option<String>,
    /// One line saying what the note is for (recall shows it).
    #[serde(default)]
    pub description: Option<String>,
    /// project (decisions, incidents, how things work), feedback (what the user corrected or
    /// asked for), user (who the user is, what they prefer), reference (pointers to outside
    /// material) or index (a note listing other notes).
    #[serde(default, rename = "type")]
    pub note_type: Option<String>,
    /// Free-form tags.
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// Ids of related notes.
    #[serde(default)]
    pub related: Option<Vec<String>>,
    /// Ids of the notes this one replaces (they then rank below it).
    #[serde(default)]
    pub supersedes: Option<Vec<String>>,
    /// Ids of notes this one disagrees with.
    #[serde(default)]
    pub contradicts: Option<Vec<String>>,
    /// Keep the note in the core view (memory_core): true pins it, false unpins it; left out,
    /// a replacement keeps what the note had.
    #[serde(default)]
    pub pin: Option<bool>,
    /// Required to replace a note that exists: the `sha256` memory_show returned for it. Leave
    /// it out to create a new note.
    #[serde(default)]
    pub expected_sha256: Option<String>,
    /// "refuse" (default): refuse a note that nearly duplicates another one; "create": write it
    /// anyway because it is truly distinct.
    #[serde(default)]
    pub on_duplicate: Option<String>,
}

/// The library's request from `memory_write`'s arguments (a bad type or on_duplicate is an
/// error naming the values allowed).
fn write_request(a: WriteArgs) -> mnemon::Result<WriteRequest> {
    let bad = |id: &str, reason| mnemon::Error::Write {
        id: id.to_string(),
        reason,
    };
    let note_type = match a.note_type.as_deref() {
        None => None,
        Some(t) => mnemon::parse_note_type(t).map_err(|r| bad(&a.id, r))?,
    };
    let on_duplicate = match a.on_duplicate.as_deref() {
        None => OnDuplicate::default(),
        Some(s) => OnDuplicate::parse(s).map_err(|r| bad(&a.id, r))?,
    };
    Ok(WriteRequest {
        name: a.name,
        description: a.description,
        note_type,
        tags: a.tags.unwrap_or_default(),
        related: a.related.unwrap_or_default(),
        supersedes: a.supersedes.unwrap_or_default(),
        contradicts: a.contradicts.unwrap_or_default(),
        pin: a.pin,
        expected_sha256: a.expected_sha256,
        on_duplicate,
        ..WriteRequest::new(a.id, a.body)
    })
}

/// The MCP server.
#[derive(Clone)]
pub struct MemoryServer {
    memory: Arc<LiveMemory>,
    tool_router: ToolRouter<MemoryServer>,
}

/// What a recall answer says when this server may only read the index and `stale` notes
/// changed since it was written: the agent reads answers, not the server's stderr.
fn stale_warning(stale: usize) -> Option<String> {
    let (notes, they) = match stale {
        0 => return None,
        1 => ("note", "it is"),
        _ => ("notes", "they are"),
    };
    Some(format!(
        "this server may only read the index, and {stale} {notes} changed since it was written: \
         {they} answered as indexed (possibly out of date) until `mnemon index` runs where the \
         index is writable; memory_show of such a note says it changed"
    ))
}

fn tool_error(msg: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(msg.into())])
}

fn json_result(v: &serde_json::Value) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(v.to_string())])
}

/// An argument the agent may leave out: `default` then, else `range`'s check of it.
fn optional<T: TryFrom<i64>>(v: Option<i64>, range: args::Range, default: T) -> mnemon::Result<T> {
    v.map_or(Ok(default), |v| range.parse(v))
}

/// The query `memory_recall`'s arguments ask (left-out arguments take the library's defaults).
fn recall_query(a: RecallArgs) -> mnemon::Result<Query> {
    Ok(Query {
        text: a.query.unwrap_or_default(),
        anchors: a.anchors.unwrap_or_default(),
        depth: optional(a.depth, args::DEPTH, args::DEFAULT_DEPTH)?,
        limit: optional(a.limit, args::LIMIT, args::DEFAULT_LIMIT)?,
        min_score: a
            .min_score
            .map_or(Ok(args::DEFAULT_MIN_SCORE), args::min_score)?,
        caller: "mcp".into(),
        record: true,
    })
}

#[tool_router]
impl MemoryServer {
    /// A server over an open memory (healed when its index store turns out damaged).
    pub fn new(memory: Arc<LiveMemory>) -> Self {
        MemoryServer {
            memory,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "memory_recall",
        description = "Recall what this project's memory knows about a question: call it at the start of a task and whenever the user mentions a topic, system, incident or preference that may have history. Give `query` (natural language or keywords), or `anchors` (note ids you already have) to explore around them, or both. Returns the most relevant notes with id, name, description, score, source (direct / neighbor / co_occur), the trail of links that reached each note, and a short excerpt; a note a newer note replaces carries `superseded_by` (trust the newer note, which ranks above it unless the question asks about the old one) and notes that disagree carry `contradicts` (weigh them together); an empty list means nothing relevant is remembered. After using the results, call memory_feedback with the ids that helped."
    )]
    async fn memory_recall(&self, Parameters(a): Parameters<RecallArgs>) -> CallToolResult {
        self.memory.first_index_done().await;
        let recalled = recall_query(a)
            .and_then(|q| self.memory.with(|m| Ok((m.recall(&q)?, m.stale_notes()))));
        match recalled {
            Ok((r, stale)) => {
                let mut v = serde_json::to_value(r.json(RecallLayout::Mcp)).unwrap_or_default();
                if let (Some(o), Some(warning)) = (v.as_object_mut(), stale_warning(stale)) {
                    o.insert("warning".into(), warning.into());
                }
                json_result(&v)
            }
            Err(e) => tool_error(e.to_string()),
        }
    }

    #[tool(
        name = "memory_feedback",
        description = "Tell the memory which recalled notes you actually used (and, optionally, which were wrong) after a memory_recall. Call it once per answered question, after you have read the results and done the work: `used` = ids of the notes that helped, `wrong` = ids that were misleading or stale for this question, `query` = the question (omit it to mean this session's last memory_recall). Later questions worded like this one then find the used notes first, even in other words, and the wrong ones sink; nothing else reinforces ranking (notes merely returned never climb). Skip it when no note helped. The answer echoes the question the verdicts are recorded for: `query` empty means none was known (no `query` given and no memory_recall earlier in this session), so only the notes' use counts changed; give `query` to tie them to a question."
    )]
    async fn memory_feedback(&self, Parameters(a): Parameters<FeedbackArgs>) -> CallToolResult {
        self.memory.first_index_done().await;
        let wrong = a.wrong.unwrap_or_default();
        match self
            .memory
            .with(|m| m.feedback(&a.used, &wrong, a.query.as_deref()))
        {
            Ok(r) => {
                let mut v = serde_json::to_value(&r).unwrap_or_default();
                if let (Some(o), true) = (v.as_object_mut(), r.query.is_empty()) {
                    // Said as the CLI says it: the agent reads answers, not the server's stderr.
                    o.insert(
                        "warning".into(),
                        "tied to no question (no memory_recall in this session yet, and no \
                         `query` given): only the notes' use counts change; pass `query` to \
                         teach which question they answer"
                            .into(),
                    );
                }
                json_result(&v)
            }
            Err(e) => tool_error(e.to_string()),
        }
    }

    #[tool(
        name = "memory_set_importance",
        description = format!("Mark a note as important ({}..{}) so it ranks higher in every later recall. Use it for strong user preferences, recurring concerns, and incidents that must be remembered; not for routine notes. Its only effect is one recorded ImportanceTag event (the latest mark wins).", args::IMPORTANCE.min, args::IMPORTANCE.max)
    )]
    async fn memory_set_importance(
        &self,
        Parameters(a): Parameters<ImportanceArgs>,
    ) -> CallToolResult {
        self.memory.first_index_done().await;
        let tags = a.tags.unwrap_or_default();
        let note = a.note.unwrap_or_default();
        match args::IMPORTANCE.parse(a.importance).and_then(|importance| {
            self.memory.with(|m| {
                m.set_importance(&a.node, importance, &tags, &note)?;
                m.stats(&a.node)
            })
        }) {
            Ok(s) => json_result(&serde_json::to_value(&s).unwrap_or_default()),
            Err(e) => tool_error(e.to_string()),
        }
    }

    #[tool(
        name = "memory_core",
        description = format!("The core memory to keep in context: pinned notes and notes marked important, rendered as text into a token budget (default {}). Call it once at the start of a session. Returns the text, the tokens used, and the ids that did not fit (recall them when needed).", args::DEFAULT_BUDGET_TOKENS)
    )]
    async fn memory_core(&self, Parameters(a): Parameters<CoreArgs>) -> CallToolResult {
        self.memory.first_index_done().await;
        match optional(
            a.budget_tokens,
            args::BUDGET_TOKENS,
            args::DEFAULT_BUDGET_TOKENS,
        )
        .and_then(|budget| self.memory.with(|m| m.core(budget)))
        {
            Ok(v) => json_result(&serde_json::to_value(&v).unwrap_or_default()),
            Err(e) => tool_error(e.to_string()),
        }
    }

    #[tool(
        name = "memory_show",
        description = "Show one note by id: its name, type, description, tags, excerpt, and its links in both directions (with kind and provenance), the notes that replace it (`superseded_by`), the notes it replaces (`supersedes`), the notes it disagrees with (`contradicts`), and `sha256`, the hash of the note file as it is now: pass it as `expected_sha256` to memory_write to update the note. Use it to follow up on a recalled note, and before updating one."
    )]
    async fn memory_show(&self, Parameters(a): Parameters<ShowArgs>) -> CallToolResult {
        self.memory.first_index_done().await;
        match self.memory.with(|m| m.show(&a.node)) {
            Ok(v) => json_result(&serde_json::to_value(&v).unwrap_or_default()),
            Err(e) => tool_error(e.to_string()),
        }
    }

    #[tool(
        name = "memory_write",
        description = "Save something worth remembering as a note in this project's memory, for later sessions (and other agents) to recall. Write durable knowledge: decisions and their reasons, facts about the project and its systems, the user's preferences and corrections, incidents and how they were fixed; never chit-chat, transient task state or what the memory already says. First call memory_recall on the topic: if a note already covers it, update that note instead of writing a new one (memory_show it, then memory_write the same `id` with the whole new text and `expected_sha256` set to the `sha256` memory_show returned; the body is replaced whole; frontmatter fields you leave out keep their values, a field you give replaces its value). A new note takes a new `id` (a short path like `decisions/db-pool-size`) and no expected_sha256. The note is indexed at once. The result says `written` true or false; when false, `refused` says why and `message` what to do: `exists` (the id is taken: show it and pass its sha256, or choose another id), `stale` (the note changed since you read it: show it again, merge, retry with the new sha256), `missing` (the note you meant to update is gone), `near_duplicate` (`near_duplicates` names notes saying nearly the same: update that note instead, or if yours replaces it write again with `supersedes: [its id]`, or with `on_duplicate: \"create\"` only if the notes are truly distinct). `likely_predecessors` names older notes yours may replace: if it does, write again adding them to `supersedes`."
    )]
    async fn memory_write(&self, Parameters(a): Parameters<WriteArgs>) -> CallToolResult {
        self.memory.first_index_done().await;
        match write_request(a).and_then(|req| self.write_note(&req)) {
            Ok(o) => json_result(&serde_json::to_value(&o).unwrap_or_default()),
            Err(e) => tool_error(e.to_string()),
        }
    }
}

impl MemoryServer {
    /// `memory_write`'s work. A write that meets a damaged store after the note file was
    /// written is not run again once the store is rebuilt (it would be refused: the id now
    /// exists): the rebuilt store indexed the new file, so it is reported as written.
    fn write_note(&self, req: &WriteRequest) -> mnemon::Result<mnemon::WriteOutcome> {
        let path = format!("memory/{}.md", req.id);
        let file = self.memory.dir().root().join(&path);
        let before = std::fs::read(&file).ok();
        self.memory.with_then(
            |m| m.write_note(req),
            |healed| {
                if std::fs::read(&file).ok() == before {
                    return None;
                }
                Some(healed.show(&req.id).map(|view| mnemon::WriteOutcome {
                    id: req.id.clone(),
                    path: path.clone(),
                    written: true,
                    created: before.is_none(),
                    sha256: view.sha256,
                    refused: None,
                    message: format!(
                        "{} {path}; the index store was found damaged while indexing it and \
                         was rebuilt from the notes, this one included: it can be recalled",
                        if before.is_none() {
                            "created"
                        } else {
                            "replaced"
                        }
                    ),
                    near_duplicates: Vec::new(),
                    likely_predecessors: Vec::new(),
                }))
            },
        )
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(rmcp::model::Implementation::new(
                "mnemon",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
            "mnemon is this project's long-term memory. Call memory_core at the start of a session, memory_recall before answering questions about the project, memory_feedback with the ids of the recalled notes you used once you have answered, memory_set_importance when the user states a strong preference or an incident must be remembered, and memory_write to save a durable fact, decision, preference or incident (recall first, and update the note that already covers it: memory_show gives the sha256 to pass).",
        )
    }
}

/// Serve `memory` over stdio until the client disconnects.
pub async fn serve_stdio(memory: Arc<LiveMemory>) -> mnemon::Result<()> {
    let (read, write) = rmcp::transport::stdio_pipes();
    serve_on(memory, read, write).await
}

/// Serve `memory` over a byte stream pair until `read` ends. Every line is checked by
/// [`lines::LineReader`] first: malformed input is answered with a JSON-RPC error and the server
/// keeps serving.
pub async fn serve_on<R, W>(memory: Arc<LiveMemory>, read: R, write: W) -> mnemon::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let server = MemoryServer::new(memory);
    let mut tools: Vec<String> = server
        .tool_router
        .list_all()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    tools.sort();
    let (transport, tasks) = transport::start(read, write, tools);
    let result = async {
        let served = server.serve(transport).await;
        if served.is_err() && tasks.served_sessionless() {
            // Calls without a session, then the client left: rmcp's handshake never came.
            return Ok(());
        }
        let service = served.map_err(|e| mnemon::Error::Mcp {
            what: "initialisation failed",
            source: Box::new(e),
            fix: "start mnemon serve from an MCP client, which speaks JSON-RPC on its stdin \
                      and stdout (the MCP stdio transport)",
        })?;
        service.waiting().await.map_err(|e| mnemon::Error::Mcp {
            what: "server stopped",
            source: Box::new(e),
            fix: "restart the MCP client (or mnemon serve); the memory folder is unharmed",
        })?;
        Ok(())
    }
    .await;
    tasks.finish().await;
    result
}
