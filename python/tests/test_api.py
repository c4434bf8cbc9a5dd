"""The API mirrors the library's facade: open/init, index, recall, feedback, importance, stats,
core, show, doctor, and the reports they return."""

import json
import pathlib
import pickle

import pytest

import mnemon
from conftest import NOTES, write_note

SOURCES = {"direct", "neighbor", "co_occur"}
KINDS = {
    "references",
    "part_of",
    "derived_from",
    "supersedes",
    "contradicts",
    "co_occurs_slug",
    "co_occurs_token",
}
PROVENANCES = {"frontmatter", "inline-link", "synthesized"}


def test_index_reports_what_changed_and_then_nothing(folder: pathlib.Path) -> None:
    with mnemon.Memory.open(folder) as m:
        first = m.index()
        assert isinstance(first, mnemon.IndexReport)
        assert first.notes == len(NOTES)
        assert sorted(first.changed) == sorted(NOTES)
        assert first.removed == [] and first.errors == []
        assert first.edges >= 2 and first.elapsed_ms >= 0
        again = m.index()
        assert again.changed == [] and again.removed == [] and again.notes == len(NOTES)

        write_note(folder, "pgbouncer", NOTES["pgbouncer"] + "\nreserve_pool_timeout is 5 s.\n")
        (folder / "memory" / "deploy-canary.md").unlink()
        third = m.index()
        assert third.changed == ["pgbouncer"]
        assert third.removed == ["deploy-canary"]
        assert third.notes == len(NOTES) - 1
        assert set(third.to_dict()) == {"notes", "edges", "changed", "removed", "errors", "elapsed_ms"}


def test_a_note_with_a_problem_is_reported_with_its_fix(folder: pathlib.Path) -> None:
    (folder / "memory" / "broken.md").write_text("---\nname: [unclosed\n---\nbody\n")
    with mnemon.Memory.open(folder) as m:
        errors = m.index().errors
        assert [e["path"] for e in errors] == ["broken.md"]
        assert errors[0]["message"]


def test_recall_returns_hits_best_first(memory: mnemon.Memory) -> None:
    hits = memory.recall("why does the connection pool time out")
    assert isinstance(hits, list) and hits
    top = hits[0]
    assert isinstance(top, mnemon.Hit)
    assert top.id == "pool-sizing"
    assert top.source == "direct"
    assert top.trail == []
    assert top.name == "Pool sizing"
    assert top.description == "Why the connection pool times out under load"
    assert top.type == "project"
    assert top.excerpt.startswith("The connection pool times out")
    assert top.explain is None
    assert isinstance(top.score, float)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(h.source in SOURCES for h in hits)
    assert repr(top).startswith("Hit(id='pool-sizing', score=")


def test_a_neighbor_comes_with_its_trail(memory: mnemon.Memory) -> None:
    hits = memory.recall(anchors=["pool-sizing"], depth=1)
    by_id = {h.id: h for h in hits}
    assert by_id["pool-sizing"].source == "direct"
    neighbor = by_id["pgbouncer"]
    assert neighbor.source == "neighbor"
    assert len(neighbor.trail) == 1
    edge = neighbor.trail[0]
    assert set(edge) == {"from", "to", "kind", "provenance"}
    assert (edge["from"], edge["to"]) == ("pool-sizing", "pgbouncer")
    assert edge["kind"] in KINDS and edge["provenance"] in PROVENANCES
    # depth 0: the anchors alone.
    assert [h.id for h in memory.recall(anchors=["pool-sizing"], depth=0)] == ["pool-sizing"]


def test_limit_min_score_and_the_library_defaults(memory: mnemon.Memory) -> None:
    question = "connection pool pgbouncer deploy canary"
    assert len(memory.recall(question, limit=1)) == 1
    default = [(h.id, h.score) for h in memory.recall(question, record=False)]
    explicit = memory.recall(
        question,
        depth=mnemon.DEFAULT_DEPTH,
        limit=mnemon.DEFAULT_LIMIT,
        min_score=mnemon.DEFAULT_MIN_SCORE,
        record=False,
    )
    assert default == [(h.id, h.score) for h in explicit]
    assert memory.recall(question, min_score=1e9) == []
    # The library's constants, as documented in mnemon::args.
    assert (mnemon.MIN_DEPTH, mnemon.DEFAULT_DEPTH, mnemon.MAX_DEPTH) == (0, 2, 5)
    assert (mnemon.MIN_LIMIT, mnemon.DEFAULT_LIMIT, mnemon.MAX_LIMIT) == (1, 10, 200)
    assert (mnemon.MIN_IMPORTANCE, mnemon.MAX_IMPORTANCE) == (1, 10)
    assert mnemon.DEFAULT_BUDGET_TOKENS == 2000 and mnemon.DEFAULT_MIN_SCORE == 0.05
    assert memory.core().budget_tokens == mnemon.DEFAULT_BUDGET_TOKENS


def test_explain_takes_the_score_apart(memory: mnemon.Memory) -> None:
    top = memory.recall("connection pool time out", explain=True)[0]
    x = top.explain
    assert isinstance(x, dict)
    assert {"lexical", "coverage", "base", "usage", "importance", "matched_terms", "support", "placed"} <= set(x)
    assert x["placed"] is False
    assert "pool" in x["matched_terms"]
    d = top.to_dict()
    assert list(d) == [
        "id", "name", "description", "type", "score", "source", "trail", "excerpt", "explain",
    ]
    json.dumps(d)


def test_recall_report_has_the_qid_latency_and_floor(memory: mnemon.Memory) -> None:
    r = memory.recall_report("connection pool time out", explain=True)
    assert isinstance(r, mnemon.Recall)
    assert r.qid and r.latency_us >= 0
    assert len(r) == len(r.hits) and [h.id for h in r] == [h.id for h in r.hits]
    assert {"terms", "rejected", "weak", "alone", "reached_floor", "reached_share", "old_first"} == set(
        r.floor
    )
    assert r.floor["alone"] is False
    assert r.floor["reached_floor"] > 0
    assert [set(t) for t in r.floor["terms"]] == [{"term", "idf", "in_memory", "name", "form_of"}] * len(
        r.floor["terms"]
    )
    assert 0.25 <= r.floor["reached_share"] <= 0.4
    d = r.to_dict()
    assert list(d) == ["qid", "results", "latency_us", "floor"]
    assert d["results"][0]["id"] == r.hits[0].id
    json.dumps(d)
    assert r.question_read_bytes is None


def test_a_question_over_the_limit_says_how_much_was_read(memory: mnemon.Memory) -> None:
    # The CLI says so on stderr and the MCP tool in its JSON; Python said nothing.
    r = memory.recall_report("pool " * 2000)
    assert r.question_read_bytes is not None
    assert 0 < r.question_read_bytes <= mnemon.MAX_QUERY_BYTES
    assert r.to_dict()["question_read_bytes"] == r.question_read_bytes


def test_feedback_about_the_last_recall(memory: mnemon.Memory) -> None:
    r = memory.recall_report("connection pool time out")
    report = memory.feedback(["pool-sizing", "pool-sizing"], wrong=["deploy-canary"])
    assert isinstance(report, mnemon.FeedbackReport)
    assert report.qid == r.qid
    assert report.query == "connection pool time out"
    assert report.used == ["pool-sizing"] and report.wrong == ["deploy-canary"]
    assert memory.stats("pool-sizing").used_count == 1
    assert memory.stats("deploy-canary").wrong_count == 1
    # A question that is not the last recall's: recorded with it, without a qid.
    other = memory.feedback(["pgbouncer"], query="pgbouncer pool size")
    assert other.qid == "" and other.query == "pgbouncer pool size"
    assert set(other.to_dict()) == {"qid", "query", "used", "wrong"}


def test_importance_and_stats(memory: mnemon.Memory) -> None:
    before = memory.stats("pgbouncer")
    assert isinstance(before, mnemon.NodeStatsView)
    assert before.importance is None and before.recall_count == 0
    memory.set_importance("pgbouncer", 7, tags=["ops"], note="paged twice")
    memory.recall("pgbouncer transaction mode")
    after = memory.stats("pgbouncer")
    assert after.id == "pgbouncer"
    assert after.importance == 7 and after.importance_tagged_ms
    assert after.recall_count == 1 and after.last_recalled_ms
    d = after.to_dict()
    # The JSON keys of `mnemon stats --json`.
    assert d["importance"] == 7 and "importance_ts" in d and "last_recalled_at" in d


def test_core_view_holds_pinned_then_important_notes(memory: mnemon.Memory) -> None:
    memory.set_importance("pgbouncer", 9)
    view = memory.core(500)
    assert isinstance(view, mnemon.CoreView)
    assert view.included == ["user-prefs", "pgbouncer"]
    assert view.budget_tokens == 500 and 0 < view.tokens_used <= 500
    assert "User preferences" in view.text and str(view) == view.text
    tight = memory.core(1)
    assert tight.included == [] and tight.left_out == ["user-prefs", "pgbouncer"]
    assert set(view.to_dict()) == {
        "text",
        "tokens_used",
        "budget_tokens",
        "included",
        "left_out",
        "superseded",
    }
    assert view.superseded == []


def test_show_a_note_with_its_edges(memory: mnemon.Memory) -> None:
    v = memory.show("pool-sizing")
    assert isinstance(v, mnemon.NodeView)
    assert (v.id, v.path, v.name, v.type) == ("pool-sizing", "pool-sizing.md", "Pool sizing", "project")
    assert v.pin is False and v.tags == []
    assert {e["to"] for e in v.edges_out} == {"pgbouncer"}
    assert all(e["dangling"] is False for e in v.edges_out)
    into = memory.show("pgbouncer").edges_in
    assert {e["from"] for e in into} >= {"pool-sizing"}
    assert memory.show("user-prefs").pin is True
    assert v.to_dict()["type"] == "project"


def test_doctor_finds_the_dangling_link(memory: mnemon.Memory) -> None:
    report = memory.doctor()
    assert isinstance(report, mnemon.DoctorReport)
    assert report.healthy is False
    assert report.dangling == [
        {"from": "dangling", "to": "no-such-note", "kind": "references", "provenance": "inline-link"}
    ]
    assert report.note_errors == [] and report.conflicts == [] and report.walk_errors == []
    assert report.index["ok"] is True
    assert report.notes == len(NOTES)
    json.dumps(report.to_dict())


@pytest.mark.parametrize("explain", [False, True])
def test_hits_and_recalls_pickle_and_compare_equal(memory: mnemon.Memory, explain: bool) -> None:
    # A Hit or a Recall could not be pickled (to hand recalls to a multiprocessing worker).
    report = memory.recall_report("connection pool time out", explain=explain)
    hits = report.hits
    assert any(h.trail for h in hits), hits  # a neighbour, with its trail
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(hits, protocol=protocol))
        assert back == hits and all(type(h) is mnemon.Hit for h in back)
        assert [h.to_dict() for h in back] == [h.to_dict() for h in hits]
        assert [(h.trail, h.explain, h.type) for h in back] == [
            (h.trail, h.explain, h.type) for h in hits
        ]
        again = pickle.loads(pickle.dumps(report, protocol=protocol))
        assert type(again) is mnemon.Recall and again == report
        assert again.to_dict() == report.to_dict()
        assert (again.floor, again.question_read_bytes) == (report.floor, report.question_read_bytes)
    assert hash(back[0]) == hash(hits[0])
    other = memory.recall_report("connection pool time out", explain=explain)
    assert other != report  # another qid
    assert hits[0] != hits[1] and hits[0] != hits[0].to_dict()


def test_every_key_of_the_doctor_report_is_an_attribute(folder: pathlib.Path) -> None:
    # supersede_cycles, contradictions and near_duplicates_omitted were in to_dict() only.
    write_note(folder, "old-plan", "---\nname: Old plan\nsupersedes:\n  - new-plan\n---\nPlan A.\n")
    write_note(folder, "new-plan", "---\nname: New plan\nsupersedes:\n  - old-plan\n---\nPlan B.\n")
    write_note(
        folder, "retry-always", "---\nname: Retry\ncontradicts:\n  - pool-sizing\n---\nRetry.\n"
    )
    with mnemon.Memory.open(folder) as m:
        report = m.doctor()
    as_dict = report.to_dict()
    for key, value in as_dict.items():
        assert hasattr(report, key), key
        assert getattr(report, key) == value, key
    assert report.supersede_cycles == [["new-plan", "old-plan"]]
    assert report.contradictions == [{"a": "pool-sizing", "b": "retry-always"}]
    assert report.near_duplicates_omitted == 0


def test_doctor_lists_near_duplicate_notes(folder: pathlib.Path) -> None:
    body = (
        "The nightly backup copies the ledger database to cold storage at two in the morning. "
        "A failed copy pages the on-call engineer, who reruns it by hand before the business day. "
        "Backups older than ninety days are deleted by the retention job."
    )
    with mnemon.Memory.open(folder) as m:
        m.index()
        m.write_note("backup-nightly", body)
        copy = body.replace("who reruns it by hand", "who starts it again manually")
        refused = m.write_note("backup-copy", copy)
        assert refused["written"] is False and refused["refused"] == "near_duplicate"
        assert [d["id"] for d in refused["near_duplicates"]] == ["backup-nightly"]
        assert m.write_note("backup-copy", copy, on_duplicate="create")["written"] is True
        pairs = m.doctor().near_duplicates
        assert [(d["a"], d["b"]) for d in pairs] == [("backup-copy", "backup-nightly")]
        assert 0.5 < pairs[0]["similarity"] <= 1.0


def test_recall_indexes_a_never_indexed_memory_by_itself(folder: pathlib.Path) -> None:
    with mnemon.Memory.open(folder) as m:
        assert m.recall("connection pool")[0].id == "pool-sizing"


def test_help_shows_the_library_defaults() -> None:
    import inspect

    recall = inspect.signature(mnemon.Memory.recall).parameters
    assert recall["depth"].default == mnemon.DEFAULT_DEPTH
    assert recall["limit"].default == mnemon.DEFAULT_LIMIT
    assert recall["anchors"].default == () and recall["min_score"].default is None
    assert inspect.signature(mnemon.Memory.recall_report).parameters == recall
    core = inspect.signature(mnemon.Memory.core).parameters
    assert core["budget_tokens"].default == mnemon.DEFAULT_BUDGET_TOKENS


def test_hits_say_which_notes_replace_or_contradict_them(tmp_path: pathlib.Path) -> None:
    root = tmp_path / ".mnemon"
    with mnemon.Memory.init(root) as m:
        write_note(root, "limits-v1", "---\nname: Limits v1\n---\nRequest quota: ten per minute.\n")
        write_note(
            root,
            "limits-v2",
            "---\nname: Limits v2\nsupersedes: [limits-v1]\ncontradicts: [limits-staff]\n---\n"
            "Request quota: fifty per minute.\n",
        )
        write_note(root, "limits-staff", "---\nname: Staff\n---\nRequest quota: unlimited for staff.\n")
        m.index()
        hits = {h.id: h for h in m.recall("request quota per minute")}
        ranked = [h.id for h in m.recall("request quota per minute")]
        assert ranked.index("limits-v2") < ranked.index("limits-v1")
        assert hits["limits-v1"].superseded_by == ["limits-v2"]
        assert hits["limits-v2"].superseded_by == []
        assert hits["limits-v2"].contradicts == ["limits-staff"]
        assert hits["limits-staff"].contradicts == ["limits-v2"]
        assert hits["limits-v1"].to_dict()["superseded_by"] == ["limits-v2"]


def test_write_note_creates_then_replaces_only_with_the_sha256_show_gives(memory: mnemon.Memory) -> None:
    out = memory.write_note(
        "runbooks/failover",
        "Promote the replica with pg_ctl promote, then repoint pgbouncer.",
        name="Failover",
        type="project",
        tags=["postgres"],
        related=["pgbouncer"],
    )
    assert set(out) == {
        "id", "path", "written", "created", "sha256", "refused", "message",
        "near_duplicates", "likely_predecessors",
    }
    assert out["written"] is True and out["created"] is True and out["refused"] is None
    assert out["path"] == "memory/runbooks/failover.md"
    assert [h.id for h in memory.recall("promote the replica")][0] == "runbooks/failover"
    shown = memory.show("runbooks/failover")
    assert shown.sha256 == out["sha256"] and shown.to_dict()["sha256"] == out["sha256"]
    assert shown.name == "Failover" and shown.tags == ["postgres"]

    again = memory.write_note("runbooks/failover", "Promote with pg_ctl promote; wait for lag 0.")
    assert again["written"] is False and again["refused"] == "exists"
    assert again["sha256"] == out["sha256"]
    stale = memory.write_note("runbooks/failover", "x", expected_sha256="0" * 64)
    assert stale["refused"] == "stale"
    done = memory.write_note(
        "runbooks/failover", "Promote with pg_ctl promote; wait for lag 0.", expected_sha256=shown.sha256
    )
    assert done["written"] is True and done["created"] is False
    assert memory.show("runbooks/failover").sha256 == done["sha256"] != out["sha256"]

    for bad_id in ["../escape", "/abs", "", ".hidden"]:
        with pytest.raises(mnemon.InvalidArgument) as e:
            memory.write_note(bad_id, "body")
        assert e.value.what == "note"
    with pytest.raises(mnemon.InvalidArgument, match="use project, feedback"):
        memory.write_note("x", "body", type="novel")
    with pytest.raises(mnemon.InvalidArgument, match="the body is empty"):
        memory.write_note("x", "   ")
