//! How is a batch written? In one redb write transaction, in two steps, so that a caller can
//! still be computing the batch's edges while its note rows go in:
//!
//! 1. [`BatchWriter::write_notes`]: removals, node records, manifest entries, problems, and the
//!    removal of the old out-list of every note the batch replaces (its entries are uncounted
//!    from the edge count). None of it depends on the edges.
//! 2. [`BatchWriter::commit`]: the new out-lists (encoded on every core, a block of notes at a
//!    time), then the meta rows, the change log, and the commit.
//!
//! An edge is stored once, in its source's out-list: a batch writes the lists of its own notes
//! and no other row (an in-list per target too, as schema v4 and older kept, would make a batch
//! read, patch and write back the list of every target its notes link to or linked to).
//!
//! Nothing is visible to readers before the commit, and a writer dropped before it writes
//! nothing (redb aborts the transaction): the two steps are as atomic as one.
//! [`super::Store::apply`] runs both in turn.

use super::codec::{self, EdgeListBuilder, EdgeRef, decode_edge_list};
use super::{
    Batch, CHANGE_LOG_KEEP, CHANGES, EDGE_COUNT_KEY, EDGES_OUT, GENERATION_KEY,
    LEXICAL_GENERATION_KEY, MANIFEST, MAX_LOGGED_IDS, META, NODES, PROBE_FLOORS, PROBLEMS,
    SKETCHES, Store,
};
use crate::error::{Error, Result};
use rayon::prelude::*;
use redb::{ReadableTable, ReadableTableMetadata};

/// An encoded edge list and its entry count.
type EncodedList = (Vec<u8>, usize);
/// A redb table of string keys and byte values, open in the write transaction.
type WriteTable<'t> = redb::Table<'t, &'static str, &'static [u8]>;

/// Notes encoded on every core at a time before their inserts.
const ENCODE_BLOCK: usize = 8192;

/// One batch's write transaction, between its two steps (see the module docs).
pub struct BatchWriter<'s> {
    store: &'s Store,
    wtx: redb::WriteTransaction,
    /// The stored edge count less the dropped out-edges.
    edge_count: u64,
    /// How many upserts step 1 wrote (`None` before it ran).
    notes_written: Option<usize>,
}

impl Store {
    /// Begin a batch's write transaction (see [`BatchWriter`]).
    pub fn begin_batch(&self) -> Result<BatchWriter<'_>> {
        let wtx = self.begin_write()?;
        Ok(BatchWriter {
            store: self,
            wtx,
            edge_count: 0,
            notes_written: None,
        })
    }

    /// Store sketches of notes the store holds ([`SKETCHES`]) in one transaction, leaving out ids
    /// that are not (or no longer) nodes. Nothing else changes: the generation stays, since no
    /// reader caches sketches.
    pub fn put_sketches(&self, sketches: &[(String, crate::dedup::Sketch)]) -> Result<()> {
        let e = |x: redb::Error| self.err(x);
        let wtx = self.begin_write()?;
        {
            let nodes = wtx.open_table(NODES).map_err(|x| e(x.into()))?;
            let mut table = wtx.open_table(SKETCHES).map_err(|x| e(x.into()))?;
            for (id, sketch) in sketches {
                if redb::ReadableTable::get(&nodes, id.as_str())
                    .map_err(|x| e(x.into()))?
                    .is_some()
                {
                    table
                        .insert(id.as_str(), sketch.to_bytes().as_slice())
                        .map_err(|x| e(x.into()))?;
                }
            }
        }
        let _counted = self.counting();
        wtx.commit().map_err(|x| e(x.into()))
    }

    /// Write a batch in one transaction.
    ///
    /// Out-edges are one list value per source, replaced whole when its note is.
    pub fn apply(&self, batch: &Batch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut w = self.begin_batch()?;
        w.write_notes(batch)?;
        w.commit(batch)
    }
}

impl BatchWriter<'_> {
    /// Step 1: everything of `batch` but its edges. `batch` must come back to
    /// [`BatchWriter::commit`] with the same notes (its edges may have grown in between).
    pub fn write_notes(&mut self, batch: &Batch) -> Result<()> {
        let store = self.store;
        let e = |x: redb::Error| store.err(x);
        let mut nodes = self.wtx.open_table(NODES).map_err(|x| e(x.into()))?;
        let mut manifest = self.wtx.open_table(MANIFEST).map_err(|x| e(x.into()))?;
        let mut problems = self.wtx.open_table(PROBLEMS).map_err(|x| e(x.into()))?;
        let mut out = self.wtx.open_table(EDGES_OUT).map_err(|x| e(x.into()))?;
        let meta = self.wtx.open_table(META).map_err(|x| e(x.into()))?;
        let mut edge_count = store.meta_u64(&meta, EDGE_COUNT_KEY)?;
        let mut drop_out_edges = |id: &str, out: &mut WriteTable<'_>| -> Result<()> {
            let Some(old) = out.remove(id).map_err(|x| e(x.into()))? else {
                return Ok(());
            };
            let list = decode_edge_list(old.value()).map_err(|c| store.corrupt(id, c))?;
            edge_count = edge_count.saturating_sub(list.len() as u64);
            Ok(())
        };

        let mut floors = self.wtx.open_table(PROBE_FLOORS).map_err(|x| e(x.into()))?;
        let mut sketches = self.wtx.open_table(SKETCHES).map_err(|x| e(x.into()))?;
        for (path, id) in &batch.removals {
            drop_out_edges(id, &mut out)?;
            floors.remove(id.as_str()).map_err(|x| e(x.into()))?;
            sketches.remove(id.as_str()).map_err(|x| e(x.into()))?;
            nodes.remove(id.as_str()).map_err(|x| e(x.into()))?;
            manifest.remove(path.as_str()).map_err(|x| e(x.into()))?;
            problems.remove(path.as_str()).map_err(|x| e(x.into()))?;
        }
        // Tables empty before this batch (a cold build) hold nothing to remove: an id is
        // upserted once per batch (ids are note paths), so its old out-list and problems can
        // only be ones stored before.
        let out_was_empty = out.len().map_err(|x| e(x.into()))? == 0;
        let problems_was_empty = problems.len().map_err(|x| e(x.into()))? == 0;
        let sketches_was_empty = sketches.len().map_err(|x| e(x.into()))? == 0;
        for u in &batch.upserts {
            if !out_was_empty {
                drop_out_edges(&u.id, &mut out)?;
            }
            nodes
                .insert(u.id.as_str(), u.record.encode().as_slice())
                .map_err(|x| e(x.into()))?;
            manifest
                .insert(u.path.as_str(), u.file.encode().as_slice())
                .map_err(|x| e(x.into()))?;
            match &u.sketch {
                Some(sketch) => {
                    sketches
                        .insert(u.id.as_str(), sketch.to_bytes().as_slice())
                        .map_err(|x| e(x.into()))?;
                }
                None if !sketches_was_empty => {
                    sketches.remove(u.id.as_str()).map_err(|x| e(x.into()))?;
                }
                None => {}
            }
            if !u.problems.is_empty() {
                problems
                    .insert(
                        u.path.as_str(),
                        codec::encode_problems(&u.problems).as_slice(),
                    )
                    .map_err(|x| e(x.into()))?;
            } else if !problems_was_empty {
                problems.remove(u.path.as_str()).map_err(|x| e(x.into()))?;
            }
        }
        for (path, file) in &batch.touched {
            manifest
                .insert(path.as_str(), file.encode().as_slice())
                .map_err(|x| e(x.into()))?;
        }
        self.edge_count = edge_count;
        self.notes_written = Some(batch.upserts.len());
        Ok(())
    }

    /// Step 2: the edges of `batch` (step 1 runs first if it has not), the meta rows and the
    /// change log; then the commit.
    pub fn commit(mut self, batch: &Batch) -> Result<()> {
        match self.notes_written {
            None => self.write_notes(batch)?,
            Some(n) if n != batch.upserts.len() => {
                return Err(Error::store(
                    &self.store.path,
                    format!(
                        "internal error: the batch wrote {n} notes but commits {}",
                        batch.upserts.len()
                    ),
                ));
            }
            Some(_) => {}
        }
        let store = self.store;
        let e = |x: redb::Error| store.err(x);
        // Each note's out-degree goes into every value of its edges.
        let degrees: Vec<u32> = batch
            .upserts
            .par_iter()
            .map(|u| out_degree(&u.edges))
            .collect();
        let mut out = self.wtx.open_table(EDGES_OUT).map_err(|x| e(x.into()))?;
        let mut edge_count = self.edge_count + write_out_lists(store, &mut out, batch, &degrees)?;
        for (id, edges) in &batch.relisted {
            if let Some(old) = out.remove(id.as_str()).map_err(|x| e(x.into()))? {
                let list = decode_edge_list(old.value()).map_err(|c| store.corrupt(id, c))?;
                edge_count = edge_count.saturating_sub(list.len() as u64);
            }
            let degree = out_degree(edges);
            let mut lb = EdgeListBuilder::default();
            for stored in edges {
                lb.push(EdgeRef {
                    source_out_degree: degree,
                    ..stored.borrowed()
                });
            }
            if let Some((list, n)) = lb.finish().map_err(|c| store.corrupt(id, c))? {
                out.insert(id.as_str(), list.as_slice())
                    .map_err(|x| e(x.into()))?;
                edge_count += n as u64;
            }
        }
        drop(out);
        let mut floors = self.wtx.open_table(PROBE_FLOORS).map_err(|x| e(x.into()))?;
        for (id, floor) in &batch.probe_floors {
            floors
                .insert(id.as_str(), floor.to_le_bytes().as_slice())
                .map_err(|x| e(x.into()))?;
        }
        drop(floors);
        if !batch.reparse.is_empty() {
            let mut manifest = self.wtx.open_table(MANIFEST).map_err(|x| e(x.into()))?;
            for path in &batch.reparse {
                let entry = match manifest.get(path.as_str()).map_err(|x| e(x.into()))? {
                    Some(v) => {
                        codec::FileEntry::decode(v.value()).map_err(|c| store.corrupt(path, c))?
                    }
                    None => continue,
                };
                let marked = codec::FileEntry {
                    size: codec::FileEntry::REPARSE_SIZE,
                    ..entry
                };
                manifest
                    .insert(path.as_str(), marked.encode().as_slice())
                    .map_err(|x| e(x.into()))?;
            }
        }

        let mut meta = self.wtx.open_table(META).map_err(|x| e(x.into()))?;
        meta.insert(EDGE_COUNT_KEY, edge_count.to_le_bytes().as_slice())
            .map_err(|x| e(x.into()))?;
        // The change log: which nodes this generation touched, for in-memory graphs to patch.
        let generation = store.meta_u64(&meta, GENERATION_KEY)? + 1;
        meta.insert(GENERATION_KEY, generation.to_le_bytes().as_slice())
            .map_err(|x| e(x.into()))?;
        if let Some(g) = batch.lexical_generation {
            meta.insert(LEXICAL_GENERATION_KEY, g.to_le_bytes().as_slice())
                .map_err(|x| e(x.into()))?;
        }
        drop(meta);
        let touched: Vec<&str> = batch
            .removals
            .iter()
            .map(|(_, id)| id.as_str())
            .chain(batch.upserts.iter().map(|u| u.id.as_str()))
            .chain(batch.relisted.iter().map(|(id, _)| id.as_str()))
            .collect();
        let mut changes = self.wtx.open_table(CHANGES).map_err(|x| e(x.into()))?;
        changes
            .insert(
                generation,
                codec::encode_changes(&touched, MAX_LOGGED_IDS).as_slice(),
            )
            .map_err(|x| e(x.into()))?;
        if generation > CHANGE_LOG_KEEP {
            changes
                .retain_in(..=generation - CHANGE_LOG_KEEP, |_, _| false)
                .map_err(|x| e(x.into()))?;
        }
        drop(changes);
        let _counted = self.store.counting();
        self.wtx.commit().map_err(|x| e(x.into()))
    }
}

/// Each upsert's out-list, encoded on every core a block of notes at a time (so encoded copies
/// of a whole cold build never live at once), then inserted. Returns how many edges it wrote.
fn write_out_lists(
    store: &Store,
    out: &mut WriteTable<'_>,
    batch: &Batch,
    degrees: &[u32],
) -> Result<u64> {
    let mut added = 0u64;
    for (b, block) in batch.upserts.chunks(ENCODE_BLOCK).enumerate() {
        let lists: Vec<Option<EncodedList>> = block
            .par_iter()
            .enumerate()
            .map_init(EdgeListBuilder::default, |lb, (i, u)| {
                let degree = degrees[b * ENCODE_BLOCK + i];
                for stored in &u.edges {
                    lb.push(EdgeRef {
                        source_out_degree: degree,
                        ..stored.borrowed()
                    });
                }
                lb.finish().map_err(|c| store.corrupt(&u.id, c))
            })
            .collect::<Result<_>>()?;
        for (u, list) in block.iter().zip(lists) {
            if let Some((list, n)) = list {
                out.insert(u.id.as_str(), list.as_slice())
                    .map_err(|x| store.err(x))?;
                added += n as u64;
            }
        }
    }
    Ok(added)
}

/// Distinct targets among a note's edges.
pub(crate) fn out_degree(edges: &[super::EdgeValue]) -> u32 {
    let distinct: rustc_hash::FxHashSet<&str> = edges.iter().map(|e| e.other.as_str()).collect();
    u32::try_from(distinct.len()).unwrap_or(u32::MAX)
}
