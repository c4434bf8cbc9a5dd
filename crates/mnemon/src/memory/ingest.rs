//! The index pipeline: scan -> store -> lexical index -> synthesized edges, for a whole
//! memory (`index`) or the notes a watcher named (`index_paths`).

use super::lexical::LEXICAL_CHUNK_NOTES;
use super::synthesis::{BUILD_CHUNK_NOTES, Synthesized};
use super::*;
use crate::background::{FREE_LATER_MIN_ITEMS, FREE_LATER_MIN_NOTES, free_later};
use crate::dedup::Sketch;
use crate::error::Result;
use crate::index::LexicalIndex;
use crate::index::segment::writer::WriteError;
use crate::scan::{self, ScanError};
use crate::store::{Batch, BatchWriter, WriteLock};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// From this many changed notes, a batch's note rows are written on a thread of their own while
/// the lexical index and the edges are computed (below it, the thread costs more than it saves).
pub(super) const OVERLAP_STORE_MIN_NOTES: usize = 512;

/// Largest batch whose notes' near-duplicate sketches are computed while it is indexed: the
/// updates of a watcher, a write or a day's edits. A bigger batch (a cold build) leaves them to
/// the first write that needs them ([`Memory::fill_sketches`]): a sketch costs a pass over the
/// note's text, a noticeable share of a build, and most memories are built once and then
/// written to a note at a time.
pub const SKETCH_AT_INDEX_MAX_NOTES: usize = 256;

/// What `index` did. An empty `changed` list means nothing changed.
#[derive(Debug, Clone, Serialize)]
pub struct IndexReport {
    /// Notes in the index after this scan.
    pub notes: u64,
    /// Edges in the index after this scan, explicit and synthesized.
    pub edges: u64,
    /// Ids added or changed by this scan.
    pub changed: Vec<String>,
    /// Ids that left the corpus in this scan.
    pub removed: Vec<String>,
    /// Every current problem: walk errors, then per-note problems.
    pub errors: Vec<ScanError>,
    /// Wall time of the whole scan.
    pub elapsed_ms: u64,
    /// Where the time went (human output and benches; not in the `--json` shape).
    #[serde(skip)]
    pub phases: IndexPhases,
}

/// Milliseconds per phase of one [`Memory::index`].
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct IndexPhases {
    /// Load the manifest, walk, stat, read and parse changed notes.
    pub scan_ms: u64,
    /// Tokenize and write lexical segments (and merges). A cold build writes its segment's
    /// dictionary and publishes it beside the synthesis: that time counts as synthesis.
    pub lexical_ms: u64,
    /// Synthesized edges: slug clusters, token co-occurrence, derived_from.
    pub synthesize_ms: u64,
    /// The store's write transaction.
    pub store_ms: u64,
}

/// The lexical index before a batch, the index with it, and each upsert's synthesized edges.
pub(super) type Indexed = (Arc<LexicalIndex>, Arc<LexicalIndex>, Vec<Synthesized>);

pub(super) fn ms_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Memory {
    /// Bring the index up to date with `memory/` (incremental).
    pub fn index(&self) -> Result<IndexReport> {
        if self.store.read_only().is_some() {
            return Err(self.store.read_only_refusal("indexing the notes"));
        }
        let started = Instant::now();
        let lock = self.write_lock()?;
        self.index_held(&lock, started)
    }

    /// Bring the index up to date before answering: [`Memory::index`], or, when this process
    /// may only read the index ([`Memory::read_only`]), a scan that changes nothing and says how
    /// many notes changed since the index was written (those are answered as indexed). Returns
    /// the report of the index, if one ran.
    pub fn index_if_writable(&self) -> Result<Option<IndexReport>> {
        if self.store.read_only().is_none() {
            return self.index().map(Some);
        }
        let (mut outcome, _manifest) =
            scan::scan_while_loading(&self.dir.memory(), || self.store.read()?.manifest())?;
        outcome.check_complete()?;
        let stale = outcome.batch.upserts.len() + outcome.batch.removals.len();
        self.stale_notes
            .store(stale, std::sync::atomic::Ordering::Release);
        if stale > 0 {
            let (notes, they) = if stale == 1 {
                ("note", "it is")
            } else {
                ("notes", "they are")
            };
            self.notice(format!(
                "{stale} {notes} changed since the index was written: {they} answered as \
                 indexed until `mnemon index` runs where the index is writable"
            ));
        }
        self.indexed
            .store(true, std::sync::atomic::Ordering::Release);
        Ok(None)
    }

    /// [`Memory::index`] with the store's write lock already held by the caller (the lock is
    /// not reentrant: taking it again in this process would wait forever).
    pub(super) fn index_held(&self, _lock: &WriteLock, started: Instant) -> Result<IndexReport> {
        self.notes_folder_present()?;
        let t = Instant::now();
        let (mut outcome, manifest) =
            scan::scan_while_loading(&self.dir.memory(), || self.store.read()?.manifest())?;
        outcome.check_complete()?;
        let big = manifest.len() >= FREE_LATER_MIN_ITEMS;
        free_later(manifest, big);
        let phases = IndexPhases {
            scan_ms: ms_since(t),
            ..IndexPhases::default()
        };
        let report = self.apply_scan(outcome, phases, started)?;
        self.indexed
            .store(true, std::sync::atomic::Ordering::Release);
        Ok(report)
    }

    /// Refuse to index (or write a note) when `memory/` itself is gone (moved or deleted while
    /// this process, a server or a watcher, had the folder open): a scan would find no note and
    /// remove every one from the index, and recall would answer nothing without a word.
    pub(super) fn notes_folder_present(&self) -> Result<()> {
        let memory = self.dir.memory();
        match std::fs::metadata(&memory) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(Error::io(
                "read folder",
                &memory,
                std::io::Error::other(
                    "not a folder: a file stands where the notes folder belongs; move it away \
                     and put the notes folder back (the index is kept as it was)",
                ),
            )),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io("read folder", &memory, e))
            }
            Err(_) => Err(Error::NotAMemoryFolder {
                path: self.dir.root().to_path_buf(),
                fix: format!(
                    "{} is gone (moved or deleted while this process had the folder open): the \
                     index is kept as it was; put the notes folder back",
                    memory.display()
                ),
            }),
        }
    }

    /// Bring the index up to date for `paths` only (what a file watcher reported: notes added,
    /// changed or removed), without walking `memory/`: a one-note update costs the note, not the
    /// corpus. Falls back to [`Memory::index`] when a path is a folder or a symlink.
    pub fn index_paths(&self, paths: &[std::path::PathBuf]) -> Result<IndexReport> {
        let started = Instant::now();
        let lock = self.write_lock()?;
        self.index_paths_held(&lock, paths, started, false)
    }

    /// [`Memory::index_paths`] with the store's write lock already held by the caller. With
    /// `reread`, every note named is read and parsed whatever its size and mtime say (a note
    /// this process just wrote: on a file system with coarse mtimes, a replacement of the same
    /// size can keep both).
    pub(super) fn index_paths_held(
        &self,
        lock: &WriteLock,
        paths: &[std::path::PathBuf],
        started: Instant,
        reread: bool,
    ) -> Result<IndexReport> {
        self.notes_folder_present()?;
        let t = Instant::now();
        let scanned = {
            let reader = self.store.read()?;
            let entry_of = |rel: &str| {
                if reread {
                    None
                } else {
                    reader.manifest_entry(rel).ok().flatten()
                }
            };
            // A failed read calls it a folder: the full walk decides then.
            let notes_under = |rel: &str| reader.manifest_has_notes_under(rel).unwrap_or(true);
            scan::scan_paths(&self.dir.memory(), paths, &entry_of, &notes_under)
        };
        let Some(mut outcome) = scanned else {
            return self.index_held(lock, started);
        };
        outcome.check_complete()?;
        let phases = IndexPhases {
            scan_ms: ms_since(t),
            ..IndexPhases::default()
        };
        self.apply_scan(outcome, phases, started)
    }

    /// Write what a scan found: lexical segments first, then synthesized edges and the store.
    pub(super) fn apply_scan(
        &self,
        mut outcome: scan::ScanOutcome,
        mut phases: IndexPhases,
        started: Instant,
    ) -> Result<IndexReport> {
        if !outcome.parsed.is_empty() || !outcome.removed.is_empty() {
            if outcome.parsed.len() <= SKETCH_AT_INDEX_MAX_NOTES {
                for (u, p) in outcome.batch.upserts.iter_mut().zip(&outcome.parsed) {
                    u.sketch = Some(Sketch::of_parsed(p));
                }
            }
            // Lexical first, then the store: a crash in between leaves the store's manifest
            // old, so the next scan redoes both (the lexical update is idempotent). The store's
            // transaction is begun early and, when the batch is big, its note rows are written
            // while the lexical index is built, on a core of the build's pool when one is free
            // (`lexical_segment`'s `beside`: a one-chunk build writes them beside the fold and the
            // dictionary, not while its notes are tokenized). They are invisible until the
            // commit, which comes last.
            let overlap = outcome.batch.upserts.len() >= OVERLAP_STORE_MIN_NOTES;
            let t = Instant::now();
            let write_notes = |batch: &Batch| -> Result<BatchWriter<'_>> {
                let mut w = self.store.begin_batch()?;
                w.write_notes(batch)?;
                Ok(w)
            };
            let mut written = None;
            let computed = self.lexical_and_synthesized(&outcome, &mut phases, t, &mut || {
                if overlap && written.is_none() {
                    written = Some(write_notes(&outcome.batch));
                }
            });
            let (before, lex, synth) = computed?;
            let t = Instant::now();
            let (relisted, floors, reparse) =
                self.resynthesized(&outcome.batch, &outcome.parsed, &before, &lex)?;
            outcome.batch.relisted = relisted;
            outcome.batch.reparse = reparse;
            outcome.batch.probe_floors = floors;
            drop(before);
            phases.synthesize_ms += ms_since(t);
            let t = Instant::now();
            let writer = match written {
                Some(w) => w?,
                None => write_notes(&outcome.batch)?,
            };
            for (u, (s, floor)) in outcome.batch.upserts.iter_mut().zip(synth) {
                u.edges.extend(s);
                outcome.batch.probe_floors.push((u.id.clone(), floor));
            }
            outcome.batch.lexical_generation = Some(lex.generation());
            writer.commit(&outcome.batch)?;
            phases.store_ms = ms_since(t);
            let stamp = self.manifest_stamp();
            self.set_lexical_arc(lex, stamp);
        } else {
            let t = Instant::now();
            self.store.apply(&outcome.batch)?;
            phases.store_ms = ms_since(t);
        }
        let reader = self.store.read()?;
        let mut changed: Vec<String> = outcome
            .parsed
            .iter_mut()
            .map(|p| std::mem::take(&mut p.id))
            .collect();
        changed.sort();
        let mut errors = std::mem::take(&mut outcome.walk_errors);
        let removed = std::mem::take(&mut outcome.removed);
        let big = outcome.parsed.len() >= FREE_LATER_MIN_NOTES;
        free_later(outcome, big);
        for (path, problems) in reader.problems()? {
            for p in problems {
                errors.push(ScanError {
                    path: path.clone(),
                    message: p.message,
                });
            }
        }
        Ok(IndexReport {
            notes: reader.node_count()?,
            edges: reader.edge_count()?,
            changed,
            removed,
            errors,
            elapsed_ms: ms_since(started),
            phases,
        })
    }

    /// The lexical index before `outcome`'s notes, the index with them (published) and each
    /// upsert's synthesized edges; `phases` gets their times, counted from `t`.
    pub(super) fn lexical_and_synthesized(
        &self,
        outcome: &scan::ScanOutcome,
        phases: &mut IndexPhases,
        t: Instant,
        beside: &mut (dyn FnMut() + Send),
    ) -> Result<Indexed> {
        // The changed notes become one new segment, built a chunk of notes at a time (see
        // `lexical_segment`), so a cold build's memory is bounded by its chunks, not by the
        // number of notes.
        let (laid, ids) = self.lexical_segment(&outcome.parsed, LEXICAL_CHUNK_NOTES, beside)?;
        let before = self.lexical()?;
        let corrupt = |e: WriteError| self.index_corrupt(&e);
        let publish = |segment| -> Result<Arc<LexicalIndex>> {
            let mut lex = Arc::new(before.update_with(
                &self.dir.index(),
                segment,
                &ids,
                &outcome.removed,
                false,
            )?);
            // A big update left the new segment beside old ones: one serves queries faster.
            if outcome.parsed.len() > BUILD_CHUNK_NOTES {
                lex = Arc::new(lex.merged(&self.dir.index())?);
            }
            Ok(lex)
        };
        phases.lexical_ms = ms_since(t);
        let t = Instant::now();
        match laid {
            // A cold build (no segment before this one): the new segment will be the index's
            // only one, so token co-occurrence is read from it as laid out, on every core free,
            // while its dictionary is built (one core: it cannot be split) and it is published;
            // not after. Their time counts as synthesis.
            Some(laid) if before.segment_count() == 0 => {
                let (lex, synth) = rayon::join(
                    || publish(Some(laid.finish().map_err(corrupt)?)),
                    || self.synthesize_laid(&outcome.batch, &laid, &ids),
                );
                phases.synthesize_ms = ms_since(t);
                // Its term tables, a heap block per term, are freed aside.
                free_later(laid, ids.len() >= FREE_LATER_MIN_NOTES);
                Ok((before, lex?, synth?))
            }
            laid => {
                let segment = laid.map(|l| l.finish().map_err(corrupt)).transpose()?;
                let lex = publish(segment)?;
                phases.lexical_ms += ms_since(t);
                let t = Instant::now();
                let synth = self.synthesize(&outcome.batch, &outcome.parsed, &lex)?;
                phases.synthesize_ms = ms_since(t);
                Ok((before, lex, synth))
            }
        }
    }
}
