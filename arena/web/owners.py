"""Who is signed in, and whether they own a seat's bot (the seat view is theirs alone)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import HTTPConnection

from saloon.arena.registry import User
from saloon.arena.web.errors import Forbidden
from saloon.arena.web.sessions import COOKIE
from saloon.referee.record import MatchRecord
from saloon.sdk.botref import STORED, parse_entry

if TYPE_CHECKING:
    from saloon.arena.web.app import WebContext


def signed_in_user(request: HTTPConnection) -> User | None:
    """The user of the request's session cookie, or None."""
    ctx: WebContext = request.app.state.ctx
    return ctx.sessions.user(request.cookies.get(COOKIE))


def seat_owner_check(ctx: WebContext, record: MatchRecord, seat: int, user: User) -> None:
    """Forbidden unless ``user`` owns the stored bot that sat in ``seat``."""
    if not 0 <= seat < len(record.seats):
        raise Forbidden(f"match {record.match_id} has no seat {seat}")
    entry = parse_entry(record.seats[seat].bot)
    stored = ctx.store.bot(entry.name) if entry.kind == STORED else None
    if stored is None or stored.owner != user.name:
        raise Forbidden(f"seat {seat} of this match is not a bot of {user.name}")
