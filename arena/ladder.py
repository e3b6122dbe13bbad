"""Ladder seasons: a round-robin over the latest accepted version of every bot of a game.

A ladder is a game plus its rated options (saloon.ratings.ladders). Every bot submitted for
a game plays on that game's ladders; a season of a ladder seats, for each bot, the version
that was latest when the season was created, so a new version replaces its predecessor
from the next season on (a running season keeps the versions it started with).

Repeating seasons are a schedule row in the store plus one RQ job at a time: the job
(:func:`repeat_job`) makes and starts the schedule's next season, then enqueues itself
``every_s`` seconds later with ``Queue.enqueue_in``: RQ's own scheduled-job registry, whose
due jobs every saloon worker's keeper promotes (saloon.worker.queue.season_queue.promote_due), so no
separate scheduler process is needed. Stopping the schedule makes the next job a no-op.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from saloon.arena.registry import Registry, ScheduleRow
from saloon.games import get_game
from saloon.games.errors import GameError
from saloon.referee.errors import RefereeError
from saloon.referee.seeds import derive_seed
from saloon.sdk.botref import HOUSE_PREFIX
from saloon.sdk.house import house_bot_names
from saloon.worker.errors import SeasonSpecError
from saloon.worker.matches.spec import check_season_id
from saloon.worker.queue.season_queue import SeasonQueue
from saloon.worker.sandbox import SandboxKind
from saloon.worker.seasons import run as seasons
from saloon.worker.seasons.schedule import SeasonSpec
from saloon.worker.store.store import Store

log = logging.getLogger(__name__)

#: The shortest repeat interval an organiser may ask for.
MIN_REPEAT_S = 60
#: Seconds a repeat job may run (it only creates and enqueues a season).
REPEAT_JOB_TIMEOUT_S = 300


@dataclass(frozen=True)
class LadderRequest:
    """What an organiser asks for: a season of a game's ladder (JSON-able)."""

    game: str
    options: dict[str, str] = field(default_factory=dict)
    #: Seats per match; 0: the game's smallest count.
    players: int = 0
    rounds: int = 1
    seed: int = 0
    #: House bots seated beside the submitted bots (names, e.g. ``greedy``).
    house: tuple[str, ...] = ()
    duplicate: bool = False
    sandbox: SandboxKind = SandboxKind.DOCKER

    def to_json(self) -> dict[str, Any]:
        """The request's JSON form (a schedule stores it)."""
        return {
            "game": self.game,
            "options": dict(self.options),
            "players": self.players,
            "rounds": self.rounds,
            "seed": self.seed,
            "house": list(self.house),
            "duplicate": self.duplicate,
            "sandbox": self.sandbox.value,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> LadderRequest:
        """A request from its JSON form."""
        return cls(
            game=str(raw["game"]),
            options={str(k): str(v) for k, v in dict(raw.get("options", {})).items()},
            players=int(raw.get("players", 0)),
            rounds=int(raw.get("rounds", 1)),
            seed=int(raw.get("seed", 0)),
            house=tuple(str(h) for h in raw.get("house", ())),
            duplicate=bool(raw.get("duplicate", False)),
            sandbox=SandboxKind(raw.get("sandbox", SandboxKind.DOCKER.value)),
        )


def default_season_id(game: str, now: datetime | None = None) -> str:
    """``<game without -vN>-<UTC yyyymmdd-hhmmss>``."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{game.rsplit('-v', 1)[0]}-{stamp}"


def participants(registry: Registry, request: LadderRequest) -> list[str]:
    """The ladder's entries now: each bot's latest version, then the house bots."""
    stored = [v.ref for v in registry.latest(game=request.game)]
    return [*stored, *(f"{HOUSE_PREFIX}{name}" for name in request.house)]


def check_house_bots(game: str, names: Iterable[str]) -> None:
    """SeasonSpecError unless every one of ``names`` is a house bot that plays ``game``."""
    known = house_bot_names(game)
    for name in names:
        if name not in known:
            raise SeasonSpecError(
                f"no house bot {name[:60]!r} plays {game} (its house bots: {', '.join(known)})"
            )


def season_spec(registry: Registry, request: LadderRequest, season_id: str) -> SeasonSpec:
    """The season of ``request``'s ladder as it stands; SeasonSpecError when it cannot be."""
    check_season_id(season_id)
    try:
        game = get_game(request.game)
    except (GameError, RefereeError) as exc:
        raise SeasonSpecError(str(exc)) from None
    check_house_bots(request.game, request.house)
    entries = participants(registry, request)
    players = request.players or game.min_players
    if len(entries) < players:
        raise SeasonSpecError(
            f"the {request.game} ladder has {len(entries)} entries; a season of {players}-seat "
            "matches needs at least that many (add house bots or wait for submissions)"
        )
    return SeasonSpec(
        season_id=season_id,
        game=request.game,
        participants=tuple(entries),
        seats=players,
        rounds=request.rounds,
        seed=request.seed,
        duplicate=request.duplicate,
        options=dict(request.options),
        sandbox=request.sandbox,
    ).check()


def create_season(
    registry: Registry,
    request: LadderRequest,
    organiser: str,
    season_id: str = "",
    schedule_id: str = "",
) -> SeasonSpec:
    """Create (store) a season of the ladder for ``organiser``."""
    spec = season_spec(registry, request, season_id or default_season_id(request.game))
    seasons.create(registry.store, spec)
    registry.set_season_owner(spec.season_id, organiser, schedule_id)
    return spec


def start_repeating(
    registry: Registry,
    queue: SeasonQueue,
    request: LadderRequest,
    organiser: str,
    every_s: int,
    store_url: str,
    schedule_id: str = "",
) -> tuple[ScheduleRow, SeasonSpec]:
    """Store a schedule, make and start its first season now, enqueue the next repeat."""
    if every_s < MIN_REPEAT_S:
        raise SeasonSpecError(f"repeat every {every_s} s: at least {MIN_REPEAT_S} s")
    schedule_id = check_season_id(schedule_id or default_season_id(request.game))
    season_spec(registry, request, f"{schedule_id}-1")  # refuse a bad request before storing
    row = registry.add_schedule(schedule_id, organiser, request.to_json(), every_s)
    first = run_schedule_once(registry, queue, row, store_url)
    if first is None:
        raise SeasonSpecError(f"schedule {schedule_id} is not active")
    return row, first


def run_schedule_once(
    registry: Registry, queue: SeasonQueue, row: ScheduleRow, store_url: str
) -> SeasonSpec | None:
    """Make and start the schedule's next season and enqueue the repeat after it."""
    number = registry.next_season_number(row.schedule_id)
    if number is None:
        log.info("schedule %s: stopped", row.schedule_id)
        return None
    request = LadderRequest.from_json(row.spec)
    request = replace(request, seed=repeat_seed(request.seed, number))
    season_id = f"{row.schedule_id}-{number}"
    try:
        spec = create_season(registry, request, row.organiser, season_id, row.schedule_id)
        seasons.start(registry.store, queue, spec.season_id, store_url)
    except SeasonSpecError as exc:  # e.g. bots withdrawn: skip this one, try next time
        log.warning("schedule %s: season %s not made: %s", row.schedule_id, season_id, exc)
        spec = None
    _enqueue_repeat(queue, row.schedule_id, number + 1, row.every_s, store_url)
    return spec


def repeat_seed(seed: int, number: int) -> int:
    """The seed of a schedule's season ``number`` (1, 2, ...): derived from the schedule's
    seed (saloon.referee.seeds), so no two seasons of two schedules share a stream by
    accident (``seed + number`` made schedule 0's second season schedule 1's first)."""
    return derive_seed(seed, f"repeat:{number}")


def _repeat_job_id(schedule_id: str, number: int) -> str:
    return f"schedule-{schedule_id}-{number}"


def _enqueue_repeat(
    queue: SeasonQueue, schedule_id: str, number: int, in_s: float, store_url: str
) -> None:
    queue.queue.enqueue_in(
        timedelta(seconds=max(0.0, in_s)),
        repeat_job,
        schedule_id,
        store_url,
        job_id=_repeat_job_id(schedule_id, number),
        job_timeout=REPEAT_JOB_TIMEOUT_S,
        description=f"repeat schedule {schedule_id}",
    )


def rearm_schedules(registry: Registry, queue: SeasonQueue, store_url: str) -> list[str]:
    """Enqueue the next repeat of every active schedule whose job is gone (Redis lost or
    flushed), due ``every_s`` after its last season was made (now, if that is past); the
    ids of the schedules re-armed. ``saloon serve`` runs it at start and every minute."""
    from rq.job import Job

    rearmed = []
    for row in registry.active_schedules():
        job_id = _repeat_job_id(row.schedule_id, row.made + 1)
        if Job.exists(job_id, connection=queue.redis):
            continue
        last = registry.schedule_seasons(row.schedule_id)
        season = registry.store.season(last[-1]) if last else None
        made_at = season.created_at if season is not None else datetime.now(UTC)
        due_in = (made_at + timedelta(seconds=row.every_s) - datetime.now(UTC)).total_seconds()
        _enqueue_repeat(queue, row.schedule_id, row.made + 1, due_in, store_url)
        log.warning("schedule %s: its next season's job was gone; re-armed", row.schedule_id)
        rearmed.append(row.schedule_id)
    return rearmed


def repeat_job(schedule_id: str, store_url: str) -> str:
    """RQ entry point: the schedule's next season (saloon workers run it when it is due),
    enqueued on the queue this job came from."""
    from rq import get_current_job

    job = get_current_job()
    if job is None:
        raise SeasonSpecError("repeat_job runs as an RQ job (use run_schedule_once)")
    store = Store.open(store_url)
    try:
        registry = Registry(store)
        row = registry.schedule(schedule_id)
        if row is None or not row.active:
            return "stopped"
        queue = SeasonQueue(job.connection, job.origin)
        spec = run_schedule_once(registry, queue, row, store_url)
        return spec.season_id if spec is not None else "skipped"
    finally:
        store.close()
