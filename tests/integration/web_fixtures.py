"""A web server for tests: the real Starlette app on uvicorn, on a real loopback port,
over a real store filled with real matches of in-process house bots (every game), users
with tokens, a running season, a bot that faults and writes to stderr."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from saloon.arena.registry import Registry
from saloon.arena.web.app import build_app
from saloon.arena.web.limits import WebLimits
from saloon.arena.web.serve import WebServer
from saloon.referee.match import play_match
from saloon.referee.record import MatchRecord
from saloon.referee.seats import InProcessSeat
from saloon.sdk.bot import Bot, Decision
from saloon.sdk.house import make_house_bot
from saloon.sdk.output import MARK
from saloon.worker.store.rows import MatchStatus, ScheduledMatch, SeasonStatus
from saloon.worker.store.store import Store

SEAS, SEIZURE, WESTERN = "seas-of-strife-v1", "seizure-v1", "western-showdown-v1"
#: Per game: the season's id and its seat lists (alice's and bob's stored bots play greedy).
SEASONS = {
    SEAS: ("web-seas", ["bot:alicebot@a1", "house:random", "bot:bobbot@b1", "house:greedy"]),
    SEIZURE: ("web-seizure", ["bot:alicebot@a1", "house:random", "bot:bobbot@b1"]),
    WESTERN: ("web-western", ["bot:alicebot@a1", "bot:bobbot@b1"]),
}
MATCHES_PER_SEASON = 3
#: alice's bot crashes on its first decision in this match (a fault, played out).
FAULTY_MATCH = "web-seas-1"
STDERR = "alicebot: about to fail on purpose\n"
#: What alicebot printed at its first decision of FAULTY_MATCH (under the runtime's mark).
DECISION_LINE = "alicebot: thinking about my first move"


class Crasher(Bot):
    """Raises on its first decision (the referee records a fault and plays it out)."""

    def act(self, decision: Decision[Any, Any]) -> Any:
        raise RuntimeError("this bot fails on purpose")


def _seat(game: str, bot_id: str, crash: bool) -> InProcessSeat:
    if bot_id.startswith("bot:"):
        bot = Crasher() if crash else make_house_bot(game, "greedy")
        return InProcessSeat(bot, bot_id, bot_id.split("@")[1])
    return InProcessSeat(make_house_bot(game, bot_id.removeprefix("house:")), bot_id, "test")


def fill(store: Store) -> dict[str, str]:
    """Users, bots, a finished season per game, a season still running; the users' tokens."""
    registry = Registry(store)
    tokens = {name: registry.add_user(name) for name in ("alice", "bob")}
    for name, owner, version in (("alicebot", "alice", "a1"), ("bobbot", "bob", "b1")):
        store.add_bot(name, owner)
        store.add_version(name, version)
    for game, (season_id, seats) in SEASONS.items():
        specs, records = [], []
        for i in range(MATCHES_PER_SEASON):
            order = seats[i % len(seats) :] + seats[: i % len(seats)]
            match_id = f"{season_id}-{i}"
            specs.append(ScheduledMatch(match_id, i, {"seats": order, "seed": i}))
            crash = match_id == FAULTY_MATCH
            played = play_match(
                game,
                [_seat(game, b, crash and b.startswith("bot:alice")) for b in order],
                i,
                match_id=match_id,
            )
            records.append(played)
        store.create_season(season_id, {"game": game}, specs)
        for record in records:
            alice = next(s.seat for s in record.seats if s.bot.startswith("bot:alice"))
            stderr = {alice: _marked(record, alice)} if record.match_id == FAULTY_MATCH else {}
            store.record_results([store.prepare_result(record.match_id, record.to_json(), stderr)])[
                0
            ]
        store.set_season_status(season_id, SeasonStatus.DONE)
    running = [ScheduledMatch(f"web-live-{i}", i, {"seats": SEASONS[WESTERN][1]}) for i in range(4)]
    store.create_season("web-live", {"game": WESTERN}, running)
    store.set_season_status("web-live", SeasonStatus.RUNNING)
    store.mark_match("web-live-0", MatchStatus.RUNNING)
    return tokens


@dataclass
class Web:
    """A running web server over a filled store."""

    server: WebServer
    store: Store
    tokens: dict[str, str]

    @property
    def url(self) -> str:
        return f"{self.server.scheme}://127.0.0.1:{self.server.port}"


def start_web(store_url: str, limits: WebLimits | None = None, **tls: str) -> Web:
    """Fill a store at ``store_url`` and serve it on a free loopback port."""
    store = Store.open(store_url)
    tokens = fill(store)
    server = WebServer(("127.0.0.1", 0), build_app(store, limits=limits), limits=limits, **tls)
    server.start()
    return Web(server, store, tokens)


def serve_filled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    """A web server over a filled SQLite store in a temporary folder, stopped after."""
    folder: Path = tmp_path_factory.mktemp("web")
    running = start_web(str(folder / "saloon.db"))
    try:
        yield running
    finally:
        running.server.stop()
        running.store.close()


def first_decision(record: MatchRecord, seat: int) -> int:
    """The log entry of ``seat``'s first decision that it was asked (not an only move)."""
    return next(
        i for i, e in enumerate(record.log) if e.seat == seat and not (e.auto or e.fallback)
    )


def _marked(record: MatchRecord, seat: int) -> str:
    """Stderr as the runtime marks it: STDERR at the start, DECISION_LINE at a decision."""
    decision = first_decision(record, seat)
    return f"{MARK}start\n{STDERR}{MARK}decision {decision}\n{DECISION_LINE}\n"
