"""Opening (explicitly, through MNEMON_DIR, walking up like the CLI), closing, the context
manager, and sessions."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import mnemon


def test_context_manager_closes(folder: pathlib.Path) -> None:
    with mnemon.Memory.open(folder) as m:
        assert not m.closed
        assert m.path == folder and isinstance(m.path, pathlib.Path)
        assert m.recall("connection pool")
        assert m.notices == [] or all(isinstance(n, str) for n in m.notices)
    assert m.closed
    assert repr(m) == f"<mnemon.Memory '{folder}' (closed)>"


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.recall("x"),
        lambda m: m.recall_report("x"),
        lambda m: m.index(),
        lambda m: m.stats("pgbouncer"),
        lambda m: m.show("pgbouncer"),
        lambda m: m.core(),
        lambda m: m.set_importance("pgbouncer", 3),
        lambda m: m.feedback(["pgbouncer"]),
        lambda m: m.doctor(),
    ],
)
def test_calls_after_close_raise(memory: mnemon.Memory, call) -> None:
    memory.close()
    memory.close()  # twice: nothing happens
    with pytest.raises(mnemon.Error, match="is closed"):
        call(memory)


def test_an_exception_inside_the_with_block_propagates(folder: pathlib.Path) -> None:
    with pytest.raises(RuntimeError):
        with mnemon.Memory.open(folder) as m:
            raise RuntimeError("boom")
    assert m.closed


def test_open_finds_the_folder_like_the_cli(
    folder: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = folder.parent
    # The folder holding .mnemon/.
    with mnemon.Memory.open(project) as m:
        assert m.path == folder
    # MNEMON_DIR.
    monkeypatch.setenv("MNEMON_DIR", str(folder))
    with mnemon.Memory.open() as m:
        assert m.path == folder
    monkeypatch.delenv("MNEMON_DIR")
    # Walking up from the working directory.
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    with mnemon.Memory.open() as m:
        assert m.path == folder
    # A str works as well as a Path.
    with mnemon.Memory.open(str(folder)) as m:
        assert m.path == folder


def test_init_is_idempotent_and_keeps_notes(folder: pathlib.Path) -> None:
    with mnemon.Memory.init(folder) as m:
        assert m.index().notes == 5
    for sub in ("memory", "events", "index"):
        assert (folder / sub).is_dir()


def test_events_go_to_the_named_session(folder: pathlib.Path, monkeypatch) -> None:
    with mnemon.Memory.open(folder, session="agent-7") as m:
        # A given session's query ids carry the pid: processes sharing the session differ.
        assert m.recall_report("connection pool").qid.startswith(f"agent-7-p{os.getpid()}-q")
    monkeypatch.setenv("MNEMON_SESSION", "from-env")
    with mnemon.Memory.open(folder) as m:
        assert m.recall_report("connection pool").qid.startswith(f"from-env-p{os.getpid()}-q")
    monkeypatch.delenv("MNEMON_SESSION")
    with mnemon.Memory.open(folder) as a, mnemon.Memory.open(folder) as b:
        qa = a.recall_report("connection pool").qid
        qb = b.recall_report("connection pool").qid
        assert qa.rsplit("-q", 1)[0] != qb.rsplit("-q", 1)[0], "a new session per opened memory"
    with pytest.raises(ValueError) as caught:
        mnemon.Memory.open(folder, session="no spaces/or slashes")
    assert caught.value.what == "session"


def test_another_memory_on_the_folder_sees_the_events(folder: pathlib.Path) -> None:
    with mnemon.Memory.open(folder) as writer:
        writer.index()
        writer.set_importance("deploy-canary", 6)
        writer.feedback(["deploy-canary"], query="canary")
    with mnemon.Memory.open(folder) as reader:
        s = reader.stats("deploy-canary")
        assert (s.importance, s.used_count) == (6, 1)


def test_notices_after_open_are_told(memory: mnemon.Memory) -> None:
    # The engine's notices were taken at open only: a segment removed under this process
    # (git clean, a sync tool) was never told.
    memory.recall("pgbouncer transaction mode")
    events = memory.path / "events"
    for seg in events.glob("*.seg"):
        seg.unlink()
    memory.recall("pgbouncer transaction mode")
    assert any("was removed while this process wrote to it" in n for n in memory.notices), memory.notices
    assert len(list(events.glob("*.seg"))) == 1, "the next recall went to a new segment"


def test_handles_open_the_folder_again_after_index_is_deleted(folder: pathlib.Path) -> None:
    # README: `index/` may be deleted at any time. An open handle could then neither index nor
    # write (its lock file was gone), and once another handle rebuilt `index/` it wrote into the
    # store it had open, which no other handle read: their notes were invisible to each other.
    import shutil

    with mnemon.Memory.open(folder) as a, mnemon.Memory.open(folder) as b:
        a.index()
        shutil.rmtree(folder / "index")
        assert a.write_note("axolotl-care", "Axolotls like cold water.")["written"] is True
        assert b.write_note("pangolin-diet", "Pangolins eat ants and termites.")["written"] is True
        assert [h.id for h in a.recall("pangolins termites", depth=0)][:1] == ["pangolin-diet"]
        assert [h.id for h in b.recall("axolotls cold water", depth=0)][:1] == ["axolotl-care"]
        assert [h.id for h in b.recall("connection pool", depth=0)][:1] == ["pool-sizing"]
        assert any("was removed" in n and "opened the memory folder again" in n for n in a.notices), a.notices
    with mnemon.Memory.open(folder) as c:
        assert not any("rebuilt" in n for n in c.notices), c.notices
        assert [h.id for h in c.recall("axolotls", depth=0)][:1] == ["axolotl-care"]


def test_a_reading_handle_opens_the_folder_again_within_a_second(folder: pathlib.Path) -> None:
    # Reads look at the store once a second at most (a stat per call would cost a recall a
    # tenth of its time); within that second they answer from the index as it was.
    import shutil
    import time

    with mnemon.Memory.open(folder) as m:
        m.index()
        shutil.rmtree(folder / "index")
        time.sleep(1.1)
        assert [h.id for h in m.recall("connection pool", depth=0)][:1] == ["pool-sizing"]
        assert any("was removed" in n for n in m.notices), m.notices
        assert (folder / "index" / "graph.redb").is_file()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs POSIX file locks (fcntl)")
def test_close_while_the_folder_is_opened_again_stays_closed(folder: pathlib.Path) -> None:
    # A call that opened the folder again (its index/ deleted) put the new engine in place even
    # when the memory had been closed meanwhile: the closed handle came back open.
    import fcntl
    import shutil
    import threading
    import time

    # The close must come while the index waits for the lock: a loaded machine may start the
    # thread later than the wait allows, so the case is set up again with a longer wait.
    for wait_s in (1.0, 3.0, 9.0):
        m = mnemon.Memory.open(folder)
        m.index()
        shutil.rmtree(folder / "index")
        (folder / "index").mkdir()
        with open(folder / "index" / "write.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # the reopened engine's index waits for it
            answer: dict = {}

            def index() -> None:
                try:
                    answer["notes"] = m.index().notes
                except mnemon.Error as e:
                    answer["error"] = str(e)

            t = threading.Thread(target=index)
            t.start()
            time.sleep(wait_s)
            m.close()
            fcntl.flock(lock, fcntl.LOCK_UN)
            t.join(timeout=120)
        if "is closed" not in answer.get("error", ""):
            break  # the index began before the close
    assert answer.get("notes") == 5, answer
    assert m.closed
    with pytest.raises(mnemon.Error, match="is closed"):
        m.recall("connection pool")


def test_record_false_leaves_no_trace(memory: mnemon.Memory) -> None:
    memory.recall("pgbouncer transaction mode", record=False)
    assert memory.stats("pgbouncer").recall_count == 0
    memory.recall("pgbouncer transaction mode")
    assert memory.stats("pgbouncer").recall_count == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_forked_child_recalls_indexes_and_writes(folder: pathlib.Path, tmp_path: pathlib.Path) -> None:
    # The engine's worker threads do not survive a fork: a child forked after they started used
    # to wait forever in anything that indexes (`index`, `write_note`, `doctor`, and a recall on
    # a memory never indexed), then was refused; it now indexes on threads of its own. In a
    # subprocess with a timeout, in case it waits again.
    fresh = tmp_path / "fresh"
    with mnemon.Memory.init(fresh):
        pass
    for note in (folder / "memory").iterdir():
        (fresh / "memory" / note.name).write_bytes(note.read_bytes())
    script = textwrap.dedent(
        f"""
        import os, sys, mnemon
        m = mnemon.Memory.open({str(folder)!r})
        m.index()
        pid = os.fork()
        if pid == 0:
            try:
                code = 0
                if m.recall("connection pool")[0].id != "pool-sizing":
                    code = 3
                elif m.index().notes != 5:
                    code = 4
                else:
                    m.write_note("from-the-child", "Written by a forked child about okapis.")
                    if [h.id for h in m.recall("okapis")] != ["from-the-child"]:
                        code = 5
                    elif not isinstance(m.doctor(), mnemon.DoctorReport):
                        code = 6
                    else:
                        # A memory never indexed: its first recall indexes it.
                        hits = mnemon.Memory.open({str(fresh)!r}).recall("connection pool")
                        code = 0 if hits and hits[0].id == "pool-sizing" else 7
            except BaseException as e:
                sys.stderr.write(f"child: {{type(e).__name__}}: {{e}}\\n")
                code = 8
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8)
        print(m.index().notes)
        """
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "6"], done.stdout + done.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_child_forked_while_threads_recall_does_not_hang(folder: pathlib.Path) -> None:
    # Two threads recall while the main thread forks: a lock of the handle or of the engine held
    # by one of them at the fork stays locked in the child, where that thread does not exist.
    # The child used to wait on it forever in its first recall (several children in 40 did).
    script = textwrap.dedent(
        f"""
        import os, signal, sys, threading, time, mnemon
        m = mnemon.Memory.open({str(folder)!r})
        m.index()
        stop = False

        def recall(record):
            while not stop:
                m.recall("connection pool time out", limit=5, record=record)

        threads = [threading.Thread(target=recall, args=(r,)) for r in (True, False)]
        for t in threads:
            t.start()
        ok, hung, failed = 0, 0, []
        for _ in range(40):
            pid = os.fork()
            if pid == 0:
                try:
                    hits = m.recall("pgbouncer transaction mode")
                    os._exit(0 if hits and hits[0].id == "pgbouncer" else 3)
                except BaseException as e:
                    sys.stderr.write(f"child: {{type(e).__name__}}: {{e}}\\n")
                    os._exit(4)
            deadline = time.monotonic() + 10
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
                        ok += 1
                    else:
                        failed.append(status)
                    break
                if time.monotonic() > deadline:
                    hung += 1
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    break
                time.sleep(0.005)
        stop = True
        for t in threads:
            t.join()
        m.close()
        print(ok, hung, failed)
        """
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", script], capture_output=True, text=True, timeout=500
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["40", "0", "[]"], done.stdout + done.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_child_forked_during_the_first_recall_of_a_thread_does_not_hang(
    folder: pathlib.Path,
) -> None:
    # The engine builds some tables at their first use (word lists, the typo automata): a fork
    # while another thread was building one left it half built in the child, whose first recall
    # then waited for it forever. One chance per process, at the first recall: each process
    # forks at another moment of it (about one in five of them hung).
    script = textwrap.dedent(
        f"""
        import os, signal, sys, threading, time, mnemon
        m = mnemon.Memory.open({str(folder)!r})
        t = threading.Thread(target=lambda: m.recall("connection pool time out", record=False))
        t.start()
        end = time.perf_counter() + float(sys.argv[1])
        while time.perf_counter() < end:
            pass
        pid = os.fork()
        if pid == 0:
            try:
                hits = m.recall("pgbouncr transacton mode", record=False)
                os._exit(0 if hits and hits[0].id == "pgbouncer" else 3)
            except BaseException:
                os._exit(4)
        deadline = time.monotonic() + 20
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                print(os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1)
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                print("hung")
                break
            time.sleep(0.002)
        t.join()
        """
    )
    with mnemon.Memory.open(folder) as m:
        m.index()
    outcomes = []
    for step in range(16):
        done = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", script, str(step * 0.00025)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        outcomes.append(done.stdout.strip())
    assert outcomes == ["0"] * 16, outcomes


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
@pytest.mark.parametrize("session", [None, "given-session"])
def test_a_forked_child_records_under_its_own_session_and_segment(
    folder: pathlib.Path, cli, session
) -> None:
    # The child kept the parent's session and query counter, and appended to the parent's open
    # segment: two different questions were recorded under one query id. The parent here has
    # opened its folder again (index/ deleted), which passes its session on as a given one; a
    # session given from the start is kept by the child, its query ids its own.
    script = textwrap.dedent(
        f"""
        import os, shutil, time, mnemon
        m = mnemon.Memory.open({str(folder)!r}, session={session!r})
        m.index()
        shutil.rmtree({str(folder)!r} + "/index")
        time.sleep(1.1)
        m.recall("connection pool")
        assert any("opened the memory folder again" in n for n in m.notices), m.notices
        pid = os.fork()
        if pid == 0:
            m.recall("deploy rollback")
            m.close()
            os._exit(0)
        os.waitpid(pid, 0)
        m.recall("flaky tests")
        m.close()
        print(pid)
        """
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    child = done.stdout.split()[-1]
    dump = json.loads(cli("events", "dump", "--dir", str(folder), "--json").stdout)
    queries = [e for e in dump["events"] if e["type"] == "query"]
    assert sorted(q["query"] for q in queries) == ["connection pool", "deploy rollback", "flaky tests"]
    qids = [q["qid"] for q in queries]
    assert len(set(qids)) == 3, queries
    by_question = {q["query"]: q for q in queries}
    # The child's events are in a segment of its own, named with its pid; the parent's are not.
    assert f"-{child}-" in by_question["deploy rollback"]["segment"], queries
    assert f"-{child}-" not in by_question["flaky tests"]["segment"], queries
    assert by_question["connection pool"]["segment"] != by_question["deploy rollback"]["segment"]
    if session is not None:
        assert all(q["session"] == session for q in queries), queries


def test_an_index_store_damaged_under_an_open_handle_is_moved_aside_when_it_closes(
    folder: pathlib.Path,
) -> None:
    # redb writes the store's allocator state when it closes, and panicked there on a store
    # whose bytes were overwritten under the open handle: `close()`, `__exit__` and the garbage
    # collector raised `PanicException`, which `except Exception` does not catch.
    script = textwrap.dedent(
        f"""
        import gc, mnemon
        store = {str(folder)!r} + "/index/graph.redb"

        def damaged():
            # A store another handle built and closed (rebuilt after the first close moved it
            # aside): redb checks it as it closes.
            with mnemon.Memory.open({str(folder)!r}) as m:
                m.index()
            m = mnemon.Memory.open({str(folder)!r})
            assert m.recall("pgbouncer transaction mode")[0].id == "pgbouncer"
            with open(store, "r+b") as f:
                f.seek(4096)
                f.write(b"\\xff" * 8192)
            return m

        m = damaged()
        m.close()
        print("closed:", [n for n in m.notices if "damaged when it was closed" in n])
        m = damaged()
        del m
        gc.collect()
        with mnemon.Memory.open({str(folder)!r}) as m:
            print("after:", m.recall("pgbouncer transaction mode")[0].id)
        """
    )
    with mnemon.Memory.open(folder) as m:
        m.index()
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "RUST_BACKTRACE": "0"},
    )
    assert done.returncode == 0, done.stderr
    closed, after = done.stdout.splitlines()
    assert closed.startswith("closed: ['the index store turned out damaged when it was closed"), done.stdout
    assert "graph.redb.damaged: the next open rebuilds it from the notes" in closed, closed
    assert after == "after: pgbouncer", done.stdout + done.stderr
    assert "PanicException" not in done.stderr, done.stderr
    assert "mnemon: the index store turned out damaged when it was closed" in done.stderr, done.stderr


def test_a_memory_made_with_a_relative_path_outlives_a_change_of_directory(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `init` kept the path as given: after `os.chdir` every call looked for the folder under
    # the new working directory ("rel is not a mnemon memory folder").
    monkeypatch.chdir(tmp_path)
    with mnemon.Memory.init("rel") as m:
        assert m.path == tmp_path / "rel"
        monkeypatch.chdir("/")
        m.write_note("okapi", "Okapis have striped legs.")
        assert [h.id for h in m.recall("okapi striped legs")] == ["okapi"]
    assert (tmp_path / "rel" / "memory" / "okapi.md").is_file()


def test_an_index_store_damaged_under_an_open_handle_is_rebuilt_by_the_next_call(
    folder: pathlib.Path,
) -> None:
    # A read of bad store bytes panics inside redb: the call raised `PanicException` (not
    # caught by `except Exception`), and so did every later one. The CLI moves such a store
    # aside, rebuilds it from the notes and runs the command again; so does the handle now.
    script = textwrap.dedent(
        f"""
        import mnemon
        with mnemon.Memory.open({str(folder)!r}) as m:
            m.index()
        m = mnemon.Memory.open({str(folder)!r})
        with open({str(folder)!r} + "/index/graph.redb", "r+b") as f:
            f.seek(4096)
            f.write(b"\\\\xff" * 65536)
        print([h.id for h in m.recall("pgbouncer transaction mode")][:1])
        print([n for n in m.notices if n.startswith("the index store was damaged")][:1])
        print(m.stats("pgbouncer").recall_count)
        m.close()
        """
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "RUST_BACKTRACE": "0"},
    )
    assert done.returncode == 0, done.stderr
    hits, notices, count = done.stdout.splitlines()
    assert hits == "['pgbouncer']", done.stdout
    assert "a read of it panicked" in notices and "graph.redb.damaged" in notices, notices
    assert count == "1", done.stdout
    assert (folder / "index" / "graph.redb.damaged").is_file()
