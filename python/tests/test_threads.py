"""One Memory shared by several Python threads: recalls agree, nothing fails, and the engine runs
with the GIL released (another thread keeps running during a long index)."""

import pathlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import mnemon

QUESTIONS = [
    ("connection pool time out", ()),
    ("pgbouncer transaction mode", ()),
    ("canary deploy region", ()),
    (None, ("pool-sizing",)),
    ("short answers", ("user-prefs",)),
]


def test_threads_recalling_on_one_memory_agree(memory: mnemon.Memory) -> None:
    expected = {
        (q, a): [(h.id, h.source) for h in memory.recall(q, anchors=a, record=False)]
        for q, a in QUESTIONS
    }

    def worker(n: int) -> int:
        done = 0
        for i in range(60):
            q, a = QUESTIONS[(n + i) % len(QUESTIONS)]
            got = [(h.id, h.source) for h in memory.recall(q, anchors=a, record=False)]
            assert got == expected[(q, a)]
            done += 1
        return done

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert sum(pool.map(worker, range(8))) == 8 * 60


def test_threads_recording_while_another_indexes_and_marks(memory: mnemon.Memory) -> None:
    errors = []

    def recaller() -> None:
        try:
            for _ in range(40):
                assert memory.recall("connection pool time out")[0].id == "pool-sizing"
        except Exception as e:  # reported below
            errors.append(e)

    def marker() -> None:
        try:
            for i in range(20):
                memory.set_importance("pgbouncer", 1 + i % 10)
                memory.index()
                memory.feedback(["pool-sizing"], query="connection pool time out")
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=recaller) for _ in range(4)] + [threading.Thread(target=marker)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert memory.stats("pool-sizing").recall_count == 4 * 40
    assert memory.stats("pool-sizing").used_count == 20


def test_the_gil_is_released_while_the_engine_works(tmp_path: pathlib.Path) -> None:
    root = tmp_path / ".mnemon"
    m = mnemon.Memory.init(root)
    words = "pool timeout deploy canary region budget latency queue worker retry".split()
    for i in range(3000):
        body = " ".join(words[(i * 7 + k) % len(words)] + str(k * i % 97) for k in range(60))
        (root / "memory" / f"note-{i}.md").write_text(f"---\nname: Note {i}\n---\n{body}\n")
    window = {}

    def index() -> None:
        window["start"] = time.perf_counter()
        m.index()
        window["end"] = time.perf_counter()

    ticks = []
    t = threading.Thread(target=index)
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    m.close()
    start, end = window["start"], window["end"]
    assert end - start > 0.02, "the index should take a while"
    inside = [x for x in ticks if start + 0.005 < x < end - 0.005]
    # Holding the GIL for the whole index would leave this thread no tick inside the window.
    assert len(inside) >= 3, (end - start, len(ticks))
