"""Bots in other languages through a real arena: each language's starter kit bot of each
game is submitted, built and qualified in the Docker sandbox and stored with its language
and runtime; a ladder season of the kit bots and house bots finishes on two workers with
no fault, and every record replays and verifies.

PostgreSQL (a schema of its own), Redis (a queue of its own), ``saloon serve`` and two
``saloon worker`` processes with the Docker sandbox, as tests/integration/test_arena_e2e.py.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from saloon.games import get_game
from saloon.referee.record import MatchRecord
from saloon.referee.replay import verify
from saloon.sdk import ArenaClient
from saloon.sdk.languages import Language
from saloon.worker.sandbox.runtimes import runtime_for

from .season_fixtures import Workers, pg_url, queue_name, workers
from .test_arena_e2e import Server, _saloon, _token, server

pytestmark = pytest.mark.kit_images  # runs last, after the runtime images' build

__all__ = ["pg_url", "queue_name", "server", "workers"]

#: The languages whose runtimes ship, by `saloon new --lang`.
LANGS = {
    "js": Language.JAVASCRIPT,
    "ts": Language.TYPESCRIPT,
    "go": Language.GO,
    "cpp": Language.CPP,
    "java": Language.JAVA,
}
GAMES = ("western-showdown-v1", "seas-of-strife-v1", "seizure-v1")
SEASON_TIMEOUT_S = 400


# Fifteen kit bots built (a Go, C++, Java or TypeScript build takes seconds of its compiler)
# and three seasons: past the suite's 300 s per test on a loaded 2-core machine.
@pytest.mark.timeout(900)
def test_kit_bots_of_every_language_and_game_are_stored_and_play_a_clean_ladder_season(
    tmp_path: Path,
    pg_url: str,
    redis_url: str,
    queue_name: str,
    workers: Workers,
    server: Server,
) -> None:
    # One author per language: each submits three versions, within the server's burst of
    # submissions (5 at once per user).
    authors = {
        lang: _token(_saloon("user", "add", f"a{lang}", "--store", pg_url)) for lang in LANGS
    }
    olga = _token(_saloon("user", "add", "olga", "--organiser", "--store", pg_url))
    server.wait_serving()
    for _ in range(2):
        workers.start(redis_url, queue_name)
    cli = [sys.executable, "-m", "saloon.arena.cli"]
    for lang, language in LANGS.items():
        with ArenaClient(server.address, authors[lang], timeout_s=300) as client:
            for game in GAMES:
                folder = tmp_path / f"{lang}-{game}"
                subprocess.run([*cli, "new", game, str(folder), "--lang", lang], check=True)
                name = f"{lang}-{game.split('-')[0]}"
                reply = client.submit(folder, game=game, name=name)
                assert reply.accepted and reply.qualification.passed, reply
                assert reply.qualification.faults == []
            stored = {b.name: b for b in client.bots(owner=f"a{lang}")}
            assert len(stored) == len(GAMES)
            for bot in stored.values():
                assert bot.versions[-1].language == language.value
                assert bot.versions[-1].runtime == runtime_for(language).tag()
    listing = _saloon("bots", "--store", pg_url)
    assert "(ats, seizure-v1, typescript)" in listing and "(ajs, seizure-v1, javascript)" in listing
    assert "(acpp, seizure-v1, cpp)" in listing and "(ago, seizure-v1, go)" in listing
    assert "(ajava, seizure-v1, java)" in listing

    with ArenaClient(server.address, olga, timeout_s=300) as organiser:
        for game in GAMES:
            season = f"kits-{game.split('-')[0]}"
            seats = get_game(game).min_players
            info = organiser.create_season(
                game,
                season_id=season,
                players=seats,
                house=["random", "greedy"],
                start=True,
            )
            last = None
            deadline = time.monotonic() + SEASON_TIMEOUT_S
            for last in organiser.watch_season(season):
                assert time.monotonic() < deadline, (last, workers.logs())
            assert last is not None and last.status == "done", (last, workers.logs())
            assert last.failed == 0 and last.done == info.total > 0
            kits_seated = 0
            for index in range(info.total):
                raw, _ = organiser.match(f"{season}-{index}", -1)
                record = MatchRecord.from_json(raw)
                assert record.faults == [], (season, index, record.faults)
                verify(record)
                kit_seats = [s for s in raw["seats"] if not s["bot"].startswith("house:")]
                assert {s["sandbox"]["kind"] for s in kit_seats} <= {"docker"}, raw["seats"]
                kits_seated += len(kit_seats)
            assert kits_seated > 0  # the kit bots played, in their containers
