"""The adapter from the results store (saloon.worker.store.store) to the fold's plain inputs.

Seat bot ids are season entries (saloon.sdk.botref), in three forms: ``house:NAME`` (owner
``house``), ``bot:NAME@VERSION`` (a stored bot; owner from the store's bot registry; shown
as NAME) and a local path (owner ``local``); each may end in ``#TAG``, another entry of the
same bot in one season, which is rated as an entry of its own (shown as ``NAME#TAG``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from saloon.ratings.ladders import Ladder, ladder_for
from saloon.ratings.leaderboard import BotInfo
from saloon.ratings.results import Result, SeatResult
from saloon.referee.record import Outcome
from saloon.sdk.botref import ENTRY_TAG, HOUSE, STORED, parse_entry

if TYPE_CHECKING:
    from saloon.worker.store.rows import ResultRow, SeatRow
    from saloon.worker.store.store import Store

#: Owner shown for house bots and for bots given as local paths.
HOUSE_OWNER, LOCAL_OWNER = "house", "local"
#: Season sequence given to matches recorded outside any season: after every season.
OUTSIDE_SEASONS = 2**31


def bot_name(seat_bot: str) -> tuple[str, str]:
    """(name shown, version written in the id or "") of a seat's bot id."""
    entry = parse_entry(seat_bot)
    if entry.kind == STORED:
        return entry.name + entry.tag_suffix, entry.version
    return seat_bot, ""


def registry_name(shown: str) -> str:
    """The store registry's name of a bot shown as ``shown`` (its ``#TAG`` dropped)."""
    return shown.partition(ENTRY_TAG)[0]


def owner_of(seat_bot: str, owners: dict[str, str]) -> str:
    """The owner of a seat's bot: the registry's, ``house`` or ``local``."""
    entry = parse_entry(seat_bot)
    if entry.kind == HOUSE:
        return HOUSE_OWNER
    if entry.kind == STORED:
        return owners.get(entry.name, "")
    return LOCAL_OWNER


@dataclass
class Loaded:
    """A game's results from the store, as the fold takes them, with who else is known."""

    results: list[Result] = field(default_factory=list)
    #: Bots scheduled in the seasons read (listed unrated when they have no result).
    scheduled: dict[Ladder, dict[str, BotInfo]] = field(default_factory=dict)
    #: Ladders that have results, in first-seen order.
    ladders: list[Ladder] = field(default_factory=list)
    #: Per result: the store's row (for the faults and the listing of recent matches).
    rows: dict[str, ResultRow] = field(default_factory=dict)


def seat_results(seats: Iterable[SeatRow], owners: dict[str, str]) -> tuple[SeatResult, ...]:
    """A stored result's seats as fold inputs (aborted seats rank 0, score 0)."""
    out = []
    for seat in seats:
        name, version = bot_name(seat.bot)
        out.append(
            SeatResult(
                bot=name,
                version=seat.version or version,
                rank=seat.rank if seat.rank is not None else 0,
                score=seat.score if seat.score is not None else 0.0,
                owner=owner_of(seat.bot, owners),
                played_out=seat.played_out,
                faults=seat.faults,
            )
        )
    return tuple(out)


def to_result(row: ResultRow, seq: int, deal: Any, owners: dict[str, str]) -> Result:
    """One store row as a fold input (aborted rows keep their seats, ranks 0)."""
    season = row.season_id or ""
    return Result(
        ladder=ladder_for(row.game, row.options),
        match_id=row.match_id,
        order=(seq, row.index if row.index is not None else 0),
        seats=seat_results(row.seats, owners),
        outcome=Outcome(row.outcome.value),
        season=season,
        deal_group=None if deal is None else f"{season}/{deal}",
    )


def load(store: Store, game: str | None = None, season_id: str | None = None) -> Loaded:
    """Every result of ``game`` (or of one season) in the store, as fold inputs."""
    rows = store.results(game=game, season_id=season_id)
    owners = {b.name: b.owner for b in store.bots()}
    season_ids = {r.season_id for r in rows if r.season_id}
    if season_id is not None:
        season_ids.add(season_id)
    else:
        # Every season of the game, not only those with results: a bot scheduled in a
        # season that has no result yet is still listed (unrated) on the all-time board.
        season_ids.update(s.season_id for s in store.seasons(game))
    seqs: dict[str, int] = {}
    deals: dict[str, Any] = {}
    loaded = Loaded()
    for sid in sorted(season_ids):
        season = store.season(sid)
        if season is None:
            continue
        seqs[sid] = season.seq
        for match in store.scheduled(sid):
            deals[match.match_id] = match.spec.get("deal")
            options = match.spec.get("options", {})
            ladder = ladder_for(season.game, with_defaults(season.game, options))
            known = loaded.scheduled.setdefault(ladder, {})
            for seat_bot in match.spec.get("seats", []):
                name, version = bot_name(str(seat_bot))
                known.setdefault(name, BotInfo(name, owner_of(str(seat_bot), owners), version))
    for row in rows:
        seq = seqs.get(row.season_id or "", OUTSIDE_SEASONS)
        result = to_result(row, seq, deals.get(row.match_id), owners)
        loaded.results.append(result)
        loaded.rows[row.match_id] = row
        if result.ladder not in loaded.ladders:
            loaded.ladders.append(result.ladder)
    return loaded


def with_defaults(game: str, options: dict[str, Any]) -> dict[str, Any]:
    """A scheduled match's options with the game's defaults filled in (as records have)."""
    from saloon.games import get_game
    from saloon.games.errors import GameError
    from saloon.referee.errors import RefereeError

    try:
        return dict(get_game(game).parse_options(options))
    except (
        GameError,
        RefereeError,
    ):  # a game this install does not have: take the options as given
        return dict(options)


def known_bots(loaded: Loaded, ladder: Ladder) -> Iterable[BotInfo]:
    """Bots scheduled on ``ladder`` (listed unrated when they have no completed result)."""
    return loaded.scheduled.get(ladder, {}).values()
