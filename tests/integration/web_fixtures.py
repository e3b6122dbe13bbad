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


# -- the widest content a page must hold: 40-character names, a bot printing 5,000 ---------
# characters at every decision, a continuous ladder, seasons not started and running.

#: Bot names at the registry's limit (40 characters, no place to break a line).
LONG_A = "a-bot-whose-name-takes-all-forty-chars-a"
LONG_B = "b-bot-whose-name-takes-all-forty-chars-b"
#: Prints NOISE_CHARS characters (one line, no space) at every decision it is asked.
NOISY = "noisybot-that-prints-five-thousand-chars"
NOISE_CHARS = 5000
#: The wide site's owner of every stored bot (user names stop at 32 characters).
WIDE_OWNER = "an-owner-with-a-long-name-at-32c"
WIDE_SEASON = "a-season-with-a-long-id-of-forty-two-chars"
WIDE_WAITING = "a-season-created-but-never-started-yet"
WIDE_RUNNING = "a-season-that-is-running-right-now-long"
WIDE_LADDER = "a-continuous-ladder-of-36-chars-long"
#: A tournament over with its report (every entrant in its crosstable), one still open.
WIDE_TOURNAMENT = "a-tournament-done-with-an-id-of-40-chars"
WIDE_OPEN = "a-tournament-still-open-for-submissions"
#: The match where NOISY plays (and prints) in seat 0; a worker played it.
WIDE_MATCH = f"{WIDE_SEASON}-0"
#: The worker that claimed WIDE_MATCH (the store keeps it as the match's status detail).
WORKER_ID = "bd127f17c0ffee0123456789abcdef01"


def _noise(record: MatchRecord, seat: int) -> str:
    """NOISY's stderr as the runtime marks it: NOISE_CHARS characters at each decision."""
    out = [f"{MARK}start\n"]
    for i, entry in enumerate(record.log):
        if entry.seat == seat and not (entry.auto or entry.fallback):
            out.append(f"{MARK}decision {i}\n{('noise-' * NOISE_CHARS)[:NOISE_CHARS]}\n")
    return "".join(out)


def fill_wide(store: Store, store_url: str) -> dict[str, str]:
    """A site whose every page holds the widest content: each owner's token."""
    from saloon.arena import continuous
    from saloon.arena.matchmaker import Settings
    from saloon.worker.matches.spec import SandboxKind

    assert len(LONG_A) == len(LONG_B) == len(NOISY) == 40 and len(WIDE_OWNER) == 32
    registry = Registry(store)
    # One owner each (a ladder seats one bot of an owner at a table).
    owners = {NOISY: WIDE_OWNER, LONG_A: "owner-a", LONG_B: "owner-b"}
    tokens = {user: registry.add_user(user) for user in owners.values()}
    for name, owner in owners.items():
        store.add_bot(name, owner)
        store.add_version(name, f"v1-{name[0]}", {"game": SEAS})  # distinct files
    seats = [f"bot:{NOISY}@v1-n", f"bot:{LONG_A}@v1-a", f"bot:{LONG_B}@v1-b", "house:greedy"]
    specs, records = [], []
    for i in range(MATCHES_PER_SEASON):
        order = seats[i:] + seats[:i]
        match_id = f"{WIDE_SEASON}-{i}"
        specs.append(ScheduledMatch(match_id, i, {"seats": order, "seed": i}))
        records.append(play_match(SEAS, [_seat(SEAS, b, False) for b in order], i,
                                  match_id=match_id))  # fmt: skip
    store.create_season(WIDE_SEASON, {"game": SEAS}, specs)
    store.mark_match(WIDE_MATCH, MatchStatus.RUNNING, WORKER_ID)
    for record in records:
        noisy = next(s.seat for s in record.seats if s.bot.startswith(f"bot:{NOISY}"))
        stderr = {noisy: _noise(record, noisy)}
        store.record_results([store.prepare_result(record.match_id, record.to_json(), stderr)])
    store.set_season_status(WIDE_SEASON, SeasonStatus.DONE)
    store.create_season(
        WIDE_WAITING, {"game": SEAS}, [ScheduledMatch(f"{WIDE_WAITING}-0", 0, {"seats": seats})]
    )
    running = [ScheduledMatch(f"{WIDE_RUNNING}-{i}", i, {"seats": seats}) for i in range(2)]
    store.create_season(WIDE_RUNNING, {"game": SEAS}, running)
    store.set_season_status(WIDE_RUNNING, SeasonStatus.RUNNING)
    store.mark_match(f"{WIDE_RUNNING}-0", MatchStatus.RUNNING, WORKER_ID)
    # A continuous ladder with one batch played (in-process, as a worker would record it).
    request = continuous.ContinuousRequest(
        ladder_id=WIDE_LADDER, game=SEAS, players=3, seed=3, house=("greedy", "random"),
        sandbox=SandboxKind.PROCESS, settings=Settings(batch=2), max_batches=5,
    )  # fmt: skip
    continuous.start(registry, None, request, WIDE_OWNER, store_url)
    batch = continuous.batch_season_id(WIDE_LADDER, 1)
    for m in store.scheduled(batch):
        order = [str(b) for b in m.spec["seats"]]
        played = play_match(SEAS, [_seat(SEAS, b, False) for b in order], int(m.spec["seed"]),
                            match_id=m.match_id)  # fmt: skip
        store.record_results([store.prepare_result(m.match_id, played.to_json(), {})])
    store.set_season_status(batch, SeasonStatus.DONE)
    _fill_tournaments(registry, seats[:3])
    return tokens


def _fill_tournaments(registry: Registry, stored: list[str]) -> None:
    """WIDE_OPEN, open for a day; WIDE_TOURNAMENT, done: a field of the stored bots and
    every house bot of the game, its report computed from made-up placings (the layout
    is what is tested here; tests/integration/test_tournament.py plays real ones)."""
    from datetime import UTC, datetime, timedelta

    from saloon.arena import tournament
    from saloon.arena.tournaments import Phase, Tournaments
    from saloon.ratings.finals import Placing, build_report
    from saloon.sdk.house import house_bot_names
    from saloon.worker.matches.spec import SandboxKind

    now = datetime.now(UTC)
    house = tuple(house_bot_names(SEAS))
    for tid in (WIDE_OPEN, WIDE_TOURNAMENT):
        request = tournament.TournamentRequest(
            tournament_id=tid, game=SEAS, deadline=now + timedelta(days=1), seed=5,
            house=house, sandbox=SandboxKind.PROCESS, resamples=20,
        )  # fmt: skip
        tournament.create(registry, request, WIDE_OWNER, now)
    field = [*stored, *(f"house:{h}" for h in house)]
    results = []
    for i in range(120):
        table = tuple(field[(i + k * (1 + i % 5)) % len(field)] for k in range(3))
        if len(set(table)) < 3:
            continue
        strength = [field.index(table[k]) + (i * k) % 4 for k in range(3)]
        places = tuple(sorted(strength).index(x) for x in strength)
        results.append(Placing(f"m{i}", f"d{i // 3}", table, places))
    row = Tournaments(registry.store).get(WIDE_TOURNAMENT)
    report = build_report(field, results, tournament.request_of(row).policy(), 5, resamples=20)
    Tournaments(registry.store).advance(
        WIDE_TOURNAMENT, Phase.OPEN, phase=Phase.DONE, frozen_at=now, field=field,
        state={"stop": "budget", "matches": len(results), "finals_matches": len(results)},
        report={"json": report.to_json(), "csv": report.to_csv(),
                "crosstable_csv": report.to_csv("crosstable")},
    )  # fmt: skip


def serve_wide(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    """A web server over :func:`fill_wide`'s store, stopped after."""
    folder: Path = tmp_path_factory.mktemp("wide")
    url = str(folder / "saloon.db")
    store = Store.open(url)
    tokens = fill_wide(store, url)
    server = WebServer(("127.0.0.1", 0), build_app(store))
    server.start()
    try:
        yield Web(server, store, tokens)
    finally:
        server.stop()
        store.close()
