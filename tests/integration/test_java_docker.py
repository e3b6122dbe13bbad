"""Java bots in the Docker sandbox, Java's own case: a class that is not a saloon.Bot is told
so. What every compiled language does (play, crash, compile error, starter kits, warm
stream, hostile builds) is tested in test_compiled_docker.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from saloon.referee.match import play_match
from saloon.referee.seats import InProcessSeat
from saloon.sdk.house import make_house_bot
from saloon.sdk.languages import Language
from saloon.worker.sandbox.docker import DockerSandbox

from .docker_fixtures import runtime_image_or_skip, sandbox_fixture

pytestmark = pytest.mark.kit_images  # runs last, after the runtime images' build


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture()


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
