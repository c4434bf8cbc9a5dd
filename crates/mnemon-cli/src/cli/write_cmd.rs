//! `mnemon write ID`: write a note into `memory/` through the library (`Memory::write_note`), for
//! agents and scripts that do not write files themselves. The body comes from `--from FILE` or
//! stdin; the frontmatter from the options.

use super::output::Out;
use super::{EXIT_OK, EXIT_PROBLEMS};
use mnemon::{
    Error, Memory, NoteType, NoteWriteError, OnDuplicate, WriteRefusal, WriteRequest, args,
};
use std::io::Read;
use std::path::Path;

/// `--type`: the note types a frontmatter may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TypeArg {
    /// Facts about the project: decisions, incidents, how things work.
    Project,
    /// What the user corrected or asked for.
    Feedback,
    /// Who the user is and what they prefer.
    User,
    /// Pointers to outside material.
    Reference,
    /// A note that mostly lists other notes.
    Index,
}

impl From<TypeArg> for NoteType {
    fn from(t: TypeArg) -> Self {
        match t {
            TypeArg::Project => NoteType::Project,
            TypeArg::Feedback => NoteType::Feedback,
            TypeArg::User => NoteType::User,
            TypeArg::Reference => NoteType::Reference,
            TypeArg::Index => NoteType::Index,
        }
    }
}

/// `--on-duplicate`: the library's [`OnDuplicate`] as a command-line value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnDuplicateArg {
    /// Refuse a note that nearly duplicates another one (exit 1, the similar notes named).
    Refuse,
    /// Write it anyway: the notes are distinct.
    Create,
}

impl From<OnDuplicateArg> for OnDuplicate {
    fn from(a: OnDuplicateArg) -> Self {
        match a {
            OnDuplicateArg::Refuse => OnDuplicate::Refuse,
            OnDuplicateArg::Create => OnDuplicate::Create,
        }
    }
}

/// The body read from stdin, kept for a second run of the command.
static STDIN_BODY: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

/// The body: `from`'s bytes, or stdin's. At most one byte over the note size cap is read, and
/// a body over it is refused, with its size when it is known (a file's); the text must be UTF-8
/// (a leading byte-order mark is dropped).
pub fn read_body(from: Option<&Path>) -> mnemon::Result<String> {
    let cap = args::MAX_NOTE_BYTES as u64 + 1;
    let mut bytes = Vec::new();
    let too_large = |size: String| Error::InvalidArgument {
        what: "body",
        message: format!(
            "{size}, over the limit of {} bytes: split it into smaller notes linked with `related`",
            args::MAX_NOTE_BYTES
        ),
    };
    match from {
        Some(path) => {
            // A path that does not lead to a readable file is a bad argument, named as one.
            let bad = |why: String| Error::InvalidArgument {
                what: "--from",
                message: format!(
                    "{}: {why}; give the file that holds the note's body (or leave out --from \
                     and pipe the body to stdin)",
                    path.display()
                ),
            };
            let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
            let meta = file.metadata().ok();
            if meta.as_ref().is_some_and(std::fs::Metadata::is_dir) {
                return Err(bad("it is a folder".into()));
            }
            let size = meta.map(|m| m.len());
            file.take(cap)
                .read_to_end(&mut bytes)
                .map_err(|e| bad(e.to_string()))?;
            if bytes.len() as u64 == cap {
                return Err(too_large(match size {
                    Some(n) if n >= cap => format!("{} is {n} bytes", path.display()),
                    _ => format!("{} holds more than {} bytes", path.display(), cap - 1),
                }));
            }
        }
        None => {
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                errln!(
                    "mnemon: reading the note's body from stdin (end it with Ctrl-D), or pass --from FILE"
                );
            }
            // Read once per process: a command run again on a rebuilt store (see
            // `dispatch_repairing`) finds stdin drained.
            if let Some(read) = STDIN_BODY.get() {
                bytes.clone_from(read);
            } else {
                std::io::stdin()
                    .take(cap)
                    .read_to_end(&mut bytes)
                    .map_err(|e| Error::io("read", "stdin", e))?;
                let _ = STDIN_BODY.set(bytes.clone());
            }
            if bytes.len() as u64 == cap {
                return Err(too_large(format!(
                    "the body on stdin is more than {} bytes",
                    cap - 1
                )));
            }
        }
    }
    // A byte-order mark is how some editors start a UTF-8 file, not text of the body.
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| Error::InvalidArgument {
        what: "body",
        message: format!(
            "not UTF-8 text (first bad byte at offset {}): save it as UTF-8",
            e.utf8_error().valid_up_to()
        ),
    })
}

/// Write the note and print the outcome: exit 0 when written, 1 when refused (the reason and
/// the fix on stderr; with `--json` the outcome on stdout either way).
pub fn run(memory: &Memory, req: &WriteRequest, out: &Out) -> mnemon::Result<i32> {
    // The near-duplicate check compares with the notes as they are now (a read-only index
    // refuses the write itself, with its reason).
    if memory.read_only().is_none() {
        memory.index()?;
    }
    let o = memory.write_note(req)?;
    Ok(report(memory, &o, out))
}

/// A note written, whose indexing found the index store damaged (`Error::WrittenNotIndexed`),
/// once the store was rebuilt from the notes: the write is reported as done, as it is (writing
/// it again would find the note changed by this very write).
pub fn report_written_after_repair(
    memory: &Memory,
    id: &str,
    path: &str,
    sha256: &str,
    created: bool,
    out: &Out,
) -> i32 {
    let o = mnemon::WriteOutcome {
        id: id.to_string(),
        path: path.to_string(),
        written: true,
        created,
        sha256: Some(sha256.to_string()),
        refused: None,
        message: format!(
            "{} {path} (sha256 {sha256}); it is indexed and can be recalled",
            if created { "created" } else { "replaced" }
        ),
        near_duplicates: Vec::new(),
        likely_predecessors: Vec::new(),
    };
    report(memory, &o, out)
}

/// Print what the write did; the exit code.
fn report(memory: &Memory, o: &mnemon::WriteOutcome, out: &Out) -> i32 {
    if out.json {
        out.json(o);
    }
    if !o.written {
        errln!("mnemon: not written: {}", o.message);
        if let Some(hint) = command_line_hint(o) {
            errln!("mnemon: on the command line: {hint}");
        }
        return EXIT_PROBLEMS;
    }
    if !out.json {
        outln!(
            "wrote {} (sha256 {}){}",
            o.path,
            o.sha256.as_deref().unwrap_or("?"),
            if o.created {
                ""
            } else {
                ", replacing the note"
            }
        );
        for s in &o.near_duplicates {
            outln!(
                "  near duplicate: {} (similarity {:.2}): merge them, or link one to the other with --supersedes",
                s.id,
                s.similarity
            );
        }
        if let Ok(view) = memory.show(&o.id) {
            let mut dangling: Vec<&str> = view
                .edges_out
                .iter()
                .filter(|e| e.dangling)
                .map(|e| e.to.as_str())
                .collect();
            dangling.dedup();
            for to in dangling {
                outln!(
                    "  links to {to}, which no note is yet: doctor reports the link as dangling until it exists (check the id if it should)"
                );
            }
        }
        if let Ok(circle) = memory.supersede_cycle_through(&o.id)
            && !circle.is_empty()
        {
            outln!(
                "  a circle of supersedes: this note and {} replace each other, so recall treats none of them as replaced; drop supersedes from the older note",
                circle.join(", ")
            );
        }
        for s in &o.likely_predecessors {
            outln!(
                "  likely predecessor: {} (similarity {:.2}): if this note replaces it, write it again with --supersedes {} and --expected-sha256 {}",
                s.id,
                s.similarity,
                s.id,
                o.sha256.as_deref().unwrap_or("?")
            );
        }
    }
    EXIT_OK
}

/// The refusal's fix in this command's options (the outcome's message names the tool's fields).
fn command_line_hint(o: &mnemon::WriteOutcome) -> Option<String> {
    let sha = o.sha256.as_deref().unwrap_or("HEX");
    Some(match o.refused? {
        WriteRefusal::Exists => format!(
            "pass --expected-sha256 {sha} to replace it (read it first: `mnemon show {}`), or \
             choose another id",
            o.id
        ),
        WriteRefusal::Stale => format!(
            "read it again (`mnemon show {}`), merge your change into it, and pass \
             --expected-sha256 {sha}",
            o.id
        ),
        WriteRefusal::Missing => {
            "leave out --expected-sha256 to create it again, or find where it went with \
             `mnemon recall`"
                .to_string()
        }
        WriteRefusal::NearDuplicate => {
            let first = o.near_duplicates.first().map_or("ID", |n| n.id.as_str());
            format!(
                "update {first} instead (`mnemon show {first}`, then write {first} with \
                 --expected-sha256), or add --supersedes {first} if this note replaces it, or \
                 --on-duplicate create if they are truly distinct"
            )
        }
    })
}

/// A request from the command line's values.
#[allow(clippy::too_many_arguments)]
pub fn request(
    id: &str,
    body: String,
    name: Option<&str>,
    description: Option<&str>,
    note_type: Option<TypeArg>,
    lists: [&[String]; 4],
    pin: Option<bool>,
    expected_sha256: Option<&str>,
    on_duplicate: OnDuplicateArg,
) -> WriteRequest {
    let [tags, related, supersedes, contradicts] = lists;
    WriteRequest {
        name: name.map(str::to_string),
        description: description.map(str::to_string),
        note_type: note_type.map(NoteType::from),
        tags: tags.to_vec(),
        related: related.to_vec(),
        supersedes: supersedes.to_vec(),
        contradicts: contradicts.to_vec(),
        pin,
        expected_sha256: expected_sha256.map(str::to_string),
        on_duplicate: on_duplicate.into(),
        ..WriteRequest::new(id, body)
    }
}

/// Whether an error is the caller's to fix (exit 2) rather than a failure (exit 3).
pub fn is_usage(e: &NoteWriteError) -> bool {
    !matches!(e, NoteWriteError::Unsupported)
}
