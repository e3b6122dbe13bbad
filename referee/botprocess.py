"""A bot runtime in a local process: started by the referee, stderr kept, killed by id.

The process runs ``python -m saloon.sdk.run BOT --socket PATH`` in its own process group
(so the bot's own children go with it) and is only ever signalled through the id of the
group the referee created. This is the local process sandbox's starting point; it is NOT a
security boundary (containers are).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)

#: Bytes of a bot's stderr kept per process; the rest is counted and dropped.
STDERR_CAP_BYTES = 64 * 1024
#: Time a bot process gets to exit after SIGTERM before SIGKILL.
TERM_GRACE_S = 0.5
SOCKET_NAME = "bot.sock"


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


class BotProcess:
    """One bot runtime process listening on its own unix socket."""

    def __init__(self, bot: str, command: list[str] | None = None) -> None:
        """``command`` replaces the default runtime argv; ``{socket}`` is the socket path."""
        self.bot = bot
        self.command = command or [
            sys.executable,
            "-m",
            "saloon.sdk.run",
            bot,
            "--socket",
            "{socket}",
        ]
        self.stderr = CappedBuffer()
        self._dir = Path(tempfile.mkdtemp(prefix="saloon-bot-"))
        self.socket_path = self._dir / SOCKET_NAME
        self.proc: subprocess.Popen[bytes] | None = None
        self._drain: threading.Thread | None = None

    def spawn(self) -> None:
        """Start the process (returns at once; :meth:`wait_socket` waits for it to serve)."""
        if self.proc is not None:
            return
        argv = [arg.replace("{socket}", str(self.socket_path)) for arg in self.command]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=env,
        )
        self._drain = threading.Thread(
            target=self._drain_stderr,
            args=(self.proc.stderr,),
            name=f"stderr-{self.proc.pid}",
            daemon=True,
        )
        self._drain.start()

    def _drain_stderr(self, stream: IO[bytes]) -> None:
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            self.stderr.add(chunk)

    def exit_code(self) -> int | None:
        """The exit code once the process has exited, else None."""
        return None if self.proc is None else self.proc.poll()

    def kill(self) -> None:
        """SIGTERM the process group, SIGKILL what is left after a grace; idempotent."""
        proc = self.proc
        if proc is not None:
            pgid = proc.pid  # start_new_session: the group id is the pid we started
            if proc.poll() is None:
                _signal_group(pgid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(TERM_GRACE_S)
            _signal_group(pgid, signal.SIGKILL)
            proc.wait()
            if self._drain is not None:
                self._drain.join(1.0)
            if proc.stderr is not None:
                proc.stderr.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def stderr_tail(self, limit: int = 400) -> str:
        """The end of what the bot wrote to stderr so far, on one line."""
        text = self.stderr.text().strip().replace("\n", " | ")
        return text[-limit:]


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
