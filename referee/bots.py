"""Turning a seat specification into a :class:`Seat`.

The seat forms (parsed by :func:`saloon.sdk.botref.parse_seat`):

* ``house:NAME``: a house bot, in the referee's process (trusted, not clocked);
* ``grpc:TARGET``: a bot runtime already serving at a gRPC target (``grpc:unix:/tmp/b.sock``,
  ``grpc:127.0.0.1:50051``), e.g. one started by hand under a debugger;
* a path to a bot file (``.py``) or folder (with ``bot.py``): run as its own runtime
  process talking gRPC over a unix socket, the same path a container takes. The referee
  never imports a bot's code itself. A JavaScript folder (``saloon.toml`` or ``bot.js``)
  runs the kit's Node.js runtime on the machine's ``node``
  (:mod:`saloon.referee.process.node`); TypeScript and compiled languages need
  ``--sandbox docker``;
* ``KIND:PATH`` for a seat kind that a higher layer hands in (``kinds``: the ``saloon``
  command gives ``docker``, so ``docker:mybot/`` runs the bot in the Docker sandbox, as the
  arena does); each kind is a factory ``(path, game_id) -> Seat``. With ``sandbox=KIND``, a
  bare path is taken as ``KIND:PATH`` (``process``, the default, is the local process).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from saloon.referee.errors import BotSpecError
from saloon.referee.record import saloon_version
from saloon.referee.seats import InProcessSeat, Seat, SeatFactory
from saloon.sdk.botref import GRPC, HOUSE, parse_seat
from saloon.sdk.errors import BotLoadError, UnknownHouseBot
from saloon.sdk.house import make_house_bot
from saloon.sdk.languages import SPECS, Language, ManifestError, detect_path
from saloon.sdk.loader import bot_entry, bot_version, load_bot

#: How long to wait for a TCP ``grpc:HOST:PORT`` target to accept before saying so.
PROBE_TIMEOUT_S = 2.0
#: The sandbox of a bare bot path unless told otherwise: the local process.
PROCESS_SANDBOX = "process"


def resolve_seat(
    spec: str,
    game_id: str,
    debug: bool = False,
    sandbox: str = PROCESS_SANDBOX,
    kinds: Mapping[str, SeatFactory] | None = None,
) -> Seat:
    """A seat for ``spec`` (see the module docstring); BotSpecError when it names nothing.

    ``debug``: a bot path is loaded into this process instead (no clocks, and its
    exceptions propagate to a debugger instead of becoming faults). ``sandbox``: where a
    bare bot path runs (one of ``kinds``, or the local process). ``kinds``: the seat kinds
    of higher layers, by name.
    """
    kinds = kinds or {}
    ref = parse_seat(spec, kinds)
    if ref.is_seat_kind:
        return kinds[ref.kind](ref.name, game_id)
    if sandbox != PROCESS_SANDBOX and not debug and Path(spec).exists():
        factory = kinds.get(sandbox)
        if factory is None:
            known = ", ".join([PROCESS_SANDBOX, *sorted(kinds)])
            raise BotSpecError(f"unknown sandbox {sandbox!r} (sandboxes here: {known})")
        return factory(spec, game_id)
    if ref.kind == HOUSE:
        try:
            return InProcessSeat(
                make_house_bot(game_id, ref.name),
                spec,
                bot_version=f"saloon-{saloon_version()}",
                debug=debug,
            )
        except UnknownHouseBot as exc:
            raise BotSpecError(str(exc)) from None
    if ref.kind == GRPC:
        target = ref.name
        if not target:
            raise BotSpecError(f"seat {spec!r}: expected grpc:TARGET (grpc:unix:PATH)")
        _probe(spec, target)
        # Imported here: a match of house bots only never loads grpc (~80 ms).
        from saloon.referee.remote import GrpcSeat

        return GrpcSeat(target, spec)
    language = _language(spec)
    if language is not None and language is not Language.PYTHON:
        return _node_seat(spec, language, debug)
    try:
        bot_entry(spec)
        if debug:
            bot = load_bot(spec)(game_id)
            return InProcessSeat(bot, spec, bot_version=bot_version(spec), debug=True)
    except BotLoadError as exc:
        hint = (
            ""
            if Path(spec).exists()
            else " (a seat is house:NAME, grpc:TARGET, a path, or KIND:PATH with a "
            f"registered seat kind: {', '.join(sorted(kinds)) or 'none'})"
        )
        raise BotSpecError(f"seat {spec!r}: {exc}{hint}") from None
    from saloon.referee.process.seat import ProcessSeat

    seat = ProcessSeat(spec)
    seat.bot_version = bot_version(spec)
    return seat


def _language(spec: str) -> Language | None:
    """The language of the bot folder at ``spec`` (None: not a folder, so Python's loader
    says what is wrong); BotSpecError when the folder's language is unclear."""
    if not Path(spec).is_dir():
        return None
    try:
        return detect_path(spec).language
    except ManifestError as exc:
        raise BotSpecError(str(exc)) from None


def _node_seat(spec: str, language: Language, debug: bool) -> Seat:
    """A JavaScript bot folder in the process sandbox (saloon.referee.process.node)."""
    from saloon.referee.process.node import NodeBotProcess, node_unusable

    if language not in (Language.JAVASCRIPT, Language.TYPESCRIPT):
        raise BotSpecError(
            f"seat {spec!r}: {SPECS[language].label} bots run in their runtime image: "
            "use --sandbox docker"
        )
    if debug:
        raise BotSpecError(f"seat {spec!r}: --debug loads Python bots only")
    reason = node_unusable(language)
    if reason is not None:
        raise BotSpecError(f"seat {spec!r}: {reason}")
    from saloon.referee.process.seat import ProcessSeat

    seat = ProcessSeat(spec, process=NodeBotProcess)
    seat.bot_version = bot_version(spec)
    return seat


def _probe(spec: str, target: str) -> None:
    """BotSpecError at once, with the reason, when nothing listens at a gRPC target."""
    if target.startswith("unix:"):
        path = target[len("unix:") :].removeprefix("//")
        family: int = socket.AF_UNIX
        address: str | tuple[Any, ...] = path
        where = path
    else:
        host, sep, port = target.rpartition(":")
        if not sep or not port.isdigit():
            raise BotSpecError(f"seat {spec!r}: expected grpc:unix:PATH or grpc:HOST:PORT")
        where = target
        try:
            info = socket.getaddrinfo(host.strip("[]"), int(port), type=socket.SOCK_STREAM)
        except OSError as exc:
            raise BotSpecError(f"seat {spec!r}: cannot resolve {host}: {exc}") from None
        family, address = info[0][0], info[0][4]
    probe = socket.socket(family, socket.SOCK_STREAM)
    probe.settimeout(PROBE_TIMEOUT_S)
    try:
        probe.connect(address)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise BotSpecError(
            f"seat {spec!r}: nothing is listening at {where} ({reason}); start the bot "
            "first: python -m saloon.sdk.run BOT --socket PATH"
        ) from None
    finally:
        probe.close()
