"""What Python writes, the CLI reads: the same event log, the same notes, the same answers."""

import json

import mnemon


def test_importance_written_from_python_is_read_by_the_cli(memory: mnemon.Memory, cli) -> None:
    memory.set_importance("pgbouncer", 7, tags=["ops"], note="paged twice")
    stats = json.loads(cli("stats", "pgbouncer", "--json", "--dir", str(memory.path)).stdout)
    assert stats["id"] == "pgbouncer"
    assert stats["importance"] == 7
    # The CLI's JSON is the report's to_dict().
    assert stats == memory.stats("pgbouncer").to_dict()


def test_what_the_cli_records_python_reads(memory: mnemon.Memory, cli) -> None:
    cli("importance", "deploy-canary", "4", "--dir", str(memory.path))
    cli("feedback", "--used", "deploy-canary", "--query", "canary", "--dir", str(memory.path))
    with mnemon.Memory.open(memory.path) as fresh:
        s = fresh.stats("deploy-canary")
        assert (s.importance, s.used_count) == (4, 1)


def test_python_events_are_the_cli_events(memory: mnemon.Memory, cli) -> None:
    with mnemon.Memory.open(memory.path, session="py-agent") as m:
        r = m.recall_report("connection pool time out")
        m.feedback([r.hits[0].id])
    dump = json.loads(cli("events", "dump", "--json", "--dir", str(memory.path)).stdout)
    mine = [e for e in dump["events"] if e["session"] == "py-agent"]
    kinds = [e["type"] for e in mine]
    assert kinds[0] == "query" and kinds.count("recall_hit") == len(r.hits)
    assert kinds[-1] == "feedback"
    query = mine[0]
    assert (query["qid"], query["query"], query["caller"]) == (
        r.qid,
        "connection pool time out",
        "python",
    )
    assert [e["node"] for e in mine if e["type"] == "recall_hit"] == [h.id for h in r.hits]
    cli("events", "verify", "--dir", str(memory.path))


def test_recall_answers_as_the_cli_does(memory: mnemon.Memory, cli) -> None:
    question = "why does the connection pool time out"
    ours = memory.recall_report(question, record=False).to_dict()
    theirs = json.loads(cli("recall", question, "--json", "--dir", str(memory.path)).stdout)
    assert [(h["id"], h["source"], h["trail"]) for h in theirs["results"]] == [
        (h["id"], h["source"], h["trail"]) for h in ours["results"]
    ]
    for a, b in zip(theirs["results"], ours["results"]):
        assert abs(a["score"] - b["score"]) < 1e-6
        assert {k: v for k, v in b.items() if k != "excerpt"} == a
