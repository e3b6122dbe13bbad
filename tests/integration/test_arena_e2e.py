"""The arena end to end on one machine, every part real and in its own process.

PostgreSQL store (a schema of its own), Redis (a queue of its own), ``saloon serve`` with
the Docker sandbox for qualification, two ``saloon worker`` processes playing in the Docker
sandbox; users made with ``saloon user add``. Two users submit four bots through the SDK
client, an organiser runs a ladder season to completion, the leaderboard comes back
through the API and over HTTP (rendered by headless Chromium), and the permission edges
hold: no overwriting another user's bot, no reading its logs, no bad tokens.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from saloon.sdk import ArenaClient
from saloon.sdk.client import ArenaClientError
from tests import services

from .season_fixtures import Workers, pg_url, queue_name, workers
from .test_ratings_html import CHROMIUM_FLAGS

__all__ = ["pg_url", "queue_name", "workers"]

GAME = "western-showdown-v1"
#: A bot that plays the legal action at a fixed position and says hello on stderr.
BOT = """\
import sys

from saloon.sdk import Bot


class Positional(Bot):
    def on_match_start(self, info):
        print("{name}: hello from seat", info.seat, file=sys.stderr, flush=True)

    def act(self, decision):
        return decision.legal[{pick} % len(decision.legal)]
"""
BOTS = {"alice": [("ace", 0), ("ant", -1)], "bob": [("bee", 1), ("bat", 2)]}
SEASON_TIMEOUT_S = 300


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _saloon(*argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "saloon.arena.cli", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _token(output: str) -> str:
    return output.strip().splitlines()[-1]


class Server:
    """``saloon serve`` in a process of its own (stopped by pid)."""

    def __init__(self, tmp: Path, store: str, redis: str, queue: str) -> None:
        self.grpc_port, self.http_port = _free_port(), _free_port()
        self.log = tmp / "serve.log"
        argv = [sys.executable, "-m", "saloon.arena.cli", "serve", "--store", store]
        argv += ["--redis", redis, "--queue", queue, "--sandbox", "docker"]
        argv += ["--listen", f"127.0.0.1:{self.grpc_port}", "--http", f"127.0.0.1:{self.http_port}"]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        self.address = f"127.0.0.1:{self.grpc_port}"

    def wait_serving(self, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        with grpc.insecure_channel(self.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                assert self.proc.poll() is None, self.log.read_text()
                try:
                    status = stub.Check(
                        health_pb2.HealthCheckRequest(service="saloon.v1.Arena"), timeout=2
                    ).status
                    if status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError:
                    pass
                time.sleep(0.2)
        raise AssertionError(f"saloon serve did not come up:\n{self.log.read_text()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def server(
    tmp_path: Path, pg_url: str, redis_url: str, queue_name: str, docker_engine: None
) -> Iterator[Server]:
    running = Server(tmp_path, pg_url, redis_url, queue_name)
    try:
        yield running
    finally:
        running.stop()


def test_two_users_four_bots_one_season(
    tmp_path: Path,
    pg_url: str,
    redis_url: str,
    queue_name: str,
    workers: Workers,
    server: Server,
) -> None:
    tokens = {
        "alice": _token(_saloon("user", "add", "alice", "--store", pg_url)),
        "bob": _token(_saloon("user", "add", "bob", "--store", pg_url)),
        "olga": _token(_saloon("user", "add", "olga", "--organiser", "--store", pg_url)),
    }
    assert "olga\torganiser" in _saloon("user", "list", "--store", pg_url)
    server.wait_serving()
    for _ in range(2):
        workers.start(redis_url, queue_name)

    def client(user: str) -> ArenaClient:
        return ArenaClient(server.address, tokens[user], timeout_s=240)

    # Two users submit two bots each, through the SDK client (Docker qualification).
    versions: dict[str, str] = {}
    for user, bots in BOTS.items():
        with client(user) as arena:
            for name, pick in bots:
                folder = tmp_path / name
                folder.mkdir()
                (folder / "bot.py").write_text(BOT.format(name=name, pick=pick))
                reply = arena.submit(folder, game=GAME, name=name)
                assert reply.accepted, reply
                assert reply.qualification.passed and reply.qualification.opponents == [
                    "house:greedy"
                ]
                versions[name] = reply.version

    # A user cannot overwrite another's bot.
    with client("alice") as alice, pytest.raises(ArenaClientError) as err:
        alice.submit(tmp_path / "ace", game=GAME, name="bee")
    assert err.value.code == "ALREADY_EXISTS"
    # A bad token is refused.
    with ArenaClient(server.address, "olga.not-her-secret-at-all") as bad:
        with pytest.raises(ArenaClientError) as err:
            bad.bots()
        assert err.value.code == "UNAUTHENTICATED"

    # The organiser runs a season of the ladder; it runs to completion on the workers.
    with client("olga") as olga:
        info = olga.create_season(GAME, season_id="e2e", start=True)
        assert sorted(info.participants) == sorted(f"bot:{n}@{v}" for n, v in versions.items())
        assert info.total == 12  # 4 bots, every ordered pair (2 seats)
        last = None
        deadline = time.monotonic() + SEASON_TIMEOUT_S
        for last in olga.watch_season("e2e"):
            assert time.monotonic() < deadline, (last, workers.logs())
        assert last is not None and last.status == "done", (last, workers.logs())
        assert last.done == 12 and last.failed == 0

        # The leaderboard comes back through the API: the four bots, rated, with owners.
        board = olga.leaderboard(GAME)
        rows = {r.bot: r for r in board.rows}
        assert set(rows) == set(versions)
        assert all(r.rank > 0 and r.matches == 6 for r in rows.values())
        assert {r.owner for r in rows.values()} == {"alice", "bob"}
        assert olga.leaderboard(season_id="e2e").title.endswith("season e2e")
        full, _ = olga.match("e2e-0", -1)
        assert full["seed"] is not None and full["faults"] == []
        assert {s["sandbox"]["kind"] for s in full["seats"]} == {"docker"}

    # Users read their own seats' views and stderr, never another user's.
    with client("alice") as alice:
        assert len(alice.matches("e2e")) == 12
        match_id, alice_seat, bob_seat = _a_match_of(alice, "ace", "bee")
        view, stderr = alice.match(match_id, alice_seat)
        assert "seed" not in view and view["view"] == f"seat {alice_seat}"
        assert all("observation" in s or "events" in s for s in view["steps"])
        assert "ace: hello from seat" in stderr
        for seat in (bob_seat, -1):
            with pytest.raises(ArenaClientError) as err:
                alice.match(match_id, seat)
            assert err.value.code == "PERMISSION_DENIED"

    # The HTML board over HTTP, rendered by a real browser.
    page = f"http://127.0.0.1:{server.http_port}/leaderboard/{GAME}"
    services.require("chromium")
    dom = chromium_url(page, tmp_path)
    shown = set(re.findall(r'data-bot="([a-z]+)"', dom))
    assert set(versions) <= shown


def _a_match_of(client: ArenaClient, a: str, b: str) -> tuple[str, int, int]:
    """A match of the season where ``a`` and ``b`` met, with their seats (ListMatches)."""
    for match in client.matches("e2e"):
        bots = [ref.removeprefix("bot:").split("@")[0] for ref in match.seats]
        if set(bots) == {a, b}:
            assert match.status == "done" and match.outcome == "completed"
            assert sorted(match.ranks) in ([0, 1], [0, 0])
            return match.match_id, bots.index(a), bots.index(b)
    raise AssertionError(f"{a} never met {b}")


def chromium_url(url: str, tmp: Path) -> str:
    """The DOM headless Chromium renders for ``url`` (a loopback address)."""
    binary = services.chromium_binary()
    assert binary is not None
    done = subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'profile'}", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout
