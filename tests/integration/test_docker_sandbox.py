"""The Docker sandbox with real containers: the lock-down, the warm pool, leftovers, the CLI."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from saloon.referee.limits import MatchLimits, SandboxLimits
from saloon.referee.match import play_match
from saloon.referee.record import MatchRecord, without_timing
from saloon.referee.replay import verify
from saloon.referee.seats import InProcessSeat, Seat
from saloon.sdk.house import make_house_bot
from saloon.worker.errors import SandboxFailed, UnsafePath
from saloon.worker.sandbox.docker import DockerSandbox, DockerSeat
from saloon.worker.sandbox.images import base_image_id, bot_tag

from .docker_fixtures import (
    build_leftovers,
    open_test_sandbox,
    owned_containers,
    owned_volumes,
    printed_eventually,
    sandbox_fixture,
    version_images,
)

HOSTILE = Path(__file__).parent / "hostile"
HONEST = str(HOSTILE / "honest")
GAME = "seizure-v1"
LIMITS = MatchLimits(decision_ms=2000, bank_ms=5000, start_ms=60_000)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture()


def honest_match(sandbox: DockerSandbox, seed: int) -> tuple[MatchRecord, DockerSeat]:
    seat = sandbox.seat(HONEST, "honest")
    assert isinstance(seat, DockerSeat)
    seats: list[Seat] = [seat, InProcessSeat(make_house_bot(GAME, "random"), "house:random")]
    return play_match(GAME, seats, seed=seed, limits=LIMITS), seat


def inspect(sandbox: DockerSandbox, container_id: str) -> dict[str, object]:
    info: dict[str, object] = sandbox.client.api.inspect_container(container_id)
    return info


def test_container_is_locked_down(sandbox: DockerSandbox) -> None:
    record, seat = honest_match(sandbox, 1)
    assert record.faults == []
    assert seat.runtime is not None
    info = inspect(sandbox, seat.runtime.container_id)
    host = info["HostConfig"]
    config = info["Config"]
    assert isinstance(host, dict) and isinstance(config, dict)
    limits = SandboxLimits()
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["Memory"] == host["MemorySwap"] == limits.memory_mb * 1024 * 1024
    assert host["NanoCpus"] == int(limits.cpus * 1e9)
    assert host["PidsLimit"] == limits.pids
    assert host["Binds"] in (None, [])
    assert config["User"] == "10001:10001"
    # The referee's environment never reaches the bot: only the image's few variables.
    names = {item.split("=", 1)[0] for item in config["Env"]}
    assert names <= {"PATH", "HOME", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"}
    assert config["Labels"]["saloon"] == "1"
    assert config["Labels"]["saloon.owner"] == sandbox.owner
    mounts = info["Mounts"]
    assert isinstance(mounts, list) and [m["Destination"] for m in mounts] == ["/run/saloon"]


def test_warm_runtime_serves_the_next_match_and_the_record_replays(
    sandbox: DockerSandbox,
) -> None:
    first, seat1 = honest_match(sandbox, 2)
    assert seat1.runtime is not None
    served = seat1.runtime.matches
    second, seat2 = honest_match(sandbox, 2)
    assert seat2.runtime is seat1.runtime
    # The gRPC channel is warm too, and so is its stream: the second match played on the
    # stream the first one kept.
    assert seat2.connection is seat1.connection is seat1.runtime.connection
    assert seat2.connection is not None and seat2.connection.streams == 1
    assert seat2.runtime.matches == served + 1
    # Module globals survive in a warm runtime (the bot counts its matches there); each
    # match's diagnostics hold only that match's part; the bot is fresh, the record equal.
    # (Read again until there: the engine's log of a container lags its output a moment.)
    first_said, second_said = (f"honest: match {n} in this runtime" for n in (served, served + 1))
    assert first_said in printed_eventually(seat1, first_said)
    assert second_said in printed_eventually(seat2, second_said)
    assert f"honest: match {served} in" not in seat2.diagnostics()
    assert without_timing(first.to_json()) == without_timing(second.to_json())
    verify(second)


def test_a_warm_runtime_that_died_idle_is_replaced_before_the_match(
    sandbox: DockerSandbox,
) -> None:
    _record, seat = honest_match(sandbox, 8)
    assert seat.runtime is not None
    dead = seat.runtime.container_id
    sandbox.client.api.kill(dead)  # by id: a container this test's sandbox started
    sandbox.wait_exit(seat.runtime, 10)
    record, again = honest_match(sandbox, 8)
    assert record.faults == []
    assert again.runtime is not None and again.runtime.container_id != dead
    assert dead not in sandbox.container_ids()


def test_a_container_the_engine_loses_mid_match_fails_the_match_not_the_bot(
    sandbox: DockerSandbox,
) -> None:
    # The slow bot (10 ms a decision) in a container this test's sandbox starts; the test
    # removes that container, by id, in the middle of the match (as an engine restart or
    # an operator's `docker rm -f` would). No record blames the bot: the match raises
    # SandboxFailed, which fails its job, and the job retries (saloon.worker.queue.jobs).
    seat = sandbox.seat(str(Path(__file__).parent / "bots" / "slow_random.py"), "slow")
    assert isinstance(seat, DockerSeat)
    seats: list[Seat] = [seat, InProcessSeat(make_house_bot(GAME, "random"), "house:random")]
    outcome: list[BaseException | MatchRecord] = []

    def play() -> None:
        try:
            outcome.append(play_match(GAME, seats, seed=5, limits=LIMITS))
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=play)
    thread.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (seat.runtime and seat.target):
        time.sleep(0.01)
    assert seat.runtime is not None, "the bot's container never served"
    time.sleep(0.3)  # some decisions in
    assert thread.is_alive(), "the match ended before the container could be removed"
    sandbox.client.api.remove_container(seat.runtime.container_id, force=True)
    thread.join(60)
    assert len(outcome) == 1
    assert isinstance(outcome[0], SandboxFailed), outcome[0]
    assert "slow" in str(outcome[0])
    assert seat.runtime.container_id not in owned_containers(sandbox)
    # Nor its socket volume, which a `docker rm -f` (no -v) leaves behind.
    assert seat.runtime.volume is None or seat.runtime.volume not in owned_volumes(sandbox)


def test_a_container_removed_without_its_volume_leaves_no_volume(
    sandbox: DockerSandbox,
) -> None:
    """Regression: a runtime's container removed behind the sandbox's back without its
    volume (an operator's `docker rm -f`, no -v) left the socket volume behind for good (a
    full CI run left one, test_a_container_the_engine_loses_mid_match's); the sandbox removes
    it by name when it drops the runtime, and a close sweeps any its owner still has."""
    if os.geteuid() != 0:
        pytest.skip("SKIPPED: the socket folder is a volume only when the referee runs as root")
    _record, seat = honest_match(sandbox, 9)
    assert seat.runtime is not None and seat.runtime.volume is not None
    dead, volume = seat.runtime.container_id, seat.runtime.volume
    assert volume in owned_volumes(sandbox)
    sandbox.client.api.remove_container(dead, force=True)  # by id, without its volume
    assert volume in owned_volumes(sandbox)
    # The next seat finds the warm runtime gone and drops it: its volume goes with it.
    record, again = honest_match(sandbox, 9)
    assert record.faults == []
    assert again.runtime is not None and again.runtime.container_id != dead
    assert volume not in owned_volumes(sandbox)


def test_a_container_the_engine_cannot_create_fails_the_match_not_the_bot(
    sandbox: DockerSandbox,
) -> None:
    # More CPUs than the machine has: the engine refuses to create the container.
    seat = sandbox.seat(HONEST, "honest", limits=SandboxLimits(cpus=4096.0))
    seats: list[Seat] = [seat, InProcessSeat(make_house_bot(GAME, "random"), "house:random")]
    with pytest.raises(SandboxFailed, match="no bot runtime for honest: cannot create"):
        play_match(GAME, seats, seed=5, limits=LIMITS)


def test_two_seats_of_one_match_never_share_a_runtime(sandbox: DockerSandbox) -> None:
    seats: list[Seat] = [sandbox.seat(HONEST, "a"), sandbox.seat(HONEST, "b")]
    record = play_match(GAME, seats, seed=3, limits=LIMITS)
    assert record.faults == []
    ids = [s.runtime.container_id for s in seats if isinstance(s, DockerSeat) and s.runtime]
    assert len(ids) == 2 and ids[0] != ids[1]


def test_idle_runtimes_are_reaped() -> None:
    # No background reaper here, so the count is this call's alone.
    sandbox = open_test_sandbox(idle_timeout_s=0.0, reap_interval_s=None)
    try:
        _record, seat = honest_match(sandbox, 4)
        assert seat.runtime is not None
        assert sandbox.reap() == 1
        assert owned_containers(sandbox) == []
    finally:
        sandbox.close()


def test_the_background_reaper_removes_idle_runtimes() -> None:
    sandbox = open_test_sandbox(idle_timeout_s=0.0)
    try:
        assert sandbox.reap_interval_s == 0.1  # an idle timeout of 0 is no busy loop
        _record, seat = honest_match(sandbox, 4)
        assert seat.runtime is not None
        deadline = time.monotonic() + 15
        while owned_containers(sandbox) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert owned_containers(sandbox) == []
    finally:
        sandbox.close()


def test_a_restarted_owner_removes_its_leftovers() -> None:
    crashed = open_test_sandbox()
    _record, seat = honest_match(crashed, 5)
    assert seat.runtime is not None
    leftover = seat.runtime.container_id
    # The worker "crashes": its sandbox is never closed. Its successor has the same owner id.
    successor = DockerSandbox(owner=crashed.owner)
    try:
        assert successor.removed_leftovers >= 1
        assert owned_containers(successor) == []
        assert leftover not in {c["Id"] for c in successor.client.api.containers(all=True)}
    finally:
        successor.close()
        crashed.close()


def test_a_restarted_owner_removes_its_leftover_volumes() -> None:
    """A crashed worker's runtime container removed without its volume (no sandbox then
    tracks it to remove it by name): its successor removes the volume no container holds."""
    if os.geteuid() != 0:
        pytest.skip("SKIPPED: the socket folder is a volume only when the referee runs as root")
    crashed = open_test_sandbox()
    _record, seat = honest_match(crashed, 10)
    assert seat.runtime is not None and seat.runtime.volume is not None
    volume = seat.runtime.volume
    # The worker "crashes" (its sandbox is never closed), then an operator's `docker rm -f`.
    crashed.client.api.remove_container(seat.runtime.container_id, force=True)
    assert volume in owned_volumes(crashed)
    successor = DockerSandbox(owner=crashed.owner)
    try:
        assert volume not in owned_volumes(successor)
    finally:
        successor.close()
        crashed.close()
    assert owned_volumes(crashed) == []


def test_a_refused_package_builds_nothing(sandbox: DockerSandbox, tmp_path: Path) -> None:
    """A package with a path out of its folder is refused before any image is built.

    The engine is shared (other tests build and prune images at the same time), so the
    check is on this package's own images: its bot is unique (a fresh comment), and no
    image exists of it, read as it is or with the escaping file dropped or kept inside."""
    import tarfile
    import uuid

    from saloon.worker.sandbox.packages import load_package

    bot = tmp_path / "bot.py"
    bot.write_text(Path(HONEST, "bot.py").read_text() + f"# {uuid.uuid4().hex}\n")
    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(bad, "w:gz") as tar:
        tar.add(bot, arcname="bot.py")
        tar.add(bot, arcname="../escape.py")
    lenient = []
    for files in (["bot.py"], ["bot.py", "escape.py"]):
        folder = tmp_path / ("lenient-" + "-".join(files))
        folder.mkdir()
        for name in files:
            (folder / name).write_text(bot.read_text())
        lenient.append(load_package(str(folder)).version)
    with pytest.raises(UnsafePath):
        sandbox.seat(str(bad), "bad")
    assert [version_images(sandbox.client, v) for v in lenient] == [[], []]
    assert build_leftovers(sandbox) == []


def test_same_package_builds_one_image(sandbox: DockerSandbox, tmp_path: Path) -> None:
    from saloon.worker.sandbox.packages import load_package

    archive = tmp_path / "honest.tar.gz"
    import tarfile

    with tarfile.open(archive, "w:gz") as tar:
        tar.add(HONEST, arcname="honest")
    folder, packed = load_package(HONEST), load_package(archive)
    assert folder.version == packed.version
    tag = bot_tag(folder, base_image_id(sandbox.client, sandbox.base))
    assert sandbox.image(folder) == sandbox.image(packed) == tag


def test_saloon_play_docker_seat(tmp_path: Path, docker_engine: None) -> None:
    import docker

    out = tmp_path / "record.json"
    argv = [sys.executable, "-m", "saloon.arena.cli", "play", GAME]
    argv += ["--seat", f"docker:{HONEST}", "--seat", HONEST, "--sandbox", "docker"]
    argv += ["--seed", "6", "--out", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    record = json.loads(out.read_text())
    assert record["faults"] == []
    assert [s["sandbox"]["kind"] for s in record["seats"]] == ["docker", "docker"]
    # The command's sandbox removed its containers at exit (they carry its pid).
    client = docker.from_env()
    try:
        left = client.api.containers(
            all=True, filters={"label": ["saloon=1", f"saloon.pid={proc.pid}"]}
        )
    finally:
        client.close()
    assert left == []


def test_saloon_play_reports_a_bad_package_in_one_line(tmp_path: Path, docker_engine: None) -> None:
    bad = tmp_path / "nobot"
    bad.mkdir()
    (bad / "other.py").write_text("x = 1\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "saloon.arena.cli",
            "play",
            GAME,
            "--seat",
            f"docker:{bad}",
            "--seat",
            "house:random",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("saloon: error: seat docker:")
    assert "bot.py" in result.stderr


def test_gvisor_runtime_plays_a_match_when_registered() -> None:
    probe = open_test_sandbox()
    try:
        registered = "runsc" in probe.client.info().get("Runtimes", {})
    finally:
        probe.close()
    if not registered:
        pytest.skip("SKIPPED, NEEDS runsc registered with the Docker engine (deploy/dev.sh)")
    sandbox = open_test_sandbox(runtime="runsc")
    try:
        record, seat = honest_match(sandbox, 7)
        assert record.faults == []
        assert record.seats[0].sandbox is not None
        assert record.seats[0].sandbox.runtime == "runsc"
        assert seat.runtime is not None
        host = inspect(sandbox, seat.runtime.container_id)["HostConfig"]
        assert isinstance(host, dict) and host["Runtime"] == "runsc"
    finally:
        sandbox.close()
    assert owned_containers(sandbox) == []


CRASHING_WORKER = """
import os, sys
from saloon.referee.limits import SandboxLimits
from saloon.worker.sandbox.docker import DockerSandbox
from saloon.worker.sandbox.packages import load_package
sandbox = DockerSandbox(owner=sys.argv[2])
package = load_package(sys.argv[1])
runtime = sandbox.acquire(package, sandbox.image(package), SandboxLimits())
print(runtime.container_id, flush=True)
os._exit(0)  # dies without closing its sandbox
"""


def test_containers_of_a_dead_process_are_removed_by_the_next_sandbox() -> None:
    probe = open_test_sandbox()
    probe.close()
    crashed = subprocess.run(
        [sys.executable, "-c", CRASHING_WORKER, HONEST, f"{probe.owner}-dead"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    leftover = crashed.stdout.strip()
    ids = {c["Id"] for c in probe.client.api.containers(all=True)}
    assert leftover in ids
    successor = open_test_sandbox()  # another owner: the dead pid is what counts
    try:
        assert successor.removed_leftovers >= 1
        assert leftover not in {c["Id"] for c in successor.client.api.containers(all=True)}
    finally:
        successor.close()


def test_the_base_image_carries_the_bot_runtime_but_not_the_arena_api(
    sandbox: DockerSandbox,
) -> None:
    probe = (
        "import importlib.util as u, saloon.sdk.run, saloon.sdk.proto.bot_pb2; "
        "print(u.find_spec('saloon.sdk.arena_proto'))"
    )
    out = sandbox.client.containers.run(
        sandbox.base, ["python3", "-c", probe], network_disabled=True, remove=True
    )
    assert out.decode().strip() == "None"


def test_a_docker_bot_whose_import_overruns_the_start_time_is_charged_and_a_platform_overrun_is_not(
    sandbox: DockerSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bot's own part: an import that sleeps past the start time is the bot's TIMEOUT.
    slow = tmp_path / f"slow_import_{time.monotonic_ns()}"
    slow.mkdir()
    (slow / "bot.py").write_text(
        "import time\ntime.sleep(4)\n\n\ndef act(decision):\n    return decision.legal[0]\n"
    )
    seat = sandbox.seat(str(slow), "slow-import")
    seats: list[Seat] = [seat, InProcessSeat(make_house_bot(GAME, "random"), "house:random")]
    limits = MatchLimits(decision_ms=2000, bank_ms=5000, start_ms=1500)
    record = play_match(GAME, seats, seed=8, limits=limits)
    assert [(f.seat, f.kind.value) for f in record.faults][:1] == [(0, "TIMEOUT")]
    assert "did not load and serve within its start time (1500 ms)" in record.faults[0].detail
    # The platform's part past its bound: SandboxFailed (the match retried), never a fault.
    monkeypatch.setenv("SALOON_PLATFORM_START_S", "0.001")
    cold = sandbox.seat(HONEST, "honest-cold", limits=SandboxLimits(memory_mb=300))
    seats = [cold, InProcessSeat(make_house_bot(GAME, "random"), "house:random")]
    with pytest.raises(SandboxFailed, match=r"not the bot's fault|did not start in time"):
        play_match(GAME, seats, seed=9, limits=LIMITS)


@pytest.mark.exclusive  # counts what its own sweep removed: no other sandbox may sweep meanwhile
def test_bot_containers_of_a_worker_container_that_stopped_are_swept(
    sandbox: DockerSandbox,
) -> None:
    # A worker in a container (compose.yaml's) labels its bots' containers with its own
    # container id; a pid says nothing across containers, so any sandbox of the engine
    # removes the containers whose worker container no longer runs, whatever its host name.
    from saloon.worker.sandbox.images import base_tag

    client = sandbox.client
    sleep = ["python3", "-c", "import time; time.sleep(60)"]
    worker = client.containers.run(base_tag(), sleep, detach=True, labels={"saloon.test": "1"})
    labels = {"saloon": "1", "saloon.parent": worker.id, "saloon.host": "another-host"}
    orphan = client.containers.run(base_tag(), sleep, detach=True, labels=labels)
    try:
        assert sandbox.sweep() == 0  # its worker runs: left alone
        worker.kill()
        assert sandbox.sweep() == 1
        with pytest.raises(Exception, match=r"No such container|404"):
            client.containers.get(orphan.id)
    finally:
        for c in (orphan, worker):
            with contextlib.suppress(Exception):
                c.remove(force=True)
