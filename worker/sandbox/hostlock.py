"""A lock the processes of one host (of one uid) share: ``flock`` on a file of its own.

The Docker sandbox builds a new bot version's image under it, so that the workers of a
host (one engine, several processes) build it once: each process already builds it once
for all its own threads (DockerSandbox.image), but two processes that meet a new version
at once each built it, ran a compiled language's build step twice, and left the engine an
untagged image.

The kernel drops a ``flock`` when its holder's file closes, so a killed holder frees it at
once. Every wait is bounded: a caller that does not get the lock in time is told so and
goes on without it (a build twice is waste, never a wrong image).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

#: Where the lock files are: ``$SALOON_LOCK_DIR``; else ``locks`` in the package cache
#: when ``$SALOON_PACKAGE_CACHE`` names one (deploy/compose*.yaml: the workers of a host,
#: each in a container of its own, share that volume, and so the locks); else a folder of
#: this uid's under the temporary directory. Made mode 0700; it must be this uid's own.
LOCK_DIR_ENV = "SALOON_LOCK_DIR"
#: How often a waiter tries again.
POLL_S = 0.05
#: Lock files in all: a name's lock is one of them (by its hash), so the folder stays this
#: small however many names are locked over a host's life (a file per version would grow
#: without end, and removing a flock's file races with its next taker). Two names share a
#: file 1 time in BUCKETS: then one waits for the other, which is only slower.
BUCKETS = 64

log = logging.getLogger(__name__)


def lock_dir() -> Path:
    """The folder of this uid's host locks (made when missing; PermissionError when it is
    not this uid's own)."""
    from saloon.worker.sandbox.stored import CACHE_ENV  # its name only (stored is heavy)

    env = os.environ.get(LOCK_DIR_ENV)
    cache = os.environ.get(CACHE_ENV)
    if env:
        folder = Path(env)
    elif cache:
        folder = Path(cache) / "locks"
    else:
        folder = Path(tempfile.gettempdir()) / f"saloon-locks-{os.getuid()}"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.lstat().st_uid != os.getuid() or folder.is_symlink():
        raise PermissionError(f"{folder} is not this uid's own folder: no host lock there")
    return folder


@contextlib.contextmanager
def host_lock(name: str, timeout_s: float) -> Iterator[bool]:
    """Hold the host lock ``name`` (any text; its file is one of :data:`BUCKETS`) for the
    ``with`` block; yields True when it is held, False when another process held it for
    all of ``timeout_s`` or there is no lock to be had (its folder will not do: logged).
    On False the block runs without it."""
    bucket = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big") % BUCKETS
    try:
        path = lock_dir() / f"{bucket:02d}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:  # a lock is an economy: without one the work is done all the same
        log.warning("no host lock for %s: %s", name, exc)
        yield False
        return
    try:
        deadline = time.monotonic() + timeout_s
        held = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise
            if time.monotonic() >= deadline:
                break
            time.sleep(POLL_S)
        yield held
    finally:
        os.close(fd)  # drops the lock with the file
