"""Continuous ladders: the queue kept topped up with matches a matchmaker chooses, batch by
batch, beside seasons (saloon.arena.ladder).

A continuous ladder is a row of ``continuous_ladders`` (its request and matchmaker
settings, whether it runs, how many batches it made) plus one season per batch,
``<ladder>-b<k>``, whose owner row names ``ladder:<ladder>`` (so the batches are one board:
:meth:`saloon.ratings.incremental.BoardScope.batches`, season dynamics: a bot version is a
fixed program). :func:`tick` -- the server's driver thread calls it for every running
ladder -- makes batch k+1 only once every match of batch k has finished (recorded, or
failed for good), and chooses it (saloon.arena.matchmaker) from the board after all
earlier batches: the batches, hence the results and the board, are the same whatever the
number of workers that played them (tests/integration/test_continuous_ladder.py plays one
ladder with 1 and with 3 workers and compares the boards).

Each batch seats, at the moment it is made, every bot's latest version on the game plus
the house baselines; a new version replaces its predecessor from the next batch on and
starts from its rating (docs/ratings.md, new versions). Bots whose versions are identical
files (the same package version) enter once: the first bot registered keeps the place.

Crash safety: a batch's season is made before the ladder counts it (making it again is a
no-op: the choice is deterministic), and a batch left unstarted is started by the next tick.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

from saloon.arena.failures import RepeatedFailure
from saloon.arena.ladder import check_house_bots
from saloon.arena.matchmaker import Entry, Settings, choose_batch
from saloon.arena.registry import LadderRow, Registry
from saloon.games import get_game
from saloon.games.errors import GameError
from saloon.ratings.fold import Standings
from saloon.ratings.incremental import BoardScope, IncrementalBoard, board_standings
from saloon.ratings.ladders import Ladder, default_ladder
from saloon.ratings.leaderboard import Leaderboard, build_leaderboard
from saloon.ratings.source import bot_name
from saloon.referee.errors import RefereeError
from saloon.referee.seeds import derive_seed
from saloon.sdk.botref import HOUSE_PREFIX
from saloon.worker.errors import RegistryError, SeasonSpecError, UnknownSeason
from saloon.worker.matches.spec import MatchSpec, check_season_id, match_id
from saloon.worker.queue.season_queue import SeasonQueue
from saloon.worker.sandbox import SandboxKind
from saloon.worker.seasons import run as seasons
from saloon.worker.seasons.schedule import ScheduleKind, SeasonSpec
from saloon.worker.store.rows import ScheduledMatch, SeasonStatus

log = logging.getLogger(__name__)

#: The season owners' schedule id of a ladder's batches: ``ladder:<id>``.
OWNER_PREFIX = "ladder:"
#: Longest ladder id (its batch seasons ``<id>-b<k>`` must stay valid season ids).
MAX_LADDER_ID = 36


@dataclass(frozen=True)
class ContinuousRequest:
    """A continuous ladder as an organiser asks for it (stored as JSON with the ladder)."""

    ladder_id: str
    game: str
    options: dict[str, str] = field(default_factory=dict)
    #: Seats per match; 0: the game's smallest count.
    players: int = 0
    seed: int = 0
    house: tuple[str, ...] = ()
    #: Each table a duplicate deal: one deal replayed with the seats rotated.
    duplicate: bool = False
    sandbox: SandboxKind = SandboxKind.DOCKER
    settings: Settings = field(default_factory=Settings)
    #: Stop after this many batches (0: run until stopped).
    max_batches: int = 0

    def to_json(self) -> dict[str, Any]:
        """The request's JSON form."""
        return {
            "ladder_id": self.ladder_id,
            "game": self.game,
            "options": dict(self.options),
            "players": self.players,
            "seed": self.seed,
            "house": list(self.house),
            "duplicate": self.duplicate,
            "sandbox": self.sandbox.value,
            "settings": vars(self.settings),
            "max_batches": self.max_batches,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ContinuousRequest:
        """A request from its JSON form."""
        return cls(
            ladder_id=str(raw["ladder_id"]),
            game=str(raw["game"]),
            options={str(k): str(v) for k, v in dict(raw.get("options", {})).items()},
            players=int(raw.get("players", 0)),
            seed=int(raw.get("seed", 0)),
            house=tuple(str(h) for h in raw.get("house", ())),
            duplicate=bool(raw.get("duplicate", False)),
            sandbox=SandboxKind(raw.get("sandbox", SandboxKind.DOCKER.value)),
            settings=Settings(**dict(raw.get("settings", {}))),
            max_batches=int(raw.get("max_batches", 0)),
        )

    @property
    def ladder(self) -> Ladder:
        """The rating ladder its results belong to."""
        return default_ladder(self.game, self.options)


def batch_season_id(ladder_id: str, number: int) -> str:
    """The season of batch ``number`` (1, 2, ...) of a ladder."""
    return f"{ladder_id}-b{number}"


def board_scope(request: ContinuousRequest) -> BoardScope:
    """The ladder's own board (its batches, in order)."""
    return BoardScope.batches(OWNER_PREFIX + request.ladder_id, request.ladder)


def check_request(request: ContinuousRequest) -> ContinuousRequest:
    """The request unchanged when it can run; SeasonSpecError names what cannot."""
    check_season_id(request.ladder_id)
    if len(request.ladder_id) > MAX_LADDER_ID:
        raise SeasonSpecError(
            f"ladder id {request.ladder_id[:60]!r}: at most {MAX_LADDER_ID} characters"
        )
    try:
        game = get_game(request.game)
        game.check_players(request.players or game.min_players)
        game.parse_options(request.options)
    except (GameError, RefereeError) as exc:
        raise SeasonSpecError(str(exc)) from None
    check_house_bots(request.game, request.house)
    s = request.settings
    if not 0 <= s.batch <= 10_000 or not 0 <= s.min_share <= 1 or s.window < 1:
        raise SeasonSpecError("matchmaker settings: batch 0..10000, min share 0..1, window >= 1")
    if not 0 <= request.seed < 2**63 or request.max_batches < 0:
        raise SeasonSpecError("seed 0..2**63-1 and max batches >= 0")
    return request


def entries(registry: Registry, request: ContinuousRequest) -> list[tuple[str, str, bool]]:
    """The ladder's entries now: (seat reference, owner, house) for each bot's latest
    version (a version whose files another bot has already entered is left out), then the
    house baselines."""
    out: list[tuple[str, str, bool]] = []
    seen: set[str] = set()
    stored = sorted(
        registry.latest(game=request.game), key=lambda s: (s.history[0].created_at, s.bot)
    )
    for bot in stored:
        if bot.version.version in seen:
            continue  # the same code under another name enters once
        seen.add(bot.version.version)
        out.append((bot.ref, bot.owner, False))
    out.extend((f"{HOUSE_PREFIX}{name}", "house", True) for name in request.house)
    return out


def _rating(standings: Standings, ref: str) -> tuple[float, float]:
    """What the fold will rate ``ref``'s next match from."""
    name, version = bot_name(ref)
    params = standings.params
    for key in ((name, version),) if version else ():
        if key in standings.ratings:
            return standings.ratings[key]
    current = standings.current.get(name)
    if current is None:
        return params.mu, params.sigma
    mu, sigma = standings.ratings[current]
    if current[1] == version or not version:
        return mu, sigma
    return mu, params.successor_sigma(sigma)


def choose(
    registry: Registry, request: ContinuousRequest, number: int, state: dict[str, Any]
) -> tuple[list[MatchSpec], SeasonSpec, dict[str, Any]]:
    """Batch ``number``: its matches, its season and the ladder's state after it."""
    game = get_game(request.game)
    seats = request.players or game.min_players
    found = entries(registry, request)
    if len(found) < seats:
        raise SeasonSpecError(
            f"the {request.game} ladder has {len(found)} entries; {seats}-seat matches need "
            "at least that many (add house bots or wait for submissions)"
        )
    board = IncrementalBoard(registry.store, board_scope(request))
    board.update()
    standings, _known, _ladders = board.standings(details=False)
    last: dict[str, int] = dict(state.get("last_played", {}))
    counts: dict[str, list[int]] = {
        k: list(v) for k, v in dict(state.get("seat_counts", {})).items()
    }
    people = []
    for ref, owner, house in found:
        mu, sigma = _rating(standings, ref)
        idle = number - 1 - last.get(ref, 0) if ref in last else number - 1
        people.append(Entry(ref, owner, mu, sigma, house, max(0, idle), tuple(counts.get(ref, ()))))
    tables = choose_batch(
        people, seats, request.settings, derive_seed(request.seed, f"batch:{number}")
    )
    season_id = batch_season_id(request.ladder_id, number)
    specs: list[MatchSpec] = []
    options = dict(game.parse_options(request.options))
    for t, table in enumerate(tables):
        seatings = [table[r:] + table[:r] for r in range(seats)] if request.duplicate else [table]
        name = f"batch:{number}:deal:{t}" if request.duplicate else f"batch:{number}:match:{t}"
        seed = derive_seed(request.seed, name)
        for seating in seatings:
            refs = tuple(people[i].bot for i in seating)
            index = len(specs)
            specs.append(
                MatchSpec(
                    match_id=match_id(season_id, index), game=request.game, seats=refs,
                    seed=seed, options=options, sandbox=request.sandbox, season_id=season_id,
                    index=index, deal=t if request.duplicate else None,
                )
            )  # fmt: skip
            for pos, ref in enumerate(refs):
                row = counts.setdefault(ref, [0] * seats)
                row.extend([0] * (seats - len(row)))
                row[pos] += 1
                last[ref] = number
    seated = sorted({ref for s in specs for ref in s.seats})
    season = SeasonSpec(
        season_id=season_id, game=request.game, participants=tuple(seated) or (found[0][0],),
        seats=seats, seed=request.seed, kind=ScheduleKind.MATCHMAKER,
        duplicate=request.duplicate, options=options, sandbox=request.sandbox,
    )  # fmt: skip
    return specs, season, {"last_played": last, "seat_counts": counts}


def start(
    registry: Registry, queue: SeasonQueue | None, request: ContinuousRequest, organiser: str,
    store_url: str,
) -> LadderRow:  # fmt: skip
    """Store a continuous ladder and make (and, with a queue, start) its first batch."""
    check_request(request)
    choose(registry, request, 1, {})  # refuse a ladder that cannot make a batch, first
    registry.add_continuous(
        request.ladder_id, organiser, {"request": request.to_json(), "state": {}}
    )
    tick(registry, queue, request.ladder_id, store_url)
    row = registry.continuous(request.ladder_id)
    assert row is not None
    return row


def stop(registry: Registry, ladder_id: str) -> LadderRow:
    """Make no more batches (the running one plays out and counts)."""
    if registry.continuous(ladder_id) is None:
        raise RegistryError(f"no continuous ladder {ladder_id!r}")
    registry.set_continuous(ladder_id, active=False)
    row = registry.continuous(ladder_id)
    assert row is not None
    return row


def tick(registry: Registry, queue: SeasonQueue | None, ladder_id: str, store_url: str) -> str:
    """One step of a ladder's driver: what it did (``stopped``, ``playing``, ``done`` or
    the id of the batch it made). Safe to call from several processes at once."""
    store = registry.store
    row = registry.continuous(ladder_id)
    if row is None or not row.active:
        return "stopped"
    request = ContinuousRequest.from_json(row.spec["request"])
    made = row.batches
    if made:
        current = batch_season_id(ladder_id, made)
        stored = store.season(current)
        if stored is not None and stored.status is SeasonStatus.CREATED and queue is not None:
            seasons.start(store, queue, current, store_url)  # made, then the driver died
        try:
            if not seasons.progress(store, current, queue).finished:
                return "playing"
            # Settled by the job that recorded its last match; the driver watches, so it
            # settles it too (idempotent) before the next batch reads it as over.
            store.settle_season(current)
        except UnknownSeason:
            log.warning("ladder %s: batch %s is missing; making it again", ladder_id, current)
            made -= 1
    if request.max_batches and made >= request.max_batches:
        registry.set_continuous(ladder_id, active=False)
        return "done"
    number = made + 1
    state = dict(row.spec.get("state", {}))
    try:
        specs, season, after = choose(registry, request, number, state)
    except SeasonSpecError as exc:  # e.g. bots withdrawn: try again at the next tick
        log.warning("ladder %s: batch %d not made: %s", ladder_id, number, exc)
        return "playing"
    if not specs:  # the owner rule left no table: wait for the field to change
        log.warning("ladder %s: batch %d would be empty; waiting", ladder_id, number)
        return "playing"
    store.create_season(
        season.season_id,
        {**season.to_json(), "ladder": ladder_id, "batch": number},
        [ScheduledMatch(s.match_id, s.index, s.to_json()) for s in specs],
    )
    registry.set_season_owner(season.season_id, row.organiser, OWNER_PREFIX + ladder_id)
    spec = {"request": row.spec["request"], "state": after}
    if not registry.set_continuous(
        ladder_id, batches=number, spec=spec, expect_batches=row.batches
    ):
        return "playing"  # another driver counted it first
    if queue is not None:
        seasons.start(store, queue, season.season_id, store_url)
    log.info("ladder %s: batch %d made (%d matches)", ladder_id, number, len(specs))
    return season.season_id


#: Each ladder's failing ticks, logged once in full and then now and then (drive()).
_failures: dict[str, RepeatedFailure] = {}


def drive(registry: Registry, queue: SeasonQueue | None, store_url: str) -> dict[str, str]:
    """One tick of every running ladder (the server calls it every LADDER_TICK_S)."""
    done = {}
    for row in registry.continuous_ladders(active_only=True):
        failures = _failures.get(row.ladder_id)
        if failures is None:
            failures = _failures[row.ladder_id] = RepeatedFailure(
                log, f"ladder {row.ladder_id}: its tick"
            )
        try:
            done[row.ladder_id] = tick(registry, queue, row.ladder_id, store_url)
            failures.succeeded()
        except Exception:  # one broken ladder must not stop the others
            failures.failed()
            done[row.ladder_id] = "error"
    return done


def ladder_stamp(registry: Registry, ladder_id: str) -> int:
    """The stamp of a continuous ladder's board (saloon.ratings.boards.board_stamp);
    RegistryError when there is no such ladder."""
    row = registry.continuous(ladder_id)
    if row is None:
        raise RegistryError(f"no continuous ladder {ladder_id!r}")
    request = ContinuousRequest.from_json(row.spec["request"])
    return IncrementalBoard(registry.store, board_scope(request)).update()


def ladder_board(
    registry: Registry, ladder_id: str, details: bool = False
) -> tuple[LadderRow, ContinuousRequest, Leaderboard]:
    """A continuous ladder, its request and its board (brought up to date); RegistryError
    when there is no such ladder."""
    row = registry.continuous(ladder_id)
    if row is None:
        raise RegistryError(f"no continuous ladder {ladder_id!r}")
    request = ContinuousRequest.from_json(row.spec["request"])
    standings, known, _ladders = board_standings(registry.store, board_scope(request), details)
    return row, request, build_leaderboard(standings, f"ladder {ladder_id}", known)


def with_settings(request: ContinuousRequest, **changes: Any) -> ContinuousRequest:
    """The request with matchmaker settings changed."""
    return replace(request, settings=replace(request.settings, **changes))
