//! Opening a note file, only ever inside `memory/`.
//!
//! Every read of a note's bytes (the scan, `core`) goes through [`open_inside`]. The note is
//! opened without following a symlink in its last component (`O_NOFOLLOW`); when it is one, its
//! target is resolved and refused before any open if it lies outside `memory/`. Then the path the
//! kernel gives for the open descriptor is checked to lie inside `memory/`, and the descriptor
//! must be a regular file. That check is on what was opened, not on a path looked at earlier, so a
//! note swapped for a symlink to a file outside after the walk (or after it was indexed) is
//! refused, and so is one whose folder was swapped for such a link. A symlink whose target stays
//! inside `memory/` is read like the note it points to.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Why a note file was not opened. `Display` names the problem and the fix (the path is the
/// caller's to add).
#[derive(Debug)]
pub enum OpenNoteError {
    /// The file (or a folder on its path) is a symlink leading outside `memory/`.
    Outside { real: PathBuf },
    /// Not a regular file (a folder, a FIFO, a device, a socket).
    NotRegular { kind: &'static str },
    /// The relative path is not a path below `memory/` (absolute, `..`, empty).
    BadPath,
    /// The file could not be opened or stat'ed.
    Io(std::io::Error),
}

impl std::fmt::Display for OpenNoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenNoteError::Outside { real } => f.write_str(&outside_message(real)),
            OpenNoteError::NotRegular { kind } => f.write_str(&not_regular_message(kind)),
            OpenNoteError::BadPath => {
                f.write_str("not a path below memory/: it was skipped; rename the file")
            }
            OpenNoteError::Io(e) => write!(f, "cannot read the note ({e}); check its permissions"),
        }
    }
}

impl std::error::Error for OpenNoteError {}

/// The report for a note name that is a `kind` (see [`file_kind`]), not a regular file.
pub fn not_regular_message(kind: &str) -> String {
    format!("a {kind}, not a regular file: it was skipped; replace it with a Markdown file")
}

/// The report for a note or folder that is a symlink to `real`, outside `memory/`.
pub fn outside_message(real: &Path) -> String {
    format!(
        "symlink to {} outside memory/: it was skipped; copy the note into memory/ instead",
        real.display()
    )
}

/// Open the note `rel` (a `/`-separated path below `root`) for reading, with its metadata.
/// `root` must be the canonical path of `memory/` (`Path::canonicalize`): the real path of the
/// opened file is compared with it. Refuses a file whose real path lies outside `root` and
/// anything that is not a regular file; never blocks on a FIFO.
pub fn open_inside(root: &Path, rel: &str) -> Result<(File, Metadata), OpenNoteError> {
    let rel_path = Path::new(rel);
    if rel.is_empty()
        || !rel_path
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
    {
        return Err(OpenNoteError::BadPath);
    }
    let path = root.join(rel_path);
    let file = match open_no_follow(&path) {
        Ok(file) => file,
        Err(e) if is_symlink_refusal(&e) => {
            // The note is a symlink: where it leads is checked before anything there is opened.
            let target = path.canonicalize().map_err(OpenNoteError::Io)?;
            if !target.starts_with(root) {
                return Err(OpenNoteError::Outside { real: target });
            }
            open_no_follow(&target).map_err(OpenNoteError::Io)?
        }
        Err(e) => return Err(OpenNoteError::Io(e)),
    };
    let meta = file.metadata().map_err(OpenNoteError::Io)?;
    // What the descriptor is, wherever the path led: checked before a byte is read.
    let real = real_path_of(&file, &path, &meta).map_err(OpenNoteError::Io)?;
    if !real.starts_with(root) {
        return Err(OpenNoteError::Outside { real });
    }
    if !meta.is_file() {
        return Err(OpenNoteError::NotRegular {
            kind: file_kind(meta.file_type()),
        });
    }
    Ok((file, meta))
}

/// Open `path` for reading without following a symlink in its last component, without waiting
/// on a FIFO's writer (`O_NONBLOCK` changes nothing for a regular file's reads) and without
/// taking a terminal as the controlling one.
#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// Whether an open failed because the last component is a symlink (`O_NOFOLLOW`: `ELOOP`, or
/// `EMLINK` on FreeBSD).
#[cfg(unix)]
fn is_symlink_refusal(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ELOOP | libc::EMLINK))
}

#[cfg(not(unix))]
fn is_symlink_refusal(_: &std::io::Error) -> bool {
    false
}

/// The real path of the open `file` (opened through `path`, with metadata `meta`). On Linux the
/// kernel's own name for the descriptor; elsewhere (or without `/proc`) `path` resolved now,
/// accepted only when it still names the very file that is open.
fn real_path_of(file: &File, path: &Path, meta: &Metadata) -> std::io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            return Ok(real);
        }
    }
    let _ = file;
    let real = path.canonicalize()?;
    if identity(&std::fs::metadata(&real)?) != identity(meta) {
        return Err(std::io::Error::other(
            "the file changed while it was opened; run the command again",
        ));
    }
    Ok(real)
}

#[cfg(unix)]
fn identity(m: &Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(_: &Metadata) -> Option<(u64, u64)> {
    None
}

/// A word for what a file that is not a regular file is.
pub fn file_kind(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        return "folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "named pipe";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "device";
        }
    }
    "special file"
}

/// Read at most `limit` bytes of `reader`; `true` with them when the reader had more. Reads at
/// most `limit + 1` bytes, whatever the reader holds.
pub fn read_bounded(reader: impl Read, limit: usize) -> std::io::Result<(Vec<u8>, bool)> {
    let mut bytes = Vec::new();
    let wanted = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    reader.take(wanted).read_to_end(&mut bytes)?;
    let more = bytes.len() > limit;
    bytes.truncate(limit);
    Ok((bytes, more))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A memory folder (canonical) beside a folder outside it holding a secret.
    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("memory");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::fs::write(outside.join("secret.md"), "SECRET").expect("write");
        std::fs::write(root.join("sub/a.md"), "inside").expect("write");
        let root = root.canonicalize().expect("canonical");
        let outside = outside.canonicalize().expect("canonical");
        (tmp, root, outside)
    }

    fn read(root: &Path, rel: &str) -> Result<String, OpenNoteError> {
        let (file, _) = open_inside(root, rel)?;
        let (bytes, _) = read_bounded(file, 1 << 20).map_err(OpenNoteError::Io)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    #[test]
    fn a_symlink_leaving_memory_is_refused_and_one_staying_inside_is_read() {
        let (_tmp, root, outside) = setup();
        symlink(outside.join("secret.md"), root.join("pinned.md")).expect("link");
        symlink(root.join("sub/a.md"), root.join("inner.md")).expect("link");
        match read(&root, "pinned.md") {
            Err(OpenNoteError::Outside { real }) => {
                assert_eq!(real, outside.join("secret.md"));
            }
            other => panic!("{other:?}"),
        }
        let message = open_inside(&root, "pinned.md").err().map(|e| e.to_string());
        assert!(
            message
                .as_deref()
                .is_some_and(|m| m.contains("outside memory/") && m.contains("copy the note")),
            "{message:?}"
        );
        assert_eq!(read(&root, "inner.md").ok().as_deref(), Some("inside"));
        assert_eq!(read(&root, "sub/a.md").ok().as_deref(), Some("inside"));
    }

    #[test]
    fn a_chain_of_links_is_followed_to_its_end_and_judged_there() {
        let (_tmp, root, outside) = setup();
        symlink(root.join("sub/a.md"), root.join("one.md")).expect("link");
        symlink(root.join("one.md"), root.join("two.md")).expect("link");
        symlink(outside.join("secret.md"), root.join("sub/out.md")).expect("link");
        symlink(root.join("sub/out.md"), root.join("via.md")).expect("link");
        assert_eq!(read(&root, "two.md").ok().as_deref(), Some("inside"));
        assert!(matches!(
            read(&root, "via.md"),
            Err(OpenNoteError::Outside { .. })
        ));
    }

    #[test]
    fn a_folder_on_the_path_swapped_for_a_link_outside_is_refused() {
        let (_tmp, root, outside) = setup();
        std::fs::remove_dir_all(root.join("sub")).expect("rm");
        std::fs::write(outside.join("a.md"), "SECRET").expect("write");
        symlink(&outside, root.join("sub")).expect("link");
        assert!(
            matches!(read(&root, "sub/a.md"), Err(OpenNoteError::Outside { .. })),
            "read through a folder link leaving memory/"
        );
    }

    #[test]
    fn paths_that_are_not_below_memory_are_refused_before_any_open() {
        let (_tmp, root, _outside) = setup();
        for rel in [
            "../outside/secret.md",
            "/etc/passwd",
            "",
            "sub/../../outside/secret.md",
        ] {
            assert!(
                matches!(open_inside(&root, rel), Err(OpenNoteError::BadPath)),
                "{rel:?}"
            );
        }
    }

    #[test]
    fn a_fifo_or_a_folder_named_like_a_note_is_refused_without_blocking() {
        let (_tmp, root, _outside) = setup();
        let status = std::process::Command::new("mkfifo")
            .arg(root.join("pipe.md"))
            .status()
            .expect("mkfifo");
        assert!(status.success());
        std::fs::create_dir(root.join("dir.md")).expect("mkdir");
        match open_inside(&root, "pipe.md") {
            Err(OpenNoteError::NotRegular { kind }) => assert_eq!(kind, "named pipe"),
            other => panic!("{other:?}"),
        }
        match open_inside(&root, "dir.md") {
            Err(OpenNoteError::NotRegular { kind }) => assert_eq!(kind, "folder"),
            other => panic!("{other:?}"),
        }
    }

    /// A reader that counts the bytes handed out.
    struct Counting<R> {
        inner: R,
        read: usize,
    }

    impl<R: Read> Read for Counting<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.read += n;
            Ok(n)
        }
    }

    #[test]
    fn read_bounded_reads_one_byte_past_the_limit_at_most() {
        let mut big = Counting {
            inner: std::io::repeat(b'x').take(10 << 20),
            read: 0,
        };
        let (bytes, more) = read_bounded(&mut big, 1000).expect("read");
        assert_eq!((bytes.len(), more), (1000, true));
        assert_eq!(big.read, 1001);
        let (bytes, more) = read_bounded(&b"short"[..], 1000).expect("read");
        assert_eq!((bytes.as_slice(), more), (&b"short"[..], false));
        let (bytes, more) = read_bounded(&b"exact"[..], 5).expect("read");
        assert_eq!((bytes.as_slice(), more), (&b"exact"[..], false));
    }
}
