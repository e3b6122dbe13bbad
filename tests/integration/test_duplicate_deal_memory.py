"""Regression: duplicate deals leaked through a warm runtime's memory (issue 32).

A duplicate deal replays one deal with the seats rotated, and a warm runtime's module
globals survive from match to match: a bot that remembered the cards each seat played in
one rotation knew every hand in the next. ``bots/memorising.py`` tries exactly that (it
keeps the hands it held and the cards each seat played, and reports on stderr at every
decision whether it recognises its new hand, naming its runtime and counting its
matches). Here it plays duplicate seasons and continuous ladders with duplicate deals, on
Docker and on process seats, with real engines, workers, Redis and PostgreSQL: it never
recognises a deal, no runtime plays two matches of one deal, and (Docker) its memory does
survive between matches, so the check is not vacuous.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from saloon.arena import continuous
from saloon.arena.matchmaker import Settings
from saloon.arena.registry import Registry
from saloon.arena.submit import submit
from saloon.referee.limits import MatchLimits, SandboxLimits
from saloon.referee.match import play_match
from saloon.referee.seats import InProcessSeat, Seat
from saloon.sdk.house import make_house_bot
from saloon.worker.matches.spec import SandboxKind
from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.sandbox import docker as docker_sandbox
from saloon.worker.sandbox import open_sandbox
from saloon.worker.sandbox.docker import DockerSandbox, DockerSeat, Runtime
from saloon.worker.sandbox.packages import load_package
from saloon.worker.store.store import Store
from tests.databases import postgres_schema

from .docker_fixtures import sandbox_fixture
from .season_fixtures import Workers

MEMO = str(Path(__file__).parent / "bots" / "memorising.py")
HONEST = str(Path(__file__).parent / "hostile" / "honest")
GAME = "seas-of-strife-v1"
#: One line per decision of the memorising bot: its runtime, that runtime's match count,
#: and whether it recognised the deal.
LINE = re.compile(r"memo: runtime ([0-9a-f]+) match (\d+); (.*)")


@dataclass(frozen=True)
class Seen:
    """What the memorising bot said in one seat of one match."""

    match_id: str
    #: The deal: (season, deal group) -- a ladder's batches number their deals from 0.
    deal: tuple[str, int]
    runtime: str
    #: Which match of its runtime this was (1: the runtime's first).
    count: int
    recognised: tuple[str, ...]


def memo_seats(store: Store, season_id: str, is_memo: Callable[[str], bool]) -> list[Seen]:
    """Every seat of the season's matches that the memorising bot held and reported in.

    A Docker seat's stderr is what the engine's log holds when the match ends, and under
    load the engine can still be behind then on a new container's first lines (seen here:
    a cold runtime's whole first match missing, there 1.5 s later): such a seat is left out
    (:func:`check_never_recognised` asks for enough of the others)."""
    out = []
    for row in store.scheduled(season_id):
        assert row.spec["deal"] is not None, "not a duplicate schedule"
        for seat, ref in enumerate(row.spec["seats"]):
            if not is_memo(ref):
                continue
            found = LINE.findall(store.stderr(row.match_id, seat))
            if not found:
                continue
            assert len({runtime for runtime, _, _ in found}) == 1
            assert len({count for _, count, _ in found}) == 1
            recognised = tuple(text for _, _, text in found if text.startswith("RECOGNISED"))
            runtime, count = found[0][0], int(found[0][1])
            deal = (season_id, int(row.spec["deal"]))
            out.append(Seen(row.match_id, deal, runtime, count, recognised))
    return out


def check_never_recognised(seen: list[Seen], seats: int, warm: bool) -> None:
    """The bot recognised no deal, no runtime played two matches of one deal, and its
    memory survived between matches when the runtimes are ``warm`` (else never did).
    ``seats``: how many seats the bot held; at most a third may have gone unreported."""
    assert len(seen) * 3 >= seats * 2, f"{seats - len(seen)} of {seats} seats unreported"
    assert [s for s in seen if s.recognised] == []
    by_deal: dict[tuple[str, int], list[str]] = {}
    for s in seen:
        by_deal.setdefault(s.deal, []).append(s.runtime)
    for deal, runtimes in by_deal.items():
        assert len(runtimes) > 1, f"deal {deal}: one rotation reported, nothing to recognise"
        assert len(set(runtimes)) == len(runtimes), f"deal {deal}: a runtime played it twice"
    counts = [s.count for s in seen]
    if warm:
        assert max(counts) >= 2, "no runtime served a second match: the test proves nothing"
        per_runtime: dict[str, list[int]] = {}
        for s in seen:
            per_runtime.setdefault(s.runtime, []).append(s.count)
        # Each reported match of a runtime has a count of its own (memory kept, never
        # reset). Not 1..n: a match left unreported (memo_seats) leaves a gap, as CI saw
        # once: a runtime whose first match the engine's log had not yet shown reported
        # [2] alone.
        for runtime, kept in per_runtime.items():
            assert len(set(kept)) == len(kept) and min(kept) >= 1, (runtime, kept)
    else:
        assert set(counts) == {1}  # the process sandbox: a new runtime per seat and match


# -- duplicate seasons, as an organiser runs them --------------------------------------------
def run_duplicate_season(tmp_path: Path, sandbox: str) -> list[Seen]:
    """``saloon season run --duplicate`` of Seas of Strife (3 seats, 2 deals of 3 rotations):
    the memorising bot twice (a version against itself) and house:greedy."""
    db = str(tmp_path / "dup.db")
    argv = [sys.executable, "-m", "saloon.arena.cli", "season", "run", "dupmem"]
    argv += ["--game", GAME, "--bot", MEMO, "--bot", f"{MEMO}#2", "--bot", "house:greedy"]
    argv += ["--rounds", "2", "--duplicate", "--store", db, "--local", "--sandbox", sandbox]
    argv += ["--decision-ms", "2000", "--bank-ms", "10000", "--start-ms", "60000"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 matches recorded here" in done.stdout
    with Store.open(db) as store:
        return memo_seats(store, "dupmem", lambda ref: ref.startswith(MEMO))


def test_duplicate_deals_do_not_leak_through_a_warm_runtimes_memory_in_a_docker_season(
    tmp_path: Path, docker_engine: None
) -> None:
    # Two seats (the bot against itself) of six matches.
    check_never_recognised(run_duplicate_season(tmp_path, "docker"), seats=12, warm=True)


def test_duplicate_deals_do_not_leak_through_a_runtimes_memory_in_a_process_season(
    tmp_path: Path,
) -> None:
    check_never_recognised(run_duplicate_season(tmp_path, "process"), seats=12, warm=False)


# -- continuous ladders with duplicate deals, on real workers ---------------------------------
def run_duplicate_ladder(
    tmp_path: Path, redis_url: str, sandbox: SandboxKind, workers: int
) -> list[Seen]:
    """A continuous ladder with duplicate deals (2 batches of one 3-rotation deal) of the
    memorising bot, submitted through the arena, against house:random and house:greedy,
    played by ``workers`` worker processes."""
    queue = SeasonQueue(connect(redis_url), f"test-dupmem-{uuid.uuid4().hex[:8]}")
    running = Workers(tmp_path)
    request = continuous.ContinuousRequest(
        ladder_id="dupmem", game=GAME, players=3, seed=7, house=("random", "greedy"),
        duplicate=True, sandbox=sandbox, settings=Settings(batch=1), max_batches=2,
    )  # fmt: skip
    try:
        with postgres_schema("dupmem") as url, Store.open(url) as store:
            registry = Registry(store)
            with open_sandbox("process") as box:
                done = submit(
                    registry, "alice", "memo", GAME, Path(MEMO).read_bytes(), "bot.py", box
                )
            assert done.accepted, done.message
            for _ in range(workers):
                running.start(redis_url, queue.queue.name)
            continuous.start(registry, queue, request, "olga", url)
            deadline = time.monotonic() + 300
            while continuous.tick(registry, queue, request.ladder_id, url) != "stopped":
                assert time.monotonic() < deadline, running.logs()[-3000:]
                time.sleep(0.2)
            seen = []
            for k in (1, 2):
                season_id = continuous.batch_season_id(request.ladder_id, k)
                seen += memo_seats(store, season_id, lambda ref: ref.startswith("bot:memo@"))
    finally:
        running.stop()
        queue.purge()
    return seen


def test_duplicate_deals_do_not_leak_through_a_warm_runtimes_memory_in_a_docker_ladder(
    tmp_path: Path, redis_url: str, docker_engine: None
) -> None:
    seen = run_duplicate_ladder(tmp_path, redis_url, SandboxKind.DOCKER, workers=2)
    check_never_recognised(seen, seats=6, warm=True)  # one seat of each of 2 x 3 matches


def test_duplicate_deals_do_not_leak_through_a_runtimes_memory_in_a_process_ladder(
    tmp_path: Path, redis_url: str
) -> None:
    seen = run_duplicate_ladder(tmp_path, redis_url, SandboxKind.PROCESS, workers=1)
    check_never_recognised(seen, seats=6, warm=False)


# -- the pool's rule itself ----------------------------------------------------------------
LIMITS = MatchLimits(decision_ms=2000, bank_ms=10_000, start_ms=60_000)
LIMITS_S = SandboxLimits()


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture()


def honest_match(sandbox: DockerSandbox, seed: int, copies: int = 1) -> list[DockerSeat]:
    """A Seizure match of ``copies`` honest seats (and house bots) on deal ``seed``."""
    seats: list[Seat] = [sandbox.seat(HONEST, f"honest{i}", deal=seed) for i in range(copies)]
    seats += [InProcessSeat(make_house_bot("seizure-v1", "random"), "house:random")]
    record = play_match("seizure-v1", seats, seed=seed, limits=LIMITS)
    assert record.faults == []
    docker_seats = [s for s in seats if isinstance(s, DockerSeat)]
    assert all(s.runtime is not None for s in docker_seats)
    return docker_seats


def test_a_warm_runtime_is_never_handed_a_deal_it_has_played(sandbox: DockerSandbox) -> None:
    [first] = honest_match(sandbox, 101)
    [again] = honest_match(sandbox, 101)  # the same deal: another runtime
    assert again.runtime is not first.runtime
    assert first.runtime is not None and again.runtime is not None
    assert first.runtime.deals >= {101} and again.runtime.deals >= {101}
    [other] = honest_match(sandbox, 102)  # another deal: warm reuse as before
    assert other.runtime in (first.runtime, again.runtime)
    assert other.runtime is not None and other.runtime.matches >= 2
    # Two seats of one version at once (a bot against itself), on a deal both runtimes
    # played: neither gets it; each gets a runtime of its own.
    pair = honest_match(sandbox, 101, copies=2)
    ids = {id(s.runtime) for s in pair}
    assert len(ids) == 2 and not ids & {id(first.runtime), id(again.runtime)}
    # Seats acquiring together on one new deal never share a runtime either.
    package = load_package(HONEST)
    tag = sandbox.image(package)
    got: list[Runtime] = []
    threads = [
        threading.Thread(target=lambda: got.append(sandbox.acquire(package, tag, LIMITS_S, 103)))
        for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(got) == 3 and len({id(r) for r in got}) == 3
    assert all(103 in r.deals for r in got)
    for runtime in got:
        sandbox.release(runtime, healthy=False)


def test_a_runtime_that_played_max_deals_is_retired_not_pooled(
    sandbox: DockerSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(docker_sandbox, "MAX_DEALS_SEEN", 1)
    [seat] = honest_match(sandbox, 201)
    assert seat.runtime is not None
    assert seat.runtime.container_id not in sandbox.container_ids()
