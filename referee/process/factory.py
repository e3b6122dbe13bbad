"""Process factories: what makes a process seat's bot process.

A :data:`ProcessFactory` is called ``(bot_path, command, limits)`` and returns the
:class:`~saloon.referee.process.bot.BotProcess` a seat runs
(saloon.referee.process.seat.ProcessSeat); the process sandbox that hands seats out takes
one too (saloon.worker.sandbox.process.ProcessSandbox). A class of bot process is one
(``BotProcess``, ``NodeBotProcess``); the two here choose the runtime by the bot's
language:

* :func:`sandbox_process`: Python's runtime, or for a JavaScript folder the kit's Node.js
  runtime on this machine's node (SandboxUnusable when node or the kit's packages are
  missing here);
* :func:`watched_process`: the same, under the parent-death watch of the process that
  calls it (saloon.referee.process.watch): what a worker's sandbox makes, so that its
  bot processes die with it.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from saloon.referee.errors import SandboxUnusable
from saloon.referee.limits import DEFAULT_SANDBOX_LIMITS, SandboxLimits
from saloon.referee.process.bot import BotProcess
from saloon.referee.process.node import NodeBotProcess, node_unusable
from saloon.referee.process.watch import PARENT_WATCH
from saloon.sdk.languages import Language, ManifestError, detect_path

#: What makes a process seat's bot process: ``(bot_path, command, limits) -> BotProcess``.
ProcessFactory = Callable[[str, "list[str] | None", SandboxLimits], BotProcess]


def runtime_of(bot_path: str) -> type[BotProcess]:
    """The runtime process of the bot at ``bot_path``: Python's, or for a JavaScript
    folder the kit's Node.js runtime on this machine's node (saloon.referee.process.node);
    SandboxUnusable when node or the kit's packages are missing here. A folder whose
    language is unclear is left to Python's loader, which says what is wrong."""
    if not os.path.isdir(bot_path):
        return BotProcess
    try:
        language = detect_path(bot_path).language
    except ManifestError:
        return BotProcess
    if language is not Language.JAVASCRIPT:
        return BotProcess
    reason = node_unusable(language)
    if reason is not None:
        raise SandboxUnusable(f"the process sandbox cannot run JavaScript bots here: {reason}")
    return NodeBotProcess


def sandbox_process(
    bot_path: str,
    command: list[str] | None = None,
    limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
) -> BotProcess:
    """The bot process of the bot at ``bot_path``, its runtime by its language."""
    return runtime_of(bot_path)(bot_path, command, limits)


def watched_process(
    bot_path: str,
    command: list[str] | None = None,
    limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
) -> BotProcess:
    """:func:`sandbox_process` under the parent-death watch of the calling process: it
    dies with it (Linux)."""
    return runtime_of(bot_path)(bot_path, command, limits, watch=PARENT_WATCH)
