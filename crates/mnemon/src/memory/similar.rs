//! Which notes does a note about to be written repeat, or replace? The write path's near-duplicate
//! check over the stored sketches (`dedup`), and the filling of the sketches a big index batch
//! left out.

use super::write::{Similar, WriteNeighbours};
use super::*;
use crate::dedup::{self, Sketch};
use crate::error::Result;
use crate::notes::ParsedNote;
use std::collections::HashSet;

/// Most notes listed as near-duplicates, and as likely predecessors, of a note being written.
pub const MAX_WRITE_NEIGHBOURS: usize = 5;

impl Memory {
    /// The notes nearly duplicating, or likely replaced by, `parsed` (a note about to be written):
    /// its own id and the notes it links to (any kind) are left out. Sketches missing from the
    /// store are computed first ([`Memory::fill_sketches`]). The caller holds the write lock.
    pub(crate) fn write_neighbours(&self, parsed: &ParsedNote) -> Result<WriteNeighbours> {
        self.fill_sketches()?;
        let draft = Sketch::of_parsed(parsed);
        let skip: HashSet<&str> = parsed
            .edges
            .iter()
            .map(|e| e.to.as_str())
            .chain([parsed.id.as_str()])
            .collect();
        let (ids, sketches) = self.store.read()?.sketches()?;
        let mut found = WriteNeighbours::default();
        for (id, sketch) in ids.iter().zip(&sketches) {
            if skip.contains(id.as_str()) {
                continue;
            }
            let r = dedup::resemblance(&draft, sketch);
            let similar = || Similar {
                id: id.clone(),
                // Two decimals: the estimate is not finer than that.
                similarity: (r.overlap * 100.0).round() / 100.0,
            };
            if r.is_near_duplicate() {
                found.near_duplicates.push(similar());
            } else if r.is_related() {
                found.likely_predecessors.push(similar());
            }
        }
        for list in [&mut found.near_duplicates, &mut found.likely_predecessors] {
            list.sort_by(|a, b| b.similarity.total_cmp(&a.similarity).then(a.id.cmp(&b.id)));
            list.truncate(MAX_WRITE_NEIGHBOURS);
        }
        Ok(found)
    }

    /// Compute and store the sketch of every indexed note that has none (a batch bigger than
    /// `SKETCH_AT_INDEX_MAX_NOTES` leaves them out), reading the notes from `memory/`; returns
    /// how many were added. The caller holds the write lock, so no index batch runs meanwhile: a
    /// note changed on disk since it was indexed gets the sketch of its new text, and the next
    /// index of it replaces or removes that sketch.
    pub(crate) fn fill_sketches(&self) -> Result<usize> {
        let missing: Vec<(String, String)> = {
            let r = self.store.read()?;
            if r.sketch_count()? >= r.node_count()? {
                return Ok(0);
            }
            let (have, _) = r.sketches()?;
            let have: HashSet<String> = have.into_iter().collect();
            r.all_nodes()?
                .into_iter()
                .filter(|(id, _)| !have.contains(id))
                .map(|(id, rec)| (id, rec.path))
                .collect()
        };
        if missing.is_empty() {
            return Ok(0);
        }
        // `open_inside` compares each note's real path with the folder's real path.
        let memory = self.dir.memory();
        let root = memory
            .canonicalize()
            .map_err(|e| crate::error::Error::io("resolve", &memory, e))?;
        let computed: Vec<(String, Sketch)> = missing
            .par_iter()
            .filter_map(|(id, path)| {
                // A note that cannot be read now is left without a sketch: the next index
                // reports the problem, and the check sees one note fewer meanwhile.
                let (file, _) = notes::open_inside(&root, path).ok()?;
                let (bytes, _) = notes::read_bounded(file, notes::MAX_NOTE_BYTES).ok()?;
                Some((
                    id.clone(),
                    Sketch::of_parsed(&notes::parse_note(id, &bytes)),
                ))
            })
            .collect();
        self.store.put_sketches(&computed)?;
        Ok(computed.len())
    }
}
