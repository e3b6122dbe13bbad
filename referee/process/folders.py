"""A bot process's own folder: its name, which says who started it, and where it goes.

A bot's own folder is ``<root>/saloon-bot-<pid>-<start>-<pidns>-<random>``: the pid, start
time and PID namespace of the process that made it (:func:`bot_dir_prefix`), so that a
sweep (saloon.referee.process.orphans) finds what a process killed with -9 left running,
and never mistakes another process that got its pid for it. The folder is the bot's home
and temp dir, holds its socket (:data:`SOCKET_NAME`) and, under another uid, its copy of
the bot.
"""

from __future__ import annotations

import functools
import logging
import os
import stat
import tempfile
from pathlib import Path

from saloon.referee.errors import SandboxUnusable

log = logging.getLogger(__name__)

#: How every bot folder's name starts (see the module's docstring).
BOT_DIR_PREFIX = "saloon-bot-"
#: The runtime's socket, in the bot's folder.
SOCKET_NAME = "bot.sock"


def process_start(pid: int, proc: str = "/proc") -> tuple[str, int] | None:
    """The state (``R``, ``S``, ``Z``...) of process ``pid`` and when it started, in clock
    ticks after boot (``/proc/<pid>/stat``; a pid and its start time name one process for
    good, where a pid alone is reused); None when there is no such process."""
    try:
        with open(f"{proc}/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def pid_namespace(pid: int | str = "self", proc: str = "/proc") -> int:
    """The PID namespace of process ``pid`` (the inode of its ``ns/pid``; 0 without /proc)."""
    try:
        return os.stat(f"{proc}/{pid}/ns/pid").st_ino
    except OSError:
        return 0


@functools.cache
def _own_prefix(pid: int) -> str:
    started = process_start(pid)
    return f"{BOT_DIR_PREFIX}{pid}-{started[1] if started else 0}-{pid_namespace()}-"


def bot_dir_prefix() -> str:
    """The prefix of the bot folders this process makes: its pid, start time and PID
    namespace (0 and 0 without /proc)."""
    return _own_prefix(os.getpid())


def _others_can_enter(path: Path) -> bool:
    """True when a uid that neither owns nor shares a group with them can pass through
    ``path`` and every folder above it."""
    for folder in (path, *path.parents):
        try:
            if not folder.stat().st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def others_can_read(path: Path) -> bool:
    """True when a uid that neither owns nor shares a group with it can read the file
    ``path`` (a bot's own uid: the runtime files it runs from)."""
    try:
        return bool(path.stat().st_mode & stat.S_IROTH) and _others_can_enter(path.parent)
    except OSError:
        return False


@functools.cache
def _fallback_warned(tmp: str) -> None:
    log.warning(
        "TMPDIR %s is closed to other users (mode 0700?): bots run as their own uid, so their "
        "folders go under /tmp instead",
        tmp,
    )


def sandbox_root(uid: int | None) -> str:
    """Where bot folders go: the temp dir, unless the bot runs as another uid that cannot
    enter it (a root referee with a TMPDIR of mode 0700), then /tmp; SandboxUnusable when
    neither would do."""
    tmp = tempfile.gettempdir()
    if uid is None or _others_can_enter(Path(tmp)):
        return tmp
    if _others_can_enter(Path("/tmp")) and os.access("/tmp", os.W_OK):
        _fallback_warned(tmp)
        return "/tmp"
    raise SandboxUnusable(
        f"TMPDIR {tmp} is closed to other users and /tmp is unusable: a bot runs as its own "
        "uid and could not read its own files (give TMPDIR mode 0711, or another TMPDIR)"
    )


def chown_tree(root: Path, uid: int) -> None:
    """Give ``root`` and everything under it (links themselves, not targets) to ``uid``."""
    os.lchown(root, uid, uid)
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.lchown(os.path.join(folder, name), uid, uid)
