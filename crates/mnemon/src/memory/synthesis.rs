//! Co-occurrence synthesis beside the index build: the edges mnemon adds between notes that share
//! a slug cluster, a rare term or a derived-from link, and the exact set of notes an update must
//! recompute so that an incremental index equals a clean rebuild.

use super::*;
use crate::cooccur;
use crate::error::Result;
use crate::index::LexicalIndex;
use crate::index::fields::DocTerms;
use crate::index::segment::LaidOut;
use crate::notes::{self, NoteType};
use crate::ranking;
use crate::store::{Batch, EdgeValue, StoreReader};
use rustc_hash::FxHashMap;
use std::collections::HashMap;

/// Synthesis note by note tokenizes this many notes at a time (per-note term tables are large);
/// a scan that changed more notes than this merges the lexical index to one segment after.
pub(super) const BUILD_CHUNK_NOTES: usize = 8192;
/// Token co-occurrence is found term by term (one pass over the whole dictionary) when at least
/// 1 / this of a lone segment's notes changed; note by note otherwise.
const TERM_PASS_MIN_SHARE: usize = 4;

/// What a batch's synthesized edges are computed against: the store as it was before the batch,
/// and the batch's own notes (ids, types, removals).
pub(super) struct Synthesis<'s, 'b> {
    reader: StoreReader<'s>,
    batch: &'b Batch,
    removed: std::collections::HashSet<&'b str>,
    batch_types: HashMap<&'b str, NoteType>,
    /// The batch's ids, sorted.
    batch_ids: Vec<&'b str>,
}

impl<'s, 'b> Synthesis<'s, 'b> {
    fn new(reader: StoreReader<'s>, batch: &'b Batch) -> Synthesis<'s, 'b> {
        let mut batch_ids: Vec<&str> = batch.upserts.iter().map(|u| u.id.as_str()).collect();
        batch_ids.sort_unstable();
        Synthesis {
            reader,
            batch,
            removed: batch.removals.iter().map(|(_, id)| id.as_str()).collect(),
            batch_types: batch
                .upserts
                .iter()
                .map(|u| (u.id.as_str(), u.record.note_type))
                .collect(),
            batch_ids,
        }
    }

    /// The type of note `id` once the batch is written (`None`: no such note then).
    fn type_of(&self, id: &str) -> Option<NoteType> {
        if let Some(t) = self.batch_types.get(id) {
            return Some(*t);
        }
        if self.removed.contains(id) {
            return None;
        }
        self.reader.node(id).ok().flatten().map(|r| r.note_type)
    }

    /// The ids sharing the slug prefix `prefix` once the batch is written, sorted; only their
    /// count is right when it is over `MAX_SLUG_CLUSTER` (such a cluster gives no edges).
    fn cluster(&self, prefix: &str) -> Result<Vec<String>> {
        // Enough stored ids that, with every removal taken out, a cluster over the cap stays
        // over it.
        let mut cluster = self
            .reader
            .ids_with_prefix(prefix, ranking::MAX_SLUG_CLUSTER + 1 + self.removed.len())?;
        cluster.retain(|id| !self.removed.contains(id.as_str()));
        // The batch's ids with this prefix: a range of the sorted list, not a scan of it.
        let from = self.batch_ids.partition_point(|id| *id < prefix);
        for id in self.batch_ids[from..]
            .iter()
            .take_while(|id| id.starts_with(prefix))
            .take(ranking::MAX_SLUG_CLUSTER + 1)
        {
            cluster.push((*id).to_string());
        }
        cluster.sort();
        cluster.dedup();
        Ok(cluster)
    }

    /// The synthesized edges of `u`, with its token co-occurrence edges from `token(exclude,
    /// cap)`. Each note's edges depend only on the index and the store as they are: callers
    /// compute them in parallel, then attach them.
    fn edges_of(
        &self,
        u: &crate::store::NoteUpdate,
        token: &mut dyn FnMut(&[&str], usize) -> Vec<EdgeValue>,
    ) -> Result<Vec<EdgeValue>> {
        self.edges_for(&u.id, u.record.note_type, &u.edges, token)
    }

    /// The synthesized edges of note `id` of type `note_type` whose own edges (links,
    /// frontmatter) are `edges`: see [`Self::edges_of`].
    fn edges_for(
        &self,
        id: &str,
        note_type: NoteType,
        edges: &[EdgeValue],
        token: &mut dyn FnMut(&[&str], usize) -> Vec<EdgeValue>,
    ) -> Result<Vec<EdgeValue>> {
        let mut synth = Vec::new();
        if let Some(prefix) = cooccur::slug_prefix(id) {
            synth.extend(cooccur::slug_edges(id, &self.cluster(&prefix)?));
        }
        synth.truncate(ranking::CO_OCCURRENCE_CAP);
        let cap = ranking::CO_OCCURRENCE_CAP - synth.len();
        let exclude: Vec<&str> = synth
            .iter()
            .chain(edges)
            .map(|e| e.other.as_str())
            .collect();
        let token_edges = token(&exclude, cap);
        synth.extend(token_edges);
        synth.extend(cooccur::derived_from_user_edges(note_type, edges, &|id| {
            self.type_of(id)
        }));
        Ok(synth)
    }

    /// Every upsert's synthesized edges, in the batch's order, with token co-occurrence from
    /// the probes of the index's lone segment.
    fn by_probes<S: cooccur::ProbeSource>(
        &self,
        probes: &cooccur::SegmentProbes<'_, S>,
    ) -> Result<Vec<Synthesized>> {
        let seg = probes.source();
        let doc_of: FxHashMap<&str, u32> = (0..seg.doc_count()).map(|d| (seg.id(d), d)).collect();
        self.batch
            .upserts
            .par_iter()
            .map_init(
                || (probes.accumulator(), Vec::new()),
                |(acc, exclude_docs), u| {
                    let doc = doc_of.get(u.id.as_str()).copied();
                    let edges = self.edges_of(u, &mut |exclude, cap| match doc {
                        Some(d) => {
                            // An excluded id that is no document of the segment (a dangling
                            // link) is no candidate either.
                            exclude_docs.clear();
                            exclude_docs.extend(exclude.iter().filter_map(|id| doc_of.get(id)));
                            probes.edges(d, exclude_docs, cap, acc)
                        }
                        None => Vec::new(),
                    })?;
                    Ok((edges, doc.map_or(0.0, |d| probes.floor(d))))
                },
            )
            .collect()
    }
}

/// Whether two out-lists hold the same edges (the stored order and out-degrees aside).
pub(super) fn same_edges(a: &[EdgeValue], b: &[EdgeValue]) -> bool {
    let key = |e: &EdgeValue| {
        (
            e.other.clone(),
            e.kind,
            e.provenance.code(),
            e.confidence.to_bits(),
        )
    };
    let mut a: Vec<_> = a.iter().map(key).collect();
    let mut b: Vec<_> = b.iter().map(key).collect();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

/// Notes outside a batch whose out-lists it changes (with the new lists), the probe floors of
/// the notes it recomputed, and the paths of the notes it could not recompute (unreadable).
pub(super) type Relisted = (
    Vec<(String, Vec<EdgeValue>)>,
    Vec<(String, f32)>,
    Vec<String>,
);

/// A note whose synthesized edges an update recomputes, as stored and as indexed.
pub(super) struct Affected {
    id: String,
    note_type: NoteType,
    stored: Vec<EdgeValue>,
    doc: DocTerms,
}

/// A recomputed note: its id, its new out-list when that differs from the stored one, and its
/// probe floor.
pub(super) type Recomputed = (String, Option<Vec<EdgeValue>>, f32);

/// A note's synthesized edges and its probe floor (`cooccur::probe_floor`).
pub(super) type Synthesized = (Vec<EdgeValue>, f32);

impl Memory {
    /// The synthesized edges (slug clusters, token similarity, derived_from) of each upsert,
    /// in the batch's order, with token co-occurrence found in `lex`.
    pub(super) fn synthesize(
        &self,
        batch: &Batch,
        parsed: &[notes::ParsedNote],
        lex: &LexicalIndex,
    ) -> Result<Vec<Synthesized>> {
        let synthesis = Synthesis::new(self.store.read()?, batch);
        let sole = lex
            .sole_segment()
            .filter(|seg| parsed.len() * TERM_PASS_MIN_SHARE >= seg.doc_count() as usize);
        if let Some(seg) = sole {
            // Most of the index changed (a cold build): token co-occurrence of every document
            // in one pass over the dictionary, without tokenizing the notes again.
            return synthesis.by_probes(&cooccur::SegmentProbes::new(seg));
        }
        // The notes are tokenized again here, a chunk at a time: co-occurrence needs the
        // whole finished lexical index, and the lexical pass dropped its term tables to
        // bound memory. `batch.upserts[i]` is `parsed[i]` (the scan pushes them together).
        let mut synth: Vec<Synthesized> = Vec::with_capacity(parsed.len());
        for (ups, notes) in batch
            .upserts
            .chunks(BUILD_CHUNK_NOTES)
            .zip(parsed.chunks(BUILD_CHUNK_NOTES))
        {
            let docs = self.doc_terms(notes);
            let part: Vec<_> = ups
                .par_iter()
                .zip(docs.par_iter())
                .map(|(u, d)| {
                    let edges = synthesis.edges_of(u, &mut |exclude, cap| {
                        if d.id == u.id {
                            cooccur::token_edges(d, lex, exclude, cap)
                        } else {
                            Vec::new()
                        }
                    })?;
                    let floor = if d.id == u.id {
                        cooccur::probe_floor(d, lex)
                    } else {
                        0.0
                    };
                    Ok((edges, floor))
                })
                .collect::<Result<_>>()?;
            synth.extend(part);
        }
        Ok(synth)
    }

    /// [`Memory::synthesize`] for a cold build, whose new segment (`laid`, of the notes `ids`
    /// in doc order) will be the index's only one: token co-occurrence is read from the segment
    /// as laid out, so it runs while the segment's dictionary is built.
    pub(super) fn synthesize_laid(
        &self,
        batch: &Batch,
        laid: &LaidOut,
        ids: &[&str],
    ) -> Result<Vec<Synthesized>> {
        let synthesis = Synthesis::new(self.store.read()?, batch);
        let docs = cooccur::LaidOutDocs { laid, ids };
        let probes = cooccur::SegmentProbes::in_parts(&docs, rayon::current_num_threads());
        synthesis.by_probes(&probes)
    }

    /// The notes outside `batch` whose synthesized edges the batch changes, each with its whole
    /// out-list as a clean build of the notes would store it (only lists that differ from the
    /// stored ones). `before` is the lexical index before the batch, `lex` after it; the store
    /// is read as it was before the batch.
    ///
    /// A note's synthesized edges depend on its slug cluster (its members), on the types of the
    /// notes it links (`derived_from`), and on its token co-occurrence probes: the document
    /// frequency of each of its terms and the notes holding each. So the batch changes the edges
    /// of the members of every cluster one of its ids enters or leaves (while the cluster is
    /// small enough to give edges), of the notes linking a note that becomes or stops being a
    /// user note, and of the notes holding a term whose holders the batch changes where the term
    /// weighs, before or after, at least the note's probe floor (the weight of its lightest
    /// probe term: below it the term is no probe of the note). Those are recomputed; nothing
    /// else moves. Also returns the probe floors of the notes recomputed.
    pub(super) fn resynthesized(
        &self,
        batch: &Batch,
        parsed: &[notes::ParsedNote],
        before: &LexicalIndex,
        lex: &LexicalIndex,
    ) -> Result<Relisted> {
        let reader = self.store.read()?;
        if reader.node_count()? == 0 {
            return Ok(Relisted::default());
        }
        let synthesis = Synthesis::new(reader, batch);
        let reader = &synthesis.reader;
        let in_batch: rustc_hash::FxHashSet<&str> = batch
            .upserts
            .iter()
            .map(|u| u.id.as_str())
            .chain(batch.removals.iter().map(|(_, id)| id.as_str()))
            .collect();
        let mut affected: std::collections::BTreeSet<String> = Default::default();

        // Slug clusters the batch's ids enter or leave (an edited note stays in its cluster).
        let mut prefixes: std::collections::BTreeSet<String> = Default::default();
        for id in &in_batch {
            let stays = !synthesis.removed.contains(id) && reader.has_node(id)?;
            if let Some(prefix) = cooccur::slug_prefix(id).filter(|_| !stays) {
                prefixes.insert(prefix);
            }
        }
        for prefix in &prefixes {
            let stored = reader
                .ids_with_prefix(prefix, ranking::MAX_SLUG_CLUSTER + 1 + batch.removals.len())?;
            let now = synthesis.cluster(prefix)?;
            if stored.len() > ranking::MAX_SLUG_CLUSTER && now.len() > ranking::MAX_SLUG_CLUSTER {
                // Too big to give edges before and after.
                continue;
            }
            affected.extend(
                stored
                    .into_iter()
                    .filter(|id| !in_batch.contains(id.as_str())),
            );
        }

        // `derived_from`: the notes linking one that becomes or stops being a user note.
        let retyped: rustc_hash::FxHashSet<&str> = in_batch
            .iter()
            .copied()
            .filter(|id| {
                let was = reader.node(id).ok().flatten().map(|r| r.note_type);
                (was == Some(NoteType::User)) != (synthesis.type_of(id) == Some(NoteType::User))
            })
            .collect();
        if !retyped.is_empty() {
            reader.for_each_out_edge(|from, _, e| {
                if e.kind == notes::EdgeKind::References
                    && retyped.contains(e.other)
                    && !in_batch.contains(from)
                {
                    affected.insert(from.to_string());
                }
            })?;
        }

        // Token co-occurrence: the holders of every term whose holders among the batch's
        // notes changed, where the term is or may become one of their probes.
        let gone: Vec<&str> = in_batch.iter().copied().collect();
        let max_df = ranking::CO_OCCURRENCE_MAX_DF as u64;
        // A term held by more than this before the batch is held by more than `max_df` after.
        let old_terms = before.terms_of(&gone, max_df + gone.len() as u64);
        let mut holders: HashMap<&str, (Vec<&str>, Vec<&str>)> = HashMap::new();
        for (term, old) in &old_terms {
            holders.entry(term.as_str()).or_default().0 = old.iter().map(|&i| gone[i]).collect();
        }
        let docs = self.doc_terms(parsed);
        let mut floors: HashMap<&str, f32> = HashMap::new();
        let max_before = cooccur::probe_max_df(before.live_docs());
        let max_now = cooccur::probe_max_df(lex.live_docs());
        if max_before != max_now {
            // A memory small enough that which terms can be probes follows its size, and the
            // size moved: every note is recomputed (at most a few hundred).
            reader.for_each_node(|id, _| {
                if !in_batch.contains(id) {
                    affected.insert(id.to_string());
                }
            })?;
        }
        for d in &docs {
            for (term, _) in &d.terms {
                holders
                    .entry(term.as_str())
                    .or_default()
                    .1
                    .push(d.id.as_str());
            }
        }
        for (term, (mut old, mut now)) in holders {
            old.sort_unstable();
            now.sort_unstable();
            // Exact up to the most a probe term may have: only that is asked of them.
            let (df_before, df_now) = (
                before.doc_freq_capped(term, max_before as u64),
                lex.doc_freq_capped(term, max_now as u64),
            );
            if old == now
                || !(cooccur::can_probe(term, df_before, max_before)
                    || cooccur::can_probe(term, df_now, max_now))
            {
                continue;
            }
            for (id, tfs) in lex.postings_of(term) {
                if in_batch.contains(id) || affected.contains(id) {
                    continue;
                }
                let floor = match floors.get(id) {
                    Some(f) => *f,
                    None => {
                        // No floor stored: every term may be a probe.
                        let f = reader.probe_floor(id)?.unwrap_or(0.0);
                        floors.insert(id, f);
                        f
                    }
                };
                let weighs = |df, max| {
                    cooccur::probe_weight_at(term, &tfs, df, max).is_some_and(|w| w >= floor)
                };
                if weighs(df_before, max_before) || weighs(df_now, max_now) {
                    affected.insert(id.to_string());
                }
            }
        }

        let memory = self.dir.memory();
        let affected: Vec<String> = affected.into_iter().collect();
        let loaded: Vec<Result<Affected, Option<String>>> = affected
            .into_par_iter()
            .map(|id| -> Result<Result<Affected, Option<String>>> {
                let Some(record) = reader.node(&id)? else {
                    return Ok(Err(None));
                };
                // A note that cannot be read now (removed or unreadable since the scan) keeps
                // its edges, and its path is returned: the next scan parses it again, since
                // nothing about the file itself may change when it becomes readable (a folder
                // whose mode is restored).
                let Some(bytes) = notes::read_note(&memory.join(&record.path)) else {
                    return Ok(Err(Some(record.path)));
                };
                let doc = DocTerms::from_note(&self.tokenizer, &notes::parse_note(&id, &bytes));
                let stored = reader.edges_out(&id)?;
                Ok(Ok(Affected {
                    id,
                    note_type: record.note_type,
                    stored,
                    doc,
                }))
            })
            .collect::<Result<_>>()?;
        let mut unread: Vec<String> = Vec::new();
        let loaded: Vec<Affected> = loaded
            .into_iter()
            .filter_map(|r| r.map_err(|path| unread.extend(path)).ok())
            .collect();
        // Notes recomputed together share most of their terms: each term's document frequency
        // and each probe term's holders are looked up once.
        let mut terms: Vec<&str> = loaded
            .iter()
            .flat_map(|a| a.doc.terms.iter().map(|(t, _)| t.as_str()))
            .filter(|t| cooccur::is_probe_term(t))
            .collect();
        terms.sort_unstable();
        terms.dedup();
        let dfs: rustc_hash::FxHashMap<&str, u64> = terms
            .par_iter()
            .map(|t| (*t, lex.doc_freq_capped(t, max_now as u64)))
            .collect();
        let probes: Vec<Vec<(&str, f32)>> = loaded
            .par_iter()
            .map(|a| cooccur::probes_with(&a.doc, |t| dfs.get(t).copied().unwrap_or(0), max_now))
            .collect();
        let mut probe_terms: Vec<&str> = probes.iter().flatten().map(|p| p.0).collect();
        probe_terms.sort_unstable();
        probe_terms.dedup();
        let holders: rustc_hash::FxHashMap<&str, Vec<&str>> = probe_terms
            .par_iter()
            .map(|t| {
                (
                    *t,
                    lex.postings_of(t).into_iter().map(|(id, _)| id).collect(),
                )
            })
            .collect();
        let lists: Vec<Recomputed> = loaded
            .par_iter()
            .zip(probes.par_iter())
            .map(|(a, probes)| -> Result<Recomputed> {
                let own: Vec<EdgeValue> = a
                    .stored
                    .iter()
                    .filter(|e| !cooccur::is_index_synthesized(e))
                    .cloned()
                    .collect();
                let synth = synthesis.edges_for(&a.id, a.note_type, &own, &mut |ex, cap| {
                    cooccur::edges_of_probes(
                        &a.id,
                        probes,
                        |t| holders.get(t).into_iter().flatten().copied(),
                        ex,
                        cap,
                    )
                })?;
                let mut list = own;
                list.extend(synth);
                let changed = !same_edges(&a.stored, &list);
                Ok((
                    a.id.clone(),
                    changed.then_some(list),
                    cooccur::floor_of_probes(probes),
                ))
            })
            .collect::<Result<_>>()?;
        let mut out = Relisted::default();
        out.2 = unread;
        for (id, list, floor) in lists {
            out.1.push((id.clone(), floor));
            if let Some(list) = list {
                out.0.push((id, list));
            }
        }
        Ok(out)
    }
}
