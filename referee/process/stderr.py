"""A bot's stderr: captured, capped, read by a thread that never holds up its match's end.

What the bot wrote is kept for its owner (the first :data:`STDERR_CAP_BYTES`, the rest
counted), without the sandbox's own noise (:data:`STDERR_NOISE`). The Docker sandbox keeps
a container's output the same way (:class:`CappedBuffer`).
"""

from __future__ import annotations

import os
import select
import threading

#: How saloon.sdk.run starts the line saying why a bot did not load.
LOAD_ERROR = "saloon.sdk.run: cannot load the bot: "
#: Bytes of a bot's stderr kept per process; the rest is counted and dropped.
STDERR_CAP_BYTES = 64 * 1024
#: Time the stderr reader gets, after the kill, to read what is left before it is closed.
DRAIN_GRACE_S = 0.2
#: How often the stderr reader checks whether it should stop.
DRAIN_POLL_MS = 50
#: Lines the sandbox's own tools write into a bot's stderr that say nothing of the bot:
#: unshare 2.38's report of a runtime that died of SIGKILL (a kill of the runtime alone,
#: the CPU limit's SIGKILL) while unshare's own process was alive.
STDERR_NOISE = ("unshare: sigprocmask unblock failed: Invalid argument",)


class CappedBuffer:
    """The first ``cap`` bytes of a stream, and how many bytes were dropped after them."""

    def __init__(self, cap: int = STDERR_CAP_BYTES) -> None:
        self.cap = cap
        self.data = bytearray()
        self.dropped = 0
        self._lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        """Keep what fits under the cap, count the rest."""
        with self._lock:
            room = self.cap - len(self.data)
            if room > 0:
                self.data += chunk[:room]
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        """The kept bytes as text, with a note when some were dropped."""
        with self._lock:
            text = self.data.decode("utf-8", errors="replace")
            if self.dropped:
                text += f"\n[... {self.dropped} more bytes of stderr dropped]\n"
            return text


class StderrReader:
    """A thread reading a process's stderr into a :class:`CappedBuffer` until EOF or told
    to stop (a bot's detached child may hold the pipe open past the match)."""

    def __init__(self, buffer: CappedBuffer) -> None:
        self.buffer = buffer
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def start(self, fd: int, name: str) -> None:
        """Read ``fd`` on a daemon thread called ``name``."""
        self._thread = threading.Thread(target=self._read, args=(fd,), name=name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Give the reader :data:`DRAIN_GRACE_S` to read what is left, then stop it (at
        most one :data:`DRAIN_POLL_MS` later); the caller closes the pipe afterwards."""
        if self._thread is None:
            return
        self._thread.join(DRAIN_GRACE_S)
        self._stop.set()
        self._thread.join()

    def _read(self, fd: int) -> None:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        while not self._stop.is_set():
            if not poller.poll(DRAIN_POLL_MS):
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.buffer.add(chunk)


def without_noise(text: str) -> str:
    """``text`` without the lines of :data:`STDERR_NOISE`."""
    if not any(line in text for line in STDERR_NOISE):
        return text
    return "".join(
        line for line in text.splitlines(keepends=True) if line.rstrip("\n") not in STDERR_NOISE
    )
