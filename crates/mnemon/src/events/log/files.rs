//! Which segment files the log has (in `events/` and `events/archive/`), and reading one back,
//! compressed or not, from a watermark.

use super::*;
use crate::error::{Error, Result};
use crate::events::event::Event;
use crate::events::segment::{FrameReader, Header, HeaderError, Holds, Item, compressed_holds};
use std::path::{Path, PathBuf};

/// A segment file found in `events/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentFile {
    /// File name.
    pub name: String,
    /// File name without `.seg` / `.seg.zst`: the key of its watermark.
    pub id: String,
    pub compressed: bool,
}

/// The segment files of `events/`, sorted by name (= by creation time), and the other files.
pub fn list_segments(fs: &dyn Fs, events_dir: &Path) -> Result<(Vec<SegmentFile>, Vec<String>)> {
    let names = match fs.list_kinds(events_dir) {
        Ok(n) => n,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io("list", events_dir, e)),
    };
    let mut segs = Vec::new();
    let mut other = Vec::new();
    for (name, folder) in names {
        // Hidden names are mnemon's own: locks, and temporaries never read as segments.
        if name.starts_with('.') {
            continue;
        }
        // A folder named like a segment is not one (reading it, compacting it would fail): it
        // is listed with the other files, for `events verify` to name.
        if folder && (name.ends_with(COMPRESSED_EXT) || name.ends_with(SEGMENT_EXT)) {
            other.push(format!("{name}/"));
        } else if let Some(id) = name.strip_suffix(COMPRESSED_EXT) {
            segs.push(SegmentFile {
                id: id.to_string(),
                name,
                compressed: true,
            });
        } else if let Some(id) = name.strip_suffix(SEGMENT_EXT) {
            segs.push(SegmentFile {
                id: id.to_string(),
                name,
                compressed: false,
            });
        } else {
            other.push(name);
        }
    }
    segs.sort_by(|a, b| a.name.cmp(&b.name));
    other.sort();
    Ok((segs, other))
}

/// The segment files of `events/archive/` ([`list_segments`]).
#[derive(Debug, Default)]
pub struct ArchiveListing {
    pub segs: Vec<SegmentFile>,
    /// The other files there.
    pub other: Vec<String>,
    /// Set (to the notice to give) when a file stands where the archive folder belongs: then
    /// no archived segment can be read, and none is archived, until it is moved away.
    pub unusable: Option<String>,
}

/// The notice for `archive`, a file where the folder of archived segments belongs.
pub fn archive_not_a_folder(archive: &Path) -> String {
    format!(
        "{} is a file, not a folder: archived segments cannot be read there and compaction \
         archives nothing (the stats keep what the snapshot counted of them); move that file \
         away, and mnemon makes the folder again when it next archives",
        archive.display()
    )
}

/// [`list_segments`] of `events/archive/`. A file where that folder belongs (made by hand or a
/// tool) holds no segment: listed as no archive, with the notice to give, so that it stops no
/// command (recall, show, compaction of `events/`); nothing in it is read or removed.
pub fn list_archive(fs: &dyn Fs, events_dir: &Path) -> Result<ArchiveListing> {
    let archive = events_dir.join(super::segment::ARCHIVE_DIR);
    match list_segments(fs, &archive) {
        Ok((segs, other)) => Ok(ArchiveListing {
            segs,
            other,
            unusable: None,
        }),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotADirectory => {
            Ok(ArchiveListing {
                unusable: Some(archive_not_a_folder(&archive)),
                ..ArchiveListing::default()
            })
        }
        Err(e) => Err(e),
    }
}

/// A segment file of the log, wherever it is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedSegment {
    pub path: PathBuf,
    /// Its name relative to `events/` (`archive/<name>` for an archived one).
    pub shown: String,
    pub file: SegmentFile,
}

/// Every segment of the log, in `events/` and in `events/archive/` (both are read by every
/// fold), one file each, and the files of either folder that are not segments (relative to
/// `events/`).
pub fn all_segments(fs: &dyn Fs, events_dir: &Path) -> Result<(Vec<LocatedSegment>, Vec<String>)> {
    let listed = list_log(fs, events_dir)?;
    Ok((listed.segments, listed.unknown))
}

/// What a listing of the log found.
#[derive(Debug, Default)]
pub struct LogListing {
    /// One file per segment, as folds read them ([`one_file_per_segment`]).
    pub segments: Vec<LocatedSegment>,
    /// Files of a segment that another file of the same segment stands in for: not read.
    pub set_aside: Vec<SetAside>,
    /// Files of either folder that are not segments (relative to `events/`).
    pub unknown: Vec<String>,
    /// Why `events/archive` cannot be read, when a file stands there ([`list_archive`]).
    pub archive_unusable: Option<String>,
}

/// A file of a segment that is not read because another file of the same segment is.
#[derive(Debug, Clone, PartialEq)]
pub struct SetAside {
    /// Its name relative to `events/`.
    pub shown: String,
    /// The file read instead, relative to `events/`.
    pub read_instead: String,
    /// Whether it holds fewer of the segment's bytes than the file read (a compressed copy made
    /// before the segment grew: the log shared through git or a sync tool) rather than the same.
    pub shorter: bool,
}

/// [`all_segments`] with the files of a segment that were set aside.
pub fn list_log(fs: &dyn Fs, events_dir: &Path) -> Result<LogListing> {
    let archive_name = super::segment::ARCHIVE_DIR;
    let (segs, other) = list_segments(fs, events_dir)?;
    let archive = list_archive(fs, events_dir)?;
    let (archived, archived_other) = (archive.segs, archive.other);
    let (segments, set_aside) = one_file_per_segment(fs, events_dir, segs, archived);
    let mut unknown: Vec<String> = other.into_iter().filter(|n| n != archive_name).collect();
    unknown.extend(
        archived_other
            .into_iter()
            .map(|n| format!("{archive_name}/{n}")),
    );
    Ok(LogListing {
        segments,
        set_aside,
        unknown,
        archive_unusable: archive.unusable,
    })
}

/// The segment files listed in `events_dir` (`segs`) and in its archive (`archived`), one file
/// per segment id, as every reader of the log takes them, by creation time: a compressed copy
/// is authoritative over `X.seg` (compaction writes it before removing `X.seg`, and a crash
/// between the two leaves both), and a listing taken while compaction moves `X.seg.zst` to the
/// archive can hold it in both folders; of two files of one kind, the one in `events/` is taken
/// (where a writer appends). Unless another file of the id holds more of the segment's bytes: a
/// segment only grows, so the longer file holds all the shorter one does. That happens when the
/// log is shared through git or a sync tool: one clone compresses a segment that another clone's
/// live writer goes on appending to, and a merge brings both files together. Also returns the
/// files set aside.
pub fn one_file_per_segment(
    fs: &dyn Fs,
    events_dir: &Path,
    segs: Vec<SegmentFile>,
    archived: Vec<SegmentFile>,
) -> (Vec<LocatedSegment>, Vec<SetAside>) {
    let archive_name = super::segment::ARCHIVE_DIR;
    let archive = events_dir.join(archive_name);
    let mut all: Vec<LocatedSegment> = segs
        .into_iter()
        .map(|file| LocatedSegment {
            path: events_dir.join(&file.name),
            shown: file.name.clone(),
            file,
        })
        .collect();
    all.extend(archived.into_iter().map(|file| LocatedSegment {
        path: archive.join(&file.name),
        shown: format!("{archive_name}/{}", file.name),
        file,
    }));
    // The file each id is read from: its first compressed copy, else its first plain one.
    let mut chosen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut copies: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    for (i, s) in all.iter().enumerate() {
        copies.entry(s.file.id.as_str()).or_default().push(i);
        match chosen.get(&s.file.id) {
            Some(&j) if all[j].file.compressed || !s.file.compressed => {}
            _ => {
                chosen.insert(s.file.id.clone(), i);
            }
        }
    }
    // Then the longest file of an id with several (rare: only they cost a look at lengths). A
    // compressed copy of an earlier build that does not record its length holds all of its
    // segment, as it always did; one that says nothing (damaged, no compressed segment) yields
    // to a file that does.
    let mut held: std::collections::HashMap<usize, Holds> = std::collections::HashMap::new();
    for indices in copies.values().filter(|c| c.len() > 1) {
        for &i in indices {
            held.insert(i, holds(fs, &all[i]));
        }
        let first = chosen[&all[indices[0]].file.id];
        let best = indices.iter().fold(
            first,
            |best, &i| if held[&i] > held[&best] { i } else { best },
        );
        chosen.insert(all[first].file.id.clone(), best);
    }
    let mut set_aside = Vec::new();
    let mut out = Vec::with_capacity(chosen.len());
    for (i, s) in all.iter().enumerate() {
        match chosen.get(&s.file.id) {
            Some(&j) if j == i => out.push(s.clone()),
            Some(&j) => set_aside.push(SetAside {
                shown: s.shown.clone(),
                read_instead: all[j].shown.clone(),
                shorter: matches!(
                    (held.get(&i), held.get(&j)),
                    (Some(Holds::Len(mine)), Some(Holds::Len(read))) if mine < read
                ),
            }),
            None => {}
        }
    }
    out.sort_by(|a, b| a.file.name.cmp(&b.file.name));
    set_aside.sort_by(|a, b| a.shown.cmp(&b.shown));
    (out, set_aside)
}

/// What a file holds of its segment: a plain file its size (nothing known when it cannot be
/// read), a compressed one what it records ([`compressed_holds`]).
pub fn holds(fs: &dyn Fs, s: &LocatedSegment) -> Holds {
    if s.file.compressed {
        compressed_holds(fs, &s.path)
    } else {
        fs.len(&s.path).map_or(Holds::Unknown, Holds::Len)
    }
}

/// What reading one segment found.
#[derive(Debug, Default)]
pub struct SegmentRead {
    pub header: Option<Header>,
    /// Events with their frame offsets.
    pub events: Vec<(u64, Event)>,
    pub damaged: Vec<std::ops::Range<u64>>,
    /// Offset just past the last good frame (the next watermark).
    pub end: u64,
    /// No complete header, and the bytes are the start of one: a segment whose creation never
    /// completed (0 bytes, a header cut short by a crash or a full disk). It holds no events and
    /// is not damage.
    pub empty: bool,
    /// Why reading stopped early, if it did (what was read is kept).
    pub error: Option<String>,
    /// `error` is damage the reader went on past (a compressed segment's): every event the
    /// segment still holds was read.
    pub read_past: bool,
}

/// Whether a compressed segment (in `events/` or its archive) already has this id. A new
/// segment must not reuse it: readers take the compressed copy of an id as authoritative, so the
/// new segment's events would never be read (found by the `compaction_ops` fuzz target: a writer
/// of the same session, process and millisecond as a segment compressed meanwhile).
pub fn compressed_id_exists(fs: &dyn Fs, events_dir: &Path, id: &str) -> bool {
    let name = format!("{id}{COMPRESSED_EXT}");
    let archive = events_dir.join(super::segment::ARCHIVE_DIR);
    fs.len(&events_dir.join(&name)).is_ok() || fs.len(&archive.join(&name)).is_ok()
}

/// Open a segment's byte stream (decompressing `.seg.zst`).
pub fn open_stream(
    fs: &dyn Fs,
    path: &Path,
    compressed: bool,
) -> std::io::Result<Box<dyn Read + Send>> {
    let raw = fs.open_read(path)?;
    if compressed {
        super::super::compressed::decoder(raw)
    } else {
        Ok(raw)
    }
}

/// Whether `id` is the name a writer gives the segment with header `h`:
/// `<created_ms, 13 digits>-<session>-<pid>-<n>` (format-spec/events.md, "File name"). A segment
/// under another name was renamed or copied by hand (a file-sync tool's conflict copy,
/// `... (1).seg`).
pub fn names_header(id: &str, h: &Header) -> bool {
    let prefix = format!("{:013}-{}-", h.created_ms, h.session);
    let Some(rest) = id.strip_prefix(&prefix) else {
        return false;
    };
    let number = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    rest.split_once('-')
        .is_some_and(|(pid, n)| number(pid) && number(n))
}

/// Whether segment `other` may be the original of segment `id` with header `h`: `id` is not
/// the name `h` gives, `other` is (its header must still equal `h` for `id` to be its copy).
pub fn named_as_original(id: &str, h: &Header, other: &str) -> bool {
    other != id && names_header(other, h) && !names_header(id, h)
}

/// Where a segment listed at `path` went when it is no longer there: compaction compresses a
/// finished `events/X.seg` into `events/X.seg.zst` and later moves that to
/// `events/archive/X.seg.zst`, while a reader may have listed the folder before either step.
fn moved_by_compaction(fs: &dyn Fs, path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let id = name
        .strip_suffix(COMPRESSED_EXT)
        .or_else(|| name.strip_suffix(SEGMENT_EXT))?;
    let dir = path.parent()?;
    if dir.file_name().and_then(|n| n.to_str()) == Some(super::segment::ARCHIVE_DIR) {
        return None;
    }
    let compressed = format!("{id}{COMPRESSED_EXT}");
    [
        dir.join(&compressed),
        dir.join(super::segment::ARCHIVE_DIR).join(&compressed),
    ]
    .into_iter()
    .find(|p| p != path && fs.len(p).is_ok())
}

/// Why a file named like a segment could not be opened, with what to do about it: one text
/// for folds, `events verify` and compaction, so the notice about one file is given once. A
/// named pipe or device is refused without blocking ([`crate::fs::open_regular`]: its message
/// names the file and says to move it away).
pub fn cannot_open(e: &std::io::Error) -> String {
    let fix = match e.kind() {
        std::io::ErrorKind::PermissionDenied => {
            "; give this process read and write access to it (ls -l), or move it out of events/"
        }
        std::io::ErrorKind::InvalidData => "",
        _ => "; if it is no segment, move it out of events/",
    };
    format!(
        "cannot open: {e}{fix} (until then its events are not counted and compaction leaves it \
         as it is)"
    )
}

/// Read the events of a segment at or after `from` (an offset in its uncompressed stream).
pub fn read_segment(fs: &dyn Fs, path: &Path, compressed: bool, from: u64) -> SegmentRead {
    let mut out = SegmentRead::default();
    let moved;
    let (path, compressed, mut stream) = match open_stream(fs, path, compressed) {
        Ok(s) => (path, compressed, s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Gone without a compressed form: compaction removed it as empty (or as the
            // leftover of a copy it had compressed), so it holds nothing to read.
            let Some(to) = moved_by_compaction(fs, path) else {
                out.empty = true;
                return out;
            };
            moved = to;
            match open_stream(fs, &moved, true) {
                Ok(s) => (moved.as_path(), true, s),
                Err(e) => {
                    out.error = Some(cannot_open(&e));
                    return out;
                }
            }
        }
        Err(e) => {
            out.error = Some(cannot_open(&e));
            return out;
        }
    };
    // The header (its version says where the session id is and how frames are sealed).
    let (seal, header_len) = match Header::read(&mut stream) {
        Ok((h, len)) => {
            let seal = h.seal;
            out.header = Some(h);
            (seal, len as u64)
        }
        Err(HeaderError::Incomplete) => {
            out.empty = true;
            return out;
        }
        Err(HeaderError::Invalid(e)) => {
            out.error = Some(format!("{e}{}", e.fix()));
            return out;
        }
    };
    let start = from.max(header_len);
    let stream: Box<dyn Read + Send> = if compressed || start == header_len {
        // Skip forward in the stream we have (compressed streams cannot seek).
        let skip = start - header_len;
        if skip > 0
            && let Err(e) = std::io::copy(&mut (&mut stream).take(skip), &mut std::io::sink())
        {
            out.error = Some(format!("cannot skip to the watermark ({e})"));
            return out;
        }
        stream
    } else {
        match fs.open_read_at(path, start) {
            Ok(s) => s,
            Err(e) => {
                out.error = Some(format!("cannot seek to the watermark ({e})"));
                return out;
            }
        }
    };
    out.end = start;
    let mut reader = FrameReader::new(stream, seal, start);
    for item in reader.by_ref() {
        match item {
            Item::Event { offset, end, event } => {
                out.events.push((offset, event));
                out.end = end;
            }
            Item::Damaged(r) => out.damaged.push(r),
        }
    }
    if let Some(e) = reader.io_error {
        let past = e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<crate::events::compressed::DamageReadPast>());
        out.read_past = past.is_some();
        out.error = Some(match past {
            Some(what) => format!("{what}; every event it still holds was read"),
            None => format!("read failed midway ({e}); kept the events before it"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_is_named_by_its_header_only_under_a_writers_name() {
        let h = Header::new("p42-1a2b3c4d".into(), 1_764_489_600_000);
        assert!(names_header("1764489600000-p42-1a2b3c4d-42-0", &h));
        assert!(names_header("1764489600000-p42-1a2b3c4d-42-17", &h));
        for other in [
            "1764489600000-p42-1a2b3c4d-42-0 (1)",
            "1764489600000-p42-1a2b3c4d-42",
            "1764489600000-p42-1a2b3c4d-42-0-1",
            "1764489600001-p42-1a2b3c4d-42-0",
            "1764489600000-p43-1a2b3c4d-42-0",
            "0764489600000-p42-1a2b3c4d-42-0",
            "copy",
        ] {
            assert!(!names_header(other, &h), "{other}");
        }
        // Creation times before 2001 are zero-padded to 13 digits, as writers name them.
        let early = Header::new("s1".into(), 1);
        assert!(names_header("0000000000001-s1-7-0", &early));
        assert!(!names_header("1-s1-7-0", &early));
    }
}
