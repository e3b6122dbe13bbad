"""Go bots in the Docker sandbox: built once by the Go runtime's build step (kits/go), they
play every game with no fault, a compile error is refused with the author's file:line and
nothing stored, and the hostile cases (network, host files, fork bombs) are contained."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from saloon.referee.limits import MatchLimits, SandboxLimits
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

HERE = Path(__file__).parent
BOTS = HERE / "bots"
HOSTILE = HERE / "hostile"
GAMES = {"seas-of-strife-v1": 3, "seizure-v1": 3, "western-showdown-v1": 2}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_go_bot_plays_every_game_in_docker_with_no_fault(
    sandbox: DockerSandbox, game: str
) -> None:
    runtime_image_or_skip(sandbox, Language.GO)
    seat = sandbox.seat(str(BOTS / "go_last"), "go_last")
    others: list[Seat] = [
        InProcessSeat(make_house_bot(game, "greedy"), "house:greedy")
        for _ in range(GAMES[game] - 1)
    ]
    record = play_match(game, [seat, *others], seed=3)
    assert record.faults == []
    assert record.outcome.value == "completed"
    verify(record)
    # What the bot printed (fmt.Println: stdout) came back on stderr, marked by decision.
    text = seat.diagnostics()
    assert "deciding" in text
    assert "decision " in text
    # The sources stay beside the program the build made.
    files = sandbox.client.containers.run(
        sandbox.image(load_package(BOTS / "go_last")),
        ["sh", "-c", "ls /bot /bot/build"],
        remove=True,
        network_mode="none",
    ).decode()
    assert "bot.go" in files.split() and "bot" in files.split()
    assert build_leftovers(sandbox) == []


def test_a_panic_in_act_is_a_crash_naming_the_authors_file_and_line(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    runtime_image_or_skip(sandbox, Language.GO)
    bot = tmp_path / "gopanic"
    bot.mkdir()
    (bot / "bot.go").write_text(
        'package main\n\nimport "saloon"\n\n'
        "func Act(d saloon.Decision) int {\n"
        "\tvar picks []int\n"
        "\treturn picks[len(d.Legal)]\n"
        "}\n"
    )
    game = "western-showdown-v1"
    seat = sandbox.seat(str(bot), "gopanic")
    record = play_match(
        game, [seat, InProcessSeat(make_house_bot(game, "random"), "house:random")], seed=1
    )
    crash = [f for f in record.faults if f.seat == 0]
    assert crash and crash[0].kind.value == "CRASH"
    assert "Act panicked: runtime error: index out of range" in crash[0].detail
    assert crash[0].detail.endswith("at bot.go:7")


def test_a_go_compile_error_is_refused_with_the_authors_file_and_line(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    runtime_image_or_skip(sandbox, Language.GO)
    bad = tmp_path / "gobad"
    bad.mkdir()
    (bad / "bot.go").write_text(
        'package main\n\nimport "saloon"\n\n'
        "func Act(d saloon.Decision) int {\n"
        '\tvar n int = "three"\n'
        "\treturn n\n"
        "}\n"
    )
    started = time.monotonic()
    with pytest.raises(BuildFailed) as caught:
        sandbox.seat(str(bad), "gobad")
    text = str(caught.value)
    assert 'bot.go:6:14: cannot use "three"' in text, text
    assert "/bot/" not in text and "./bot.go" not in text
    assert time.monotonic() - started < 120
    # Nothing stored: no image of the version, no build container or sources image.
    tags = {t for image in sandbox.client.images.list() for t in image.tags}
    assert bot_tag(load_package(bad)) not in tags
    assert build_leftovers(sandbox) == []


def test_a_bot_that_writes_its_own_main_is_told_so(sandbox: DockerSandbox, tmp_path: Path) -> None:
    runtime_image_or_skip(sandbox, Language.GO)
    bad = tmp_path / "gomain"
    bad.mkdir()
    (bad / "bot.go").write_text("package main\n\nfunc main() {}\n")
    with pytest.raises(BuildFailed) as caught:
        sandbox.seat(str(bad), "gomain")
    assert "undefined: Act" in str(caught.value)


# -- hostile Go bots -------------------------------------------------------------------------
LIMITS = MatchLimits(decision_ms=1000, bank_ms=1000, strike_limit=3, start_ms=60_000)
SANDBOX_LIMITS = SandboxLimits(memory_mb=256, cpus=0.5, pids=64, tmpfs_mb=16, open_files=256)
HOSTILE_GO = ["go_tcp_connect", "go_host_file", "go_fork_bomb"]


def test_hostile_go_bots_are_contained_and_play_on(sandbox: DockerSandbox, tmp_path: Path) -> None:
    """Network, host files, fork bomb: each Go bot attacks once, reports CONTAINED and plays
    the match out with no fault; the host's listener and file are untouched."""
    runtime_image_or_skip(sandbox, Language.GO)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    secret = tmp_path / "secret.txt"
    secret.write_text("the host's secret\n")
    target = json.dumps({"port": listener.getsockname()[1], "path": str(secret)})
    seats: list[Seat] = []
    tags = []
    try:
        for name in HOSTILE_GO:
            dest = tmp_path / name
            shutil.copytree(HOSTILE / name, dest)
            (dest / "target.json").write_text(target)
            tags.append(sandbox.image(load_package(dest)))
            seats.append(sandbox.seat(str(dest), name, limits=SANDBOX_LIMITS))
        seats.append(sandbox.seat(str(HOSTILE / "honest"), "honest", limits=SANDBOX_LIMITS))
        record = play_match(
            "seas-of-strife-v1", seats, seed=5, limits=LIMITS, match_id="hostile-go"
        )
        assert record.faults == []
        for name, seat in zip(HOSTILE_GO, seats, strict=False):
            text = seat.diagnostics()
            assert "CONTAINED" in text and "ESCAPED" not in text, (name, text)
        bomb = seats[2].diagnostics()
        forked = int(bomb.split("fork failed after ")[1].split(" children")[0])
        assert forked < SANDBOX_LIMITS.pids
        with pytest.raises(BlockingIOError):
            listener.accept()
        assert secret.read_text() == "the host's secret\n"
    finally:
        listener.close()
        for tag in tags:  # new every run: each carries the test's own target
            sandbox.client.images.remove(tag, force=True)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_each_games_go_starter_kit_passes_check_bot_in_docker(
    sandbox: DockerSandbox, tmp_path: Path, game: str
) -> None:
    """saloon new GAME DIR --lang go, then saloon check-bot DIR: no slip."""
    runtime_image_or_skip(sandbox, Language.GO)
    cli = [sys.executable, "-m", "saloon.arena.cli"]
    folder = tmp_path / f"go-{game}"
    subprocess.run([*cli, "new", game, str(folder), "--lang", "go"], check=True, timeout=60)
    run = subprocess.run(
        [*cli, "check-bot", str(folder), "--game", game, "--matches", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{game}: 2 matches, 2 completed" in run.stdout
    assert build_leftovers(sandbox) == []


def test_a_warm_go_runtime_keeps_its_stream_match_after_match(sandbox: DockerSandbox) -> None:
    """The Go runtime says Ready.keeps_stream: three clean matches on one warm container
    share one Bot.Play stream, each a fresh match for the bot (its Match.ID changes)."""
    from saloon.worker.sandbox.docker import DockerSeat

    runtime_image_or_skip(sandbox, Language.GO)
    game = "western-showdown-v1"
    runtimes = []
    for seed in range(3):
        seat = sandbox.seat(str(BOTS / "go_last"), "go_last")
        house = InProcessSeat(make_house_bot(game, "random"), "house:random")
        record = play_match(game, [seat, house], seed=seed, match_id=f"kept-{seed}")
        assert record.faults == []
        assert isinstance(seat, DockerSeat)
        runtimes.append(seat.runtime)
        # Each match's first decisions are printed again: a new Match.ID resets the bot.
        assert "deciding" in seat.diagnostics()
    assert len({id(r) for r in runtimes}) == 1
    connection = runtimes[0].connection
    assert connection is not None and connection.streams == 1


@pytest.mark.parametrize("case", ["forks without end", "never ends", "tries the network"])
def test_a_hostile_go_build_is_contained_and_refused_with_nothing_left(
    sandbox: DockerSandbox, case: str
) -> None:
    """The planted hostile builds of test_languages_docker, run in the Go image by the Go
    runtime's build step machinery: refused, nothing left, nothing reached the host."""
    from saloon.worker.sandbox.build import BuildLimits, build_version
    from saloon.worker.sandbox.runtimes import GO, BuildStep, Runtime
    from tests.integration.test_languages_docker import HOSTILE_BUILDS

    tag = runtime_image_or_skip(sandbox, Language.GO)
    script, said = HOSTILE_BUILDS[case]
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.5)
    script = script.replace("{port}", str(listener.getsockname()[1]))
    hostile = Runtime(
        GO.languages,
        GO.kit,
        GO.repository,
        GO.serve,
        BuildStep(lambda _package, _out: ["bash", "-c", script]),
    )
    limits = BuildLimits(wall_s=6.0, pids=64, out_mb=8, tmp_mb=8, memory_mb=256)
    with pytest.raises(BuildFailed) as caught:
        build_version(
            sandbox.client, load_package(BOTS / "go_last"), hostile, tag, limits, sandbox.owner
        )
    assert said in str(caught.value)
    assert build_leftovers(sandbox) == []
    with pytest.raises(TimeoutError):  # nothing of the build reached the host
        listener.accept()
    listener.close()
