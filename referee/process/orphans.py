"""Sweeping orphans: bot processes of this host whose starter is gone, killed.

A bot process's folder, its TMPDIR, names the process that started it
(saloon.referee.process.folders); :func:`sweep_orphans` finds the bot processes whose
starter is gone and kills them. Every worker's keeper calls it every few seconds
(saloon.worker.matches.play.sweep_sandboxes), whatever its sandboxes.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal

from saloon.referee.process.folders import BOT_DIR_PREFIX, pid_namespace, process_start

#: ``TMPDIR=<root>/saloon-bot-<pid>-<start>-<pidns>-...`` in a bot process's environment
#: (saloon.referee.process.folders.bot_dir_prefix): what it names is the process that started it.
_BOT_TMPDIR = re.compile(
    rb"(?:^|\0)TMPDIR=([^\0]*/" + BOT_DIR_PREFIX.encode() + rb"(\d+)-(\d+)-(\d+)-[^\0/]*)"
)


def sweep_orphans(proc: str = "/proc") -> int:
    """Kill every bot process of this host whose starter is gone; how many were killed.

    A worker's bot processes die with it (saloon.referee.process.watch.ParentWatch);
    this is the backstop, for any process that started bots (``saloon play`` too) and for
    a bot's descendants that no PID namespace holds. A bot process's TMPDIR names its
    starter by pid, start time and PID namespace: the starter is gone when no process of
    that pid and start time lives (a zombie is gone; a pid now another process's is gone).
    Bots whose starter is of another PID namespace (another container's) are left to the
    keepers there. Each candidate is killed with its process group, and its folder
    removed; it counts once it or its group got the signal (a group's leader killed with
    it may be reaped at once, before it is signalled alone). Linux (/proc), every uid's
    only as root: one read of each process's environment, a few ms per sweep for a few
    hundred processes.
    """
    own_ns = pid_namespace(proc=proc)
    try:
        pids = [int(name) for name in os.listdir(proc) if name.isdigit()]
    except OSError:  # no /proc: not Linux
        return 0
    me = os.getpid()
    starters: dict[tuple[int, int], bool] = {}
    killed = 0
    folders: set[str] = set()
    for pid in pids:
        if pid == me:
            continue
        try:
            fd = os.open(f"{proc}/{pid}/environ", os.O_RDONLY)
        except OSError:  # gone, or another uid's (not root)
            continue
        try:
            environ = os.read(fd, 1 << 16)
        except OSError:
            continue
        finally:
            os.close(fd)
        if BOT_DIR_PREFIX.encode() not in environ:
            continue
        found = _BOT_TMPDIR.search(environ)
        if found is None or int(found.group(4)) != own_ns:
            continue
        starter = (int(found.group(2)), int(found.group(3)))
        if starter not in starters:
            starters[starter] = _alive(*starter, proc=proc)
        if starters[starter]:
            continue
        if _kill(pid):
            killed += 1
        folders.add(found.group(1).decode(errors="replace"))
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return killed


def _kill(pid: int) -> bool:
    """SIGKILL process ``pid`` and the group it leads, if it does; True when either got
    the signal. Its group first: the process, its leader, may then be reaped (by its
    parent, or the init that adopted it) before it is signalled alone, and was killed all
    the same."""
    sent = False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
        sent = True
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)
        sent = True
    return sent


def _alive(pid: int, started: int, proc: str) -> bool:
    """True when process ``pid``, started at ``started`` (clock ticks after boot), lives."""
    state = process_start(pid, proc)
    return state is not None and state[0] not in ("Z", "X") and state[1] == started
