//! `mnemon demo`: index the bundled demo memory into a temporary folder and show what mnemon sees.

use super::output::Out;
use mnemon::{Error, Memory};
use std::path::{Path, PathBuf};

/// The demo notes shipped with the sources.
const DEMO_NOTES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo-memory");

pub fn run(notes: Option<&Path>, out: &Out) -> mnemon::Result<i32> {
    let src = notes
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(DEMO_NOTES));
    if !src.is_dir() {
        return Err(Error::InvalidArgument {
            what: "demo notes folder",
            message: format!(
                "{} does not exist: run the demo from a source checkout, or pass --notes DIR",
                src.display()
            ),
        });
    }
    let tmp = tempfile::tempdir().map_err(|e| Error::io("create temp folder", "", e))?;
    let root = tmp.path().join(".mnemon");
    let memory = Memory::init(&root)?;
    copy_tree(&src, &memory.dir().memory())?;
    let report = memory.index()?;
    if out.json {
        out.json(&serde_json::json!({ "dir": root.display().to_string(), "index": report }));
        return Ok(super::EXIT_OK);
    }
    println!(
        "{}",
        out.bold(&format!("mnemon demo: {} (temporary)", root.display()))
    );
    out.index(&report);
    let hubs = {
        let mut degree = std::collections::HashMap::<String, usize>::new();
        for e in memory.edges()? {
            *degree.entry(e.to).or_default() += 1;
        }
        let mut v: Vec<_> = degree.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.into_iter().take(2).map(|(id, _)| id).collect::<Vec<_>>()
    };
    for id in hubs {
        println!();
        out.show(&memory.show(&id)?);
    }
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
