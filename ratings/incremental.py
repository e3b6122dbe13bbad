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

Extending by one result writes only what it changed (its bots' entries, their new history
points, head-to-head increments). The same results give exactly the numbers of a full
:func:`~saloon.ratings.fold.fold` (tests/integration/test_incremental_boards.py checks
it, floats compared for equality): the TrueSkill state is stored as the library's own
(pi, tau) pair, never recomputed from (mu, sigma). A board read is the checkpoint, not a
fold: the process keeps it in memory and re-reads it only when its generation moved.

Results recorded outside any season (the platform records none: every match it plays is
scheduled) have no place in a schedule, so they are not on incremental boards.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from saloon.ratings.fold import BotStats, Folder, HeadToHead, HistoryPoint, Key, Standings
from saloon.ratings.ladders import Ladder, ladder_for
from saloon.ratings.leaderboard import BotInfo
from saloon.ratings.params import RatingParams, Scope
from saloon.ratings.results import Outcome, Result
from saloon.ratings.source import bot_name, owner_of, seat_results, with_defaults
from saloon.sdk.botref import STORED, parse_entry
from saloon.worker.store import schema as t
from saloon.worker.store.rows import MatchStatus, SeasonStatus
from saloon.worker.store.rows import SeatResult as StoreSeat

if TYPE_CHECKING:
    from saloon.worker.store.store import Store

#: Bumped when what a checkpoint stores, or how the fold rates, changes: a stored
#: checkpoint of another format is rebuilt, never extended.
FOLD_FORMAT = 1
#: Scheduled matches read per step of the walk (each step commits one checkpoint).
CHUNK = 2000
#: Match ids per IN (...) list (well under SQLite's bound-parameter limit).
IN_CHUNK = 500
#: Scheduled matches read by an update's first step (most updates find one result or two).
FIRST_CHUNK = 32
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
    """Another process moved the checkpoint while this one extended it."""


@dataclass
class _State:
    """A board's checkpoint as this process holds it."""

    generation: int = 0
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
        """Extend the checkpoint over every result that joined the contiguous prefix;
        the board's generation (it changes exactly when the board does)."""
        with self._lock:
            for _attempt in range(5):
                # Every read of one attempt on one connection, in one transaction (a
                # retry after a conflict starts a fresh one, so it sees the other's write).
                with self.store._read("board update") as conn:
                    self._conn = conn
                    try:
                        state = self._fresh()
                        if state is None:  # another format, or a late result: rebuild
                            state = self._reset()
                        if state is not None and self._extend(state):
                            return self._held[self.scope.key].generation
                    finally:
                        self._conn = None
            raise RuntimeError(f"board {self.scope.key}: checkpoint kept changing under us")

    @contextmanager
    def _reading(self, what: str) -> Iterator[sa.Connection]:
        """The update's read connection, or a read transaction of its own."""
        if self._conn is not None:
            yield self._conn
            return
        with self.store._read(what) as conn:
            yield conn

    def standings(self, details: bool = True) -> tuple[Standings, list[BotInfo], list[Ladder]]:
        """(the board's standings, bots known but unrated, the ladders seen) as of the
        last :meth:`update`; ``details``: with rating histories and head-to-head."""
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
        if details:
            out.history, out.head_to_head = self._details()
        return out, known, ladders

    def _details(self) -> tuple[dict[str, list[HistoryPoint]], dict[tuple[str, str], HeadToHead]]:
        h, c = t.rating_history, t.rating_h2h
        history: dict[str, list[HistoryPoint]] = {}
        h2h: dict[tuple[str, str], HeadToHead] = {}
        with self.store._read("board details") as conn:
            for bot, step, match_id, season, version, mu, sigma in conn.execute(
                sa.select(h.c.bot, h.c.step, h.c.match_id, h.c.season, h.c.version, h.c.mu,
                          h.c.sigma).where(h.c.board == self.scope.key).order_by(h.c.step)
            ):  # fmt: skip
                history.setdefault(bot, []).append(
                    HistoryPoint(step, match_id, season, version, mu, sigma)
                )
            for a, b, above, below, tied in conn.execute(
                sa.select(c.c.a, c.c.b, c.c.above, c.c.below, c.c.tied).where(
                    c.c.board == self.scope.key
                )
            ):
                h2h[(a, b)] = HeadToHead(above, below, tied)
        return history, h2h

    # -- the checkpoint ------------------------------------------------------------------

    def _fresh(self) -> _State | None:
        """The held checkpoint, re-read when the stored one moved; None to rebuild."""
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
            held = self._held.get(key)
            if held is not None and held.generation == row.generation:
                return held
            state = self._read_state(conn, row.generation)
        self._held[key] = state
        return state

    def _read_state(self, conn: sa.Connection, generation: int) -> _State:
        b, e = t.rating_boards, t.rating_entries
        row = conn.execute(sa.select(b).where(b.c.board == self.scope.key)).one()
        raw = dict(row.state)
        state = _State(
            generation=generation,
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
            with self.store._write("board rebuild") as conn:
                generation = conn.execute(
                    sa.select(t.rating_boards.c.generation).where(t.rating_boards.c.board == key)
                ).scalar_one_or_none()
                for table in (t.rating_entries, t.rating_history, t.rating_h2h, t.rating_skipped):
                    conn.execute(table.delete().where(table.c.board == key))
                conn.execute(t.rating_boards.delete().where(t.rating_boards.c.board == key))
                state = _State(generation=(generation or 0) + 1)
                conn.execute(
                    t.rating_boards.insert().values(
                        board=key, position_seq=START[0], position_idx=START[1],
                        generation=state.generation, state=state.header(), updated_at=_now(),
                    )
                )  # fmt: skip
        except sa.exc.IntegrityError:  # another process rebuilt it at the same moment
            self._held.pop(key, None)
            return None
        self._held[key] = state
        return state

    def _extend(self, state: _State) -> bool:
        """Walk and commit until the prefix stops; False when another process moved the
        checkpoint meanwhile (the caller re-reads it)."""
        size = FIRST_CHUNK  # most updates find a result or two: read a little first
        while True:
            known = self._known_seasons(state)
            step = self._walk(state.position, size)
            if step.position == state.position and not known:
                return True
            touched = self._register_known(state, known, self._owners(state) if known else {})
            folder = self._folder(state)
            for unit in self._with_seats(step.units, state):
                folder.unit(unit)
                for result in unit:
                    touched.update(s.bot for s in result.seats)
            state.comparisons, state.matches = folder.out.comparisons, folder.out.matches
            for ladder in step.ladders:
                if ladder not in state.ladders:
                    state.ladders.append(ladder)
            state.position = step.position
            if not self._commit(state, folder.out, touched, step.skipped):
                self._held.pop(self.scope.key, None)
                return False
            if step.stopped:
                return True  # it stopped at a match that has not finished: nothing more now
            size = CHUNK

    def _folder(self, state: _State) -> Folder:
        folder = Folder(self.scope.ladder, self.scope.scope, self.params)
        out = folder.out
        out.stats, out.ratings, out.current = state.stats, state.ratings, state.current
        out.seat_counts = state.seat_counts
        out.comparisons, out.matches = state.comparisons, state.matches
        folder.live_ratings = state.live
        return folder

    def _commit(self, state: _State, out: Standings, touched: set[str], skipped: list[str]) -> bool:
        key = self.scope.key
        entries = [
            {"board": key, "bot": bot, "mu": _mu(state, bot, 0), "sigma": _mu(state, bot, 1),
             "data": _entry_data(state, bot)}
            for bot in sorted(touched)
        ]  # fmt: skip
        history = [
            {"board": key, "bot": bot, "step": p.step, "match_id": p.match_id,
             "season": p.season, "version": p.version, "mu": p.mu, "sigma": p.sigma}
            for bot, points in out.history.items() for p in points
        ]  # fmt: skip
        h2h = [
            {"board": key, "a": a, "b": bb, "above": c.above, "below": c.below, "tied": c.tied}
            for (a, bb), c in out.head_to_head.items()
        ]
        try:
            self._write_step(state, entries, history, h2h, skipped)
        except _Moved:
            return False
        state.generation += 1
        return True

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
        with self.store._write("board checkpoint") as conn:
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
            if entries:
                conn.execute(self._upsert(t.rating_entries, ["board", "bot"],
                                          ["mu", "sigma", "data"]), entries)  # fmt: skip
            if history:
                conn.execute(t.rating_history.insert(), history)
            if h2h:
                conn.execute(self._h2h_upsert(), h2h)
            if skipped:
                conn.execute(
                    self.store._insert_ignore(t.rating_skipped, ["board", "match_id"]),
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
        if self.store.backend == "postgresql":
            from sqlalchemy.dialects import postgresql

            return postgresql.insert(table)
        from sqlalchemy.dialects import sqlite

        return sqlite.insert(table)

    # -- the walk ------------------------------------------------------------------------

    def _walk(self, position: tuple[int, int], size: int = CHUNK) -> _Step:
        """The next step of the prefix after ``position`` (``size`` scheduled matches)."""
        sm, se, r = t.scheduled_matches, t.seasons, t.results
        seq, idx = position
        query = (
            sa.select(sm.c.season_pk, sm.c.idx, sm.c.match_id, sm.c.status, sm.c.spec,
                      se.c.season_id, se.c.status.label("season_status"),
                      r.c.match_id.label("recorded"), r.c.outcome, r.c.game, r.c.options)
            .select_from(sm.join(se, se.c.id == sm.c.season_pk)
                         .outerjoin(r, r.c.match_id == sm.c.match_id))
            .where(self.scope.seasons_where())
            # A row-value comparison: an index range scan on (season_pk, idx), not a sort
            # of every scheduled match.
            .where(sa.tuple_(sm.c.season_pk, sm.c.idx) > sa.tuple_(seq, idx))
            .order_by(sm.c.season_pk, sm.c.idx)
            .limit(size)
        )  # fmt: skip
        with self._reading("board walk") as conn:
            rows = conn.execute(query).all()
        step = _Step(position)
        group: tuple[str, Any] | None = None
        pending: list[Result] = []
        pending_skipped: list[str] = []
        last = position
        blocked = False

        def close() -> None:
            nonlocal group, pending, pending_skipped
            if pending:
                step.units.append(pending)
            step.skipped.extend(pending_skipped)
            step.position = last
            group, pending, pending_skipped = None, [], []

        for row in rows:
            deal = dict(row.spec).get("deal")
            key = None if deal is None else (row.season_id, deal)
            if group is not None and key != group:
                close()
            result: Result | None = None
            remember = False
            if row.recorded is not None:
                ladder = ladder_for(row.game, dict(row.options))
                if ladder not in step.ladders:
                    step.ladders.append(ladder)
                if row.outcome == Outcome.COMPLETED.value and ladder == self.scope.ladder:
                    result = Result(
                        ladder, row.match_id, (row.season_pk, row.idx), (), Outcome.COMPLETED,
                        row.season_id, None if deal is None else f"{row.season_id}/{deal}",
                    )  # fmt: skip
            elif _blocks(row.status, row.season_status):
                blocked = True
                break
            else:
                remember = row.status != MatchStatus.CANCELLED.value
            here = (row.season_pk, row.idx)
            if key is None:
                if result is not None:
                    step.units.append([result])
                if remember:
                    step.skipped.append(row.match_id)
                step.position = last = here
            else:
                group = key
                if result is not None:
                    pending.append(result)
                if remember:
                    pending_skipped.append(row.match_id)
                last = here
        if group is not None and not blocked and len(rows) < size:
            close()  # a season's matches are all stored at once: the deal is complete
        step.stopped = blocked or len(rows) < size
        return step

    def _with_seats(self, units: list[list[Result]], state: _State) -> list[list[Result]]:
        """The units with their results' seats read from the store."""
        ids = [r.match_id for unit in units for r in unit]
        seats: dict[str, list[StoreSeat]] = {}
        c = t.result_seats.c
        with self._reading("board seats") as conn:
            for start in range(0, len(ids), IN_CHUNK):
                for match_id, seat, bot, version, score, rank, played_out, faults in conn.execute(
                    sa.select(c.match_id, c.seat, c.bot, c.version, c.score, c.rank,
                              c.played_out, c.faults)
                    .where(c.match_id.in_(ids[start : start + IN_CHUNK]))
                    .order_by(c.match_id, c.seat)
                ):  # fmt: skip
                    seats.setdefault(match_id, []).append(
                        StoreSeat(seat, bot, version, score, rank, bool(played_out), faults)
                    )
        names = {
            entry.name
            for rows in seats.values()
            for seat in rows
            if (entry := parse_entry(seat.bot)).kind == STORED
        }
        owners = self._owners(state, names)
        return [
            [
                Result(r.ladder, r.match_id, r.order, seat_results(seats.get(r.match_id, ()),
                       owners), r.outcome, r.season, r.deal_group)
                for r in unit
            ]
            for unit in units
        ]  # fmt: skip

    def _owners(self, state: _State, names: set[str] | None = None) -> dict[str, str]:
        """The bot registry's owners: re-read when ``names`` (stored bots' names) are not
        all in the copy held (a bot registered since)."""
        if state.owners is not None and names is not None and names <= state.owners.keys():
            return state.owners
        with self._reading("bot owners") as conn:
            rows = conn.execute(sa.select(t.bots.c.name, t.bots.c.owner)).all()
        state.owners = {name: owner for name, owner in rows}
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


def board_standings(
    store: Store, scope: BoardScope, details: bool = True
) -> tuple[Standings, list[BotInfo], list[Ladder]]:
    """Bring ``scope``'s checkpoint up to date and read it."""
    board = IncrementalBoard(store, scope)
    board.update()
    return board.standings(details)
