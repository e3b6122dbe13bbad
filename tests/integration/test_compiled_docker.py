"""Compiled languages' bots in the Docker sandbox, each behaviour one test parametrised by
language: Go, C++ and Java bots (built once by their runtime's build step: kits/go, kits/cpp,
kits/java) play every game with no fault beside their sources, an error in ``act`` is a
CRASH naming the author's file:line, a compile error is refused with the author's file:line
and nothing stored, a warm runtime keeps its stream (Go, Java); each game's starter kit
passes check-bot (JavaScript's and TypeScript's too); and hostile builds in each compiled
language's image (TypeScript's too) are contained and refused at submission with nothing
left.

Each language's own cases stay in test_go_docker.py and test_java_docker.py; JavaScript and
TypeScript's in test_languages_docker.py."""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from saloon.arena.registry import Registry
from saloon.arena.submit import submit
from saloon.referee.match import play_match
from saloon.referee.replay import verify
from saloon.referee.seats import InProcessSeat, Seat
from saloon.sdk.client import package_bytes
from saloon.sdk.house import make_house_bot
from saloon.sdk.languages import SPECS, Language
from saloon.worker.errors import BuildFailed, RegistryError
from saloon.worker.sandbox.build import BuildLimits
from saloon.worker.sandbox.docker import DockerSandbox, DockerSeat
from saloon.worker.sandbox.hostlock import LOCK_DIR_ENV
from saloon.worker.sandbox.packages import load_package
from saloon.worker.sandbox.runtimes import RUNTIMES, BuildStep, runtime_for
from saloon.worker.store.store import Store

from .docker_fixtures import (
    build_leftovers,
    owned_volumes,
    printed_eventually,
    runtime_image_or_skip,
    sandbox_fixture,
    version_images,
)

pytestmark = pytest.mark.kit_images  # runs last, after the runtime images' build

BOTS = Path(__file__).parent / "bots"
GAMES = {"seas-of-strife-v1": 3, "seizure-v1": 3, "western-showdown-v1": 2}


@dataclasses.dataclass(frozen=True)
class Kit:
    """One compiled language's cases."""

    language: Language
    #: Its bot of tests/integration/bots (plays the last legal action, prints its first
    #: decisions on stdout: fmt.Println, std::cout, System.out).
    bot: str
    #: What `ls /bot /bot/build` shows of its sources and of what its build made.
    source: str
    built: str
    #: A bot whose act fails (files: text), what its CRASH says and where it ends.
    crashing: dict[str, str]
    crash: str
    crash_at: str
    #: A bot with a compile error (files: text), the compiler's message naming the author's
    #: file:line, and what the message must not show (the build's own paths).
    bad: dict[str, str]
    error: str
    hidden: tuple[str, ...]


KITS = {
    "go": Kit(
        Language.GO,
        "go_last",
        "bot.go",
        "bot",
        {
            "bot.go": 'package main\n\nimport "saloon"\n\n'
            "func Act(d saloon.Decision) int {\n"
            "\tvar picks []int\n"
            "\treturn picks[len(d.Legal)]\n"
            "}\n"
        },
        "Act panicked: runtime error: index out of range",
        "at bot.go:7",
        {
            "bot.go": 'package main\n\nimport "saloon"\n\n'
            "func Act(d saloon.Decision) int {\n"
            '\tvar n int = "three"\n'
            "\treturn n\n"
            "}\n"
        },
        'bot.go:6:14: cannot use "three"',
        ("/bot/", "./bot.go"),
    ),
    "cpp": Kit(
        Language.CPP,
        "cpp_last",
        "bot.cpp",
        "bot",
        {
            "bot.cpp": "#include <vector>\n"
            "#include <saloon/saloon.hpp>\n\n"
            "int saloon::act(const saloon::Decision& d) {\n"
            "  std::vector<int> picks;\n"
            "  return picks.at(d.legal.size());\n"
            "}\n"
        },
        "act threw std::out_of_range: vector::_M_range_check",
        "at bot.cpp:6",
        {
            "bot.cpp": "#include <saloon/saloon.hpp>\n\n"
            "int saloon::act(const saloon::Decision& d) {\n"
            '  int n = "three";\n'
            "  return n;\n"
            "}\n"
        },
        "bot.cpp:4:11: error: invalid conversion from 'const char*' to 'int'",
        ("/bot/",),
    ),
    "java": Kit(
        Language.JAVA,
        "java_last",
        "Bot.java",
        "bot.jar",
        {
            "Bot.java": "public final class Bot implements saloon.Bot {\n"
            "    public int act(saloon.Decision d) {\n"
            "        int[] picks = new int[0];\n"
            "        return picks[d.count()];\n"
            "    }\n"
            "}\n"
        },
        "act threw java.lang.ArrayIndexOutOfBoundsException",
        "at Bot.java:4",
        {
            "saloon.toml": 'language = "java"\nentry = "src/Bot.java"\n',
            "src/Bot.java": "public final class Bot implements saloon.Bot {\n"
            "    public int act(saloon.Decision d) {\n"
            '        int n = "three";\n'
            "        return n;\n"
            "    }\n"
            "}\n",
        },
        "src/Bot.java:3: error: incompatible types",
        ("/bot/",),
    ),
}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture()


def write_bot(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize("game", sorted(GAMES))
@pytest.mark.parametrize("lang", sorted(KITS))
def test_a_compiled_bot_plays_every_game_in_docker_with_no_fault(
    sandbox: DockerSandbox, lang: str, game: str
) -> None:
    kit = KITS[lang]
    runtime_image_or_skip(sandbox, kit.language)
    seat = sandbox.seat(str(BOTS / kit.bot), kit.bot)
    others: list[Seat] = [
        InProcessSeat(make_house_bot(game, "greedy"), "house:greedy")
        for _ in range(GAMES[game] - 1)
    ]
    record = play_match(game, [seat, *others], seed=3)
    assert record.faults == []
    assert record.outcome.value == "completed"
    verify(record)
    # What the bot printed (on stdout) came back on stderr, marked by decision.
    text = printed_eventually(seat, "deciding", "decision ")
    assert "deciding" in text
    assert "decision " in text
    # The sources stay beside what the build made.
    files = sandbox.client.containers.run(
        sandbox.image(load_package(BOTS / kit.bot)),
        ["sh", "-c", "ls /bot /bot/build"],
        remove=True,
        network_mode="none",
    ).decode()
    assert kit.source in files.split() and kit.built in files.split()
    assert build_leftovers(sandbox) == []


@pytest.mark.parametrize("lang", sorted(KITS))
def test_an_error_in_act_is_a_crash_naming_the_authors_file_and_line(
    sandbox: DockerSandbox, tmp_path: Path, lang: str
) -> None:
    kit = KITS[lang]
    runtime_image_or_skip(sandbox, kit.language)
    bot = write_bot(tmp_path / f"{lang}crash", kit.crashing)
    game = "western-showdown-v1"
    seat = sandbox.seat(str(bot), bot.name)
    record = play_match(
        game, [seat, InProcessSeat(make_house_bot(game, "random"), "house:random")], seed=1
    )
    crash = [f for f in record.faults if f.seat == 0]
    assert crash and crash[0].kind.value == "CRASH"
    assert kit.crash in crash[0].detail
    assert crash[0].detail.endswith(kit.crash_at), crash[0].detail


@pytest.mark.parametrize("lang", sorted(KITS))
def test_a_compile_error_is_refused_with_the_authors_file_and_line(
    sandbox: DockerSandbox, tmp_path: Path, lang: str
) -> None:
    kit = KITS[lang]
    runtime_image_or_skip(sandbox, kit.language)
    bad = write_bot(tmp_path / f"{lang}bad", kit.bad)
    started = time.monotonic()
    with pytest.raises(BuildFailed) as caught:
        sandbox.seat(str(bad), bad.name)
    text = str(caught.value)
    assert kit.error in text, text
    for path in kit.hidden:
        assert path not in text
    assert time.monotonic() - started < 120
    # Nothing stored: no image of the version, no build container or sources image.
    assert version_images(sandbox.client, load_package(bad).version) == []
    assert build_leftovers(sandbox) == []


#: Every starter kit, by `saloon new --lang` (JavaScript's and TypeScript's too).
STARTERS = {
    "js": Language.JAVASCRIPT,
    "ts": Language.TYPESCRIPT,
    **{lang: kit.language for lang, kit in KITS.items()},
}


@pytest.mark.parametrize("game", sorted(GAMES))
@pytest.mark.parametrize("lang", sorted(STARTERS))
def test_each_games_starter_kit_passes_check_bot_in_docker(
    sandbox: DockerSandbox, tmp_path: Path, lang: str, game: str
) -> None:
    """saloon new GAME DIR --lang LANG, then saloon check-bot DIR: no slip."""
    runtime_image_or_skip(sandbox, STARTERS[lang])
    cli = [sys.executable, "-m", "saloon.arena.cli"]
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


@pytest.mark.parametrize("lang", ["go", "java"])
def test_a_warm_runtime_keeps_its_stream_match_after_match(
    sandbox: DockerSandbox, lang: str
) -> None:
    """The Go and Java runtimes say Ready.keeps_stream: three clean matches on one warm
    container share one Bot.Play stream, each a fresh match for the bot (its match id
    changes)."""
    kit = KITS[lang]
    runtime_image_or_skip(sandbox, kit.language)
    game = "western-showdown-v1"
    runtimes = []
    for seed in range(3):
        seat = sandbox.seat(str(BOTS / kit.bot), kit.bot)
        house = InProcessSeat(make_house_bot(game, "random"), "house:random")
        record = play_match(game, [seat, house], seed=seed, match_id=f"kept-{seed}")
        assert record.faults == []
        assert isinstance(seat, DockerSeat)
        runtimes.append(seat.runtime)
        # Each match's first decisions are printed again: a new match id resets the bot.
        assert "deciding" in printed_eventually(seat, "deciding")
    assert len({id(r) for r in runtimes}) == 1
    connection = runtimes[0].connection
    assert connection is not None and connection.streams == 1


# -- hostile builds ---------------------------------------------------------------------------
#: Each is a build command planted in a compiled language's runtime: it runs in that
#: language's image under the build's lock-down (BUILD_LIMITS), stops itself at a bound of
#: its own past that lock-down (120 s, 100 MB, 100000 forks), and aims only at its own
#: container or, {port}, at a listener of the test's own on the host's 127.0.0.1. Each
#: with what its refusal says.
HOSTILE_BUILDS = {
    "forks without end": (
        "n=0; while [ $n -lt 100000 ] && [ $SECONDS -lt 120 ]; do sleep 30 & n=$((n+1)); done",
        ("build refused: the build ran past its 6 s limit", "fork: retry: Resource"),
    ),
    "never ends": (
        "while [ $SECONDS -lt 120 ]; do :; done",
        ("build refused: the build ran past its 6 s limit",),
    ),
    "writes without end": (
        "yes 'a line of compiler output' | head -c 100000000 >&2",
        ("build refused: the build wrote more than 262144 bytes of messages",),
    ),
    "fills its output": (
        "dd if=/dev/zero of=/out/big bs=1M count=100000 status=none; exit 1",
        ("build failed (exit 1)", "No space left on device"),
    ),
    "tries the network": (
        "echo hello >/dev/tcp/127.0.0.1/{port}",
        ("build failed (exit 1)", "Connection refused"),
    ),
}
#: The compiled languages' bots the hostile builds replace the build of.
HOSTILE_LANGS = {
    "ts": (Language.TYPESCRIPT, "ts_last"),
    **{lang: (kit.language, kit.bot) for lang, kit in KITS.items()},
}
BUILD_LIMITS = BuildLimits(wall_s=6.0, pids=64, out_mb=8, tmp_mb=8, memory_mb=256)


@pytest.fixture(scope="module")
def hostile_sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture(build_limits=BUILD_LIMITS)


@pytest.mark.parametrize("case", sorted(HOSTILE_BUILDS))
@pytest.mark.parametrize("lang", sorted(HOSTILE_LANGS))
def test_a_hostile_build_is_contained_and_refused_with_nothing_left(
    hostile_sandbox: DockerSandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
    case: str,
) -> None:
    """A planted hostile build, submitted through the registry: refused at submission with
    the reason, and nothing left of it (no container, volume, sources or bot image, temporary
    folder or stored row), nothing of it reached the host."""
    sandbox = hostile_sandbox
    language, bot = HOSTILE_LANGS[lang]
    runtime_image_or_skip(sandbox, language)
    script, said = HOSTILE_BUILDS[case]
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.5)
    script = script.replace("{port}", str(listener.getsockname()[1]))
    hostile = dataclasses.replace(
        runtime_for(language), build=BuildStep(lambda _package, _out: ["bash", "-c", script])
    )
    monkeypatch.setitem(RUNTIMES, language, hostile)
    # This run's own version of the bot (one built before would be reused, not built).
    folder = tmp_path / bot
    shutil.copytree(BOTS / bot, folder)
    package = load_package(folder)
    with (folder / package.entry).open("a") as entry:
        entry.write(f"\n// {uuid.uuid4().hex}\n")
    package = load_package(folder)
    data, filename = package_bytes(folder)
    # Every temporary folder of the submission in one of the test's own.
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    # The host's build locks are a folder that stays by design (64 files at most,
    # saloon.worker.sandbox.hostlock): the test's own, outside the scratch folder.
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    try:
        with Store.open(tmp_path / "arena.db") as store:
            registry = Registry(store)
            registry.add_user("mallory")
            with pytest.raises(RegistryError) as caught:
                submit(registry, "mallory", "hostile", "seizure-v1", data, filename, sandbox)
            assert store.bot("hostile") is None
            assert store.versions("hostile") == []
        text = str(caught.value)
        assert text.startswith(f"the bot cannot be seated: {SPECS[language].label} build"), text
        for words in said:
            assert words in text, text
        assert build_leftovers(sandbox) == []
        assert owned_volumes(sandbox) == []
        assert version_images(sandbox.client, package.version) == []
        assert os.listdir(scratch) == []
        with pytest.raises(TimeoutError):  # nothing of the build reached the host
            listener.accept()
    finally:
        listener.close()
