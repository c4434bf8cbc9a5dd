//! `mnemon demo`: index the bundled demo memory into a temporary folder and show what mnemon sees.

use super::output::Out;
use mnemon::{Error, Memory};
use std::path::{Path, PathBuf};

/// The demo notes shipped with the sources.
const DEMO_NOTES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/demo-memory");

pub fn run(notes: Option<&Path>, out: &Out) -> mnemon::Result<i32> {
    let src = notes
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(DEMO_NOTES));
    if !src.is_dir() {
        return Err(Error::InvalidArgument {
            what: "demo notes folder",
            message: format!(
                "{} {}: run the demo from a source checkout, or pass --notes DIR, a folder of notes",
                src.display(),
                if src.exists() {
                    "is not a folder"
                } else {
                    "does not exist"
                }
            ),
        });
    }
    let tmp = tempfile::tempdir().map_err(|e| Error::io("create temp folder", "", e))?;
    super::stdout::remove_on_exit(Some(tmp.path().to_path_buf()));
    let shown = show(out, &src, &tmp);
    super::stdout::remove_on_exit(None);
    shown
}

/// Index the notes of `src` into a memory in `tmp` and show what recall makes of it.
fn show(out: &Out, src: &Path, tmp: &tempfile::TempDir) -> mnemon::Result<i32> {
    let root = tmp.path().join(".mnemon");
    let memory = Memory::init(&root)?;
    copy_tree(src, &memory.dir().memory())?;
    let report = memory.index()?;
    if out.json {
        out.json(&serde_json::json!({ "dir": root.display().to_string(), "index": report }));
        return Ok(super::EXIT_OK);
    }
    outln!(
        "{}",
        out.bold(&format!("mnemon demo: {} (temporary)", root.display()))
    );
    out.index(&report);
    let examples: [(&str, mnemon::recall::Query); 5] = [
        (
            "a question in plain English",
            mnemon::recall::Query::text("why did the connection pool time out at month end?"),
        ),
        (
            "keywords with a typo",
            mnemon::recall::Query::text("deploy rolback"),
        ),
        (
            "a Chinese query",
            mnemon::recall::Query::text("部署检查清单"),
        ),
        (
            "everything around an anchor note",
            mnemon::recall::Query::anchors(["rate-limit-gcra"]),
        ),
        (
            "a question this memory has no answer for",
            mnemon::recall::Query::text("how do I bake sourdough bread?"),
        ),
    ];
    for (what, mut q) in examples {
        q.limit = 5;
        q.caller = "demo".into();
        let shown = if q.text.is_empty() {
            format!("--anchor {}", q.anchors.join(" --anchor "))
        } else {
            format!("{:?}", q.text)
        };
        outln!();
        outln!(
            "{} {}",
            out.bold(&format!("mnemon recall {shown}")),
            out.dim(&format!("({what})"))
        );
        match memory.recall(&q) {
            Ok(r) => out.recall(&r, false),
            Err(e) => outln!("  {e}"),
        }
    }
    outln!();
    outln!(
        "{}",
        out.dim("try: mnemon init, put notes in .mnemon/memory/, then mnemon recall \"your question\" --explain")
    );
    Ok(super::EXIT_OK)
}

fn copy_tree(src: &Path, dst: &Path) -> mnemon::Result<()> {
    for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
        let entry = entry.map_err(|e| Error::io("read", src, e.into()))?;
        let Ok(rel) = entry.path().strip_prefix(src) else {
            continue;
        };
        let target = dst.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).map_err(|e| Error::io("create folder", &target, e))?;
        } else if entry.file_type().is_file() {
            std::fs::copy(entry.path(), &target).map_err(|e| Error::io("copy to", &target, e))?;
        }
    }
    Ok(())
}
