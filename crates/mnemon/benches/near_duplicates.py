#!/usr/bin/env python3
"""How well does `mnemon doctor` find near-duplicate notes, and how often does it name a pair
that is not one?

Copies a memory folder's notes, adds N copy-edited notes (each a copy of a randomly picked note
with sentences dropped and words in other sentences replaced and swapped, its links turned into
plain words and its frontmatter lists removed, so nothing links it to its original), indexes the
copy, runs `doctor --json`, and reports: how many of the copies were paired with their original
(found), and how many pairs it listed that are not (copy, original) (false pairs), out of all the
pairs of notes. A folder with no edits (`--edits 0`) measures the false pairs of the notes alone.

    cargo build --release
    python3 crates/mnemon/benches/near_duplicates.py ../shared/eval/loopal-58/fixtures --edits 40
    target/release/mnemon gen --notes 3000 --out /tmp/gen3k
    python3 crates/mnemon/benches/near_duplicates.py /tmp/gen3k/memory --edits 200

Levels (share of sentences dropped / reworded, share of a reworded sentence's words replaced):
light 0.15 / 0.25 / 0.15, medium 0.25 / 0.30 / 0.20, heavy 0.35 / 0.35 / 0.30 (at most half the
sentences of a note are dropped).
"""

import argparse
import json
import random
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

LEVELS = {"light": (0.15, 0.25, 0.15), "medium": (0.25, 0.30, 0.20), "heavy": (0.35, 0.35, 0.30)}
FILLER = ["quickly", "carefully", "system", "value", "setting", "change", "service", "team",
          "config", "issue", "later", "instead"]
RELATIONS = r"(?m)^(related|supersedes|part_of|derived_from|contradicts):.*\n(  - .*\n)*"


def edit(text: str, rng: random.Random, level: str) -> str:
    drop, reword, frac = LEVELS[level]
    m = re.match(r"^(---\n.*?\n---\n)(.*)$", text, flags=re.S)
    front, body = (m.group(1), m.group(2)) if m else ("", text)
    front = re.sub(RELATIONS, "", front)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n\n", body) if s.strip()]
    out, dropped = [], 0
    for s in sentences:
        x = rng.random()
        if x < drop and dropped < len(sentences) // 2:
            dropped += 1
            continue
        if x < drop + reword:
            words = s.split()
            for i in range(len(words)):
                if rng.random() < frac:
                    words[i] = rng.choice(FILLER)
            if len(words) > 4 and rng.random() < 0.5:
                j = rng.randrange(len(words) - 1)
                words[j], words[j + 1] = words[j + 1], words[j]
            s = " ".join(words)
        out.append(s)
    body = " ".join(out)
    body = re.sub(r"\[\[([^\]|#]+)(#[^\]|]*)?(\|([^\]]*))?\]\]",
                  lambda l: l.group(4) or l.group(1).split("/")[-1].replace("-", " "), body)
    return front + body


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notes", type=Path, help="a folder of notes (a memory's memory/)")
    ap.add_argument("--edits", type=int, default=40, help="copy-edited notes to add")
    ap.add_argument("--level", choices=sorted(LEVELS), default="medium")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--bin", default="target/release/mnemon")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        memory = root / "memory"
        shutil.copytree(a.notes, memory)
        files = sorted(p for p in memory.rglob("*.md") if p.name != "MEMORY.md")
        truth = set()
        for i, f in enumerate(rng.sample(files, min(a.edits, len(files)))):
            original = f.relative_to(memory).with_suffix("").as_posix()
            copy = f"edit-{i}"
            (memory / f"{copy}.md").write_text(edit(f.read_text(), rng, a.level))
            truth.add(tuple(sorted((original, copy))))
        subprocess.run([a.bin, "--dir", str(root), "index"], check=True, capture_output=True)
        out = subprocess.run([a.bin, "--dir", str(root), "--json", "doctor"],
                             capture_output=True, text=True)
        report = json.loads(out.stdout)
    listed = {(d["a"], d["b"]): d["similarity"] for d in report["near_duplicates"]}
    found = [listed[p] for p in truth if p in listed]
    false = {p: s for p, s in listed.items() if p not in truth}
    n = report["notes"]
    print(f"{n} notes ({n * (n - 1) // 2} pairs), {len(truth)} copy-edited ({a.level}): "
          f"found {len(found)}/{len(truth)}, false pairs {len(false)}"
          + (f", omitted {report['near_duplicates_omitted']}" if report["near_duplicates_omitted"] else ""))
    if found:
        found.sort()
        print(f"similarity of the found: min {found[0]:.2f}, median {found[len(found) // 2]:.2f}")
    for (x, y), s in sorted(false.items())[:10]:
        print(f"  false pair: {x} {y} {s:.2f}")


if __name__ == "__main__":
    main()
