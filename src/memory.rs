//! The `Memory` facade: one handle on a memory folder, used by the CLI, the MCP server and
//! embedding agents alike.

use crate::background::{FREE_LATER_MIN_ITEMS, FREE_LATER_MIN_NOTES, free_later};
use crate::error::{Error, Result};
use crate::events::{EventKind, EventLog, HitSource, RecallStats, SyncPolicy};
use crate::folder::MemoryDir;
use crate::fs::{Fs, RealFs};
use crate::index::LexicalIndex;
use crate::index::fields::{DocTerms, TermBatch};
use crate::index::segment::LaidOut;
use crate::index::segment::writer::{SegmentBuilder, WriteError};
use crate::index::tokenize::Tokenizer;
use crate::notes::{self, NoteType, ProblemKind};
use crate::recall::learned::Learned;
use crate::recall::ord_stats::OrdStats;
use crate::recall::shown::ShownCache;
use crate::recall::{self, Clock, Query, Recall, SystemClock, cooccur, policy};
use crate::scan::{self, ScanError};
use crate::store::graph::{self, Refreshed};
use crate::store::{
    Batch, BatchWriter, Edge, EdgeValue, Graph, LazyReader, NodeRecord, Store, StoreReader, Version,
};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

/// Before a recall, events written by other live sessions are folded in if the last fold is
/// older than this (a directory listing and a stat per segment).
pub const STATS_REFRESH_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// A recall reuses the store version it read last, without a read transaction, while the store's
/// change count has not moved (`store::seq`), and for at most this long: a writer that does not
/// count its commits (a build before the count, another machine on a network file system, which
/// does not share the mapping) is seen within this time.
pub const STORE_RECHECK_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Synthesis note by note tokenizes this many notes at a time (per-note term tables are large);
/// a scan that changed more notes than this merges the lexical index to one segment after.
const BUILD_CHUNK_NOTES: usize = 8192;
/// The lexical pass of a build tokenizes this many notes at a time, while the chunk before is
/// folded into the segment builder: two chunks' term batches live at once.
const LEXICAL_CHUNK_NOTES: usize = 4096;
/// Notes tokenized against one dictionary (a unit of work of one core): each distinct term is
/// allocated and looked up once per batch.
const TERM_BATCH_NOTES: usize = 256;
/// Token co-occurrence is found term by term (one pass over the whole dictionary) when at least
/// 1 / this of a lone segment's notes changed; note by note otherwise.
const TERM_PASS_MIN_SHARE: usize = 4;
/// From this many changed notes, a batch's note rows are written on a thread of their own while
/// the lexical index and the edges are computed (below it, the thread costs more than it saves).
const OVERLAP_STORE_MIN_NOTES: usize = 512;

/// Nodes patched into a process's graph after which it writes the graph cache file again (each
/// process that reads the file patches what happened since it was written). Below this, writing
/// the file (tens of milliseconds at 100k notes) costs more than the patches it would save.
const GRAPH_FILE_REWRITE_PATCHED: usize = 256;

/// Lock file in `index/` held while one process updates the derived index.
pub use crate::store::WRITE_LOCK_FILE;

/// Identity (len, mtime) of the lexical manifest file, `None` when there is none.
type ManifestStamp = Option<(u64, std::time::SystemTime)>;

/// An open memory folder.
pub struct Memory {
    dir: MemoryDir,
    store: Store,
    tokenizer: Tokenizer,
    lexical: RwLock<Arc<LexicalIndex>>,
    /// Identity (len, mtime) of the manifest file the loaded lexical index came from.
    lexical_stamp: Mutex<ManifestStamp>,
    /// The store version at which recall last found the loaded lexical view to be the manifest
    /// on disk, with that view's stamp.
    lexical_checked_at: Mutex<Option<(Version, ManifestStamp)>>,
    /// The store's graph in memory, refreshed to the store's version at each recall.
    graph: RwLock<Arc<Graph>>,
    /// Nodes patched into `graph` since it was last read from or written to the graph cache
    /// file: past [`GRAPH_FILE_REWRITE_PATCHED`] the file is written again.
    graph_patched: std::sync::atomic::AtomicUsize,
    /// Folded stats by the graph's ordinals, for scoring.
    ord_stats: RwLock<Arc<OrdStats>>,
    /// What feedback taught (query term -> notes), rebuilt when the feedback changes.
    learned: RwLock<Arc<Learned>>,
    /// The last recall of this process (qid, question): feedback without a question is about it.
    last_question: Mutex<Option<(String, String)>>,
    /// What recall shows of the notes it returned lately, for one store version.
    shown: RwLock<Arc<ShownCache>>,
    /// The store version the last recall at the current version read, with the store's change
    /// count read just before its transaction began and when (`None` when the count was
    /// unsettled).
    last_read: Mutex<Option<(u64, Version, Instant)>>,
    clock: Box<dyn Clock>,
    events: EventLog,
    notices: Mutex<Vec<String>>,
    qid_counter: std::sync::atomic::AtomicU64,
    /// Set once the store is known to have been indexed (see [`Memory::ensure_indexed`]).
    indexed: std::sync::atomic::AtomicBool,
}

/// How to open a memory folder.
#[derive(Clone)]
pub struct OpenOptions {
    /// Session id for this process's events (default: a new one per process).
    pub session: Option<String>,
    /// When appended events become durable.
    pub sync: SyncPolicy,
    /// File system for the event log and snapshots (tests inject faults here).
    pub fs: Arc<dyn Fs>,
    /// Event segment ages for compaction (also run at open when due).
    pub compact: crate::events::CompactPolicy,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            session: std::env::var("MNEMON_SESSION")
                .ok()
                .filter(|s| !s.is_empty()),
            sync: SyncPolicy::default(),
            fs: Arc::new(RealFs),
            compact: crate::events::CompactPolicy::default(),
        }
    }
}

/// `mnemon stats ID` output.
#[derive(Debug, Clone, Serialize)]
pub struct NodeStatsView {
    pub id: String,
    pub recall_count: u64,
    /// Milliseconds since the Unix epoch.
    pub last_recalled_at: Option<i64>,
    pub importance: Option<u8>,
    /// Milliseconds since the Unix epoch.
    pub importance_ts: Option<i64>,
    /// Times an agent said it used the note (feedback) or fetched it by id.
    pub used_count: u64,
    /// Of those, the uses tied to no question (fetches, feedback naming no question).
    pub untied_used: u64,
    /// Times an agent said the note was wrong for its question.
    pub wrong_count: u64,
    /// Milliseconds since the Unix epoch.
    pub last_used_at: Option<i64>,
}

/// Notes one feedback call may name at most (used and wrong together).
pub const MAX_FEEDBACK_IDS: usize = 64;

/// What `feedback` recorded.
#[derive(Debug, Clone, Serialize)]
pub struct FeedbackReport {
    /// The recall it is about (empty when the question was given and is not this process's last
    /// recall).
    pub qid: String,
    /// The question the verdicts are for (empty: none known; then only the notes' use counts
    /// change).
    pub query: String,
    pub used: Vec<String>,
    pub wrong: Vec<String>,
}

/// A recall's results and floor report.
type Found = (Vec<recall::Hit>, recall::FloorReport);

/// What `index` did. An empty `changed` list means nothing changed.
#[derive(Debug, Clone, Serialize)]
pub struct IndexReport {
    pub notes: u64,
    pub edges: u64,
    /// Ids added or changed by this scan.
    pub changed: Vec<String>,
    /// Ids that left the corpus in this scan.
    pub removed: Vec<String>,
    /// Every current problem: walk errors, then per-note problems.
    pub errors: Vec<ScanError>,
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

/// What a batch's synthesized edges are computed against: the store as it was before the batch,
/// and the batch's own notes (ids, types, removals).
struct Synthesis<'s, 'b> {
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
            .ids_with_prefix(prefix, policy::MAX_SLUG_CLUSTER + 1 + self.removed.len())?;
        cluster.retain(|id| !self.removed.contains(id.as_str()));
        // The batch's ids with this prefix: a range of the sorted list, not a scan of it.
        let from = self.batch_ids.partition_point(|id| *id < prefix);
        for id in self.batch_ids[from..]
            .iter()
            .take_while(|id| id.starts_with(prefix))
            .take(policy::MAX_SLUG_CLUSTER + 1)
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
        synth.truncate(policy::CO_OCCURRENCE_CAP);
        let cap = policy::CO_OCCURRENCE_CAP - synth.len();
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
fn same_edges(a: &[EdgeValue], b: &[EdgeValue]) -> bool {
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

/// The lexical index before a batch, the index with it, and each upsert's synthesized edges.
type Indexed = (Arc<LexicalIndex>, Arc<LexicalIndex>, Vec<Synthesized>);

/// Notes outside a batch whose out-lists it changes (with the new lists), and the probe floors
/// of the notes it recomputed.
type Relisted = (Vec<(String, Vec<EdgeValue>)>, Vec<(String, f32)>);

/// A note whose synthesized edges an update recomputes, as stored and as indexed.
struct Affected {
    id: String,
    note_type: NoteType,
    stored: Vec<EdgeValue>,
    doc: DocTerms,
}

/// A recomputed note: its id, its new out-list when that differs from the stored one, and its
/// probe floor.
type Recomputed = (String, Option<Vec<EdgeValue>>, f32);

/// A note's synthesized edges and its probe floor (`cooccur::probe_floor`).
type Synthesized = (Vec<EdgeValue>, f32);

fn ms_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A node with its edges both ways (`mnemon show`).
#[derive(Debug, Clone, Serialize)]
pub struct NodeView {
    pub id: String,
    pub path: String,
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub note_type: &'static str,
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub pin: bool,
    pub created_at: Option<i64>,
    pub updated_at: Option<i64>,
    pub ttl_days: Option<u32>,
    pub excerpt: String,
    pub edges_out: Vec<EdgeOut>,
    pub edges_in: Vec<EdgeIn>,
}

/// An edge leaving the shown node.
#[derive(Debug, Clone, Serialize)]
pub struct EdgeOut {
    pub to: String,
    pub kind: notes::EdgeKind,
    pub provenance: notes::Provenance,
    pub confidence: f32,
    /// The target is not a note (yet).
    pub dangling: bool,
}

/// An edge arriving at the shown node.
#[derive(Debug, Clone, Serialize)]
pub struct EdgeIn {
    pub from: String,
    pub kind: notes::EdgeKind,
    pub provenance: notes::Provenance,
    pub confidence: f32,
}

/// A link whose target is not a note.
#[derive(Debug, Clone, Serialize)]
pub struct Dangling {
    pub from: String,
    pub to: String,
    pub kind: notes::EdgeKind,
}

/// A problem of one note.
#[derive(Debug, Clone, Serialize)]
pub struct NoteError {
    pub path: String,
    pub kind: ProblemKind,
    pub message: String,
}

/// Health of the derived index.
#[derive(Debug, Clone, Serialize)]
pub struct IndexHealth {
    pub path: String,
    pub schema_version: u32,
    pub ok: bool,
    /// Set when the index was rebuilt, could not be read, or has an unusable change count.
    pub message: Option<String>,
}

/// What `doctor` found. `healthy` is false when any list is non-empty or the index is not ok.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    pub healthy: bool,
    pub notes: u64,
    pub edges: u64,
    pub dangling: Vec<Dangling>,
    pub note_errors: Vec<NoteError>,
    pub conflicts: Vec<String>,
    pub walk_errors: Vec<ScanError>,
    pub index: IndexHealth,
    /// Where the index store differs from the notes (bad bytes read back as other notes or
    /// links, or unreadable): `mnemon doctor --fix` rebuilds it from the notes.
    pub store_damage: Vec<String>,
}

/// A user-given id must be a valid id (never a path outside `memory/`).
fn check_id(id: &str) -> Result<()> {
    notes::validate_id(id).map_err(|r| Error::InvalidArgument {
        what: "id",
        message: format!("`{id}`: {r}"),
    })
}

impl Memory {
    /// Create a memory folder at `root` (idempotent) and open it.
    pub fn init(root: impl Into<std::path::PathBuf>) -> Result<Memory> {
        let dir = MemoryDir::init(root)?;
        Memory::open_dir(dir)
    }

    /// Open the memory folder at `root` (the folder holding `memory/`).
    pub fn open(root: impl Into<std::path::PathBuf>) -> Result<Memory> {
        let dir = MemoryDir::at(root);
        if !dir.memory().is_dir() {
            return Err(Error::NotAMemoryFolder {
                path: dir.root().to_path_buf(),
            });
        }
        Memory::open_dir(dir)
    }

    /// Open an already located memory folder with default options.
    pub fn open_dir(dir: MemoryDir) -> Result<Memory> {
        Memory::open_with(dir, OpenOptions::default())
    }

    /// Open an already located memory folder.
    pub fn open_with(dir: MemoryDir, opts: OpenOptions) -> Result<Memory> {
        let mut notices = Vec::new();
        dir.check_contained()?;
        for sub in [dir.events(), dir.index()] {
            std::fs::create_dir_all(&sub).map_err(|e| Error::io("create folder", &sub, e))?;
        }
        if let Err(e) = dir.ensure_gitignore() {
            notices.push(format!("could not update .gitignore: {e}"));
        }
        let (store, rebuilt) = Store::open(&dir.index())?;
        notices.extend(rebuilt);
        notices.extend(store.change_seq_problem().map(str::to_string));
        let events = EventLog::open(opts.fs, dir.events(), dir.index(), opts.session, opts.sync)?;
        let now_ms = SystemClock.now_s() * 1000;
        if events.compaction_due(opts.compact, now_ms) {
            match events.compact(opts.compact, now_ms) {
                Ok(r) if !r.compressed.is_empty() || !r.archived.is_empty() => {
                    notices.push(format!(
                        "compacted the event log: {} compressed, {} archived",
                        r.compressed.len(),
                        r.archived.len()
                    ))
                }
                Ok(_) => {}
                Err(e) => notices.push(format!("event log compaction failed: {e}")),
            }
        }
        notices.extend(events.take_notices());
        let memory = Memory {
            dir,
            store,
            tokenizer: Tokenizer::new(),
            lexical: RwLock::new(Arc::new(LexicalIndex::empty())),
            lexical_stamp: Mutex::new(None),
            lexical_checked_at: Mutex::new(None),
            graph: RwLock::new(Arc::new(Graph::default())),
            graph_patched: std::sync::atomic::AtomicUsize::new(0),
            ord_stats: RwLock::new(Arc::new(OrdStats::default())),
            learned: RwLock::new(Arc::new(Learned::default())),
            last_question: Mutex::new(None),
            shown: RwLock::new(Arc::new(ShownCache::new(Version::default()))),
            last_read: Mutex::new(None),
            clock: Box::new(SystemClock),
            events,
            notices: Mutex::new(notices),
            qid_counter: std::sync::atomic::AtomicU64::new(0),
            indexed: std::sync::atomic::AtomicBool::new(false),
        };
        if let Some(n) = memory.load_lexical()? {
            memory.notice(n);
        }
        Ok(memory)
    }

    /// Use `clock` for recency and TTL (tests, replays).
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    fn manifest_stamp(&self) -> ManifestStamp {
        let m =
            std::fs::metadata(self.dir.index().join(crate::index::manifest::MANIFEST_FILE)).ok()?;
        Some((m.len(), m.modified().ok()?))
    }

    /// Load the lexical index from disk; rebuild it from the notes when it is missing, damaged, or
    /// disagrees with the store. Returns a notice when it had to be rebuilt.
    fn load_lexical(&self) -> Result<Option<String>> {
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
                format!(
                    "lexical index file {} is damaged ({reason})",
                    path.display()
                )
            }
            Err(e) => return Err(e),
        };
        let _lock = self.write_lock()?;
        // Another process may have been mid-update (lexical written, store not yet): now that
        // we hold the lock, look again before paying for a rebuild.
        let (nodes, recorded) = expected()?;
        if let Ok(Some(lex)) = LexicalIndex::open(&index_dir)
            && fits(&lex, (nodes, recorded))
        {
            self.set_lexical(lex, self.manifest_stamp());
            return Ok(None);
        }
        let outcome = scan::scan(&self.dir.memory(), &HashMap::new());
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
        Ok(Some(format!("{problem}: rebuilt it from the notes")))
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
    fn lexical_segment<'p>(
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
    fn index_corrupt(&self, e: &dyn std::fmt::Display) -> Error {
        Error::Corrupt {
            path: self.dir.index(),
            reason: e.to_string(),
        }
    }

    /// The per-field terms of `notes`, tokenized in parallel.
    fn doc_terms(&self, notes: &[notes::ParsedNote]) -> Vec<DocTerms> {
        notes
            .par_iter()
            .map(|p| DocTerms::from_note(&self.tokenizer, p))
            .collect()
    }

    fn set_lexical(&self, lex: LexicalIndex, stamp: ManifestStamp) {
        self.set_lexical_arc(Arc::new(lex), stamp);
    }

    fn set_lexical_arc(&self, lex: Arc<LexicalIndex>, stamp: ManifestStamp) {
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
    fn lexical_at(&self, v: Version) -> Result<Arc<LexicalIndex>> {
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
    fn loaded_lexical(&self) -> Result<Arc<LexicalIndex>> {
        self.lexical
            .read()
            .map(|g| g.clone())
            .map_err(|_| Error::InvalidArgument {
                what: "lexical index",
                message: "lock poisoned by a panic in another thread".into(),
            })
    }

    /// The current lexical index, reloaded first if another process replaced its manifest.
    fn lexical(&self) -> Result<Arc<LexicalIndex>> {
        Ok(self.lexical_reloaded()?.0)
    }

    /// [`Memory::lexical`], with the manifest's stamp when the view returned is the manifest on
    /// disk (`None` when a reload failed and the old view was kept).
    fn lexical_reloaded(&self) -> Result<(Arc<LexicalIndex>, Option<ManifestStamp>)> {
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

    /// The in-memory graph at store version `v` (patched from the store's change log through
    /// `view`, or loaded whole the first time; `view` begins its transaction only then).
    fn graph(&self, view: &LazyReader<'_>, v: Version) -> Result<Arc<Graph>> {
        let poisoned = || Error::InvalidArgument {
            what: "graph",
            message: "lock poisoned by a panic in another thread".into(),
        };
        // Equal, or another thread already moved it past this reader: good enough.
        let covers = |g: &Graph| {
            let have = g.version();
            have.epoch == v.epoch && have.generation >= v.generation && !g.is_empty()
        };
        {
            let g = self.graph.read().map_err(|_| poisoned())?;
            if covers(&g) {
                return Ok(g.clone());
            }
        }
        let mut w = self.graph.write().map_err(|_| poisoned())?;
        if covers(&w) {
            return Ok(w.clone());
        }
        let g = Arc::make_mut(&mut w);
        let index_dir = self.dir.index();
        if g.is_empty() {
            // A process's first recall: the graph another process kept, if it is of this store.
            match graph::file::read(&index_dir) {
                Ok(Some(kept)) if kept.version().epoch == v.epoch => *g = kept,
                Ok(_) => {}
                Err(e) => self.notice(format!("{e}; the graph is loaded from the store")),
            }
            self.graph_patched.store(0, Ordering::Relaxed);
            if covers(g) {
                return Ok(w.clone());
            }
        }
        let patched = match g.refresh(view.get()?.0)? {
            Refreshed::Unchanged => 0,
            Refreshed::Patched(n) => self.graph_patched.fetch_add(n, Ordering::Relaxed) + n,
            Refreshed::Loaded => usize::MAX,
        };
        let g = w.clone();
        drop(w);
        // An empty graph is never kept: it is as quick to load, and `covers` never holds for
        // it, so every recall of an empty memory would write the file again.
        if patched >= GRAPH_FILE_REWRITE_PATCHED && !g.is_empty() {
            self.graph_patched.store(0, Ordering::Relaxed);
            // Outside the lock: other recalls need not wait for the file. A cache: a folder that
            // cannot take it only loses the next process's head start.
            let _ = graph::file::write(&RealFs, &index_dir, &g);
        }
        Ok(g)
    }

    /// The shown-records cache of store version `v` (a new, empty one when `v` is not the
    /// version of the one kept).
    fn shown(&self, v: Version) -> Result<Arc<ShownCache>> {
        let poisoned = || Error::InvalidArgument {
            what: "shown records",
            message: "lock poisoned by a panic in another thread".into(),
        };
        {
            let c = self.shown.read().map_err(|_| poisoned())?;
            if c.version() == v {
                return Ok(c.clone());
            }
        }
        let mut w = self.shown.write().map_err(|_| poisoned())?;
        if w.version() != v {
            *w = Arc::new(ShownCache::new(v));
        }
        Ok(w.clone())
    }

    /// The folded stats keyed by `graph`'s ordinals (patched from the stats change log), and
    /// what feedback taught by query term, both current with the folded events (one view).
    fn stats_tables(&self, graph: &Graph) -> Result<(Arc<OrdStats>, Arc<Learned>)> {
        let poisoned = || Error::InvalidArgument {
            what: "stats",
            message: "lock poisoned by a panic in another thread".into(),
        };
        let Some(view) = self.events.view() else {
            return Err(poisoned());
        };
        let by_ord = {
            let t = self.ord_stats.read().map_err(|_| poisoned())?;
            t.is_current(graph, &view).then(|| t.clone())
        };
        let by_ord = match by_ord {
            Some(t) => t,
            None => {
                let mut w = self.ord_stats.write().map_err(|_| poisoned())?;
                Arc::make_mut(&mut w).refresh(graph, &view);
                w.clone()
            }
        };
        let learned = {
            let t = self.learned.read().map_err(|_| poisoned())?;
            t.is_current(&view).then(|| t.clone())
        };
        let learned = match learned {
            Some(t) => t,
            None => {
                let mut w = self.learned.write().map_err(|_| poisoned())?;
                Arc::make_mut(&mut w).refresh(&view, &self.tokenizer);
                w.clone()
            }
        };
        Ok((by_ord, learned))
    }

    fn write_lock(&self) -> Result<crate::store::WriteLock> {
        self.store.write_lock()
    }

    /// The folder this memory lives in.
    pub fn dir(&self) -> &MemoryDir {
        &self.dir
    }

    /// Messages about repairs made while opening or since (rebuilt index, a damaged graph
    /// cache, ...), for the caller to show.
    pub fn take_notices(&mut self) -> Vec<String> {
        self.notices
            .get_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn notice(&self, n: String) {
        if let Ok(mut v) = self.notices.lock() {
            v.push(n);
        }
    }

    /// Index `memory/` when the store was never indexed but notes exist (`index/` deleted, or a
    /// folder that came with its notes): a command that looks a note up must not answer "no
    /// note" because nobody ran `index` yet. One atomic load once the store is known indexed.
    fn ensure_indexed(&self) -> Result<()> {
        use std::sync::atomic::Ordering;
        if self.indexed.load(Ordering::Acquire) {
            return Ok(());
        }
        let unindexed = self.store.read()?.manifest_len()? == 0;
        let memory = self.dir.memory();
        let has_notes = std::fs::read_dir(&memory)
            .map_err(|e| Error::io("read folder", &memory, e))?
            .next()
            .is_some();
        if unindexed && has_notes {
            let report = self.index()?;
            self.notice(format!(
                "the index held no notes: indexed {} from {}",
                report.notes,
                memory.display()
            ));
        }
        self.indexed.store(true, Ordering::Release);
        Ok(())
    }

    /// Bring the index up to date with `memory/` (incremental).
    pub fn index(&self) -> Result<IndexReport> {
        let started = Instant::now();
        let _lock = self.write_lock()?;
        let t = Instant::now();
        let (outcome, manifest) =
            scan::scan_while_loading(&self.dir.memory(), || self.store.read()?.manifest())?;
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

    /// Bring the index up to date for `paths` only (what a file watcher reported: notes added,
    /// changed or removed), without walking `memory/`: a one-note update costs the note, not the
    /// corpus. Falls back to [`Memory::index`] when a path is a folder or a symlink.
    pub fn index_paths(&self, paths: &[std::path::PathBuf]) -> Result<IndexReport> {
        let started = Instant::now();
        let lock = self.write_lock()?;
        let t = Instant::now();
        let scanned = {
            let reader = self.store.read()?;
            let entry_of = |rel: &str| reader.manifest_entry(rel).ok().flatten();
            scan::scan_paths(&self.dir.memory(), paths, &entry_of)
        };
        let Some(outcome) = scanned else {
            drop(lock);
            return self.index();
        };
        let phases = IndexPhases {
            scan_ms: ms_since(t),
            ..IndexPhases::default()
        };
        let report = self.apply_scan(outcome, phases, started);
        drop(lock);
        report
    }

    /// Write what a scan found: lexical segments first, then synthesized edges and the store.
    fn apply_scan(
        &self,
        mut outcome: scan::ScanOutcome,
        mut phases: IndexPhases,
        started: Instant,
    ) -> Result<IndexReport> {
        if !outcome.parsed.is_empty() || !outcome.removed.is_empty() {
            // Lexical first, then the store: a crash in between leaves the store's manifest
            // old, so the next scan redoes both (the lexical update is idempotent). The store's
            // transaction is begun early and, when the batch is big, its note rows are written
            // while the lexical index is built, on a core of the build's pool when one is free
            // (`lexical_segment`'s `beside`: a 1k build writes them beside the fold and the
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
            let (relisted, floors) =
                self.resynthesized(&outcome.batch, &outcome.parsed, &before, &lex)?;
            outcome.batch.relisted = relisted;
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
    fn lexical_and_synthesized(
        &self,
        outcome: &scan::ScanOutcome,
        phases: &mut IndexPhases,
        t: Instant,
        beside: &mut (dyn FnMut() + Send),
    ) -> Result<Indexed> {
        // The changed notes become one new segment, built a chunk of notes at a time (see
        // `lexical_segment`), so a cold build of 100k notes stays small.
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

    /// The synthesized edges (slug clusters, token similarity, derived_from) of each upsert,
    /// in the batch's order, with token co-occurrence found in `lex`.
    fn synthesize(
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
    fn synthesize_laid(
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
    fn resynthesized(
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
                .ids_with_prefix(prefix, policy::MAX_SLUG_CLUSTER + 1 + batch.removals.len())?;
            let now = synthesis.cluster(prefix)?;
            if stored.len() > policy::MAX_SLUG_CLUSTER && now.len() > policy::MAX_SLUG_CLUSTER {
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
        let max_df = policy::CO_OCCURRENCE_MAX_DF as u64;
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
            let (df_before, df_now) = (before.doc_freq(term), lex.doc_freq(term));
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
        let loaded: Vec<Option<Affected>> = affected
            .into_par_iter()
            .map(|id| -> Result<Option<Affected>> {
                let Some(record) = reader.node(&id)? else {
                    return Ok(None);
                };
                // The note as indexed: a note that cannot be read now (removed or unreadable
                // since the scan) keeps its edges until a scan sees it.
                let Some(bytes) = notes::read_note(&memory.join(&record.path)) else {
                    return Ok(None);
                };
                let doc = DocTerms::from_note(&self.tokenizer, &notes::parse_note(&id, &bytes));
                let stored = reader.edges_out(&id)?;
                Ok(Some(Affected {
                    id,
                    note_type: record.note_type,
                    stored,
                    doc,
                }))
            })
            .collect::<Result<_>>()?;
        let loaded: Vec<Affected> = loaded.into_iter().flatten().collect();
        // Notes recomputed together share most of their terms: each term's document frequency
        // and each probe term's holders are looked up once.
        let mut terms: Vec<&str> = loaded
            .iter()
            .flat_map(|a| a.doc.terms.iter().map(|(t, _)| t.as_str()))
            .filter(|t| cooccur::is_probe_term(t))
            .collect();
        terms.sort_unstable();
        terms.dedup();
        let dfs: rustc_hash::FxHashMap<&str, u64> =
            terms.par_iter().map(|t| (*t, lex.doc_freq(t))).collect();
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
        for (id, list, floor) in lists {
            out.1.push((id.clone(), floor));
            if let Some(list) = list {
                out.0.push((id, list));
            }
        }
        Ok(out)
    }

    /// Answer a query: lexical hits and anchors, the typed-graph walk, scored by the policy.
    pub fn recall(&self, q: &Query) -> Result<Recall> {
        let started = Instant::now();
        crate::args::query(q)?;
        self.ensure_indexed()?;
        // Other sessions' events become visible within STATS_REFRESH_INTERVAL.
        self.events.refresh_if_stale(STATS_REFRESH_INTERVAL)?;
        let (results, floor) = match self.recall_unchanged(q)? {
            Some(found) => found,
            None => self.recall_current(q)?,
        };
        let n = self
            .qid_counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let latency_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let recall = Recall {
            qid: format!("{}-q{n}", self.events.session()),
            results,
            floor,
            latency_us,
        };
        if !q.record {
            return Ok(recall);
        }
        // Feedback that names no question is about this recall.
        if let Ok(mut last) = self.last_question.lock() {
            *last = Some((recall.qid.clone(), q.text.clone()));
        }
        // One QueryEvent and one RecallHit per returned note, flushed to the OS before returning
        // (one batch: recorded whole or not at all).
        let mut events = Vec::with_capacity(recall.results.len() + 1);
        events.push(EventKind::Query {
            qid: recall.qid.clone(),
            query: q.text.clone(),
            anchors: q.anchors.clone(),
            result_count: recall.results.len() as u32,
            latency_us,
            caller: q.caller.clone(),
        });
        // Fetching notes by id and nothing around them (anchors at depth 0, no question) is
        // reading them: a use, as if the agent had said so. Written before the hits: a batch
        // ends with its last RecallHit, so readers can tell a complete one.
        if q.depth == 0 && q.text.trim().is_empty() && !q.anchors.is_empty() {
            events.push(EventKind::Feedback {
                qid: recall.qid.clone(),
                query: String::new(),
                used: q.anchors.clone(),
                wrong: Vec::new(),
            });
        }
        for (i, h) in recall.results.iter().enumerate() {
            events.push(EventKind::RecallHit {
                qid: recall.qid.clone(),
                node: h.id.clone(),
                rank: i as u32 + 1,
                score: h.score,
                source: match h.source {
                    recall::Source::Direct => HitSource::Direct,
                    recall::Source::Neighbor => HitSource::Neighbor,
                    recall::Source::CoOccur => HitSource::CoOccur,
                },
            });
        }
        self.events.append(events)?;
        Ok(recall)
    }

    /// A recall at the store version the last recall read, when the store's change count shows
    /// that no process has written it since (two loads from a mapped page) and that read is
    /// younger than [`STORE_RECHECK_INTERVAL`]: no read transaction is begun unless a record must
    /// be read. `None` when the count moved, is unsettled or unusable, the read is older, or a
    /// record read found the store at another version (the caller then recalls at the current
    /// version).
    fn recall_unchanged(&self, q: &Query) -> Result<Option<Found>> {
        let Some(count) = self.store.settled_change_count() else {
            return Ok(None);
        };
        let last = self.last_read.lock().ok().and_then(|l| *l);
        let Some((_, version, _)) =
            last.filter(|(c, _, at)| *c == count && at.elapsed() < STORE_RECHECK_INTERVAL)
        else {
            return Ok(None);
        };
        let view = LazyReader::deferred(&self.store, version);
        let results = self.recall_at(q, &view)?;
        Ok((!view.moved()).then_some(results))
    }

    /// A recall at the store's current version (one read transaction), remembered with the
    /// change count read before it began.
    fn recall_current(&self, q: &Query) -> Result<Found> {
        let count = self.store.settled_change_count();
        let at = Instant::now();
        let reader = self.store.read()?;
        let version = reader.version()?;
        if let Ok(mut l) = self.last_read.lock() {
            *l = count.map(|c| (c, version, at));
        }
        self.recall_at(q, &LazyReader::begun(reader, version))
    }

    /// The recall itself, against the lexical index, graph and records of `view`'s version.
    fn recall_at(&self, q: &Query, view: &LazyReader<'_>) -> Result<Found> {
        let version = view.version();
        let lex = self.lexical_at(version)?;
        let graph = self.graph(view, version)?;
        let (by_ord, learned) = self.stats_tables(&graph)?;
        let stats = |o: u32| by_ord.get(o);
        // Records read at this reader's version are kept only for the graph of that version.
        let shown = if graph.version() == version {
            self.shown(version)?
        } else {
            Arc::new(ShownCache::new(version))
        };
        recall::engine::run(
            &lex,
            &graph,
            view,
            &shown,
            &self.tokenizer,
            &learned,
            q,
            self.clock.now_s(),
            &stats,
        )
    }

    /// Mark a note as important (1..=10, [`crate::args::IMPORTANCE`]): its only effect is one ImportanceTag event. Use it for
    /// strong user preferences, recurring concerns, incidents that must be remembered.
    pub fn set_importance(
        &self,
        id: &str,
        importance: u8,
        tags: &[String],
        note: &str,
    ) -> Result<()> {
        crate::args::IMPORTANCE.check(importance)?;
        check_id(id)?;
        self.ensure_indexed()?;
        if !self.store.read()?.has_node(id)? {
            return Err(Error::UnknownNode { id: id.to_string() });
        }
        self.events.append(vec![EventKind::ImportanceTag {
            node: id.to_string(),
            importance,
            tags: tags.to_vec(),
            note: note.to_string(),
        }])
    }

    /// Say which recalled notes the agent used for a question, and optionally which were wrong:
    /// one Feedback event. `query` is the question they were recalled for; `None` means this
    /// process's last recall (its question and qid). Later questions sharing informative terms
    /// with it then find the used notes even when their words differ (see `recall::learned`),
    /// and a used note wins close calls; a note found wrong is pushed down for such questions.
    /// Nothing else changes rankings: a note returned often and never used does not climb.
    pub fn feedback(
        &self,
        used: &[String],
        wrong: &[String],
        query: Option<&str>,
    ) -> Result<FeedbackReport> {
        crate::args::feedback(used, wrong)?;
        self.ensure_indexed()?;
        {
            let reader = self.store.read()?;
            for id in used.iter().chain(wrong) {
                check_id(id)?;
                if !reader.has_node(id)? {
                    return Err(Error::UnknownNode { id: id.clone() });
                }
            }
        }
        let last = self.last_question.lock().ok().and_then(|l| l.clone());
        let (qid, query) = match (query, last) {
            (Some(q), Some((qid, last_q))) if q == last_q => (qid, q.to_string()),
            (Some(q), _) => (String::new(), q.to_string()),
            (None, Some((qid, last_q))) => (qid, last_q),
            (None, None) => (String::new(), String::new()),
        };
        let dedup = |ids: &[String]| {
            let mut v: Vec<String> = Vec::with_capacity(ids.len());
            for id in ids {
                if !v.contains(id) {
                    v.push(id.clone());
                }
            }
            v
        };
        let report = FeedbackReport {
            qid,
            query,
            used: dedup(used),
            wrong: dedup(wrong),
        };
        self.events.append(vec![EventKind::Feedback {
            qid: report.qid.clone(),
            query: report.query.clone(),
            used: report.used.clone(),
            wrong: report.wrong.clone(),
        }])?;
        Ok(report)
    }

    /// Folded stats of a note (`mnemon stats`).
    pub fn stats(&self, id: &str) -> Result<NodeStatsView> {
        check_id(id)?;
        self.ensure_indexed()?;
        if !self.store.read()?.has_node(id)? {
            return Err(Error::UnknownNode { id: id.to_string() });
        }
        let s: RecallStats = self.events.stats(id);
        Ok(NodeStatsView {
            id: id.to_string(),
            recall_count: s.recall_count,
            last_recalled_at: s.last_recalled_at,
            importance: s.importance,
            importance_ts: s.importance_ts,
            used_count: s.used_count,
            untied_used: s.untied_used,
            wrong_count: s.wrong_count,
            last_used_at: s.last_used_at,
        })
    }

    /// Compress and archive old event segments now (see `events::compact`).
    pub fn compact(
        &self,
        policy: crate::events::CompactPolicy,
    ) -> Result<crate::events::CompactReport> {
        self.events.compact(policy, self.clock.now_s() * 1000)
    }

    /// Snapshot the folded stats so the next open folds only newer events.
    pub fn write_snapshot(&self) -> Result<()> {
        self.events.write_snapshot()
    }

    /// The core view: pinned and important notes rendered into `budget_tokens` (see
    /// `core_view`). Never fails because the budget is full.
    pub fn core(&self, budget_tokens: usize) -> Result<crate::core_view::CoreView> {
        use crate::core_view::{CoreNote, estimate_tokens, read_body, render};
        crate::args::BUDGET_TOKENS.check(budget_tokens)?;
        self.ensure_indexed()?;
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
        for (id, (pin, importance, recall_count)) in wanted {
            let Some(rec) = reader.node(&id)? else {
                continue; // importance on a note that is gone
            };
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
        Ok(render(notes, budget_tokens, |n, tokens_left| {
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
        }))
    }

    /// The event log (sessions, snapshots, refresh).
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// The node `id` with its edges both ways.
    pub fn show(&self, id: &str) -> Result<NodeView> {
        check_id(id)?;
        self.ensure_indexed()?;
        let r = self.store.read()?;
        let rec: NodeRecord = r
            .node(id)?
            .ok_or_else(|| Error::UnknownNode { id: id.to_string() })?;
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
        Ok(NodeView {
            id: id.to_string(),
            path: rec.path,
            name: rec.name,
            note_type: rec.note_type.as_str(),
            description: rec.description,
            tags: rec.tags,
            pin: rec.pin,
            created_at: rec.created_at,
            updated_at: rec.updated_at,
            ttl_days: rec.ttl_days,
            excerpt: rec.excerpt,
            edges_out,
            edges_in,
        })
    }

    /// The edges arriving at `id`, in the order an edge list keeps: from this process's graph
    /// when it is of the store version `r` reads (a `serve` process, or one that recalled), else
    /// found by `r` in one pass over the out-edges (the store keeps each edge at its source).
    fn edges_into(&self, r: &StoreReader<'_>, id: &str) -> Result<Vec<EdgeIn>> {
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
    /// the index state.
    pub fn doctor(&self) -> Result<DoctorReport> {
        let indexed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.index()));
        let report = match indexed {
            Ok(Ok(report)) => report,
            Ok(Err(e)) if e.is_store_damage() => return Ok(self.damaged_report(e.to_string())),
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Ok(self.damaged_report(
                    "indexing panicked inside redb: the store's bytes are damaged".into(),
                ));
            }
        };
        let store_damage = crate::verify::store_against_notes(&self.store, &self.dir.memory());
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
            report
                .errors
                .iter()
                .filter(|e| !with_problems.contains(&e.path))
                .cloned()
                .collect()
        };
        let r = self.store.read()?;
        let mut dangling = Vec::new();
        for e in r.all_edges()? {
            if !r.has_node(&e.to)? {
                dangling.push(Dangling {
                    from: e.from,
                    to: e.to,
                    kind: e.kind,
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
        let seq_problem = self.store.change_seq_problem().map(str::to_string);
        let index = IndexHealth {
            path: self.store.path().display().to_string(),
            schema_version: crate::store::SCHEMA_VERSION,
            ok: seq_problem.is_none(),
            message: seq_problem,
        };
        let healthy = dangling.is_empty()
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
        })
    }

    /// A doctor report for a store whose bytes are bad: nothing else read from it is trusted.
    fn damaged_report(&self, reason: String) -> DoctorReport {
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
        let cache = index.join(crate::store::graph::file::GRAPH_FILE);
        match std::fs::remove_file(&cache) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io("remove", &cache, e));
            }
            _ => {}
        }
        Ok(aside)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{GenConfig, generate};
    use crate::index::segment::writer::build_segment;
    use crate::store::StoreReader;

    /// A big scan writes its note rows beside the lexical pass, then its out-lists: the store
    /// must hold what one `apply` of the finished batch writes.
    #[test]
    fn store_written_beside_the_lexical_pass_equals_one_apply_of_the_batch() {
        let notes = OVERLAP_STORE_MIN_NOTES + 88;
        let tmp = tempfile::tempdir().expect("tempdir");
        generate(&GenConfig::new(notes, 13), tmp.path()).expect("generate");
        let threaded = Memory::init(tmp.path()).expect("init");
        let report = threaded.index().expect("index");
        assert_eq!(report.notes as usize, notes);

        let tmp2 = tempfile::tempdir().expect("tempdir");
        generate(&GenConfig::new(notes, 13), tmp2.path()).expect("generate");
        let plain = Memory::init(tmp2.path()).expect("init");
        let mut outcome = scan::scan(&plain.dir().memory(), &HashMap::new());
        let (_, lex, synth) = plain
            .lexical_and_synthesized(
                &outcome,
                &mut IndexPhases::default(),
                Instant::now(),
                &mut || {},
            )
            .expect("lexical");
        for (u, (s, _)) in outcome.batch.upserts.iter_mut().zip(synth) {
            u.edges.extend(s);
        }
        outcome.batch.lexical_generation = Some(lex.generation());
        plain.store.apply(&outcome.batch).expect("apply");

        let (a, b) = (
            threaded.store.read().expect("read"),
            plain.store.read().expect("read"),
        );
        assert_eq!(a.all_nodes().expect("nodes"), b.all_nodes().expect("nodes"));
        let edges = a.all_edges().expect("edges");
        assert_eq!(edges, b.all_edges().expect("edges"));
        assert!(edges.len() > notes * 3, "{} edges", edges.len());
        assert_eq!(a.edge_count().expect("count"), edges.len() as u64);
        assert_eq!(
            a.edge_count().expect("count"),
            b.edge_count().expect("count")
        );
        // Every edge is among its target's in-edges (found in the out-lists), nothing else is.
        let mut mirrored = Vec::new();
        for (id, _) in a.all_nodes().expect("nodes") {
            for e in a.edges_in(&id).expect("in") {
                mirrored.push((e.other, id.clone()));
            }
        }
        let mut want: Vec<(String, String)> = edges
            .iter()
            .filter(|e| a.has_node(&e.to).unwrap_or(false))
            .map(|e| (e.from.clone(), e.to.clone()))
            .collect();
        mirrored.sort();
        want.sort();
        assert_eq!(mirrored, want);
        let manifest = |r: &StoreReader<'_>| {
            let mut m: Vec<_> = r.manifest().expect("manifest").into_iter().collect();
            m.sort_by(|x, y| x.0.cmp(&y.0));
            m.into_iter().map(|(p, f)| (p, f.size)).collect::<Vec<_>>()
        };
        assert_eq!(manifest(&a), manifest(&b));
        assert_eq!(manifest(&a).len(), notes);
        assert_eq!(
            a.lexical_generation().expect("generation"),
            b.lexical_generation().expect("generation")
        );
    }

    #[test]
    fn lexical_segment_built_in_chunks_equals_one_built_at_once_in_id_order() {
        let tmp = tempfile::tempdir().expect("tempdir");
        generate(&GenConfig::new(60, 3), tmp.path()).expect("generate");
        let memory = Memory::init(tmp.path()).expect("init");
        let mut parsed = scan::scan(&memory.dir().memory(), &HashMap::new()).parsed;
        assert_eq!(parsed.len(), 60);
        // Any order in, id order out.
        parsed.reverse();
        let mut docs = memory.doc_terms(&parsed);
        docs.sort_by(|a, b| a.id.cmp(&b.id));
        let want = build_segment(&docs).expect("build");
        for chunk in [1, 7, 60, 4096] {
            // The work beside the build runs once, whether the notes are one chunk or more.
            let mut beside_runs = 0;
            let (segment, ids) = memory
                .lexical_segment(&parsed, chunk, &mut || beside_runs += 1)
                .expect("segment");
            assert_eq!(beside_runs, 1, "chunks of {chunk}");
            let segment = segment.map(|l| l.finish().expect("finish"));
            assert_eq!(segment, Some(want.clone()), "chunks of {chunk}");
            assert!(ids.windows(2).all(|w| w[0] < w[1]) && ids.len() == 60);
        }
    }

    /// `show` lists a note's in-edges from this process's graph when it holds one of the store's
    /// version, else from one pass over the out-lists: the same edges in the same order, after
    /// a cold build and after an update the graph was patched with.
    #[test]
    fn show_in_edges_from_the_graph_equal_those_found_in_the_store() {
        let tmp = tempfile::tempdir().expect("tempdir");
        generate(&GenConfig::new(300, 5), tmp.path()).expect("generate");
        let m = Memory::init(tmp.path()).expect("init");
        m.index().expect("index");
        let both = |m: &Memory| {
            let r = m.store.read().expect("read");
            let v = r.version().expect("version");
            let mut ids: Vec<String> = r
                .all_nodes()
                .expect("nodes")
                .into_iter()
                .map(|(id, _)| id)
                .collect();
            ids.push("no-such-note".into());
            let json = |e: Vec<EdgeIn>| serde_json::to_string(&e).expect("json");
            let found: Vec<String> = ids
                .iter()
                .map(|id| json(m.edges_into(&r, id).expect("in")))
                .collect();
            let graph = m
                .graph(&LazyReader::deferred(&m.store, v), v)
                .expect("graph");
            assert_eq!(graph.version(), v);
            let held: Vec<String> = ids
                .iter()
                .map(|id| json(m.edges_into(&r, id).expect("in")))
                .collect();
            assert_eq!(found, held);
            let edges: usize = found.iter().map(|j| j.matches("\"from\"").count()).sum();
            let into_notes = r.all_edges().expect("edges");
            let into_notes = into_notes.iter().filter(|e| ids.contains(&e.to)).count();
            assert_eq!(edges, into_notes);
            assert!(edges > ids.len(), "{edges} edges");
            // The next reader sees no graph of its version until it loads one.
            *m.graph.write().expect("graph") = Arc::new(Graph::default());
        };
        both(&m);
        // Rewrite a note that others link to, so that the graph is patched, not reloaded.
        let mut q = Query::text("deploy");
        q.record = false;
        m.recall(&q).expect("recall");
        let hub = {
            let r = m.store.read().expect("read");
            r.all_nodes()
                .expect("nodes")
                .into_iter()
                .map(|(id, rec)| (r.edges_in(&id).expect("in").len(), id, rec.path))
                .max()
                .expect("a node")
        };
        assert!(hub.0 > 2, "the busiest note has {} in-edges", hub.0);
        let first_out = {
            let r = m.store.read().expect("read");
            r.edges_out(&hub.1).expect("out")[0].other.clone()
        };
        std::fs::write(
            m.dir().memory().join(&hub.2),
            format!("Rewritten: only [[{first_out}]] now."),
        )
        .expect("write");
        m.index().expect("index");
        both(&m);
    }

    /// A memory of three notes, indexed, and a query that finds the first.
    fn three_notes() -> (tempfile::TempDir, Memory, Query) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let memory = Memory::init(tmp.path().join(".mnemon")).expect("init");
        for (id, body) in [
            (
                "alpha",
                "Zebra crossings near the depot need a second look.",
            ),
            ("beta", "Nothing about animals here, only [[alpha]]."),
            ("gamma", "The deploy pipeline and its canary."),
        ] {
            std::fs::write(memory.dir().memory().join(format!("{id}.md")), body).expect("write");
        }
        memory.index().expect("index");
        let mut q = Query::text("zebra crossing");
        q.record = false;
        (tmp, memory, q)
    }

    /// Another handle on the memory, whose commits are not counted (as a writer from before the
    /// count, or one that died before counting its end, leaves them), writes `file` (removes it
    /// when `text` is `None`) and indexes.
    fn write_uncounted(tmp: &tempfile::TempDir, file: &str, text: Option<&str>) {
        let mut b = Memory::open(tmp.path().join(".mnemon")).expect("open b");
        b.store.stop_counting_writes();
        let path = b.dir().memory().join(file);
        match text {
            Some(t) => std::fs::write(&path, t).expect("write"),
            None => std::fs::remove_file(&path).expect("remove"),
        }
        b.index().expect("index b");
    }

    /// The first id `m` recalls for `q`, checking that the recall began `transactions` store
    /// read transactions (0: it reused the version it read last).
    fn first_recalled(m: &Memory, q: &Query, transactions: u64) -> String {
        let reads = m.store.reads_begun();
        let first = ids(m, q).swap_remove(0);
        assert_eq!(
            m.store.reads_begun() - reads,
            transactions,
            "read transactions"
        );
        first
    }

    fn ids(m: &Memory, q: &Query) -> Vec<String> {
        m.recall(q)
            .expect("recall")
            .results
            .into_iter()
            .map(|h| h.id)
            .collect()
    }

    #[test]
    fn recalls_with_the_change_count_unmoved_begin_no_read_transaction_and_see_other_writers() {
        let (tmp, a, q) = three_notes();
        assert_eq!(ids(&a, &q)[0], "alpha");
        let reads = a.store.reads_begun();
        assert_eq!(first_recalled(&a, &q, 0), "alpha");
        assert_eq!(first_recalled(&a, &q, 0), "alpha");
        // Another handle (as another process would) adds a better match.
        let b = Memory::open(tmp.path().join(".mnemon")).expect("open b");
        std::fs::write(
            b.dir().memory().join("zebra-crossing.md"),
            "---\nname: Zebra crossing\n---\nZebra crossing rules: every zebra crossing is checked.",
        )
        .expect("write");
        b.index().expect("index b");
        assert_eq!(
            ids(&a, &q)[0],
            "zebra-crossing",
            "the other writer's commit is seen"
        );
        assert!(a.store.reads_begun() > reads);
        assert_eq!(first_recalled(&a, &q, 0), "zebra-crossing");
    }

    #[test]
    fn a_writer_that_died_between_its_counts_sends_recalls_to_the_store_until_the_write_lock() {
        let (tmp, a, q) = three_notes();
        assert_eq!(ids(&a, &q)[0], "alpha");
        assert_eq!(ids(&a, &q)[0], "alpha");
        // A writer counts its start, commits, and dies before counting its end.
        let seq = crate::store::ChangeSeq::open(&a.dir().index()).expect("seq");
        std::mem::forget(seq.counting());
        write_uncounted(
            &tmp,
            "zebra-crossing.md",
            Some(
                "---\nname: Zebra crossing\n---\nZebra crossing rules: every zebra crossing is checked.",
            ),
        );
        let (started, finished) = seq.counts();
        assert_eq!(started, finished + 1, "the end was never counted");
        // `finished` did not move: only the unequal count keeps `a` off its remembered version.
        assert_eq!(ids(&a, &q)[0], "zebra-crossing");
        assert_eq!(
            first_recalled(&a, &q, 1),
            "zebra-crossing",
            "every recall reads"
        );
        // The next holder of the write lock settles the count; recalls skip the store again.
        drop(a.write_lock().expect("lock"));
        let (started, finished) = seq.counts();
        assert_eq!(started, finished);
        assert_eq!(ids(&a, &q)[0], "zebra-crossing");
        assert_eq!(first_recalled(&a, &q, 0), "zebra-crossing");
    }

    #[test]
    fn an_unusable_change_count_is_reported_at_open_and_by_doctor_and_recalls_stay_exact() {
        let (tmp, a, q) = three_notes();
        drop(a);
        let root = tmp.path().join(".mnemon");
        let seq = root.join("index").join(crate::store::seq::SEQ_FILE);
        let mut bytes = std::fs::read(&seq).expect("read");
        bytes[1] = b'X';
        std::fs::write(&seq, &bytes).expect("damage");
        let mut m = Memory::open(&root).expect("open");
        let notices = m.take_notices();
        assert!(
            notices
                .iter()
                .any(|n| n.contains("store.seq") && n.contains("magic")),
            "{notices:?}"
        );
        assert_eq!(ids(&m, &q)[0], "alpha");
        assert_eq!(
            first_recalled(&m, &q, 1),
            "alpha",
            "exact path: a transaction each"
        );
        let d = m.doctor().expect("doctor");
        assert!(!d.healthy && !d.index.ok);
        assert!(
            d.index
                .message
                .as_deref()
                .is_some_and(|s| s.contains("Delete the index folder"))
        );
        assert_eq!(std::fs::read(&seq).expect("read"), bytes, "left as it was");
    }

    #[test]
    fn a_recall_that_must_read_a_record_and_finds_a_newer_version_recalls_again_at_it() {
        let (tmp, a, q) = three_notes();
        let clock = crate::recall::FixedClock(1_780_000_000);
        let a = a.with_clock(clock);
        // Only alpha is shown, so only alpha's record is kept.
        let mut q = q.with_depth(0).with_limit(1);
        q.record = false;
        assert_eq!(ids(&a, &q), vec!["alpha".to_string()]);
        // A writer that does not count its commit (as a build before the count would).
        write_uncounted(
            &tmp,
            "gamma.md",
            Some("The deploy pipeline, its canary and the zebra crossing checks."),
        );
        // The count did not move; a query whose records `a` has not kept begins a transaction,
        // which finds the newer version: the recall is made again there.
        let mut q2 = Query::text("deploy canary zebra");
        q2.record = false;
        let scored = |m: &Memory| -> Vec<(String, u32, String)> {
            let r = m.recall(&q2).expect("recall").results;
            r.into_iter()
                .map(|h| (h.id, h.score.to_bits(), h.excerpt))
                .collect()
        };
        let got = scored(&a);
        // What a new handle (no remembered version) answers: the newer version, whole.
        let fresh = Memory::open(tmp.path().join(".mnemon"))
            .expect("open c")
            .with_clock(clock);
        assert_eq!(got, scored(&fresh));
        assert_eq!(got[0].0, "gamma");
        assert!(got[0].2.contains("zebra"), "{:?}", got[0].2);
        // The version it remembers now is the newer one.
        assert_eq!(first_recalled(&a, &q2, 0), "gamma");
    }

    #[test]
    fn an_uncounted_commit_is_seen_once_the_recheck_interval_has_passed() {
        let (tmp, a, q) = three_notes();
        assert_eq!(ids(&a, &q)[0], "alpha");
        write_uncounted(&tmp, "alpha.md", None);
        std::thread::sleep(STORE_RECHECK_INTERVAL + std::time::Duration::from_millis(100));
        assert!(
            !ids(&a, &q).contains(&"alpha".to_string()),
            "removed note still recalled"
        );
    }
}
