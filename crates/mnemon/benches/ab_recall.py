#!/usr/bin/env python3
"""Interleaved A/B of recall latency: which build's `examples/scale` answers faster?

The machine's speed drifts within minutes, so two builds are only compared run against run:
each round runs every binary once, in turn, over the same questions (`scale N DIR PASSES`, each
question's fastest of its passes), and the rounds' p50 and p99 per kind of question are put
side by side with the ratio of each binary to the first. Every binary gets its own copy of the
corpus folder, kept across rounds (recall records events, so the copies must not be shared).

    cargo build --release --example scale && cp target/release/examples/scale /tmp/scale-new
    python3 crates/mnemon/benches/ab_recall.py --rounds 5 100000 /tmp/gen100k \\
        /tmp/scale-old /tmp/scale-new

DIR is a folder `examples/scale` generated (it holds `queries.yaml`); it is copied, never
changed. `scale` opens and re-scans its folder before it times anything, so a build's first run
brings its copy's index to that build (a build of another index format rebuilds it there),
outside the figures.
"""

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

LINE = re.compile(r"^(\w+) \(each query's fastest of \d+ passes\): p50 (\d+) us, p99 (\d+) us")


def one_run(binary: str, notes: int, folder: Path, passes: int) -> dict[str, tuple[int, int]]:
    """p50 and p99 (us) per kind of question of one run of `binary` over `folder`."""
    run = subprocess.run(
        [binary, str(notes), str(folder), str(passes)], capture_output=True, text=True
    )
    if run.returncode != 0:
        sys.exit(f"{binary} failed (exit {run.returncode}): {run.stderr.strip()[-2000:]}")
    out = {}
    for line in run.stderr.splitlines():
        m = LINE.match(line)
        if m:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    if not out:
        sys.exit(f"{binary} printed no latency line: is it `examples/scale`?")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="runs per binary")
    ap.add_argument("--passes", type=int, default=10, help="passes over the questions per run")
    ap.add_argument("notes", type=int, help="the corpus's size, as given to `scale`")
    ap.add_argument("folder", type=Path, help="a folder `scale` generated (holds queries.yaml)")
    ap.add_argument("binaries", nargs="+", help="`examples/scale` binaries; ratios are to the first")
    args = ap.parse_args()
    if not (args.folder / "queries.yaml").is_file():
        sys.exit(f"{args.folder} holds no queries.yaml: run `scale N {args.folder}` once first")
    work = Path(tempfile.mkdtemp(prefix="ab-recall-"))
    try:
        copies = {}
        for i, b in enumerate(args.binaries):
            copies[b] = work / f"b{i}"
            shutil.copytree(args.folder, copies[b], symlinks=True)
        runs: dict[str, list[dict[str, tuple[int, int]]]] = {b: [] for b in args.binaries}
        for r in range(args.rounds):
            for b in args.binaries:
                got = one_run(b, args.notes, copies[b], args.passes)
                runs[b].append(got)
                shown = ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in got.items())
                print(f"round {r + 1} {b}: p50/p99 us {shown}", flush=True)
        first = args.binaries[0]
        kinds = list(runs[first][0])
        print()
        for kind in kinds:
            base50 = statistics.median(run[kind][0] for run in runs[first])
            base99 = statistics.median(run[kind][1] for run in runs[first])
            for b in args.binaries:
                p50 = [run[kind][0] for run in runs[b] if kind in run]
                p99 = [run[kind][1] for run in runs[b] if kind in run]
                m50, m99 = statistics.median(p50), statistics.median(p99)
                print(
                    f"{kind:7s} {b}: p50 median {m50:.0f} us ({min(p50)}-{max(p50)}), "
                    f"{m50 / base50:.3f}x; p99 median {m99:.0f} us, {m99 / base99:.3f}x"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
