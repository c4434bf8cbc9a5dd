//! This process's segment writer: appends, the durability policy, a failed append cut back to the
//! last acknowledged batch, and new segments created under a temporary name.

use super::*;
use crate::error::{Error, Result};
use crate::events::event::{Event, EventKind};
use crate::events::segment::{self, FrameSeal, Header};
use std::path::{Path, PathBuf};

pub(super) struct Writer {
    pub(super) file: Box<dyn FsFile>,
    pub(super) id: String,
    pub(super) path: PathBuf,
    /// The segment's salt, from its header: every frame appended is sealed with it.
    pub(super) seal: FrameSeal,
    pub(super) buf: Vec<u8>,
    /// Bytes of the file that hold its header and acknowledged events: a failed append is cut
    /// back to this length.
    pub(super) len: u64,
    /// Length of the header: a segment no longer than this holds no events.
    pub(super) header_len: u64,
    /// Set when a failed append could not be cut back: the file may hold bytes past `len`, which
    /// are removed before anything else is written or synced.
    pub(super) unclean: Option<String>,
    /// Held for the writer's life: compaction never touches a segment that is still written.
    pub(super) _live: Option<crate::fs::LockGuard>,
}

/// This process's segments.
#[derive(Default)]
pub(super) struct Slot {
    /// The segment appends go to (created at the first event).
    pub(super) current: Option<Writer>,
    /// Segments left behind after a failed append (cut back to their acknowledged events): the
    /// next [`EventLog::sync`] makes them durable and lets them go.
    pub(super) retired: Vec<Writer>,
    /// Seq of the next event: it continues across this process's segments, so no two events of
    /// the session share a (timestamp, seq).
    pub(super) seq: u64,
    /// `n` of the next segment's name: a process that starts several segments within one
    /// millisecond (a failing disk) never runs out of names.
    pub(super) next_n: u32,
}

/// Segments left behind by failed appends that wait for the next sync; past this many the oldest
/// is fsynced and let go at once (a disk that keeps filling and emptying holds no more files open).
pub(super) const MAX_RETIRED_SEGMENTS: usize = 8;

/// Bound on the names tried for a new segment (`n` of the file name).
pub(super) const MAX_NAME_ATTEMPTS: u32 = 16;

/// Index of the QueryEvent that starts the last batch of `events` when that batch ends before
/// its `result_count` RecallHits: everything after the QueryEvent belongs to it (its hits and
/// feedback, by qid), and fewer hits than announced were read.
pub(super) fn unfinished_recall(events: &[(u64, Event)]) -> Option<usize> {
    let q = events
        .iter()
        .rposition(|(_, e)| matches!(e.kind, EventKind::Query { .. }))?;
    let EventKind::Query {
        qid, result_count, ..
    } = &events[q].1.kind
    else {
        return None;
    };
    let mut hits = 0u64;
    for (_, e) in &events[q + 1..] {
        match &e.kind {
            EventKind::RecallHit { qid: of, .. } | EventKind::Feedback { qid: of, .. }
                if of == qid =>
            {
                hits += u64::from(matches!(e.kind, EventKind::RecallHit { .. }));
            }
            _ => return None,
        }
    }
    (hits < u64::from(*result_count)).then_some(q)
}

/// What a user reads when events could not be written: nothing of them was kept, and what to do.
pub(super) fn not_recorded(what: &str, e: &std::io::Error) -> String {
    let advice = match e.kind() {
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
            "the disk is full: free space, and later events are recorded again without a restart"
        }
        std::io::ErrorKind::PermissionDenied => {
            "this process may not write in events/: check the folder's owner and mode (ls -ld), \
             then run the command again"
        }
        std::io::ErrorKind::ReadOnlyFilesystem => {
            "the file system is read-only: remount it read-write, then run the command again"
        }
        std::io::ErrorKind::NotADirectory => {
            "events/ is not a folder: move that file away, and later events are recorded again"
        }
        _ => "the next event is tried again, in a new segment",
    };
    format!("{what} failed ({e}); nothing of these events was recorded; {advice}")
}

/// Cut `w`'s file back to its acknowledged events (made durable again under
/// `SyncPolicy::Always`).
pub(super) fn cut_back(w: &mut Writer, sync: SyncPolicy) -> std::io::Result<()> {
    w.file.truncate(w.len)?;
    if sync == SyncPolicy::Always {
        w.file.sync()?;
    }
    Ok(())
}

impl EventLog {
    pub(super) fn lock_writer(&self) -> Result<std::sync::MutexGuard<'_, Slot>> {
        self.follow_fork();
        if self
            .writer_lost_in_fork
            .load(std::sync::atomic::Ordering::Acquire)
        {
            return Err(Error::Poisoned {
                path: self.events_dir.clone(),
                reason: "this process was forked while another of its parent's threads was \
                         recording events, so it cannot record any; record in the parent, or \
                         start workers with multiprocessing's 'spawn' or 'forkserver' start \
                         method"
                    .into(),
            });
        }
        self.writer.lock().map_err(|_| Error::Poisoned {
            path: self.events_dir.clone(),
            reason: "a thread panicked while appending".into(),
        })
    }

    /// Leave the current segment after a failed append that was cut back: one holding
    /// acknowledged events waits in `retired` for the next sync; one holding none is removed. Its
    /// offsets are never written again, so a reader that looked at the failed bytes meanwhile
    /// never finds other events where it left off.
    pub(super) fn retire(&self, slot: &mut Slot) {
        if let Some(w) = slot.current.take() {
            if w.len > w.header_len {
                self.keep_for_sync(slot, w);
            } else {
                let path = w.path.clone();
                drop(w);
                // A header-only segment left behind is read as holding nothing.
                let _ = self.fs.remove(&path);
            }
        }
    }

    /// Keep a segment this process no longer writes for the next sync (its acknowledged events
    /// must be fsynced like the rest); past [`MAX_RETIRED_SEGMENTS`] the oldest is fsynced now.
    fn keep_for_sync(&self, slot: &mut Slot, w: Writer) {
        slot.retired.push(w);
        if slot.retired.len() > MAX_RETIRED_SEGMENTS {
            let mut oldest = slot.retired.remove(0);
            if self.sync != SyncPolicy::Never
                && let Err(e) = oldest.file.sync()
            {
                self.notice(format!(
                    "event segment {}: fsync failed ({e}); its events are kept and counted but \
                     may not survive a power loss",
                    oldest.path.display()
                ));
            }
        }
    }

    /// Cut back what an earlier failed append left in the current segment, then retire it.
    pub(super) fn repair(&self, slot: &mut Slot) -> Result<()> {
        let Some(w) = slot.current.as_mut() else {
            return Ok(());
        };
        let Some(why) = w.unclean.clone() else {
            return Ok(());
        };
        if let Err(e) = cut_back(w, self.sync) {
            return Err(Error::EventLog {
                path: w.path.clone(),
                message: format!(
                    "bytes of an earlier failed write ({why}) are still to be removed and that \
                     failed again ({e}); nothing of these events was recorded; free disk space \
                     or fix the error: the next event tries again"
                ),
                cause: Some(e.kind()),
            });
        }
        self.retire(slot);
        Ok(())
    }

    /// Leave the current segment when its file is no longer what this process wrote: removed
    /// (`rm`, `git clean`, a sync tool) or cut or grown by someone else. Appending to a removed
    /// file succeeds and records nothing anyone will read; the events already in it are lost,
    /// which is said, and the next ones go to a new segment.
    fn leave_if_gone(&self, slot: &mut Slot) {
        let Some(w) = slot.current.as_ref() else {
            return;
        };
        let found = self.fs.len(&w.path);
        if matches!(found, Ok(len) if len == w.len) {
            return;
        }
        let removed = matches!(&found, Err(e) if e.kind() == std::io::ErrorKind::NotFound);
        let what = match found {
            Err(_) if removed => "was removed while this process wrote to it: the events \
                                  recorded only in it are lost from the log"
                .to_string(),
            Err(e) => format!("cannot be checked ({e})"),
            Ok(len) => format!(
                "holds {len} bytes where this process wrote {}: another program changed it",
                w.len
            ),
        };
        self.notice(format!(
            "event segment {} {what}; later events go to a new segment (keep event segments \
             out of `git clean` and sync tools that delete files)",
            w.path.display()
        ));
        if let Some(w) = slot.current.take()
            && !removed
        {
            // Still there: what this process acknowledged in it is fsynced at the next sync, as
            // a retired segment's is (not `retire`, which removes a segment of bare header:
            // here another program's bytes may follow it).
            self.keep_for_sync(slot, w);
        }
    }

    /// Append events (one batch: a recall's query and hits, or one tag), fold them, and make them
    /// visible to other processes (flushed to the OS; fsynced under `SyncPolicy::Always`).
    ///
    /// A batch is recorded whole or not at all: when the write (or its fsync) fails, the
    /// segment is cut back to the batch's start and the error is returned; the next append goes
    /// to a new segment, so writes resume by themselves once the cause (a full disk) is gone.
    pub fn append(&self, kinds: Vec<EventKind>) -> Result<()> {
        self.append_after(kinds, i64::MIN)
    }

    /// [`EventLog::append`] with a timestamp above `after_ms` even when the clock is not: an
    /// importance tag must win over the tag it replaces, which a machine whose clock ran ahead
    /// may have dated in the future (last-writer-wins by timestamp would keep that one until
    /// the clock caught up).
    pub fn append_after(&self, kinds: Vec<EventKind>, after_ms: i64) -> Result<()> {
        let mut guard = self.lock_writer()?;
        let slot = &mut *guard;
        self.repair(slot)?;
        self.leave_if_gone(slot);
        if slot.current.is_none() {
            let (w, n) = self.create_writer(slot.next_n)?;
            slot.current = Some(w);
            slot.next_n = n + 1;
        }
        let Some(w) = slot.current.as_mut() else {
            return Ok(());
        };
        let ts_ms = self.stamp_now_ms().max(after_ms.saturating_add(1));
        w.buf.clear();
        let mut batch = Vec::with_capacity(kinds.len());
        for kind in kinds {
            let e = Event {
                ts_ms,
                seq: slot.seq,
                kind,
            };
            slot.seq += 1;
            segment::encode_frame(&e, w.seal, &mut w.buf);
            batch.push(e);
        }
        let mut result = w.file.write_all(&w.buf).map_err(|e| ("write", e));
        if result.is_ok() && self.sync == SyncPolicy::Always {
            result = w.file.sync().map_err(|e| ("fsync", e));
        }
        let batch_len = w.buf.len() as u64;
        w.buf.clear();
        if let Err((op, e)) = result {
            let path = w.path.clone();
            let mut message = not_recorded(op, &e);
            match cut_back(w, self.sync) {
                Ok(()) => self.retire(slot),
                Err(cut) => {
                    // Removed before the next write or sync (`repair`).
                    w.unclean = Some(e.to_string());
                    message.push_str(&format!(
                        " (its partial bytes could not be removed yet: {cut}; they will be)"
                    ));
                }
            }
            return Err(Error::EventLog {
                path,
                message,
                cause: Some(e.kind()),
            });
        }
        w.len += batch_len;
        let (id, len) = (w.id.clone(), w.len);
        if let Ok(mut st) = self.state.write() {
            for e in &batch {
                st.delta.apply(&self.current_session(), e);
            }
            if let Some(m) = st.marks.get_mut(&id) {
                *m = len;
            } else {
                st.marks.insert(id, len);
            }
            if batch
                .iter()
                .any(|e| matches!(&e.kind, EventKind::Feedback { query, .. } if !query.trim().is_empty()))
            {
                st.feedback_version += 1;
            }
            if batch.iter().any(|e| e.kind.changes_nodes()) {
                st.bump(Change::Events(batch));
            }
        }
        Ok(())
    }

    /// Whether the events folder is gone.
    fn folder_gone(&self) -> bool {
        matches!(self.fs.list(&self.events_dir), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
    }

    /// The memory folder holding `events/`, when it is gone too.
    fn memory_gone(&self) -> Option<&std::path::Path> {
        let root = self.events_dir.parent()?;
        matches!(self.fs.list(root), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
            .then_some(root)
    }

    /// A new segment for this process: its header is written under a hidden temporary name and
    /// the file is then linked under its final name (never replacing one), so no reader ever
    /// lists a segment without its header.
    pub(super) fn create_writer(&self, first_n: u32) -> Result<(Writer, u32)> {
        let created_ms = now_ms();
        // Format version 2: a fresh random salt seals every frame of this segment.
        let session = self.current_session();
        let header = Header::new(session.to_string(), created_ms);
        let seal = header.seal;
        let header = header.encode();
        let mut remade = false;
        let mut attempt = first_n;
        while attempt < first_n.saturating_add(MAX_NAME_ATTEMPTS) {
            let id = format!(
                "{created_ms:013}-{}-{}-{attempt}",
                session,
                std::process::id()
            );
            if compressed_id_exists(self.fs.as_ref(), &self.events_dir, &id) {
                attempt += 1;
                continue;
            }
            let path = self.events_dir.join(format!("{id}{SEGMENT_EXT}"));
            match self.publish_segment(&path, &header) {
                Ok((file, live)) => {
                    let w = Writer {
                        file,
                        id,
                        path,
                        seal,
                        buf: Vec::with_capacity(4096),
                        len: header.len() as u64,
                        header_len: header.len() as u64,
                        unclean: None,
                        _live: live,
                    };
                    return Ok((w, attempt));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => attempt += 1,
                // `events/` removed under a long-lived process (`git clean`, `git stash -u`):
                // made again, as opening the memory would, or every later event would fail.
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound
                        && !remade
                        && self.folder_gone() =>
                {
                    // The whole memory folder gone (deleted, moved) is not `git clean`: making
                    // `events/` again would leave a folder of events with no notes beside it
                    // where the user removed everything.
                    if let Some(root) = self.memory_gone() {
                        return Err(Error::EventLog {
                            path: root.to_path_buf(),
                            message:
                                "the memory folder was removed or moved while this process had \
                                      it open: the event was not recorded, and no folder is made \
                                      again in its place; open the memory where it is now, or \
                                      make a new one with `mnemon init`"
                                    .to_string(),
                            cause: Some(e.kind()),
                        });
                    }
                    self.fs
                        .create_dir_all(&self.events_dir)
                        .map_err(|e| Error::EventLog {
                            path: self.events_dir.clone(),
                            message: not_recorded("making the removed events folder again", &e),
                            cause: Some(e.kind()),
                        })?;
                    self.notice(format!(
                        "{} was removed while this process had the memory open (the events \
                         recorded in it went with it); made it again and went on recording",
                        self.events_dir.display()
                    ));
                    remade = true;
                }
                Err(e) => {
                    return Err(Error::EventLog {
                        path,
                        message: not_recorded("creating the segment", &e),
                        cause: Some(e.kind()),
                    });
                }
            }
        }
        Err(Error::InvalidArgument {
            what: "session",
            message: "could not find a free segment file name".into(),
        })
    }

    /// Create the segment `path` holding `header` (format-spec/events.md, "Creating a
    /// segment"): written and locked under a temporary name (`crate::fs::temp_path`), then linked as `path`
    /// (`AlreadyExists` when it is taken), then the temporary name removed. Nothing is left
    /// behind on failure.
    pub(super) fn publish_segment(
        &self,
        path: &Path,
        header: &[u8],
    ) -> std::io::Result<(Box<dyn FsFile>, Option<crate::fs::LockGuard>)> {
        let fs = self.fs.as_ref();
        let tmp = crate::fs::temp_path(path);
        let mut file = fs.create_new(&tmp)?;
        // The lock belongs to the file, so it holds under the final name too.
        let staged = fs.try_lock(&tmp).and_then(|live| {
            file.write_all(header)?;
            if self.sync == SyncPolicy::Always {
                file.sync()?;
            }
            Ok(live)
        });
        let live = match staged {
            Ok(live) => live,
            Err(e) => {
                drop(file);
                let _ = fs.remove(&tmp);
                return Err(e);
            }
        };
        match fs.link_new(&tmp, path) {
            Ok(()) => {
                // A name left by a failure here is a second name of the segment: compaction
                // removes stale temporaries.
                let _ = fs.remove(&tmp);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                drop((file, live));
                let _ = fs.remove(&tmp);
                return Err(e);
            }
            Err(_) => {
                // No hard links on this file system: create the segment under its final name.
                // Until its header is written readers take it as empty, never as damage.
                drop((file, live));
                let _ = fs.remove(&tmp);
                return self.create_in_place(path, header);
            }
        }
        if self.sync == SyncPolicy::Always {
            fs.sync_dir(&self.events_dir)?;
        }
        Ok((file, live))
    }

    /// [`EventLog::publish_segment`] where the file system has no hard links.
    pub(super) fn create_in_place(
        &self,
        path: &Path,
        header: &[u8],
    ) -> std::io::Result<(Box<dyn FsFile>, Option<crate::fs::LockGuard>)> {
        let fs = self.fs.as_ref();
        let mut file = fs.create_new(path)?;
        let written = fs.try_lock(path).and_then(|live| {
            file.write_all(header)?;
            if self.sync == SyncPolicy::Always {
                file.sync()?;
                fs.sync_dir(&self.events_dir)?;
            }
            Ok(live)
        });
        match written {
            Ok(live) => Ok((file, live)),
            Err(e) => {
                drop(file);
                let _ = fs.remove(path);
                Err(e)
            }
        }
    }

    /// Make this process's appends durable (fsync of its segments and of `events/`).
    ///
    /// A failed fsync is reported naming the segment; that segment takes no more events (a later
    /// fsync of it could report success for data the kernel already dropped), so later events go
    /// to a new segment.
    pub fn sync(&self) -> Result<()> {
        let mut guard = self.lock_writer()?;
        let slot = &mut *guard;
        self.repair(slot)?;
        if slot.current.is_none() && slot.retired.is_empty() {
            return Ok(());
        }
        let mut failed: Option<(PathBuf, std::io::Error)> = None;
        for mut w in std::mem::take(&mut slot.retired) {
            if let Err(e) = w.file.sync() {
                failed.get_or_insert((w.path.clone(), e));
            }
        }
        if let Some(w) = slot.current.as_mut()
            && let Err(e) = w.file.sync()
        {
            failed.get_or_insert((w.path.clone(), e));
            slot.current = None;
        }
        if let Some((path, e)) = failed {
            return Err(Error::EventLog {
                path,
                message: format!(
                    "fsync failed ({e}): its events are kept and counted, but those written since \
                     it was last made durable may not survive a power loss; later events go to a \
                     new segment"
                ),
                cause: Some(e.kind()),
            });
        }
        self.fs
            .sync_dir(&self.events_dir)
            .map_err(|e| Error::io("fsync folder", &self.events_dir, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-shot CLI call that could not write in events/ was told "the next event is tried
    /// again": there is no next event in that process. The fix depends on the cause.
    #[test]
    fn events_not_recorded_say_the_fix_for_their_cause() {
        let say = |kind| not_recorded("append to events/x.seg", &std::io::Error::from(kind));
        assert!(say(std::io::ErrorKind::PermissionDenied).contains("owner and mode"));
        assert!(say(std::io::ErrorKind::ReadOnlyFilesystem).contains("remount"));
        assert!(say(std::io::ErrorKind::StorageFull).contains("free space"));
        for s in [
            say(std::io::ErrorKind::PermissionDenied),
            say(std::io::ErrorKind::StorageFull),
        ] {
            assert!(s.starts_with("append to events/x.seg failed ("), "{s}");
            assert!(s.contains("nothing of these events was recorded"), "{s}");
        }
    }
}
