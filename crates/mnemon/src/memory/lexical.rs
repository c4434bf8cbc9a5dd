//! Which lexical index a reader sees, and when it reloads: the segments named by the manifest,
//! checked against the store's record of the generation it published.

use super::*;
use crate::error::{Error, Result};
use crate::index::LexicalIndex;
use crate::index::fields::{DocTerms, TermBatch};
use crate::index::segment::LaidOut;
use crate::index::segment::writer::SegmentBuilder;
use crate::notes::{self};
use crate::scan::{self};
use crate::store::Version;
use std::collections::HashMap;
use std::sync::Arc;

/// The lexical pass of a build tokenizes this many notes at a time, while the chunk before is
/// folded into the segment builder: two chunks' term batches live at once.
pub(super) const LEXICAL_CHUNK_NOTES: usize = 4096;
/// Notes tokenized against one dictionary (a unit of work of one core): each distinct term is
/// allocated and looked up once per batch.
const TERM_BATCH_NOTES: usize = 256;

/// Identity (len, mtime) of the lexical manifest file, `None` when there is none.
pub(super) type ManifestStamp = Option<(u64, std::time::SystemTime)>;

impl Memory {
    pub(super) fn manifest_stamp(&self) -> ManifestStamp {
        let m =
            std::fs::metadata(self.dir.index().join(crate::index::manifest::MANIFEST_FILE)).ok()?;
        Some((m.len(), m.modified().ok()?))
    }

    /// Load the lexical index from disk; rebuild it from the notes when it is missing, damaged, or
    /// disagrees with the store. Returns a notice when it had to be rebuilt.
    pub(super) fn load_lexical(&self) -> Result<Option<String>> {
        let index_dir = self.dir.index();
        let stamp = self.manifest_stamp();
        // What the store says the index must hold: its notes, and at least the generation the
        // last update published.
        let expected = || -> Result<(u64, u64)> {
            let reader = self.store.read()?;
            Ok((reader.node_count()?, reader.lexical_generation()?))
        };
        let fits = |lex: &LexicalIndex, (nodes, recorded): (u64, u64)| {
            lex.live_docs() == nodes && lex.generation() >= recorded
        };
        let (nodes, recorded) = expected()?;
        let problem = match LexicalIndex::open(&index_dir) {
            Ok(Some(lex)) if fits(&lex, (nodes, recorded)) => {
                self.set_lexical(lex, stamp);
                return Ok(None);
            }
            Ok(Some(lex)) if lex.generation() < recorded => format!(
                "lexical index is at generation {}, behind the {recorded} the store recorded \
                 (its last writes were lost in a crash)",
                lex.generation()
            ),
            Ok(Some(lex)) => format!(
                "lexical index holds {} notes, the store {nodes}",
                lex.live_docs()
            ),
            Ok(None) if nodes == 0 => return Ok(None),
            Ok(None) => "lexical index is missing".to_string(),
            Err(Error::Corrupt { path, reason }) => {
                // Name the cause a user can act on: a file gone or unreadable (owner, mode) is
                // not damage, though a rebuild heals it just the same.
                // (Opened only when a regular file: opening a named pipe would wait for a writer.)
                let state = match std::fs::symlink_metadata(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => "is missing",
                    Ok(m) if !m.is_file() => "is not a regular file",
                    _ if std::fs::File::open(&path).is_err() => "cannot be read",
                    _ => "is damaged",
                };
                format!("lexical index file {} {state} ({reason})", path.display())
            }
            Err(e) => return Err(e),
        };
        let lock = self.write_lock()?;
        // Another process may have been mid-update (lexical written, store not yet): now that
        // we hold the lock, look again before paying for a rebuild.
        let (nodes, recorded) = expected()?;
        if let Ok(Some(lex)) = LexicalIndex::open(&index_dir)
            && fits(&lex, (nodes, recorded))
        {
            self.set_lexical(lex, self.manifest_stamp());
            return Ok(None);
        }
        let mut outcome = scan::scan(&self.dir.memory(), &HashMap::new());
        outcome.check_complete()?;
        // The index is rebuilt from the notes as they are now. A store that describes other
        // notes (a crash between the lexical update and the store's commit, notes edited since)
        // would be brought to them by the next scan as an update, which recomputes the
        // synthesized edges only of notes whose terms' holders the lexical update moves: none,
        // the index already being there, so edges to deleted notes and stale weights would stay.
        // Such a store is emptied, and the next scan indexes every note anew.
        let store_differs = {
            let reader = self.store.read()?;
            let manifest = reader.manifest()?;
            let listed = outcome.batch.upserts.len();
            let kept = manifest.keys().filter(|p| outcome.unread_covers(p)).count();
            manifest.len() != listed + kept
                || outcome.batch.upserts.iter().any(|u| {
                    // A note marked to be parsed again is, by the next scan: no difference.
                    manifest.get(&u.path).is_none_or(|e| {
                        e.hash != u.file.hash
                            || (e.size != u.file.size
                                && e.size != crate::store::FileEntry::REPARSE_SIZE)
                    })
                })
        };
        if store_differs {
            self.store.reset(&lock)?;
        }
        let (laid, ids) = self.lexical_segment(&outcome.parsed, LEXICAL_CHUNK_NOTES, &mut || {})?;
        let segment = laid
            .map(|l| l.finish().map_err(|e| self.index_corrupt(&e)))
            .transpose()?;
        // Above both the store's record and whatever manifest is on disk (an index ahead of
        // the store, or with a damaged segment, still names its generation): a rebuilt segment's
        // file name then never reuses one another process may still be reading.
        let on_disk = crate::index::manifest::Manifest::load(&RealFs, &index_dir)
            .ok()
            .flatten()
            .map_or(0, |m| m.generation);
        let lex = LexicalIndex::rebuild_after(&index_dir, segment, &ids, recorded.max(on_disk))?;
        let stamp = self.manifest_stamp();
        self.set_lexical(lex, stamp);
        Ok(Some(if store_differs {
            format!(
                "{problem}: rebuilt it from the notes, and the store, which described other \
                 notes, is indexed anew"
            )
        } else {
            format!("{problem}: rebuilt it from the notes")
        }))
    }

    /// The lexical segment of `parsed` (in id order, one note per id; `None` when there are no
    /// notes), laid out but for its dictionary and postings area (see
    /// [`SegmentBuilder::lay_out`]; [`LaidOut::finish`] writes them), and the ids in it. Notes
    /// are tokenized a chunk at a time (in batches of [`TERM_BATCH_NOTES`], on every core)
    /// while the chunk before is folded into the builder, and each chunk's batches are dropped
    /// once folded.
    ///
    /// `beside` is other work of the caller's, run once (not at all when tokenizing fails) on a
    /// core of the build's thread pool when one is free: beside the fold and the terms' layout
    /// when the notes are one chunk (tokenizing keeps every core busy; the fold's shards take
    /// the cores the rows leave), beside the whole build when they are more (each chunk is
    /// folded while the next is tokenized). The build itself goes first: a pool of one thread runs
    /// `beside` after it.
    pub(super) fn lexical_segment<'p>(
        &self,
        parsed: &'p [notes::ParsedNote],
        chunk_notes: usize,
        beside: &mut (dyn FnMut() + Send),
    ) -> Result<(Option<LaidOut>, Vec<&'p str>)> {
        if parsed.is_empty() {
            beside();
            return Ok((None, Vec::new()));
        }
        let mut notes: Vec<&notes::ParsedNote> = parsed.iter().collect();
        notes.sort_by(|a, b| a.id.cmp(&b.id));
        notes.dedup_by(|a, b| a.id == b.id);
        let chunk_notes = chunk_notes.max(1);
        let corrupt = |e: &dyn std::fmt::Display| self.index_corrupt(e);
        let tokenize = |chunk: &[&'p notes::ParsedNote]| {
            chunk
                .par_chunks(TERM_BATCH_NOTES)
                .map(|batch| TermBatch::from_notes(&self.tokenizer, batch))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| corrupt(&e))
        };
        let fold = |builder: &mut SegmentBuilder, batches: Vec<TermBatch<'p>>| {
            batches
                .into_iter()
                .try_for_each(|batch| builder.add_batch(batch))
                .map_err(|e| corrupt(&e))
        };
        let finish = |mut builder: SegmentBuilder, last: Vec<TermBatch<'p>>| {
            fold(&mut builder, last)?;
            debug_assert_eq!(builder.doc_count() as usize, notes.len());
            builder.lay_out().map_err(|e| corrupt(&e))
        };
        let (segment, ()) = if notes.len() <= chunk_notes {
            let batches = tokenize(&notes)?;
            rayon::join(|| finish(SegmentBuilder::new(), batches), &mut *beside)
        } else {
            rayon::join(
                || {
                    let mut builder = SegmentBuilder::new();
                    let mut folding: Vec<TermBatch<'p>> = Vec::new();
                    for chunk in notes.chunks(chunk_notes) {
                        let to_fold = std::mem::take(&mut folding);
                        let (folded, batches) =
                            rayon::join(|| fold(&mut builder, to_fold), || tokenize(chunk));
                        folded?;
                        folding = batches?;
                    }
                    finish(builder, folding)
                },
                &mut *beside,
            )
        };
        Ok((
            Some(segment?),
            notes.iter().map(|p| p.id.as_str()).collect(),
        ))
    }

    /// The lexical index could not be built from what it was given (a segment writer's or a
    /// term batch's limit).
    pub(super) fn index_corrupt(&self, e: &dyn std::fmt::Display) -> Error {
        Error::Corrupt {
            path: self.dir.index(),
            reason: e.to_string(),
        }
    }

    /// The per-field terms of `notes`, tokenized in parallel.
    pub(super) fn doc_terms(&self, notes: &[notes::ParsedNote]) -> Vec<DocTerms> {
        notes
            .par_iter()
            .map(|p| DocTerms::from_note(&self.tokenizer, p))
            .collect()
    }

    pub(super) fn set_lexical(&self, lex: LexicalIndex, stamp: ManifestStamp) {
        self.set_lexical_arc(Arc::new(lex), stamp);
    }

    pub(super) fn set_lexical_arc(&self, lex: Arc<LexicalIndex>, stamp: ManifestStamp) {
        if let Ok(mut g) = self.lexical.write() {
            *g = lex;
        }
        if let Ok(mut s) = self.lexical_stamp.lock() {
            *s = stamp;
        }
    }

    /// The lexical index for a recall at store version `v`: the manifest is looked at (one
    /// `stat`) only when the store moved since the last look that found the loaded view current,
    /// or when the loaded view changed since. An update publishes the lexical index before it
    /// commits the store (see `apply_scan`), so an index that changed with the notes is always
    /// followed by a new store version. A manifest can also change with no store commit: an
    /// update that failed after publishing (its index is ahead of the store) or a damaged index
    /// rebuilt by another handle (same notes, same answers); until the store moves, the view
    /// already loaded, checked when it was opened, is the one that matches the store.
    pub(super) fn lexical_at(&self, v: Version) -> Result<Arc<LexicalIndex>> {
        let loaded = self.lexical_stamp.lock().ok().map(|s| *s);
        let checked = self
            .lexical_checked_at
            .lock()
            .is_ok_and(|c| matches!(*c, Some((cv, cs)) if cv == v && Some(cs) == loaded));
        if checked {
            return self.loaded_lexical();
        }
        let (lex, current) = self.lexical_reloaded()?;
        // Only a view that is the manifest now on disk may skip the next looks.
        if let Some(stamp) = current
            && let Ok(mut c) = self.lexical_checked_at.lock()
        {
            *c = Some((v, stamp));
        }
        Ok(lex)
    }

    /// The lexical index loaded now, as it is.
    pub(super) fn loaded_lexical(&self) -> Result<Arc<LexicalIndex>> {
        self.lexical
            .read()
            .map(|g| g.clone())
            .map_err(|_| Error::CachePoisoned {
                what: "lexical index",
            })
    }

    /// The current lexical index, reloaded first if another process replaced its manifest.
    pub(super) fn lexical(&self) -> Result<Arc<LexicalIndex>> {
        Ok(self.lexical_reloaded()?.0)
    }

    /// [`Memory::lexical`], with the manifest's stamp when the view returned is the manifest on
    /// disk (`None` when a reload failed and the old view was kept).
    pub(super) fn lexical_reloaded(&self) -> Result<(Arc<LexicalIndex>, Option<ManifestStamp>)> {
        let stamp = self.manifest_stamp();
        let stale = self
            .lexical_stamp
            .lock()
            .map(|s| *s != stamp)
            .unwrap_or(true);
        if stale && stamp.is_some() {
            // Mid-update by another process (a segment already replaced): keep the old view.
            let current = self.lexical.read().ok().map(|g| g.clone());
            if let Ok(Some(lex)) = LexicalIndex::open_reusing(&self.dir.index(), current.as_deref())
            {
                self.set_lexical(lex, stamp);
            }
        }
        let current = self.lexical_stamp.lock().is_ok_and(|s| *s == stamp);
        Ok((self.loaded_lexical()?, current.then_some(stamp)))
    }
}
