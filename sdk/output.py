"""A bot's stderr, by decision: the runtime marks where each decision's output begins.

Before the first write after a new moment of the match (``start``, ``decision N``,
``end``), the bot process's stderr gets one mark line (:data:`MARK` and the moment); the
referee splits what it captured at those marks (:func:`split_marked`), so the owner sees
which lines were printed at which decision. Only moments the bot wrote something at are
marked (a quiet bot's stderr stays empty). Output written below Python (a C library
writing to fd 2) is not marked and counts for the moment before. One runtime serving
several matches at once (threads) interleaves their marks: local play and the arena run
one match per runtime at a time.
"""

from __future__ import annotations

import io
import sys
import traceback
from typing import TextIO

#: The start of a mark line (a record separator, then the moment): no print() makes it.
MARK = "\x1e[saloon] "
#: The moment before any mark: loading the bot (import, construction).
LOAD = "load"


class MarkedStream(io.TextIOBase):
    """A text stream that writes a mark line before the first write of each moment."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._pending: str | None = None
        self._line_start = True

    def at(self, moment: str) -> None:
        """Output from now on belongs to ``moment`` (marked when something is written)."""
        self._pending = moment

    def write(self, text: str) -> int:
        if not text:
            return 0
        if self._pending is not None:
            self.stream.write(f"{'' if self._line_start else chr(10)}{MARK}{self._pending}\n")
            self._pending = None
        self.stream.write(text)
        self._line_start = text.endswith("\n")
        # At once, as stderr should be: a partial line (print(..., end="")) would otherwise
        # wait in the buffer, and a runtime ended at the match's end would lose it.
        self.stream.flush()
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")


def mark(moment: str) -> None:
    """Say that stderr output from now on belongs to ``moment`` (when stderr is marked)."""
    stream = sys.stderr
    if isinstance(stream, MarkedStream):
        stream.at(moment)


def split_marked(text: str) -> list[tuple[str, list[str]]]:
    """``(moment, lines)`` in order from marked stderr text (:data:`LOAD` before any mark);
    moments with no lines are left out."""
    blocks: list[tuple[str, list[str]]] = [(LOAD, [])]
    # split("\n"), not splitlines(): that also splits at the mark's record separator.
    for line in text.rstrip("\n").split("\n") if text else ():
        if line.startswith(MARK):
            blocks.append((line[len(MARK) :].strip(), []))
        else:
            blocks[-1][1].append(line)
    return [(moment, lines) for moment, lines in blocks if lines]


def unmarked(text: str) -> str:
    """Marked stderr text for people: each mark as a ``[decision N]`` heading."""
    return "\n".join(
        f"[{line[len(MARK) :].strip()}]" if line.startswith(MARK) else line
        for line in text.split("\n")
    )


def where(exc: BaseException) -> str:
    """``file:line`` of what an exception points at: a SyntaxError's own place, else the
    innermost frame of its traceback ("" when it has none)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    frames = traceback.extract_tb(exc.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""
