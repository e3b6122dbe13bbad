"""Sandboxes: where a bot runs, and what it is run from.

:func:`open_sandbox` opens one of a kind. :mod:`~saloon.worker.sandbox.base` is the one
interface and the process sandbox (for laptops, not a security boundary);
:mod:`~saloon.worker.sandbox.docker` and :mod:`~saloon.worker.sandbox.docker_seat` the
production sandbox (a locked-down container per bot runtime, kept warm);
:mod:`~saloon.worker.sandbox.images` the bot images; :mod:`~saloon.worker.sandbox.packages`
the bot package format and its checks; :mod:`~saloon.worker.sandbox.stored` stored bot
versions, unpacked where they are seated.
"""

from __future__ import annotations

from typing import Any

from saloon.worker.errors import UnknownSandbox
from saloon.worker.sandbox.base import ProcessSandbox, Sandbox

#: The sandbox kinds :func:`open_sandbox` opens.
SANDBOX_KINDS = ("process", "docker")


def open_sandbox(kind: str, **kw: Any) -> Sandbox:
    """A sandbox of ``kind`` (``process`` or ``docker``); keyword arguments go to its class."""
    if kind == "process":
        return ProcessSandbox(**kw)
    if kind == "docker":
        # Imported here: the docker library is only needed where containers run.
        from saloon.worker.sandbox.docker import DockerSandbox

        return DockerSandbox(**kw)
    raise UnknownSandbox(f"unknown sandbox {kind!r}: expected one of {', '.join(SANDBOX_KINDS)}")
