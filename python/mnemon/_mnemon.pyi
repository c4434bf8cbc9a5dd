"""Type stubs of mnemon's native module (``mnemon._mnemon``); import everything from ``mnemon``.

Numbers here mirror the library's constants (``mnemon::args``); at run time the defaults come
from the library itself.
"""

import os
from pathlib import Path
from types import TracebackType
from typing import Any, Dict, Iterator, List, Optional, Sequence, Type, Union, final

from ._types import (
    Contradiction,
    Dangling,
    EdgeIn,
    EdgeOut,
    Explain,
    FloorReport,
    IndexHealth,
    NearDuplicate,
    NoteError,
    ScanError,
    Source,
    TrailEdge,
)

__all__ = [
    "Memory",
    "Hit",
    "Recall",
    "IndexReport",
    "NodeStatsView",
    "NodeView",
    "FeedbackReport",
    "CoreView",
    "DoctorReport",
    "_after_fork_in_child",
    "__version__",
    "DEFAULT_DEPTH",
    "MIN_DEPTH",
    "MAX_DEPTH",
    "DEFAULT_LIMIT",
    "MIN_LIMIT",
    "MAX_LIMIT",
    "DEFAULT_MIN_SCORE",
    "MIN_IMPORTANCE",
    "MAX_IMPORTANCE",
    "DEFAULT_BUDGET_TOKENS",
    "MIN_BUDGET_TOKENS",
    "MAX_BUDGET_TOKENS",
    "MAX_ANCHORS",
    "MAX_FEEDBACK_IDS",
    "MAX_QUERY_BYTES",
]

__version__: str

def _after_fork_in_child() -> None:
    """Called in a child process after ``os.fork()`` (registered by ``mnemon/__init__.py``)."""

DEFAULT_DEPTH: int  # 2
MIN_DEPTH: int  # 0
MAX_DEPTH: int  # 5
DEFAULT_LIMIT: int  # 10
MIN_LIMIT: int  # 1
MAX_LIMIT: int  # 200
DEFAULT_MIN_SCORE: float  # 0.05
MIN_IMPORTANCE: int  # 1
MAX_IMPORTANCE: int  # 10
DEFAULT_BUDGET_TOKENS: int  # 2000
MIN_BUDGET_TOKENS: int  # 1
MAX_BUDGET_TOKENS: int  # 200000
MAX_ANCHORS: int  # 64
MAX_FEEDBACK_IDS: int  # 64
MAX_QUERY_BYTES: int  # 4096

_Path = Union[str, "os.PathLike[str]"]

@final
class Memory:
    """An open memory folder (``memory/`` notes, ``events/`` log, ``index/``).

    Shareable across threads (engine calls release the GIL); a context manager; calls after
    :meth:`close` raise :class:`mnemon.Error`.
    """

    @staticmethod
    def open(path: Optional[_Path] = None, *, session: Optional[str] = None) -> "Memory":
        """Open an existing memory folder: ``path`` (the folder holding ``memory/``, or one
        containing ``.mnemon/``), else ``MNEMON_DIR``, else the first ``.mnemon/`` found walking
        up from the working directory."""
    @staticmethod
    def init(path: _Path, *, session: Optional[str] = None) -> "Memory":
        """Create a memory folder at ``path`` (idempotent) and open it."""
    @property
    def path(self) -> Path:
        """The memory folder (the one holding ``memory/``)."""
    @property
    def notices(self) -> List[str]:
        """Repairs made while opening, to show to a person; usually empty."""
    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
    def close(self) -> None:
        """Close the memory (events become durable); closing twice does nothing."""
    def __enter__(self) -> "Memory": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...
    def index(self) -> "IndexReport":
        """Bring the index up to date with ``memory/`` (incremental)."""
    def recall(
        self,
        query: Optional[str] = None,
        *,
        anchors: Sequence[str] = (),
        depth: int = 2,
        limit: int = 10,
        min_score: Optional[float] = None,
        explain: bool = False,
        record: bool = True,
    ) -> List["Hit"]:
        """The notes that matter for ``query`` and/or ``anchors``, best first. Defaults are the
        library's (``DEFAULT_DEPTH``, ``DEFAULT_LIMIT``, ``DEFAULT_MIN_SCORE``); out-of-range
        values raise :class:`mnemon.InvalidArgument`."""
    def recall_report(
        self,
        query: Optional[str] = None,
        *,
        anchors: Sequence[str] = (),
        depth: int = 2,
        limit: int = 10,
        min_score: Optional[float] = None,
        explain: bool = False,
        record: bool = True,
    ) -> "Recall":
        """:meth:`recall` with its query id, engine time and score-floor report."""
    def feedback(
        self, used: Sequence[str], wrong: Sequence[str] = (), query: Optional[str] = None
    ) -> "FeedbackReport":
        """Record which recalled notes were used and which were wrong (``query`` None: this
        handle's last recall, by any thread)."""
    def set_importance(
        self, id: str, importance: int, *, tags: Sequence[str] = (), note: str = ""
    ) -> None:
        """Mark note ``id`` as important (1 to 10)."""
    def stats(self, id: str) -> "NodeStatsView":
        """The folded usage statistics of note ``id``."""
    def core(self, budget_tokens: int = 2000) -> "CoreView":
        """Pinned and important notes rendered into ``budget_tokens``."""
    def show(self, id: str) -> "NodeView":
        """Note ``id`` with its edges both ways."""
    def write_note(
        self,
        id: str,
        body: str,
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        type: Optional[str] = None,
        tags: Sequence[str] = (),
        related: Sequence[str] = (),
        supersedes: Sequence[str] = (),
        contradicts: Sequence[str] = (),
        pin: Optional[bool] = None,
        expected_sha256: Optional[str] = None,
        on_duplicate: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Write note ``id`` into ``memory/`` and index it; a dict with ``written``, ``sha256``,
        ``refused``, ``message``, ``near_duplicates`` and ``likely_predecessors``."""
    def doctor(self) -> "DoctorReport":
        """Check the memory (re-indexes first)."""

@final
class Hit:
    """One recalled note."""

    @property
    def id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def source(self) -> Source: ...
    @property
    def trail(self) -> List[TrailEdge]: ...
    @property
    def name(self) -> Optional[str]: ...
    @property
    def description(self) -> Optional[str]: ...
    @property
    def superseded_by(self) -> List[str]: ...
    @property
    def contradicts(self) -> List[str]: ...
    @property
    def type(self) -> str: ...
    @property
    def excerpt(self) -> str: ...
    @property
    def explain(self) -> Optional[Explain]: ...
    def to_dict(self) -> Dict[str, Any]: ...

@final
class Recall:
    """A recall with its details; iterating it gives its hits."""

    @property
    def qid(self) -> str: ...
    @property
    def hits(self) -> List[Hit]: ...
    @property
    def latency_us(self) -> int: ...
    @property
    def floor(self) -> FloorReport: ...
    @property
    def question_read_bytes(self) -> Optional[int]: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Hit]: ...

@final
class IndexReport:
    """What :meth:`Memory.index` did."""

    @property
    def notes(self) -> int: ...
    @property
    def edges(self) -> int: ...
    @property
    def changed(self) -> List[str]: ...
    @property
    def removed(self) -> List[str]: ...
    @property
    def errors(self) -> List[ScanError]: ...
    @property
    def elapsed_ms(self) -> int: ...
    def to_dict(self) -> Dict[str, Any]: ...

@final
class NodeStatsView:
    """A note's folded usage statistics (times in ms since the Unix epoch)."""

    @property
    def id(self) -> str: ...
    @property
    def recall_count(self) -> int: ...
    @property
    def last_recalled_ms(self) -> Optional[int]: ...
    @property
    def importance(self) -> Optional[int]: ...
    @property
    def importance_tagged_ms(self) -> Optional[int]: ...
    @property
    def used_count(self) -> int: ...
    @property
    def untied_used(self) -> int: ...
    @property
    def wrong_count(self) -> int: ...
    @property
    def last_used_ms(self) -> Optional[int]: ...
    def to_dict(self) -> Dict[str, Any]: ...

@final
class NodeView:
    """A note with its edges both ways."""

    @property
    def id(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def name(self) -> Optional[str]: ...
    @property
    def type(self) -> str: ...
    @property
    def description(self) -> Optional[str]: ...
    @property
    def tags(self) -> List[str]: ...
    @property
    def pin(self) -> bool: ...
    @property
    def created_s(self) -> Optional[int]: ...
    @property
    def updated_s(self) -> Optional[int]: ...
    @property
    def ttl_days(self) -> Optional[int]: ...
    @property
    def excerpt(self) -> str: ...
    @property
    def edges_out(self) -> List[EdgeOut]: ...
    @property
    def edges_in(self) -> List[EdgeIn]: ...
    @property
    def sha256(self) -> Optional[str]: ...
    def to_dict(self) -> Dict[str, Any]: ...

@final
class FeedbackReport:
    """What :meth:`Memory.feedback` recorded."""

    @property
    def qid(self) -> str: ...
    @property
    def query(self) -> str: ...
    @property
    def used(self) -> List[str]: ...
    @property
    def wrong(self) -> List[str]: ...
    def to_dict(self) -> Dict[str, Any]: ...

@final
class CoreView:
    """Pinned and important notes rendered as Markdown; ``str(view)`` is the text."""

    @property
    def text(self) -> str: ...
    @property
    def tokens_used(self) -> int: ...
    @property
    def budget_tokens(self) -> int: ...
    @property
    def included(self) -> List[str]: ...
    @property
    def left_out(self) -> List[str]: ...
    @property
    def superseded(self) -> List[str]: ...
    def to_dict(self) -> Dict[str, Any]: ...

@final
class DoctorReport:
    """What :meth:`Memory.doctor` found."""

    @property
    def healthy(self) -> bool: ...
    @property
    def notes(self) -> int: ...
    @property
    def edges(self) -> int: ...
    @property
    def dangling(self) -> List[Dangling]: ...
    @property
    def note_errors(self) -> List[NoteError]: ...
    @property
    def conflicts(self) -> List[str]: ...
    @property
    def walk_errors(self) -> List[ScanError]: ...
    @property
    def index(self) -> IndexHealth: ...
    @property
    def store_damage(self) -> List[str]: ...
    @property
    def near_duplicates(self) -> List[NearDuplicate]: ...
    @property
    def near_duplicates_omitted(self) -> int: ...
    @property
    def supersede_cycles(self) -> List[List[str]]: ...
    @property
    def contradictions(self) -> List[Contradiction]: ...
    def to_dict(self) -> Dict[str, Any]: ...
