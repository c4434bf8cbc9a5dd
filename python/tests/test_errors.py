"""Errors: arguments out of range raise ValueError (mnemon.InvalidArgument) with the CLI's
message, unknown notes raise KeyError (mnemon.NotFound), the rest mnemon.Error."""

import pathlib
import pickle
import re
import shutil

import pytest

import mnemon


@pytest.mark.parametrize(
    "kwargs, what, message",
    [
        ({"depth": 6}, "depth", "depth 6 is out of range: use an integer from 0 to 5"),
        ({"depth": -1}, "depth", "depth -1 is out of range: use an integer from 0 to 5"),
        (
            {"depth": 10**30},
            "depth",
            f"depth {10**30} is out of range: use an integer from 0 to 5",
        ),
        ({"limit": 0}, "limit", "limit 0 is out of range: use an integer from 1 to 200"),
        ({"limit": 201}, "limit", "limit 201 is out of range: use an integer from 1 to 200"),
        (
            {"min_score": float("nan")},
            "min_score",
            "min_score NaN is out of range: use a number from -3.4e38 to 3.4e38",
        ),
        (
            {"min_score": float("inf")},
            "min_score",
            "min_score inf is out of range: use a number from -3.4e38 to 3.4e38",
        ),
    ],
)
def test_recall_arguments_out_of_range(memory, kwargs, what, message) -> None:
    with pytest.raises(ValueError) as caught:
        memory.recall("connection pool", **kwargs)
    e = caught.value
    assert isinstance(e, mnemon.InvalidArgument) and isinstance(e, mnemon.Error)
    assert str(e) == message
    assert e.what == what


def test_the_messages_are_the_clis(memory, cli) -> None:
    for args, call in [
        (["recall", "x", "--depth", "9"], lambda: memory.recall("x", depth=9)),
        (["recall", "x", "--limit", "0"], lambda: memory.recall("x", limit=0)),
        (["importance", "pgbouncer", "11"], lambda: memory.set_importance("pgbouncer", 11)),
        (["core", "--budget", "0"], lambda: memory.core(0)),
    ]:
        done = cli(*args, "--dir", str(memory.path), check=False)
        assert done.returncode == 2, done.stderr
        with pytest.raises(mnemon.Error) as caught:
            call()
        assert done.stderr.strip() == f"mnemon: error: {caught.value}"


def test_too_many_anchors_and_feedback_ids(memory) -> None:
    with pytest.raises(ValueError, match="at most 64 anchors"):
        memory.recall(anchors=[f"n{i}" for i in range(mnemon.MAX_ANCHORS + 1)])
    ids = [f"n{i}" for i in range(mnemon.MAX_FEEDBACK_IDS + 1)]
    with pytest.raises(ValueError, match="at most 64 ids"):
        memory.feedback(ids)


def test_invalid_arguments(memory) -> None:
    with pytest.raises(ValueError, match="give query text, at least one anchor id, or both") as c:
        memory.recall()
    assert c.value.what == "query"
    with pytest.raises(ValueError):
        memory.recall("   ")
    with pytest.raises(ValueError, match="name at least one note") as c:
        memory.feedback([])
    assert c.value.what == "feedback"
    with pytest.raises(ValueError, match="both used and wrong"):
        memory.feedback(["pgbouncer"], wrong=["pgbouncer"])
    with pytest.raises(ValueError) as c:
        memory.stats("../outside")
    assert c.value.what == "id"
    for importance in (0, 11, 2**70):
        with pytest.raises(ValueError, match="use an integer from 1 to 10"):
            memory.set_importance("pgbouncer", importance)
    with pytest.raises(ValueError, match="budget_tokens 0 is out of range"):
        memory.core(0)
    with pytest.raises(ValueError, match="budget_tokens 200001 is out of range"):
        memory.core(mnemon.MAX_BUDGET_TOKENS + 1)


@pytest.mark.parametrize("blank", ["", "   "])
@pytest.mark.parametrize(
    "what, call",
    [
        ("anchors", lambda m, b: m.recall(anchors=[b])),
        ("anchors", lambda m, b: m.recall_report("pool", anchors=["pool-sizing", b])),
        ("used", lambda m, b: m.feedback([b])),
        ("wrong", lambda m, b: m.feedback(["pool-sizing"], wrong=[b])),
        ("id", lambda m, b: m.set_importance(b, 5)),
        ("id", lambda m, b: m.stats(b)),
        ("id", lambda m, b: m.show(b)),
        ("related", lambda m, b: m.write_note("x", "A body.", related=[b])),
        ("supersedes", lambda m, b: m.write_note("x", "A body.", supersedes=[b])),
        ("contradicts", lambda m, b: m.write_note("x", "A body.", contradicts=[b])),
    ],
)
def test_an_empty_or_blank_id_is_an_invalid_argument(memory, what, call, blank) -> None:
    """Regression: ``recall(anchors=[""])`` raised NotFound (no note has the id ``""``), and
    ``write_note(..., related=[""])`` wrote the empty link, where other calls refused the id."""
    with pytest.raises(mnemon.InvalidArgument) as c:
        call(memory, blank)
    assert c.value.what == what
    assert str(c.value).startswith(f"invalid {what}: "), str(c.value)
    assert "names no note: give a note's id" in str(c.value)
    assert not (memory.path / "memory" / "x.md").exists()


@pytest.mark.parametrize("blank", ["", "   "])
def test_write_note_refuses_an_empty_or_blank_id(memory, blank) -> None:
    # As every other fault of the note to write: `what` is "note", the message says what of it.
    with pytest.raises(mnemon.InvalidArgument, match="id") as c:
        memory.write_note(blank, "A body.")
    assert c.value.what == "note"


def test_a_lone_surrogate_is_an_invalid_argument(memory) -> None:
    """Regression: a lone surrogate (``json.loads('"\\ud800"')`` makes one) raised Python's
    UnicodeEncodeError, which ``except mnemon.Error`` let through."""
    lone = "pool \ud800 sizing"
    calls = [
        lambda: memory.recall(lone),
        lambda: memory.show("a\udc80"),
        lambda: memory.feedback(["\udc80"]),
        lambda: memory.set_importance("pgbouncer", 5, note=lone),
        lambda: memory.write_note("x", lone),
    ]
    for call in calls:
        with pytest.raises(mnemon.InvalidArgument, match="lone surrogate") as c:
            call()
        assert isinstance(c.value, mnemon.Error) and isinstance(c.value, ValueError)


def test_wrong_types_are_type_errors(memory) -> None:
    with pytest.raises(TypeError):
        memory.recall("x", depth="2")
    # A str is not a list of ids: the message says how to write one (it was pyo3's "Can't
    # extract `str` to `Vec`").
    with pytest.raises(TypeError, match=r"(?s)not one string: write \['pool-sizing'\].*anchors"):
        memory.recall(anchors="pool-sizing")
    with pytest.raises(TypeError, match=r"(?s)not one string.*used"):
        memory.feedback("pool-sizing")
    with pytest.raises(TypeError, match=r"(?s)not one string.*tags"):
        memory.set_importance("pool-sizing", 5, tags="incident")
    with pytest.raises(TypeError, match=r"(?s)not one string.*related"):
        memory.write_note("x", "A body.", related="pool-sizing")


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.stats("no-such-note"),
        lambda m: m.show("no-such-note"),
        lambda m: m.set_importance("no-such-note", 5),
        lambda m: m.feedback(["pool-sizing"], wrong=["no-such-note"]),
    ],
)
def test_an_unknown_note_is_a_key_error(memory, call) -> None:
    with pytest.raises(KeyError) as caught:
        call(memory)
    e = caught.value
    assert isinstance(e, mnemon.NotFound) and isinstance(e, mnemon.Error)
    assert e.id == "no-such-note"
    assert str(e) == (
        "no note with id `no-such-note`; call Memory.index() if you just added it, "
        "or check the spelling"
    )


def test_other_failures_are_mnemon_errors(tmp_path: pathlib.Path, monkeypatch) -> None:
    with pytest.raises(mnemon.Error) as caught:
        mnemon.Memory.open(tmp_path)
    assert not isinstance(caught.value, (ValueError, KeyError))
    # The fix in this package's terms, not the command line's `mnemon init`.
    assert str(caught.value) == (
        f"{tmp_path} is not a mnemon memory folder (no memory/ inside); "
        f"create one with mnemon.Memory.init({str(tmp_path)!r})".replace("'", '"')
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MNEMON_DIR", raising=False)
    with pytest.raises(mnemon.Error, match=r"no memory folder found: looked for .mnemon/.*mnemon\.Memory\.init"):
        mnemon.Memory.open()
    (tmp_path / "file").write_text("x")
    with pytest.raises(mnemon.Error):
        mnemon.Memory.init(tmp_path / "file")


def test_an_anchor_no_id_can_be_is_an_invalid_argument(memory) -> None:
    """Regression: ``recall(anchors=["../x"])`` raised NotFound ("no note with id"), where
    ``show("../x")`` says the id is invalid."""
    with pytest.raises(mnemon.InvalidArgument) as caught:
        memory.recall(anchors=["../x"])
    assert caught.value.what == "anchors"
    assert "ids cannot leave memory/" in str(caught.value)


def test_a_memory_folder_that_lost_its_notes_says_so(folder: pathlib.Path) -> None:
    """A folder whose memory/ is gone while its index stays was told only to init."""
    m = mnemon.Memory.open(folder)
    m.index()
    m.close()
    shutil.rmtree(folder / "memory")
    with pytest.raises(mnemon.Error) as caught:
        mnemon.Memory.open(folder)
    text = str(caught.value)
    assert "it was one, whose notes folder is gone" in text, text
    assert f"mnemon.Memory.init({str(folder)!r})".replace("'", '"') in text, text
    assert "mnemon init" not in text, text


def test_fixes_are_said_in_python_not_as_commands(memory, cli, tmp_path: pathlib.Path) -> None:
    """The library's messages end in a fix for the command line (`run mnemon index`, `--dir`,
    `mnemon show`): raised in Python, the fix is the Python call."""
    root = memory.path
    (tmp_path / "file").write_text("x")
    cases = [
        (lambda: memory.stats("nope"), "call Memory.index() if you just added it"),
        (
            lambda: mnemon.Memory.open(root / "memory"),
            f"use mnemon.Memory.open({str(root)!r})".replace("'", '"'),
        ),
        (
            lambda: mnemon.Memory.open(tmp_path / "file"),
            f"such as mnemon.Memory.open({str(tmp_path)!r})".replace("'", '"'),
        ),
        (
            lambda: mnemon.Memory.init(root / "index" / "x"),
            f"use mnemon.Memory.open({str(root)!r})".replace("'", '"'),
        ),
        (
            lambda: memory.write_note("x", "---\nname: X\n---\nA body."),
            "as keyword arguments of Memory.write_note",
        ),
        (
            lambda: memory.write_note("x", "A body.", expected_sha256="zz"),
            "the sha256 that Memory.show(id) gives",
        ),
        (
            lambda: mnemon.Memory.open(root, session="no spaces"),
            "(given by session= or the MNEMON_SESSION environment variable)",
        ),
    ]
    for call, fix in cases:
        with pytest.raises(mnemon.Error) as caught:
            call()
        message = str(caught.value)
        assert fix in message, message
        assert not re.search(r"--[a-z]|`mnemon |mnemon (index|show|init|doctor)\b", message), message
    # The command's message for the same error keeps the command's fix.
    done = cli("stats", "nope", "--dir", str(root), check=False)
    assert "run `mnemon index` if you just added it" in done.stderr
    # What to do about a refused write is said in Python too.
    refused = memory.write_note("pgbouncer", "Another body.")
    assert refused["refused"] == "exists"
    assert "read it with Memory.show(id)" in refused["message"]
    assert "mnemon show" not in refused["message"]


def test_exceptions_are_importable_and_picklable() -> None:
    assert issubclass(mnemon.InvalidArgument, ValueError)
    assert issubclass(mnemon.NotFound, KeyError)
    assert issubclass(mnemon.NotFound, mnemon.Error) and issubclass(mnemon.Error, Exception)
    assert mnemon.NotFound.__module__ == "mnemon"
    e = pickle.loads(pickle.dumps(mnemon.NotFound("no note with id `x`", "x")))
    assert (type(e), str(e), e.id) == (mnemon.NotFound, "no note with id `x`", "x")
    v = pickle.loads(pickle.dumps(mnemon.InvalidArgument("limit 0 is out of range", "limit")))
    assert (type(v), str(v), v.what) == (mnemon.InvalidArgument, "limit 0 is out of range", "limit")
