"""Go bots in the Docker sandbox, Go's own cases: a bot that writes its own main is told so,
and the hostile bots (network, host files, fork bombs) are contained. What every compiled
language does (play, crash, compile error, starter kits, warm stream, hostile builds) is
tested in test_compiled_docker.py."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from saloon.referee.limits import MatchLimits, SandboxLimits
from saloon.referee.match import play_match
from saloon.referee.seats import Seat
from saloon.sdk.languages import Language
from saloon.worker.errors import BuildFailed
from saloon.worker.sandbox.docker import DockerSandbox
from saloon.worker.sandbox.packages import load_package

from .docker_fixtures import (
    open_test_sandbox,
    owned_containers,
    remove_version_images,
    runtime_image_or_skip,
    sandbox_fixture,
)

pytestmark = pytest.mark.kit_images  # runs last, after the runtime images' build

HOSTILE = Path(__file__).parent / "hostile"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture()


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


def test_hostile_go_bots_are_contained_and_play_on(tmp_path: Path) -> None:
    """Network, host files, fork bomb: each Go bot attacks once, reports CONTAINED and plays
    the match out with no fault; the host's listener and file are untouched. A sandbox of
    its own: closed before the bots' images (new every run) are removed."""
    sandbox = open_test_sandbox()
    try:
        runtime_image_or_skip(sandbox, Language.GO)
    except BaseException:  # skipped (or failed, in CI): nothing was started
        sandbox.close()
        raise
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    secret = tmp_path / "secret.txt"
    secret.write_text("the host's secret\n")
    target = json.dumps({"port": listener.getsockname()[1], "path": str(secret)})
    seats: list[Seat] = []
    versions = []
    try:
        for name in HOSTILE_GO:
            dest = tmp_path / name
            shutil.copytree(HOSTILE / name, dest)
            (dest / "target.json").write_text(target)
            versions.append(load_package(dest).version)
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
        sandbox.close()  # its containers first: an image in use is only untagged
        for version in versions:  # new every run: each carries the test's own target
            remove_version_images(sandbox.client, version)
    assert owned_containers(sandbox) == []
