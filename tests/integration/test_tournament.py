"""Tournaments on a SQLite store, their seasons played in this process: final marks (the
limit, another owner's bot, the deadline), the field frozen from what was stored before
the deadline, phases changed by the driver's tick alone, and the report the same when
computed again from the published seed and the records."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from saloon.arena import tournament
from saloon.arena.cli import main
from saloon.arena.errors import FieldFrozen, PermissionDenied
from saloon.arena.registry import Registry
from saloon.arena.tournaments import Phase, Tournaments
from saloon.ratings.finals import Batch, plan_batch
from saloon.sdk.client import ArenaClientError
from saloon.worker.errors import RegistryError, SeasonSpecError
from saloon.worker.matches.spec import MatchSpec
from saloon.worker.queue.jobs import run_match
from saloon.worker.sandbox import SandboxKind
from saloon.worker.seasons import run as seasons
from saloon.worker.store.rows import MatchStatus
from saloon.worker.store.store import Store

from .arena_fixtures import Arena, arena, write_bot

__all__ = ["arena"]

GAME = "western-showdown-v1"
T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
DEADLINE = T0 + timedelta(hours=1)


def request(**changes: object) -> tournament.TournamentRequest:
    values: dict[str, object] = {
        "tournament_id": "cup",
        "game": GAME,
        "deadline": DEADLINE,
        "seed": 7,
        "house": ("random", "greedy"),
        "sandbox": SandboxKind.PROCESS,
        "finals": tournament.FinalsSettings(budget=12, batch_matches=6, top_k=3, confidence=0.999),
        "resamples": 50,
    }
    values.update(changes)
    return tournament.TournamentRequest(**values)  # type: ignore[arg-type]


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    with Store.open(tmp_path / "cup.db") as store:
        yield Registry(store)


def add_version(store: Store, bot: str, owner: str, version: str, game: str = GAME) -> None:
    store.add_bot(bot, owner)
    store.add_version(bot, version, {"game": game})


def test_final_marks_keep_to_the_limit_and_the_owner(registry: Registry) -> None:
    store = registry.store
    tournament.create(registry, request(finals_per_owner=2), "olga", T0)
    add_version(store, "ace", "ann", "sha256:a1")
    add_version(store, "ace", "ann", "sha256:a2")
    add_version(store, "bee", "ann", "sha256:b1")
    add_version(store, "cat", "cy", "sha256:c1")
    add_version(store, "dog", "cy", "sha256:d1", game="seizure-v1")
    at = T0 + timedelta(minutes=1)
    mark = tournament.mark_final(registry, "cup", "ann", "ace", "sha256:a1", at)
    assert mark is not None and mark.version == "sha256:a1"
    tournament.mark_final(registry, "cup", "ann", "ace", "sha256:a1", at)  # idempotent
    tournament.mark_final(registry, "cup", "ann", "ace", "", at)  # latest: a2
    with pytest.raises(RegistryError, match="at most 2"):
        tournament.mark_final(registry, "cup", "ann", "bee", "", at)
    with pytest.raises(PermissionDenied, match="not yours"):
        tournament.mark_final(registry, "cup", "cy", "ace", "", at)
    with pytest.raises(RegistryError, match="does not play western"):
        tournament.mark_final(registry, "cup", "cy", "dog", "", at)
    with pytest.raises(RegistryError, match="no version"):
        tournament.mark_final(registry, "cup", "ann", "ace", "sha256:zz", at)
    book = Tournaments(store)
    assert [(m.bot, m.version) for m in book.marks("cup", "ann")] == [
        ("ace", "sha256:a1"), ("ace", "sha256:a2"),
    ]  # fmt: skip
    tournament.mark_final(registry, "cup", "ann", "ace", "sha256:a1", at, clear=True)
    tournament.mark_final(registry, "cup", "ann", "bee", "", at)
    assert len(book.marks("cup", "ann")) == 2


def test_the_deadline_refuses_late_marks_and_late_versions_stay_out(registry: Registry) -> None:
    store = registry.store
    tournament.create(registry, request(), "olga", T0)
    add_version(store, "ace", "ann", "sha256:a1")
    add_version(store, "cat", "cy", "sha256:c1")
    with pytest.raises(FieldFrozen, match=r"deadline .* has passed; its field is frozen"):
        tournament.mark_final(registry, "cup", "ann", "ace", "", DEADLINE)
    row = Tournaments(store).get("cup")
    assert row.phase is Phase.OPEN  # a refused mark changed nothing
    # A version stored after the deadline (before the driver noticed) does not enter:
    # the field is what was stored before it.
    late = Tournaments(store).get("cup")
    stamp = {v.version: v.created_at for v in store.versions("ace")}
    field = tournament.frozen_field(registry, late)
    assert field == ["bot:ace@sha256:a1", "bot:cat@sha256:c1", "house:random", "house:greedy"]
    assert all(t < DEADLINE for t in stamp.values())
    shifted = Tournaments(store).get("cup")
    early = type(shifted)(**{**vars(shifted), "deadline": min(stamp.values()) - timedelta(1)})
    assert tournament.frozen_field(registry, early) == ["house:random", "house:greedy"]


def test_a_bad_request_is_refused_and_nothing_stored(registry: Registry) -> None:
    with pytest.raises(SeasonSpecError, match="has passed already"):
        tournament.create(registry, request(deadline=T0 - timedelta(1)), "olga", T0)
    with pytest.raises(SeasonSpecError, match="no house bot"):
        tournament.create(registry, request(house=("nobody",)), "olga", T0)
    with pytest.raises(SeasonSpecError, match="finals per owner"):
        tournament.create(registry, request(finals_per_owner=0), "olga", T0)
    assert Tournaments(registry.store).all() == []
    tournament.create(registry, request(), "olga", T0)
    with pytest.raises(RegistryError, match="exists"):
        tournament.create(registry, request(), "olga", T0)


def play_out(registry: Registry, tournament_id: str, now: datetime) -> list[str]:
    """Tick until done, playing each season the driver makes here: what each tick said."""
    said = []
    for _ in range(200):
        step = tournament.tick(registry, None, tournament_id, "", now)
        said.append(step)
        if step in ("done", "cancelled"):
            return said
        if step == "reporting":  # the report's own thread stores it: wait for it, bounded
            assert tournament.REPORTS.join(60)
            continue
        row = Tournaments(registry.store).get(tournament_id)
        for season_id in tournament.season_ids(row):
            if not seasons.progress(registry.store, season_id).finished:
                seasons.run_here(registry.store, season_id)
    raise AssertionError(f"no end after 200 ticks: {said[-5:]}")


def test_phases_change_by_the_driver_alone_and_the_report_is_reproducible(
    registry: Registry,
) -> None:
    store = registry.store
    tournament.create(registry, request(), "olga", T0)
    book = Tournaments(store)
    assert tournament.tick(registry, None, "cup", "", DEADLINE - timedelta(seconds=1)) == "open"
    # Past the deadline, a reader sees it open still: only the driver's tick freezes it.
    assert book.get("cup").phase is Phase.OPEN
    after = DEADLINE + timedelta(seconds=3)
    assert tournament.tick(registry, None, "cup", "", after) == "frozen"
    row = book.get("cup")
    assert row.phase is Phase.FROZEN and row.frozen_at == after
    assert row.field == ("house:random", "house:greedy")
    assert tournament.tick(registry, None, "cup", "", after) == "qualifying"
    said = play_out(registry, "cup", after)
    row = book.get("cup")
    assert row.phase is Phase.DONE and said[-1] == "done" and row.report is not None
    assert row.state["stop"] in ("confident", "budget") and row.batches >= 1
    assert "cup-f1" in said
    again = tournament.recompute_report(store, row)
    assert again.to_json() == row.report["json"]
    assert again.to_csv() == row.report["csv"]
    assert again.to_csv("crosstable") == row.report["crosstable_csv"]
    # Once done, nothing moves it.
    assert tournament.tick(registry, None, "cup", "", after) == "done"
    # Every finals deal's tables share one seed, derived from the tournament's.
    for k in range(1, row.batches + 1):
        season = store.season(tournament.batch_season_id("cup", k))
        assert season is not None
        for m in store.scheduled(season.season_id):
            label = season.spec["deals"][m.spec["deal"]]
            assert m.spec["seed"] == tournament.deal_seed(7, label)


def test_a_field_too_small_cancels_and_the_organiser_cancels(registry: Registry) -> None:
    tournament.create(registry, request(house=("random",)), "olga", T0)
    assert tournament.tick(registry, None, "cup", "", DEADLINE) == "cancelled"
    assert Tournaments(registry.store).get("cup").phase is Phase.CANCELLED
    tournament.create(registry, request(tournament_id="cup2"), "olga", T0)
    with pytest.raises(PermissionDenied):
        tournament.cancel(registry, None, "cup2", "alice")
    assert tournament.cancel(registry, None, "cup2", "olga").phase is Phase.CANCELLED


def test_the_commands_create_show_and_report_on_a_local_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "cli.db")
    local = ["--store", db, "--server", ""]
    deadline = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    argv = ["tournament", "create", "open", "--game", GAME, "--deadline", deadline, "--seed", "3"]
    assert main([*argv, "--house", "random", "--house", "greedy", *local]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"tournament open ({GAME}, open): deadline ")
    assert main(["tournament", "report", "open", *local]) == 1
    assert "has no report yet (open)" in capsys.readouterr().err
    with Store.open(db) as store:
        registry = Registry(store)
        tournament.create(registry, request(tournament_id="cup"), "olga", T0)
        play_out(registry, "cup", DEADLINE)
    assert main(["tournament", "status", "cup", *local]) == 0
    out = capsys.readouterr().out
    assert "tournament cup (western-showdown-v1, done)" in out
    assert "field (2): house:random, house:greedy" in out
    assert main(["tournament", "report", "cup", *local]) == 0
    text = capsys.readouterr().out
    assert "final standings after" in text and "P(above next)" in text
    assert main(["tournament", "report", "cup", "--json", *local]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [s["entrant"] for s in data["standings"]] == ["house:greedy", "house:random"]
    assert main(["tournament", "report", "cup", "--csv", *local]) == 0
    assert capsys.readouterr().out.startswith("place,entrant,")


def test_reading_past_the_deadline_moves_nothing_only_the_driver_does(
    arena: Arena, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server with no queue runs no driver: its readers (gRPC, the JSON API, the page)
    see the tournament open past its deadline; one driver tick freezes it. Marks and
    submissions for it are refused as soon as the deadline has passed, nothing stored."""
    with arena.client("olga") as olga, arena.client("alice") as alice:
        alice.submit(write_bot(tmp_path / "early"), game=GAME, name="early")
        deadline = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
        server = ["--server", arena.address, "--token", arena.tokens["olga"]]
        argv = ["tournament", "create", "soon", "--game", GAME, "--deadline", deadline]
        assert main([*argv, "--house", "random", "--top-k", "2", *server]) == 0
        assert capsys.readouterr().out.startswith(f"tournament soon ({GAME}, open): deadline")
        (marked,) = alice.mark_final("soon", "early").my_finals
        assert marked.startswith("early@")
        with pytest.raises(ArenaClientError) as denied:
            olga.mark_final("soon", "early")
        assert denied.value.code == "PERMISSION_DENIED"
        with pytest.raises(ArenaClientError) as denied:
            alice.cancel_tournament("soon")
        assert denied.value.code == "PERMISSION_DENIED"
        while datetime.now(UTC) < datetime.fromisoformat(deadline):
            time.sleep(0.1)
        for _ in range(2):
            assert alice.tournament("soon").phase == "open"
            with urllib.request.urlopen(f"{arena.http}/tournament/soon", timeout=30) as r:
                assert "Submissions and final marks close in" in r.read().decode()
            with urllib.request.urlopen(f"{arena.http}/api/tournaments/soon", timeout=30) as r:
                assert json.loads(r.read())["phase"] == "open"
        with urllib.request.urlopen(f"{arena.http}/metrics", timeout=30) as r:
            assert 'saloon_tournaments{phase="open"} 1.0' in r.read().decode()
        with pytest.raises(ArenaClientError) as late:
            alice.mark_final("soon", "early", clear=True)
        assert late.value.code == "FAILED_PRECONDITION" and "frozen" in late.value.message
        with pytest.raises(ArenaClientError) as late:
            alice.submit(write_bot(tmp_path / "late2"), game=GAME, name="late2",
                         tournament="soon")  # fmt: skip
        assert late.value.code == "FAILED_PRECONDITION"
        assert [b.name for b in alice.bots(game=GAME)] == ["early"]
        with Store.open(arena.store_url) as store:
            registry = Registry(store)
            now = datetime.now(UTC)
            assert tournament.tick(registry, None, "soon", arena.store_url, now) == "frozen"
        info = alice.tournament("soon")
        assert info.phase == "frozen" and info.frozen_at
        assert main(["tournament", "status", "soon", *server]) == 0
        assert "field (2): bot:early@" in capsys.readouterr().out
        assert [ref.split("@")[0] for ref in info.field] == ["bot:early", "house:random"]
        assert olga.cancel_tournament("soon").phase == "cancelled"


def test_the_phase_flips_before_the_field_is_read_so_no_mark_lands_after_it(
    registry: Registry,
) -> None:
    """A mark sent just before the deadline and written after the driver flipped the phase
    is refused (the mark checks the stored phase under the row's lock); a driver that died
    between the flip and fixing the field leaves it to the next tick."""
    store = registry.store
    book = Tournaments(store)
    tournament.create(registry, request(), "olga", T0)
    add_version(store, "ace", "ann", "sha256:a1")
    assert book.advance("cup", Phase.OPEN, phase=Phase.FROZEN, frozen_at=DEADLINE)  # died
    with pytest.raises(FieldFrozen):
        book.set_mark("cup", "ann", "ace", "sha256:a1", 1, DEADLINE - timedelta(seconds=1))
    assert book.marks("cup") == []
    assert tournament.tick(registry, None, "cup", "", DEADLINE + timedelta(1)) == "frozen"
    row = book.get("cup")
    assert row.field == ("bot:ace@sha256:a1", "house:random", "house:greedy")
    assert row.frozen_at == DEADLINE and row.state["qualifying"] == "cup-q"


def test_a_request_round_trips_through_its_json_and_keeps_its_policy() -> None:
    asked = request(
        players=3, game="seas-of-strife-v1", options={},
        finals=tournament.FinalsSettings(top_k=4, table_sizes=(3, 4), duplicate=False),
        qualifying_rounds=0, finals_per_owner=3,
    )  # fmt: skip
    again = tournament.TournamentRequest.from_json(asked.to_json())
    assert again == asked
    policy = again.policy()
    assert policy.table_sizes == (3, 4) and policy.top_k == 4 and not policy.duplicate
    assert request().policy().table_sizes == (2,)  # western's two seats
    with pytest.raises(SeasonSpecError, match="time zone"):
        tournament.check_request(request(deadline=datetime(2030, 1, 1)))
    with pytest.raises(SeasonSpecError, match="at most 40"):
        tournament.check_request(request(tournament_id="x" * 41))


def test_a_batch_made_then_a_failed_match_recorded_is_counted_as_made_not_planned_again(
    registry: Registry, caplog: pytest.LogCaptureFixture
) -> None:
    """A driver made finals batch 2 and died before counting it; then a batch-1 match that
    had failed for good was recorded (a retry). Planning batch 2 again from the results now
    gives other tables: it used to raise SeasonConflict on every tick. The batch is a pure
    function of the results before it, so it is taken as made, once, and the finals go on."""
    store = registry.store
    # A budget of 6 by batches of 4: batch 2 has 6 - (finals results so far) tables.
    finals = tournament.FinalsSettings(budget=6, batch_matches=4, top_k=2, confidence=0.99999)
    tournament.create(registry, request(finals=finals), "olga", T0)
    book = Tournaments(store)
    after = DEADLINE + timedelta(seconds=1)
    for _ in range(20):
        if tournament.tick(registry, None, "cup", "", after) == "cup-f1":
            break
        for season_id in tournament.season_ids(book.get("cup")):
            seasons.run_here(store, season_id)
    first, *rest = [MatchSpec.from_json(m.spec) for m in store.scheduled("cup-f1")]
    store.mark_match(first.match_id, MatchStatus.FAILED)  # failed for good
    for spec in rest:
        run_match(spec, store, worker="local")
    store.settle_season("cup-f1")
    counted = book.get("cup")
    assert tournament.tick(registry, None, "cup", "", after) == "cup-f2"
    made = store.season("cup-f2")
    assert made is not None
    # The driver that made it died before counting it: the row as it was before.
    assert book.advance("cup", Phase.FINALS, expect_batches=2, batches=1, state=counted.state)
    run_match(first, store, worker="local")  # the failed match, recorded late
    assert first.match_id in {r.match_id for r in store.results(season_id="cup-f1")}
    # Planned again now, batch 2 would be another batch (one table fewer).
    results, qualifying = tournament.placings(store, book.get("cup"))
    again = plan_batch(
        ("house:random", "house:greedy"), results, request(finals=finals).policy(), 7, 1,
        finals_from=qualifying,
    )  # fmt: skip
    assert isinstance(again, Batch) and len(again.tables) == len(store.scheduled("cup-f2")) - 1
    with caplog.at_level("WARNING", logger="saloon.arena.tournament"):
        assert tournament.tick(registry, None, "cup", "", after) == "cup-f2"
        assert tournament.tick(registry, None, "cup", "", after) == "playing"
        assert tournament.drive(registry, None, "", after) == {"cup": "playing"}
    row = book.get("cup")
    assert row.batches == 2 and row.state["field_now"] == made.spec["field"]
    assert row.state["standing"] == made.spec["standing"]
    stored = store.season("cup-f2")
    assert stored is not None and stored.spec == made.spec  # not planned again
    said = [r.getMessage() for r in caplog.records]
    assert sum("made but not counted" in m for m in said) == 1, said
    assert not any("SeasonConflict" in m or "its tick" in m for m in said), said
    assert play_out(registry, "cup", after)[-1] == "done"


def test_a_ladder_tick_runs_while_a_long_report_computes(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finals stop: the report (up to a minute at 100,000 results) is computed by a
    thread of its own, the tournament reporting until it is stored; the driver's ticks
    (every ladder's and tournament's) go on meanwhile. The report here is held until the
    ladder has made its next batch, then stored, the same as computed again."""
    import threading

    from saloon.arena import continuous

    store = registry.store
    ladder = continuous.ContinuousRequest(
        ladder_id="lad", game=GAME, house=("random", "greedy"), sandbox=SandboxKind.PROCESS
    )
    continuous.start(registry, None, ladder, "olga", "")
    tournament.create(registry, request(), "olga", T0)
    entered, release = threading.Event(), threading.Event()
    real = tournament.REPORTS.compute

    def long_report(store: Store, row: object) -> object:
        entered.set()
        assert release.wait(60)
        return real(store, row)

    monkeypatch.setattr(tournament.REPORTS, "compute", long_report)
    after = DEADLINE + timedelta(seconds=1)
    book = Tournaments(store)
    for _ in range(50):
        if tournament.tick(registry, None, "cup", "", after) == "reporting":
            break
        for season_id in tournament.season_ids(book.get("cup")):
            seasons.run_here(store, season_id)
    assert entered.wait(10) and book.get("cup").phase is Phase.REPORTING
    try:
        # The driver's tick while the report computes: the tournament says reporting
        # (one thread for it, not one a tick), and the ladder plays on: batch 2 is made.
        started = time.monotonic()
        assert tournament.drive(registry, None, "", after) == {"cup": "reporting"}
        assert continuous.drive(registry, None, "") == {"lad": "playing"}
        seasons.run_here(store, "lad-b1")
        assert continuous.drive(registry, None, "") == {"lad": "lad-b2"}
        assert tournament.drive(registry, None, "", after) == {"cup": "reporting"}
        assert time.monotonic() - started < 30  # never waited for the report
        assert tournament.REPORTS.running() == ["cup"] and book.get("cup").report is None
        assert tournament.status(registry, book.get("cup"))["phase"] == "reporting"
    finally:
        release.set()
    assert tournament.REPORTS.join(60)
    row = book.get("cup")
    assert row.phase is Phase.DONE and row.report is not None
    assert row.report == tournament.stored_report(tournament.recompute_report(store, row))
    assert tournament.tick(registry, None, "cup", "", after) == "done"
