#!/usr/bin/env python3
"""Interleaved A/B of cold builds: which `mnemon` binary indexes a corpus faster?

The machine's speed drifts by 1.4-2x within minutes, so two binaries are only compared run
against run: each round removes DIR/index, reads every note once (so none is read from the
disk), and runs every binary's `mnemon --dir DIR index --json` once, in turn, under `perf stat`
(for the CPU time; without `perf` only the command's own elapsed_ms is reported). Prints, per
binary, the median and the minimum of the command's `elapsed_ms` and of its CPU time.

    cargo build --release && cp target/release/mnemon /tmp/mnemon-new
    python3 benches/ab_build.py --rounds 12 /tmp/gen1000 /tmp/mnemon-old /tmp/mnemon-new

DIR is a memory folder holding `memory/` (e.g. one made by `mnemon gen --notes 1000 --seed 7
--out /tmp/gen1000`); its `index/` is deleted before every run.
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path


def warm(folder: Path) -> None:
    """Read every note once, so the build reads them from the page cache: this machine's kernel
    reclaims cached pages it has not seen used for a while (a 1k corpus read from the disk
    again within a minute), and a build that waits on the disk measures the disk."""
    for f in (folder / "memory").rglob("*"):
        if f.is_file():
            f.read_bytes()


def one_build(binary: str, folder: Path, use_perf: bool) -> tuple[float, float | None]:
    """Elapsed ms reported by the command, and its CPU ms (None without perf)."""
    shutil.rmtree(folder / "index", ignore_errors=True)
    warm(folder)
    cmd = [binary, "--dir", str(folder), "index", "--json"]
    if use_perf:
        cmd = ["perf", "stat", "-x,", "-e", "task-clock"] + cmd
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{binary} failed (exit {run.returncode}): {run.stderr.strip()}")
    elapsed = float(json.loads(run.stdout)["elapsed_ms"])
    cpu = None
    for line in run.stderr.splitlines():
        if "task-clock" in line:
            cpu = float(line.split(",")[0])
    return elapsed, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10, help="rounds of one build per binary")
    ap.add_argument("folder", type=Path, help="memory folder holding memory/")
    ap.add_argument("binaries", nargs="+", help="mnemon binaries to compare")
    args = ap.parse_args()
    if not (args.folder / "memory").is_dir():
        sys.exit(f"{args.folder} has no memory/ folder: make one with `mnemon gen --out DIR`")
    use_perf = shutil.which("perf") is not None
    elapsed = {b: [] for b in args.binaries}
    cpu = {b: [] for b in args.binaries}
    for _ in range(args.rounds):
        for b in args.binaries:
            e, c = one_build(b, args.folder, use_perf)
            elapsed[b].append(e)
            if c is not None:
                cpu[b].append(c)
    for b in args.binaries:
        line = f"{b}: elapsed_ms median {statistics.median(elapsed[b]):.1f} min {min(elapsed[b]):.1f}"
        if cpu[b]:
            line += f"; cpu_ms median {statistics.median(cpu[b]):.1f} min {min(cpu[b]):.1f}"
        print(line)


if __name__ == "__main__":
    main()
