"""Loading bots from files and folders, as the runtime does."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from saloon.referee.bots import resolve_seat
from saloon.referee.errors import BotSpecError
from saloon.referee.process.seat import ProcessSeat
from saloon.referee.remote import GrpcSeat
from saloon.sdk.bot import FunctionBot
from saloon.sdk.errors import BotLoadError
from saloon.sdk.loader import load_bot

BOTS = Path(__file__).resolve().parents[1] / "integration" / "bots"


def write(tmp_path: Path, text: str, name: str = "b.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_loads_a_bot_class_a_function_and_a_folder() -> None:
    assert type(load_bot(str(BOTS / "illegal.py"))("g")).__name__ == "Illegal"
    assert isinstance(load_bot(str(BOTS / "function_bot.py"))("g"), FunctionBot)
    assert type(load_bot(str(BOTS / "folder_bot"))("g")).__name__ == "FolderBot"


def test_each_match_gets_a_fresh_bot() -> None:
    factory = load_bot(str(BOTS / "exits.py"))
    assert factory("g") is not factory("g")


def test_bot_constant_picks_among_several(tmp_path: Path) -> None:
    text = (
        "from saloon.sdk import Bot\nclass A(Bot): pass\n"
        "class B(Bot):\n    def act(self, d): return d.legal[0]\nBOT = B\n"
    )
    assert type(load_bot(write(tmp_path, text))("g")).__name__ == "B"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = 1\n", "defines no bot"),
        ("from saloon.sdk import Bot\nclass A(Bot): pass\nclass B(Bot): pass\n", "several"),
        ("raise ImportError('nope')\n", r"b\.py:1: ImportError: nope"),
        ("BOT = 3\n", "Bot subclass"),
    ],
)
def test_bad_bot_files(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(BotLoadError, match=message):
        load_bot(write(tmp_path, text))


def test_house_spec_and_paths_that_are_not_bots(tmp_path: Path) -> None:
    assert load_bot("house:random")("seas-of-strife-v1") is not None
    with pytest.raises(BotLoadError, match="no bot file"):
        load_bot(str(tmp_path / "missing.py"))
    with pytest.raises(BotLoadError, match=r"no bot\.py"):
        load_bot(str(tmp_path))


def test_resolve_seat_kinds(tmp_path: Path) -> None:
    game = "seas-of-strife-v1"
    assert isinstance(resolve_seat(str(BOTS / "illegal.py"), game), ProcessSeat)
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listening.bind(str(tmp_path / "bot.sock"))
        listening.listen(1)
        assert isinstance(resolve_seat(f"grpc:unix:{tmp_path}/bot.sock", game), GrpcSeat)
    finally:
        listening.close()
    for spec in ("nonsense", str(tmp_path), "grpc:", "house:nobody", "grpc:unix:/nope.sock"):
        with pytest.raises(BotSpecError):
            resolve_seat(spec, game)


def test_bot_version_is_a_content_hash(tmp_path: Path) -> None:
    from saloon.sdk.loader import bot_version

    one = tmp_path / "one"
    two = tmp_path / "two"
    for folder in (one, two):
        (folder / "lib").mkdir(parents=True)
        (folder / "bot.py").write_text("BOT = None\n")
        (folder / "lib" / "x.py").write_text("X = 1\n")
    (one / "__pycache__").mkdir()
    (one / "__pycache__" / "junk.pyc").write_bytes(b"\x00")
    assert bot_version(one) == bot_version(two)
    assert bot_version(one).startswith("sha256:") and len(bot_version(one)) == 7 + 16
    (two / "lib" / "x.py").write_text("X = 2\n")
    assert bot_version(one) != bot_version(two)
    assert bot_version(one / "bot.py") == bot_version(two / "bot.py")


def test_a_bot_class_without_act_is_refused_when_loaded(tmp_path: Path) -> None:
    path = tmp_path / "noact.py"
    path.write_text("from saloon.sdk import Bot\n\nclass Lazy(Bot):\n    pass\n")
    with pytest.raises(BotLoadError, match="Lazy does not define act"):
        load_bot(str(path))


def test_in_process_seat_keeps_the_traceback_with_file_and_line() -> None:
    from saloon.referee.faults import FaultKind
    from saloon.referee.match import play_match
    from saloon.referee.seats import InProcessSeat
    from saloon.sdk.house import make_house_bot

    bots = Path(__file__).resolve().parents[1] / "integration" / "bots"
    bot = load_bot(str(bots / "raises.py"))("seizure-v1")
    seat = InProcessSeat(bot, "raises")
    record = play_match(
        "seizure-v1", [seat, InProcessSeat(make_house_bot("seizure-v1", "greedy"), "g")], seed=3
    )
    (fault,) = record.faults
    assert fault.kind is FaultKind.CRASH
    assert "raises.py:15 in act" in fault.detail, fault.detail
    assert "Traceback" in seat.diagnostics() and 'raise ValueError("the bot' in seat.diagnostics()
