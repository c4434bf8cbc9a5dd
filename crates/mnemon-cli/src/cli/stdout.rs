//! Printing to stdout without a panic when the reader goes away: `mnemon index | head -1`
//! closes the pipe after one line, and `println!` panics on the next. [`outln!`] and [`out!`]
//! print like `println!` and `print!`; when stdout is a closed pipe the command ends quietly
//! (exit 0, as ripgrep does, or 1 when it found problems), and any other write error is
//! reported on stderr (exit 1).

/// `println!` to stdout, ending the process quietly when the pipe is closed.
macro_rules! outln {
    () => {
        outln!("")
    };
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::cli::stdout::WROTE.store(true, std::sync::atomic::Ordering::Relaxed);
        let text = $crate::cli::stdout::for_terminal(format!($($arg)*));
        if let Err(e) = writeln!(std::io::stdout().lock(), "{text}") {
            $crate::cli::stdout::failed(e)
        }
    }};
}

/// `print!` to stdout, ending the process quietly when the pipe is closed.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::cli::stdout::WROTE.store(true, std::sync::atomic::Ordering::Relaxed);
        let text = $crate::cli::stdout::for_terminal(format!($($arg)*));
        if let Err(e) = write!(std::io::stdout().lock(), "{text}") {
            $crate::cli::stdout::failed(e)
        }
    }};
}

/// Set by the first write to stdout: a command that has printed its answer is not run again
/// (see `dispatch_repairing`).
pub static WROTE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether anything was written to stdout.
pub fn wrote() -> bool {
    WROTE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Set for human output (not `--json`, whose strings serde escapes and whose reader is a
/// program): text printed is then made safe for a terminal by [`for_terminal`].
pub static HUMAN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Text for a terminal: a note's name, description or body may hold control characters (an
/// escape sequence that clears the screen or sets the window title, a carriage return that
/// overwrites a line). Each is shown as its escape (`\u{1b}`) instead; tabs, line ends and
/// colour sequences (`ESC [ digits ; m`, what mnemon paints with) are kept.
pub fn for_terminal(text: String) -> String {
    if !HUMAN.load(std::sync::atomic::Ordering::Relaxed) || !text.chars().any(is_control) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text.as_str();
    while let Some(c) = rest.chars().next() {
        if c == '\x1b'
            && let Some(len) = colour_len(rest)
        {
            out.push_str(&rest[..len]);
            rest = &rest[len..];
            continue;
        }
        if c == '\r' && rest[1..].starts_with('\n') {
            // A Windows line end is a line end.
        } else if is_control(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A file name for a terminal line: every control character in it shown as its escape, line
/// ends and tabs too (a name holding a newline would otherwise split the line that names it).
pub fn name_for_terminal(name: &str) -> std::borrow::Cow<'_, str> {
    if !name.chars().any(char::is_control) {
        return name.into();
    }
    let mut out = String::with_capacity(name.len() + 16);
    for c in name.chars() {
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// A description for a terminal line: a line end or a tab in it (a YAML block scalar, a
/// description an agent wrote over two lines) reads as a space, runs of them as one; every
/// other control character is shown as its escape, as in a file name. (A name keeps its line
/// ends escaped: one is never meant, and the escape shows a name made to pass for other lines.)
pub fn line_for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_break = false;
    for c in text.trim_matches(['\r', '\n', '\t']).chars() {
        if matches!(c, '\r' | '\n' | '\t') {
            if !in_break {
                out.push(' ');
            }
            in_break = true;
            continue;
        }
        in_break = false;
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// A control character other than a tab or a line end.
fn is_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// The length of the colour sequence (`ESC [ [0-9;]* m`) `s` starts with, if it starts with one.
fn colour_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    if b.get(1) != Some(&b'[') {
        return None;
    }
    let digits = b[2..]
        .iter()
        .take_while(|x| x.is_ascii_digit() || **x == b';')
        .count();
    (b.get(2 + digits) == Some(&b'm')).then_some(3 + digits)
}

/// The exit code when the reader closes stdout before the output ends: 0 unless a command
/// that has found problems (`doctor`, `events verify`) says so before printing its report, so
/// that `mnemon doctor | head` under `pipefail` still fails on a broken memory.
pub static CLOSED_PIPE_EXIT: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The exit code a closed stdout ends the process with from now on (see [`CLOSED_PIPE_EXIT`]).
pub fn exit_on_closed_pipe(code: i32) {
    CLOSED_PIPE_EXIT.store(code, std::sync::atomic::Ordering::Relaxed);
}

/// A temporary folder to remove when a failed write to stdout ends the process: the exit skips
/// the destructors that would remove it (`mnemon demo | head` left its memory in the temp
/// folder).
static REMOVE_ON_EXIT: std::sync::Mutex<Option<std::path::PathBuf>> = std::sync::Mutex::new(None);

/// Remove `dir` (recursively) if a failed write to stdout ends the process before the command
/// returns; `None` forgets the folder (its owner removes it).
pub fn remove_on_exit(dir: Option<std::path::PathBuf>) {
    if let Ok(mut slot) = REMOVE_ON_EXIT.lock() {
        *slot = dir;
    }
}

/// A write to stdout failed: a closed pipe ends the process quietly, with the code of
/// [`CLOSED_PIPE_EXIT`] (0 unless the command found problems), anything else (a full disk, an
/// I/O error) is a failure, exit 3: 1 means the command found problems. A folder given to
/// [`remove_on_exit`] is removed first.
pub fn failed(e: std::io::Error) -> ! {
    if let Some(dir) = REMOVE_ON_EXIT.lock().ok().and_then(|mut slot| slot.take()) {
        let _ = std::fs::remove_dir_all(dir);
    }
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(CLOSED_PIPE_EXIT.load(std::sync::atomic::Ordering::Relaxed));
    }
    errln!("mnemon: cannot write to stdout: {e}");
    std::process::exit(super::EXIT_FAILURE);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_name_shows_every_control_character_escaped() {
        assert_eq!(name_for_terminal("plain/name.md"), "plain/name.md");
        assert_eq!(
            name_for_terminal("a\nb\tc\u{1b}.md"),
            "a\\u{a}b\\u{9}c\\u{1b}.md"
        );
    }

    /// `mnemon show` printed a description written over two lines as `one\u{a}two`.
    #[test]
    fn a_one_line_field_reads_line_ends_as_spaces() {
        assert_eq!(line_for_terminal("plain"), "plain");
        assert_eq!(
            line_for_terminal("line one\nline two\n"),
            "line one line two"
        );
        assert_eq!(line_for_terminal("a \r\n\tb"), "a  b");
        assert_eq!(
            line_for_terminal("a\u{1b}]0;x\u{7}b"),
            "a\\u{1b}]0;x\\u{7}b"
        );
    }

    #[test]
    fn control_characters_are_shown_escaped_colours_tabs_and_line_ends_kept() {
        HUMAN.store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(for_terminal("plain text\n".into()), "plain text\n");
        assert_eq!(for_terminal("crlf\r\nline".into()), "crlf\nline");
        assert_eq!(
            for_terminal("a\x1b[2Jb\x1b]0;pwned\x07c\rd\u{9b}e".into()),
            "a\\u{1b}[2Jb\\u{1b}]0;pwned\\u{7}c\\u{d}d\\u{9b}e"
        );
        assert_eq!(
            for_terminal("\x1b[1;32mok\x1b[0m\tx".into()),
            "\x1b[1;32mok\x1b[0m\tx"
        );
        // A lone ESC at the end, or one not followed by a colour, is escaped.
        assert_eq!(for_terminal("x\x1b".into()), "x\\u{1b}");
        assert_eq!(for_terminal("\x1b[12".into()), "\\u{1b}[12");
    }
}
