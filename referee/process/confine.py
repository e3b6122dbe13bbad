"""What holds a bot process in: containment, rlimits, its uid and its environment.

* containment: where the kernel allows, the runtime is PID 1 of its own PID namespace
  (``unshare --pid --fork --kill-child --mount-proc``, util-linux), so every process the
  bot starts, even one that calls ``setsid``, dies with it; as root directly, otherwise in
  a user namespace when unprivileged ones are allowed, else (a plain process group) a
  child that calls ``setsid`` can outlive the match -- :func:`containment` says which;
* when the referee runs as root, the bot runs as an unprivileged uid of its own
  (:func:`bot_uid`: root ignores RLIMIT_NPROC, and a uid per bot keeps bots out of each
  other's process quota);
* rlimits from :class:`~saloon.referee.limits.SandboxLimits` (:func:`rlimits`; ``prlimit``,
  util-linux, or set by Python before exec where util-linux is missing): address space,
  CPU seconds, open files, file size, processes (own uid only), no core;
* an allow-listed environment (:func:`sandbox_env`): nothing of the referee's (database
  URLs, tokens, paths).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import resource
import shutil
import subprocess
from enum import StrEnum
from pathlib import Path

from saloon.referee.limits import SandboxLimits

log = logging.getLogger(__name__)

#: Address space on top of ``SandboxLimits.memory_mb``: a runtime serving a match maps
#: ~205 MiB of virtual memory for ~47 MiB resident (thread stacks, grpc, two malloc
#: arenas), measured with MALLOC_ARENA_MAX=2 on Python 3.11 / grpcio 1.85.
ADDRESS_SPACE_HEADROOM_MB = 256
#: First uid of the range a root referee runs bots as (no passwd entry needed).
SANDBOX_UID_BASE = 900_000_000
#: Size of that range: each bot process of a referee process gets its own uid in it.
SANDBOX_UID_SPAN = 1_000_000
#: Variables a bot process may inherit from the referee (what Python needs to run).
ENV_ALLOW = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
)
#: ``unshare``'s options for a PID namespace whose every process dies with its first.
UNSHARE_ARGS = ("--pid", "--fork", "--kill-child", "--mount-proc")

_uids = itertools.count()


class Containment(StrEnum):
    """How the processes a bot starts are tied to its runtime process."""

    #: Own PID namespace (the referee is root): every descendant dies with the runtime.
    PID_NAMESPACE = "pid-namespace"
    #: Own user + PID namespace (unprivileged referee): the same, without root.
    USER_NAMESPACE = "user-namespace"
    #: A process group only: a descendant that calls setsid escapes it.
    PROCESS_GROUP = "process-group"


@functools.cache
def have_util_linux() -> bool:
    """True when prlimit and setpriv (util-linux) are here; else Python sets the limits."""
    return shutil.which("prlimit") is not None and shutil.which("setpriv") is not None


@functools.cache
def containment() -> Containment:
    """The strongest containment this machine allows (probed once per process)."""
    unshare = shutil.which("unshare")
    if unshare is not None and have_util_linux():
        tries = [(Containment.USER_NAMESPACE, ["--user", "--map-root-user"])]
        if os.geteuid() == 0:
            tries.insert(0, (Containment.PID_NAMESPACE, []))
        for kind, extra in tries:
            probe = [unshare, *extra, *UNSHARE_ARGS, "true"]
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
                if done.returncode == 0:
                    return kind
    log.warning("no PID namespace here: a bot's child that calls setsid can outlive its match")
    return Containment.PROCESS_GROUP


def bot_uid() -> int | None:
    """The uid the next bot process runs as: one of its own when the referee is root (in
    :data:`SANDBOX_UID_BASE`'s range, by this process and a count), else None (the
    referee's own)."""
    if os.geteuid() != 0:
        return None
    return SANDBOX_UID_BASE + (os.getpid() * 64 + next(_uids)) % SANDBOX_UID_SPAN


def sandbox_env(home: Path) -> dict[str, str]:
    """The environment of a bot process: the allow-list, and its own home and temp dir."""
    env = {name: os.environ[name] for name in ENV_ALLOW if name in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(
        HOME=str(home),
        TMPDIR=str(home),
        PYTHONUNBUFFERED="1",
        # Fewer malloc arenas: far less virtual memory per thread under RLIMIT_AS.
        MALLOC_ARENA_MAX="2",
    )
    return env


def rlimits(
    limits: SandboxLimits, own_uid: bool, headroom_mb: int = ADDRESS_SPACE_HEADROOM_MB
) -> list[tuple[str, int, int]]:
    """(name, soft, hard) rlimits for ``limits``; RLIMIT_NPROC only under the bot's own uid.

    Names as ``prlimit --NAME`` and ``resource.RLIMIT_NAME`` spell them. ``headroom_mb``:
    address space on top of ``limits.memory_mb`` (what the runtime maps and never uses).
    """
    mib = 1024 * 1024
    address_space = (limits.memory_mb + headroom_mb) * mib
    out = [
        ("as", address_space, address_space),
        # Soft limit: SIGXCPU; hard limit a little later: SIGKILL.
        ("cpu", limits.cpu_seconds, limits.cpu_seconds + 5),
        ("nofile", limits.open_files, limits.open_files),
        ("fsize", limits.tmpfs_mb * mib, limits.tmpfs_mb * mib),
        ("core", 0, 0),
    ]
    if own_uid:
        out.append(("nproc", limits.pids, limits.pids))
    return out


def rlimit_args(
    limits: SandboxLimits, own_uid: bool, headroom_mb: int = ADDRESS_SPACE_HEADROOM_MB
) -> list[str]:
    """``prlimit`` options for ``limits``."""
    values = rlimits(limits, own_uid, headroom_mb)
    return [f"--{name}={soft}:{hard}" for name, soft, hard in values]


def set_rlimits(values: list[tuple[str, int, int]], uid: int | None) -> None:
    """In the child before exec, when prlimit/setpriv are missing (not Linux util-linux):
    the rlimits ``values``, then the uid ``uid`` (None: keep the referee's)."""
    for name, soft, hard in values:
        resource.setrlimit(getattr(resource, f"RLIMIT_{name.upper()}"), (soft, hard))
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
