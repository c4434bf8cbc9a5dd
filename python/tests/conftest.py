"""Shared fixtures: a small memory of linked notes, opened through the package under test, and the
`mnemon` binary for the checks that the CLI reads what Python wrote."""

import os
import pathlib
import shutil
import subprocess
import textwrap

import pytest

import mnemon

REPO = pathlib.Path(__file__).resolve().parents[2]

# Five notes: a question about the pool finds `pool-sizing` directly and `pgbouncer` over its
# link; `user-prefs` is pinned (core view); `dangling` links to a note that does not exist.
NOTES = {
    "pool-sizing": """\
        ---
        name: Pool sizing
        description: Why the connection pool times out under load
        type: project
        related:
          - pgbouncer
        ---
        The connection pool times out at 20 connections when the batch workers start.
        Raise max_connections only together with [[pgbouncer]] settings.
        """,
    "pgbouncer": """\
        ---
        name: PgBouncer settings
        description: Transaction pooling in front of Postgres
        type: reference
        ---
        PgBouncer runs in transaction mode with default_pool_size 40 and reserve_pool 10.
        """,
    "deploy-canary": """\
        ---
        name: Canary deploys
        description: Roll out to one region first
        type: project
        ---
        Every deploy goes to the canary region first and waits for the error budget check.
        """,
    "user-prefs": """\
        ---
        name: User preferences
        description: How the user wants answers
        type: user
        pin: true
        ---
        The user prefers short answers with the command to run first.
        """,
    "dangling": """\
        ---
        name: Dangling link
        type: project
        ---
        This note points at [[no-such-note]], which nobody wrote yet.
        """,
}


def write_note(root: pathlib.Path, note_id: str, text: str) -> None:
    """Write `text` (dedented) as the note `note_id` of the memory folder `root`."""
    (root / "memory" / f"{note_id}.md").write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def folder(tmp_path: pathlib.Path) -> pathlib.Path:
    """A new memory folder (`.mnemon/` in a temporary directory) holding NOTES, not indexed."""
    root = tmp_path / ".mnemon"
    with mnemon.Memory.init(root):
        pass
    for note_id, text in NOTES.items():
        write_note(root, note_id, text)
    return root


@pytest.fixture
def memory(folder: pathlib.Path):
    """The memory of `folder`, indexed; closed after the test."""
    m = mnemon.Memory.open(folder)
    m.index()
    yield m
    m.close()


@pytest.fixture(autouse=True)
def no_ambient_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests choose their folder and session themselves."""
    monkeypatch.delenv("MNEMON_DIR", raising=False)
    monkeypatch.delenv("MNEMON_SESSION", raising=False)


@pytest.fixture(scope="session")
def mnemon_bin() -> str:
    """The `mnemon` binary: `MNEMON_BIN`, else `target/debug/mnemon` from the repository root."""
    path = os.environ.get("MNEMON_BIN") or str(REPO / "target" / "debug" / "mnemon")
    if not (os.path.isfile(path) or shutil.which(path)):
        message = f"no mnemon binary at {path}: run `cargo build -p mnemon-cli` or set MNEMON_BIN"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def cli(mnemon_bin: str):
    """Run the `mnemon` binary with `args`; returns the completed process (checked)."""

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k not in ("MNEMON_DIR", "MNEMON_SESSION")}
        env["NO_COLOR"] = "1"
        done = subprocess.run(
            [mnemon_bin, *args], capture_output=True, text=True, env=env, timeout=120
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"mnemon {' '.join(args)} exited {done.returncode}: {done.stderr}"
            )
        return done

    return run
