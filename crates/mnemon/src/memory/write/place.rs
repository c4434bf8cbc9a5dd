//! Reading and replacing one note file below `memory/` without ever following a symbolic link:
//! each folder is opened relative to the one above it (`openat` with `O_NOFOLLOW`), so a folder
//! swapped for a link between two steps is refused too.

use super::{Existing, sha256_of_reader};
use crate::error::{Error, NoteWriteError, Result};
use crate::notes;
use std::ffi::CString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The folder a note goes into, as far as it exists.
pub(super) struct Place {
    memory: PathBuf,
    /// The note's id, for errors.
    id: String,
    /// The deepest folder on the way that exists, open.
    dir: File,
    /// The id's folders, and how many of them `dir` is down.
    folders: Vec<String>,
    reached: usize,
}

fn name(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a name"))
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn openat(dir: &File, n: &str, flags: libc::c_int) -> io::Result<File> {
    let c = name(n)?;
    // SAFETY: `c` is a NUL-terminated string living across the call; the returned descriptor
    // is owned by the `File` alone.
    let fd = check(unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            flags | libc::O_CLOEXEC,
            0o666 as libc::c_uint,
        )
    })?;
    // SAFETY: `fd` was just opened and nothing else owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

const DIR_FLAGS: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;

/// Whether an open failed because the last component is a symbolic link (`O_NOFOLLOW`:
/// `ELOOP`, or `EMLINK` on FreeBSD).
fn is_link(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ELOOP | libc::EMLINK))
}

/// The error for the folder `rel` (relative to the memory folder) being a symbolic link: for
/// `memory/` itself the folder is unusable for writes whatever the id; a link further down is
/// on the way the id chose.
fn symlinked(memory: &Path, id: &str, rel: &str) -> Error {
    let path = memory.parent().unwrap_or(memory).join(rel);
    let target = std::fs::read_link(&path).unwrap_or_default();
    if rel == "memory" {
        return Error::Symlinked {
            path,
            target,
            fix: "Replace the link by the folder itself (move the notes into it) to write notes \
                  through mnemon."
                .into(),
        };
    }
    Error::Write {
        id: id.to_string(),
        reason: NoteWriteError::LinkedFolder {
            path: rel.to_string(),
            target,
        },
    }
}

/// The error of opening the folder `rel` (relative to the memory folder) for note `id`.
fn folder_error(memory: &Path, id: &str, rel: &str, e: io::Error) -> Error {
    // Linux answers `O_DIRECTORY | O_NOFOLLOW` on a link with ENOTDIR, not ELOOP: the open
    // is refused either way; a look at the name only picks the message.
    let abs = memory.parent().unwrap_or(memory).join(rel);
    let is_symlink = std::fs::symlink_metadata(&abs).is_ok_and(|m| m.file_type().is_symlink());
    if is_link(&e) || (e.raw_os_error() == Some(libc::ENOTDIR) && is_symlink) {
        return symlinked(memory, id, rel);
    }
    if e.raw_os_error() == Some(libc::ENOTDIR) {
        return Error::Write {
            id: id.to_string(),
            reason: NoteWriteError::NotAFolder {
                path: rel.to_string(),
            },
        };
    }
    Error::io(
        "open folder",
        memory.parent().unwrap_or(memory).join(rel),
        e,
    )
}

impl Place {
    /// Open `memory` and each of `folders` below it that exists.
    pub(super) fn open(memory: &Path, id: &str, folders: &[&str]) -> Result<Place> {
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(memory)
            .map_err(|e| folder_error(memory, id, "memory", e))?;
        let mut place = Place {
            memory: memory.to_path_buf(),
            id: id.to_string(),
            dir,
            folders: folders.iter().map(|s| s.to_string()).collect(),
            reached: 0,
        };
        while place.reached < place.folders.len() {
            match openat(&place.dir, &place.folders[place.reached], DIR_FLAGS) {
                Ok(d) => {
                    place.dir = d;
                    place.reached += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) => {
                    return Err(folder_error(memory, id, &place.rel(place.reached + 1), e));
                }
            }
        }
        Ok(place)
    }

    /// `memory/` and the first `n` folders, `/`-joined.
    fn rel(&self, n: usize) -> String {
        let mut s = String::from("memory");
        for f in &self.folders[..n] {
            s.push('/');
            s.push_str(f);
        }
        s
    }

    /// The note file `file_name` in the note's folder as it is now, if it exists. `path` is
    /// its path for messages.
    pub(super) fn read_note(&self, file_name: &str, path: &str) -> Result<Option<Existing>> {
        if self.reached < self.folders.len() {
            return Ok(None);
        }
        let abs = self.memory.parent().unwrap_or(&self.memory).join(path);
        let file = match openat(
            &self.dir,
            file_name,
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
        ) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) if is_link(&e) => return Err(self.not_regular(path, "symbolic link")),
            Err(e) => return Err(Error::io("open", abs, e)),
        };
        let meta = file.metadata().map_err(|e| Error::io("stat", &abs, e))?;
        if !meta.is_file() {
            return Err(self.not_regular(path, notes::file_kind(meta.file_type())));
        }
        let (sha256, head) = sha256_of_reader(&file, notes::MAX_NOTE_BYTES)
            .map_err(|e| Error::io("read", &abs, e))?;
        let parsed = notes::parse_note("", &head);
        let created_s = parsed.meta.created_s;
        let (kept, frontmatter_problems) = match super::draft::Kept::of(&head, parsed) {
            Ok(kept) => (kept, None),
            Err(problems) => (None, Some(problems)),
        };
        Ok(Some(Existing {
            sha256,
            created_s,
            frontmatter_problems,
            kept,
        }))
    }

    /// Write `bytes` as `file_name` in the note's folder, creating the folders missing on
    /// the way: a temp file, fsync, rename over the note, fsync of the folder (and of each
    /// folder a new folder was made in).
    pub(super) fn write(&mut self, file_name: &str, path: &str, bytes: &[u8]) -> Result<()> {
        let root = self.memory.parent().unwrap_or(&self.memory).to_path_buf();
        let mut created: Vec<String> = Vec::new();
        let written = self.write_creating(file_name, path, bytes, &root, &mut created);
        if written.is_err() {
            // A write that failed (a full disk) leaves none of the folders it made behind:
            // empty, they would be litter in `memory/`. Only empty ones go; best effort.
            for rel in created.iter().rev() {
                let _ = std::fs::remove_dir(root.join(rel));
            }
        }
        written
    }

    /// [`Place::write`], naming in `created` each folder it made.
    fn write_creating(
        &mut self,
        file_name: &str,
        path: &str,
        bytes: &[u8],
        root: &Path,
        created: &mut Vec<String>,
    ) -> Result<()> {
        while self.reached < self.folders.len() {
            let part = self.folders[self.reached].clone();
            let rel = self.rel(self.reached + 1);
            let c = name(&part).map_err(|e| Error::io("create folder", root.join(&rel), e))?;
            // SAFETY: `c` is a NUL-terminated string living across the call.
            match check(unsafe { libc::mkdirat(self.dir.as_raw_fd(), c.as_ptr(), 0o777) }) {
                Ok(_) => {
                    created.push(rel.clone());
                    self.dir.sync_all().map_err(|e| {
                        Error::io("fsync folder", root.join(self.rel(self.reached)), e)
                    })?
                }
                // Made by another writer meanwhile: opened and checked like any other.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io("create folder", root.join(&rel), e)),
            }
            self.dir = openat(&self.dir, &part, DIR_FLAGS)
                .map_err(|e| folder_error(&self.memory, &self.id, &rel, e))?;
            self.reached += 1;
        }
        let abs = root.join(path);
        let tmp = crate::fs::temp_path(Path::new("note"));
        let tmp = tmp
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(".tmp-note")
            .to_string();
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        let replaced = self.owner_and_mode(file_name);
        let mut file =
            openat(&self.dir, &tmp, flags).map_err(|e| Error::io("create temp file", &abs, e))?;
        keep_owner_and_mode(&file, replaced);
        let written = file
            .write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| Error::io("write", &abs, e));
        drop(file);
        let renamed = written.and_then(|()| {
            let (from, to) = (name(&tmp), name(file_name));
            let (from, to) = match (from, to) {
                (Ok(f), Ok(t)) => (f, t),
                (Err(e), _) | (_, Err(e)) => {
                    return Err(Error::io("rename into place", &abs, e));
                }
            };
            let fd = self.dir.as_raw_fd();
            // SAFETY: both names are NUL-terminated strings living across the call.
            check(unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) })
                .map(|_| ())
                .map_err(|e| Error::io("rename into place", &abs, e))
        });
        if let Err(e) = renamed {
            if let Ok(c) = name(&tmp) {
                // SAFETY: `c` is a NUL-terminated string living across the call.
                unsafe { libc::unlinkat(self.dir.as_raw_fd(), c.as_ptr(), 0) };
            }
            return Err(e);
        }
        self.dir
            .sync_all()
            .map_err(|e| Error::io("fsync folder", abs.parent().unwrap_or(root), e))
    }
}

/// The owner, group and permission bits of a note being replaced.
#[derive(Debug, Clone, Copy)]
struct OwnerAndMode {
    uid: u32,
    gid: u32,
    mode: u32,
}

/// Give the replacement `file` the owner, group and permission bits of the note it replaces (as
/// an editor saving by rename does): a note kept private (`chmod 600`) stays private, and one
/// owned by its user stays theirs when root writes it. Best effort: when the owner cannot be
/// given (another user's note, not root; an owner a user namespace does not map), the file is
/// left as this process makes it, since the old mode on a file of another owner could lock the
/// note's owner out of it.
fn keep_owner_and_mode(file: &File, replaced: Option<OwnerAndMode>) {
    let Some(r) = replaced else {
        return;
    };
    // Before the mode: a change of owner clears set-id bits.
    if std::os::unix::fs::fchown(file, Some(r.uid), Some(r.gid)).is_ok() {
        use std::os::unix::fs::PermissionsExt;
        let _ = file.set_permissions(std::fs::Permissions::from_mode(r.mode & 0o777));
    }
}

impl Place {
    /// The owner and mode of the regular file `file_name` in the note's folder, if there is one.
    // `mode_t` is `u32` on Linux, `u16` on macOS.
    #[allow(clippy::useless_conversion)]
    fn owner_and_mode(&self, file_name: &str) -> Option<OwnerAndMode> {
        let c = name(file_name).ok()?;
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: `c` is a NUL-terminated string and `st` a buffer for one `stat`, both living
        // across the call; `st` is read only when the call succeeded.
        let st = unsafe {
            check(libc::fstatat(
                self.dir.as_raw_fd(),
                c.as_ptr(),
                st.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            ))
            .ok()?;
            st.assume_init()
        };
        (st.st_mode & libc::S_IFMT == libc::S_IFREG).then_some(OwnerAndMode {
            uid: st.st_uid,
            gid: st.st_gid,
            mode: u32::from(st.st_mode) & 0o7777,
        })
    }

    fn not_regular(&self, path: &str, kind: &'static str) -> Error {
        Error::Write {
            id: self.id.clone(),
            reason: NoteWriteError::NotRegular {
                path: path.to_string(),
                kind,
            },
        }
    }
}
