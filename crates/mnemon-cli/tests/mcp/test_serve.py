"""End-to-end test of `mnemon serve` with the official MCP Python SDK (a client mnemon did not write).

Covers initialize, tools/list, each tool, bad arguments (tool errors with isError), and that a
recall made through MCP shows up in `mnemon stats` from another process. Then measures per-call
recall latency over MCP on the loopal-58 corpus when it is present.

Usage: MNEMON_BIN=target/debug/mnemon python tests/mcp/test_serve.py
"""

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[4]
BIN = os.environ.get("MNEMON_BIN", str(ROOT / "target" / "debug" / "mnemon"))
LOOPAL = ROOT.parent / "shared" / "eval" / "loopal-58"


def make_memory(src: Path) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix="mnemon-mcp-"))
    mem = tmp / ".mnemon"
    subprocess.run([BIN, "init", "--dir", str(mem), "--json"], check=True, capture_output=True)
    for p in src.rglob("*.md"):
        dst = mem / "memory" / p.relative_to(src)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, dst)
    return mem


def text_of(result) -> str:
    return result.content[0].text


def is_error(result) -> bool:
    # mcp 1.x names it isError, 2.x is_error.
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def server_name(init) -> str:
    info = getattr(init, "server_info", None) or getattr(init, "serverInfo", None)
    return info.name


async def check_tools(mem: Path) -> None:
    params = StdioServerParameters(
        command=BIN, args=["serve", "--dir", str(mem), "--session", "mcp-e2e", "--no-watch"]
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            assert server_name(init) == "mnemon", init
            tools = sorted(t.name for t in (await s.list_tools()).tools)
            assert tools == [
                "memory_core",
                "memory_feedback",
                "memory_recall",
                "memory_set_importance",
                "memory_show",
                "memory_write",
            ], tools

            r = await s.call_tool("memory_recall", {"query": "connection pool timeout at month end", "limit": 5})
            assert not is_error(r), text_of(r)
            data = json.loads(text_of(r))
            ids = [h["id"] for h in data["results"]]
            assert ids[0] == "postgres-connection-pooling", ids
            first = data["results"][0]
            for key in ["id", "name", "description", "score", "source", "trail", "excerpt"]:
                assert key in first, (key, first)

            # Feedback on the last recall: the question is taken from it.
            r = await s.call_tool("memory_feedback", {"used": ["postgres-connection-pooling"]})
            assert not is_error(r), text_of(r)
            fb = json.loads(text_of(r))
            assert fb["query"] == "connection pool timeout at month end", fb
            assert fb["used"] == ["postgres-connection-pooling"] and fb["qid"] == data["qid"], fb
            for bad, expect in [
                ({"used": []}, "at least one note"),
                ({"used": ["nope"]}, "no note with id"),
                ({"used": ["deploy-canary"], "wrong": ["deploy-canary"]}, "both used and wrong"),
            ]:
                r = await s.call_tool("memory_feedback", bad)
                assert is_error(r) and expect in text_of(r), (bad, text_of(r))

            r = await s.call_tool("memory_recall", {"anchors": ["rate-limit-gcra"], "depth": 1})
            assert not is_error(r), text_of(r)
            hits = json.loads(text_of(r))["results"]
            assert any(h["trail"] and h["trail"][0]["from"] == "rate-limit-gcra" for h in hits), hits

            for bad, expect in [
                ({}, "query"),
                ({"query": "x", "depth": 9}, "depth 9 is out of range"),
                ({"anchors": ["no-such-note"]}, "no note with id"),
            ]:
                r = await s.call_tool("memory_recall", bad)
                assert is_error(r) and expect in text_of(r), (bad, text_of(r))

            r = await s.call_tool("memory_set_importance", {"node": "deploy-canary", "importance": 11})
            assert is_error(r) and "1 to 10" in text_of(r), text_of(r)
            r = await s.call_tool("memory_set_importance", {"node": "nope", "importance": 5})
            assert is_error(r) and "no note with id" in text_of(r), text_of(r)
            r = await s.call_tool(
                "memory_set_importance",
                {"node": "deploy-canary", "importance": 7, "tags": ["release"], "note": "every deploy goes through it"},
            )
            assert not is_error(r), text_of(r)
            assert json.loads(text_of(r))["importance"] == 7

            r = await s.call_tool("memory_core", {"budget_tokens": 400})
            assert not is_error(r), text_of(r)
            core = json.loads(text_of(r))
            assert core["tokens_used"] <= 400, core["tokens_used"]
            assert "deploy-canary" in core["included"] + core["left_out"], core
            r = await s.call_tool("memory_core", {"budget_tokens": 0})
            assert is_error(r), text_of(r)

            r = await s.call_tool("memory_show", {"node": "deploy-canary"})
            assert not is_error(r), text_of(r)
            shown = json.loads(text_of(r))
            assert shown["id"] == "deploy-canary" and shown["edges_out"], shown
            r = await s.call_tool("memory_show", {"node": "../etc/passwd"})
            assert is_error(r), text_of(r)

            # memory_write: a new note is recallable at once; an update needs memory_show's sha256.
            note = {"id": "decisions/e2e-write", "type": "project", "name": "E2E write",
                    "body": "The zebrafish cache is flushed every ninety seconds."}
            r = await s.call_tool("memory_write", note)
            assert not is_error(r), text_of(r)
            w = json.loads(text_of(r))
            assert w["written"] and w["created"] and w["path"] == "memory/decisions/e2e-write.md", w
            r = await s.call_tool("memory_recall", {"query": "zebrafish cache flush"})
            assert json.loads(text_of(r))["results"][0]["id"] == "decisions/e2e-write"
            r = await s.call_tool("memory_show", {"node": "decisions/e2e-write"})
            assert json.loads(text_of(r))["sha256"] == w["sha256"], text_of(r)
            r = await s.call_tool("memory_write", {**note, "body": "Flushed every two minutes now."})
            assert not is_error(r) and json.loads(text_of(r))["refused"] == "exists", text_of(r)
            r = await s.call_tool(
                "memory_write", {**note, "body": "Flushed every two minutes now.", "expected_sha256": w["sha256"]}
            )
            assert json.loads(text_of(r))["written"], text_of(r)
            r = await s.call_tool("memory_write", {"id": "../escape", "body": "x"})
            assert is_error(r) and "cannot leave memory/" in text_of(r), text_of(r)

    # Another process sees what this session recorded.
    out = subprocess.run(
        [BIN, "stats", "postgres-connection-pooling", "--json", "--dir", str(mem)],
        check=True,
        capture_output=True,
        text=True,
    )
    stats = json.loads(out.stdout)
    assert stats["recall_count"] >= 1, stats
    assert stats["used_count"] == 1, stats
    out = subprocess.run(
        [BIN, "stats", "deploy-canary", "--json", "--dir", str(mem)], check=True, capture_output=True, text=True
    )
    assert json.loads(out.stdout)["importance"] == 7
    print("mcp e2e: initialize, tools/list, 6 tools, 12 bad arguments, cross-process stats: ok")


async def measure_latency() -> None:
    if not (LOOPAL / "fixtures").is_dir():
        print("mcp latency: skipped (../shared/eval/loopal-58 not found)")
        return
    import yaml  # installed with the mcp SDK's dependencies? fall back below if not

    truth = yaml.safe_load((LOOPAL / "ground_truth.yaml").read_text())["queries"]
    mem = make_memory(LOOPAL / "fixtures")
    params = StdioServerParameters(command=BIN, args=["serve", "--dir", str(mem), "--no-watch"])
    times = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            for _ in range(3):
                for q in truth:
                    args = {"depth": 2, "limit": 10}
                    if q.get("query"):
                        args["query"] = q["query"]
                    if q.get("anchors"):
                        args["anchors"] = q["anchors"]
                    t = time.perf_counter()
                    r = await s.call_tool("memory_recall", args)
                    times.append((time.perf_counter() - t) * 1e6)
                    assert not is_error(r), text_of(r)
    times.sort()
    p50 = times[len(times) // 2]
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"mcp recall latency over stdio (python SDK client), {len(times)} calls: p50 {p50:.0f} us, p99 {p99:.0f} us, mean {statistics.mean(times):.0f} us")


async def main() -> None:
    await check_tools(make_memory(ROOT / "examples" / "demo-memory"))
    try:
        await measure_latency()
    except ImportError:
        print("mcp latency: skipped (PyYAML not installed)")


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
