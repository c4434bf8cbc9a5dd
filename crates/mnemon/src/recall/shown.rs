//! What a recall shows of each result (name, description, type, excerpt), with the notes shown
//! most often kept in memory.
//!
//! A result's record is one store read (a redb B-tree walk and page-cache lookups), a sizeable
//! part of a recall's time when repeated for every result shown. Agents recall the same notes
//! turn after turn, so the records last shown are kept, at most [`SHOWN_CAPACITY`] of them, for
//! one store version: a cache built for another version is never read (the records may have
//! changed), and the recall that first sees a new version starts a new, empty one.

use crate::error::Result;
use crate::graph::Graph;
use crate::notes::NoteType;
use crate::store::{LazyReader, Version};
use std::sync::Arc;

/// Records kept per store version (about 0.5 KiB each).
pub const SHOWN_CAPACITY: usize = 4096;

/// The part of a note's record a recall shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The note's id, checked against the graph's on every read from the cache.
    pub id: Box<str>,
    pub name: Option<String>,
    pub description: Option<String>,
    pub note_type: NoteType,
    pub excerpt: String,
}

/// Shown records of one store version, by graph ordinal.
pub struct ShownCache {
    version: Version,
    cache: quick_cache::sync::Cache<u32, Arc<Shown>>,
}

impl ShownCache {
    /// An empty cache for the records of store version `version`.
    pub fn new(version: Version) -> Self {
        ShownCache {
            version,
            cache: quick_cache::sync::Cache::new(SHOWN_CAPACITY),
        }
    }

    /// The store version whose records this cache holds.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The shown records of `ords` (ordinals of `graph`), in order; `None` for an ordinal no note
    /// has. Kept records come from memory, the rest from `store`, which should be at `graph`'s
    /// version (records read at another version are returned but not kept, and the view says
    /// it moved). When this cache is for another version it is neither read nor filled.
    pub fn read(
        &self,
        graph: &Graph,
        store: &LazyReader<'_>,
        ords: &[u32],
    ) -> Result<Vec<Option<Arc<Shown>>>> {
        let usable = self.version == graph.version();
        let mut out: Vec<Option<Arc<Shown>>> = ords
            .iter()
            .map(|&o| {
                let kept = if usable { self.cache.get(&o) } else { None };
                kept.filter(|s| *s.id == *graph.id(o))
            })
            .collect();
        let missing: Vec<usize> = (0..ords.len()).filter(|&i| out[i].is_none()).collect();
        if missing.is_empty() {
            return Ok(out);
        }
        let (store, current) = store.get()?;
        let usable = usable && current;
        let mut at = missing.iter();
        store.with_node_refs(missing.iter().map(|&i| graph.id(ords[i])), |rec| {
            let Some(&i) = at.next() else { return };
            let Some(rec) = rec else { return };
            let shown = Arc::new(Shown {
                id: graph.id(ords[i]).into(),
                name: rec.name.map(str::to_string),
                description: rec.description.map(str::to_string),
                note_type: rec.note_type,
                excerpt: rec.excerpt.to_string(),
            });
            if usable {
                self.cache.insert(ords[i], shown.clone());
            }
            out[i] = Some(shown);
        })?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use mnemon_testkit::corpus::{GenConfig, generate};

    #[test]
    fn kept_records_equal_the_store_and_other_versions_are_neither_read_nor_filled() {
        let tmp = tempfile::tempdir().expect("tempdir");
        generate(&GenConfig::new(40, 3), tmp.path()).expect("generate");
        let memory = crate::Memory::init(tmp.path()).expect("init");
        memory.index().expect("index");
        let (store, _) = Store::open(&memory.dir().index()).expect("store");
        let reader = store.read().expect("read");
        let graph = Graph::load(&reader).expect("graph");
        let ords: Vec<u32> = (0..graph.len() as u32)
            .filter(|&o| graph.meta(o).is_some())
            .take(12)
            .collect();
        assert_eq!(ords.len(), 12);
        let want: Vec<Shown> = ords
            .iter()
            .map(|&o| {
                let r = reader.node(graph.id(o)).expect("node").expect("a note");
                Shown {
                    id: graph.id(o).into(),
                    name: r.name,
                    description: r.description,
                    note_type: r.note_type,
                    excerpt: r.excerpt,
                }
            })
            .collect();
        let view = LazyReader::begun(store.read().expect("read"), graph.version());
        let shown = |c: &ShownCache| -> Vec<Shown> {
            c.read(&graph, &view, &ords)
                .expect("read")
                .into_iter()
                .map(|s| (*s.expect("shown")).clone())
                .collect()
        };
        let cache = ShownCache::new(graph.version());
        assert_eq!(shown(&cache), want, "from the store");
        assert_eq!(cache.cache.len(), 12);
        assert_eq!(shown(&cache), want, "kept");
        // A kept record under another id (an ordinal that changed meaning) is read again.
        let (a, b) = (ords[0], ords[1]);
        cache.cache.insert(a, cache.cache.get(&b).expect("kept"));
        assert_eq!(shown(&cache), want, "mismatched id re-read");
        // A cache of another version neither answers nor keeps anything.
        let stale = ShownCache::new(Version {
            epoch: graph.version().epoch,
            generation: graph.version().generation + 1,
        });
        stale.cache.insert(a, cache.cache.get(&b).expect("kept"));
        assert_eq!(shown(&stale), want, "other version");
        assert_eq!(stale.cache.len(), 1, "nothing added for another version");
        // A view begun lazily that finds the store at another version than the caller expects:
        // the records are returned, not kept, and the view says it moved.
        let expected = Version {
            epoch: graph.version().epoch,
            generation: graph.version().generation + 1,
        };
        let lazy = LazyReader::deferred(&store, expected);
        let current = ShownCache::new(graph.version());
        let got: Vec<Shown> = current
            .read(&graph, &lazy, &ords)
            .expect("read")
            .into_iter()
            .map(|s| (*s.expect("shown")).clone())
            .collect();
        assert_eq!(got, want);
        assert!(lazy.moved());
        assert_eq!(
            current.cache.len(),
            0,
            "records of a moved view are not kept"
        );
    }
}
