"""Tournaments: a game's ladder with a submission deadline, the versions each owner marks
as final, a frozen field, a qualifying season, finals batch by batch, a published report
(docs/tournaments.md).

A tournament is a row of ``tournaments`` (saloon.arena.tournaments) and, once its deadline
has passed, one season per step, each owned by ``tournament:<id>``:

* ``<id>-q``: the qualifying season, a round-robin of the frozen field
  (``qualifying_rounds``; 0: none);
* ``<id>-f<k>``: finals batch k, the tables :func:`saloon.ratings.finals.plan_batch` chose
  from every result so far (qualifying included). A batch is made only when the one
  before it has finished, so the finals are the same whatever the number of workers.

Phases: ``open`` -> ``frozen`` -> ``finals`` -> ``reporting`` -> ``done`` (or
``cancelled``); the report is computed by a thread of its own (:class:`ReportThreads`). Only
:func:`tick` changes a phase, and only the server's driver thread calls it (with the time
now, for the deadline check alone: the field frozen at the deadline is read from the
store, versions and marks stamped before it; the time the deadline was found crossed is
recorded as ``frozen_at``). A reader (status, the API, the web page) never does.

Seeds: the tournament's seed (secret: drawn by the server unless the organiser sets one)
deals everything: the qualifying season's from ``derive_seed(seed, "qualifying")``, each
finals deal's from ``derive_seed(seed, "deal:<label>")``, so the tables of one deal label
(a duplicate deal, seats rotated) get the same cards. It is shown to nobody but the
organiser until the tournament is over (saloon.arena.secrecy), then published, and with
it and the records every number of the report can be computed again
(:func:`recompute_report`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from saloon.arena.errors import FieldFrozen, PermissionDenied
from saloon.arena.failures import RepeatedFailure
from saloon.arena.ladder import check_house_bots
from saloon.arena.registry import Registry
from saloon.arena.tournaments import FinalMark, Phase, TournamentRow, Tournaments
from saloon.games import get_game
from saloon.games.errors import GameError
from saloon.referee.errors import RefereeError
from saloon.referee.seeds import derive_seed
from saloon.sdk.botref import HOUSE_PREFIX, BotRef
from saloon.worker.errors import RegistryError, SeasonConflict, SeasonSpecError, UnknownSeason
from saloon.worker.matches.spec import MatchSpec, check_season_id, match_id
from saloon.worker.queue.season_queue import SeasonQueue
from saloon.worker.sandbox import SandboxKind
from saloon.worker.seasons import run as seasons
from saloon.worker.seasons.schedule import ScheduleKind, SeasonSpec, expand
from saloon.worker.store.rows import MatchStatus, ScheduledMatch, SeasonStatus
from saloon.worker.store.store import Store

log = logging.getLogger(__name__)

#: The season owners' schedule id of a tournament's seasons: ``tournament:<id>``.
OWNER_PREFIX = "tournament:"
#: Longest tournament id (its seasons ``<id>-f<k>`` must stay valid season ids).
MAX_TOURNAMENT_ID = 40
#: Most final versions an owner may be allowed to mark.
MAX_FINALS_PER_OWNER = 10
#: Bootstrap resamples of the report (its crosstable's intervals).
DEFAULT_RESAMPLES = 1000


@dataclass(frozen=True)
class FinalsSettings:
    """The finals policy as an organiser sets it (saloon.ratings.finals.FinalsPolicy)."""

    top_k: int = 10
    confidence: float = 0.95
    budget: int = 2000
    batch_matches: int = 50
    #: Seats per finals table; () = the tournament's ``players``.
    table_sizes: tuple[int, ...] = ()
    duplicate: bool = True

    def to_json(self) -> dict[str, Any]:
        """The settings' JSON form."""
        return {
            "top_k": self.top_k,
            "confidence": self.confidence,
            "budget": self.budget,
            "batch_matches": self.batch_matches,
            "table_sizes": list(self.table_sizes),
            "duplicate": self.duplicate,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> FinalsSettings:
        """Settings from their JSON form."""
        d = cls()
        return cls(
            top_k=int(raw.get("top_k", d.top_k)),
            confidence=float(raw.get("confidence", d.confidence)),
            budget=int(raw.get("budget", d.budget)),
            batch_matches=int(raw.get("batch_matches", d.batch_matches)),
            table_sizes=tuple(int(x) for x in raw.get("table_sizes", ())),
            duplicate=bool(raw.get("duplicate", d.duplicate)),
        )


@dataclass(frozen=True)
class TournamentRequest:
    """A tournament as an organiser asks for it (stored as JSON with the tournament)."""

    tournament_id: str
    game: str
    #: The submission deadline (UTC): the field freezes when the driver finds it passed.
    deadline: datetime
    options: dict[str, str] = field(default_factory=dict)
    #: Seats per qualifying match (and finals table, unless the finals say otherwise);
    #: 0: the game's smallest count.
    players: int = 0
    seed: int = 0
    #: House bots entered beside the submitted bots (names, e.g. ``greedy``).
    house: tuple[str, ...] = ()
    #: How many versions each owner may mark as final (none marked: their latest).
    finals_per_owner: int = 1
    #: Rounds of the qualifying round-robin after the deadline (0: straight to finals).
    qualifying_rounds: int = 1
    finals: FinalsSettings = field(default_factory=FinalsSettings)
    resamples: int = DEFAULT_RESAMPLES
    sandbox: SandboxKind = SandboxKind.DOCKER

    def to_json(self) -> dict[str, Any]:
        """The request's JSON form."""
        return {
            "tournament_id": self.tournament_id,
            "game": self.game,
            "deadline": self.deadline.astimezone(UTC).isoformat(),
            "options": dict(self.options),
            "players": self.players,
            "seed": self.seed,
            "house": list(self.house),
            "finals_per_owner": self.finals_per_owner,
            "qualifying_rounds": self.qualifying_rounds,
            "finals": self.finals.to_json(),
            "resamples": self.resamples,
            "sandbox": self.sandbox.value,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> TournamentRequest:
        """A request from its JSON form."""
        return cls(
            tournament_id=str(raw["tournament_id"]),
            game=str(raw["game"]),
            deadline=datetime.fromisoformat(str(raw["deadline"])),
            options={str(k): str(v) for k, v in dict(raw.get("options", {})).items()},
            players=int(raw.get("players", 0)),
            seed=int(raw.get("seed", 0)),
            house=tuple(str(h) for h in raw.get("house", ())),
            finals_per_owner=int(raw.get("finals_per_owner", 1)),
            qualifying_rounds=int(raw.get("qualifying_rounds", 1)),
            finals=FinalsSettings.from_json(dict(raw.get("finals", {}))),
            resamples=int(raw.get("resamples", DEFAULT_RESAMPLES)),
            sandbox=SandboxKind(raw.get("sandbox", SandboxKind.DOCKER.value)),
        )

    def seats(self) -> int:
        """Seats per qualifying match."""
        return self.players or get_game(self.game).min_players

    def table_sizes(self) -> tuple[int, ...]:
        """Seats per finals table."""
        return self.finals.table_sizes or (self.seats(),)

    def policy(self) -> Any:
        """The finals policy (saloon.ratings.finals.FinalsPolicy)."""
        from saloon.ratings.finals import FinalsPolicy

        f = self.finals
        return FinalsPolicy(
            top_k=f.top_k, confidence=f.confidence, budget=f.budget,
            batch_matches=f.batch_matches, table_sizes=self.table_sizes(),
            duplicate=f.duplicate,
        )  # fmt: skip


def qualifying_season_id(tournament_id: str) -> str:
    """The qualifying season of a tournament."""
    return f"{tournament_id}-q"


def batch_season_id(tournament_id: str, number: int) -> str:
    """The season of finals batch ``number`` (1, 2, ...) of a tournament."""
    return f"{tournament_id}-f{number}"


def deal_seed(seed: int, label: str) -> int:
    """The match seed of a finals deal: every table of one label gets the same cards."""
    return derive_seed(seed, f"deal:{label}")


def check_request(request: TournamentRequest, now: datetime | None = None) -> TournamentRequest:
    """The request unchanged when it can run; SeasonSpecError names what cannot."""
    check_season_id(request.tournament_id)
    if len(request.tournament_id) > MAX_TOURNAMENT_ID:
        raise SeasonSpecError(
            f"tournament id {request.tournament_id[:60]!r}: at most {MAX_TOURNAMENT_ID} characters"
        )
    if request.deadline.tzinfo is None:
        raise SeasonSpecError("the deadline needs a time zone (e.g. 2026-12-24T18:00:00+00:00)")
    if now is not None and request.deadline <= now:
        raise SeasonSpecError(
            f"the deadline {request.deadline.astimezone(UTC).isoformat()} has passed already"
        )
    try:
        game = get_game(request.game)
        game.check_players(request.seats())
        for size in request.table_sizes():
            game.check_players(size)
        game.parse_options(request.options)
    except (GameError, RefereeError) as exc:
        raise SeasonSpecError(str(exc)) from None
    check_house_bots(request.game, request.house)
    if len(set(request.house)) != len(request.house):
        raise SeasonSpecError("each house bot enters once")
    if not 1 <= request.finals_per_owner <= MAX_FINALS_PER_OWNER:
        raise SeasonSpecError(f"finals per owner: 1..{MAX_FINALS_PER_OWNER}")
    if not 0 <= request.qualifying_rounds <= 100:
        raise SeasonSpecError("qualifying rounds: 0..100")
    f = request.finals
    if not (f.top_k >= 2 and 0.5 < f.confidence < 1 and f.budget >= 1 and f.batch_matches >= 1):
        raise SeasonSpecError(
            "finals: top K >= 2, confidence in (0.5, 1), budget >= 1, batch matches >= 1"
        )
    if not 0 <= request.seed < 2**63 or not 0 <= request.resamples <= 100_000:
        raise SeasonSpecError("seed 0..2**63-1 and resamples 0..100000")
    return request


def create(
    registry: Registry, request: TournamentRequest, organiser: str, now: datetime
) -> TournamentRow:
    """Store an open tournament (its deadline must lie after ``now``)."""
    check_request(request, now)
    if registry.schedule(request.tournament_id) is not None or registry.continuous(
        request.tournament_id
    ):
        raise RegistryError(f"{request.tournament_id!r} is a ladder's id")
    return Tournaments(registry.store).add(
        request.tournament_id, organiser, request.game, request.to_json(), request.deadline
    )


def request_of(row: TournamentRow) -> TournamentRequest:
    """The request a tournament was created with."""
    return TournamentRequest.from_json(row.spec)


# -- final marks -------------------------------------------------------------------------


def mark_final(
    registry: Registry, tournament_id: str, owner: str, bot: str, version: str, now: datetime,
    *, clear: bool = False,
) -> FinalMark | None:  # fmt: skip
    """Mark ``owner``'s ``bot`` at ``version`` ("": its latest) final for the tournament
    (``clear``: unmark it). FieldFrozen once the deadline has passed (``now`` is the
    caller's time: a mark is input, refused at once, while the field itself is frozen by
    the driver from what was stored before the deadline); PermissionDenied for another
    owner's bot; RegistryError for a bot of another game, an unknown version, or one
    mark more than the tournament allows. The mark made (None when cleared)."""
    book = Tournaments(registry.store)
    row = book.get(tournament_id)
    if row.phase is not Phase.OPEN or now >= row.deadline:
        raise FieldFrozen(
            f"tournament {tournament_id}: the deadline {row.deadline.isoformat()} has passed; "
            "its field is frozen (no new entries, no final marks)"
        )
    stored = registry.store.bot(bot)
    if stored is None:
        raise RegistryError(f"no bot {bot!r}")
    if stored.owner != owner:
        raise PermissionDenied(f"bot {bot} is not yours ({owner})")
    versions = registry.store.versions(bot)
    if not versions or str(versions[-1].meta.get("game", "")) != row.game:
        raise RegistryError(f"bot {bot} does not play {row.game}")
    chosen = versions[-1] if not version else next(
        (v for v in versions if v.version == version), None
    )  # fmt: skip
    if chosen is None:
        raise RegistryError(f"bot {bot} has no version {version!r}")
    if clear:
        if not book.clear_mark(tournament_id, owner, bot, chosen.version):
            raise RegistryError(f"{bot}@{chosen.version} is not marked final")
        return None
    limit = request_of(row).finals_per_owner
    book.set_mark(tournament_id, owner, bot, chosen.version, limit, now)
    return FinalMark(bot, chosen.version, owner, now)


def check_entry(registry: Registry, tournament_id: str, owner: str, now: datetime) -> None:
    """A submission for the tournament may go ahead: FieldFrozen once its deadline has
    passed, RegistryError when ``owner`` has marked as many versions as it allows (a
    submission for it would be marked final too)."""
    row = Tournaments(registry.store).get(tournament_id)
    if row.phase is not Phase.OPEN or now >= row.deadline:
        raise FieldFrozen(
            f"tournament {tournament_id}: the deadline {row.deadline.isoformat()} has passed; "
            "its field is frozen (submit without --tournament to play the game's ladders)"
        )
    limit = request_of(row).finals_per_owner
    mine = Tournaments(registry.store).marks(tournament_id, owner)
    if len(mine) >= limit:
        raise RegistryError(
            f"tournament {tournament_id}: {owner} has marked {len(mine)} final version(s) "
            f"already; at most {limit} (unmark one first)"
        )


def frozen_field(registry: Registry, row: TournamentRow) -> list[str]:
    """The entrants of a tournament as its deadline left them, read from the store alone
    (no clock): each owner's versions marked final before the deadline, or, for an owner
    who marked none, their latest version of the game accepted before it; the same files
    enter once (the first bot to have them); then the house bots. In a stable order: the
    submitted entrants by their version's acceptance time and name, then the house bots
    as the organiser listed them."""
    request = request_of(row)
    deadline = row.deadline
    marks: dict[str, list[FinalMark]] = {}
    for mark in Tournaments(registry.store).marks(row.tournament_id):
        if mark.marked_at <= deadline:
            marks.setdefault(mark.owner, []).append(mark)
    candidates: list[tuple[datetime, str, str]] = []  # (accepted at, bot, version)
    latest: dict[str, tuple[datetime, str, str]] = {}
    for bot in registry.store.bots():
        versions = [v for v in registry.store.versions(bot.name) if v.created_at <= deadline]
        if not versions or str(versions[-1].meta.get("game", "")) != row.game:
            continue
        if bot.owner in marks:
            marked = {(m.bot, m.version) for m in marks[bot.owner]}
            for v in versions:
                if (bot.name, v.version) in marked:
                    candidates.append((v.created_at, bot.name, v.version))
        else:
            last = versions[-1]
            key = (last.created_at, bot.name, last.version)
            if bot.owner not in latest or key > latest[bot.owner]:
                latest[bot.owner] = key
    candidates.extend(latest.values())
    out: list[str] = []
    seen: set[str] = set()
    for _at, name, version in sorted(candidates):
        if version in seen:
            continue  # the same code under another name enters once
        seen.add(version)
        out.append(str(BotRef.stored(name, version)))
    out.extend(f"{HOUSE_PREFIX}{name}" for name in request.house)
    return out


# -- results -----------------------------------------------------------------------------


def season_ids(row: TournamentRow) -> list[str]:
    """The tournament's seasons so far, in play order (qualifying, then the batches)."""
    out = []
    if row.state.get("qualifying"):
        out.append(str(row.state["qualifying"]))
    out.extend(batch_season_id(row.tournament_id, k) for k in range(1, row.batches + 1))
    return out


def placings(store: Store, row: TournamentRow) -> tuple[list[Any], int]:
    """Every ranked result of the tournament, in play order, as the finals statistics
    take them (saloon.ratings.finals.Placing), and how many of them are the qualifying
    season's. Aborted matches (no ranks) are left out."""
    from saloon.ratings.finals import Placing

    out: list[Any] = []
    qualifying = 0
    for season_id in season_ids(row):
        season = store.season(season_id)
        if season is None:
            continue
        labels = [str(x) for x in season.spec.get("deals", [])]
        deals: dict[str, Any] = {m.match_id: m.spec.get("deal") for m in store.scheduled(season_id)}
        for result in store.results(season_id=season_id):
            ranks = result.ranks
            if not ranks:
                continue
            deal = deals.get(result.match_id)
            if deal is None:
                label = result.match_id  # a deal of its own
            elif labels:
                label = labels[int(deal)]
            else:
                label = f"{season_id}:{deal}"
            out.append(Placing(result.match_id, label, result.bots, tuple(ranks)))
        if season_id == row.state.get("qualifying"):
            qualifying = len(out)
    return out, qualifying


def recompute_report(store: Store, row: TournamentRow, seed: int | None = None) -> Any:
    """The report of a tournament computed again from its seed (the stored one unless
    given) and its records (saloon.ratings.finals.Report)."""
    from saloon.ratings.finals import build_report

    request = request_of(row)
    results, qualifying = placings(store, row)
    return build_report(
        tuple(row.field or ()), results, request.policy(),
        request.seed if seed is None else seed,
        finals_from=qualifying, resamples=request.resamples,
    )  # fmt: skip


# -- the report, off the driver's thread ---------------------------------------------------


def stored_report(report: Any) -> dict[str, Any]:
    """A report (saloon.ratings.finals.Report) as a tournament's row stores it: its JSON
    and both CSVs, so that reading it never recomputes it."""
    return {
        "json": report.to_json(),
        "csv": report.to_csv(),
        "crosstable_csv": report.to_csv("crosstable"),
    }


class ReportThreads:
    """The reports of tournaments whose finals stopped, each computed by a thread of its
    own (``saloon-report-<id>``), one per tournament in this process, so the driver's
    thread (every ladder's tick) never waits for one. The thread stores the report and
    moves the tournament reporting -> done (a compare-and-set: of two servers, one
    stores it; a cancel meanwhile wins). A thread that fails or a server that stops
    leaves the tournament reporting: the driver's next tick starts it again. Its bound is
    the report's own (docs/finals.md: 100,000 results in under a minute); the driver's
    wait for it is none, and the server's stop waits for it ``join``'s timeout."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._threads: dict[str, Any] = {}
        self._failures: dict[str, RepeatedFailure] = {}
        #: The computation, the tournament's report from its seed and records
        #: (recompute_report); a test may slow it down to watch the driver go on.
        self.compute: Any = recompute_report

    def ensure(self, store: Store, tournament_id: str) -> bool:
        """Start the tournament's report thread unless one runs: True when started."""
        import threading

        with self._lock:
            running = self._threads.get(tournament_id)
            if running is not None and running.is_alive():
                return False
            thread = threading.Thread(
                target=self._run, args=(store, tournament_id),
                name=f"saloon-report-{tournament_id}", daemon=True,
            )  # fmt: skip
            self._threads[tournament_id] = thread
            self._failures.setdefault(
                tournament_id, RepeatedFailure(log, f"tournament {tournament_id}: its report")
            )
        thread.start()
        return True

    def _run(self, store: Store, tournament_id: str) -> None:
        failures = self._failures[tournament_id]
        try:
            book = Tournaments(store)
            row = book.get(tournament_id)
            if row.phase is not Phase.REPORTING:
                return
            stored = stored_report(self.compute(store, row))
            if book.advance(tournament_id, Phase.REPORTING, phase=Phase.DONE, report=stored):
                log.info(
                    "tournament %s: done (%s) after %d finals matches", tournament_id,
                    row.state.get("stop"), int(row.state.get("finals_matches", 0)),
                )  # fmt: skip
            failures.succeeded()
        except Exception:  # the store away, say: the driver's next tick starts it again
            failures.failed()

    def running(self) -> list[str]:
        """The tournaments whose report a thread computes now."""
        with self._lock:
            return sorted(k for k, t in self._threads.items() if t.is_alive())

    def join(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds in all for the running threads: True when
        none runs any more."""
        import time

        end = time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(max(0.0, end - time.monotonic()))
        return not any(t.is_alive() for t in threads)


#: The server's report threads (tick and drive start them).
REPORTS = ReportThreads()


# -- the driver --------------------------------------------------------------------------


def _own(registry: Registry, row: TournamentRow, season_id: str) -> None:
    registry.set_season_owner(season_id, row.organiser, OWNER_PREFIX + row.tournament_id)


def tick(
    registry: Registry, queue: SeasonQueue | None, tournament_id: str, store_url: str,
    now: datetime,
) -> str:  # fmt: skip
    """One step of a tournament's driver: what it did or waits for (``open``,
    ``frozen``, ``qualifying``, ``playing``, ``done``, ``cancelled`` or the season it
    made; ``reporting`` while a thread of its own computes the report, see
    :class:`ReportThreads`). ``now`` is read for the deadline alone. Safe to call from
    several processes."""
    store = registry.store
    book = Tournaments(store)
    row = book.get(tournament_id)
    if row.phase.over:
        return row.phase.value
    if row.phase is Phase.REPORTING:
        REPORTS.ensure(store, tournament_id)
        return Phase.REPORTING.value
    request = request_of(row)
    if row.phase is Phase.OPEN:
        if now < row.deadline:
            return "open"
        # The phase flips first: a mark is written only while the tournament's row says
        # open (Tournaments.set_mark, the row locked), so none lands after the field below
        # is read. Then the field is fixed (again by the next tick if this one dies here).
        if not book.advance(tournament_id, Phase.OPEN, phase=Phase.FROZEN, frozen_at=now):
            return "frozen"  # another driver flipped it first
        row = book.get(tournament_id)
    if row.phase is Phase.FROZEN and row.field is None:
        return _freeze(registry, queue, row, request, store_url)
    if row.phase is Phase.FROZEN:
        qualifying = str(row.state.get("qualifying", ""))
        if qualifying and not _started_and_finished(store, queue, qualifying, store_url):
            return "qualifying"
        if not book.advance(tournament_id, Phase.FROZEN, phase=Phase.FINALS):
            return "frozen"
        row = book.get(tournament_id)
    if row.batches:
        current = batch_season_id(tournament_id, row.batches)
        if not _started_and_finished(store, queue, current, store_url):
            return "playing"
    return _next_batch(registry, queue, row, request, store_url)


def _started_and_finished(
    store: Store, queue: SeasonQueue | None, season_id: str, store_url: str
) -> bool:
    stored = store.season(season_id)
    if stored is None:
        raise UnknownSeason(f"no season {season_id!r}")
    if stored.status is SeasonStatus.CREATED and queue is not None:
        seasons.start(store, queue, season_id, store_url)  # made, then the driver died
    if not seasons.progress(store, season_id, queue).finished:
        return False
    # Settled by the job that recorded its last match; the driver watches, so it settles
    # it too (idempotent) before the next step reads it as over.
    store.settle_season(season_id)
    return True


def _freeze(
    registry: Registry, queue: SeasonQueue | None, row: TournamentRow,
    request: TournamentRequest, store_url: str,
) -> str:  # fmt: skip
    """Frozen, its field not fixed yet: fix the field, make (and start) the qualifying
    season; or cancel a field too small to play."""
    store = registry.store
    book = Tournaments(store)
    entrants = frozen_field(registry, row)
    seats = request.seats()
    smallest = min(request.table_sizes())
    if len(entrants) < max(2, smallest, seats if request.qualifying_rounds else 0):
        book.advance(
            row.tournament_id, Phase.FROZEN, phase=Phase.CANCELLED, field=entrants,
            state={"reason": f"{len(entrants)} entrants at the deadline"},
        )  # fmt: skip
        log.warning("tournament %s: cancelled, %d entrants", row.tournament_id, len(entrants))
        return Phase.CANCELLED.value
    state: dict[str, Any] = {"qualifying": ""}
    season: SeasonSpec | None = None
    if request.qualifying_rounds:
        try:
            season = _qualifying(row, request, entrants)
        except SeasonSpecError as exc:  # e.g. a field too large for that many rounds
            book.advance(
                row.tournament_id, Phase.FROZEN, phase=Phase.CANCELLED, field=entrants,
                state={"reason": f"no qualifying season: {exc}"},
            )  # fmt: skip
            log.warning("tournament %s: cancelled: %s", row.tournament_id, exc)
            return Phase.CANCELLED.value
        specs = expand(season)
        store.create_season(
            season.season_id,
            {**season.to_json(), "tournament": row.tournament_id, "stage": "qualifying"},
            [ScheduledMatch(s.match_id, s.index, s.to_json()) for s in specs],
        )
        _own(registry, row, season.season_id)
        state["qualifying"] = season.season_id
    if not book.advance(row.tournament_id, Phase.FROZEN, field=entrants, state=state):
        return "frozen"  # cancelled meanwhile
    log.info("tournament %s: field frozen, %d entrants", row.tournament_id, len(entrants))
    if season is not None and queue is not None:
        seasons.start(store, queue, season.season_id, store_url)
    return Phase.FROZEN.value


def _qualifying(row: TournamentRow, request: TournamentRequest, entrants: list[str]) -> SeasonSpec:
    """The qualifying season of the frozen field (SeasonSpecError when it cannot be)."""
    return SeasonSpec(
        season_id=qualifying_season_id(row.tournament_id), game=request.game,
        participants=tuple(entrants), seats=request.seats(), rounds=request.qualifying_rounds,
        seed=derive_seed(request.seed, "qualifying"), duplicate=request.finals.duplicate,
        options=dict(get_game(request.game).parse_options(request.options)),
        sandbox=request.sandbox,
    ).check()  # fmt: skip


def _next_batch(
    registry: Registry, queue: SeasonQueue | None, row: TournamentRow,
    request: TournamentRequest, store_url: str,
) -> str:  # fmt: skip
    """Plan finals batch ``row.batches + 1`` from every result so far: make and start
    its season, or, when the finals stop, publish the report (finals -> done)."""
    from saloon.ratings.finals import Stop, plan_batch

    store = registry.store
    book = Tournaments(store)
    number = row.batches + 1
    season_id = batch_season_id(row.tournament_id, number)
    if store.season(season_id) is not None:
        # Made by a driver that died (or lost the race) before counting it: the plan was
        # made from the results before it, which a late record (a match failed for good,
        # then recorded) may have changed since. Never plan it again: take it as made.
        return _adopt_batch(registry, queue, row, season_id, store_url)
    entrants = tuple(row.field or ())
    results, qualifying = placings(store, row)
    policy = request.policy()
    planned = plan_batch(
        entrants, results, policy, request.seed, row.batches, finals_from=qualifying
    )
    state = dict(row.state)
    state["matches"] = len(results)
    state["finals_matches"] = len(results) - qualifying
    if isinstance(planned, Stop):
        # The report (up to a minute at 100,000 results) is computed by a thread of its
        # own (REPORTS), never on this one, which drives every ladder too.
        state["stop"] = planned.reason
        if not book.advance(
            row.tournament_id, Phase.FINALS, expect_batches=row.batches,
            phase=Phase.REPORTING, state=state,
        ):  # fmt: skip
            return "playing"
        log.info(
            "tournament %s: finals stopped (%s) after %d finals matches; reporting",
            row.tournament_id, planned.reason, state["finals_matches"],
        )  # fmt: skip
        REPORTS.ensure(registry.store, row.tournament_id)
        return Phase.REPORTING.value
    labels: list[str] = []
    specs: list[MatchSpec] = []
    options = dict(get_game(request.game).parse_options(request.options))
    for index, table in enumerate(planned.tables):
        if table.deal not in labels:
            labels.append(table.deal)
        specs.append(
            MatchSpec(
                match_id=match_id(season_id, index), game=request.game, seats=tuple(table.seats),
                seed=deal_seed(request.seed, table.deal), options=options,
                sandbox=request.sandbox, season_id=season_id, index=index,
                deal=labels.index(table.deal),
            )
        )  # fmt: skip
    if not specs:
        log.warning("tournament %s: batch %d has no table; waiting", row.tournament_id, number)
        return "playing"
    ranking = planned.ranking
    standing = {"order": list(ranking.order), "p_next": [float(p) for p in ranking.p_next]}
    seated = sorted({ref for s in specs for ref in s.seats})
    season = SeasonSpec(
        season_id=season_id, game=request.game, participants=tuple(seated),
        seats=max(len(s.seats) for s in specs), seed=request.seed,
        kind=ScheduleKind.MATCHMAKER, duplicate=request.finals.duplicate, options=options,
        sandbox=request.sandbox,
    )  # fmt: skip
    store.create_season(
        season_id,
        {
            **season.to_json(), "tournament": row.tournament_id, "stage": "finals",
            "batch": number, "deals": labels, "field": list(planned.field),
            "standing": standing,
        },
        [ScheduledMatch(s.match_id, s.index, s.to_json()) for s in specs],
    )  # fmt: skip
    _own(registry, row, season_id)
    state["field_now"] = list(planned.field)
    state["standing"] = standing
    if not book.advance(
        row.tournament_id, Phase.FINALS, expect_batches=row.batches, batches=number,
        state=state,
    ):  # fmt: skip
        return "playing"  # another driver counted it first
    if queue is not None:
        seasons.start(store, queue, season_id, store_url)
    log.info("tournament %s: batch %d made (%d matches)", row.tournament_id, number, len(specs))
    return season_id


def _adopt_batch(
    registry: Registry, queue: SeasonQueue | None, row: TournamentRow, season_id: str,
    store_url: str,
) -> str:  # fmt: skip
    """Count finals batch ``season_id``, found made but not counted, as it was made (its
    stored field and standing), never planned again; SeasonConflict when that season is
    not this tournament's batch."""
    store = registry.store
    season = store.season(season_id)
    assert season is not None
    number = row.batches + 1
    spec = season.spec
    if spec.get("tournament") != row.tournament_id or spec.get("batch") != number:
        raise SeasonConflict(
            f"tournament {row.tournament_id}: season {season_id} exists and is not its "
            f"finals batch {number}"
        )
    results, qualifying = placings(store, row)
    state = dict(row.state)
    state["matches"] = len(results)
    state["finals_matches"] = len(results) - qualifying
    state["field_now"] = [str(x) for x in spec.get("field", [])]
    if spec.get("standing") is not None:
        state["standing"] = spec["standing"]
    _own(registry, row, season_id)
    if not Tournaments(store).advance(
        row.tournament_id, Phase.FINALS, expect_batches=row.batches, batches=number,
        state=state,
    ):  # fmt: skip
        return "playing"
    log.warning(
        "tournament %s: batch %d was made but not counted; counted as made, not planned again",
        row.tournament_id, number,
    )  # fmt: skip
    if queue is not None:
        seasons.start(store, queue, season_id, store_url)
    return season_id


def status(
    registry: Registry, row: TournamentRow, *, organiser: bool = False, user: str = "",
    queue: SeasonQueue | None = None,
) -> dict[str, Any]:  # fmt: skip
    """A tournament as anyone may read it (the API, the web page, ``tournament status``):
    its settings (the seed null until it is over, unless for its ``organiser``), phase,
    field, finals progress, the standing so far and, once done, the report; ``user``'s
    final marks. Reads only: nothing here changes a phase."""
    from saloon.arena.secrecy import shown_tournament_settings

    store = registry.store
    state = dict(row.state)
    progress: dict[str, Any] | None = None
    ids = season_ids(row)
    current = ids[-1] if ids else ""
    if current and store.season(current) is not None:
        p = seasons.progress(store, current, queue)
        progress = {
            "season_id": current, "status": p.status.value, "total": p.total,
            "done": p.done, "running": p.running, "failed": p.failed,
        }  # fmt: skip
    marks = Tournaments(store).marks(row.tournament_id, user) if user else []
    report = row.report or {}
    return {
        "tournament_id": row.tournament_id,
        "game": row.game,
        "organiser": row.organiser,
        "phase": row.phase.value,
        "deadline": row.deadline.isoformat(),
        "frozen_at": row.frozen_at.isoformat() if row.frozen_at else None,
        "field": list(row.field or ()),
        "batches": row.batches,
        "matches": int(state.get("matches", 0)),
        "finals_matches": int(state.get("finals_matches", 0)),
        "stop": state.get("stop"),
        "reason": state.get("reason"),
        "field_now": list(state.get("field_now", [])),
        "standing": state.get("standing"),
        "season": progress,
        "settings": shown_tournament_settings(registry, row, row.spec, organiser),
        "my_finals": [f"{m.bot}@{m.version}" for m in marks],
        "report": report.get("json"),
    }


def report_csv(row: TournamentRow, part: str = "standings") -> str:
    """A part of the published report as CSV, ``standings`` or ``crosstable``
    (RegistryError before it is published)."""
    if row.report is None:
        raise RegistryError(f"tournament {row.tournament_id} has no report yet ({row.phase.value})")
    if part not in ("standings", "crosstable"):
        raise RegistryError(f"report part {part!r}: standings or crosstable")
    return str(row.report["csv" if part == "standings" else "crosstable_csv"])


def cancel(
    registry: Registry, queue: SeasonQueue | None, tournament_id: str, user: str
) -> TournamentRow:
    """The organiser's: stop a tournament that is not over (its running season's
    unplayed matches are dropped). PermissionDenied for anyone else."""
    book = Tournaments(registry.store)
    row = book.get(tournament_id)
    if row.organiser != user:
        raise PermissionDenied(f"tournament {tournament_id} is {row.organiser}'s")
    if row.phase.over:
        raise RegistryError(f"tournament {tournament_id} is {row.phase.value} already")
    if not book.advance(tournament_id, row.phase, phase=Phase.CANCELLED):
        raise RegistryError(f"tournament {tournament_id} changed meanwhile; try again")
    for season_id in season_ids(row):
        if registry.store.season(season_id) is not None:
            seasons.cancel(registry.store, season_id, queue)
    return book.get(tournament_id)


#: Each tournament's failing ticks, logged once in full and then now and then (drive()).
_failures: dict[str, RepeatedFailure] = {}


def drive(
    registry: Registry, queue: SeasonQueue | None, store_url: str, now: datetime
) -> dict[str, str]:
    """One tick of every tournament not over (the server's driver thread calls it)."""
    done = {}
    live = (Phase.OPEN, Phase.FROZEN, Phase.FINALS, Phase.REPORTING)
    for row in Tournaments(registry.store).all(live):
        failures = _failures.get(row.tournament_id)
        if failures is None:
            failures = _failures[row.tournament_id] = RepeatedFailure(
                log, f"tournament {row.tournament_id}: its tick"
            )
        try:
            done[row.tournament_id] = tick(registry, queue, row.tournament_id, store_url, now)
            failures.succeeded()
        except Exception:  # one broken tournament must not stop the others
            failures.failed()
            done[row.tournament_id] = "error"
    return done


def tournament_over(store: Store, row: TournamentRow) -> bool:
    """True when a tournament is done or cancelled and none of its seasons still plays:
    its seed may then be published."""
    if not row.phase.over:
        return False
    for season_id in season_ids(row):
        season = store.season(season_id)
        if season is None:
            continue
        counts = store.progress(season_id)
        if season.status is SeasonStatus.CANCELLED:
            if counts.count(MatchStatus.RUNNING):
                return False
        elif counts.remaining:
            return False
    return True
