"""Sandboxes: where a bot runs, and what it is run from.

:func:`open_sandbox` opens one of a kind. :mod:`~saloon.worker.sandbox.base` is the one
interface; :mod:`~saloon.worker.sandbox.process` the process sandbox (for laptops, not a
security boundary; its processes and seats are saloon.referee.process's);
:mod:`~saloon.worker.sandbox.docker` and :mod:`~saloon.worker.sandbox.docker_seat` the
production sandbox (a locked-down container per bot runtime, kept warm);
:mod:`~saloon.worker.sandbox.images` the bot images; :mod:`~saloon.worker.sandbox.packages`
the bot package format and its checks; :mod:`~saloon.worker.sandbox.stored` stored bot
versions, unpacked where they are seated.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any

from saloon.worker.errors import UnknownSandbox

if TYPE_CHECKING:
    from saloon.worker.sandbox.base import Sandbox


class SandboxKind(StrEnum):
    """Where a match's bot runtimes run: the kinds :func:`open_sandbox` opens."""

    #: Plain processes (saloon.worker.sandbox.process): for laptops, not a security boundary.
    PROCESS = "process"
    #: A locked-down container per bot runtime (saloon.worker.sandbox.docker).
    DOCKER = "docker"


def open_sandbox(kind: str, **kw: Any) -> Sandbox:
    """A sandbox of ``kind`` (a SandboxKind or its value); keyword arguments go to its class."""
    if kind == SandboxKind.PROCESS:
        # Imported here, as the docker library below: naming a kind costs no import.
        from saloon.worker.sandbox.process import ProcessSandbox

        return ProcessSandbox(**kw)
    if kind == SandboxKind.DOCKER:
        # Imported here: the docker library is only needed where containers run.
        from saloon.worker.sandbox.docker import DockerSandbox

        return DockerSandbox(**kw)
    raise UnknownSandbox(
        f"unknown sandbox {kind!r}: expected one of {', '.join(k.value for k in SandboxKind)}"
    )
