"""In-process recall latency of the Python package, against the engine's own time and MCP.

Usage (from the repository root, with the package and PyYAML installed in the interpreter):

    cargo build --release -p mnemon-cli     # for `mnemon gen` (10k corpus) and the MCP figure
    python python/bench.py [--passes 30] [--notes 10000] [--no-mcp] [--bin target/release/mnemon]

Corpora: loopal-58 (`../shared/eval/loopal-58` beside the repository: 73 notes, its 58 questions
from `ground_truth.yaml`) and a generated corpus (`mnemon gen --notes N --seed 7`, its questions
from `queries.yaml`). Each question is asked `--passes` times (10k: a fifth as many), one warm-up
pass first, at the library's defaults (depth 2, limit 10).

Per call, three figures (passes of the first two alternate):
- `python`: `Memory.recall(...)` as an agent calls it, wall time in Python (`perf_counter_ns`),
  recording its events (one QueryEvent + one RecallHit per hit, handed to the OS), as the
  library does by default;
- `python, record=False`: the same call leaving no events (what the Rust benches measure);
- `engine`: the engine's own time inside that call (`Recall.latency_us`, measured by the Rust
  library around the recall itself): the Rust in-process figure of the same run. The Python
  layer's cost is `python, record=False` minus `engine`, taken per call.
MCP: `crates/mnemon-cli/tests/mcp/raw_latency.py` (raw JSON-RPC over `mnemon serve`'s stdio,
loopal-58, 5 passes), run with this interpreter.
"""

import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

# The folder of this script holds the package's sources (mnemon/) without the built native
# module: import the installed package instead.
if sys.path and pathlib.Path(sys.path[0]).resolve() == pathlib.Path(__file__).resolve().parent:
    del sys.path[0]

import mnemon  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
LOOPAL = REPO.parent / "shared" / "eval" / "loopal-58"


def questions(truth: pathlib.Path):
    """(text or None, anchors) of every question of a ground-truth file."""
    out = []
    for q in yaml.safe_load(truth.read_text())["queries"]:
        out.append((q.get("query") or None, tuple(q.get("anchors") or ())))
    return out


def pct(values, p):
    """The p-th percentile (nearest rank) of `values`."""
    s = sorted(values)
    return s[min(len(s) - 1, int(len(s) * p / 100))]


def measure(memory: mnemon.Memory, qs, passes: int):
    """Per-call latencies in microseconds: python (recording), python record=False, engine, and
    the Python layer (record=False wall minus engine, per call)."""
    for text, anchors in qs:  # warm-up: graph loaded, caches filled
        memory.recall(text, anchors=anchors, record=False)
    rec, norec, engine, layer = [], [], [], []
    clock = time.perf_counter_ns
    # Passes alternate: one leaving no events, one recording (whose events change the folded
    # stats the next recall reads, as in an agent's process).
    for _ in range(passes):
        for text, anchors in qs:
            t = clock()
            r = memory.recall_report(text, anchors=anchors, record=False)
            wall = (clock() - t) / 1000
            norec.append(wall)
            engine.append(r.latency_us)
            layer.append(wall - r.latency_us)
        for text, anchors in qs:
            t = clock()
            memory.recall(text, anchors=anchors)
            rec.append((clock() - t) / 1000)
    return {"python": rec, "python, record=False": norec, "engine": engine, "layer": layer}


def report(label: str, lat) -> None:
    n = len(lat["python"])
    print(f"\n{label}: {n} calls per figure")
    print("| figure | p50_us | p99_us |")
    print("|---|---|---|")
    for name in ("python", "python, record=False", "engine"):
        print(f"| {name} | {pct(lat[name], 50):.1f} | {pct(lat[name], 99):.1f} |")
    print(f"| Python layer (record=False minus engine, per call) | {pct(lat['layer'], 50):.1f} | {pct(lat['layer'], 99):.1f} |")


def memory_of(notes: pathlib.Path, tmp: pathlib.Path) -> mnemon.Memory:
    """A new memory folder in `tmp` holding copies of the notes in `notes`, indexed."""
    root = tmp / ".mnemon"
    m = mnemon.Memory.init(root)
    for p in notes.glob("*.md"):
        shutil.copy(p, root / "memory" / p.name)
    m.index()
    return m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passes", type=int, default=30, help="passes over loopal-58's questions")
    ap.add_argument("--notes", type=int, default=10000, help="generated corpus size (0: skip)")
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "mnemon"))
    ap.add_argument("--no-mcp", action="store_true", help="skip the MCP figure")
    a = ap.parse_args()
    print(f"mnemon {mnemon.__version__}, Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        if LOOPAL.is_dir():
            m = memory_of(LOOPAL / "fixtures", tmp / "loopal")
            report("loopal-58", measure(m, questions(LOOPAL / "ground_truth.yaml"), a.passes))
            m.close()
        else:
            print(f"loopal-58 left out: {LOOPAL} not found")
        if a.notes:
            out = tmp / "gen"
            subprocess.run(
                [a.bin, "gen", "--notes", str(a.notes), "--seed", "7", "--out", str(out)],
                check=True,
                capture_output=True,
            )
            m = mnemon.Memory.init(out)
            t = time.perf_counter()
            r = m.index()
            print(f"\ngenerated {r.notes} notes, indexed in {time.perf_counter() - t:.2f} s")
            report(
                f"generated {a.notes}",
                measure(m, questions(out / "queries.yaml"), max(1, a.passes // 5)),
            )
            m.close()
    if not a.no_mcp:
        script = REPO / "crates" / "mnemon-cli" / "tests" / "mcp" / "raw_latency.py"
        done = subprocess.run(
            [sys.executable, str(script), a.bin], capture_output=True, text=True, check=True
        )
        found = re.search(r"p50 (\d+) us, p99 (\d+) us", done.stdout)
        print(f"\nMCP, {done.stdout.strip()}")
        if found:
            print(f"| MCP raw JSON-RPC (loopal-58) | {found[1]} | {found[2]} |")


if __name__ == "__main__":
    main()
