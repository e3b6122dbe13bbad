"""``saloon serve`` on its port and at its stop: one server per port (also through the
real command line), a quick stop with a follower connected (of a season, of a continuous
ladder), and the followers (``ladder status --follow``, ``ladder continuous status
--follow``) across a server restart. Real gRPC on loopback ports, real stores, real Redis
for the continuous ladders."""

from __future__ import annotations

import io
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from saloon.arena import continuous
from saloon.arena.cli import main
from saloon.arena.commands import follow_season
from saloon.arena.errors import AddressInUse
from saloon.arena.registry import Registry
from saloon.arena.server import ArenaServer, ServeOptions
from saloon.sdk.client import ArenaClient
from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.seasons.run import cancel, create
from saloon.worker.seasons.schedule import SeasonSpec
from saloon.worker.store.store import Store

from .arena_fixtures import Arena, start_arena

#: Bounds of the waits below (the events take well under a second on a quiet machine).
WAIT_S = 20.0


def _season(store_url: str, season_id: str) -> None:
    with Store.open(store_url) as store:
        create(
            store,
            SeasonSpec(
                season_id=season_id,
                game="seizure-v1",
                participants=("house:random", "house:greedy"),
                seats=2,
            ),
        )


def test_a_second_server_on_a_port_in_use_fails_with_address_in_use(tmp_path: Path) -> None:
    first = start_arena(str(tmp_path / "a.db"))
    try:
        port = first.server.port
        with pytest.raises(AddressInUse, match="address in use"):
            ArenaServer(
                ServeOptions(
                    store_url=str(tmp_path / "b.db"),
                    listen=f"127.0.0.1:{port}",
                    http="",
                    sandbox="process",
                )
            )
        # The first one still answers alone.
        client = ArenaClient(first.address, first.tokens["alice"], timeout_s=10)
        assert client.bots() == []
        client.close()
    finally:
        first.server.stop(0)


def stops_at_once_with_a_follower(
    arena: Arena, watch: Callable[[], Iterable[object]], hold_s: float = 0.0
) -> None:
    """Stop ``arena``'s server (a long grace) while a client follows ``watch()`` (for
    ``hold_s`` first, the stream still open then): the stop must not wait out the grace,
    and the follower's stream ends UNAVAILABLE."""
    seen = threading.Event()
    ended: list[BaseException | None] = []

    def follow() -> None:
        try:
            for _ in watch():
                seen.set()
            ended.append(None)
        except BaseException as exc:  # the stream ends with the server
            ended.append(exc)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    assert seen.wait(WAIT_S)
    time.sleep(hold_s)
    assert not ended, f"the follow ended by itself: {ended}"
    grace = 30.0
    started = time.monotonic()
    arena.server.stop(grace)
    took = time.monotonic() - started
    thread.join(WAIT_S)
    # The stream held the stop for the whole grace before: it must end at once now.
    assert took < grace / 3, f"stop took {took:.1f} s with a follower connected"
    assert ended and ended[0] is not None and "UNAVAILABLE" in str(ended[0])


def test_a_server_with_a_follower_connected_stops_without_waiting_its_grace(
    tmp_path: Path,
) -> None:
    arena = start_arena(str(tmp_path / "arena.db"))
    _season(arena.store_url, "followed")
    client = arena.client("alice")
    stops_at_once_with_a_follower(arena, lambda: client.watch_season("followed"))
    client.close()


def test_ladder_status_follow_says_the_server_went_away_and_reconnects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = str(tmp_path / "arena.db")
    first = start_arena(url)
    port = first.server.port
    _season(url, "restarted")
    client = ArenaClient(first.address, first.tokens["olga"], timeout_s=30)
    out = io.StringIO()
    errors: list[BaseException] = []

    def follow() -> None:
        try:
            follow_season(client, "restarted", out)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT_S
    while "created" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.05)
    first.server.stop(5)
    time.sleep(0.5)  # the follower finds the server gone
    second = ArenaServer(
        ServeOptions(store_url=url, listen=f"127.0.0.1:{port}", http="", sandbox="process")
    )
    second.start()
    try:
        with Store.open(url) as store:
            cancel(store, "restarted")
        thread.join(WAIT_S)
        assert not thread.is_alive(), "the follower did not come back"
        assert not errors, errors
    finally:
        second.stop(0)
        client.close()
    err = capsys.readouterr().err
    assert "lost the server" in err and "reconnected" in err
    assert "Cancelling all calls" not in out.getvalue()
    assert out.getvalue().splitlines()[-1].startswith("season restarted (seizure-v1, cancelled)")


@pytest.fixture
def queue_name(redis_url: str) -> Iterator[str]:
    """An RQ queue of this test's own on the machine's Redis (a continuous ladder's batches
    go on a queue; no worker plays them here)."""
    name = f"test-serve-{uuid.uuid4().hex[:8]}"
    yield name
    SeasonQueue(connect(redis_url), name).purge()


def _ladder(arena: Arena, ladder_id: str) -> None:
    """A running continuous ladder of two house bots; its first batch stays running."""
    with arena.client("olga") as olga:
        info = olga.start_ladder(ladder_id, "seizure-v1", players=2, house=["random", "greedy"])
    assert info.active and info.batch_season == f"{ladder_id}-b1"


def _until(done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_follow_outlasts_the_clients_deadline_for_calls(tmp_path: Path) -> None:
    arena = start_arena(str(tmp_path / "arena.db"))
    _season(arena.store_url, "long")
    # A call's deadline is a second; following a season that runs longer is not a call.
    client = ArenaClient(arena.address, arena.tokens["alice"], timeout_s=1.0)
    stops_at_once_with_a_follower(arena, lambda: client.watch_season("long"), hold_s=2.5)
    client.close()


def test_a_server_with_a_ladder_follower_connected_stops_without_waiting_its_grace(
    tmp_path: Path, redis_url: str, queue_name: str
) -> None:
    arena = start_arena(str(tmp_path / "arena.db"), redis_url, queue_name=queue_name)
    _ladder(arena, "watched")
    client = arena.client("alice")
    # WatchLadder held the stop for the whole grace: it must end at once, like WatchSeason.
    stops_at_once_with_a_follower(arena, lambda: client.watch_ladder("watched"))
    client.close()


def test_continuous_status_follow_says_the_server_went_away_and_reconnects(
    tmp_path: Path, redis_url: str, queue_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    url = str(tmp_path / "arena.db")
    first = start_arena(url, redis_url, queue_name=queue_name)
    port = first.server.port
    _ladder(first, "restarted")
    argv = ["ladder", "continuous", "status", "restarted", "--follow"]
    argv += ["--server", first.address, "--token", first.tokens["alice"]]
    exits: list[int | BaseException] = []

    def follow() -> None:
        try:
            exits.append(main(argv))
        except BaseException as exc:
            exits.append(exc)

    out: list[str] = []
    err: list[str] = []

    def seen(text: str, stream: list[str]) -> bool:
        captured = capsys.readouterr()
        out.append(captured.out)
        err.append(captured.err)
        return text in "".join(stream)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    _until(lambda: seen("ladder restarted", out), "the follower's first line")
    first.server.stop(5)
    _until(lambda: seen("lost the server", err), "the follower to see it gone")
    second = ArenaServer(
        ServeOptions(
            store_url=url,
            redis_url=redis_url,
            queue_name=queue_name,
            listen=f"127.0.0.1:{port}",
            http="",
            sandbox="process",
            season_sandbox="process",
        )
    )
    second.start()
    try:
        _until(lambda: seen("reconnected", err), "the follower to reconnect")
        # The ladder stops and its batch is cancelled: the follow ends.
        with Store.open(url) as store:
            continuous.stop(Registry(store), "restarted")
            cancel(store, "restarted-b1")
        thread.join(WAIT_S)
        assert not thread.is_alive(), "the follower did not come back"
        assert exits == [0], exits
    finally:
        second.stop(0)
    seen("", out)
    lines = "".join(out).splitlines()
    lost = [line for line in "".join(err).splitlines() if "lost the server" in line]
    assert len(lost) == 1 and "reconnecting for up to 300 s" in lost[0], err
    assert lines[-1].startswith("ladder restarted (seizure-v1, stopped): 1 batch(es)"), lines
    assert len(lines) == len(set(lines)), lines  # a reconnect does not repeat a line
    assert "Cancelling all calls" not in "".join(out)


def test_saloon_serve_on_a_port_in_use_exits_with_one_line_naming_it(tmp_path: Path) -> None:
    first = start_arena(str(tmp_path / "a.db"))
    try:
        listen = f"127.0.0.1:{first.server.port}"
        saloon = Path(sys.executable).with_name("saloon")  # the console script
        assert saloon.exists(), f"no {saloon}: install the project (deploy/dev.sh setup)"
        argv = [str(saloon), "serve", "--store", str(tmp_path / "b.db"), "--listen", listen]
        done = subprocess.run(
            [*argv, "--http", "", "--sandbox", "process"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode != 0, done.stdout
        assert done.stderr.splitlines() == [
            f"saloon: error: cannot listen on {listen}: address in use"
        ], done.stderr
        # The first one still serves.
        with first.client("alice") as client:
            assert client.bots() == []
    finally:
        first.server.stop(0)
