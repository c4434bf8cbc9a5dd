//! The `Memory` facade: one handle on a memory folder, used by the CLI, the MCP server and
//! embedding agents alike.

use crate::error::{Error, Result};
use crate::folder::MemoryDir;
use crate::notes::{self, ProblemKind};
use crate::scan::{self, ScanError};
use crate::store::{Edge, NodeRecord, Store};
use serde::Serialize;
use std::time::Instant;

/// An open memory folder.
pub struct Memory {
    dir: MemoryDir,
    store: Store,
    notices: Vec<String>,
}

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
    /// Set when the index was rebuilt or could not be read.
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

    /// Open an already located memory folder.
    pub fn open_dir(dir: MemoryDir) -> Result<Memory> {
        let mut notices = Vec::new();
        for sub in [dir.events(), dir.index()] {
            std::fs::create_dir_all(&sub).map_err(|e| Error::io("create folder", &sub, e))?;
        }
        if let Err(e) = dir.ensure_gitignore() {
            notices.push(format!("could not update .gitignore: {e}"));
        }
        let (store, rebuilt) = Store::open(&dir.index())?;
        notices.extend(rebuilt);
        Ok(Memory {
            dir,
            store,
            notices,
        })
    }

    /// The folder this memory lives in.
    pub fn dir(&self) -> &MemoryDir {
        &self.dir
    }

    /// Messages about repairs made while opening (rebuilt index, ...), for the caller to show.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// Bring the index up to date with `memory/` (incremental).
    pub fn index(&self) -> Result<IndexReport> {
        let started = Instant::now();
        let manifest = self.store.read()?.manifest()?;
        let outcome = scan::scan(&self.dir.memory(), &manifest);
        self.store.apply(&outcome.batch)?;
        let reader = self.store.read()?;
        let mut changed: Vec<String> = outcome.parsed.iter().map(|p| p.id.clone()).collect();
        changed.sort();
        let mut errors = outcome.walk_errors;
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
            removed: outcome.removed,
            errors,
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        })
    }

    /// The node `id` with its edges both ways.
    pub fn show(&self, id: &str) -> Result<NodeView> {
        notes::validate_id(id).map_err(|r| Error::InvalidArgument {
            what: "id",
            message: format!("`{id}`: {r}"),
        })?;
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
        let edges_in = r
            .edges_in(id)?
            .into_iter()
            .map(|e| EdgeIn {
                from: e.other,
                kind: e.kind,
                provenance: e.provenance,
                confidence: e.confidence,
            })
            .collect();
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

    /// Every edge in the graph (for tests and tools).
    pub fn edges(&self) -> Result<Vec<Edge>> {
        self.store.read()?.all_edges()
    }

    /// Check the memory: re-scan, then list dangling links, note problems, conflict markers and
    /// the index state.
    pub fn doctor(&self) -> Result<DoctorReport> {
        let report = self.index()?;
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
        let index = IndexHealth {
            path: self.store.path().display().to_string(),
            schema_version: crate::store::SCHEMA_VERSION,
            ok: true,
            message: None,
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
        })
    }
}
