"""The arena's registry and the pieces under the API: tokens, packages, uploads, seat views.

A SQLite store in a temp folder (the store's own tests cover PostgreSQL alike).
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from saloon.arena.registry import Registry, Role
from saloon.arena.submit import read_upload, sniff_suffix
from saloon.referee.bots import resolve_seat
from saloon.referee.errors import RecordError
from saloon.referee.match import play_match
from saloon.referee.replay import seat_view
from saloon.worker.errors import BadToken, BotRefError, PackageFormatError, UserExists
from saloon.worker.sandbox.packages import load_package
from saloon.worker.sandbox.stored import pack, parse_ref, unpack
from saloon.worker.store.store import Store


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return Registry(Store.open(tmp_path / "r.db"))


def test_a_token_works_once_made_and_is_stored_only_as_a_digest(registry: Registry) -> None:
    token = registry.add_user("alice", Role.ORGANISER)
    name, _, secret = token.partition(".")
    assert name == "alice" and len(secret) >= 40
    user = registry.authenticate(token)
    assert user.name == "alice" and user.organiser
    with registry.store.engine.connect() as conn:
        import sqlalchemy as sa

        stored = conn.execute(sa.text("select token_hash from users")).scalar_one()
    assert stored == hashlib.sha256(secret.encode()).hexdigest()
    with pytest.raises(UserExists):
        registry.add_user("alice")


@pytest.mark.parametrize(
    "bad", ["", "alice", "alice.", "alice.short", "bob.x" * 10, "Alice.abcdefghijkl", "a.b.c"]
)
def test_bad_tokens_get_one_message(registry: Registry, bad: str) -> None:
    registry.add_user("alice")
    with pytest.raises(BadToken, match=r"^the API token is not valid$"):
        registry.authenticate(bad)


def test_packages_round_trip_and_are_keyed_by_their_whole_digest(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    (folder / "lib").mkdir(parents=True)
    (folder / "bot.py").write_text("import lib.helper\n")
    (folder / "lib" / "helper.py").write_text("X = 1\n")
    package = load_package(folder)
    digest, data = pack(package)
    assert len(digest) == 64 and pack(package) == (digest, data)  # deterministic
    again = unpack(data, package.entry, package.is_folder)
    assert again == package and again.version == package.version


def test_stored_versions_unpack_once_into_the_cache(registry: Registry, tmp_path: Path) -> None:
    package = load_package(_bot_file(tmp_path, "solo.py"))
    registry.accept("alice", "solo", "seizure-v1", package, {})
    ref = f"bot:solo@{package.version}#2"
    path = registry.unpacked(ref, tmp_path / "cache")
    assert Path(path).name == "solo.py" and Path(path).read_text() == "print('hi')\n"
    assert registry.unpacked(ref, tmp_path / "cache") == path
    with pytest.raises(BotRefError):
        registry.unpacked("bot:solo@sha256:0000000000000000", tmp_path / "cache")
    assert parse_ref(ref) == ("solo", package.version)
    for bad in ("house:greedy", "bot:solo", "bot:@v", "bot:solo@"):
        with pytest.raises(BotRefError):
            parse_ref(bad)


def test_the_same_files_stored_on_two_runtimes_unpack_apart_each_pinned_to_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: the unpack cache was keyed by the files alone, so a version whose files
    an earlier version (another store, or before a runtime's upgrade) already had was
    served pinned to that version's runtime (test_languages_arena met a deleted one)."""
    from saloon.worker.sandbox.runtimes import pinned_runtime

    package = load_package(_bot_file(tmp_path, "solo.py"))
    paths = {}
    for runtime in ("saloon-bot-base:0.1.0-aaaaaaaaaaaa", "saloon-bot-base:0.1.0-bbbbbbbbbbbb"):
        # The arena's runtime upgraded between the two stores' submissions.
        monkeypatch.setattr(
            "saloon.arena.registry.runtime_for", lambda _lang, tag=runtime: _Runtime(tag)
        )
        registry = Registry(Store.open(tmp_path / f"{runtime[-4:]}.db"))
        registry.accept("alice", "solo", "seizure-v1", package, {})
        path = registry.unpacked(f"bot:solo@{package.version}", tmp_path / "cache")
        assert pinned_runtime(path) == runtime
        paths[runtime] = path
    assert len(set(paths.values())) == 2


class _Runtime:
    def __init__(self, tag: str) -> None:
        self._tag = tag

    def tag(self) -> str:
        return self._tag


def _bot_file(tmp: Path, name: str) -> Path:
    path = tmp / name
    path.write_text("print('hi')\n")
    return path


def test_uploads_are_told_apart_by_their_bytes_not_their_names(tmp_path: Path) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("bot.py")
        info.size = 4
        tar.addfile(info, io.BytesIO(b"x=1\n"))
    assert sniff_suffix(out.getvalue(), "bot.zip") == ".tar.gz"
    assert sniff_suffix(b"print(1)\n", "bot.py") == ".py"
    with pytest.raises(PackageFormatError):
        sniff_suffix(b"print(1)\n", "bot.tar.gz")
    with pytest.raises(PackageFormatError):
        sniff_suffix(b"\xff\xfe", "bot.py")
    assert read_upload(out.getvalue(), "whatever.bin").files == (("bot.py", b"x=1\n"),)
    # A single file keeps its own name (its entry); a path in the name is dropped.
    assert read_upload(b"x=1\n", "../../mine.py").entry == "mine.py"


def test_a_seat_view_holds_what_that_seat_saw_and_nothing_else() -> None:
    seats = [resolve_seat("house:greedy", "seizure-v1"), resolve_seat("house:random", "seizure-v1")]
    record = play_match("seizure-v1", seats, seed=7, match_id="view-1")
    for seat in (0, 1):
        view = seat_view(record, seat)
        assert "seed" not in view and "log" not in view
        assert all(
            set(s) <= {"index", "observation", "legal", "chose", "auto", "events"}
            for s in view["steps"]
        )
        own = [e for e in record.log if e.seat == seat]
        decisions = [s for s in view["steps"] if "observation" in s]
        assert len(decisions) == len(own)
        assert all(s["chose"] in s["legal"] for s in decisions)
        # Every observation is the seat's own (what the referee sent it).
        assert all(s["observation"].get("seat", seat) == seat for s in decisions)
        assert view["ranks"] == record.ranks and view["scores"] == record.scores
    with pytest.raises(RecordError):
        seat_view(record, 2)


def test_a_board_is_made_again_only_when_the_results_change(registry: Registry) -> None:
    from saloon.arena.boards import BoardCache

    cache = BoardCache(registry)
    made: list[int] = []

    def make() -> int:
        made.append(1)
        return len(made)

    assert cache.get("k", make) == 1
    assert cache.get("k", make) == 1 and len(made) == 1
    assert cache.get("other", make) == 2
    seats = [resolve_seat("house:greedy", "seizure-v1"), resolve_seat("house:random", "seizure-v1")]
    record = play_match("seizure-v1", seats, seed=3, match_id="stamp-1")
    assert registry.store.record_results(
        [registry.store.prepare_result("stamp-1", record.to_json(), {})]
    )[0]
    assert cache.get("k", make) == 3  # a new result: made again
    assert cache.get("k", make) == 3 and len(made) == 3


def test_a_board_stamped_by_its_checkpoint_is_made_again_only_when_the_board_moves(
    registry: Registry,
) -> None:
    from saloon.arena.boards import BoardCache
    from saloon.ratings.boards import board_stamp, game_scope
    from saloon.worker.store.rows import ScheduledMatch, SeasonStatus

    store, game = registry.store, "seizure-v1"
    pair = ["house:greedy", "house:random"]
    store.create_season(
        "st", {"game": game}, [ScheduledMatch(f"st-{i}", i, {"seats": pair}) for i in range(2)]
    )
    store.set_season_status("st", SeasonStatus.RUNNING)
    cache = BoardCache(registry)
    made: list[int] = []

    def make() -> int:
        made.append(1)
        return len(made)

    def stamp() -> int:
        return board_stamp(store, game_scope(game))

    def record(match_id: str, seed: int) -> None:
        seats = [resolve_seat(bot, game) for bot in pair]
        store.record_results(
            [
                store.prepare_result(
                    match_id, play_match(game, seats, seed, match_id=match_id).to_json(), {}
                )
            ]
        )[0]

    assert cache.get("b", make, stamp) == 1 and cache.get("b", make, stamp) == 1
    record("st-1", 1)  # st-0 not played yet: the board does not move, nor its stamp
    assert cache.get("b", make, stamp) == 1
    record("st-0", 2)  # both join the board
    assert cache.get("b", make, stamp) == 2 and cache.get("b", make, stamp) == 2
