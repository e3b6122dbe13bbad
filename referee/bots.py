"""Turning a seat specification (``house:NAME`` or a bot path) into a :class:`Seat`."""

from __future__ import annotations

from saloon.referee.errors import BotSpecError
from saloon.referee.seats import InProcessSeat, Seat
from saloon.sdk.errors import UnknownHouseBot
from saloon.sdk.house import make_house_bot

HOUSE_PREFIX = "house:"


def resolve_seat(spec: str, game_id: str) -> Seat:
    """A seat for ``spec``: ``house:NAME`` runs in-process; BotSpecError otherwise."""
    if spec.startswith(HOUSE_PREFIX):
        name = spec[len(HOUSE_PREFIX) :]
        try:
            return InProcessSeat(make_house_bot(game_id, name), spec)
        except UnknownHouseBot as exc:
            raise BotSpecError(str(exc)) from None
    raise BotSpecError(f"seat {spec!r}: expected house:NAME")
