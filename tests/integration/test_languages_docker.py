"""Bots in other languages in the Docker sandbox: the Node.js runtime (JavaScript, and
TypeScript through its build step), compile errors refused with the author's file:line,
and hostile builds contained and refused with nothing left."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from saloon.referee.match import play_match
from saloon.referee.replay import verify
from saloon.referee.seats import InProcessSeat, Seat
from saloon.sdk.house import make_house_bot
from saloon.sdk.languages import SPECS, Language
from saloon.worker.errors import BuildFailed, UnsupportedLanguage
from saloon.worker.sandbox.build import BuildLimits, build_version
from saloon.worker.sandbox.docker import DockerSandbox
from saloon.worker.sandbox.images import bot_tag
from saloon.worker.sandbox.packages import load_package
from saloon.worker.sandbox.runtimes import NODE_TS, RUNTIMES, BuildStep, Runtime

from .docker_fixtures import build_leftovers, runtime_image_or_skip, sandbox_fixture

pytestmark = pytest.mark.kit_images  # runs last, after the runtime images' build

BOTS = Path(__file__).parent / "bots"
GAMES = {"seas-of-strife-v1": 3, "seizure-v1": 3, "western-showdown-v1": 2}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture()


def play(sandbox: DockerSandbox, bot: Path, game: str, seed: int) -> tuple[object, Seat]:
    seat = sandbox.seat(str(bot), bot.name)
    others: list[Seat] = [
        InProcessSeat(make_house_bot(game, "greedy"), "house:greedy")
        for _ in range(GAMES[game] - 1)
    ]
    return play_match(game, [seat, *others], seed=seed), seat


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_javascript_bot_plays_every_game_in_docker_with_no_fault(
    sandbox: DockerSandbox, game: str
) -> None:
    runtime_image_or_skip(sandbox, Language.JAVASCRIPT)
    record, seat = play(sandbox, BOTS / "js_last", game, seed=3)
    assert record.faults == []  # type: ignore[attr-defined]
    assert record.outcome.value == "completed"  # type: ignore[attr-defined]
    verify(record)  # type: ignore[arg-type]
    # What the bot printed came back, marked by decision as a Python bot's is.
    assert "deciding" in seat.diagnostics()


def test_a_typescript_bot_is_built_once_and_plays(sandbox: DockerSandbox) -> None:
    runtime_image_or_skip(sandbox, Language.JAVASCRIPT)
    record, _ = play(sandbox, BOTS / "ts_last", "western-showdown-v1", seed=4)
    assert record.faults == []  # type: ignore[attr-defined]
    package = load_package(BOTS / "ts_last")
    tag = sandbox.image(package)
    files = sandbox.client.containers.run(
        tag, ["sh", "-c", "ls /bot /bot/build"], remove=True, network_mode="none"
    ).decode()
    # The sources stay beside what the build made.
    assert "bot.ts" in files and "bot.js" in files
    assert build_leftovers(sandbox) == []


def test_a_typescript_compile_error_is_refused_with_the_authors_file_and_line(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    runtime_image_or_skip(sandbox, Language.JAVASCRIPT)
    bad = tmp_path / "tsbad"
    bad.mkdir()
    (bad / "bot.ts").write_text(
        "export function act(d: { legal: unknown[] }): unknown {\n"
        '  const n: number = "three";\n'
        "  return d.legal[n];\n"
        "}\n"
    )
    with pytest.raises(BuildFailed) as caught:
        sandbox.seat(str(bad), "tsbad")
    text = str(caught.value)
    assert "bot.ts(2,9): error TS2322" in text
    assert "/bot/" not in text
    # Nothing stored: no image of the version, no build container or sources image.
    tags = {t for image in sandbox.client.images.list() for t in image.tags}
    assert bot_tag(load_package(bad)) not in tags
    assert build_leftovers(sandbox) == []


def test_a_language_without_a_runtime_is_refused_before_anything_is_built(
    sandbox: DockerSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every language Saloon knows has a runtime now: an arena without Java's (an operator's
    # own table) stands in for a language with none.
    monkeypatch.delitem(RUNTIMES, Language.JAVA)
    spec = SPECS[Language.JAVA]
    folder = tmp_path / "nobot"
    folder.mkdir()
    (folder / spec.entry).write_text("\n")
    with pytest.raises(UnsupportedLanguage, match=f"no runtime for {re.escape(spec.label)} bots"):
        sandbox.seat(str(folder), "nobot")


HOSTILE_BUILDS = {
    # Each stops at a bound of the build's lock-down and aims only at its own container.
    "forks without end": (
        "n=0; while [ $n -lt 100000 ]; do sleep 30 & n=$((n+1)); done",
        "ran past its",
    ),
    "never ends": ("while :; do :; done", "ran past its"),
    "writes without end": ("yes 'a line of compiler output' >&2", "more than"),
    "fills its output": (
        "dd if=/dev/zero of=/out/big bs=1M count=100000 2>/dev/null; exit 1",
        "failed",
    ),
    # {port}: a listener of the test's own on the host's 127.0.0.1.
    "tries the network": ("echo hello >/dev/tcp/127.0.0.1/{port}", "failed"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_BUILDS))
def test_a_hostile_build_is_contained_and_refused_with_nothing_left(
    sandbox: DockerSandbox, case: str
) -> None:
    tag = runtime_image_or_skip(sandbox, Language.JAVASCRIPT)
    script, said = HOSTILE_BUILDS[case]
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.5)
    script = script.replace("{port}", str(listener.getsockname()[1]))
    hostile = Runtime(
        NODE_TS.languages,
        NODE_TS.kit,
        NODE_TS.repository,
        NODE_TS.serve,
        BuildStep(lambda _package, _out: ["bash", "-c", script]),
    )
    package = load_package(BOTS / "ts_last")
    limits = BuildLimits(wall_s=6.0, pids=64, out_mb=8, tmp_mb=8, memory_mb=256)
    with pytest.raises(BuildFailed) as caught:
        build_version(sandbox.client, package, hostile, tag, limits, sandbox.owner)
    assert said in str(caught.value)
    assert build_leftovers(sandbox) == []
    with pytest.raises(TimeoutError):  # nothing of the build reached the host
        listener.accept()
    listener.close()


def test_the_node_image_has_no_compiler_fetch_at_run_time(sandbox: DockerSandbox) -> None:
    """The runtime's npm packages are in the image: nothing is fetched when a bot runs."""
    tag = runtime_image_or_skip(sandbox, Language.JAVASCRIPT)
    out = sandbox.client.containers.run(
        tag,
        ["node", "-e", "require('@grpc/grpc-js'); require('typescript'); console.log('ok')"],
        remove=True,
        network_mode="none",
        environment={"NODE_PATH": "/opt/saloon/js/node_modules"},
    )
    assert out.strip() == b"ok"


@pytest.mark.parametrize("lang", ["js", "ts"])
def test_each_games_starter_kit_passes_check_bot_in_docker(
    sandbox: DockerSandbox, tmp_path: Path, lang: str
) -> None:
    """saloon new GAME DIR --lang LANG, then saloon check-bot DIR: no slip, every game."""
    import subprocess
    import sys

    runtime_image_or_skip(sandbox, Language.JAVASCRIPT)
    cli = [sys.executable, "-m", "saloon.arena.cli"]
    for game in sorted(GAMES):
        folder = tmp_path / f"{lang}-{game}"
        subprocess.run([*cli, "new", game, str(folder), "--lang", lang], check=True, timeout=60)
        run = subprocess.run(
            [*cli, "check-bot", str(folder), "--game", game, "--matches", "2"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        assert f"{game}: 2 matches, 2 completed" in run.stdout
    assert build_leftovers(sandbox) == []
