"""Java bots in the Docker sandbox: built once by the Java runtime's build step (kits/java:
javac against the runtime's jar, then a jar), they play every game with no fault, an
exception in act is a CRASH naming the author's File.java:line, a compile error is refused
with javac's message naming the author's file:line and nothing stored, a warm runtime keeps
its stream, and each game's starter kit passes check-bot."""

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
def test_a_java_bot_plays_every_game_in_docker_with_no_fault(
    sandbox: DockerSandbox, game: str
) -> None:
    runtime_image_or_skip(sandbox, Language.JAVA)
    seat = sandbox.seat(str(BOTS / "java_last"), "java_last")
    others: list[Seat] = [
        InProcessSeat(make_house_bot(game, "greedy"), "house:greedy")
        for _ in range(GAMES[game] - 1)
    ]
    record = play_match(game, [seat, *others], seed=3)
    assert record.faults == []
    assert record.outcome.value == "completed"
    verify(record)
    # What the bot printed (System.out) came back on stderr, marked by decision.
    text = seat.diagnostics()
    assert "deciding" in text
    assert "decision " in text
    # The sources stay beside the jar the build made.
    files = sandbox.client.containers.run(
        sandbox.image(load_package(BOTS / "java_last")),
        ["sh", "-c", "ls /bot /bot/build"],
        remove=True,
        network_mode="none",
    ).decode()
    assert "Bot.java" in files.split() and "bot.jar" in files.split()
    assert build_leftovers(sandbox) == []


def test_an_exception_in_act_is_a_crash_naming_the_authors_file_and_line(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    runtime_image_or_skip(sandbox, Language.JAVA)
    bot = tmp_path / "javathrows"
    bot.mkdir()
    (bot / "Bot.java").write_text(
        "public final class Bot implements saloon.Bot {\n"
        "    public int act(saloon.Decision d) {\n"
        "        int[] picks = new int[0];\n"
        "        return picks[d.count()];\n"
        "    }\n"
        "}\n"
    )
    game = "western-showdown-v1"
    seat = sandbox.seat(str(bot), "javathrows")
    record = play_match(
        game, [seat, InProcessSeat(make_house_bot(game, "random"), "house:random")], seed=1
    )
    crash = [f for f in record.faults if f.seat == 0]
    assert crash and crash[0].kind.value == "CRASH"
    assert "act threw java.lang.ArrayIndexOutOfBoundsException" in crash[0].detail
    assert crash[0].detail.endswith("at Bot.java:4")


def test_a_java_compile_error_is_refused_with_the_authors_file_and_line(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    runtime_image_or_skip(sandbox, Language.JAVA)
    bad = tmp_path / "javabad"
    (bad / "src").mkdir(parents=True)
    (bad / "saloon.toml").write_text('language = "java"\nentry = "src/Bot.java"\n')
    (bad / "src" / "Bot.java").write_text(
        "public final class Bot implements saloon.Bot {\n"
        "    public int act(saloon.Decision d) {\n"
        '        int n = "three";\n'
        "        return n;\n"
        "    }\n"
        "}\n"
    )
    started = time.monotonic()
    with pytest.raises(BuildFailed) as caught:
        sandbox.seat(str(bad), "javabad")
    text = str(caught.value)
    assert "src/Bot.java:3: error: incompatible types" in text, text
    assert "/bot/" not in text
    assert time.monotonic() - started < 120
    # Nothing stored: no image of the version, no build container or sources image.
    tags = {t for image in sandbox.client.images.list() for t in image.tags}
    assert bot_tag(load_package(bad)) not in tags
    assert build_leftovers(sandbox) == []


def test_a_class_that_is_not_a_bot_is_told_so(sandbox: DockerSandbox, tmp_path: Path) -> None:
    runtime_image_or_skip(sandbox, Language.JAVA)
    bad = tmp_path / "javanotabot"
    bad.mkdir()
    (bad / "Bot.java").write_text("public final class Bot {\n}\n")
    game = "western-showdown-v1"
    seat = sandbox.seat(str(bad), "javanotabot")
    record = play_match(
        game, [seat, InProcessSeat(make_house_bot(game, "random"), "house:random")], seed=1
    )
    fault = [f for f in record.faults if f.seat == 0]
    assert fault and "does not implement saloon.Bot" in fault[0].detail, fault


def test_a_warm_java_runtime_keeps_its_stream_match_after_match(sandbox: DockerSandbox) -> None:
    """The Java runtime says Ready.keeps_stream: three clean matches on one warm container
    share one Bot.Play stream, each a fresh match for the bot (its match id changes)."""
    from saloon.worker.sandbox.docker import DockerSeat

    runtime_image_or_skip(sandbox, Language.JAVA)
    game = "western-showdown-v1"
    runtimes = []
    for seed in range(3):
        seat = sandbox.seat(str(BOTS / "java_last"), "java_last")
        house = InProcessSeat(make_house_bot(game, "random"), "house:random")
        record = play_match(game, [seat, house], seed=seed, match_id=f"kept-{seed}")
        assert record.faults == []
        assert isinstance(seat, DockerSeat)
        runtimes.append(seat.runtime)
        assert "deciding" in seat.diagnostics()
    assert len({id(r) for r in runtimes}) == 1
    connection = runtimes[0].connection
    assert connection is not None and connection.streams == 1


@pytest.mark.parametrize("game", sorted(GAMES))
def test_each_games_java_starter_kit_passes_check_bot_in_docker(
    sandbox: DockerSandbox, tmp_path: Path, game: str
) -> None:
    """saloon new GAME DIR --lang java, then saloon check-bot DIR: no slip."""
    runtime_image_or_skip(sandbox, Language.JAVA)
    cli = [sys.executable, "-m", "saloon.arena.cli"]
    folder = tmp_path / f"java-{game}"
    subprocess.run([*cli, "new", game, str(folder), "--lang", "java"], check=True, timeout=60)
    run = subprocess.run(
        [*cli, "check-bot", str(folder), "--game", game, "--matches", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{game}: 2 matches, 2 completed" in run.stdout
    assert build_leftovers(sandbox) == []
