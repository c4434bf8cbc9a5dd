//! How do people and scripts drive mnemon? Argument parsing, output (human or `--json`) and exit
//! codes. Every command is a few lines on top of the `Memory` facade.

#[macro_use]
mod stdout;
mod demo;
mod events_cmd;
mod output;
mod progress;
mod serve;
mod write_cmd;

use clap::{Parser, Subcommand};
use mnemon::{Error, Memory, MemoryDir, args};
use output::Out;
use std::path::PathBuf;

/// Exit status: success.
pub const EXIT_OK: i32 = 0;
/// Exit status: the command ran and found problems (`doctor`, `events verify`), or refused a
/// note (`write`).
pub const EXIT_PROBLEMS: i32 = 1;
/// Exit status: bad usage or argument.
pub const EXIT_USAGE: i32 = 2;
/// A time in Unix milliseconds as `YYYY-MM-DD HH:MM:SS UTC` (as milliseconds outside years
/// 0 to 9999).
fn utc_time(ms: i64) -> String {
    const YEAR_0_MS: i64 = -62_167_219_200_000;
    const YEAR_10000_MS: i64 = 253_402_300_800_000;
    if !(YEAR_0_MS..YEAR_10000_MS).contains(&ms) {
        return format!("{ms} ms");
    }
    let s = ms.div_euclid(1000);
    let of_day = s.rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}:{:02} UTC",
        mnemon::time::format_date_unix_s(s),
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// Exit status: the command failed (I/O, damaged files that could not be repaired, ...).
pub const EXIT_FAILURE: i32 = 3;

const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  success
  1  the command ran and found problems (doctor, events verify), or refused to write the note
     (write: it exists, changed since it was read, or nearly duplicates another)
  2  bad usage or invalid argument (unknown id, out-of-range value)
  3  failure (I/O error, damaged files that could not be repaired)

Environment:
  MNEMON_DIR      memory folder to use (same as --dir)
  MNEMON_SESSION  session id for recorded events (same as --session)
  NO_COLOR        disable colours (as TERM=dumb does)";

/// mnemon: associative memory for AI agents (Markdown notes -> typed graph -> recall).
#[derive(Parser, Debug)]
#[command(name = "mnemon", version, about, after_help = EXIT_CODES_HELP)]
struct Cli {
    /// Memory folder (the one holding memory/); default: $MNEMON_DIR when set and not empty,
    /// else .mnemon/ found walking up from here.
    #[arg(long, global = true, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Print one JSON object on stdout instead of human output.
    #[arg(long, global = true)]
    json: bool,
    /// Session id for the events this process records (default: $MNEMON_SESSION when set and
    /// not empty, else a new one per process).
    #[arg(long, global = true, value_name = "ID")]
    session: Option<String>,
    /// When recorded events become durable: close (flush per recall, fsync at exit), always
    /// (fsync per recall), never (flush only).
    #[arg(long, global = true, value_enum, default_value_t = SyncArg::Close)]
    sync: SyncArg,
    #[command(subcommand)]
    command: Command,
}

/// `--sync`: the library's [`mnemon::events::SyncPolicy`] as a command-line value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SyncArg {
    /// Flushed after every recall, fsynced when the memory is closed.
    Close,
    /// Fsynced after every recall and importance tag.
    Always,
    /// Flushed after every recall; never fsynced by mnemon.
    Never,
}

impl From<SyncArg> for mnemon::events::SyncPolicy {
    fn from(a: SyncArg) -> Self {
        match a {
            SyncArg::Close => Self::Close,
            SyncArg::Always => Self::Always,
            SyncArg::Never => Self::Never,
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Create a memory folder (.mnemon/ here, or --dir) and index what is in it.
    Init,
    /// Bring the index up to date with memory/ (only changed notes are re-read).
    Index,
    /// Show one note with its edges both ways.
    Show {
        /// Node id (path below memory/ without .md).
        id: String,
    },
    /// Check the memory: dangling links, broken notes, merge conflicts, index health (the store
    /// is compared with the notes); lists contradictions and near-duplicate notes.
    Doctor {
        /// Rebuild a damaged index store from the notes (notes and events are not touched).
        #[arg(long)]
        fix: bool,
    },
    /// Find the notes that matter for a question (or around anchor notes).
    Recall {
        /// Question or keywords.
        query: Option<String>,
        /// Start from this note id (repeatable); an anchor is a direct hit.
        #[arg(long = "anchor", value_name = "ID")]
        anchors: Vec<String>,
        #[arg(long, default_value_t = args::DEFAULT_DEPTH.into(), allow_negative_numbers = true,
              value_parser = whole_in(args::DEPTH),
              help = format!("Depth of the walk over typed edges ({}..={}); --anchor ID --depth 0 \
                              fetches the note, which counts as a use of it",
                             args::DEPTH.min, args::DEPTH.max))]
        depth: i64,
        #[arg(long, default_value_t = args::DEFAULT_LIMIT as i64, allow_negative_numbers = true,
              value_parser = whole_in(args::LIMIT),
              help = format!("Number of results ({}..={})", args::LIMIT.min, args::LIMIT.max))]
        limit: i64,
        /// Drop results scoring below this.
        #[arg(long, default_value = args::DEFAULT_MIN_SCORE_TEXT, allow_negative_numbers = true)]
        min_score: f64,
        /// Show each score taken apart.
        #[arg(long)]
        explain: bool,
    },
    #[command(about = format!(
        "Mark a note as important ({}..{}): strong preferences, recurring concerns, incidents",
        args::IMPORTANCE.min, args::IMPORTANCE.max
    ))]
    Importance {
        /// Node id.
        id: String,
        #[arg(allow_negative_numbers = true, value_parser = whole_in(args::IMPORTANCE), help = format!(
            "Importance, {} (a little) to {} (always relevant)",
            args::IMPORTANCE.min, args::IMPORTANCE.max
        ))]
        importance: i64,
        /// Tag (repeatable).
        #[arg(long = "tag", value_name = "T")]
        tags: Vec<String>,
        /// Why it matters.
        #[arg(long, value_name = "TEXT", default_value = "")]
        note: String,
    },
    /// Say which recalled notes were used for a question (and which were wrong): later questions
    /// worded like it find the used notes first. Pass the question with --query.
    Feedback {
        /// Id of a note used (repeatable).
        #[arg(long = "used", value_name = "ID")]
        used: Vec<String>,
        /// Id of a note that was wrong or misleading for the question (repeatable).
        #[arg(long = "wrong", value_name = "ID")]
        wrong: Vec<String>,
        /// The question the notes were recalled for (without it, only the notes' use counts
        /// change).
        #[arg(long, value_name = "TEXT")]
        query: Option<String>,
    },
    /// Write a note into memory/ and index it (for agents that do not write files): the body
    /// from --from FILE or stdin, the frontmatter from the options. A note that exists is
    /// replaced only with --expected-sha256 (the sha256 `mnemon show ID` prints), keeping the
    /// frontmatter fields the options leave out; a note that
    /// nearly duplicates another is refused unless --on-duplicate create. Exit 1 when refused.
    Write {
        /// Note id: its path below memory/ without .md (`/` between folders).
        id: String,
        /// Read the body from this file (default: stdin). Markdown, without a frontmatter block.
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
        /// The note's name (frontmatter `name`).
        #[arg(long, value_name = "N")]
        name: Option<String>,
        /// One line saying what the note is for (frontmatter `description`).
        #[arg(long, value_name = "D")]
        description: Option<String>,
        /// The note's type.
        #[arg(long = "type", value_name = "T", value_enum)]
        note_type: Option<write_cmd::TypeArg>,
        /// Tag (repeatable).
        #[arg(long = "tag", value_name = "T")]
        tags: Vec<String>,
        /// Id of a related note (repeatable).
        #[arg(long = "related", value_name = "ID")]
        related: Vec<String>,
        /// Id of a note this one replaces (repeatable).
        #[arg(long = "supersedes", value_name = "ID")]
        supersedes: Vec<String>,
        /// Id of a note this one disagrees with (repeatable).
        #[arg(long = "contradicts", value_name = "ID")]
        contradicts: Vec<String>,
        /// Keep the note in the core view.
        #[arg(long, conflicts_with = "unpin")]
        pin: bool,
        /// Take a replaced note out of the core view (without --pin or --unpin, a replacement
        /// keeps what the note had).
        #[arg(long)]
        unpin: bool,
        /// The sha256 of the note as you read it (`mnemon show ID`): needed to replace a note.
        #[arg(long, value_name = "HEX")]
        expected_sha256: Option<String>,
        /// What to do when the note nearly duplicates another one.
        #[arg(long, value_enum, value_name = "WHAT", default_value_t = write_cmd::OnDuplicateArg::Refuse)]
        on_duplicate: write_cmd::OnDuplicateArg,
    },
    /// Show what the event log says about a note (recall, used and wrong counts, last recall,
    /// importance).
    Stats {
        /// Node id.
        id: String,
    },
    /// Serve the memory to an agent over MCP (stdio). One server process is one session; notes
    /// are re-indexed as they change.
    Serve {
        /// Do not watch memory/ for changes.
        #[arg(long)]
        no_watch: bool,
    },
    /// Re-index whenever notes change (2-second debounce: a change is indexed about 4 seconds later) until interrupted or --for elapses.
    Watch {
        /// Stop after this many seconds (default: run until Ctrl-C).
        #[arg(long = "for", value_name = "SECONDS", allow_negative_numbers = true)]
        for_secs: Option<u64>,
    },
    /// Render the always-in-context notes (pinned, then important) into a token budget.
    Core {
        /// Token budget, 1 to 200000 (tokens estimated as characters / 4, CJK characters as 1
        /// each).
        #[arg(long, default_value_t = args::DEFAULT_BUDGET_TOKENS as i64,
              allow_negative_numbers = true, value_parser = whole_in(args::BUDGET_TOKENS))]
        budget: i64,
    },
    /// Compress event segments older than --compress-after days, archive those older than
    /// --archive-after, remove leftovers of interrupted runs.
    Compact {
        /// Days after its last write before a segment is zstd-compressed.
        #[arg(long, default_value_t = mnemon::events::DEFAULT_COMPRESS_AFTER_DAYS,
              allow_negative_numbers = true)]
        compress_after: u32,
        /// Days after its last write before a compressed segment moves to events/archive/.
        #[arg(long, default_value_t = mnemon::events::DEFAULT_ARCHIVE_AFTER_DAYS,
              allow_negative_numbers = true)]
        archive_after: u32,
    },
    /// Inspect the event log.
    Events {
        #[command(subcommand)]
        action: EventsAction,
    },
    /// Run a ground-truth query set against a corpus (loopal-58 protocol) and print the metrics.
    Eval {
        /// Folder of notes to build a temporary memory from.
        #[arg(long, value_name = "DIR")]
        corpus: PathBuf,
        /// Ground-truth YAML (the format of loopal-58's ground_truth.yaml).
        #[arg(long, value_name = "FILE")]
        truth: PathBuf,
        /// Comma-separated modes: cold; replay (every question asked once, recorded, then all
        /// scored); feedback (replay, saying which relevant notes of the first 10 were used);
        /// taught (feedback naming every relevant note, found or not); warmN, impK, perqN (N from
        /// 0 to 100 warm-up recalls per relevant note, K an importance from 1 to 10).
        #[arg(long, value_delimiter = ',', default_value = "cold")]
        modes: Vec<String>,
        /// Ground truth whose questions replay, feedback and taught ask before scoring, instead
        /// of --truth's own: does what was taught on some questions carry over to others?
        #[arg(long, value_name = "FILE")]
        teach: Option<PathBuf>,
        /// Score as of this date (`YYYY-MM-DD`, or with a time: `2026-12-01T09:30:00Z`, UTC)
        /// instead of now: recency and TTL weigh the notes' dates against it, so the figures do
        /// not move with the day or the hour the eval runs.
        #[arg(long, value_name = "DATE", value_parser = parse_eval_date)]
        at: Option<i64>,
    },
    /// Generate a deterministic synthetic corpus (notes + queries.yaml) for benchmarks.
    Gen {
        /// Number of notes (1 to 1000000).
        #[arg(long, default_value_t = 1000, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
        notes: usize,
        /// Random seed (same seed, same bytes).
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Output folder, new or empty (gets memory/ and queries.yaml).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Test helper: act as one agent of a multi-process stress test (tests/many_agents.rs).
    #[command(hide = true, name = "__worker")]
    Worker {
        /// agent (recalls, importance tags, note edits), recaller (text recalls only), compactor
        /// or indexer.
        #[arg(long, default_value = "agent")]
        role: String,
        /// Operations to run.
        #[arg(long, default_value_t = 50)]
        ops: usize,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Anchor notes n0..n{nodes-1} must exist.
        #[arg(long, default_value_t = 20)]
        nodes: usize,
    },
    /// Index the bundled demo memory into a temporary folder and show what mnemon sees.
    Demo {
        /// Folder of demo notes (default: the examples/demo-memory shipped with the sources).
        #[arg(long, value_name = "DIR")]
        notes: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum EventsAction {
    /// Print every event, oldest segment first.
    Dump,
    /// Check every segment of events/ and events/archive/ (exit 1 on any problem found).
    ///
    /// Exit 1 when a segment has damaged frames or could not be read to its end, when a segment
    /// the stats count is missing from the log, or when events/archive/ cannot be read.
    Verify,
}

/// Parse arguments, run, and return the exit code.
pub fn run() -> i32 {
    let mut cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            // Every error of the command says who speaks, as mnemon's own do (`mnemon: error:`);
            // the help printed for a missing subcommand is no error line.
            if e.use_stderr()
                && e.kind() != clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            {
                use std::io::Write as _;
                let _ = write!(std::io::stderr().lock(), "mnemon: ");
            }
            let _ = e.print();
            // A script that asked for JSON parses stdout: a usage error is JSON there too.
            if e.use_stderr() && asks_for_json(std::env::args_os()) {
                let rendered = e.render().to_string();
                let first = rendered.split("\n\n").next().unwrap_or_default();
                let message = first.trim().trim_start_matches("error: ");
                Out::new(true).json(&serde_json::json!({ "error": message }));
            }
            return code;
        }
    };
    // Read here, not by clap: clap took an empty MNEMON_DIR (`MNEMON_DIR= mnemon ...`) for an
    // empty --dir and said "a value is required for '--dir'" to a command line without one.
    if cli.dir.is_none() {
        cli.dir = std::env::var_os("MNEMON_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
    }
    let out = Out::new(cli.json);
    mnemon::set_lock_wait_notice(|path| {
        errln!(
            "mnemon: waiting for {}: another mnemon process (or a task of this one) is writing \
             this memory's index (an index, write, doctor or serve); going on when it is done (a \
             holder stopped with Ctrl-Z or hung keeps it until it ends)",
            path.display()
        )
    });
    match dispatch_repairing(&cli, &out) {
        Ok(code) => code,
        Err(e) => {
            out.error(&e);
            match e {
                Error::InvalidArgument { .. }
                | Error::OutOfRange { .. }
                | Error::UnknownNode { .. }
                | Error::RemovedNode { .. } => EXIT_USAGE,
                Error::NoMemoryFolder { .. } | Error::NotAMemoryFolder { .. } => EXIT_USAGE,
                Error::Write { reason, .. } if write_cmd::is_usage(&reason) => EXIT_USAGE,
                _ => EXIT_FAILURE,
            }
        }
    }
}

/// Whether the command line has `--json` among its options (before a `--`).
fn asks_for_json(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    args.into_iter()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

fn cwd() -> mnemon::Result<PathBuf> {
    std::env::current_dir().map_err(|e| Error::io("read working directory", ".", e))
}

/// Run the command; when it finds the index store's bytes bad (an error saying so, or a panic
/// inside the store's reads), move the store aside, say so, and run it once more on a store
/// rebuilt from the notes. `doctor` reports damage instead (and `--fix` repairs it).
/// Move a damaged store aside to rebuild it; when that fails (a folder this process may only
/// read), the error says the store is damaged as well as why it could not be moved.
fn discard_damaged_store(dir: &MemoryDir, damage: &str) -> mnemon::Result<std::path::PathBuf> {
    Memory::discard_store(dir).map_err(|e| match e {
        Error::Io { path, source, .. } => Error::Io {
            op: "move aside the damaged index store",
            path,
            source: std::io::Error::new(
                source.kind(),
                format!(
                    "it is damaged ({damage}), and moving it aside to rebuild it failed: \
                     {source}; run `mnemon doctor --fix` where the folder is writable"
                ),
            ),
        },
        other => other,
    })
}

fn dispatch_repairing(cli: &Cli, out: &Out) -> mnemon::Result<i32> {
    let long_running = matches!(cli.command, Command::Serve { .. } | Command::Watch { .. });
    let run = || {
        // A panic this run catches is reported in the repair notice, not as a Rust panic
        // message; `serve` and `watch` let it end the process, with the message.
        let _quiet = (!long_running).then(panic_note::Quiet::begin);
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(cli, out)))
    };
    let first = run();
    // A note written whose indexing found the store damaged: the write is done, and running it
    // again would find the note changed by this very write. The store is rebuilt and the write
    // reported.
    if let (
        Ok(Err(Error::WrittenNotIndexed {
            path,
            sha256,
            created,
            source,
        })),
        Command::Write { id, .. },
    ) = (&first, &cli.command)
        && mnemon::is_store_damage(source)
        && !stdout::wrote()
    {
        let dir = MemoryDir::locate(cli.dir.as_deref(), &cwd()?)?;
        let aside = discard_damaged_store(&dir, &source.to_string())?;
        out.notice(&format!(
            "the index store was damaged ({source}); moved it to {} and rebuilt it from the notes",
            aside.display()
        ));
        let memory = open(cli, out)?;
        memory.index()?;
        return Ok(write_cmd::report_written_after_repair(
            &memory, id, path, sha256, *created, out,
        ));
    }
    let damage = match first {
        Ok(Err(e)) if mnemon::is_store_damage(&e) => e.to_string(),
        Ok(result) => return result,
        Err(panic) => {
            if long_running {
                std::panic::resume_unwind(panic);
            }
            match panic_note::take() {
                Some(p) => format!("a read of it panicked: {p}"),
                None => "a read of it panicked".to_string(),
            }
        }
    };
    if stdout::wrote() {
        // The command had already printed (and recorded) its answer: the damage showed when the
        // store was closed (redb writes its allocator state then). Running it again would print
        // and record everything twice, and a second answer would follow the first on stdout.
        if matches!(cli.command, Command::Doctor { fix: false } | Command::Init) {
            out.notice(&format!(
                "the index store turned out damaged after this command printed its output \
                 ({damage}); run `mnemon doctor --fix` to rebuild it from the notes"
            ));
            return Ok(EXIT_PROBLEMS);
        }
        let dir = MemoryDir::locate(cli.dir.as_deref(), &cwd()?)?;
        let aside = discard_damaged_store(&dir, &damage)?;
        out.notice(&format!(
            "the index store turned out damaged after this command printed its output \
             ({damage}); moved it to {}: the next command rebuilds it from the notes",
            aside.display()
        ));
        // The answer was complete; only `doctor`'s report is wrong about the store.
        return Ok(match cli.command {
            Command::Doctor { .. } => EXIT_PROBLEMS,
            _ => EXIT_OK,
        });
    }
    match cli.command {
        Command::Doctor { fix: false } => {
            out.error(&Error::InvalidArgument {
                what: "index store",
                message: format!(
                    "{damage}; run `mnemon doctor --fix` to rebuild it from the notes"
                ),
            });
            return Ok(EXIT_PROBLEMS);
        }
        Command::Init => {
            return Err(Error::InvalidArgument {
                what: "index store",
                message: format!("{damage}; run `mnemon doctor --fix`"),
            });
        }
        _ => {}
    }
    let dir = MemoryDir::locate(cli.dir.as_deref(), &cwd()?)?;
    let aside = discard_damaged_store(&dir, &damage)?;
    out.notice(&format!(
        "the index store was damaged ({damage}); moved it to {} and rebuilt it from the notes",
        aside.display()
    ));
    match run() {
        Ok(result) => result,
        Err(panic) => {
            // Not the store's bytes this time: a bug, shown as Rust shows a panic.
            if let Some(p) = panic_note::take() {
                out.notice(&format!(
                    "the command {p} (on a store rebuilt from the notes)"
                ));
            }
            std::panic::resume_unwind(panic)
        }
    }
}

/// How many times a command opens the memory when `index/` is removed under it: each removal
/// costs one more open (and a rebuild from the notes); a folder removed faster than it can be
/// rebuilt fails the command with the last error rather than looping forever.
const MAX_OPENS: usize = 5;

/// The opens a command has made (see [`MAX_OPENS`]), counted across opening and indexing.
struct Opens(std::cell::Cell<usize>);

impl Opens {
    fn new() -> Self {
        Opens(std::cell::Cell::new(0))
    }

    /// Count one open; false once [`MAX_OPENS`] have been made, after saying why on `out`.
    fn another(&self, out: &Out, index: &std::path::Path) -> bool {
        let n = self.0.get() + 1;
        self.0.set(n);
        if n < MAX_OPENS {
            return true;
        }
        out.notice(&format!(
            "{} was removed {n} times while this command ran: stop whatever deletes it, then \
             run the command again",
            index.display()
        ));
        false
    }
}

/// [`open`], then brought up to date with the notes as they are now (edited, added or deleted
/// by hand since the last index), as a command that answers about notes needs them.
/// On a full disk the notes changed since are left unindexed, with a notice: the command
/// answers from the index as it was, as `serve` does, rather than not at all. An `index/`
/// removed while the command ran (it may be, at any time) is made again: the memory is opened
/// once more, up to [`MAX_OPENS`] times.
fn open_current(cli: &Cli, out: &Out) -> mnemon::Result<Memory> {
    let opens = Opens::new();
    let (memory, indexed) = loop {
        let memory = open_counted(cli, out, options(cli), &opens)?;
        let indexed = memory.index_if_writable();
        match &indexed {
            Err(e)
                if e.is_missing_under(&memory.dir().index())
                    && opens.another(out, &memory.dir().index()) => {}
            _ => break (memory, indexed),
        }
    };
    match indexed {
        Err(e) if e.is_disk_full() => {
            out.notice(&format!(
                "indexing the notes failed: {e}; answering from the index as it was (notes \
                 changed since are seen once space is freed)"
            ));
            // A store whose commit failed refuses every later read in this process: the memory
            // as last committed is opened anew.
            drop(memory);
            open(cli, out)
        }
        Err(e) => Err(e),
        Ok(_) => Ok(memory),
    }
}

fn open(cli: &Cli, out: &Out) -> mnemon::Result<Memory> {
    open_with(cli, out, options(cli))
}

/// [`open`] with `options` instead of the command line's.
fn open_with(cli: &Cli, out: &Out, options: mnemon::OpenOptions) -> mnemon::Result<Memory> {
    open_counted(cli, out, options, &Opens::new())
}

/// [`open_with`], its opens counted in `opens`.
fn open_counted(
    cli: &Cli,
    out: &Out,
    options: mnemon::OpenOptions,
    opens: &Opens,
) -> mnemon::Result<Memory> {
    let dir = MemoryDir::locate(cli.dir.as_deref(), &cwd()?)?;
    let memory = loop {
        match Memory::open_with(dir.clone(), options.clone()) {
            // `index/` removed while it was being opened (it may be, at any time): once more.
            Err(e) if e.is_missing_under(&dir.index()) && opens.another(out, &dir.index()) => {}
            opened => break opened?,
        }
    };
    for n in memory.take_notices() {
        out.notice(&n);
    }
    Ok(memory)
}

/// The memory a long-running command holds: opened (`serve` and `watch` index it once their
/// watcher is armed), and healed if its index store turns out damaged later (repairs are logged
/// to stderr, which is not the MCP protocol).
fn live(cli: &Cli, out: &Out) -> mnemon::Result<std::sync::Arc<crate::live::LiveMemory>> {
    let memory = open(cli, out)?;
    Ok(std::sync::Arc::new(crate::live::LiveMemory::new(
        memory,
        options(cli),
        Box::new(|m| errln!("mnemon: {m}")),
    )))
}

/// A clap parser for a whole-number argument in `range`: one message for any value it refuses,
/// saying what to give (clap's own said "invalid digit found in string" or "number too large to
/// fit in target type"). A number in no range's reach is out of range here; the range itself is
/// checked by the facade, as for every caller.
fn whole_in(
    range: args::Range,
) -> impl Fn(&str) -> std::result::Result<i64, String> + Clone + Send + Sync + 'static {
    move |s: &str| {
        let t = s.trim();
        let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
        let whole = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        match t.parse::<i64>() {
            // Said by the facade's check, as for an MCP or Python caller.
            Ok(v) => Ok(v),
            Err(_) if whole => Err(format!("out of range: use {}", range.allowed())),
            Err(_) => Err(format!("not a whole number: use {}", range.allowed())),
        }
    }
}

/// `mnemon eval --at`: a date, as seconds since the Unix epoch.
fn parse_eval_date(s: &str) -> std::result::Result<i64, String> {
    // The frontmatter reader takes any time zone as UTC; here a date and time in UTC only.
    let time = s.get(10..).unwrap_or("");
    let time = time.strip_suffix('Z').unwrap_or(time);
    let utc = time.is_empty()
        || time.strip_prefix('T').is_some_and(|t| {
            matches!(t.len(), 5 | 8)
                && t.bytes().enumerate().all(|(i, b)| {
                    if i % 3 == 2 {
                        b == b':'
                    } else {
                        b.is_ascii_digit()
                    }
                })
        });
    utc.then(|| mnemon::time::parse_date_unix_s(s))
        .flatten()
        .ok_or_else(|| {
            format!("`{s}` is no date: give YYYY-MM-DD, or YYYY-MM-DDTHH:MM:SSZ for a time (UTC)")
        })
}

fn options(cli: &Cli) -> mnemon::OpenOptions {
    let opts = mnemon::OpenOptions::default().with_sync(cli.sync.into());
    match &cli.session {
        Some(s) => opts.with_session(s.clone()),
        None => opts,
    }
}

fn dispatch(cli: &Cli, out: &Out) -> mnemon::Result<i32> {
    match &cli.command {
        Command::Init => {
            // --dir names the memory folder itself; without it, .mnemon/ in the working directory.
            let root = match &cli.dir {
                Some(d) => d.clone(),
                None => cwd()?.join(mnemon::folder::DEFAULT_FOLDER_NAME),
            };
            let memory = Memory::init(&root)?;
            for n in memory.take_notices() {
                out.notice(&n);
            }
            let report = progress::with_spinner(out, "indexing notes", || memory.index())?;
            out.init(memory.dir().root(), &report);
            Ok(EXIT_OK)
        }
        Command::Index => {
            let memory = open(cli, out)?;
            let report = progress::with_spinner(out, "indexing notes", || memory.index())?;
            out.index(&report);
            Ok(EXIT_OK)
        }
        Command::Show { id } => {
            let memory = open_current(cli, out)?;
            let view = memory.show(id)?;
            out.show(&view);
            Ok(EXIT_OK)
        }
        Command::Doctor { fix } => {
            let memory = open(cli, out)?;
            let mut report = progress::with_spinner(out, "checking", || memory.doctor())?;
            if *fix && !report.store_damage.is_empty() {
                let dir = memory.dir().clone();
                drop(memory);
                let aside = discard_damaged_store(&dir, &report.store_damage.join("; "))?;
                out.notice(&format!(
                    "moved the damaged index store to {}; rebuilding it from the notes",
                    aside.display()
                ));
                let memory = open(cli, out)?;
                report = progress::with_spinner(out, "rebuilding", || memory.doctor())?;
            } else if *fix && !report.index.ok {
                let dir = memory.dir().clone();
                drop(memory);
                if let Some(aside) = Memory::discard_change_seq(&dir)? {
                    out.notice(&format!(
                        "moved the unusable index change count to {}; a new one is made (processes that have this memory open read the old one until they restart)",
                        aside.display()
                    ));
                }
                let memory = open(cli, out)?;
                report = progress::with_spinner(out, "checking", || memory.doctor())?;
            }
            if !report.healthy {
                stdout::exit_on_closed_pipe(EXIT_PROBLEMS);
            }
            out.doctor(&report);
            Ok(if report.healthy {
                EXIT_OK
            } else {
                EXIT_PROBLEMS
            })
        }
        Command::Recall {
            query,
            anchors,
            depth,
            limit,
            min_score,
            explain,
        } => {
            let q = mnemon::recall::Query {
                text: query.clone().unwrap_or_default(),
                anchors: anchors.clone(),
                depth: args::DEPTH.parse(*depth)?,
                limit: args::LIMIT.parse(*limit)?,
                min_score: args::min_score(*min_score)?,
                caller: "cli".into(),
                record: true,
            };
            args::query(&q)?;
            let memory = open_current(cli, out)?;
            let r = memory.recall(&q)?;
            for n in memory.take_notices() {
                out.notice(&n);
            }
            if let Some(read) = r.floor.read_bytes.filter(|_| !*explain) {
                out.notice(&output::question_cut(Some(q.text.len()), read));
            }
            out.recall(&r, *explain);
            Ok(EXIT_OK)
        }
        Command::Importance {
            id,
            importance,
            tags,
            note,
        } => {
            let importance: u8 = args::IMPORTANCE.parse(*importance)?;
            let memory = open_current(cli, out)?;
            memory.set_importance(id, importance, tags, note)?;
            let stats = memory.stats(id)?;
            if out.json {
                out.json(&stats);
            } else {
                outln!("{id}: importance {importance} recorded");
            }
            Ok(EXIT_OK)
        }
        Command::Feedback { used, wrong, query } => {
            args::feedback(used, wrong)?;
            let memory = open_current(cli, out)?;
            let r = memory.feedback(used, wrong, query.as_deref())?;
            if out.json {
                out.json(&r);
            } else {
                outln!(
                    "feedback recorded: used [{}], wrong [{}]{}",
                    r.used.join(", "),
                    r.wrong.join(", "),
                    if r.query.is_empty() {
                        " (no question: only use counts change; give --query to tie it to one)"
                            .to_string()
                    } else {
                        format!(" for \"{}\"", r.query)
                    }
                );
            }
            Ok(EXIT_OK)
        }
        Command::Write {
            id,
            from,
            name,
            description,
            note_type,
            tags,
            related,
            supersedes,
            contradicts,
            pin,
            unpin,
            expected_sha256,
            on_duplicate,
        } => {
            let body = write_cmd::read_body(from.as_deref())?;
            let req = write_cmd::request(
                id,
                body,
                name.as_deref(),
                description.as_deref(),
                *note_type,
                [tags, related, supersedes, contradicts],
                (*pin || *unpin).then_some(*pin),
                expected_sha256.as_deref(),
                *on_duplicate,
            );
            let memory = open(cli, out)?;
            write_cmd::run(&memory, &req, out)
        }
        Command::Stats { id } => {
            let memory = open(cli, out)?;
            let s = memory.stats(id)?;
            if out.json {
                out.json(&s);
            } else {
                let times = |n: u64| match n {
                    1 => "once".to_string(),
                    n => format!("{n} times"),
                };
                outln!(
                    "{}: recalled {} (last {}), used {} ({} apart from a question), wrong {}, importance {}",
                    s.id,
                    times(s.recall_count),
                    s.last_recalled_ms.map_or("never".into(), utc_time),
                    times(s.used_count),
                    s.untied_used,
                    times(s.wrong_count),
                    s.importance.map_or("unset".into(), |i| i.to_string())
                );
            }
            Ok(EXIT_OK)
        }
        Command::Compact {
            compress_after,
            archive_after,
        } => {
            // Only a compressed segment is archived: an archive age under the compression age
            // would archive each segment the moment it is compressed, which no one means.
            if archive_after < compress_after {
                return Err(Error::InvalidArgument {
                    what: "--archive-after",
                    message: format!(
                        "{archive_after} days is less than --compress-after ({compress_after} \
                         days): segments are archived once compressed; give an archive age at \
                         least the compression age"
                    ),
                });
            }
            // Opened without the compaction an open runs when due: this run does the work,
            // and its report lists it (an open-time run compacted first and left "0 compressed").
            let options = mnemon::OpenOptions {
                compact_at_open: false,
                ..options(cli)
            };
            let memory = open_with(cli, out, options)?;
            let r = memory.compact(mnemon::events::CompactPolicy {
                compress_after_days: *compress_after,
                archive_after_days: *archive_after,
            })?;
            // What compaction left as it was (a named pipe under a segment's name, a file it
            // may not open) is said on stderr, naming the file and the fix.
            for n in memory.take_notices() {
                out.notice(&n);
            }
            if out.json {
                out.json(&r);
            } else {
                if let Some(why) = &r.skipped {
                    outln!("skipped: {why}");
                }
                outln!(
                    "{} compressed, {} archived, {} removed",
                    r.compressed.len(),
                    r.archived.len(),
                    r.removed.len()
                );
                for (what, list) in [
                    ("compressed", &r.compressed),
                    ("archived", &r.archived),
                    ("removed", &r.removed),
                ] {
                    for n in list {
                        outln!("  {what} {n}");
                    }
                }
            }
            Ok(EXIT_OK)
        }
        // The async runtime first: it is made before opening the memory starts other threads
        // (see `serve::runtime`).
        Command::Serve { no_watch } => {
            let rt = serve::runtime()?;
            serve::run(rt, live(cli, out)?, !*no_watch)
        }
        Command::Watch { for_secs } => {
            let rt = serve::runtime()?;
            let report = serve::watch_until_interrupted(rt, live(cli, out)?, *for_secs, |m| {
                progress::with_spinner(out, "indexing notes", || {
                    m.with(|m| m.index_if_writable().map(|_| ()))
                })
            })?;
            if out.json {
                out.json(&report);
            } else {
                outln!(
                    "{} file events, {} re-indexes ({} with changes), {} errors",
                    report.events_seen,
                    report.reindexes,
                    report.reindexes_with_changes,
                    report.errors
                );
            }
            Ok(EXIT_OK)
        }
        Command::Core { budget } => {
            let budget = args::BUDGET_TOKENS.parse(*budget)?;
            let memory = open_current(cli, out)?;
            let v = memory.core(budget)?;
            if out.json {
                out.json(&v);
            } else {
                out!("{}", v.text);
                errln!(
                    "{} of {} tokens; {} included, {} left out{}",
                    v.tokens_used,
                    v.budget_tokens,
                    output::plural(v.included.len(), "note"),
                    v.left_out.len(),
                    if v.left_out.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", v.left_out.join(", "))
                    }
                );
                if !v.superseded.is_empty() {
                    errln!(
                        "left out as superseded by newer notes: {}",
                        v.superseded.join(", ")
                    );
                }
            }
            Ok(EXIT_OK)
        }
        Command::Events { action } => {
            let dir = MemoryDir::locate(cli.dir.as_deref(), &cwd()?)?;
            events_cmd::run(&dir, action, out)
        }
        Command::Eval {
            corpus,
            truth,
            modes,
            teach,
            at,
        } => {
            let load = |path: &PathBuf| {
                mnemon_testkit::eval::truth::load_truth(path).map_err(|e| Error::InvalidArgument {
                    what: "ground truth",
                    message: e.to_string(),
                })
            };
            let t = load(truth)?;
            let teach = teach.as_ref().map(load).transpose()?;
            let report =
                mnemon_testkit::eval::run::eval_taught_by(corpus, &t, teach.as_ref(), modes, *at)?;
            out.eval(&report);
            Ok(EXIT_OK)
        }
        Command::Gen {
            notes,
            seed,
            out: dir,
        } => {
            // Same seed, same bytes holds for the folder only if nothing else is in it; and a
            // real memory folder must not get synthetic notes mixed into it.
            if dir.exists() && !dir.is_dir() {
                return Err(Error::InvalidArgument {
                    what: "--out",
                    message: format!(
                        "{} is not a folder: give a new or empty folder for the corpus",
                        dir.display()
                    ),
                });
            }
            let occupied = match std::fs::read_dir(dir) {
                Ok(mut entries) => entries.next().is_some(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
                Err(e) => return Err(Error::io("read folder", dir, e)),
            };
            if occupied {
                return Err(Error::InvalidArgument {
                    what: "--out",
                    message: format!(
                        "{} is not empty: gen writes a whole corpus (memory/ and queries.yaml) and \
                         would overwrite or mix with what is there; give a new or empty folder",
                        dir.display()
                    ),
                });
            }
            let cfg = mnemon_testkit::corpus::GenConfig::new(*notes, *seed);
            let report = progress::with_spinner(out, "generating notes", || {
                mnemon_testkit::corpus::generate(&cfg, dir)
            })
            .map_err(|e| Error::io("generate corpus in", dir, e))?;
            if out.json {
                out.json(&serde_json::json!({
                    "notes": report.notes,
                    "bytes": report.bytes,
                    "links": report.links,
                    "queries": report.queries,
                    "out": dir.display().to_string(),
                }));
            } else {
                outln!(
                    "{} notes ({} bytes, {} links) in {}, {} queries in {}",
                    report.notes,
                    report.bytes,
                    report.links,
                    dir.join("memory").display(),
                    report.queries,
                    dir.join("queries.yaml").display()
                );
            }
            Ok(EXIT_OK)
        }
        Command::Worker {
            role,
            ops,
            seed,
            nodes,
        } => {
            let memory = open(cli, out)?;
            let failed = mnemon_testkit::worker::run(&memory, role, *ops, *seed, *nodes)?;
            Ok(if failed == 0 { EXIT_OK } else { EXIT_FAILURE })
        }
        Command::Demo { notes } => demo::run(notes.as_deref(), out),
    }
}

/// The message of a panic that [`dispatch_repairing`] catches: kept for its notice instead of
/// printed by the default hook (a damaged store can make redb panic; that is a repair, not a
/// crash). Panics outside a [`Quiet`] span go to the default hook as before.
pub(crate) mod panic_note {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Mutex, Once};

    static QUIET: AtomicBool = AtomicBool::new(false);
    static LAST: Mutex<Option<String>> = Mutex::new(None);
    static HOOK: Once = Once::new();

    /// While alive, panics are noted instead of printed.
    pub struct Quiet;

    impl Quiet {
        pub fn begin() -> Quiet {
            HOOK.call_once(|| {
                let default = std::panic::take_hook();
                std::panic::set_hook(Box::new(move |info| {
                    if QUIET.load(Ordering::SeqCst) {
                        if let Ok(mut last) = LAST.lock() {
                            *last = Some(describe(info));
                        }
                    } else {
                        default(info);
                    }
                }));
            });
            QUIET.store(true, Ordering::SeqCst);
            Quiet
        }
    }

    impl Drop for Quiet {
        fn drop(&mut self) {
            QUIET.store(false, Ordering::SeqCst);
        }
    }

    /// `panicked at <crate>/src/<file>:<line>: <message>` on one line, the path cut to the crate
    /// (not the build machine's registry folders).
    fn describe(info: &std::panic::PanicHookInfo<'_>) -> String {
        let message = message(info.payload());
        match info.location() {
            Some(l) => {
                let file = l.file();
                let short = match file.rfind("/src/") {
                    Some(i) => file[..i].rfind('/').map_or(file, |j| &file[j + 1..]),
                    None => file,
                };
                format!("panicked at {short}:{}: {message}", l.line())
            }
            None => format!("panicked: {message}"),
        }
    }

    /// A panic's message (its payload, when a string), on one line.
    pub(crate) fn message(payload: &(dyn std::any::Any + Send)) -> String {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into())
            .replace('\n', " ")
    }

    /// The last noted panic, if any.
    pub fn take() -> Option<String> {
        LAST.lock().ok().and_then(|mut l| l.take())
    }
}
