"""A failure that repeats, logged as an operator wants it: once in full, then a line now and
then while it lasts, and once when it ends.

The server's background threads (re-arming schedules, re-enqueueing lost matches, driving
continuous ladders) retry every few seconds or less: while Redis or the store is away, a
traceback at every try flooded the log (one every 0.5 s per ladder).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

#: While a failure repeats, one line about it at most this often (seconds).
REPEAT_EVERY_S = 60.0


class RepeatedFailure:
    """What ``what`` (e.g. "driving continuous ladders") does when it fails again and again;
    call :meth:`failed` in its ``except`` block and :meth:`succeeded` after a try that
    worked. ``clock`` is for tests."""

    def __init__(
        self,
        log: logging.Logger,
        what: str,
        every_s: float = REPEAT_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.log = log
        self.what = what
        self.every_s = every_s
        self.clock = clock
        self.count = 0  # failures in a row
        self._said_at = 0.0

    def failed(self) -> None:
        """One more failure (inside the ``except`` block: the first is logged with its
        traceback, the next ones as a line at most every ``every_s``)."""
        self.count += 1
        now = self.clock()
        if self.count == 1:
            self.log.exception("%s failed (tried again until it works)", self.what)
            self._said_at = now
        elif now - self._said_at >= self.every_s:
            self.log.warning("%s still failing (%d tries in a row)", self.what, self.count)
            self._said_at = now

    def succeeded(self) -> None:
        """A try that worked (after failures: one line saying so)."""
        if self.count:
            self.log.warning("%s works again (after %d failed tries)", self.what, self.count)
        self.count = 0
