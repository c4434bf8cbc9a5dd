"""mnemon: an embedded associative memory for AI agents, in process.

Agents keep what they learn as Markdown notes in a ``memory/`` folder; mnemon folds them into a
typed graph and a lexical index, answers :meth:`Memory.recall` in microseconds, and records every
recall, use and importance mark as an event that later recalls learn from. The engine is the
Rust library ``mnemon``; this package calls it in process (no server, no subprocess).

>>> import mnemon
>>> with mnemon.Memory.open(".mnemon") as memory:        # or Memory.init(path) for a new one
...     memory.index()                                   # incremental
...     for hit in memory.recall("why does the pool time out", limit=5):
...         print(hit.id, round(hit.score, 2), hit.source, hit.trail)
...     memory.feedback(["pool-sizing"])                 # the agent used it

Errors: :class:`InvalidArgument` (a :class:`ValueError`) for an argument out of range,
:class:`NotFound` (a :class:`KeyError`) for an unknown note id, :class:`Error` (the base of
both) for anything else; messages are the library's, the ``mnemon`` command's, with the fix said
in Python (``Memory.index()``, not ``mnemon index``).
"""

import os as _os

from ._errors import Error, InvalidArgument, NotFound
from ._mnemon import (
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_DEPTH,
    DEFAULT_LIMIT,
    DEFAULT_MIN_SCORE,
    MAX_ANCHORS,
    MAX_BUDGET_TOKENS,
    MAX_DEPTH,
    MAX_FEEDBACK_IDS,
    MAX_IMPORTANCE,
    MAX_LIMIT,
    MAX_QUERY_BYTES,
    MIN_BUDGET_TOKENS,
    MIN_DEPTH,
    MIN_IMPORTANCE,
    MIN_LIMIT,
    CoreView,
    DoctorReport,
    FeedbackReport,
    Hit,
    IndexReport,
    Memory,
    NodeStatsView,
    NodeView,
    Recall,
    __version__,
)
from ._types import (
    Contradiction,
    Dangling,
    EdgeIn,
    EdgeKind,
    EdgeOut,
    Explain,
    FloorReport,
    IndexHealth,
    NearDuplicate,
    NoteError,
    Provenance,
    Rejected,
    ScanError,
    Source,
    TermWeight,
    TrailEdge,
)

# The engine's worker threads do not survive a fork: the native module refuses to index in a
# child forked after they started, rather than wait forever (see Memory.index).
if hasattr(_os, "register_at_fork"):
    from ._mnemon import _after_fork_in_child

    _os.register_at_fork(after_in_child=_after_fork_in_child)
    del _after_fork_in_child

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
    "Error",
    "InvalidArgument",
    "NotFound",
    "Source",
    "EdgeKind",
    "Provenance",
    "TrailEdge",
    "EdgeOut",
    "EdgeIn",
    "Explain",
    "ScanError",
    "TermWeight",
    "Rejected",
    "FloorReport",
    "IndexHealth",
    "Dangling",
    "Contradiction",
    "NearDuplicate",
    "NoteError",
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
    "__version__",
]
