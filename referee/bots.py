"""Turning a seat specification into a :class:`Seat`.

* ``house:NAME``: a house bot, in the referee's process (trusted, not clocked);
* ``grpc:TARGET``: a bot runtime already serving at a gRPC target (``grpc:unix:/tmp/b.sock``,
  ``grpc:127.0.0.1:50051``), e.g. one started by hand under a debugger;
* a path to a bot file (``.py``) or folder (with ``bot.py``): run as its own runtime
  process talking gRPC over a unix socket, the same path a container takes. The referee
  never imports a bot's code itself.
"""

from __future__ import annotations

from pathlib import Path

from saloon.referee.errors import BotSpecError
from saloon.referee.record import saloon_version
from saloon.referee.seats import InProcessSeat, Seat
from saloon.sdk.errors import BotLoadError, UnknownHouseBot
from saloon.sdk.house import make_house_bot
from saloon.sdk.loader import bot_entry, bot_version

HOUSE_PREFIX = "house:"
GRPC_PREFIX = "grpc:"


def resolve_seat(spec: str, game_id: str) -> Seat:
    """A seat for ``spec`` (see the module docstring); BotSpecError when it names nothing."""
    if spec.startswith(HOUSE_PREFIX):
        name = spec[len(HOUSE_PREFIX) :]
        try:
            return InProcessSeat(
                make_house_bot(game_id, name), spec, bot_version=f"saloon-{saloon_version()}"
            )
        except UnknownHouseBot as exc:
            raise BotSpecError(str(exc)) from None
    if spec.startswith(GRPC_PREFIX):
        target = spec[len(GRPC_PREFIX) :]
        if not target:
            raise BotSpecError(f"seat {spec!r}: expected grpc:TARGET (grpc:unix:PATH)")
        # Imported here: a match of house bots only never loads grpc (~80 ms).
        from saloon.referee.remote import GrpcSeat

        return GrpcSeat(target, spec)
    if Path(spec).exists():
        try:
            bot_entry(spec)
        except BotLoadError as exc:
            raise BotSpecError(str(exc)) from None
        from saloon.referee.remote import ProcessSeat

        seat = ProcessSeat(spec)
        seat.bot_version = bot_version(spec)
        return seat
    raise BotSpecError(
        f"seat {spec!r}: expected house:NAME, grpc:TARGET or a path to a bot file or folder"
    )
