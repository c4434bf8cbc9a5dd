//! Read-only views for people and tools: `show`, `edges`, `doctor`, `core`.

use super::*;
use crate::dedup::{self, Sketch};
use crate::error::{Error, Result};
use crate::folder::MemoryDir;
use crate::notes::{self, ProblemKind};
use crate::scan::ScanError;
use crate::store::{Edge, NodeRecord, StoreReader};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// A node with its edges both ways (`mnemon show`).
#[derive(Debug, Clone, Serialize)]
pub struct NodeView {
    /// The note's id (its path below `memory/` without `.md`).
    pub id: String,
    /// The note file, relative to `memory/`.
    pub path: String,
    /// The frontmatter's `name`.
    pub name: Option<String>,
    /// The note's type (`user`, `feedback`, `project`, `reference`, ...; JSON key `type`).
    #[serde(rename = "type")]
    pub note_type: &'static str,
    /// The frontmatter's `description`.
    pub description: Option<String>,
    /// The frontmatter's `tags`.
    pub tags: Vec<String>,
    /// Whether the note is pinned into the core view.
    pub pin: bool,
    /// The frontmatter's `created_at`, Unix seconds (JSON key `created_at`).
    #[serde(rename = "created_at")]
    pub created_s: Option<i64>,
    /// The frontmatter's `updated_at`, Unix seconds (JSON key `updated_at`).
    #[serde(rename = "updated_at")]
    pub updated_s: Option<i64>,
    /// Days after `updated_at` (or `created_at`) when the note stops ranking as fresh.
    pub ttl_days: Option<u32>,
    /// The start of the body, as recall shows it.
    pub excerpt: String,
    /// Edges leaving the note (explicit links and synthesized ones).
    pub edges_out: Vec<EdgeOut>,
    /// Edges arriving at the note.
    pub edges_in: Vec<EdgeIn>,
    /// Its successors: the notes that declare they replace it.
    pub superseded_by: Vec<String>,
    /// Its predecessors: the notes it declares it replaces.
    pub supersedes: Vec<String>,
    /// The notes it contradicts or that contradict it.
    pub contradicts: Vec<String>,
    /// The sha256 (lowercase hex) of the note file's bytes as they are now: what
    /// [`Memory::write_note`] needs as `expected_sha256` to replace the note. `None` when the file
    /// cannot be read (gone since it was indexed, or refused as a link leaving `memory/`).
    pub sha256: Option<String>,
}

/// An edge leaving the shown node.
#[derive(Debug, Clone, Serialize)]
pub struct EdgeOut {
    /// The target's id.
    pub to: String,
    /// What the edge says (`relates_to`, `supersedes`, ...).
    pub kind: notes::EdgeKind,
    /// Who made it: a link in the note, a frontmatter field, or synthesis.
    pub provenance: notes::Provenance,
    /// How sure the edge is, 0..=1 (1 for explicit links).
    pub confidence: f32,
    /// The target is not a note (yet).
    pub dangling: bool,
}

/// An edge arriving at the shown node.
#[derive(Debug, Clone, Serialize)]
pub struct EdgeIn {
    /// The source's id.
    pub from: String,
    /// What the edge says.
    pub kind: notes::EdgeKind,
    /// Who made it.
    pub provenance: notes::Provenance,
    /// How sure the edge is, 0..=1.
    pub confidence: f32,
}

/// A link whose target is not a note.
#[derive(Debug, Clone, Serialize)]
pub struct Dangling {
    /// The note holding the link.
    pub from: String,
    /// The id it names, which no note has.
    pub to: String,
    /// What the link says.
    pub kind: notes::EdgeKind,
    /// Where the note writes it (a frontmatter list, a `[[link]]` in the body, a phrase):
    /// a note that names a missing note in both is told both.
    pub provenance: notes::Provenance,
    /// The note whose id is `to` written in another Unicode normal form, if one is (the link
    /// typed precomposed, the file name decomposed, or the reverse): the note the link meant.
    /// [`crate::with_marks_shown`] writes it so that the two forms can be told apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_form_of: Option<String>,
}

/// A problem of one note.
#[derive(Debug, Clone, Serialize)]
pub struct NoteError {
    /// The note file, relative to `memory/`.
    pub path: String,
    /// What kind of problem.
    pub kind: ProblemKind,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// Health of the derived index.
#[derive(Debug, Clone, Serialize)]
pub struct IndexHealth {
    /// The index store's file.
    pub path: String,
    /// The store schema this build reads and writes.
    pub schema_version: u32,
    /// Whether the store opened cleanly and its change count is usable.
    pub ok: bool,
    /// Set when the index was rebuilt, could not be read, or has an unusable change count.
    pub message: Option<String>,
}

/// What `doctor` found. `healthy` is false when any list is non-empty or the index is not ok.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    /// Nothing below needs attention.
    pub healthy: bool,
    /// Notes in the index.
    pub notes: u64,
    /// Edges in the index, explicit and synthesized.
    pub edges: u64,
    /// Links to ids no note has.
    pub dangling: Vec<Dangling>,
    /// Notes with problems (bad frontmatter, over a limit, ...), each with its fix.
    pub note_errors: Vec<NoteError>,
    /// Ids claimed by more than one file.
    pub conflicts: Vec<String>,
    /// What the walk of `memory/` could not read or refused (links leaving the folder, ...).
    pub walk_errors: Vec<ScanError>,
    /// The derived index's health.
    pub index: IndexHealth,
    /// Notes that replace each other in a circle (`supersedes` edges from each to the next, back
    /// to the first), each cycle's notes sorted: recall ignores these edges for ranking until one
    /// of the notes stops declaring it.
    pub supersede_cycles: Vec<Vec<String>>,
    /// Pairs of notes that say they contradict each other (`contradicts`): not errors, for a
    /// person to settle.
    pub contradictions: Vec<Contradiction>,
    /// Pairs of notes with (nearly) the same content and no link between them (a link of any
    /// kind but the synthesized co-occurrence ones says a person or agent knows of both), most
    /// similar first, at most [`MAX_REPORTED_NEAR_DUPLICATES`]: not errors, for a person to merge
    /// them or link one to the other with `supersedes`.
    pub near_duplicates: Vec<NearDuplicate>,
    /// Near-duplicate pairs found beyond the ones listed.
    pub near_duplicates_omitted: usize,
    /// Where the index store differs from the notes (bad bytes read back as other notes or
    /// links, or unreadable): `mnemon doctor --fix` rebuilds it from the notes.
    pub store_damage: Vec<String>,
}

/// Two notes that disagree (a `contradicts` edge between them, either way), `a` < `b`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Contradiction {
    /// One note.
    pub a: String,
    /// The other.
    pub b: String,
}

/// Most near-duplicate pairs a doctor report lists.
pub const MAX_REPORTED_NEAR_DUPLICATES: usize = 1000;

/// How many times `doctor` compares the store with notes that change while it compares.
pub const DOCTOR_TRIES: usize = 3;

/// Two notes with (nearly) the same content, `a` < `b`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NearDuplicate {
    /// One note.
    pub a: String,
    /// The other.
    pub b: String,
    /// Estimated share of the shorter note's word pairs that the other note has too, 0..=1.
    pub similarity: f32,
}

/// The near-duplicate pairs among `sketches`, smaller id first (sketches come in id order).
fn near_duplicate_pairs((ids, sketches): &(Vec<String>, Vec<Sketch>)) -> Vec<NearDuplicate> {
    dedup::near_duplicate_pairs(sketches)
        .into_iter()
        .map(|(i, j, r)| NearDuplicate {
            a: ids[i as usize].clone(),
            b: ids[j as usize].clone(),
            // Two decimals: the estimate is not finer than that.
            similarity: (r.overlap * 100.0).round() / 100.0,
        })
        .collect()
}

/// The cycles of `later` (old note -> the notes replacing it): each group of notes that can reach
/// each other through it, sorted, the groups sorted.
fn supersede_cycles(later: &HashMap<String, Vec<String>>) -> Vec<Vec<String>> {
    let reach = |from: &str| -> std::collections::HashSet<String> {
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<&str> = later
            .get(from)
            .map_or(Vec::new(), |v| v.iter().map(String::as_str).collect());
        while let Some(x) = stack.pop() {
            if seen.insert(x.to_string())
                && let Some(next) = later.get(x)
            {
                stack.extend(next.iter().map(String::as_str));
            }
        }
        seen
    };
    let mut on_cycle: Vec<(String, std::collections::HashSet<String>)> = later
        .keys()
        .map(|k| (k.clone(), reach(k)))
        .filter(|(k, r)| r.contains(k))
        .collect();
    on_cycle.sort_by(|a, b| a.0.cmp(&b.0));
    let mut cycles: Vec<Vec<String>> = Vec::new();
    for (k, r) in &on_cycle {
        if cycles.iter().any(|c| c.contains(k)) {
            continue;
        }
        let mut group: Vec<String> = on_cycle
            .iter()
            .filter(|(o, ro)| r.contains(o) && ro.contains(k))
            .map(|(o, _)| o.clone())
            .collect();
        group.sort();
        cycles.push(group);
    }
    cycles
}

impl Memory {
    /// The core view: pinned and important notes rendered into `budget_tokens` (see
    /// `core_view`). Never fails because the budget is full.
    pub fn core(&self, budget_tokens: usize) -> Result<crate::core_view::CoreView> {
        use crate::core_view::{CoreNote, estimate_tokens, read_body, render};
        crate::args::BUDGET_TOKENS.check(budget_tokens)?;
        self.ensure_indexed()?;
        // Other sessions' importance marks, as recall sees them.
        self.events
            .refresh_if_stale(super::STATS_REFRESH_INTERVAL)?;
        let reader = self.store.read()?;
        let mut wanted: HashMap<String, (bool, u8, u64)> = HashMap::new();
        for (id, rec) in reader.all_nodes()? {
            if rec.pin {
                let st = self.events.stats(&id);
                wanted.insert(id, (true, st.importance.unwrap_or(0), st.recall_count));
            }
        }
        for (id, importance, count) in self.events.important_nodes() {
            wanted
                .entry(id)
                .and_modify(|w| w.1 = importance)
                .or_insert((false, importance, count));
        }
        let mut records = HashMap::with_capacity(wanted.len());
        let mut notes = Vec::with_capacity(wanted.len());
        let mut superseded = Vec::new();
        for (id, (pin, importance, recall_count)) in wanted {
            let Some(rec) = reader.node(&id)? else {
                continue; // importance on a note that is gone
            };
            if self.replaced(&reader, &id)? {
                superseded.push(id);
                continue;
            }
            records.insert(id.clone(), rec);
            notes.push(CoreNote {
                id,
                pin,
                importance,
                recall_count,
            });
        }
        // Notes are read through the checked opener only: a note swapped for a symlink leaving
        // memory/ since it was indexed shows its indexed excerpt, never the file outside.
        let root = self.dir.memory().canonicalize().ok();
        superseded.sort();
        let mut view = render(notes, budget_tokens, |n, tokens_left| {
            let rec = records.get(&n.id)?;
            let mut block = format!("## {} ({})\n", rec.name.as_deref().unwrap_or(&n.id), n.id);
            if let Some(d) = &rec.description {
                block.push_str(d);
                block.push_str("\n\n");
            }
            // Two more tokens than the header leaves: the estimate rounds at each join.
            let body_tokens = (tokens_left + 2).checked_sub(estimate_tokens(&block))?;
            let opened = root
                .as_deref()
                .and_then(|root| notes::open_inside(root, &rec.path).ok());
            let body = match opened {
                Some((file, _)) => match read_body(file, body_tokens) {
                    Ok(Some(body)) => body,
                    Ok(None) => return None,
                    Err(_) => rec.excerpt.clone(),
                },
                None => rec.excerpt.clone(),
            };
            block.push_str(&body);
            block.push_str("\n\n");
            Some(block)
        });
        view.superseded = superseded;
        Ok(view)
    }

    /// Whether a note replaces `id` (a `supersedes` edge from an existing note), and `id` is not
    /// on a cycle of such edges.
    fn replaced(&self, r: &StoreReader<'_>, id: &str) -> Result<bool> {
        let successors = |x: &String| -> Result<Vec<String>> {
            let mut v = Vec::new();
            for e in self.edges_into(r, x)? {
                if e.kind == notes::EdgeKind::Supersedes && e.from != *x && r.has_node(&e.from)? {
                    v.push(e.from);
                }
            }
            Ok(v)
        };
        let chain = crate::recall::supersession::chain_by(id.to_string(), successors)?;
        Ok(chain.is_some_and(|(later, _)| !later.is_empty()))
    }

    /// The notes `id` replaces that replace `id` in turn, directly or through others: a circle
    /// of `supersedes` links through `id` (sorted; empty when there is none), as `doctor`
    /// reports it. `write` and the CLI say it at once: such a circle makes recall treat none
    /// of its notes as replaced, silently, until someone reads a doctor report.
    pub fn supersede_cycle_through(&self, id: &str) -> Result<Vec<String>> {
        /// Most notes followed: a circle longer than this is left to `doctor`.
        const MAX_FOLLOWED: usize = 1024;
        let r = self.store.read()?;
        let replaced_by = |x: &str| -> Result<Vec<String>> {
            Ok(r.edges_out(x)?
                .into_iter()
                .filter(|e| e.kind == notes::EdgeKind::Supersedes && e.other != x)
                .map(|e| e.other)
                .collect())
        };
        // Notes reached from `id`, with the note each was reached from.
        let mut from: HashMap<String, String> = HashMap::new();
        let mut stack = vec![id.to_string()];
        while let Some(x) = stack.pop() {
            if from.len() >= MAX_FOLLOWED {
                break;
            }
            for next in replaced_by(&x)? {
                if next == id {
                    // Back at `id`: the circle is the path walked to `x`.
                    let mut circle = vec![x.clone()];
                    let mut at = x;
                    while let Some(prev) = from.get(&at).filter(|p| **p != id) {
                        circle.push(prev.clone());
                        at = prev.clone();
                    }
                    circle.retain(|c| c != id);
                    circle.sort();
                    circle.dedup();
                    return Ok(circle);
                }
                if !from.contains_key(&next) {
                    from.insert(next.clone(), x.clone());
                    stack.push(next);
                }
            }
        }
        Ok(Vec::new())
    }

    /// The node `id` with its edges both ways.
    pub fn show(&self, id: &str) -> Result<NodeView> {
        check_id(id)?;
        self.ensure_indexed()?;
        let r = self.store.read()?;
        let stored = r.stored_id(id)?.ok_or_else(|| self.not_indexed(id))?;
        let id = stored.as_str();
        let rec: NodeRecord = r.node(id)?.ok_or_else(|| self.not_indexed(id))?;
        let mut edges_out = Vec::new();
        for e in r.edges_out(id)? {
            edges_out.push(EdgeOut {
                dangling: !r.has_node(&e.other)?,
                to: e.other,
                kind: e.kind,
                provenance: e.provenance,
                confidence: e.confidence,
            });
        }
        let edges_in = self.edges_into(&r, id)?;
        let of_kind = |kind: notes::EdgeKind| -> (Vec<String>, Vec<String>) {
            let out = edges_out.iter().filter(|e| e.kind == kind && e.to != id);
            let inn = edges_in.iter().filter(|e| e.kind == kind && e.from != id);
            let mut o: Vec<String> = out.map(|e| e.to.clone()).collect();
            let mut i: Vec<String> = inn.map(|e| e.from.clone()).collect();
            o.sort();
            o.dedup();
            i.sort();
            i.dedup();
            (o, i)
        };
        let (supersedes, superseded_by) = of_kind(notes::EdgeKind::Supersedes);
        let (contradicts_out, contradicts_in) = of_kind(notes::EdgeKind::Contradicts);
        let mut contradicts = contradicts_out;
        contradicts.extend(contradicts_in);
        contradicts.sort();
        contradicts.dedup();
        // Read through the checked opener, as the scan reads notes: never a file outside memory/.
        // An index this process may only read may hold an older version than the file: the
        // bytes the scan hashes are kept to compare.
        let read_only = self.read_only().is_some();
        let keep = if read_only { notes::MAX_NOTE_BYTES } else { 0 };
        let read = self
            .dir
            .memory()
            .canonicalize()
            .ok()
            .and_then(|root| notes::open_inside(&root, &rec.path).ok())
            .and_then(|(file, _)| super::write::sha256_of_reader(file, keep).ok());
        if read_only
            && let Some((_, bytes)) = &read
            && let Some(entry) = r.manifest_entry(&rec.path)?
            && entry.hash != xxhash_rust::xxh3::xxh3_64(bytes)
        {
            return Err(Error::ChangedReadOnly {
                id: id.to_string(),
                path: self.dir.memory().join(&rec.path),
            });
        }
        let sha256 = read.map(|(h, _)| h);
        Ok(NodeView {
            id: id.to_string(),
            path: rec.path,
            name: rec.name,
            note_type: rec.note_type.as_str(),
            description: rec.description,
            tags: rec.tags,
            pin: rec.pin,
            created_s: rec.created_s,
            updated_s: rec.updated_s,
            ttl_days: rec.ttl_days,
            excerpt: rec.excerpt,
            edges_out,
            edges_in,
            superseded_by,
            supersedes,
            contradicts,
            sha256,
        })
    }

    /// The edges arriving at `id`, in the order an edge list keeps: from this process's graph
    /// when it is of the store version `r` reads (a `serve` process, or one that recalled), else
    /// found by `r` in one pass over the out-edges (the store keeps each edge at its source).
    pub(super) fn edges_into(&self, r: &StoreReader<'_>, id: &str) -> Result<Vec<EdgeIn>> {
        let v = r.version()?;
        if let Ok(g) = self.graph.read()
            && g.version() == v
            && !g.is_empty()
        {
            let Some(o) = g.ord(id) else {
                return Ok(Vec::new());
            };
            return Ok(g
                .inn(o)
                .iter()
                .map(|e| EdgeIn {
                    from: g.id(e.other).to_string(),
                    kind: e.kind,
                    provenance: e.provenance,
                    confidence: e.confidence,
                })
                .collect());
        }
        Ok(r.edges_in(id)?
            .into_iter()
            .map(|e| EdgeIn {
                from: e.other,
                kind: e.kind,
                provenance: e.provenance,
                confidence: e.confidence,
            })
            .collect())
    }

    /// Every edge in the graph (for tests and tools).
    pub fn edges(&self) -> Result<Vec<Edge>> {
        self.ensure_indexed()?;
        self.store.read()?.all_edges()
    }

    /// Check the memory: re-scan, then list dangling links, note problems, conflict markers and
    /// the index state. The store is compared with the notes; notes edited meanwhile make it
    /// compare again (at most `DOCTOR_TRIES` times), then say so instead of calling the
    /// differences damage.
    pub fn doctor(&self) -> Result<DoctorReport> {
        if self.store.read_only().is_some() {
            return Err(self
                .store
                .read_only_refusal("doctor (it brings the index up to date before checking it)"));
        }
        let mut report = match self.index_for_doctor()? {
            Ok(report) => report,
            Err(damaged) => return Ok(damaged),
        };
        // Notes edited while the comparison runs differ from the store without any damage: the
        // index is brought up to date and the comparison made again, a few times at most.
        let mut verified = crate::verify::store_against_notes(&self.store, &self.dir.memory())?;
        let mut tries = 1;
        while !verified.damage.is_empty() && !verified.changed.is_empty() && tries < DOCTOR_TRIES {
            tries += 1;
            report = match self.index_for_doctor()? {
                Ok(report) => report,
                Err(damaged) => return Ok(damaged),
            };
            verified = crate::verify::store_against_notes(&self.store, &self.dir.memory())?;
        }
        if !verified.damage.is_empty() && !verified.changed.is_empty() {
            let mut changing = self.damaged_report(String::new());
            changing.notes = report.notes;
            changing.edges = report.edges;
            changing.index.ok = true;
            let shown: Vec<&str> = verified
                .changed
                .iter()
                .take(3)
                .map(String::as_str)
                .collect();
            changing.index.message = Some(format!(
                "notes changed while doctor compared them with the store ({tries} tries; {}{}): \
                 nothing is known to be damaged; run `mnemon doctor` again when nothing writes \
                 to memory/",
                shown.join(", "),
                if verified.changed.len() > shown.len() {
                    format!(" and {} more", verified.changed.len() - shown.len())
                } else {
                    String::new()
                }
            ));
            return Ok(changing);
        }
        let store_damage = verified.damage;
        if !store_damage.is_empty() {
            let mut damaged = self.damaged_report(String::new());
            damaged.store_damage = store_damage;
            damaged.notes = report.notes;
            damaged.edges = report.edges;
            return Ok(damaged);
        }
        let walk_errors: Vec<ScanError> = {
            let r = self.store.read()?;
            let with_problems: std::collections::HashSet<String> =
                r.problems()?.into_iter().map(|(p, _)| p).collect();
            // The index's scan, then what only doctor's full parse met (a note unchanged since
            // it was indexed is never opened by the scan, though this process may not read it).
            let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
            report
                .errors
                .iter()
                .chain(&verified.walk_errors)
                .filter(|e| !with_problems.contains(&e.path) && seen.insert(e.path.clone()))
                .cloned()
                .collect()
        };
        let r = self.store.read()?;
        let mut dangling = Vec::new();
        // later[old] = the notes declaring they replace it.
        let mut later: HashMap<String, Vec<String>> = HashMap::new();
        let mut contradictions: Vec<Contradiction> = Vec::new();
        // Near-duplicates joined by an edge someone wrote or a phrase declared are not listed:
        // a person or an agent knows of both.
        let mut near = near_duplicate_pairs(&verified.sketches);
        let mut linked: HashSet<(String, String)> = HashSet::new();
        let in_pairs: HashSet<&str> = near
            .iter()
            .flat_map(|d| [d.a.as_str(), d.b.as_str()])
            .collect();
        for e in r.all_edges()? {
            if !in_pairs.is_empty()
                && in_pairs.contains(e.from.as_str())
                && !matches!(
                    e.kind,
                    notes::EdgeKind::CoOccursSlug | notes::EdgeKind::CoOccursToken
                )
            {
                linked.insert(if e.from < e.to {
                    (e.from.clone(), e.to.clone())
                } else {
                    (e.to.clone(), e.from.clone())
                });
            }
            match e.kind {
                notes::EdgeKind::Supersedes => {
                    later.entry(e.to.clone()).or_default().push(e.from.clone());
                }
                notes::EdgeKind::Contradicts if e.from != e.to => {
                    let (a, b) = if e.from < e.to {
                        (e.from.clone(), e.to.clone())
                    } else {
                        (e.to.clone(), e.from.clone())
                    };
                    contradictions.push(Contradiction { a, b });
                }
                _ => {}
            }
            if !r.has_node(&e.to)? {
                dangling.push(Dangling {
                    other_form_of: r.stored_id(&e.to)?,
                    from: e.from,
                    to: e.to,
                    kind: e.kind,
                    provenance: e.provenance,
                });
            }
        }
        let mut note_errors = Vec::new();
        let mut conflicts = Vec::new();
        for (path, problems) in r.problems()? {
            for p in problems {
                if p.kind == ProblemKind::Conflict {
                    conflicts.push(path.clone());
                }
                note_errors.push(NoteError {
                    path: path.clone(),
                    kind: p.kind,
                    message: p.message,
                });
            }
        }
        // An unusable change count loses no data but slows every recall: reported with its fix.
        let seq_problem = self.store.change_seq_problem().map(ToString::to_string);
        let index = IndexHealth {
            path: self.store.path().display().to_string(),
            schema_version: crate::store::SCHEMA_VERSION,
            ok: seq_problem.is_none(),
            message: seq_problem,
        };
        contradictions.sort_by(|x, y| (&x.a, &x.b).cmp(&(&y.a, &y.b)));
        contradictions.dedup_by(|x, y| x.a == y.a && x.b == y.b);
        let supersede_cycles = supersede_cycles(&later);
        near.retain(|d| !linked.contains(&(d.a.clone(), d.b.clone())));
        let near_duplicates_omitted = near.len().saturating_sub(MAX_REPORTED_NEAR_DUPLICATES);
        near.truncate(MAX_REPORTED_NEAR_DUPLICATES);
        let near_duplicates = near;
        let healthy = dangling.is_empty()
            && supersede_cycles.is_empty()
            && note_errors.is_empty()
            && conflicts.is_empty()
            && walk_errors.is_empty()
            && index.ok;
        Ok(DoctorReport {
            healthy,
            notes: report.notes,
            edges: report.edges,
            dangling,
            note_errors,
            conflicts,
            walk_errors,
            index,
            store_damage: Vec::new(),
            supersede_cycles,
            contradictions,
            near_duplicates,
            near_duplicates_omitted,
        })
    }

    /// Bring the index up to date for `doctor`: its report, or (`Err` inside) the report of a
    /// store found damaged on the way (an error saying so, or a panic inside redb).
    fn index_for_doctor(&self) -> Result<std::result::Result<IndexReport, DoctorReport>> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.index())) {
            Ok(Ok(report)) => Ok(Ok(report)),
            Ok(Err(e)) if crate::store::is_damage(&e) => {
                Ok(Err(self.damaged_report(e.to_string())))
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Ok(Err(self.damaged_report(
                "indexing panicked inside redb: the store's bytes are damaged".into(),
            ))),
        }
    }

    /// Why `id` (a checked id) is not in the store: no such note, its file is there and cannot
    /// be read (then the I/O error, with the fix for it), or is newer than an index this process
    /// may only read.
    pub(super) fn not_indexed(&self, id: &str) -> Error {
        let path = self.dir.memory().join(format!("{id}.md"));
        // Only on this error path: the look-up reads every id.
        let case_twin = || {
            self.store
                .read()
                .and_then(|r| r.case_twin_of(id))
                .ok()
                .flatten()
        };
        let unknown = || Error::UnknownNode {
            id: id.to_string(),
            meant: case_twin(),
        };
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() => match std::fs::File::open(&path) {
                Err(e) => Error::io("read", &path, e),
                Ok(_) if self.read_only().is_some() => Error::NotIndexedReadOnly {
                    id: id.to_string(),
                    path,
                },
                Ok(_) => unknown(),
            },
            // No file, but a history in the event log: the note was there.
            _ => {
                let history = self.events.stats(id);
                if history.recall_count > 0
                    || history.importance.is_some()
                    || history.used_count > 0
                    || history.wrong_count > 0
                {
                    Error::RemovedNode { id: id.to_string() }
                } else {
                    unknown()
                }
            }
        }
    }

    /// A doctor report for a store whose bytes are bad: nothing else read from it is trusted.
    pub(super) fn damaged_report(&self, reason: String) -> DoctorReport {
        let mut store_damage = Vec::new();
        if !reason.is_empty() {
            store_damage.push(reason);
        }
        DoctorReport {
            healthy: false,
            notes: 0,
            edges: 0,
            dangling: Vec::new(),
            note_errors: Vec::new(),
            conflicts: Vec::new(),
            walk_errors: Vec::new(),
            supersede_cycles: Vec::new(),
            contradictions: Vec::new(),
            near_duplicates: Vec::new(),
            near_duplicates_omitted: 0,
            index: IndexHealth {
                path: self.store.path().display().to_string(),
                schema_version: crate::store::SCHEMA_VERSION,
                ok: false,
                message: Some(
                    "the store differs from the notes: run `mnemon doctor --fix` to rebuild it from \
                     the notes (events and notes are not touched)"
                        .into(),
                ),
            },
            store_damage,
        }
    }

    /// Move the index store of the memory folder `dir` aside as damaged (to
    /// `graph.redb.damaged`, replacing an older one) so the next open starts a new one, rebuilt
    /// from the notes by the next index. No process may have the memory open in this one.
    pub fn discard_store(dir: &MemoryDir) -> Result<std::path::PathBuf> {
        let index = dir.index();
        let aside = crate::store::move_aside(&index)?;
        // The graph cache mirrors the store; it is rebuilt with it.
        let cache = index.join(crate::graph::file::GRAPH_FILE);
        match std::fs::remove_file(&cache) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io("remove", &cache, e));
            }
            _ => {}
        }
        Ok(aside)
    }

    /// Move an unusable change count of the memory folder `dir` aside (to `store.seq.damaged`)
    /// so the next open creates a new one; `None` when it is usable (or absent). The count only
    /// tells processes when the store changed: nothing is lost, and a process that has the
    /// memory open keeps reading the old file until it reopens. No process may write to the
    /// memory meanwhile.
    pub fn discard_change_seq(dir: &MemoryDir) -> Result<Option<std::path::PathBuf>> {
        let index = dir.index();
        if crate::store::seq::ChangeSeq::open(&index).is_ok() {
            return Ok(None);
        }
        let path = index.join(crate::store::seq::SEQ_FILE);
        let mut aside = path.as_os_str().to_owned();
        aside.push(".damaged");
        let aside = std::path::PathBuf::from(aside);
        if let Ok(meta) = std::fs::symlink_metadata(&aside)
            && meta.is_dir()
        {
            std::fs::remove_dir_all(&aside).map_err(|e| Error::io("remove", &aside, e))?;
        }
        std::fs::rename(&path, &aside).map_err(|e| Error::io("move aside", &path, e))?;
        Ok(Some(aside))
    }
}
