"""C++ bots in the Docker sandbox: built once by the C++ runtime's build step (kits/cpp), they
play every game with no fault, an exception escaping act is a crash naming the author's
file:line, a compile error is refused with the author's file:line and nothing stored, and
each game's starter kit passes check-bot."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from saloon.referee.match import play_match
from saloon.referee.replay import verify
from saloon.referee.seats import InProcessSeat, Seat
from saloon.sdk.house import make_house_bot
from saloon.sdk.languages import Language
from saloon.worker.errors import BuildFailed
from saloon.worker.sandbox.docker import DockerSandbox
from saloon.worker.sandbox.images import bot_tag
from saloon.worker.sandbox.packages import load_package

from .docker_fixtures import build_leftovers, runtime_image_or_skip, sandbox_fixture

pytestmark = pytest.mark.kit_images  # runs last, after the runtime images' build

BOTS = Path(__file__).parent / "bots"
GAMES = {"seas-of-strife-v1": 3, "seizure-v1": 3, "western-showdown-v1": 2}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_cpp_bot_plays_every_game_in_docker_with_no_fault(
    sandbox: DockerSandbox, game: str
) -> None:
    runtime_image_or_skip(sandbox, Language.CPP)
    seat = sandbox.seat(str(BOTS / "cpp_last"), "cpp_last")
    others: list[Seat] = [
        InProcessSeat(make_house_bot(game, "greedy"), "house:greedy")
        for _ in range(GAMES[game] - 1)
    ]
    record = play_match(game, [seat, *others], seed=3)
    assert record.faults == []
    assert record.outcome.value == "completed"
    verify(record)
    # What the bot printed (std::cout: stdout) came back on stderr, marked by decision.
    text = seat.diagnostics()
    assert "deciding" in text
    assert "decision " in text
    # The sources stay beside the program the build made.
    files = sandbox.client.containers.run(
        sandbox.image(load_package(BOTS / "cpp_last")),
        ["sh", "-c", "ls /bot /bot/build"],
        remove=True,
        network_mode="none",
    ).decode()
    assert "bot.cpp" in files.split() and "bot" in files.split()
    assert build_leftovers(sandbox) == []


def test_an_exception_escaping_act_is_a_crash_naming_the_authors_file_and_line(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    runtime_image_or_skip(sandbox, Language.CPP)
    bot = tmp_path / "cppthrows"
    bot.mkdir()
    (bot / "bot.cpp").write_text(
        "#include <vector>\n"
        "#include <saloon/saloon.hpp>\n\n"
        "int saloon::act(const saloon::Decision& d) {\n"
        "  std::vector<int> picks;\n"
        "  return picks.at(d.legal.size());\n"
        "}\n"
    )
    game = "western-showdown-v1"
    seat = sandbox.seat(str(bot), "cppthrows")
    record = play_match(
        game, [seat, InProcessSeat(make_house_bot(game, "random"), "house:random")], seed=1
    )
    crash = [f for f in record.faults if f.seat == 0]
    assert crash and crash[0].kind.value == "CRASH"
    assert "act threw std::out_of_range: vector::_M_range_check" in crash[0].detail
    assert crash[0].detail.endswith("at bot.cpp:6"), crash[0].detail


def test_a_cpp_compile_error_is_refused_with_the_authors_file_and_line(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    runtime_image_or_skip(sandbox, Language.CPP)
    bad = tmp_path / "cppbad"
    bad.mkdir()
    (bad / "bot.cpp").write_text(
        "#include <saloon/saloon.hpp>\n\n"
        "int saloon::act(const saloon::Decision& d) {\n"
        '  int n = "three";\n'
        "  return n;\n"
        "}\n"
    )
    started = time.monotonic()
    with pytest.raises(BuildFailed) as caught:
        sandbox.seat(str(bad), "cppbad")
    text = str(caught.value)
    assert "bot.cpp:4:11: error: invalid conversion from 'const char*' to 'int'" in text, text
    assert "/bot/" not in text
    assert time.monotonic() - started < 120
    # Nothing stored: no image of the version, no build container or sources image.
    tags = {t for image in sandbox.client.images.list() for t in image.tags}
    assert bot_tag(load_package(bad)) not in tags
    assert build_leftovers(sandbox) == []


@pytest.mark.parametrize("game", sorted(GAMES))
def test_each_games_cpp_starter_kit_passes_check_bot_in_docker(
    sandbox: DockerSandbox, tmp_path: Path, game: str
) -> None:
    """saloon new GAME DIR --lang cpp, then saloon check-bot DIR: no slip."""
    runtime_image_or_skip(sandbox, Language.CPP)
    cli = [sys.executable, "-m", "saloon.arena.cli"]
    folder = tmp_path / f"cpp-{game}"
    subprocess.run([*cli, "new", game, str(folder), "--lang", "cpp"], check=True, timeout=60)
    run = subprocess.run(
        [*cli, "check-bot", str(folder), "--game", game, "--matches", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{game}: 2 matches, 2 completed" in run.stdout
    assert build_leftovers(sandbox) == []
