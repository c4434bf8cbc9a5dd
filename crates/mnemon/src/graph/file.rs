//! The in-memory graph kept between processes (`index/graph.cache`, format-spec/graph.md).
//!
//! Loading the graph from the store decodes every node record and every edge list and looks
//! each edge's other end up by its id string, work that grows with the number of edges; a
//! command-line recall would pay that on every call. This file is the loaded graph as flat
//! little-endian arrays (ids, scoring fields, the out- and in-lists by ordinal) with the store
//! version it reflects: a process reads it whole, checks its CRC and every value, and patches it
//! to the store's version from the store's change log, like a graph kept in memory.
//!
//! It is a cache: any doubt (damage, another format version, a value out of range) and it is not
//! used; the graph is loaded from the store and the file written again. Walk weights are not
//! stored: they are recomputed from the edge fields by the policy of the reading binary.

use super::{Graph, GraphEdge, NodeMeta, edge_weight_of};
use crate::notes::{EdgeKind, NoteType, Provenance};
use crate::store::Version;
use std::fmt;
use std::path::Path;

/// The file's name in `index/`.
pub const GRAPH_FILE: &str = "graph.cache";
/// `\x89MNGR\r\n\x1a`: a binary file, and line-ending damage shows.
const MAGIC: [u8; 8] = *b"\x89MNGR\r\n\x1a";
const FORMAT_VERSION: u16 = 1;
const HEADER_BYTES: usize = 64;
/// The CRC covers the file from this offset (the header's fields after the CRC, and the body).
const CRC_FROM: usize = 16;
const META_BYTES: usize = 16;
const EDGE_BYTES: usize = 16;
/// At most this many nodes (ordinals are `u32`; a graph this big would not fit memory anyway).
const MAX_NODES: u64 = 1 << 28;
/// At most this many edges per direction.
const MAX_EDGES: u64 = 1 << 31;

const META_RECORD: u8 = 1;
const META_TTL: u8 = 2;
const META_UPDATED: u8 = 4;

/// Why a graph file was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphFileError {
    pub reason: String,
}

impl fmt::Display for GraphFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "graph cache unusable: {}", self.reason)
    }
}

fn bad(reason: impl Into<String>) -> GraphFileError {
    GraphFileError {
        reason: reason.into(),
    }
}

/// The file's bytes for `g`.
pub fn encode(g: &Graph) -> Vec<u8> {
    let n = g.ids.len();
    let edges: usize = g.out.iter().map(Vec::len).sum();
    let id_bytes: usize = g.ids.iter().map(|s| s.len()).sum();
    let mut body = Vec::with_capacity(
        4 * n + id_bytes + 3 + META_BYTES * n + 2 * (4 * (n + 1) + EDGE_BYTES * edges),
    );
    let mut end = 0u32;
    for id in &g.ids {
        end = end.saturating_add(u32::try_from(id.len()).unwrap_or(u32::MAX));
        body.extend_from_slice(&end.to_le_bytes());
    }
    for id in &g.ids {
        body.extend_from_slice(id.as_bytes());
    }
    body.resize(body.len().next_multiple_of(4), 0);
    for m in &g.meta {
        let mut rec = [0u8; META_BYTES];
        if let Some(m) = m {
            rec[0] = META_RECORD
                | if m.ttl_days.is_some() { META_TTL } else { 0 }
                | if m.updated_s.is_some() {
                    META_UPDATED
                } else {
                    0
                };
            rec[1] = m.note_type.code();
            rec[4..8].copy_from_slice(&m.ttl_days.unwrap_or(0).to_le_bytes());
            rec[8..16].copy_from_slice(&m.updated_s.unwrap_or(0).to_le_bytes());
        }
        body.extend_from_slice(&rec);
    }
    for lists in [&g.out, &g.inn] {
        let mut start = 0u32;
        body.extend_from_slice(&start.to_le_bytes());
        for l in lists.iter() {
            start = start.saturating_add(u32::try_from(l.len()).unwrap_or(u32::MAX));
            body.extend_from_slice(&start.to_le_bytes());
        }
        for e in lists.iter().flatten() {
            body.extend_from_slice(&e.other.to_le_bytes());
            body.push(e.kind.code());
            body.push(e.provenance.code());
            body.extend_from_slice(&[0, 0]);
            body.extend_from_slice(&e.confidence.to_le_bytes());
            body.extend_from_slice(&e.source_out_degree.to_le_bytes());
        }
    }
    let mut out = Vec::with_capacity(HEADER_BYTES + body.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&[0; 4]); // the CRC, below
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&g.version.epoch.to_le_bytes());
    out.extend_from_slice(&g.version.generation.to_le_bytes());
    out.extend_from_slice(&(n as u32).to_le_bytes());
    out.extend_from_slice(&(edges as u32).to_le_bytes());
    out.extend_from_slice(&(id_bytes as u64).to_le_bytes());
    out.extend_from_slice(&[0u8; 8]);
    debug_assert_eq!(out.len(), HEADER_BYTES);
    out.extend_from_slice(&body);
    let crc = crc32fast::hash(&out[CRC_FROM..]);
    out[12..16].copy_from_slice(&crc.to_le_bytes());
    out
}

/// Reads little-endian values off a byte slice; every read is bounds-checked.
struct Cursor<'a> {
    buf: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], GraphFileError> {
        if self.buf.len() < n {
            return Err(bad(format!("the file ends inside the {what}")));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    fn u32s(&mut self, count: usize, what: &str) -> Result<Vec<u32>, GraphFileError> {
        let bytes = self.take(count.saturating_mul(4), what)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

/// The graph of `bytes`, every value checked (the CRC first).
pub fn decode(bytes: &[u8]) -> Result<Graph, GraphFileError> {
    if bytes.len() < HEADER_BYTES {
        return Err(bad(format!(
            "{} bytes is shorter than its header",
            bytes.len()
        )));
    }
    let (head, body) = bytes.split_at(HEADER_BYTES);
    if head[..8] != MAGIC {
        return Err(bad("not a graph cache (bad magic)"));
    }
    let version = u16::from_le_bytes([head[8], head[9]]);
    if version != FORMAT_VERSION {
        return Err(bad(format!(
            "format version {version}, this mnemon reads {FORMAT_VERSION}"
        )));
    }
    if head[10..12] != [0, 0] || head[56..64] != [0; 8] {
        return Err(bad("reserved header bytes are not zero"));
    }
    if le_u64(head, 16) != body.len() as u64 {
        return Err(bad(format!(
            "body of {} bytes where the header says {} (a torn write)",
            body.len(),
            le_u64(head, 16)
        )));
    }
    if crc32fast::hash(&bytes[CRC_FROM..]) != le_u32(head, 12) {
        return Err(bad("checksum mismatch (damaged bytes)"));
    }
    let version = Version {
        epoch: le_u64(head, 24),
        generation: le_u64(head, 32),
    };
    let n = u64::from(le_u32(head, 40));
    let edges = u64::from(le_u32(head, 44));
    let id_bytes = le_u64(head, 48);
    if n > MAX_NODES || edges > MAX_EDGES || id_bytes > body.len() as u64 {
        return Err(bad(format!(
            "{n} nodes, {edges} edges, {id_bytes} id bytes: over the limits"
        )));
    }
    let (n, edges, id_bytes) = (n as usize, edges as usize, id_bytes as usize);
    let mut c = Cursor { buf: body };
    let ends = c.u32s(n, "id offsets")?;
    let blob = std::str::from_utf8(c.take(id_bytes, "ids")?)
        .map_err(|e| bad(format!("ids are not UTF-8 ({e})")))?;
    c.take(id_bytes.next_multiple_of(4) - id_bytes, "padding")?;
    let mut g = Graph {
        version,
        ..Graph::default()
    };
    g.ids.reserve_exact(n);
    g.ord.reserve(n);
    let mut start = 0usize;
    for (o, &end) in ends.iter().enumerate() {
        let id = blob
            .get(start..end as usize)
            .ok_or_else(|| bad(format!("id {o} has offsets {start}..{end} outside the ids")))?;
        if id.is_empty() || g.ord.insert(id.into(), o as u32).is_some() {
            return Err(bad(format!("id {o} ({id:?}) is empty or repeated")));
        }
        g.ids.push(id.into());
        start = end as usize;
    }
    if start != id_bytes {
        return Err(bad("the id offsets do not end at the ids' end"));
    }
    let meta = c.take(n.saturating_mul(META_BYTES), "node fields")?;
    g.meta = meta
        .chunks_exact(META_BYTES)
        .enumerate()
        .map(|(o, m)| {
            if m[0] & !(META_RECORD | META_TTL | META_UPDATED) != 0 {
                return Err(bad(format!("node {o} has unknown flags {:#x}", m[0])));
            }
            if m[0] & META_RECORD == 0 {
                return Ok(None);
            }
            let note_type = NoteType::from_code(m[1])
                .ok_or_else(|| bad(format!("node {o} has note type code {}", m[1])))?;
            Ok(Some(NodeMeta {
                note_type,
                ttl_days: (m[0] & META_TTL != 0).then(|| le_u32(m, 4)),
                updated_s: (m[0] & META_UPDATED != 0).then(|| le_u64(m, 8) as i64),
            }))
        })
        .collect::<Result<_, GraphFileError>>()?;
    g.out = lists(&mut c, n, edges, false, "out")?;
    g.inn = lists(&mut c, n, edges, true, "in")?;
    if !c.buf.is_empty() {
        return Err(bad(format!("{} bytes after the in-lists", c.buf.len())));
    }
    g.recount();
    Ok(g)
}

/// One direction's lists: `n + 1` starts, then `edges` edges; `other` checked below `n`, codes
/// checked, walk weights computed (times the reverse factor for in-lists).
fn lists(
    c: &mut Cursor<'_>,
    n: usize,
    edges: usize,
    reverse: bool,
    what: &str,
) -> Result<Vec<Vec<GraphEdge>>, GraphFileError> {
    let starts = c.u32s(n + 1, "list offsets")?;
    let bytes = c.take(edges.saturating_mul(EDGE_BYTES), "edges")?;
    if starts.first() != Some(&0) || starts.last().copied() != Some(edges as u32) {
        return Err(bad(format!(
            "{what}-list offsets do not span the {edges} edges"
        )));
    }
    let mut out = Vec::with_capacity(n);
    for (o, w) in starts.windows(2).enumerate() {
        let (a, b) = (w[0] as usize, w[1] as usize);
        if a > b {
            return Err(bad(format!(
                "{what}-list of node {o} ends before it starts"
            )));
        }
        // The starts rise pairwise and the last is `edges`, but a middle one may still lie past
        // it ([0, 1, 0] with no edges): checked before the slice, not after the next pair.
        if b > edges {
            return Err(bad(format!(
                "{what}-list of node {o} ends at edge {b}, past the {edges} edges"
            )));
        }
        let mut list = Vec::with_capacity(b - a);
        for e in bytes[a * EDGE_BYTES..b * EDGE_BYTES].chunks_exact(EDGE_BYTES) {
            let other = le_u32(e, 0);
            let kind = EdgeKind::from_code(e[4]);
            let provenance = Provenance::from_code(e[5]);
            let confidence = f32::from_le_bytes([e[8], e[9], e[10], e[11]]);
            let (Some(kind), Some(provenance)) = (kind, provenance) else {
                return Err(bad(format!(
                    "an edge of node {o} has an unknown kind or provenance"
                )));
            };
            if other as usize >= n || !confidence.is_finite() {
                return Err(bad(format!(
                    "an edge of node {o} names node {other} or has confidence {confidence}"
                )));
            }
            let mut edge = GraphEdge {
                other,
                kind,
                provenance,
                confidence,
                source_out_degree: le_u32(e, 12),
                walk_weight: 0.0,
            };
            edge.walk_weight = edge_weight_of(&edge, reverse);
            list.push(edge);
        }
        out.push(list);
    }
    Ok(out)
}

/// The graph kept in `index_dir`, or why there is none to use (`Ok(None)`: no file).
pub fn read(index_dir: &Path) -> Result<Option<Graph>, GraphFileError> {
    let read = |path: &Path| -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        let mut bytes = Vec::new();
        crate::fs::open_regular_read(path)?.read_to_end(&mut bytes)?;
        Ok(bytes)
    };
    match read(&index_dir.join(GRAPH_FILE)) {
        Ok(bytes) => decode(&bytes).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(bad(format!("cannot read it ({e})"))),
    }
}

/// Write `g` to `index_dir` for the next process: a temporary file renamed over the old one
/// ([`crate::fs::write_atomic`]), so a reader sees one whole file or the other; not fsynced (a
/// cache: a torn file after a power loss fails its length or CRC check and is written again).
pub fn write(fs: &dyn crate::fs::Fs, index_dir: &Path, g: &Graph) -> crate::Result<()> {
    let path = index_dir.join(GRAPH_FILE);
    crate::fs::write_atomic(fs, &path, crate::fs::Durability::RenameOnly, &[&encode(g)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list reaching past the edges (starts [0, 1, 0] with no edges) is refused before it is
    /// sliced: checking only that the starts rise pairwise would slice it out of range before
    /// the falling pair after it is seen, a panic on a damaged cache instead of a refusal (which
    /// makes the caller rebuild the graph from the store). A case of the `graph_file` fuzz target.
    #[test]
    fn a_list_reaching_past_the_edges_is_refused_not_a_panic() {
        let mut g = Graph::default();
        g.intern("a");
        g.intern("b");
        let good = encode(&g);
        assert_eq!(decode(&good).map(|d| d.len()), Ok(2));
        // The body: 2 id ends, the ids "ab" padded to 4 bytes, 2 node records, then the out-list
        // starts (3) and the in-list starts (3), all zero.
        let out_starts = HEADER_BYTES + 4 * 2 + 4 + META_BYTES * 2;
        assert_eq!(good.len(), out_starts + 2 * 12);
        assert!(good[out_starts..].iter().all(|&b| b == 0));
        for (what, at) in [("out", out_starts), ("in", out_starts + 12)] {
            let mut damaged = good.clone();
            damaged[at + 4..at + 8].copy_from_slice(&1u32.to_le_bytes());
            let crc = crc32fast::hash(&damaged[CRC_FROM..]);
            damaged[12..16].copy_from_slice(&crc.to_le_bytes());
            let err = decode(&damaged).expect_err("a list past the edges is refused");
            assert!(
                err.reason
                    .contains(&format!("{what}-list of node 0 ends at edge 1")),
                "{err}"
            );
        }
    }
}
