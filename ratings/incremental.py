"""Incremental boards: a stored checkpoint of the fold, extended as results arrive.

A board (one ladder's all-time board, one season's, or one continuous ladder's) keeps in
the store the fold's state (:class:`saloon.ratings.fold.Folder`) at the end of the
*contiguous prefix* of its scheduled matches in schedule order -- (season surrogate key,
schedule index), exactly the order :func:`saloon.ratings.fold.fold` sorts on. Tables:
``rating_boards`` (the position, a generation, the counts), ``rating_entries`` (per bot:
statistics, every rated version's exact TrueSkill state), ``rating_history``,
``rating_h2h``, ``rating_skipped`` (saloon.worker.store.schema).

:meth:`IncrementalBoard.update` walks the scheduled matches after the position:

* a recorded match extends the prefix (rated, or, when aborted or of another ladder,
  passed over exactly as the fold passes over it);
* a cancelled match, or one that cannot be played now (pending or failed in a season that
  is not running: never started, or settled), is passed over and remembered: if it is
  recorded later, the board is rebuilt from nothing (the result is behind the prefix);
* a queued or running match, or a pending or failed one of a running season, stops the
  walk: the results scheduled after it wait, however long ago they were recorded;
* a duplicate deal (its matches are consecutive in a schedule) is one comparison: it
  extends the prefix only once every one of its matches has.

The process that updates holds the checkpoint in memory: an update is one
statement (the stored generation, whether a passed-over match was recorded since, the
board's newest season, and the next few scheduled matches with their results' seats) and
the fold of what joined the prefix. The stored checkpoint is written behind it
(:data:`WRITE_EVERY` scheduled matches, :data:`WRITE_AFTER_S`, or at once when the walk
passed over a match or registered a new season), only what changed: the touched bots'
entries, the new history points, head-to-head increments. A crash loses only work: the
stored checkpoint is re-extended over the same results to the same numbers. Another
process's write is seen by the generation (the held state is then dropped and the stored
one re-read). The same results give exactly the numbers of a full
:func:`~saloon.ratings.fold.fold` (tests/integration/test_incremental_boards.py checks
it, floats compared for equality): the TrueSkill state is stored as the library's own
(pi, tau) pair, never recomputed from (mu, sigma). A board read is the held checkpoint,
not a fold (its details: the stored history and head-to-head plus what is unwritten).

Results recorded outside any season (the platform records none: every match it plays is
scheduled) have no place in a schedule, so they are not on incremental boards.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson
import sqlalchemy as sa
from sqlalchemy.engine import Compiled

from saloon.ratings.fold import BotStats, Folder, HeadToHead, HistoryPoint, Key, Standings
from saloon.ratings.ladders import Ladder, ladder_for
from saloon.ratings.leaderboard import BotInfo
from saloon.ratings.params import RatingParams, Scope
from saloon.ratings.results import Result, SeatResult
from saloon.ratings.source import bot_name, owner_of, with_defaults
from saloon.referee.record import Outcome
from saloon.sdk.botref import STORED, parse_entry
from saloon.worker.store import schema as t
from saloon.worker.store.rows import MatchStatus, SeasonStatus

if TYPE_CHECKING:
    from saloon.worker.store.store import Store

#: Bumped when what a checkpoint stores, or how the fold rates, changes: a stored
#: checkpoint of another format is rebuilt, never extended.
FOLD_FORMAT = 2
#: Scheduled matches read per step of the walk, at most.
CHUNK = 2000
#: Scheduled matches read by an update's first step (most updates find one result or two,
#: then a match not played yet); each further step reads 8 times more.
FIRST_CHUNK = 4
#: The stored checkpoint is written once the held one has taken in this many scheduled
#: matches since it was last written, or WRITE_AFTER_S after the first of them (checked at
#: the next update), or at once when the walk passed over a match without a result or
#: registered a new season's bots. Until then a crash loses nothing but work: the next
#: process re-extends the stored checkpoint over the same results, to the same numbers.
WRITE_EVERY = 1000
WRITE_AFTER_S = 10.0
#: The position before the first scheduled match (season keys start at 1).
START = (0, -1)


@dataclass(frozen=True)
class BoardScope:
    """Which scheduled matches a board folds, on which ladder, with which dynamics."""

    #: The board's key in the store: ``all-time:<ladder>``, ``season:<id>``, ``ladder:<id>``.
    key: str
    ladder: Ladder
    scope: Scope
    #: Exactly one of: every season of this game; this one season; the seasons whose
    #: owner row names this schedule id (a continuous ladder's batches).
    game: str | None = None
    season_id: str | None = None
    schedule_id: str | None = None
    params: RatingParams | None = None

    @classmethod
    def all_time(cls, ladder: Ladder) -> BoardScope:
        """The all-time board of ``ladder``: every season of its game, all-time tau."""
        return cls(f"all-time:{ladder.label}", ladder, Scope.ALL_TIME, game=ladder.game)

    @classmethod
    def season(cls, season_id: str, ladder: Ladder) -> BoardScope:
        """One season's board (season tau)."""
        return cls(f"season:{season_id}", ladder, Scope.SEASON, season_id=season_id)

    @classmethod
    def batches(cls, schedule_id: str, ladder: Ladder) -> BoardScope:
        """The board of the seasons made under ``schedule_id`` (a continuous ladder's)."""
        return cls(f"ladder:{schedule_id}", ladder, Scope.SEASON, schedule_id=schedule_id)

    @property
    def kind(self) -> str:
        """Which seasons the board folds: "season", "schedule" or "game"."""
        if self.season_id is not None:
            return "season"
        return "schedule" if self.schedule_id is not None else "game"

    @property
    def value(self) -> str:
        """The season id, schedule id or game of :attr:`kind`."""
        return self.season_id or self.schedule_id or self.game or ""

    def seasons_where(self) -> sa.ColumnElement[bool]:
        """The SQL condition on ``seasons`` of this board's seasons."""
        if self.season_id is not None:
            return t.seasons.c.season_id == self.season_id
        if self.schedule_id is not None:
            owned = sa.select(t.season_owners.c.season_id).where(
                t.season_owners.c.schedule_id == self.schedule_id
            )
            return t.seasons.c.season_id.in_(owned.scalar_subquery())
        return t.seasons.c.game == self.game


class _Moved(Exception):
    """The stored checkpoint is not the one the held state extends (another process wrote
    it, or a match the prefix passed over has been recorded since)."""


@dataclass
class _Pending:
    """What the held checkpoint took in that the stored one has not (the history points
    and head-to-head increments are the held Folder's own, emptied at each write)."""

    #: Scheduled matches walked over.
    matches: int = 0
    #: When the first of them was taken in (time.monotonic(); None: nothing pending).
    since: float | None = None
    touched: set[str] = field(default_factory=set)
    skipped: list[str] = field(default_factory=list)
    #: The position, counts or known bots moved.
    header: bool = False

    def any(self) -> bool:
        return self.header or bool(self.touched or self.skipped)


def _due(pending: _Pending) -> bool:
    """True when the held checkpoint's news must be written now."""
    if pending.skipped or pending.matches >= WRITE_EVERY:
        return True
    return pending.since is not None and time.monotonic() - pending.since >= WRITE_AFTER_S


@dataclass
class _State:
    """A board's checkpoint as this process holds it."""

    #: The stored checkpoint's generation this state extends.
    generation: int = 0
    #: This state's stamp in the process (see IncrementalBoard.update).
    version: int = 0
    position: tuple[int, int] = START
    comparisons: int = 0
    matches: int = 0
    seat_counts: set[int] = field(default_factory=set)
    #: The newest season (surrogate key) whose scheduled bots are registered as known.
    known_through: int = 0
    #: Ladders of the results walked over (labels' parts), in first-seen order.
    ladders: list[Ladder] = field(default_factory=list)
    stats: dict[str, BotStats] = field(default_factory=dict)
    ratings: dict[Key, tuple[float, float]] = field(default_factory=dict)
    current: dict[str, Key] = field(default_factory=dict)
    #: Live trueskill.Rating objects (exact pi, tau) per bot version.
    live: dict[Key, Any] = field(default_factory=dict)
    #: Bots scheduled on the ladder: name -> (season id, index, owner, version) of the
    #: first scheduled seat (season ids in byte order, as the full fold's source reads them).
    known: dict[str, tuple[str, int, str, str]] = field(default_factory=dict)
    #: The bot registry's owners as last read (None: not yet).
    owners: dict[str, str] | None = None
    #: The fold over this state (its history and head-to-head: what is not yet written).
    folder: Folder | None = None
    #: The board's scope (None: an empty state standing in for a missing one).
    scope: BoardScope | None = None
    pending: _Pending = field(default_factory=_Pending)
    #: Seat bot id -> (name, version written in the id, owner), as _ident made them.
    seat_ids: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    #: (game, options as stored) -> the ladder of a result.
    ladder_of: dict[tuple[str, str], Ladder] = field(default_factory=dict)

    def header(self) -> dict[str, Any]:
        return {
            "format": FOLD_FORMAT,
            "comparisons": self.comparisons,
            "matches": self.matches,
            "seat_counts": sorted(self.seat_counts),
            "known_through": self.known_through,
            "ladders": [[lad.game, [list(o) for o in lad.options]] for lad in self.ladders],
        }


@dataclass
class _Step:
    """What one step of the walk adds to the checkpoint."""

    position: tuple[int, int]
    units: list[list[Result]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    ladders: list[Ladder] = field(default_factory=list)
    #: True when the walk reached a match that has not finished, or the schedule's end.
    stopped: bool = False
    #: Scheduled matches up to the step's position.
    walked: int = 0


def _rating(pi: float, tau: float) -> Any:
    """A trueskill.Rating with exactly this (pi, tau) (its constructor takes mu, sigma)."""
    import trueskill

    rating = trueskill.Rating.__new__(trueskill.Rating)
    rating.pi, rating.tau = pi, tau
    return rating


def _entry_data(state: _State, bot: str) -> dict[str, Any]:
    data: dict[str, Any] = {}
    stats = state.stats.get(bot)
    if stats is not None:
        data["stats"] = {
            "owner": stats.owner,
            "version": stats.version,
            "matches": stats.matches,
            "wins": stats.wins,
            "placing_sum": stats.placing_sum,
            "points_sum": stats.points_sum,
            "faults": stats.faults,
            "played_out": stats.played_out,
            "versions": [[v, n] for v, n in stats.versions.items()],
        }
    # A version is rated only once it has played: its key is among the bot's versions.
    keys = [(bot, v) for v in (stats.versions if stats is not None else ())]
    rated = [
        [key[1], *state.ratings.get(key, (None, None)), state.live[key].pi, state.live[key].tau]
        for key in keys
        if key in state.live
    ]
    if rated:
        data["rated"] = rated
    current = state.current.get(bot)
    if current is not None:
        data["current"] = current[1]
    known = state.known.get(bot)
    if known is not None:
        data["known"] = list(known)
    return data


def _load_entry(state: _State, bot: str, data: dict[str, Any]) -> None:
    raw = data.get("stats")
    if raw is not None:
        versions = {str(v): int(n) for v, n in raw["versions"]}
        state.stats[bot] = BotStats(
            bot, raw["owner"], raw["version"], raw["matches"], raw["wins"], raw["placing_sum"],
            raw["points_sum"], raw["faults"], raw["played_out"], versions,
        )  # fmt: skip
    for version, mu, sigma, pi, tau in data.get("rated", ()):
        key = (bot, str(version))
        if mu is not None:  # None: created, but its one comparison could not be rated
            state.ratings[key] = (mu, sigma)
        state.live[key] = _rating(pi, tau)
    if "current" in data:
        state.current[bot] = (bot, str(data["current"]))
    if "known" in data:
        season, index, owner, version = data["known"]
        state.known[bot] = (str(season), int(index), str(owner), str(version))


#: Per store, per board key: the checkpoint this process holds (dropped with the store).
_HELD: weakref.WeakKeyDictionary[Store, dict[str, _State]] = weakref.WeakKeyDictionary()
_HELD_LOCK = threading.Lock()
_BOARD_LOCKS: dict[tuple[int, str], threading.Lock] = {}
#: Stamps of held states: a new one at every change, never reused in the process.
_VERSIONS = itertools.count(1)
#: The walk statement per (dialect, kind of board), compiled once.
_WALKS: dict[tuple[str, str], Compiled] = {}


def _seasons_where(kind: str) -> sa.ColumnElement[bool]:
    """:meth:`BoardScope.seasons_where` with the scope's value a bind named ``v``."""
    se, value = t.seasons, sa.bindparam("v", type_=sa.String)
    if kind == "season":
        return se.c.season_id == value
    if kind == "schedule":
        owned = sa.select(t.season_owners.c.season_id).where(t.season_owners.c.schedule_id == value)
        return se.c.season_id.in_(owned.scalar_subquery())
    return se.c.game == value


def _walk_statement(dialect: sa.Dialect, kind: str) -> Compiled:
    """One round trip of the walk: the stored checkpoint's generation, whether a passed-over
    match has been recorded since, the board's newest season, then the next ``n`` scheduled
    matches after the position, each recorded one with its seats (one row per seat)."""
    made = _WALKS.get((dialect.name, kind))
    if made is not None:
        return made
    sm, se, r, rs = t.scheduled_matches, t.seasons, t.results, t.result_seats
    b, s = t.rating_boards, t.rating_skipped
    deal: sa.ColumnElement[Any]
    if dialect.name == "postgresql":
        deal = sa.literal_column("scheduled_matches.spec ->> 'deal'")
    else:
        deal = sa.literal_column("json_extract(scheduled_matches.spec, '$.deal')")
    board = sa.bindparam("board", type_=sa.String)
    w = (
        sa.select(sm.c.season_pk.label("pk"), sm.c.idx, sm.c.match_id, sm.c.status,
                  deal.label("deal"), se.c.season_id, se.c.status.label("season_status"),
                  r.c.match_id.label("recorded"), r.c.outcome, r.c.game,
                  sa.cast(r.c.options, sa.Text).label("options"))
        .select_from(sm.join(se, se.c.id == sm.c.season_pk)
                     .outerjoin(r, r.c.match_id == sm.c.match_id))
        .where(_seasons_where(kind))
        # A row-value comparison: an index range scan on (season_pk, idx), not a sort
        # of every scheduled match.
        .where(sa.tuple_(sm.c.season_pk, sm.c.idx)
               > sa.tuple_(sa.bindparam("seq", type_=sa.Integer),
                           sa.bindparam("idx", type_=sa.Integer)))
        .order_by(sm.c.season_pk, sm.c.idx)
        .limit(sa.bindparam("n", type_=sa.Integer))
    ).subquery("w")  # fmt: skip
    late = (
        sa.select(sa.literal_column("1"))
        .select_from(s.join(r, r.c.match_id == s.c.match_id))
        .where(s.c.board == board)
        .exists()
    )
    head = sa.select(
        sa.select(b.c.generation).where(b.c.board == board).scalar_subquery().label("generation"),
        late.label("late"),
        sa.select(sa.func.max(se.c.id)).where(_seasons_where(kind)).scalar_subquery().label("top"),
    ).subquery("h")
    query = (
        sa.select(head.c.generation, head.c.late, head.c.top, w.c.pk, w.c.idx, w.c.match_id,
                  w.c.status, w.c.deal, w.c.season_id, w.c.season_status, w.c.recorded,
                  w.c.outcome, w.c.game, w.c.options, rs.c.bot, rs.c.version, rs.c.score,
                  rs.c.rank, rs.c.played_out, rs.c.faults)
        .select_from(head.outerjoin(w, sa.true()).outerjoin(rs, rs.c.match_id == w.c.recorded))
        .order_by(w.c.pk, w.c.idx, rs.c.seat)
    )  # fmt: skip
    compiled = query.compile(dialect=dialect)
    if "POSTCOMPILE" in compiled.string:
        raise AssertionError("the board walk must compile to one fixed statement")
    _WALKS[(dialect.name, kind)] = compiled
    return compiled


class IncrementalBoard:
    """One board's checkpoint in one store: :meth:`update` extends it, :meth:`standings`
    reads it."""

    def __init__(self, store: Store, scope: BoardScope) -> None:
        self.store = store
        self.scope = scope
        self.params = scope.params or scope.ladder.params
        with _HELD_LOCK:
            self._held = _HELD.setdefault(store, {})
            self._lock = _BOARD_LOCKS.setdefault((id(store), scope.key), threading.Lock())
        self._conn: sa.Connection | None = None

    # -- reading -------------------------------------------------------------------------

    def update(self) -> int:
        """Take in every result that joined the contiguous prefix; a stamp of the board as
        this process holds it (it changes exactly when the board does, and is never reused
        in this process)."""
        with self._lock:
            for _attempt in range(5):
                state = self._held.get(self.scope.key)
                if state is None:
                    state = self._load()
                    if state is None:
                        continue  # another process rebuilt it at the same moment
                try:
                    self._extend(state)
                except _Moved:
                    self._held.pop(self.scope.key, None)  # re-read the stored checkpoint
                    continue
                return state.version
            raise RuntimeError(f"board {self.scope.key}: checkpoint kept changing under us")

    def write(self) -> None:
        """Write what the held checkpoint has taken in and the stored one has not yet."""
        with self._lock:
            state = self._held.get(self.scope.key)
            if state is not None and state.pending.any():
                try:
                    self._write(state)
                except _Moved:
                    self._held.pop(self.scope.key, None)

    @contextmanager
    def _reading(self, what: str) -> Iterator[sa.Connection]:
        """The load's read connection, or a read transaction of its own."""
        if self._conn is not None:
            yield self._conn
            return
        with self.store.read(what) as conn:
            yield conn

    def waiting_since(self) -> datetime | None:
        """When the oldest result this board does not include yet was recorded (its
        ``finished_at``, UTC): a result scheduled after the board's contiguous prefix, which
        waits for a match before it (queued or running); None when the board has every
        recorded result of its seasons. As of the last :meth:`update`: a board's lag is
        the time since then (the arena's metrics: saloon_board_lag_seconds)."""
        with self._lock:
            state = self._held.get(self.scope.key)
            position = state.position if state is not None else START
        se, sm, rs = t.seasons, t.scheduled_matches, t.results
        query = (
            sa.select(sa.func.min(rs.c.finished_at))
            .select_from(
                rs.join(sm, sm.c.match_id == rs.c.match_id).join(se, se.c.id == sm.c.season_pk)
            )
            .where(
                self.scope.seasons_where(),
                sa.or_(
                    se.c.id > position[0],
                    sa.and_(se.c.id == position[0], sm.c.idx > position[1]),
                ),
            )
        )
        with self.store.read("board lag") as conn:
            oldest: datetime | None = conn.execute(query).scalar()
        if oldest is None:
            return None
        return oldest if oldest.tzinfo is not None else oldest.replace(tzinfo=UTC)

    def standings(self, details: bool = True) -> tuple[Standings, list[BotInfo], list[Ladder]]:
        """(the board's standings, bots known but unrated, the ladders seen) as of the
        last :meth:`update`; ``details``: with rating histories and head-to-head."""
        for _attempt in range(5):
            with self._lock:
                state = self._held.get(self.scope.key)
                if state is None:
                    state = _State()
                out = Standings(self.scope.ladder, self.scope.scope, self.params)
                out.ratings = dict(state.ratings)
                out.current = dict(state.current)
                out.stats = {bot: _copy_stats(s) for bot, s in state.stats.items()}
                out.comparisons, out.matches = state.comparisons, state.matches
                out.seat_counts = set(state.seat_counts)
                known = [
                    BotInfo(bot, k[2], k[3])
                    for bot, k in sorted(state.known.items(), key=lambda i: i[1][:2])
                ]
                ladders = list(state.ladders)
                if not details:
                    return out, known, ladders
                found = self._details(state)
                if found is not None:
                    out.history, out.head_to_head = found
                    return out, known, ladders
                # Another process wrote the stored checkpoint: re-read it, then again.
                self._held.pop(self.scope.key, None)
            self.update()
        raise RuntimeError(f"board {self.scope.key}: checkpoint kept changing under us")

    def _details(
        self, state: _State
    ) -> tuple[dict[str, list[HistoryPoint]], dict[tuple[str, str], HeadToHead]] | None:
        """The stored histories and head-to-head, with what ``state`` holds unwritten
        added; None when the stored checkpoint is not the one ``state`` extends."""
        h, c, b = t.rating_history, t.rating_h2h, t.rating_boards
        history: dict[str, list[HistoryPoint]] = {}
        h2h: dict[tuple[str, str], HeadToHead] = {}
        key = self.scope.key
        with self.store.read("board details") as conn:
            generation = conn.execute(
                sa.select(b.c.generation).where(b.c.board == key)
            ).scalar_one_or_none()
            if state.folder is not None and generation != state.generation:
                return None
            for bot, step, match_id, season, version, mu, sigma in conn.execute(
                sa.select(h.c.bot, h.c.step, h.c.match_id, h.c.season, h.c.version, h.c.mu,
                          h.c.sigma).where(h.c.board == key).order_by(h.c.step)
            ):  # fmt: skip
                history.setdefault(bot, []).append(
                    HistoryPoint(step, match_id, season, version, mu, sigma)
                )
            for a, bb, above, below, tied in conn.execute(
                sa.select(c.c.a, c.c.b, c.c.above, c.c.below, c.c.tied).where(c.c.board == key)
            ):
                h2h[(a, bb)] = HeadToHead(above, below, tied)
        if state.folder is not None:
            for bot, points in state.folder.out.history.items():
                history.setdefault(bot, []).extend(points)
            for pair, cell in state.folder.out.head_to_head.items():
                held = h2h.get(pair)
                h2h[pair] = (
                    HeadToHead(cell.above, cell.below, cell.tied)
                    if held is None
                    else HeadToHead(held.above + cell.above, held.below + cell.below,
                                    held.tied + cell.tied)
                )  # fmt: skip
        return history, h2h

    # -- the checkpoint ------------------------------------------------------------------

    def _load(self) -> _State | None:
        """The stored checkpoint (a rebuild when there is none, it is of another format,
        or a passed-over match has been recorded since); None when another process rebuilt
        it at the same moment."""
        with self.store.read("board checkpoint") as conn:
            self._conn = conn
            try:
                state = self._fresh()
            finally:
                self._conn = None
        if state is None:
            state = self._reset()
        return state

    def _fresh(self) -> _State | None:
        """The stored checkpoint; None to rebuild."""
        key = self.scope.key
        b, s, r = t.rating_boards, t.rating_skipped, t.results
        late = (
            sa.select(sa.literal(1))
            .select_from(s.join(r, r.c.match_id == s.c.match_id))
            .where(s.c.board == key)
            .limit(1)
            .exists()
        )
        with self._reading("board checkpoint") as conn:
            row = conn.execute(
                sa.select(b.c.generation, b.c.state, late.label("late")).where(b.c.board == key)
            ).one_or_none()
            if row is None or row.late or dict(row.state).get("format") != FOLD_FORMAT:
                return None
            state = self._read_state(conn, row.generation)
        state.scope = self.scope
        self._held[key] = state
        return state

    def _read_state(self, conn: sa.Connection, generation: int) -> _State:
        b, e = t.rating_boards, t.rating_entries
        row = conn.execute(sa.select(b).where(b.c.board == self.scope.key)).one()
        raw = dict(row.state)
        state = _State(
            generation=generation,
            version=next(_VERSIONS),
            position=(row.position_seq, row.position_idx),
            comparisons=int(raw["comparisons"]),
            matches=int(raw["matches"]),
            seat_counts={int(n) for n in raw["seat_counts"]},
            known_through=int(raw["known_through"]),
            ladders=[Ladder(g, tuple((str(k), str(v)) for k, v in o)) for g, o in raw["ladders"]],
        )
        for bot, data in conn.execute(
            sa.select(e.c.bot, e.c.data).where(e.c.board == self.scope.key)
        ):
            _load_entry(state, bot, dict(data))
        return state

    def _reset(self) -> _State | None:
        """Forget the stored checkpoint and start an empty one (a rebuild); None when
        another process did so at the same moment."""
        key = self.scope.key
        try:
            with self.store.write("board rebuild") as conn:
                generation = conn.execute(
                    sa.select(t.rating_boards.c.generation).where(t.rating_boards.c.board == key)
                ).scalar_one_or_none()
                for table in (t.rating_entries, t.rating_history, t.rating_h2h, t.rating_skipped):
                    conn.execute(table.delete().where(table.c.board == key))
                conn.execute(t.rating_boards.delete().where(t.rating_boards.c.board == key))
                state = _State(generation=(generation or 0) + 1, version=next(_VERSIONS))
                conn.execute(
                    t.rating_boards.insert().values(
                        board=key, position_seq=START[0], position_idx=START[1],
                        generation=state.generation, state=state.header(), updated_at=_now(),
                    )
                )  # fmt: skip
        except sa.exc.IntegrityError:  # another process rebuilt it at the same moment
            self._held.pop(key, None)
            return None
        state.scope = self.scope
        self._held[key] = state
        return state

    def _extend(self, state: _State) -> None:
        """Walk, taking in the results that joined the prefix, until it stops; the
        checkpoint is written when :func:`_due`. _Moved when the stored checkpoint is no
        longer the one ``state`` extends (another process wrote it, or a passed-over match
        has been recorded: the caller re-reads, or rebuilds)."""
        size = FIRST_CHUNK  # most updates find a result or two: read a little first
        pending = state.pending
        while True:
            head, step = self._walk(state, size)
            generation, late, top = head
            if generation != state.generation or late:
                raise _Moved
            if top is not None and top > state.known_through:
                known = self._known_seasons(state)
                added = self._register_known(state, known, self._owners(state) if known else {})
                pending.touched |= added
                pending.header = True
                state.version = next(_VERSIONS)
            moved = step.position != state.position
            if moved:
                folder = self._folder(state)
                touched = pending.touched
                for unit in step.units:
                    folder.unit(unit)
                    for result in unit:
                        touched.update(s.bot for s in result.seats)
                state.comparisons, state.matches = folder.out.comparisons, folder.out.matches
                for ladder in step.ladders:
                    if ladder not in state.ladders:
                        state.ladders.append(ladder)
                state.position = step.position
                state.version = next(_VERSIONS)
                pending.skipped.extend(step.skipped)
                pending.matches += step.walked
                pending.header = True
                if pending.since is None:
                    pending.since = time.monotonic()
            if pending.any() and _due(pending):
                self._write(state)
            if step.stopped:
                return  # it stopped at a match that has not finished: nothing more now
            # More to read. A deal group longer than the step: read more at once.
            size = min(size * 8, CHUNK) if moved else size * 8

    def _folder(self, state: _State) -> Folder:
        folder = state.folder
        if folder is None:
            folder = state.folder = Folder(self.scope.ladder, self.scope.scope, self.params)
            out = folder.out
            out.stats, out.ratings, out.current = state.stats, state.ratings, state.current
            out.seat_counts = state.seat_counts
            folder.live_ratings = state.live
        folder.out.comparisons, folder.out.matches = state.comparisons, state.matches
        return folder

    def _write(self, state: _State) -> None:
        """Write what ``state`` took in since the stored checkpoint (_Moved when that is no
        longer the one it extends)."""
        key = self.scope.key
        pending = state.pending
        out = state.folder.out if state.folder is not None else None
        entries = [
            {"board": key, "bot": bot, "mu": _mu(state, bot, 0), "sigma": _mu(state, bot, 1),
             "data": _entry_data(state, bot)}
            for bot in sorted(pending.touched)
        ]  # fmt: skip
        history = (
            []
            if out is None
            else [
                {"board": key, "bot": bot, "step": p.step, "match_id": p.match_id,
                 "season": p.season, "version": p.version, "mu": p.mu, "sigma": p.sigma}
                for bot, points in out.history.items() for p in points
            ]
        )  # fmt: skip
        h2h = (
            []
            if out is None
            else [
                {"board": key, "a": a, "b": bb, "above": c.above, "below": c.below,
                 "tied": c.tied}
                for (a, bb), c in out.head_to_head.items()
            ]
        )  # fmt: skip
        self._write_step(state, entries, history, h2h, pending.skipped)
        state.generation += 1
        state.pending = _Pending()
        if out is not None:
            out.history, out.head_to_head = {}, {}

    def _write_step(
        self,
        state: _State,
        entries: list[dict[str, Any]],
        history: list[dict[str, Any]],
        h2h: list[dict[str, Any]],
        skipped: list[str],
    ) -> None:
        key = self.scope.key
        b = t.rating_boards
        with self.store.write("board checkpoint") as conn:
            moved = conn.execute(
                b.update()
                .where((b.c.board == key) & (b.c.generation == state.generation))
                .values(
                    position_seq=state.position[0],
                    position_idx=state.position[1],
                    generation=state.generation + 1,
                    state=state.header(),
                    updated_at=_now(),
                )
            ).rowcount
            if moved != 1:
                raise _Moved  # rolls the transaction back
            if self.store.backend == "postgresql":
                _write_recordsets(self.store, conn, key, entries, history, h2h)
                entries = history = h2h = []
            if entries:
                conn.execute(self._upsert(t.rating_entries, ["board", "bot"],
                                          ["mu", "sigma", "data"]), entries)  # fmt: skip
            if history:
                conn.execute(t.rating_history.insert(), history)
            if h2h:
                conn.execute(self._h2h_upsert(), h2h)
            if skipped:
                conn.execute(
                    self.store.insert_ignore(t.rating_skipped, ["board", "match_id"]),
                    [{"board": key, "match_id": m} for m in skipped],
                )

    def _upsert(self, table: sa.Table, keys: list[str], columns: list[str]) -> Any:
        stmt = self._insert(table)
        return stmt.on_conflict_do_update(
            index_elements=keys, set_={c: stmt.excluded[c] for c in columns}
        )

    def _h2h_upsert(self) -> Any:
        c = t.rating_h2h.c
        stmt = self._insert(t.rating_h2h)
        return stmt.on_conflict_do_update(
            index_elements=["board", "a", "b"],
            set_={
                "above": c.above + stmt.excluded.above,
                "below": c.below + stmt.excluded.below,
                "tied": c.tied + stmt.excluded.tied,
            },
        )

    def _insert(self, table: sa.Table) -> Any:
        return self.store.insert(table)

    # -- the walk ------------------------------------------------------------------------

    def _walk(self, state: _State, size: int) -> tuple[tuple[Any, Any, Any], _Step]:
        """(the stored generation, whether a passed-over match was recorded since, the
        board's newest season) and the next step of the prefix after the position
        (``size`` scheduled matches): one round trip."""
        compiled = _walk_statement(self.store.engine.dialect, self.scope.kind)
        seq, idx = state.position
        values = {"board": self.scope.key, "v": self.scope.value, "seq": seq, "idx": idx,
                  "n": size}  # fmt: skip
        rows = self.store.fetch("board walk", compiled, values)
        first = rows[0]
        head = (first[0], bool(first[1]), first[2])
        step = _Step(state.position)
        group: tuple[str, Any] | None = None
        pending: list[Result] = []
        pending_skipped: list[str] = []
        last = state.position
        blocked = False
        walked = 0  # scheduled matches read
        closed = 0  # of which in the step

        def close() -> None:
            nonlocal group, pending, pending_skipped, closed
            if pending:
                step.units.append(pending)
            step.skipped.extend(pending_skipped)
            step.position = last
            group, pending, pending_skipped = None, [], []
            closed = walked

        at, count = 0, len(rows)
        if first[3] is None:
            count = 0  # nothing scheduled after the position
        while at < count:
            row = rows[at]
            end = at + 1
            if row[10] is not None:  # recorded: one row per seat
                while end < count and rows[end][5] == row[5]:
                    end += 1
            (_g, _l, _t, pk, index, match_id, status, deal, season_id, season_status,
             recorded, outcome, game, options) = row[:14]  # fmt: skip
            key = None if deal is None else (season_id, deal)
            if group is not None and key != group:
                close()
            result: Result | None = None
            remember = False
            if recorded is not None:
                ladder = self._ladder(state, game, options)
                if ladder not in step.ladders:
                    step.ladders.append(ladder)
                if outcome == Outcome.COMPLETED.value and ladder == self.scope.ladder:
                    seats = self._seats(state, rows, at, end)
                    result = Result(
                        ladder, match_id, (pk, index), seats, Outcome.COMPLETED, season_id,
                        None if deal is None else f"{season_id}/{deal}",
                    )  # fmt: skip
            elif _blocks(status, season_status):
                blocked = True
                break
            else:
                remember = status != MatchStatus.CANCELLED.value
            walked += 1
            here = (pk, index)
            if key is None:
                if result is not None:
                    step.units.append([result])
                if remember:
                    step.skipped.append(match_id)
                step.position = last = here
                closed = walked
            else:
                group = key
                if result is not None:
                    pending.append(result)
                if remember:
                    pending_skipped.append(match_id)
                last = here
            at = end
        matches = walked + (1 if blocked else 0)
        if group is not None and not blocked and matches < size:
            close()  # a season's matches are all stored at once: the deal is complete
        step.stopped = blocked or matches < size
        step.walked = closed
        return head, step

    def _ladder(self, state: _State, game: str, options: str) -> Ladder:
        memo = (game, options)
        ladder = state.ladder_of.get(memo)
        if ladder is None:
            ladder = state.ladder_of[memo] = ladder_for(game, json.loads(options))
        return ladder

    def _seats(self, state: _State, rows: list[Any], at: int, end: int) -> tuple[SeatResult, ...]:
        """The seats of one recorded match (its rows ``at``..``end``), as the fold takes them."""
        out = []
        for row in rows[at:end]:
            bot_id, version, score, rank, played_out, faults = row[14:20]
            if bot_id is None:
                continue  # a result without seats
            ident = state.seat_ids.get(bot_id)
            if ident is None:
                ident = self._ident(state, bot_id)
            name, written, owner = ident
            out.append(
                SeatResult(
                    name, version or written, rank if rank is not None else 0,
                    score if score is not None else 0.0, owner, bool(played_out), faults,
                )
            )  # fmt: skip
        return tuple(out)

    def _ident(self, state: _State, bot_id: str) -> tuple[str, str, str]:
        """(name, version written in the id, owner) of a seat's bot id; kept once the owner
        is known (a stored bot not in the registry is looked up again next time)."""
        entry = parse_entry(bot_id)
        owners = self._owners(state, {entry.name} if entry.kind == STORED else set())
        name, written = bot_name(bot_id)
        ident = (name, written, owner_of(bot_id, owners))
        if entry.kind != STORED or entry.name in owners:
            state.seat_ids[bot_id] = ident
        return ident

    def _owners(self, state: _State, names: set[str] | None = None) -> dict[str, str]:
        """The bot registry's owners: re-read when ``names`` (stored bots' names) are not
        all in the copy held (a bot registered since)."""
        if state.owners is not None and names is not None and names <= state.owners.keys():
            return state.owners
        with self._reading("bot owners") as conn:
            rows = conn.execute(sa.select(t.bots.c.name, t.bots.c.owner)).all()
        state.owners = {name: owner for name, owner in rows}
        state.seat_ids.clear()
        return state.owners

    def _known_seasons(self, state: _State) -> list[tuple[int, str, str, Any]]:
        """Seasons of the board not yet registered: (key, id, game, spec)."""
        se = t.seasons
        with self._reading("board seasons") as conn:
            rows = conn.execute(
                sa.select(se.c.id, se.c.season_id, se.c.game)
                .where(self.scope.seasons_where() & (se.c.id > state.known_through))
                .order_by(se.c.id)
            ).all()
        return [(r.id, r.season_id, r.game, None) for r in rows]

    def _register_known(
        self, state: _State, seasons: Sequence[tuple[int, str, str, Any]], owners: dict[str, str]
    ) -> set[str]:
        """Register the bots scheduled in ``seasons`` on this ladder; the bots added."""
        added: set[str] = set()
        sm = t.scheduled_matches
        ladders: dict[tuple[str, str], Ladder] = {}  # per distinct options: parsed once
        for pk, season_id, game, _ in seasons:
            with self._reading("board scheduled bots") as conn:
                specs = conn.execute(
                    sa.select(sm.c.idx, sm.c.spec).where(sm.c.season_pk == pk).order_by(sm.c.idx)
                ).all()
            for index, spec in specs:
                spec = dict(spec)
                options = dict(spec.get("options", {}))
                memo = (game, repr(sorted(options.items())))
                ladder = ladders.get(memo)
                if ladder is None:
                    ladder = ladders[memo] = ladder_for(game, with_defaults(game, options))
                if ladder != self.scope.ladder:
                    continue
                for seat_bot in spec.get("seats", []):
                    name, version = bot_name(str(seat_bot))
                    held = state.known.get(name)
                    if held is not None and held[:2] <= (season_id, index):
                        continue  # known from an earlier seat already
                    info = (season_id, index, owner_of(str(seat_bot), owners), version)
                    if held is None or info[:2] < held[:2]:
                        state.known[name] = info
                        added.add(name)
            state.known_through = max(state.known_through, pk)
        return added


#: PostgreSQL: each table's rows in one statement, sent as one JSON document
#: (json_to_recordset; floats as the shortest text that reads back to the same double),
#: not a statement per row.
_RECORDSET_WRITES = (
    "INSERT INTO rating_entries (board, bot, mu, sigma, data) SELECT %s, u.bot, u.mu, u.sigma,"
    " u.data FROM json_to_recordset(%s::json) AS u(bot text, mu float8, sigma float8, data json)"
    " ON CONFLICT (board, bot) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma,"
    " data = excluded.data",
    "INSERT INTO rating_history (board, bot, step, match_id, season, version, mu, sigma)"
    " SELECT %s, u.bot, u.step, u.match_id, u.season, u.version, u.mu, u.sigma FROM"
    " json_to_recordset(%s::json) AS u(bot text, step int, match_id text, season text,"
    " version text, mu float8, sigma float8)",
    "INSERT INTO rating_h2h (board, a, b, above, below, tied) SELECT %s, u.a, u.b, u.above,"
    " u.below, u.tied FROM json_to_recordset(%s::json) AS u(a text, b text, above int,"
    " below int, tied int) ON CONFLICT (board, a, b) DO UPDATE SET"
    " above = rating_h2h.above + excluded.above, below = rating_h2h.below + excluded.below,"
    " tied = rating_h2h.tied + excluded.tied",
)


def _write_recordsets(
    store: Store,
    conn: sa.Connection,
    key: str,
    entries: list[dict[str, Any]],
    history: list[dict[str, Any]],
    h2h: list[dict[str, Any]],
) -> None:
    """The checkpoint's rows, one statement per table, in the write's own transaction."""
    for sql, rows in zip(_RECORDSET_WRITES, (entries, history, h2h), strict=True):
        if rows:
            store.driver_execute(conn, sql, (key, orjson.dumps(rows).decode()))


def _blocks(status: str, season_status: str) -> bool:
    """True when a scheduled match without a result holds the prefix back."""
    if status in (MatchStatus.QUEUED.value, MatchStatus.RUNNING.value):
        return True
    if status in (MatchStatus.PENDING.value, MatchStatus.FAILED.value):
        return season_status == SeasonStatus.RUNNING.value
    return False


def _mu(state: _State, bot: str, which: int) -> float | None:
    key = state.current.get(bot)
    return None if key is None else state.ratings[key][which]


def _copy_stats(stats: BotStats) -> BotStats:
    return BotStats(stats.bot, stats.owner, stats.version, stats.matches, stats.wins,
                    stats.placing_sum, stats.points_sum, stats.faults, stats.played_out,
                    dict(stats.versions))  # fmt: skip


def _now() -> datetime:
    return datetime.now(UTC)


def write_held(store: Store) -> None:
    """Write what every board this process holds of ``store`` has taken in and not yet
    written (a process about to end: the next one then need not take it in again)."""
    with _HELD_LOCK:
        scopes = [s.scope for s in _HELD.get(store, {}).values() if s.scope is not None]
    for scope in scopes:
        IncrementalBoard(store, scope).write()


def board_standings(
    store: Store, scope: BoardScope, details: bool = True
) -> tuple[Standings, list[BotInfo], list[Ladder]]:
    """Bring ``scope``'s checkpoint up to date and read it."""
    board = IncrementalBoard(store, scope)
    board.update()
    return board.standings(details)
