//! Does the index store hold what the notes say? `doctor` compares the store with a full parse of
//! `memory/`: every note's record, content hash and links, the problems found in it, and that
//! every synthesized edge ends at a note. redb checks its own structure, not what the bytes
//! mean: a flipped bit in a record or an edge list reads back as a different note or link. Reads
//! of damaged bytes may panic inside redb; that becomes a finding too.

use crate::dedup::Sketch;
use crate::error::Result;
use crate::notes::Provenance;
use crate::scan;
use crate::scan::Stat;
use crate::store::{NodeRecord, Store};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// At most this many differences are listed (a store rebuilt from scratch would list one per
/// note): the count of the rest is given.
pub const MAX_LISTED_DAMAGE: usize = 20;

/// What [`store_against_notes`] found.
#[derive(Debug, Default)]
pub struct Verified {
    /// The ways the store differs from the notes, worded for a person, at most
    /// [`MAX_LISTED_DAMAGE`] of them (the last one saying how many more). Empty: the store holds
    /// exactly what the notes say.
    pub damage: Vec<String>,
    /// Every note's near-duplicate sketch, computed from the parse the comparison made: ids in
    /// order, and their sketches (empty when the store could not be read).
    pub sketches: (Vec<String>, Vec<Sketch>),
    /// Notes (paths) that changed, appeared or went away while the comparison ran or since the
    /// index was last brought up to date: differences are then expected, not damage, and the
    /// comparison says nothing until it is made again.
    pub changed: Vec<String>,
    /// What the full parse could not read or list (a note this process may not read, which an
    /// incremental scan, seeing its stat unchanged, never opens).
    pub walk_errors: Vec<crate::scan::ScanError>,
}

/// Compare `store` with a full parse of `memory_dir`. A store that cannot be read, or whose
/// reads panic inside redb, is reported as damage; `Err` when the notes could not all be read
/// for a cause of the environment (too many files open): the comparison says nothing about the
/// store then, and a repair acting on it would throw a healthy store away.
pub fn store_against_notes(store: &Store, memory_dir: &Path) -> Result<Verified> {
    let mut outcome = scan::scan(
        memory_dir,
        &HashMap::<String, crate::store::FileEntry>::new(),
    );
    outcome.check_complete()?;
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        compare(store, memory_dir, &outcome)
    }));
    let mut verified = match run {
        Ok(Ok(verified)) => verified,
        Ok(Err(e)) => Verified {
            damage: vec![format!("the store cannot be read: {e}")],
            ..Verified::default()
        },
        Err(_) => Verified {
            damage: vec!["reading the store panicked inside redb: its bytes are damaged".into()],
            ..Verified::default()
        },
    };
    verified.walk_errors = std::mem::take(&mut outcome.walk_errors);
    let found = &mut verified.damage;
    if found.len() > MAX_LISTED_DAMAGE {
        let more = found.len() - MAX_LISTED_DAMAGE + 1;
        found.truncate(MAX_LISTED_DAMAGE - 1);
        found.push(format!("... and {more} more differences"));
    }
    Ok(verified)
}

/// An edge as compared: (from, to, kind, provenance, confidence bits).
type EdgeKey = (String, String, &'static str, &'static str, u32);

/// Compare `store` with `outcome`, a full parse of `memory_dir` taken before the store is read.
fn compare(store: &Store, memory_dir: &Path, outcome: &scan::ScanOutcome) -> Result<Verified> {
    let r = store.read()?;
    let mut found = Vec::new();
    let mut changed = Vec::new();
    let stored: HashMap<String, NodeRecord> = r.all_nodes()?.into_iter().collect();
    // Notes this parse could not read (a note or folder without read permission) are kept by
    // the index as it last read them: not compared, and never taken for damage.
    let kept: BTreeSet<&str> = stored
        .iter()
        .filter(|(_, rec)| outcome.unread_covers(&rec.path))
        .map(|(id, _)| id.as_str())
        .collect();

    // The sketches the notes give, against the ones stored (a stored one is current or absent).
    let mut sketches: Vec<(String, Sketch)> = outcome
        .parsed
        .par_iter()
        .map(|p| (p.id.clone(), Sketch::of_parsed(p)))
        .collect();
    sketches.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let (stored_ids, stored_sketches) = r.sketches()?;
    let mut at = 0;
    for (id, stored) in stored_ids.iter().zip(&stored_sketches) {
        while at < sketches.len() && sketches[at].0 < *id {
            at += 1;
        }
        match sketches.get(at) {
            Some((found_id, s)) if found_id == id => {
                if s != stored {
                    found.push(format!(
                        "the near-duplicate sketch of `{id}` differs from the note"
                    ));
                }
            }
            _ if kept.contains(id.as_str()) => {}
            _ => found.push(format!(
                "the store holds a sketch of `{id}`, which no note defines"
            )),
        }
    }

    let manifest = r.manifest()?;
    let mut want_edges: BTreeSet<EdgeKey> = BTreeSet::new();
    for u in &outcome.batch.upserts {
        match stored.get(&u.id) {
            None => found.push(format!("note `{}` ({}) is missing", u.id, u.path)),
            Some(rec) if *rec != u.record => {
                found.push(format!("the record of `{}` differs from {}", u.id, u.path))
            }
            Some(_) => {}
        }
        match manifest.get(&u.path) {
            Some(e) if e.hash == u.file.hash && e.size == u.file.size => {}
            Some(_) => found.push(format!(
                "the content hash of {} differs from the file's",
                u.path
            )),
            None => found.push(format!("{} is missing from the file list", u.path)),
        }
        for e in &u.edges {
            want_edges.insert((
                u.id.clone(),
                e.other.clone(),
                e.kind.as_str(),
                e.provenance.as_str(),
                e.confidence.to_bits(),
            ));
        }
    }
    let expected: HashMap<&str, &str> = outcome
        .batch
        .upserts
        .iter()
        .map(|u| (u.id.as_str(), u.path.as_str()))
        .collect();
    let files: BTreeSet<&str> = expected.values().copied().collect();
    for (id, rec) in &stored {
        if !expected.contains_key(id.as_str()) && !kept.contains(id.as_str()) {
            // A note written (and indexed by another process) after this parse listed the
            // folder is there now: the memory changed meanwhile, which a retry settles. A
            // file the parse did read under another id is not that: the stored id is damaged.
            if !files.contains(rec.path.as_str()) && memory_dir.join(&rec.path).exists() {
                changed.push(rec.path.clone());
            }
            found.push(format!("the store holds `{id}`, which no note defines"));
        }
    }
    // A note whose file the index saw otherwise (see `scan::Stat`) than this parse did, or
    // that changes while the comparison runs, was edited meanwhile.
    for u in &outcome.batch.upserts {
        let seen_by_index = manifest.get(&u.path).map(Stat::of_entry);
        let now = std::fs::metadata(memory_dir.join(&u.path))
            .ok()
            .map(|m| Stat::of(&m));
        let parsed = Stat::of_entry(&u.file);
        let differs = |s: Option<Stat>| !s.is_some_and(|s| s.may_be(&parsed));
        if differs(seen_by_index) || differs(now) {
            changed.push(u.path.clone());
        }
    }
    let failed: BTreeSet<&str> = outcome
        .walk_errors
        .iter()
        .map(|e| e.path.as_str())
        .collect();
    for path in manifest.keys() {
        if !files.contains(path.as_str())
            && !failed.contains(path.as_str())
            && !outcome.unread_covers(path)
        {
            if !memory_dir.join(path).exists() {
                changed.push(path.clone());
            }
            found.push(format!("the file list names {path}, which is not a note"));
        }
    }

    // Each edge carries its source's out-degree, which recall reads to damp notes that link to
    // everything: it must be the distinct targets of the source's stored list.
    let mut lists: HashMap<String, Vec<crate::store::EdgeValue>> = HashMap::new();
    r.for_each_out_edge(|from, _, e| {
        lists.entry(from.to_string()).or_default().push(e.into());
    })?;
    for (from, list) in &lists {
        let degree = crate::store::out_degree(list);
        if list.iter().any(|e| e.source_out_degree != degree) {
            found.push(format!(
                "the out-degree recorded in the edges of `{from}` is wrong"
            ));
        }
        if list
            .iter()
            .any(|e| !(e.confidence > 0.0 && e.confidence <= 1.0))
        {
            found.push(format!(
                "an edge of `{from}` has a confidence outside (0, 1]"
            ));
        }
    }
    let listed: usize = lists.values().map(Vec::len).sum();
    let counted = r.edge_count()?;
    if counted != listed as u64 {
        found.push(format!(
            "the edge count says {counted}, the edge lists hold {listed}"
        ));
    }
    let mut have_edges: BTreeSet<EdgeKey> = BTreeSet::new();
    for (from, list) in lists {
        if kept.contains(from.as_str()) {
            continue;
        }
        for e in list {
            // Edges mnemon computes between notes (co-occurrence, derived_from) end at notes; a
            // `supersedes` a phrase declares ("This replaces [[b]]") is a link in the body, and
            // like the link it comes with, it may dangle.
            let between_notes = e.provenance == Provenance::Synthesized
                && e.kind != crate::notes::EdgeKind::Supersedes;
            if between_notes && (!stored.contains_key(&e.other) || !stored.contains_key(&from)) {
                found.push(format!(
                    "a synthesized edge {from} -{}-> {} ends at no note",
                    e.kind.as_str(),
                    e.other
                ));
            }
            have_edges.insert((
                from.clone(),
                e.other,
                e.kind.as_str(),
                e.provenance.as_str(),
                e.confidence.to_bits(),
            ));
        }
    }
    for (from, to, kind, ..) in want_edges.difference(&have_edges) {
        found.push(format!("the link {from} -{kind}-> {to} is missing"));
    }
    // Synthesized edges the notes do not make themselves (co-occurrence, slug clusters) are
    // the index's own; phrase-made ones ("This replaces [[x]]") are in the parse.
    let synthesized = Provenance::Synthesized.as_str();
    for (from, to, kind, ..) in have_edges
        .difference(&want_edges)
        .filter(|(.., provenance, _)| *provenance != synthesized)
    {
        found.push(format!(
            "the store holds a link {from} -{kind}-> {to} no note makes"
        ));
    }

    let want_problems: HashMap<&str, &Vec<crate::notes::Problem>> = outcome
        .batch
        .upserts
        .iter()
        .filter(|u| !u.problems.is_empty())
        .map(|u| (u.path.as_str(), &u.problems))
        .collect();
    let have_problems: HashMap<String, Vec<crate::notes::Problem>> =
        r.problems()?.into_iter().collect();
    for (path, problems) in &have_problems {
        if want_problems.get(path.as_str()) != Some(&problems)
            && !failed.contains(path.as_str())
            && !outcome.unread_covers(path)
        {
            found.push(format!(
                "the problems recorded for {path} differ from the note's"
            ));
        }
    }
    for path in want_problems.keys() {
        if !have_problems.contains_key(*path) {
            found.push(format!("the problems of {path} are not recorded"));
        }
    }
    changed.sort_unstable();
    changed.dedup();
    Ok(Verified {
        damage: found,
        sketches: sketches.into_iter().unzip(),
        changed,
        walk_errors: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `doctor` run while an agent appended to a note called the difference store damage and
    /// advised a rebuild. A note whose file the index saw otherwise than the comparison did is
    /// named as changed; a store that differs on notes nobody touched is not.
    #[test]
    fn a_note_edited_after_the_index_is_changed_not_damage() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join(".mnemon");
        let memory = crate::Memory::init(&root).unwrap();
        let notes = root.join("memory");
        std::fs::write(notes.join("a.md"), "---\nname: A\n---\nalpha text\n").unwrap();
        std::fs::write(notes.join("b.md"), "---\nname: B\n---\nbeta text\n").unwrap();
        memory.index().unwrap();
        drop(memory);
        let (store, _) = Store::open(&root.join("index")).unwrap();
        let quiet = store_against_notes(&store, &notes).expect("notes read");
        assert!(quiet.damage.is_empty(), "{:?}", quiet.damage);
        assert!(quiet.changed.is_empty(), "{:?}", quiet.changed);

        std::fs::write(
            notes.join("a.md"),
            "---\nname: A\n---\nalpha text, edited\n",
        )
        .unwrap();
        std::fs::write(notes.join("c.md"), "gamma\n").unwrap();
        std::fs::remove_file(notes.join("b.md")).unwrap();
        let edited = store_against_notes(&store, &notes).expect("notes read");
        assert!(!edited.damage.is_empty());
        assert_eq!(edited.changed, ["a.md", "b.md", "c.md"]);
    }

    /// Regression: a note written and indexed by another process after doctor's parse listed
    /// the folder was "the store holds `c`, which no note defines": damage, exit 1, and
    /// `doctor --fix` moved the healthy store aside. It is a change, which a retry settles.
    #[test]
    fn a_note_added_and_indexed_after_the_parse_is_changed_not_damage() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join(".mnemon");
        let memory = crate::Memory::init(&root).unwrap();
        let notes = root.join("memory");
        std::fs::write(notes.join("a.md"), "---\nname: A\n---\nalpha text\n").unwrap();
        memory.index().unwrap();
        let parsed_before = scan::scan(&notes, &HashMap::new());
        std::fs::write(notes.join("c.md"), "gamma\n").unwrap();
        memory.index().unwrap();
        drop(memory);
        let (store, _) = Store::open(&root.join("index")).unwrap();
        let raced = compare(&store, &notes, &parsed_before).unwrap();
        assert!(!raced.damage.is_empty(), "the premise: the parse missed c");
        assert_eq!(raced.changed, ["c.md"]);
        let settled = store_against_notes(&store, &notes).expect("notes read");
        assert!(settled.damage.is_empty(), "{:?}", settled.damage);
    }
}
