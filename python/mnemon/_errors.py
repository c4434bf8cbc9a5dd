"""mnemon's exceptions. The native module raises these; import them from ``mnemon``.

Every message is the library's own (the text the ``mnemon`` command prints): what went wrong, on
which file or argument, and what to do about it, the fix said in Python (``Memory.index()``,
``mnemon.Memory.open(path)``) where the command's names a command or an option.
"""

from typing import Any, Optional, Tuple


class Error(Exception):
    """A mnemon call failed: an I/O error, a damaged index, a closed :class:`~mnemon.Memory`, ...

    The base class of every exception mnemon raises, so ``except mnemon.Error`` catches them all.
    ``str(e)`` is the library's message.
    """


class InvalidArgument(ValueError, Error):
    """An argument is out of range or malformed (``depth=9``, ``limit=0``, no query and no
    anchors, an id that is not a note id, ...). A :class:`ValueError` and a :class:`mnemon.Error`.

    ``what`` names the argument as the library and the ``mnemon`` command do (``"depth"``,
    ``"limit"``, ``"importance"``, ``"query"``, ``"id"``, ...).
    """

    what: Optional[str]

    def __init__(self, message: str, what: Optional[str] = None) -> None:
        super().__init__(message)
        self.what = what

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (str(self), self.what))


class NotFound(KeyError, Error):
    """No note has this id (not indexed yet, or misspelled). A :class:`KeyError` and a
    :class:`mnemon.Error`; ``id`` is the id asked for.
    """

    id: Optional[str]

    def __init__(self, message: str, id: Optional[str] = None) -> None:
        super().__init__(message)
        self.id = id

    def __str__(self) -> str:
        # KeyError's str() is the repr of its key; this one is a message.
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (str(self), self.id))


# Shown as mnemon.Error, mnemon.NotFound, ... (where users import them from).
for _cls in (Error, InvalidArgument, NotFound):
    _cls.__module__ = "mnemon"
del _cls
