"""Leaderboards as the arena serves them: each rendered board kept until the results move.

Boards are incremental underneath (saloon.ratings.incremental: a checkpoint held in
memory and stored, extended by each new result; reading one costs a query, not a fold).
Rendering a board (the API's message, the HTML page with its charts) still costs
something, and readers ask far more often than results arrive, so each rendered board is
kept with the stamp it was made from and made again only when the stamp has moved. A
board's stamp is its own checkpoint's (saloon.ratings.boards.board_stamp: one walk
statement, whatever the number of results stored); other things kept here default to
the registry's results stamp. One reader makes a missing board while the others of the
same key wait for it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from saloon.arena.registry import Registry

T = TypeVar("T")

#: Rendered boards kept (least recently used dropped first).
MAX_BOARDS = 256


class BoardCache:
    """Rendered boards of one store, each valid while the results do not change."""

    def __init__(self, registry: Registry, size: int = MAX_BOARDS) -> None:
        self.registry = registry
        self.size = size
        self._lock = threading.Lock()
        self._boards: OrderedDict[Hashable, tuple[Any, Any]] = OrderedDict()
        self._making: dict[Hashable, threading.Lock] = {}
        self.made = 0

    def get(
        self, key: Hashable, make: Callable[[], T], stamp_of: Callable[[], Hashable] | None = None
    ) -> T:
        """The board of ``key``: the kept one if its stamp is unchanged, else ``make()``;
        ``stamp_of``: what the stamp is (default: the registry's results stamp)."""
        stamp = (stamp_of or self.registry.results_stamp)()
        with self._lock:
            kept = self._boards.get(key)
            if kept is not None and kept[0] == stamp:
                self._boards.move_to_end(key)
                return kept[1]  # type: ignore[no-any-return]
            making = self._making.setdefault(key, threading.Lock())
        with making:
            with self._lock:  # another reader may have made it meanwhile
                kept = self._boards.get(key)
                if kept is not None and kept[0] == stamp:
                    return kept[1]  # type: ignore[no-any-return]
            value = make()
            with self._lock:
                self._boards[key] = (stamp, value)
                self._boards.move_to_end(key)
                while len(self._boards) > self.size:
                    self._boards.popitem(last=False)
                self.made += 1
        return value
