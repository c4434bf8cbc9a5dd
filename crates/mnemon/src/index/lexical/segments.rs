//! The segment files behind the live index: writing one, publishing a new manifest, tiered
//! merges when too many segments or deletions pile up, and removing files no manifest names.

use super::*;
use crate::error::{Error, Result};
use crate::index::manifest::{Manifest, SegmentEntry};
use crate::index::segment::writer::WriteError;
use crate::index::segment::{Segment, SegmentBytes, SegmentWriter};
use fst::Streamer;
use std::path::Path;
use std::sync::Arc;

/// Make `segments` the live set of `generation`: write the manifest naming them, delete the
/// segment files it no longer names.
pub(super) fn publish(
    index_dir: &Path,
    generation: u64,
    segments: Vec<Live>,
) -> Result<LexicalIndex> {
    let manifest = Manifest {
        generation,
        segments: segments.iter().map(|l| l.entry.clone()).collect(),
    };
    manifest.store(FS, index_dir)?;
    remove_unlisted_segments(index_dir, &manifest);
    Ok(LexicalIndex::from_parts(generation, segments))
}

pub(super) fn deleted_list(deleted: &[bool]) -> Vec<u32> {
    deleted
        .iter()
        .enumerate()
        .filter(|(_, d)| **d)
        .map(|(i, _)| i as u32)
        .collect()
}

/// The file system the index's files are written to and read from: the real one, since segments
/// are read through memory maps of real files.
pub(super) const FS: &dyn crate::fs::Fs = &crate::fs::RealFs;

pub(super) fn segment_file_name(generation: u64, n: u32) -> String {
    format!("lex-{generation:016x}-{n}.seg")
}

pub(super) fn write_segment(
    index_dir: &Path,
    generation: u64,
    n: u32,
    bytes: &SegmentBytes,
) -> Result<Live> {
    let file = segment_file_name(generation, n);
    let path = index_dir.join(&file);
    crate::fs::write_atomic(
        FS,
        &path,
        crate::index::manifest::DURABILITY,
        &bytes.parts(),
    )?;
    let seg = Segment::open(&path).map_err(|e| Error::Corrupt {
        path: path.clone(),
        reason: format!("just written and unreadable: {e}"),
    })?;
    let entry = SegmentEntry {
        file,
        body_crc: seg.body_crc(),
        doc_count: seg.doc_count(),
        deleted: Vec::new(),
    };
    Ok(Live::new(entry, Arc::new(seg)))
}

/// Tiered merging: when there are too many segments, merge all but the largest if they are small
/// next to it, else everything; segments mostly deleted are always merged.
pub(super) fn merge_if_needed(
    index_dir: &Path,
    generation: u64,
    mut segments: Vec<Live>,
    written: &mut Vec<String>,
) -> Result<Vec<Live>> {
    let too_deleted =
        |l: &Live| l.entry.deleted.len() as f32 > MAX_DELETED_FRACTION * l.seg.doc_count() as f32;
    if segments.len() <= MAX_LIVE_SEGMENTS && !segments.iter().any(too_deleted) {
        return Ok(segments);
    }
    segments.sort_by_key(|l| std::cmp::Reverse(l.live_count()));
    let largest = segments.first().map_or(0, Live::live_count);
    let rest: usize = segments.iter().skip(1).map(Live::live_count).sum();
    let merge_all = rest * 4 >= largest || segments.first().is_some_and(too_deleted);
    let (keep, merge): (Vec<Live>, Vec<Live>) = if merge_all {
        (Vec::new(), segments)
    } else {
        let mut it = segments.into_iter();
        let first = it.next().into_iter().collect();
        (first, it.collect())
    };
    if merge.len() < 2 && merge.iter().all(|l| l.entry.deleted.is_empty()) {
        let mut all = keep;
        all.extend(merge);
        return Ok(all);
    }
    let bytes = merge_segments(&merge).map_err(|e| Error::Corrupt {
        path: index_dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    let live = write_segment(index_dir, generation, 1 + written.len() as u32, &bytes)?;
    written.push(live.entry.file.clone());
    let mut out = keep;
    if live.live_count() > 0 {
        out.push(live);
    }
    Ok(out)
}

/// Why segments could not be merged.
#[derive(Debug, thiserror::Error)]
pub(super) enum MergeError {
    /// The dictionary of segment `file` names postings outside it (the segment is damaged).
    #[error("segment {file}: its dictionary names postings at offset {offset}, outside it")]
    PostingsOffset { file: String, offset: u64 },
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// Merge segments into one, dropping deleted docs (docs renumbered in segment order).
pub(super) fn merge_segments(segs: &[Live]) -> std::result::Result<SegmentBytes, MergeError> {
    let mut w = SegmentWriter::new();
    let mut remap: Vec<Vec<Option<u32>>> = Vec::with_capacity(segs.len());
    for l in segs {
        let mut m = Vec::with_capacity(l.seg.doc_count() as usize);
        for doc in 0..l.seg.doc_count() {
            if l.deleted[doc as usize] {
                m.push(None);
            } else {
                let n = w.add_doc(l.seg.id(doc), l.seg.field_lens(doc))?;
                m.push(Some(n));
            }
        }
        remap.push(m);
    }
    let mut op = fst::map::OpBuilder::new();
    for l in segs {
        op = op.add(l.seg.terms());
    }
    let mut union = op.union();
    let mut buf = Vec::new();
    while let Some((term, values)) = union.next() {
        buf.clear();
        let mut vals: Vec<_> = values.to_vec();
        vals.sort_by_key(|v| v.index);
        for v in vals {
            let l = &segs[v.index];
            let Some(postings) = l.seg.postings_at(v.value) else {
                return Err(MergeError::PostingsOffset {
                    file: l.entry.file.clone(),
                    offset: v.value,
                });
            };
            for p in postings {
                if let Some(Some(n)) = remap[v.index].get(p.doc as usize) {
                    buf.push((*n, p.tfs));
                }
            }
        }
        w.add_term(term, &buf)?;
    }
    Ok(w.finish()?)
}

/// Delete segment files (and stale temp files) of `index_dir` that the manifest does not list.
/// Best effort: a file another process still maps stays readable until it unmaps it.
pub(super) fn remove_unlisted_segments(index_dir: &Path, manifest: &Manifest) {
    let Ok(dir) = std::fs::read_dir(index_dir) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let unlisted_segment = name.starts_with("lex-")
            && name.ends_with(".seg")
            && !manifest.segments.iter().any(|s| s.file == name);
        // Temp files of a crashed writer; an old age keeps a live writer's temp file safe.
        let stale_temp = name.starts_with(crate::fs::TEMP_PREFIX)
            && e.metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > STALE_TEMP_AGE);
        if unlisted_segment || stale_temp {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
