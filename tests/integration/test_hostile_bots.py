"""Hostile bots in real containers: each contained, with the right fault, nothing left.

Every hostile bot (tests/integration/hostile/, each a real bot package) attacks once and
reports ``CONTAINED: ...`` on stderr, or raises ``ESCAPED: ...`` (see the README there).
They play four matches of Seas of Strife at once, each beside an honest bot that must not
notice anything; the test then checks the host: the listener got no connection, the
planted process lives, no process of a bot is left, no container of the sandbox is left.
"""

from __future__ import annotations

import json
import random
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from saloon.referee.limits import MatchLimits, SandboxLimits
from saloon.referee.match import play_match
from saloon.referee.process.stderr import STDERR_CAP_BYTES
from saloon.referee.record import MatchRecord
from saloon.referee.seats import Seat
from saloon.worker.sandbox.docker import DockerSandbox, DockerSeat

from .docker_fixtures import owned_containers, sandbox_fixture
from .helpers import check_record

HOSTILE = Path(__file__).parent / "hostile"
GAME = "seas-of-strife-v1"
#: Short clocks keep the suite quick; generous enough for a loaded 2-core machine.
LIMITS = MatchLimits(decision_ms=1000, bank_ms=1000, strike_limit=3, start_ms=60_000)
#: Half a core each: four matches of up to six containers share two cores.
SANDBOX_LIMITS = SandboxLimits(memory_mb=256, cpus=0.5, pids=64, tmpfs_mb=16, open_files=256)
#: The matches: hostile bots side by side, each with an honest bot last.
MATCHES = [
    ["memory_bomb", "fork_bomb", "cpu_spin", "sleeper"],
    ["tcp_connect", "net_interfaces", "host_file", "docker_socket", "tmpfs_fill"],
    ["flood", "import_crash", "exit_mid"],
    ["kill_process", "tamper_socket", "setsid_child"],
]
#: Bots that need to know what the test planted (target.json beside their bot.py).
TARGETED = {"tcp_connect", "host_file", "kill_process", "setsid_child"}


@dataclass
class Played:
    record: MatchRecord
    seat: int
    diagnostics: str
    container: str


@dataclass
class Planted:
    listener: socket.socket
    secret: Path
    victim: subprocess.Popen[bytes]
    marker: str


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture()


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Planted]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    secret = tmp_path_factory.mktemp("host") / "secret.txt"
    secret.write_text("the host's secret\n")
    victim = subprocess.Popen(["sleep", "300"])
    marker = f"600.{random.randrange(10**6, 10**7)}"
    try:
        yield Planted(listener, secret, victim, marker)
    finally:
        listener.close()
        victim.kill()
        victim.wait()


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory, planted: Planted) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hostile")
    target = {
        "port": planted.listener.getsockname()[1],
        "path": str(planted.secret),
        "pid": planted.victim.pid,
        "marker": planted.marker,
    }
    out: dict[str, Path] = {}
    for name in [*sorted({n for group in MATCHES for n in group}), "honest"]:
        dest = root / name
        shutil.copytree(HOSTILE / name, dest)
        if name in TARGETED:
            (dest / "target.json").write_text(json.dumps(target))
        out[name] = dest
    return out


@pytest.fixture(scope="module")
def played(sandbox: DockerSandbox, packages: dict[str, Path]) -> Iterator[dict[str, Played]]:
    """Every match played at once; each bot's record, seat, stderr and container."""

    def play(group: list[str], index: int) -> dict[str, Played]:
        names = [*group, "honest"]
        seats: list[Seat] = [
            sandbox.seat(str(packages[n]), n, limits=SANDBOX_LIMITS) for n in names
        ]
        record = play_match(GAME, seats, seed=index, limits=LIMITS, match_id=f"hostile-{index}")
        out = {}
        for i, (name, seat) in enumerate(zip(names, seats, strict=True)):
            runtime = seat.runtime if isinstance(seat, DockerSeat) else None
            key = name if name != "honest" else f"honest-{index}"
            out[key] = Played(
                record, i, seat.diagnostics(), runtime.container_id if runtime else ""
            )
        return out

    built = {tag for tag in (sandbox.image(_pkg(p)) for p in packages.values())}
    with ThreadPoolExecutor(len(MATCHES)) as pool:
        results = list(pool.map(play, MATCHES, range(len(MATCHES))))
    merged: dict[str, Played] = {}
    for result in results:
        merged.update(result)
    yield merged
    # The images of packages with a planted target are new every run: remove them.
    for name in TARGETED:
        tag = sandbox.image(_pkg(packages[name]))
        if tag in built:
            sandbox.client.images.remove(tag, force=True)


def _pkg(path: Path):  # type: ignore[no-untyped-def]
    from saloon.worker.sandbox.packages import load_package

    return load_package(path)


def faults_of(played: Played) -> list[tuple[str, int, str]]:
    return [
        (f.kind.value, f.decision, f.detail) for f in played.record.faults if f.seat == played.seat
    ]


def assert_contained(played: Played) -> None:
    assert faults_of(played) == []
    assert "CONTAINED" in played.diagnostics
    assert "ESCAPED" not in played.diagnostics


@pytest.mark.parametrize(
    "name",
    [
        "tcp_connect",
        "net_interfaces",
        "host_file",
        "docker_socket",
        "tmpfs_fill",
        "kill_process",
        "tamper_socket",
        "setsid_child",
    ],
)
def test_probe_is_contained_and_the_bot_plays_on(played: dict[str, Played], name: str) -> None:
    assert_contained(played[name])


def test_fork_bomb_hits_the_pids_limit(played: dict[str, Played]) -> None:
    bomb = played["fork_bomb"]
    assert_contained(bomb)
    forked = int(bomb.diagnostics.split("fork failed after ")[1].split(" children")[0])
    assert forked < SANDBOX_LIMITS.pids


def test_tmpfs_is_small(played: dict[str, Played]) -> None:
    text = played["tmpfs_fill"].diagnostics
    tmp_mib = int(text.split("/tmp full after ")[1].split(" MiB")[0])
    shm_mib = int(text.split("/dev/shm full after ")[1].split(" MiB")[0])
    assert tmp_mib <= SANDBOX_LIMITS.tmpfs_mb and shm_mib <= SANDBOX_LIMITS.tmpfs_mb


def test_memory_bomb_is_killed_for_memory(played: dict[str, Played]) -> None:
    # Allocating up to the limit on half a core may outlast a deadline first (a TIMEOUT).
    faults = faults_of(played["memory_bomb"])
    assert [f[0] for f in faults[:-1]] == ["TIMEOUT"] * (len(faults) - 1)
    assert faults[-1][0] == "CRASH"
    assert "out of memory" in faults[-1][2]
    assert played["memory_bomb"].seat in played["memory_bomb"].record.played_out


@pytest.mark.parametrize("name", ["cpu_spin", "sleeper"])
def test_spinning_or_sleeping_bot_times_out(played: dict[str, Played], name: str) -> None:
    assert [f[0] for f in faults_of(played[name])] == ["TIMEOUT"] * LIMITS.strike_limit
    assert played[name].seat in played[name].record.played_out


def test_crash_at_import_is_a_crash_at_match_start(played: dict[str, Played]) -> None:
    faults = faults_of(played["import_crash"])
    assert [(kind, decision) for kind, decision, _ in faults] == [("CRASH", -1)]
    assert faults[0][2].startswith("the bot did not load: ")
    assert "boom at import" in faults[0][2]
    assert "boom at import" in played["import_crash"].diagnostics


def test_exit_mid_match_is_a_crash(played: dict[str, Played]) -> None:
    faults = faults_of(played["exit_mid"])
    assert [f[0] for f in faults] == ["CRASH"]
    assert faults[0][1] >= 0
    assert "exited with code 3" in faults[0][2]


def test_flood_is_capped_and_harmless(played: dict[str, Played]) -> None:
    flood = played["flood"]
    assert faults_of(flood) == []
    assert len(flood.diagnostics.encode()) < STDERR_CAP_BYTES + 200
    assert "bytes of stderr dropped" in flood.diagnostics


def test_honest_bots_and_records_are_unaffected(played: dict[str, Played]) -> None:
    for index in range(len(MATCHES)):
        honest = played[f"honest-{index}"]
        assert faults_of(honest) == []
        check_record(honest.record)
        seat = honest.record.seats[honest.seat]
        assert seat.sandbox is not None and seat.sandbox.kind == "docker"
        assert seat.sandbox.limits == SANDBOX_LIMITS


def test_host_is_untouched(played: dict[str, Played], planted: Planted) -> None:
    with pytest.raises(BlockingIOError):
        planted.listener.accept()
    assert planted.victim.poll() is None
    assert planted.secret.read_text() == "the host's secret\n"


def test_faulted_runtimes_are_removed_and_healthy_ones_kept_warm(
    played: dict[str, Played], sandbox: DockerSandbox
) -> None:
    live = sandbox.container_ids()
    for name in ("memory_bomb", "cpu_spin", "sleeper", "import_crash", "exit_mid"):
        assert played[name].container not in live, name
    for name in ("fork_bomb", "tcp_connect", "honest-0"):
        assert played[name].container in live, name


def _marker_processes(marker: str) -> list[int]:
    """Host pids whose command line carries the setsid child's marker."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(proc.name))
    return found


def test_sandbox_close_removes_every_container(
    played: dict[str, Played], sandbox: DockerSandbox, planted: Planted
) -> None:
    assert owned_containers(sandbox) != []
    # The setsid child lives in its warm container until the sandbox closes.
    assert _marker_processes(planted.marker) != []
    sandbox.close()
    assert owned_containers(sandbox) == []
    deadline = time.monotonic() + 10
    while _marker_processes(planted.marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _marker_processes(planted.marker) == []
