"""What an engine's inspection of a bot's container says: saloon.worker.sandbox.docker's
container_state on inspections shaped as the engine returns them (docker inspect's State
and HostConfig)."""

from __future__ import annotations

from typing import Any

from saloon.worker.sandbox.docker import ContainerState, container_state

MIB = 1024 * 1024


def inspected(**state: Any) -> dict[str, Any]:
    return {
        "State": {"Running": False, "Status": "exited", **state},
        "HostConfig": {"Memory": 256 * MIB},
    }


def test_a_running_container_runs() -> None:
    assert container_state(inspected(Running=True, Status="running")) == ContainerState(True, "")


def test_an_oom_kill_the_engine_marked_is_out_of_memory() -> None:
    state = container_state(inspected(OOMKilled=True, ExitCode=137))
    assert state == ContainerState(False, "killed: out of memory (limit 256 MiB)")


def test_a_sigkill_the_engine_did_not_mark_as_oom_is_named_out_of_memory_most_likely() -> None:
    # Regression (a CI run): a memory bomb's container exited 137 with OOMKilled unset (the
    # engine misses the mark now and then), and its fault read "exited with code 137".
    state = container_state(inspected(OOMKilled=False, ExitCode=137))
    assert not state.running and not state.engine
    assert "out of memory most likely (limit 256 MiB" in state.why
    assert "SIGKILL" in state.why


def test_another_exit_is_the_runtime_exiting_with_its_code() -> None:
    state = container_state(inspected(OOMKilled=False, ExitCode=1))
    assert state == ContainerState(False, "the bot runtime exited with code 1")


def test_a_container_being_removed_is_the_engine_not_the_bot() -> None:
    state = container_state(inspected(Status="removing", ExitCode=137))
    assert state == ContainerState(False, "the container is removing", engine=True)
