"""What the pages and the JSON API show, as plain data: both render these, so a page and
``/api/...`` can never disagree.

Boards are read from the arena's :class:`~saloon.arena.boards.BoardCache` (the gRPC API's
too). Views and pages derived from the results (listings, a bot's history, a rendered
page) are kept in a :class:`BoardCache` of their own (same rule: valid while the results
do not change; never pushing a board out); replays in :class:`KeptReplays` (a stored
record never changes). A season's progress is read fresh each time (it moves while the
results do not).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

from saloon.arena.boards import BoardCache
from saloon.arena.continuous import ContinuousRequest, batch_season_id, ladder_stamp
from saloon.arena.continuous import ladder_board as continuous_board
from saloon.arena.registry import LadderRow, Registry
from saloon.arena.secrecy import shown_ladder_settings, shown_season_spec
from saloon.arena.web.errors import NotFound
from saloon.games import game_ids
from saloon.ratings.boards import (
    board_stamp,
    game_leaderboard,
    game_scope,
    season_leaderboard,
    season_scope,
)
from saloon.ratings.ladders import Ladder, ladder_for
from saloon.ratings.leaderboard import Leaderboard
from saloon.ratings.source import bot_name, registry_name
from saloon.sdk.languages import SPECS, Language
from saloon.worker.errors import RegistryError
from saloon.worker.sandbox.runtimes import version_language
from saloon.worker.store.rows import MatchStatus, ResultRow, SeasonRow, SeasonStatus
from saloon.worker.store.store import Store

#: Bots shown per ladder on the index, matches in "recent" listings.
TOP_BOTS, RECENT_MATCHES = 3, 20
#: Rendered pages and listings kept apart from the boards (so they never push a board out).
MAX_PAGES = 128
#: Seconds a page's results stamp is reused before the store is asked again.
STAMP_EVERY_S = 0.5
#: Match replays kept (a long match's is ~300 KiB; a record never changes once stored).
MAX_REPLAYS = 32
#: Seasons that are still going (the index lists them with their progress).
LIVE = (SeasonStatus.CREATED, SeasonStatus.RUNNING)
#: A season's status as pages word it (a season made but never started is not "running").
STATUS_TEXT = {SeasonStatus.CREATED: "not started"}


def shown_name(seat_bot: str) -> str:
    """A seat's bot id (``bot:NAME@VERSION#TAG``, ``house:NAME``) as boards show it."""
    return bot_name(seat_bot)[0]


def bot_href(name: str) -> str:
    """The page of the bot shown as ``name`` (an entry ``NAME#TAG`` links to the bot)."""
    return f"/bot/{quote(registry_name(name), safe='')}"


def match_href(match_id: str) -> str:
    """The replay page of a match."""
    return f"/match/{quote(match_id, safe='')}"


def season_href(season_id: str) -> str:
    """The page of a season."""
    return f"/season/{quote(season_id, safe='')}"


def continuous_href(ladder_id: str) -> str:
    """The page of a continuous ladder."""
    return f"/ladder/{quote(ladder_id, safe='')}"


def ladder_href(ladder: Ladder) -> str:
    """The all-time board page of a ladder."""
    query = urlencode(ladder.options)
    return f"/leaderboard/{quote(ladder.game, safe='')}" + (f"?{query}" if query else "")


def _time(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S")


class Views:
    """The views of one store, cached in ``boards``."""

    def __init__(self, store: Store, boards: BoardCache) -> None:
        self.store = store
        self.boards = boards
        #: Pages, listings and bot views: the same stamp rule, a cache of their own, whose
        #: stamp is read at most every STAMP_EVERY_S (a page may lag a new result that long).
        self.pages = BoardCache(RecentStamp(store), MAX_PAGES)
        self.replays = KeptReplays(MAX_REPLAYS)
        self._lock = threading.Lock()
        self._ladders: tuple[float, list[dict[str, Any]]] | None = None

    # -- boards ----------------------------------------------------------------------------
    def game_board(self, game: str, options: Mapping[str, str]) -> Leaderboard:
        """The all-time board of ``game``'s ladder with ``options`` (defaults filled in)."""
        key = ("board", game, tuple(sorted(options.items())))
        return self.boards.get(
            key,
            lambda: game_leaderboard(self.store, game, options)[0],
            lambda: board_stamp(self.store, game_scope(game, options)),
        )

    def season_board(self, season_id: str) -> Leaderboard:
        """One season's board."""
        return self.boards.get(
            ("season-board", season_id),
            lambda: season_leaderboard(self.store, season_id),
            lambda: board_stamp(self.store, season_scope(self.store, season_id)),
        )

    def ladder_board(self, ladder_id: str) -> Leaderboard:
        """A continuous ladder's board (saloon.arena.continuous), with its charts."""
        return self.boards.get(
            ("ladder-board", ladder_id),
            lambda: self._ladder(ladder_id)[2],
            lambda: self._ladder_stamp(ladder_id),
        )

    def _ladder_stamp(self, ladder_id: str) -> int:
        try:
            return ladder_stamp(Registry(self.store), ladder_id)
        except RegistryError:
            raise NotFound(f"no continuous ladder {ladder_id!r}") from None

    def ladder(self, ladder_id: str) -> dict[str, Any]:
        """A continuous ladder: its state, settings, newest batch and board."""
        row, request, _board = self._ladder(ladder_id, details=False)
        batch = None
        if row.batches:
            season = self.store.season(batch_season_id(ladder_id, row.batches))
            batch = season_summary(season, self.store) if season is not None else None
        return {
            **continuous_summary(row),
            "game": request.game,
            # The seed null until the ladder is over (saloon.arena.secrecy).
            "settings": shown_ladder_settings(Registry(self.store), row, request.to_json()),
            "batch": batch,
            "board": board_json(self.ladder_board(ladder_id)),
        }

    def _ladder(
        self, ladder_id: str, details: bool = True
    ) -> tuple[LadderRow, ContinuousRequest, Leaderboard]:
        try:
            return continuous_board(Registry(self.store), ladder_id, details)
        except RegistryError:
            raise NotFound(f"no continuous ladder {ladder_id!r}") from None

    def owners(self) -> dict[str, str]:
        """Every stored bot's owner, by name, kept while the results do not change (a bot
        new since plays no recorded match yet; a bot's owner never changes)."""
        return self.pages.get(("owners",), lambda: {b.name: b.owner for b in self.store.bots()})

    def continuous_ladders(self) -> list[dict[str, Any]]:
        """Every continuous ladder, by id: its state and how many batches it played."""
        return [continuous_summary(r) for r in Registry(self.store).continuous_ladders()]

    def recent_ladders(self) -> list[dict[str, Any]]:
        """:meth:`continuous_ladders` read at most every STAMP_EVERY_S (the index shows
        them on every read; a ladder stopped changes no result, so the results stamp
        cannot tell): the index may show a ladder's state up to that late."""
        now = time.monotonic()
        with self._lock:
            if self._ladders is not None and now - self._ladders[0] < STAMP_EVERY_S:
                return self._ladders[1]
        ladders = self.continuous_ladders()
        with self._lock:
            self._ladders = (now, ladders)
        return ladders

    def continuous_row(self, ladder_id: str) -> LadderRow:
        """The stored row of continuous ladder ``ladder_id`` (NotFound without one)."""
        row = Registry(self.store).continuous(ladder_id)
        if row is None:
            raise NotFound(f"no continuous ladder {ladder_id!r}")
        return row

    def results(self) -> list[ResultRow]:
        """Every recorded result, newest first."""
        return self.pages.get(
            ("results",),
            lambda: sorted(self.store.results(), key=lambda r: r.finished_at, reverse=True),
        )

    def ladder_matches(self, ladder: Ladder, limit: int = RECENT_MATCHES) -> list[dict[str, Any]]:
        """The newest matches of ``ladder``."""
        rows = (r for r in self.results() if ladder_for(r.game, r.options) == ladder)
        return [match_summary(r) for _, r in zip(range(limit), rows, strict=False)]

    # -- pages -----------------------------------------------------------------------------
    def index(self) -> dict[str, Any]:
        """Each game's ladders with their top bots, live seasons, recent matches."""
        games = self.pages.get(("index-games",), self._games)
        going = [s for s in reversed(self.store.seasons()) if s.status in LIVE]
        return {
            "games": games,
            "continuous_ladders": self.recent_ladders(),
            "live_seasons": [
                season_summary(s, self.store) for s in going if s.status is SeasonStatus.RUNNING
            ],
            "waiting_seasons": [
                season_summary(s, self.store) for s in going if s.status is SeasonStatus.CREATED
            ],
            "recent_matches": [match_summary(r) for r in self.results()[:RECENT_MATCHES]],
        }

    def ladders(self, game: str) -> list[Ladder]:
        """``game``'s default ladder, then its other ladders that have results."""
        return self.pages.get(("ladders", game), lambda: _ladders(self.store, game))

    def _games(self) -> list[dict[str, Any]]:
        out = []
        for game in game_ids():
            items = []
            for ladder in self.ladders(game):
                board = self.game_board(game, dict(ladder.options))
                top = [r for r in board.rows if r.rated][:TOP_BOTS]
                items.append(
                    {
                        "label": board.ladder.label,
                        "href": ladder_href(board.ladder),
                        "matches": board.standings.matches,
                        "top": [
                            {
                                "rank": r.rank,
                                "bot": r.bot,
                                "href": bot_href(r.bot),
                                "conservative": round(r.conservative or 0.0, 2),
                            }
                            for r in top
                        ],
                    }
                )
            out.append({"game": game, "ladders": items})
        return out

    def board(self, game: str, options: Mapping[str, str]) -> dict[str, Any]:
        """A ladder's all-time board with its newest matches."""
        board = self.game_board(game, options)
        return {"board": board_json(board), "recent_matches": self.ladder_matches(board.ladder)}

    def season(self, season_id: str) -> dict[str, Any]:
        """A season: its spec, live progress, board, and every scheduled match."""
        season = self.store.season(season_id)
        if season is None:
            raise NotFound(f"no season {season_id!r}")
        done = {r.match_id: r for r in self.results() if r.season_id == season_id}
        matches = []
        for m in self.store.scheduled(season_id):
            row = done.get(m.match_id)
            item: dict[str, Any] = {
                "match_id": m.match_id,
                "index": m.index,
                # A duplicate deal's matches share it (and their seed); None otherwise.
                "deal": m.spec.get("deal"),
                "status": m.status.value,
                "seats": [
                    {"bot": shown_name(str(b)), "href": bot_href(shown_name(str(b)))}
                    for b in m.spec.get("seats", [])
                ],
                "detail": m.detail,
            }
            if row is not None:
                item.update(match_summary(row))
            matches.append(item)
        return {
            **season_summary(season, self.store),
            # The seed null until the season is over (saloon.arena.secrecy).
            "spec": shown_season_spec(Registry(self.store), season),
            "board": board_json(self.season_board(season_id)),
            "matches": matches,
        }

    def progress(self, season_id: str) -> dict[str, Any]:
        """A season's status and progress alone (what its page polls)."""
        season = self.store.season(season_id)
        if season is None:
            raise NotFound(f"no season {season_id!r}")
        return season_summary(season, self.store)

    def bot(self, name: str) -> dict[str, Any]:
        """A bot: owner, versions, rating history per ladder, matches, head-to-head."""
        return self.pages.get(("bot", name), lambda: self._bot(name))

    def _bot(self, name: str) -> dict[str, Any]:
        stored = self.store.bot(name)
        mine = [r for r in self.results() if _seats_of(r, name)]
        if stored is None and not mine:
            raise NotFound(f"no bot {name!r}")
        versions = [
            {
                "seq": v.seq,
                "version": v.version,
                "created": _time(v.created_at),
                "language": SPECS[Language(version_language(v.meta))].label,
            }
            for v in (self.store.versions(name) if stored is not None else [])
        ]
        ladders: list[dict[str, Any]] = []
        for game in sorted({r.game for r in mine}):
            for ladder in self.ladders(game):
                standings = self.game_board(game, dict(ladder.options)).standings
                points = standings.history.get(name, [])
                if not points and name not in standings.stats:
                    continue
                rating = standings.rating(name)
                ladders.append(
                    {
                        "label": ladder.label,
                        "href": ladder_href(ladder),
                        "comparisons": standings.comparisons,
                        "rating": None
                        if rating is None
                        else {"mu": round(rating[0], 3), "sigma": round(rating[1], 3)},
                        "history": [
                            {
                                "step": p.step,
                                "match_id": p.match_id,
                                "season": p.season,
                                "version": p.version,
                                "mu": round(p.mu, 3),
                                "sigma": round(p.sigma, 3),
                                "conservative": round(p.conservative, 3),
                            }
                            for p in points
                        ],
                        "head_to_head": [
                            {
                                "opponent": b,
                                "href": bot_href(b),
                                "above": h.above,
                                "below": h.below,
                                "tied": h.tied,
                            }
                            for (a, b), h in sorted(standings.head_to_head.items())
                            if a == name
                        ],
                    }
                )
        matches = []
        for r in mine[:RECENT_MATCHES]:
            summary = match_summary(r)
            seats = _seats_of(r, name)
            faults = [
                {"seat": f.seat, "kind": f.kind.value, "index": f.index, "detail": f.detail}
                for f in (self.store.faults(r.match_id) if any(r.seats[i].faults for i in seats)
                          else [])
                if f.seat in seats
            ]  # fmt: skip
            summary["as_seats"] = seats
            summary["faults"] = faults
            matches.append(summary)
        owner = stored.owner if stored is not None else ""
        return {
            "bot": name,
            "owner": owner,
            "created": _time(stored.created_at) if stored is not None else None,
            "versions": versions,
            "ladders": ladders,
            "matches": matches,
            "matches_total": len(mine),
        }


class RecentStamp(Registry):
    """The registry's results stamp, read from the store at most every ``every_s``: busy
    pages then cost no query per read. Only what readers see waits (a page shows a new
    result up to ``every_s`` late); nothing that decides a match or a rating reads it."""

    def __init__(self, store: Store, every_s: float = STAMP_EVERY_S) -> None:
        super().__init__(store)
        self.every_s = every_s
        self._lock = threading.Lock()
        self._read: tuple[float, tuple[int, str, int, str]] | None = None

    def results_stamp(self) -> tuple[int, str, int, str]:
        """The stamp as of at most ``every_s`` ago."""
        now = time.monotonic()
        with self._lock:
            if self._read is not None and now - self._read[0] < self.every_s:
                return self._read[1]
        stamp = super().results_stamp()
        with self._lock:
            self._read = (now, stamp)
        return stamp


class KeptReplays:
    """The newest replays made, by key; a stored record never changes, so they stay valid."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, bytes] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], bytes]) -> bytes:
        """The kept replay of ``key``, else ``make()`` (kept, the oldest dropped)."""
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        value = make()  # two readers of a new match may both make it: the same bytes
        with self._lock:
            self._kept[key] = value
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return value


def _ladders(store: Store, game: str) -> list[Ladder]:
    board, others = game_leaderboard(store, game, details=False)
    return [board.ladder, *others]


def _seats_of(row: ResultRow, name: str) -> list[int]:
    """The seats of ``row`` that bot ``name`` (or one of its ``name#TAG`` entries) played."""
    return [s.seat for s in row.seats if registry_name(shown_name(s.bot)) == name]


def match_summary(row: ResultRow) -> dict[str, Any]:
    """One match as listings show it."""
    return {
        "match_id": row.match_id,
        "href": match_href(row.match_id),
        "game": row.game,
        "season_id": row.season_id,
        "finished": _time(row.finished_at),
        "outcome": row.outcome.value,
        "abort_reason": row.abort_reason,
        "seats": [
            {
                "seat": s.seat,
                "bot": shown_name(s.bot),
                "href": bot_href(shown_name(s.bot)),
                "version": s.version,
                "score": s.score,
                "place": None if s.rank is None else s.rank + 1,
                "faults": s.faults,
                "played_out": s.played_out,
            }
            for s in row.seats
        ],
    }


def continuous_summary(row: LadderRow) -> dict[str, Any]:
    """A continuous ladder's identity and state: ``running`` (it makes batches),
    ``finished`` (it played its ``max_batches``) or ``stopped`` (an organiser stopped it)."""
    limit = int(row.spec.get("request", {}).get("max_batches", 0))
    state = "running" if row.active else "finished" if limit and row.batches >= limit else "stopped"
    return {
        "ladder_id": row.ladder_id,
        "href": continuous_href(row.ladder_id),
        "game": str(row.spec.get("request", {}).get("game", "")),
        "state": state,
        "active": row.active,
        "batches": row.batches,
        "max_batches": limit,
        "organiser": row.organiser,
        "created": _time(row.created_at),
    }


def season_summary(season: SeasonRow, store: Store) -> dict[str, Any]:
    """A season's identity, status and progress (read fresh: it moves); ``status_text``
    is the status as pages word it."""
    progress = store.progress(season.season_id)
    return {
        "season_id": season.season_id,
        "href": season_href(season.season_id),
        "game": season.game,
        "status": season.status.value,
        "status_text": STATUS_TEXT.get(season.status, season.status.value),
        "created": _time(season.created_at),
        "updated": _time(season.updated_at),
        "total": progress.total,
        "done": progress.done,
        "remaining": progress.remaining,
        "counts": {s.value: progress.count(s) for s in MatchStatus},
    }


def board_json(board: Leaderboard) -> dict[str, Any]:
    """A board as the API gives it: the same rows as ``saloon leaderboard --format json``."""
    return {
        "title": board.title,
        "ladder": {"game": board.ladder.game, "options": dict(board.ladder.options)},
        "scope": board.scope.value,
        "season": board.season,
        "matches": board.standings.matches,
        "comparisons": board.standings.comparisons,
        "columns": [f for f, _ in board.columns()],
        "rows": [{**r, "href": bot_href(r["bot"])} for r in board.records()],
    }
