"""Hostile input to the arena API: each refused with the right status code and a clear
message, and nothing stored (no bot, no version, no package) after any refusal.

Real gRPC server on a loopback port, real SQLite store, the process sandbox (the same
``arena`` fixture as test_arena_api.py); crafted uploads go through
``ArenaClient.submit_bytes``, a stream without a header through the raw generated stub.
"""

from __future__ import annotations

import gzip
import io
import random
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
import sqlalchemy as sa

from saloon.arena.submit import MAX_UPLOAD_BYTES
from saloon.sdk.arena_proto import arena_pb2 as pb
from saloon.sdk.arena_proto import arena_pb2_grpc as pb_grpc
from saloon.sdk.client import ArenaClient, ArenaClientError
from saloon.worker.sandbox.packages import MAX_PACKAGE_BYTES, MAX_PACKAGE_FILES
from saloon.worker.store.store import Store

from .arena_fixtures import HONEST_BOT, Arena, start_arena

GAME = "western-showdown-v1"
BOT = HONEST_BOT.encode()


# -- helpers ---------------------------------------------------------------------------


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    """The shared test arena, with a submission budget these loops do not exhaust (the
    rate limit has its own test below)."""
    running = start_arena(str(tmp_path / "arena.db"), submit_burst=1000, submit_every_s=1)
    try:
        yield running
    finally:
        running.server.stop(0)


def stored_rows(store_url: str) -> dict[str, int]:
    """Rows in the tables a submission writes to."""
    with Store.open(store_url) as store, store.engine.connect() as conn:
        return {
            table: int(conn.execute(sa.text(f"select count(*) from {table}")).scalar_one())
            for table in ("bots", "bot_versions", "packages", "users")
        }


NOTHING = {"bots": 0, "bot_versions": 0, "packages": 0, "users": 3}


def refused(
    arena: Arena, data: bytes, filename: str, *, name: str = "probe", game: str = GAME
) -> ArenaClientError:
    """Submit as alice; the refusal (the test fails if the upload was taken)."""
    with arena.client("alice") as alice, pytest.raises(ArenaClientError) as err:
        alice.submit_bytes(data, filename, game=game, name=name)
    assert err.value.message, "a refusal says why"
    return err.value


def tar_gz(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.GNU_FORMAT) as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def regular(name: str, data: bytes = BOT) -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3  # /dev/null's numbers
    return info, None


def a_zip(entries: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return out.getvalue()


# -- malformed uploads -------------------------------------------------------------------


def _random(n: int) -> bytes:
    return random.Random(n).randbytes(n)


MALFORMED: dict[str, tuple[bytes, str]] = {
    "random bytes named .tar.gz": (_random(4096), "bot.tar.gz"),
    "random bytes named .zip": (_random(2048), "bot.zip"),
    "a truncated gzip": (tar_gz(regular("bot.py"))[:40], "bot.tar.gz"),
    "a gzip of no tar": (gzip.compress(b"this is not a tar archive\n" * 50), "bot.tar.gz"),
    "a zip that is not a zip": (b"PK\x03\x04" + _random(600), "bot.zip"),
    "a zip cut in half": (a_zip({"bot.py": _random(3000)})[:200], "bot.zip"),
    "an empty upload": (b"", "bot.tar.gz"),
    "binary named .py": (b"\xff\xfe\x00garbage" * 10, "bot.py"),
    "an archive without bot.py": (tar_gz(regular("main.py")), "bot.tar.gz"),
}


def test_a_malformed_upload_is_refused(arena: Arena) -> None:
    for case, (data, filename) in MALFORMED.items():
        err = refused(arena, data, filename)
        assert err.code == "INVALID_ARGUMENT", (case, err)
        assert stored_rows(arena.store_url) == NOTHING, case


def _raw_submit(arena: Arena, chunks: list[pb.SubmitChunk]) -> grpc.RpcError:
    with grpc.insecure_channel(arena.address) as channel:
        stub = pb_grpc.ArenaStub(channel)
        metadata = (("authorization", f"Bearer {arena.tokens['alice']}"),)
        with pytest.raises(grpc.RpcError) as err:
            stub.SubmitBot(iter(chunks), metadata=metadata, timeout=30)
    return err.value


def test_a_stream_that_starts_with_data_or_has_two_headers_is_refused(arena: Arena) -> None:
    header = pb.SubmitChunk(header=pb.SubmitHeader(name="probe", game=GAME, filename="bot.py"))
    data = pb.SubmitChunk(data=BOT)
    for chunks in ([data, header], [header, data, header], [data], []):
        err = _raw_submit(arena, chunks)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, chunks
        assert "header" in str(err.details())
    assert stored_rows(arena.store_url) == NOTHING


def test_an_upload_without_a_token_is_refused_before_it_is_read(arena: Arena) -> None:
    with grpc.insecure_channel(arena.address) as channel:
        stub = pb_grpc.ArenaStub(channel)
        chunks = [
            pb.SubmitChunk(header=pb.SubmitHeader(name="probe", game=GAME, filename="bot.py")),
            pb.SubmitChunk(data=BOT),
        ]
        with pytest.raises(grpc.RpcError) as err:
            stub.SubmitBot(iter(chunks), timeout=30)
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert stored_rows(arena.store_url) == NOTHING


# -- size limits -------------------------------------------------------------------------


def test_an_oversized_upload_is_refused_as_resource_exhausted(arena: Arena) -> None:
    err = refused(arena, b"\x1f\x8b" + bytes(MAX_UPLOAD_BYTES), "big.tar.gz")
    assert err.code == "RESOURCE_EXHAUSTED" and str(MAX_UPLOAD_BYTES) in err.message
    assert stored_rows(arena.store_url) == NOTHING


ZEROS = bytes(MAX_PACKAGE_BYTES + 1)

BOMBS: dict[str, tuple[bytes, str]] = {
    # Each upload is a few kB; each expands past the package size limit.
    "a tar.gz of one big file": (
        tar_gz(regular("bot.py"), regular("data.bin", ZEROS)),
        "bomb.tar.gz",
    ),
    "a zip of one big file": (a_zip({"bot.py": BOT, "data.bin": ZEROS}), "bomb.zip"),
    "a tar.gz of many middling files": (
        tar_gz(
            regular("bot.py"),
            *(regular(f"d{i}.bin", bytes(MAX_PACKAGE_BYTES // 4)) for i in range(5)),
        ),
        "bomb.tar.gz",
    ),
    "a tar.gz whose big file is hidden": (
        tar_gz(regular("bot.py"), regular(".cache/blob", ZEROS)),
        "bomb.tar.gz",
    ),
}


def test_an_archive_that_expands_past_the_limit_is_refused(arena: Arena) -> None:
    for case, (data, filename) in BOMBS.items():
        assert len(data) < MAX_PACKAGE_BYTES // 100, case  # the upload itself is small
        err = refused(arena, data, filename)
        assert err.code == "RESOURCE_EXHAUSTED", (case, err)
        assert "bytes" in err.message, case
        assert stored_rows(arena.store_url) == NOTHING, case


def test_too_many_files_are_refused(arena: Arena) -> None:
    many = tar_gz(regular("bot.py"), *(regular(f"m/{i}.py", b"") for i in range(MAX_PACKAGE_FILES)))
    err = refused(arena, many, "many.tar.gz")
    assert err.code == "INVALID_ARGUMENT" and "files" in err.message
    assert stored_rows(arena.store_url) == NOTHING


# -- unsafe archive entries ----------------------------------------------------------------

UNSAFE: dict[str, bytes] = {
    "a ../ path": tar_gz(regular("bot.py"), regular("../x.py")),
    "a deep ../ path": tar_gz(regular("bot.py"), regular("lib/../../../x.py")),
    "an absolute path": tar_gz(regular("bot.py"), regular("/etc/x")),
    "a backslash path": tar_gz(regular("bot.py"), regular("..\\x.py")),
    "a symlink out": tar_gz(regular("bot.py"), special("data", tarfile.SYMTYPE, "/etc/passwd")),
    "a symlink inside": tar_gz(regular("bot.py"), special("again.py", tarfile.SYMTYPE, "bot.py")),
    "a symlink as bot.py": tar_gz(special("bot.py", tarfile.SYMTYPE, "/etc/passwd")),
    "a hard link": tar_gz(regular("bot.py"), special("h.py", tarfile.LNKTYPE, "bot.py")),
    "a hard link out": tar_gz(regular("bot.py"), special("h", tarfile.LNKTYPE, "/etc/shadow")),
    "a character device": tar_gz(regular("bot.py"), special("null", tarfile.CHRTYPE)),
    "a block device": tar_gz(regular("bot.py"), special("sda", tarfile.BLKTYPE)),
    "a fifo": tar_gz(regular("bot.py"), special("pipe", tarfile.FIFOTYPE)),
}


def test_an_archive_with_an_unsafe_entry_is_refused(arena: Arena) -> None:
    for case, data in UNSAFE.items():
        err = refused(arena, data, "evil.tar.gz")
        assert err.code == "INVALID_ARGUMENT", (case, err)
        assert stored_rows(arena.store_url) == NOTHING, case


def _zip_symlink() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("bot.py", BOT)
        link = zipfile.ZipInfo("data")
        link.external_attr = (0o120777 << 16) | 0  # S_IFLNK
        archive.writestr(link, "/etc/passwd")
    return out.getvalue()


def test_a_zip_with_an_unsafe_entry_is_refused(arena: Arena) -> None:
    cases = {
        "traversal": a_zip({"bot.py": BOT, "../../x.py": b"x = 1\n"}),
        "absolute": a_zip({"bot.py": BOT, "/etc/cron.d/x": b"* * * * * root id\n"}),
        "symlink": _zip_symlink(),
    }
    for case, data in cases.items():
        err = refused(arena, data, "evil.zip")
        assert err.code == "INVALID_ARGUMENT", (case, err)
        assert stored_rows(arena.store_url) == NOTHING, case


def test_a_hostile_file_name_of_a_single_file_bot_is_harmless(arena: Arena) -> None:
    # The upload's file name never becomes a path outside the server's temporary folder;
    # a name that cannot be a file name there is read as bot.py (not an internal error).
    versions = set()
    with arena.client("alice") as alice:
        for filename in ("bot\x00.py", "bot\n.py", "/" * 300 + ".py", "a" * 300 + ".py"):
            reply = alice.submit_bytes(BOT, filename, game=GAME, name="probe")
            assert reply.accepted, (filename, reply.message)
            versions.add(reply.version)
    assert len(versions) == 1  # the same files each time: one version
    with Store.open(arena.store_url) as store:
        assert [v.meta["entry"] for v in store.versions("probe")] == ["bot.py"]


# -- names, games and options ------------------------------------------------------------


def test_a_bot_name_of_another_user_cannot_be_taken(arena: Arena) -> None:
    with arena.client("alice") as alice:
        assert alice.submit_bytes(BOT, "bot.py", game=GAME, name="alice").accepted
    before = stored_rows(arena.store_url)
    with arena.client("bob") as bob, pytest.raises(ArenaClientError) as err:
        bob.submit_bytes(BOT + b"# bob's\n", "bot.py", game=GAME, name="alice")
    assert err.value.code == "ALREADY_EXISTS" and "taken" in err.value.message
    assert stored_rows(arena.store_url) == before
    with Store.open(arena.store_url) as store:
        bot = store.bot("alice")
        assert bot is not None and bot.owner == "alice"
        assert [v.meta["submitted_by"] for v in store.versions("alice")] == ["alice"]


LOOKALIKES = [
    "Alice",  # upper case
    "ALICE",
    "alice\u200b",  # zero-width space
    "\u0430lice",  # Cyrillic a
    "alice\n",  # a trailing newline ($ in a regex matches before it)
    "alice ",
    " alice",
    "alic\u0435",  # Cyrillic e
    "\uff41\uff4c\uff49\uff43\uff45",  # full-width alice
    "alice\x00",
]


def test_a_lookalike_bot_name_is_refused_by_the_name_check(arena: Arena) -> None:
    for name in LOOKALIKES:
        err = refused(arena, BOT, "bot.py", name=name)
        assert err.code == "INVALID_ARGUMENT", (name, err)
        assert "bot name" in err.message, name
        assert stored_rows(arena.store_url) == NOTHING, name


HOSTILE_NAMES = [
    "x'; drop table bots;--",
    'x"; delete from users; --',
    "../../etc",
    "../../../../etc/passwd",
    "bots/../users",
    "a\nb",
    "line\r\nbreak",
    "$(id)",
    "`id`",
    "a;rm -rf /",
    "%00",
    "-rf",
    "_leading",
    "",
    "a" * 41,
    "b" * 10_000,
]


def test_a_hostile_bot_name_is_refused(arena: Arena) -> None:
    for name in HOSTILE_NAMES:
        err = refused(arena, BOT, "bot.py", name=name)
        assert err.code == "INVALID_ARGUMENT", (name[:60], err)
        assert len(err.message) < 300  # the message quotes a capped part of the name
        assert stored_rows(arena.store_url) == NOTHING, name[:60]


def test_a_submission_for_an_unknown_or_hostile_game_is_refused(arena: Arena) -> None:
    hostile = ["western-showdown-v1'; drop table bots;--", "../../etc/passwd", "", "WESTERN-V1"]
    for game in hostile:
        err = refused(arena, BOT, "bot.py", game=game)
        assert err.code == "INVALID_ARGUMENT", (game, err)
        assert stored_rows(arena.store_url) == NOTHING, game


def test_injection_in_season_requests_and_reads_is_refused(arena: Arena) -> None:
    house3 = ["greedy", "random", "search-25"]
    calls: list[tuple[str, Callable[[ArenaClient], object]]] = [
        (
            "option value",
            lambda c: c.create_season(
                "seizure-v1", options={"end": "rounds; rm -rf /"}, house=house3
            ),
        ),
        (
            "unknown option",
            lambda c: c.create_season("seizure-v1", options={"shell": "/bin/sh"}, house=house3),
        ),
        (
            "option name",
            lambda c: c.create_season(
                "seizure-v1", options={"end'; drop table seasons;--": "gap"}, house=house3
            ),
        ),
        (
            "game",
            lambda c: c.create_season("seizure-v1'; drop table seasons;--", house=house3),
        ),
        (
            "season id",
            lambda c: c.create_season(
                "seizure-v1", season_id="s1'; drop table seasons;--", house=house3
            ),
        ),
        ("season id path", lambda c: c.create_season(GAME, season_id="../../x", house=["greedy"])),
        ("house bot", lambda c: c.create_season(GAME, house=["greedy", "../../../bin/sh"])),
        ("house bot path", lambda c: c.create_season(GAME, house=["greedy", "/tmp/evil.py"])),
        ("house bot kind", lambda c: c.create_season(GAME, house=["greedy", "grpc:evil:1"])),
        ("board game", lambda c: c.leaderboard("western-showdown-v1' or '1'='1")),
        ("board option", lambda c: c.leaderboard(GAME, options={"best_of": "1; rm -rf /"})),
        ("board unknown option", lambda c: c.leaderboard(GAME, options={"x": "1"})),
    ]
    with arena.client("olga") as olga:
        for what, call in calls:
            with pytest.raises(ArenaClientError) as err:
                call(olga)
            assert err.value.code == "INVALID_ARGUMENT", (what, err.value)
    with Store.open(arena.store_url) as store:
        assert store.seasons() == []
    assert stored_rows(arena.store_url) == NOTHING


def test_hostile_ids_in_reads_are_not_found_or_refused(arena: Arena) -> None:
    with arena.client("bob") as bob:
        for season_id in ("x'; drop table seasons;--", "../../etc/passwd"):
            with pytest.raises(ArenaClientError) as err:
                bob.leaderboard(season_id=season_id)
            assert err.value.code in ("NOT_FOUND", "INVALID_ARGUMENT"), err.value
            with pytest.raises(ArenaClientError) as err:
                bob.season(season_id)
            assert err.value.code in ("NOT_FOUND", "INVALID_ARGUMENT"), err.value
        for match_id in ("m'; drop table match_records;--", "../../etc/passwd"):
            with pytest.raises(ArenaClientError) as err:
                bob.match(match_id, seat=0)
            assert err.value.code == "NOT_FOUND", err.value
        # Filters are values in a query, never part of it.
        assert bob.bots(game="x' or '1'='1", owner="x' or '1'='1") == []
    assert stored_rows(arena.store_url) == NOTHING


# -- a flood from one token ----------------------------------------------------------------


@pytest.fixture
def small_burst_arena(tmp_path: Path) -> Iterator[Arena]:
    running = start_arena(str(tmp_path / "flood.db"), submit_burst=2, submit_every_s=60)
    try:
        yield running
    finally:
        running.server.stop(0)


def test_a_flood_of_submissions_is_rate_limited_per_user(small_burst_arena: Arena) -> None:
    arena = small_burst_arena
    junk = _random(512)
    with arena.client("alice") as alice:
        # The burst: each submission is looked at (and refused on its content).
        for _ in range(2):
            with pytest.raises(ArenaClientError) as err:
                alice.submit_bytes(junk, "bot.tar.gz", game=GAME, name="flood")
            assert err.value.code == "INVALID_ARGUMENT"
        # Then the token is out of submissions, whatever they hold (a good bot too).
        for data, filename in ((junk, "bot.tar.gz"), (BOT, "bot.py"), (BOT, "bot.py")):
            with pytest.raises(ArenaClientError) as err:
                alice.submit_bytes(data, filename, game=GAME, name="flood")
            assert err.value.code == "RESOURCE_EXHAUSTED"
            assert "too many submissions" in err.value.message
        # Reading is not limited by the submission budget.
        assert alice.bots() == []
    # Another user has their own budget: bob's good bot is taken.
    with arena.client("bob") as bob:
        assert bob.submit_bytes(BOT, "bot.py", game=GAME, name="bobs").accepted
    rows = stored_rows(arena.store_url)
    assert rows == {"bots": 1, "bot_versions": 1, "packages": 1, "users": 3}
    with Store.open(arena.store_url) as store:
        assert store.bot("flood") is None
