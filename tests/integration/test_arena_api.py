"""The arena API end to end in one process: a real gRPC server on a loopback port, a real
SQLite store, submissions qualified in the process sandbox, the SDK client."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from saloon.arena.registry import Registry
from saloon.sdk import ArenaClient
from saloon.sdk.client import ArenaClientError
from saloon.worker.store.store import Store

from .arena_fixtures import CRASHING_BOT, Arena, arena, write_bot

__all__ = ["arena"]

GAME = "western-showdown-v1"


def test_submit_accepts_a_bot_after_its_qualification_match(arena: Arena, tmp_path: Path) -> None:
    with arena.client("alice") as alice:
        reply = alice.submit(write_bot(tmp_path / "b"), game=GAME, name="honest")
        assert reply.accepted and reply.new_version
        assert reply.version.startswith("sha256:")
        q = reply.qualification
        assert q.passed and q.opponents == ["house:greedy"] and q.rank in (1, 2)
        assert list(q.faults) == []
        # The same files again: the same version, no new match.
        again = alice.submit(write_bot(tmp_path / "b"), game=GAME, name="honest")
        assert again.accepted and not again.new_version and again.version == reply.version
        bots = alice.bots()
    assert [(b.name, b.owner, b.game) for b in bots] == [("honest", "alice", GAME)]
    assert [v.version for v in bots[0].versions] == [reply.version]


def test_a_faulting_bot_is_refused_with_its_fault_and_stderr(arena: Arena, tmp_path: Path) -> None:
    with arena.client("alice") as alice:
        reply = alice.submit(write_bot(tmp_path / "c", CRASHING_BOT), game=GAME, name="crasher")
    assert not reply.accepted
    assert not reply.qualification.passed
    assert any(f.startswith("CRASH") for f in reply.qualification.faults), reply.qualification
    assert "about to fail on purpose" in reply.qualification.stderr
    with Store.open(arena.store_url) as store:
        assert store.bot("crasher") is None  # nothing stored


def test_another_users_bot_name_cannot_be_taken(arena: Arena, tmp_path: Path) -> None:
    with arena.client("alice") as alice:
        assert alice.submit(write_bot(tmp_path / "a"), game=GAME, name="shared").accepted
    with arena.client("bob") as bob, pytest.raises(ArenaClientError) as err:
        bob.submit(write_bot(tmp_path / "b", extra={"x.txt": "bob's"}), game=GAME, name="shared")
    assert err.value.code == "ALREADY_EXISTS"
    with Store.open(arena.store_url) as store:
        assert [v.meta["submitted_by"] for v in store.versions("shared")] == ["alice"]


def test_the_same_code_under_another_name_is_refused(arena: Arena, tmp_path: Path) -> None:
    with arena.client("alice") as alice:
        assert alice.submit(write_bot(tmp_path / "a"), game=GAME, name="first").accepted
        with pytest.raises(ArenaClientError) as err:
            alice.submit(write_bot(tmp_path / "a"), game=GAME, name="second")
    assert err.value.code == "ALREADY_EXISTS" and "first" in str(err.value)
    with arena.client("bob") as bob, pytest.raises(ArenaClientError) as err:
        bob.submit(write_bot(tmp_path / "a"), game=GAME, name="copied")
    assert err.value.code == "ALREADY_EXISTS"
    with Store.open(arena.store_url) as store:
        assert store.bot("second") is None and store.bot("copied") is None


def test_a_bad_token_is_refused(arena: Arena) -> None:
    for token in ("", "alice.wrong-secret-of-some-length", "nobody.abcdefghijkl", "garbage"):
        with ArenaClient(arena.address, token) as client, pytest.raises(ArenaClientError) as err:
            client.bots()
        assert err.value.code == "UNAUTHENTICATED", token


def test_tokens_are_stored_hashed(arena: Arena) -> None:
    with Store.open(arena.store_url) as store:
        import sqlalchemy as sa

        with store.engine.connect() as conn:
            hashes = conn.execute(sa.text("select token_hash from users")).scalars().all()
    for token in arena.tokens.values():
        secret = token.partition(".")[2]
        assert all(secret not in h for h in hashes)
        assert len(hashes) == 3 and all(len(h) == 64 for h in hashes)


def test_rotating_a_token_retires_the_old_one(arena: Arena) -> None:
    with Store.open(arena.store_url) as store:
        new = Registry(store).rotate_token("bob")
    with arena.client("bob") as old, pytest.raises(ArenaClientError) as err:
        old.bots()
    assert err.value.code == "UNAUTHENTICATED"
    with ArenaClient(arena.address, new) as client:
        assert client.bots() == []


def test_only_organisers_create_seasons(arena: Arena) -> None:
    with arena.client("alice") as alice, pytest.raises(ArenaClientError) as err:
        alice.create_season(GAME, house=["greedy", "random"])
    assert err.value.code == "PERMISSION_DENIED"


def test_a_season_without_a_queue_is_created_not_started(arena: Arena, tmp_path: Path) -> None:
    with arena.client("alice") as alice:
        alice.submit(write_bot(tmp_path / "a"), game=GAME, name="ace")
    with arena.client("olga") as olga:
        info = olga.create_season(GAME, house=["greedy"], season_id="w1")
        assert info.status == "created" and info.total == 2 and info.organiser == "olga"
        ace = f"bot:ace@{_version(olga, 'ace')}"
        assert sorted(info.participants) == sorted([ace, "house:greedy"])
        with pytest.raises(ArenaClientError) as err:
            olga.start_season("w1")
        assert err.value.code == "FAILED_PRECONDITION"
        with pytest.raises(ArenaClientError) as err:
            olga.create_season("no-such-game-v1")
        assert err.value.code == "INVALID_ARGUMENT"
        with pytest.raises(ArenaClientError) as err:
            olga.create_season(GAME, players=2)  # one bot: the ladder cannot fill 2 seats
        assert err.value.code == "INVALID_ARGUMENT" and "needs at least" in err.value.message


def _version(client: ArenaClient, name: str) -> str:
    return next(b for b in client.bots() if b.name == name).versions[-1].version


def test_the_health_service_answers_serving(arena: Arena) -> None:
    with grpc.insecure_channel(arena.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for service in ("", "saloon.v1.Arena"):
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_the_boards_are_read_only_html(arena: Arena) -> None:
    with urllib.request.urlopen(arena.http + "/", timeout=10) as page:
        assert page.status == 200 and b"Saloon ladders" in page.read()
    with urllib.request.urlopen(arena.http + "/healthz", timeout=10) as page:
        assert page.read() == b"ok\n"
    request = urllib.request.Request(arena.http + "/", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 405
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(arena.http + "/season/nope", timeout=10)
    assert err.value.code == 404


def test_the_leaderboard_of_an_empty_ladder_comes_back(arena: Arena) -> None:
    with arena.client("bob") as bob:
        board = bob.leaderboard(GAME)
    assert "western-showdown-v1" in board.title
    assert json.loads(board.json)["rows"] == [] or isinstance(json.loads(board.json), dict)


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-m", "saloon.arena.cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_the_cli_talks_to_the_configured_server(arena: Arena, tmp_path: Path) -> None:
    bot = write_bot(tmp_path / "cli")
    config = tmp_path / "client.toml"
    config.write_text(f'server = "{arena.address}"\ntoken = "{arena.tokens["alice"]}"\n')
    env = {"SALOON_CONFIG": str(config), "SALOON_STORE": str(tmp_path / "not-used.db")}
    done = _cli("submit", str(bot), "--game", GAME, "--name", "viacli", env=env)
    assert done.returncode == 0, done.stderr
    assert "viacli sha256:" in done.stdout and "accepted as version 1" in done.stdout
    assert "qualification qualify-viacli-" in done.stdout and "passed" in done.stdout
    listing = _cli("bots", env=env)
    assert listing.returncode == 0
    assert "viacli  (alice, western-showdown-v1, python)" in listing.stdout
    board = _cli("leaderboard", "--game", GAME, "--format", "csv", env=env)
    assert board.returncode == 0, board.stderr
    assert board.stdout.splitlines()[0].startswith("rank,bot,owner")
    assert not (tmp_path / "not-used.db").exists()  # nothing went to a local store
    # A refused submission: exit 1, the fault and the bot's stderr printed.
    bad = write_bot(tmp_path / "bad", CRASHING_BOT)
    done = _cli("submit", str(bad), "--game", GAME, "--name", "badcli", env=env)
    assert done.returncode == 1
    assert "FAILED" in done.stdout and "fault: CRASH" in done.stdout
    assert "about to fail on purpose" in done.stdout
    # A bad token: one clear line, non-zero.
    done = _cli("bots", "--token", "alice.wrong-wrong-wrong", env=env)
    assert done.returncode != 0 and "UNAUTHENTICATED" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_without_a_server_the_cli_submits_to_the_local_store(tmp_path: Path) -> None:
    bot = write_bot(tmp_path / "local")
    env = {"SALOON_CONFIG": str(tmp_path / "none.toml"), "SALOON_SERVER": ""}
    db = str(tmp_path / "local.db")
    done = _cli("submit", str(bot), "--game", GAME, "--name", "homebot", "--store", db, env=env)
    assert done.returncode == 0, done.stderr
    assert "accepted as version 1" in done.stdout
    with Store.open(db) as store:
        assert [v.meta["game"] for v in store.versions("homebot")] == [GAME]


def test_client_config_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from saloon.sdk.client import load_config

    config = tmp_path / "c.toml"
    config.write_text('server = "file:1"\ntoken = "file.token"\ntls = true\n')
    monkeypatch.setenv("SALOON_CONFIG", str(config))
    for name in ("SALOON_SERVER", "SALOON_TOKEN", "SALOON_TLS"):
        monkeypatch.delenv(name, raising=False)
    assert load_config() == load_config(None, None)
    found = load_config()
    assert found is not None and (found.server, found.token, found.tls) == (
        "file:1",
        "file.token",
        True,
    )
    monkeypatch.setenv("SALOON_SERVER", "env:2")
    monkeypatch.setenv("SALOON_TLS", "0")
    found = load_config()
    assert found is not None and (found.server, found.token, found.tls) == (
        "env:2",
        "file.token",
        False,
    )
    found = load_config("arg:3", "arg.token")
    assert found is not None and (found.server, found.token) == ("arg:3", "arg.token")
    config.write_text("not = [valid")
    with pytest.raises(ArenaClientError):
        load_config()
    config.unlink()
    monkeypatch.delenv("SALOON_SERVER")
    assert load_config() is None


def test_the_ladder_commands_run_seasons_on_the_server(arena: Arena) -> None:
    env = {"SALOON_SERVER": arena.address, "SALOON_TOKEN": arena.tokens["olga"]}
    made = _cli("ladder", "season", "--game", GAME, "--house", "greedy", "--house", "random",
                "--season-id", "cli1", env=env)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("season cli1 (western-showdown-v1, created): 0 done")
    status = _cli("ladder", "status", "cli1", env=env)
    assert status.returncode == 0 and "of 2; 2 entries" in status.stdout
    listing = _cli("ladder", "matches", "cli1", env=env)
    assert listing.returncode == 0, listing.stderr
    assert [line.split()[:2] for line in listing.stdout.splitlines()] == [
        ["cli1-0", "pending"],
        ["cli1-1", "pending"],
    ]
    start = _cli("ladder", "start", "cli1", env=env)
    assert start.returncode != 0 and "FAILED_PRECONDITION" in start.stderr  # no queue here
    cancel = _cli("ladder", "cancel", "cli1", env=env)
    assert cancel.returncode == 0 and "(western-showdown-v1, cancelled)" in cancel.stdout
    as_user = _cli("ladder", "cancel", "cli1", env={**env, "SALOON_TOKEN": arena.tokens["bob"]})
    assert as_user.returncode != 0 and "PERMISSION_DENIED" in as_user.stderr
    nowhere = _cli("ladder", "status", "cli1", env={"SALOON_SERVER": "", "SALOON_CONFIG": "/x"})
    assert nowhere.returncode != 0 and "no arena server configured" in nowhere.stderr
