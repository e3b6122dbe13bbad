"""Bots in other languages in the Docker sandbox: the Node.js runtime (JavaScript, and
TypeScript through its build step), compile errors refused with the author's file:line, a
language without a runtime refused. Hostile builds, TypeScript's among every compiled
language's, are tested in test_compiled_docker.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from saloon.referee.match import play_match
from saloon.referee.replay import verify
from saloon.referee.seats import InProcessSeat, Seat
from saloon.sdk.house import make_house_bot
from saloon.sdk.languages import SPECS, Language
from saloon.worker.errors import BuildFailed, UnsupportedLanguage
from saloon.worker.sandbox.docker import DockerSandbox
from saloon.worker.sandbox.packages import load_package
from saloon.worker.sandbox.runtimes import RUNTIMES

from .docker_fixtures import (
    build_leftovers,
    printed_eventually,
    runtime_image_or_skip,
    sandbox_fixture,
    version_images,
)

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
    assert "deciding" in printed_eventually(seat, "deciding")


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
    assert version_images(sandbox.client, load_package(bad).version) == []
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


def test_the_node_image_has_no_compiler_fetch_at_run_time(sandbox: DockerSandbox) -> None:
    """The runtime's npm package (the TypeScript compiler) is in the image: nothing is
    fetched when a bot builds or runs."""
    tag = runtime_image_or_skip(sandbox, Language.JAVASCRIPT)
    out = sandbox.client.containers.run(
        tag,
        ["node", "-e", "require('typescript'); console.log('ok')"],
        remove=True,
        network_mode="none",
        environment={"NODE_PATH": "/opt/saloon/js/node_modules"},
    )
    assert out.strip() == b"ok"


def test_every_node_in_the_node_image_starts_from_the_runtimes_snapshot(
    sandbox: DockerSandbox,
) -> None:
    """The image's node starts from the snapshot with the runtime loaded (kits/js/snapshot.js,
    NODE_OPTIONS), and the runtime it holds is the image's own (run.js takes it from
    there); node's other work (the TypeScript compiler) runs as usual from it."""
    tag = runtime_image_or_skip(sandbox, Language.JAVASCRIPT)
    probe = (
        "const s = globalThis[Symbol.for('saloon.runtime')];"
        "console.log(s ? s.home : 'none', typeof s.attach(require).main)"
    )
    out = sandbox.client.containers.run(
        tag, ["node", "-e", probe], remove=True, network_mode="none", read_only=True
    )
    assert out.split() == [b"/opt/saloon/js", b"function"]
    tsc = sandbox.client.containers.run(
        tag,
        ["node", "/opt/saloon/js/node_modules/typescript/bin/tsc", "--version"],
        remove=True,
        network_mode="none",
    )
    assert tsc.startswith(b"Version 5.")
