"""The shapes of the plain-data parts of mnemon's reports (dicts in the shape of the JSON that
``mnemon ... --json`` prints), for type checkers and annotations.
"""

from typing import List, Literal, Optional, TypedDict

#: How a hit was reached.
Source = Literal["direct", "neighbor", "co_occur"]

#: What an edge says.
EdgeKind = Literal[
    "references",
    "part_of",
    "derived_from",
    "supersedes",
    "contradicts",
    "co_occurs_slug",
    "co_occurs_token",
]

#: Who made an edge: a frontmatter list, a ``[[link]]`` in the body, or mnemon.
Provenance = Literal["frontmatter", "inline-link", "synthesized"]

#: One edge of a hit's trail (``from`` is a keyword, hence the functional form).
TrailEdge = TypedDict(
    "TrailEdge", {"from": str, "to": str, "kind": EdgeKind, "provenance": Provenance}
)

#: An edge leaving a shown note.
EdgeOut = TypedDict(
    "EdgeOut",
    {"to": str, "kind": EdgeKind, "provenance": Provenance, "confidence": float, "dangling": bool},
)

#: An edge arriving at a shown note.
EdgeIn = TypedDict(
    "EdgeIn", {"from": str, "kind": EdgeKind, "provenance": Provenance, "confidence": float}
)


class Explain(TypedDict):
    """A score taken apart: ``score = base x (1 + usage) x type_weight x ttl_factor x
    (1 + min(0.25, importance + recency))``, unless ``placed`` (the score is then a place next
    to a note it replaces or that replaces it)."""

    lexical: float
    coverage: float
    learned: float
    title_match: bool
    base: float
    type_weight: float
    ttl_factor: float
    usage: float
    importance: float
    recency: float
    matched_terms: List[str]
    support: float
    placed: bool


class ScanError(TypedDict):
    """A problem found while indexing: the file (below ``memory/``) and what to do."""

    path: str
    message: str


class TermWeight(TypedDict):
    """A question's term as evidence."""

    term: str
    idf: float
    in_memory: bool
    name: bool
    form_of: Optional[str]


class Rejected(TypedDict):
    """A lexical match the score floor turned away, and why."""

    id: str
    coverage: float
    reason: str


class _FloorReportRequired(TypedDict):
    terms: List[TermWeight]
    rejected: List[Rejected]
    weak: bool
    alone: bool
    reached_floor: float
    reached_share: float
    old_first: bool


class FloorReport(_FloorReportRequired, total=False):
    """Why a question's lexical matches passed the score floor or not. The keys below are
    present only when they say something: ``apart`` (ids of hits holding the question's words
    only apart), ``unknown_subject`` (true: a fifth or more of the question is in words no note
    holds and no hit answers most of it, so only the best four were returned), ``unknown_weak``
    (true: ``weak``, and half or more of the question is in words no note holds, so only the best
    one was returned), ``names_only``
    (true: every hit matches nothing of the question but the names it writes, so only the best one
    and the notes about those names among the best two were returned), ``asks_permission``
    (true: the question asks whether something may be done, so rules, feedback notes, weigh most in
    close calls), ``under_min_score`` (true: the caller's ``min_score`` left hits out),
    ``read_bytes`` (the part of an over-long question read)."""

    apart: List[str]
    unknown_subject: bool
    unknown_weak: bool
    names_only: bool
    asks_permission: bool
    under_min_score: bool
    read_bytes: int


class IndexHealth(TypedDict):
    """The derived index's health."""

    path: str
    schema_version: int
    ok: bool
    message: Optional[str]


_DanglingRequired = TypedDict(
    "_DanglingRequired", {"from": str, "to": str, "kind": EdgeKind, "provenance": Provenance}
)


class Dangling(_DanglingRequired, total=False):
    """A link to an id no note has; ``other_form_of`` names the note whose id is the same text
    in another Unicode normal form, when one is."""

    other_form_of: str


class NearDuplicate(TypedDict):
    """Two notes that say nearly the same thing (``a`` < ``b``)."""

    a: str
    b: str
    similarity: float


class Contradiction(TypedDict):
    """Two notes that say they contradict each other (``a`` < ``b``)."""

    a: str
    b: str


class NoteError(TypedDict):
    """A problem of one note, with its fix."""

    path: str
    kind: str
    message: str
