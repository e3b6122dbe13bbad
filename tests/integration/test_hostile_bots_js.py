"""Hostile JavaScript bots in real containers: network, host files, fork bomb.

The same attacks as tests/integration/test_hostile_bots.py (``tcp_connect``, ``host_file``,
``fork_bomb``), written as JavaScript bots (tests/integration/hostile/js_*, each with a
``saloon.toml`` declaring ``language = "javascript"``) and run by the Node.js runtime image
in the Docker sandbox with the same limits. They play one match of Seas of Strife beside an
honest bot: each attack fails and says ``CONTAINED``, the match completes with no fault, the
host's listener and file are untouched, and closing the sandbox leaves no container and no
volume behind.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from saloon.referee.limits import MatchLimits, SandboxLimits
from saloon.referee.match import play_match
from saloon.referee.record import MatchRecord
from saloon.referee.seats import Seat
from saloon.sdk.languages import Language
from saloon.worker.sandbox.docker import DockerSandbox, DockerSeat
from saloon.worker.sandbox.packages import load_package

from .docker_fixtures import (
    base_image_or_skip,
    open_test_sandbox,
    owned_containers,
    runtime_image_or_skip,
)
from .helpers import check_record

pytestmark = pytest.mark.kit_images  # runs last, after the runtime images' build

HOSTILE = Path(__file__).parent / "hostile"
GAME = "seas-of-strife-v1"
#: The clocks and limits of test_hostile_bots.py.
LIMITS = MatchLimits(decision_ms=1000, bank_ms=1000, strike_limit=3, start_ms=60_000)
SANDBOX_LIMITS = SandboxLimits(memory_mb=256, cpus=0.5, pids=64, tmpfs_mb=16, open_files=256)
HOSTILE_JS = ["js_tcp_connect", "js_host_file", "js_fork_bomb"]


@dataclass
class Played:
    record: MatchRecord
    diagnostics: dict[str, str]
    containers: dict[str, str]


@dataclass
class Planted:
    listener: socket.socket
    secret: Path


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    """A sandbox of its own. The module's last test closes it and checks what is left;
    it is closed here in any case (closing twice is harmless)."""
    sandbox = open_test_sandbox()
    try:
        base_image_or_skip(sandbox)
        runtime_image_or_skip(sandbox, Language.JAVASCRIPT)
        yield sandbox
    finally:
        sandbox.close()
    assert owned_containers(sandbox) == []


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Planted]:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    secret = tmp_path_factory.mktemp("host") / "secret.txt"
    secret.write_text("the host's secret\n")
    try:
        yield Planted(listener, secret)
    finally:
        listener.close()


@pytest.fixture(scope="module")
def played(
    sandbox: DockerSandbox, planted: Planted, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Played]:
    root = tmp_path_factory.mktemp("hostile-js")
    target = json.dumps({"port": planted.listener.getsockname()[1], "path": str(planted.secret)})
    names = [*HOSTILE_JS, "honest"]
    tags = []
    seats: list[Seat] = []
    try:
        for name in names:
            dest = root / name
            shutil.copytree(HOSTILE / name, dest)
            if name != "honest":
                (dest / "target.json").write_text(target)
                package = load_package(dest)
                assert package.language is Language.JAVASCRIPT
                tags.append(sandbox.image(package))
            seats.append(sandbox.seat(str(dest), name, limits=SANDBOX_LIMITS))
        record = play_match(GAME, seats, seed=7, limits=LIMITS, match_id="hostile-js")
        diagnostics = {n: s.diagnostics() for n, s in zip(names, seats, strict=True)}
        containers = {
            n: s.runtime.container_id
            for n, s in zip(names, seats, strict=True)
            if isinstance(s, DockerSeat) and s.runtime is not None
        }
        yield Played(record, diagnostics, containers)
    finally:
        for tag in tags:  # new every run: each carries the test's own target
            sandbox.client.images.remove(tag, force=True)


@pytest.mark.parametrize("name", HOSTILE_JS)
def test_js_attack_is_contained_and_the_bot_plays_on(played: Played, name: str) -> None:
    seat = [*HOSTILE_JS, "honest"].index(name)
    assert [f for f in played.record.faults if f.seat == seat] == []
    text = played.diagnostics[name]
    assert "CONTAINED" in text and "ESCAPED" not in text, text


def test_js_fork_bomb_hits_the_pids_limit(played: Played) -> None:
    bomb = played.diagnostics["js_fork_bomb"]
    forked = int(bomb.split("fork failed after ")[1].split(" children")[0])
    assert forked < SANDBOX_LIMITS.pids
    assert "EAGAIN" in bomb  # refused by the kernel's pids limit, not for another reason


def test_the_match_completes_and_the_honest_bot_is_unaffected(played: Played) -> None:
    assert played.record.faults == []
    assert played.record.outcome.value == "completed"
    check_record(played.record)
    for seat in played.record.seats:
        assert seat.sandbox is not None and seat.sandbox.kind == "docker"
        assert seat.sandbox.limits == SANDBOX_LIMITS


def test_host_is_untouched(played: Played, planted: Planted) -> None:
    with pytest.raises(BlockingIOError):
        planted.listener.accept()
    assert planted.secret.read_text() == "the host's secret\n"


def test_a_read_that_succeeds_is_charged_to_the_bot_as_an_escape(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    """The probes can tell an escape: aimed at a file the container does hold, js_host_file
    reads it, and the bot is charged a CRASH that names the escape; the match still ends."""
    dest = tmp_path / "js_host_file"
    shutil.copytree(HOSTILE / "js_host_file", dest)
    (dest / "target.json").write_text(json.dumps({"path": "/etc/os-release"}))
    tag = sandbox.image(load_package(dest))
    try:
        seats: list[Seat] = [
            sandbox.seat(str(dest), "js_host_file", limits=SANDBOX_LIMITS),
            sandbox.seat(str(HOSTILE / "honest"), "honest", limits=SANDBOX_LIMITS),
            sandbox.seat(str(HOSTILE / "honest"), "honest", limits=SANDBOX_LIMITS),
        ]
        record = play_match(GAME, seats, seed=8, limits=LIMITS, match_id="hostile-js-escape")
    finally:
        sandbox.client.images.remove(tag, force=True)
    assert [(f.seat, f.kind.value) for f in record.faults] == [(0, "CRASH")]
    assert "ESCAPED: read /etc/os-release" in record.faults[0].detail
    assert 0 in record.played_out
    check_record(record)


def test_sandbox_close_leaves_no_container_and_no_volume(
    played: Played, sandbox: DockerSandbox
) -> None:
    # Contained bots play on: their runtimes are kept warm until the sandbox closes.
    live = sandbox.container_ids()
    for name in HOSTILE_JS:
        assert played.containers[name] in live, name
    # Last in this module: it closes the sandbox every test here shares.
    sandbox.close()
    assert owned_containers(sandbox) == []
    labels = {"label": ["saloon=1", f"saloon.owner={sandbox.owner}"]}
    assert (sandbox.client.api.volumes(filters=labels).get("Volumes") or []) == []
