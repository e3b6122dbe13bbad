"""Which seeds may be shown, and when (docs/seasons.md, "Secret seeds").

A season's or ladder's seed computes every deal it will play, so it is shown to nobody
(web pages, the JSON API, the gRPC API) before it is over; then it is published, so that
anyone can re-derive every match seed from it and check every deal. A seed an organiser
set is hidden the same way (it deals the same cards; the organiser knows it anyway).

* A **season** is over when every match is recorded, or it was cancelled and none still
  runs (a match that failed may be played again: its season's seed stays hidden until
  it is recorded or the season cancelled).
* A **continuous ladder** is over when it has stopped and its last batch is over. Its
  batches are seasons whose spec carries the ladder's own seed: a batch's seed is shown
  when its ladder is over, not when the batch is.
* A **tournament** is over when it is done or cancelled and none of its seasons still
  plays (saloon.arena.tournament.tournament_over). Its seasons (qualifying, finals
  batches) carry its seed or one derived from it: theirs are shown when the tournament
  is over, not when the season is.
* A **match's record** (seed included) is published when its season (a ladder's batch) is
  over: its seed is derived from the season's with a one-way hash, so it tells nothing of
  any other match, and every rotation of a duplicate deal is in the same season.

The organiser of a ladder sees its settings, seed included, over the gRPC API (they set it
or had it drawn, and may read every full record of it); everyone else sees ``null``.

Not withheld: a finished match's replay (``/api/matches/ID/replay``, its deal with
``?hands=all``) while its season runs, as before. In a duplicate season it shows a deal
that another rotation may still play; nothing seated in that rotation can read it (a
season's entries and a batch's versions are fixed before any of its matches is played,
and a Docker seat has no network; the process sandbox is not for untrusted bots).
"""

from __future__ import annotations

from typing import Any

from saloon.arena.continuous import batch_season_id
from saloon.arena.registry import LadderRow, Registry
from saloon.arena.tournament import tournament_over
from saloon.arena.tournaments import TournamentRow, Tournaments
from saloon.worker.store.rows import MatchStatus, SeasonRow, SeasonStatus
from saloon.worker.store.store import Store


def season_over(store: Store, season: SeasonRow) -> bool:
    """True when none of ``season``'s matches can still be played: every one recorded (or
    cancelled), whether or not its status was settled yet (the job that recorded its last
    match settles it just after); a cancelled season once none runs any more."""
    counts = store.progress(season.season_id)
    if season.status is SeasonStatus.CANCELLED:
        return counts.count(MatchStatus.RUNNING) == 0
    return counts.remaining == 0 and counts.count(MatchStatus.FAILED) == 0


def ladder_over(registry: Registry, row: LadderRow) -> bool:
    """True when a continuous ladder makes no more batches and its last one is over."""
    if row.active:
        return False
    if not row.batches:
        return True
    last = registry.store.season(batch_season_id(row.ladder_id, row.batches))
    return last is None or season_over(registry.store, last)


def season_seed_shown(registry: Registry, season: SeasonRow) -> bool:
    """True when ``season``'s own seed may be shown to anyone."""
    if not season_over(registry.store, season):
        return False
    tournament_id = season.spec.get("tournament")
    if tournament_id is not None:
        match = Tournaments(registry.store).find(str(tournament_id))
        return match is None or tournament_over(registry.store, match)
    ladder_id = season.spec.get("ladder")
    if ladder_id is None:
        return True
    row = registry.continuous(str(ladder_id))
    return row is None or ladder_over(registry, row)


def shown_season_spec(registry: Registry, season: SeasonRow) -> dict[str, Any]:
    """``season``'s spec as anyone may see it: ``seed`` null until it may be shown."""
    spec = dict(season.spec)
    if "seed" in spec and not season_seed_shown(registry, season):
        spec["seed"] = None
    return spec


def shown_ladder_settings(
    registry: Registry, row: LadderRow, settings: dict[str, Any], organiser: bool = False
) -> dict[str, Any]:
    """A continuous ladder's request as shown: ``seed`` null until the ladder is over,
    unless shown to its ``organiser``."""
    out = dict(settings)
    if "seed" in out and not organiser and not ladder_over(registry, row):
        out["seed"] = None
    return out


def record_published(registry: Registry, match_id: str) -> bool:
    """True when ``match_id``'s full record, seed included, may be shown to anyone: its
    season is over (a match of no season, or of a season since removed, is)."""
    store = registry.store
    scheduled = store.scheduled_match(match_id)
    if scheduled is None:
        return True
    season = store.season(scheduled.season_id)
    return season is None or season_over(store, season)


def shown_tournament_settings(
    registry: Registry, row: TournamentRow, settings: dict[str, Any], organiser: bool = False
) -> dict[str, Any]:
    """A tournament's request as shown: ``seed`` null until the tournament is over,
    unless shown to its ``organiser``."""
    out = dict(settings)
    if "seed" in out and not organiser and not tournament_over(registry.store, row):
        out["seed"] = None
    return out
