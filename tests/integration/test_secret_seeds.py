"""Issue 32, "Every deal can be predicted from public data", tried again on a real server.

A real arena (gRPC and web on loopback ports, PostgreSQL, Redis, real worker processes,
the process sandbox) runs a plain ladder season, a duplicate-deal season and a continuous
ladder with duplicate deals, none given a seed. A bot (``seedbot``) reads the raw
MatchStart it is sent, as a cheater would, and writes the match id and seed it is given
to its stderr (which the store keeps). The test collects every public byte while they run
(the JSON API, the pages, gRPC answers to a non-organiser) and every seed a bot was given
(qualification included), then tries the attack that worked before: every public number
and 0, as a season, ladder or match seed, through derive_seed with every label Saloon
uses. No match seed, no deal and no bot's seed is reproduced. Once over, each seed is
published, every match seed derives from it, and every published record's deals verify.
A sibling test does the same for a running tournament (its seed's labels: ``qualifying``
and every finals ``deal:`` label).
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from saloon.arena.registry import Registry
from saloon.referee.record import MatchRecord
from saloon.referee.replay import verify, verify_deals
from saloon.referee.seeds import bot_seed, derive_seed, text_seed
from saloon.sdk.client import ArenaClient
from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.store.store import Store
from tests.databases import postgres_schema

from .arena_fixtures import Arena, start_arena, write_bot
from .season_fixtures import Workers

GAME = "seizure-v1"
HOUSE = ["random", "greedy"]
#: A bot that reads the raw MatchStart (as a cheater would: the SDK's MatchInfo has no
#: match id) and writes what it was given to stderr.
SEED_BOT = """\
import sys

from saloon.sdk import Bot
from saloon.sdk import runtime as _runtime

_start = _runtime.MatchSession._start


def _spy(self, start):
    print(f"SEEDWATCH {start.match_id} {start.seed}", file=sys.stderr, flush=True)
    return _start(self, start)


_runtime.MatchSession._start = _spy


class Watcher(Bot):
    def act(self, decision):
        return decision.legal[0]
"""
WATCH = re.compile(r"SEEDWATCH (\S+) (\d+)")
#: How long each phase may take on a loaded 2-core machine.
PHASE_S = 90


@pytest.fixture
def queue(redis_url: str) -> Iterator[SeasonQueue]:
    q = SeasonQueue(connect(redis_url), f"test-seeds-{uuid.uuid4().hex[:8]}")
    yield q
    q.purge()


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def public_bytes(arena: Arena, alice: ArenaClient, store: Store) -> list[bytes]:
    """Everything anyone can read now: every page and API answer about the seasons, the
    ladder, the bots and every recorded match, and gRPC answers to a non-organiser."""
    paths = ["/", "/seasons", "/ladders", "/api/index", "/api/seasons", "/api/games",
             "/api/matches?limit=200", "/bot/seedbot", "/api/bots/seedbot",
             "/ladder/cl", "/api/ladders/cl", "/leaderboard/" + GAME,
             f"/api/leaderboard/{GAME}"]  # fmt: skip
    for season in store.seasons():
        s = season.season_id
        paths += [f"/season/{s}", f"/api/seasons/{s}", f"/api/seasons/{s}/progress",
                  f"/api/seasons/{s}/board"]  # fmt: skip
    for result in store.results():
        m = result.match_id
        paths += [f"/match/{m}", f"/api/matches/{m}", f"/api/matches/{m}/replay",
                  f"/api/matches/{m}/replay?hands=all", f"/api/matches/{m}/record"]  # fmt: skip
    out = []
    for path in paths:
        status, body = _get(arena.http + path)
        assert status in (200, 403, 404), (path, status, body[:300])
        out.append(body)
    info = alice.ladder("cl")
    out += [info.SerializeToString(), info.settings_json.encode()]
    for season in store.seasons():
        out.append(json.dumps([str(m) for m in alice.matches(season.season_id)]).encode())
    return out


def numbers(chunks: Iterable[bytes]) -> set[int]:
    """Every integer written in ``chunks`` (decimal, and 16-hex-digit words), and 0."""
    found = {0}
    for chunk in chunks:
        found.update(int(x) for x in re.findall(rb"\d+", chunk) if len(x) <= 20)
        found.update(int(x, 16) for x in re.findall(rb"[0-9a-f]{16}", chunk))
    return found


def given(store: Store, match_ids: Iterable[str]) -> dict[tuple[str, int], tuple[str, int]]:
    """(match, seat) -> (match id, seed) seedbot was given there (from its stderr)."""
    out = {}
    for match_id in match_ids:
        for seat in range(2):
            hit = WATCH.search(store.stderr(match_id, seat) or "")
            if hit:
                out[(match_id, seat)] = (hit.group(1), int(hit.group(2)))
    return out


def season_labels(n: int, batches: int) -> list[str]:
    """Every label a season or ladder seed fans out through (saloon.referee.seeds)."""
    labels = [f"{kind}:{i}" for kind in ("match", "deal", "repeat") for i in range(n)]
    labels += [f"batch:{k}" for k in range(batches + 2)]
    labels += [f"batch:{k}:{kind}:{t}" for k in range(batches + 2) for kind in ("match", "deal")
               for t in range(n)]  # fmt: skip
    return labels


def candidate_seeds(public: set[int], n: int, batches: int) -> set[int]:
    """Every match seed the attack can make of ``public``: each number as a match seed,
    or as a season or ladder seed through every label (twice: a schedule's seasons)."""
    labels = season_labels(n, batches)
    first = {derive_seed(p, label) for p in public for label in labels}
    repeat = {derive_seed(p, f"repeat:{i}") for p in public for i in range(1, 4)}
    second = {derive_seed(r, label) for r in repeat for label in labels}
    return public | first | second


def wait_for(what: str, check: Any, workers: Workers, store: Store) -> None:
    deadline = time.monotonic() + PHASE_S
    while not check():
        if time.monotonic() > deadline:
            states = {s.season_id: (s.status.value, store.progress(s.season_id).counts)
                      for s in store.seasons() if not s.season_id.startswith("cl-")}  # fmt: skip
            raise AssertionError(f"{what}: {states}\n{workers.logs()[-3000:]}")
        time.sleep(0.3)


def test_deals_cannot_be_predicted_from_public_seeds(
    redis_url: str, queue: SeasonQueue, tmp_path: Path
) -> None:
    with postgres_schema("seeds") as url:
        arena = start_arena(url, redis_url, queue_name=queue.queue.name)
        workers = Workers(tmp_path)
        try:
            with (
                arena.client("olga") as olga,
                arena.client("alice") as alice,
                Store.open(url) as store,
            ):
                _play_and_attack(arena, olga, alice, store, workers, redis_url, queue, tmp_path)
        finally:
            workers.stop()
            arena.server.stop(0)


def _play_and_attack(
    arena: Arena,
    olga: ArenaClient,
    alice: ArenaClient,
    store: Store,
    workers: Workers,
    redis_url: str,
    queue: SeasonQueue,
    tmp_path: Path,
) -> None:
    # The qualification match: an opaque id, a seed not named by the files.
    reply = alice.submit(write_bot(tmp_path / "seedbot", SEED_BOT), game=GAME, name="seedbot")
    assert reply.accepted, reply
    q_id, q_seed = WATCH.search(reply.qualification.stderr).groups()  # type: ignore[union-attr]
    assert q_id.startswith("m-") and "qualify" not in q_id and "seedbot" not in q_id
    version = store.versions("seedbot")[-1]
    stored_q = int(version.meta["qualification"]["seed"])
    qualify_id = version.meta["qualification"]["match_id"]
    q_seat = int(version.meta["qualification"]["seat"])
    assert q_seat == derive_seed(stored_q, "qualify-seat") % 2  # picked by the secret seed
    assert bot_seed(stored_q, qualify_id, q_seat) == int(q_seed)  # reproducible from the store
    old = text_seed(reply.version)  # what the files alone named before
    assert int(q_seed) not in {bot_seed(old, qualify_id, 0), derive_seed(old, "seat:0")}

    # Phase A: two seasons made, not started; a continuous ladder whose first batch waits
    # for a worker. Nobody chose a seed.
    olga.create_season(GAME, house=HOUSE, season_id="plain")
    olga.create_season(GAME, house=HOUSE, season_id="dup", duplicate=True)
    olga.start_ladder("cl", GAME, players=2, house=HOUSE, duplicate=True, batch=2)
    seeds = {s: store.season(s).spec["seed"] for s in ("plain", "dup")}  # type: ignore[union-attr]
    registry = Registry(store)
    ladder_row = registry.continuous("cl")
    assert ladder_row is not None
    ladder_seed = int(ladder_row.spec["request"]["seed"])
    assert 0 not in (*seeds.values(), ladder_seed) and len({*seeds.values(), ladder_seed}) == 3
    snapshots = {"A": public_bytes(arena, alice, store)}
    # The organiser alone sees the ladder's seed while it runs.
    assert json.loads(olga.ladder("cl").settings_json)["seed"] == ladder_seed
    assert json.loads(alice.ladder("cl").settings_json)["seed"] is None

    def all_recorded(season_id: str) -> bool:
        progress = store.progress(season_id)
        return progress.total > 0 and progress.done == progress.total

    # Phase B: the duplicate season plays out and the ladder plays batch after batch;
    # the plain season is still to be played.
    workers.start(redis_url, queue.queue.name)
    workers.start(redis_url, queue.queue.name)
    olga.start_season("dup")

    def dup_over_and_ladder_on() -> bool:
        row = registry.continuous("cl")
        return all_recorded("dup") and bool(row and row.batches >= 3)

    wait_for("dup done, ladder at batch 3", dup_over_and_ladder_on, workers, store)
    snapshots["B"] = public_bytes(arena, alice, store)
    made_by_b = registry.continuous("cl").batches  # type: ignore[union-attr]

    # Phase C: the plain season plays; then the ladder stops and settles.
    olga.start_season("plain")

    wait_for("plain done", lambda: all_recorded("plain"), workers, store)
    olga.stop_ladder("cl")

    def ladder_settled() -> bool:
        row = registry.continuous("cl")
        assert row is not None
        return all_recorded(f"cl-b{row.batches}")

    wait_for("ladder settled", ladder_settled, workers, store)
    batches = registry.continuous("cl").batches  # type: ignore[union-attr]

    # -- the attack ----------------------------------------------------------------------
    # The ground truth (from the store, not public): every match seed and its deal.
    seasons = ["plain", "dup", *(f"cl-b{k}" for k in range(1, batches + 1))]
    scheduled = {s: store.scheduled(s) for s in seasons}
    match_seed = {m.match_id: int(m.spec["seed"]) for ms in scheduled.values() for m in ms}
    # A season match's bots are seeded by its place in the season (play.season_seed_label).
    label = {m.match_id: f"#{int(m.spec['index'])}" for ms in scheduled.values() for m in ms}
    gifts = given(store, match_seed)
    for season_id in seasons:  # seedbot played in every season
        assert any(m.startswith(f"{season_id}-") for m, _ in gifts), season_id
    gifts[(qualify_id, 0)] = (q_id, int(q_seed))
    # Every seed given is its own (the match id, the seat), and opaque ids are distinct.
    for (match_id, seat), (shown_id, seed) in gifts.items():
        if match_id != qualify_id:
            assert seed == bot_seed(match_seed[match_id], label[match_id], seat)
        assert shown_id.startswith("m-") and match_id not in shown_id
    assert len({g for g, _ in gifts.values()}) == len({s for _, s in gifts.values()}) == len(gifts)
    # What was public while each was still to be played: A for plain's, dup's and every
    # batch's deals; B (dup and the first batches over, their records published) for
    # plain's and the deals of the batches made after B.
    public_a = numbers(snapshots["A"])
    public_b = numbers(snapshots["B"])
    n = max(len(ms) for ms in scheduled.values())
    unplayed = {
        "A": set(match_seed),
        "B": {m.match_id for s in seasons if s == "plain" or
              (s.startswith("cl-b") and int(s[4:]) > made_by_b) for m in scheduled[s]},
    }  # fmt: skip
    assert batches > made_by_b  # the ladder went on after B
    for phase, public in (("A", public_a), ("B", public_b)):
        targets = {match_seed[m] for m in unplayed[phase]}
        # The seeds bots were given in those matches (and in the qualification match).
        bot_seeds = {s for (m, _), (_, s) in gifts.items() if m in unplayed[phase] | {qualify_id}}
        tried = candidate_seeds(public | bot_seeds, n, batches)
        found = targets & tried
        assert not found, f"phase {phase}: match seeds computed from public data: {found}"
        chance = {derive_seed(t, "chance") for t in targets}
        assert not chance & tried, f"phase {phase}: a deal's chance seed was computed"
        # A bot holding its own seed tries every public number as its match seed, with
        # today's derivation (every match id, seat) and the old one ("seat:i").
        named = [*match_seed, *label.values(), qualify_id]
        mine = {bot_seed(c, m, s) for c in public for m in named for s in range(2)}
        mine |= {derive_seed(c, f"seat:{s}") for c in public for s in range(2)}
        assert not mine & bot_seeds, "a bot's seed was matched to a public number"
        assert not candidate_seeds(public, n, batches) & bot_seeds, "a bot's seed was derived"
    # Phase B is the running ladder's: its own seed and later batches' stay secret.
    assert ladder_seed not in public_b and seeds["plain"] not in public_b
    assert seeds["dup"] in public_b  # over: published

    # -- once over: published, derivable, verifiable ---------------------------------------
    def api(path: str) -> Any:
        status, body = _get(arena.http + path)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    assert api("/api/ladders/cl")["settings"]["seed"] == ladder_seed
    for season_id in seasons:
        page = api(f"/api/seasons/{season_id}")
        published = page["spec"]["seed"]
        assert published == (ladder_seed if season_id.startswith("cl-") else seeds[season_id])
        for m in page["matches"]:
            if season_id.startswith("cl-b"):
                k = int(season_id[4:])
                label = f"batch:{k}:deal:{m['deal']}"
            else:
                label = f"deal:{m['deal']}" if m["deal"] is not None else f"match:{m['index']}"
            record = MatchRecord.from_json(api(f"/api/matches/{m['match_id']}/record"))
            assert record.seed == derive_seed(published, label) == match_seed[m["match_id"]]
            verify(record)
            assert verify_deals(record) > 0


def test_a_seed_and_the_records_are_published_when_the_last_match_is_recorded(
    tmp_path: Path,
) -> None:
    """On a real web server: while a season has a match to play, its seed is null and a
    recorded match's record is refused (403); once every match is recorded (its status
    not settled yet) the seed is shown, the records are served, and they verify. A
    cancelled season's seed is shown once no match of it still runs."""
    from saloon.arena.web.app import build_app
    from saloon.arena.web.serve import WebServer
    from saloon.referee.match import play_local
    from saloon.worker.seasons import run as seasons
    from saloon.worker.seasons.schedule import SeasonSpec, expand
    from saloon.worker.store.rows import MatchStatus

    store = Store.open(str(tmp_path / "web.db"))
    spec = SeasonSpec("sec", GAME, ("house:random", "house:greedy"), seats=2, seed=987654321)
    specs = seasons.create(store, spec)
    cancelled = SeasonSpec("gone", GAME, ("house:random", "house:greedy"), seats=2, seed=5551)
    seasons.create(store, cancelled)
    server = WebServer(("127.0.0.1", 0), build_app(store))
    server.start()
    base = f"http://127.0.0.1:{server.port}"
    try:

        def record(i: int) -> None:
            m = specs[i]
            played = play_local(GAME, list(m.seats), m.seed)
            played.match_id = m.match_id
            store.record_results([store.prepare_result(m.match_id, played.to_json(), {})])

        def shown(season_id: str) -> Any:
            status, body = _get(f"{base}/api/seasons/{season_id}")
            assert status == 200
            return json.loads(body)["spec"]["seed"]

        record(0)
        assert shown("sec") is None
        status, body = _get(f"{base}/api/matches/{specs[0].match_id}/record")
        assert status == 403 and b"published when its season is over" in body
        for i in range(1, len(specs)):
            record(i)
        assert store.season("sec").status.value == "created"  # type: ignore[union-attr]
        assert shown("sec") == 987654321
        for m in expand(spec):
            status, body = _get(f"{base}/api/matches/{m.match_id}/record")
            assert status == 200
            published = MatchRecord.from_json(json.loads(body))
            assert published.seed == m.seed and verify_deals(published) > 0
        # Cancelled with a match still running: hidden until that one is over.
        store.mark_match("gone-0", MatchStatus.RUNNING)
        seasons.cancel(store, "gone")
        assert shown("gone") is None
        store.mark_match("gone-0", MatchStatus.FAILED, "worker lost")
        assert shown("gone") == 5551
    finally:
        server.stop()
        store.close()


def tournament_public_bytes(arena: Arena, alice: ArenaClient, store: Store) -> list[bytes]:
    """Everything anyone can read now about the tournament ``cup``: its pages and API
    answers, its seasons' and recorded matches', and gRPC answers to a non-organiser."""
    paths = ["/", "/seasons", "/tournaments", "/tournament/cup", "/api/tournaments",
             "/api/tournaments/cup", "/api/tournaments/cup/report.json",
             "/api/tournaments/cup/report.csv", "/api/tournaments/cup/crosstable.csv",
             "/api/seasons", "/api/matches?limit=200", "/bot/seedbot",
             "/api/bots/seedbot"]  # fmt: skip
    for season in store.seasons():
        s = season.season_id
        paths += [f"/season/{s}", f"/api/seasons/{s}", f"/api/seasons/{s}/progress",
                  f"/api/seasons/{s}/board"]  # fmt: skip
    for result in store.results():
        m = result.match_id
        paths += [f"/match/{m}", f"/api/matches/{m}", f"/api/matches/{m}/replay",
                  f"/api/matches/{m}/replay?hands=all", f"/api/matches/{m}/record"]  # fmt: skip
    out = []
    for path in paths:
        status, body = _get(arena.http + path)
        assert status in (200, 403, 404), (path, status, body[:300])
        out.append(body)
    info = alice.tournament("cup")
    out += [info.SerializeToString(), info.settings_json.encode(), info.state_json.encode()]
    for season in store.seasons():
        out.append(json.dumps([str(m) for m in alice.matches(season.season_id)]).encode())
    return out


def test_a_tournaments_deals_cannot_be_predicted_from_public_seeds(
    redis_url: str, queue: SeasonQueue, tmp_path: Path
) -> None:
    """The attack above on a running tournament (no seed given: the server draws it):
    seedbot enters, the qualifying season and the finals play on a real server and
    worker; at each step (open, qualifying, each finals batch) every public byte and
    every seed a bot was given are tried as the tournament's seed through its labels
    (``qualifying``, every finals ``deal:`` label) and as a season's through the season
    labels. No deal still to be played is reproduced; once over the seed is published and
    every record verifies with it."""
    from datetime import UTC, datetime, timedelta

    from saloon.arena.tournaments import Tournaments

    with postgres_schema("tseeds") as url:
        arena = start_arena(url, redis_url, queue_name=queue.queue.name)
        workers = Workers(tmp_path)
        try:
            with (
                arena.client("olga") as olga,
                arena.client("alice") as alice,
                Store.open(url) as store,
            ):
                seedbot = write_bot(tmp_path / "seedbot", SEED_BOT)
                assert alice.submit(seedbot, game=GAME, name="seedbot").accepted
                workers.start(redis_url, queue.queue.name)
                deadline = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
                olga.create_tournament(
                    "cup", GAME, deadline, house=HOUSE, players=2, top_k=3, confidence=0.999,
                    budget=12, batch_matches=6, resamples=50, qualifying_rounds=1,
                )  # fmt: skip
                book = Tournaments(store)
                snapshots: list[tuple[set[str], list[bytes]]] = []
                steps: set[tuple[str, int]] = set()
                bound = time.monotonic() + 3 * PHASE_S
                while True:
                    assert time.monotonic() < bound, workers.logs()[-3000:]
                    row = book.get("cup")
                    step = (row.phase.value, row.batches)
                    if row.phase.over:
                        break
                    if step not in steps:  # each phase and batch once
                        steps.add(step)
                        # The public bytes first, then what was recorded: a match recorded
                        # meanwhile (the last of the qualifying, whose season's seed is then
                        # published) is no target, and every target was unplayed all along.
                        public = tournament_public_bytes(arena, alice, store)
                        recorded = {r.match_id for r in store.results()}
                        snapshots.append((recorded, public))
                    time.sleep(0.2)
                assert row.phase.value == "done", row.state
                done = alice.tournament("cup")
                seed = json.loads(done.settings_json)["seed"]
                assert isinstance(seed, int)
                _attack_tournament(arena, store, seed, snapshots)
        finally:
            workers.stop()
            arena.server.stop(0)


def _attack_tournament(
    arena: Arena, store: Store, seed: int, snapshots: list[tuple[set[str], list[bytes]]]
) -> None:
    from saloon.arena.tournaments import Tournaments

    row = Tournaments(store).get("cup")
    seasons = ["cup-q", *(f"cup-f{k}" for k in range(1, row.batches + 1))]
    scheduled = {s: store.scheduled(s) for s in seasons}
    match_seed = {m.match_id: int(m.spec["seed"]) for ms in scheduled.values() for m in ms}
    deals = sorted({str(d) for s in seasons[1:] for d in store.season(s).spec["deals"]})  # type: ignore[union-attr]
    assert deals and row.batches >= 1
    gifts = given(store, match_seed)
    assert gifts  # seedbot played: its own seeds are tried too
    bot_seeds = {s for _, s in gifts.values()}
    n = max(len(ms) for ms in scheduled.values())
    # Every label a tournament's seed fans out through, generously (future batches too).
    labels = ["qualifying", *(f"deal:{d}" for d in deals)]
    labels += [f"deal:finals:{k}:{t}" for k in range(row.batches + 2) for t in range(n)]
    assert len(snapshots) >= 3, [len(r) for r, _ in snapshots]  # open, qualifying, a batch
    memo: dict[int, set[int]] = {}

    def tries(p: int) -> set[int]:
        """What the attack makes of one number: a tournament's seed through its labels,
        a season's (the qualifying season's too) through the season labels, a match's."""
        if p not in memo:
            memo[p] = {derive_seed(p, label) for label in labels} | candidate_seeds(
                {p, derive_seed(p, "qualifying")}, n, row.batches
            )
        return memo[p]

    for recorded, chunks in snapshots:
        unplayed = set(match_seed) - recorded
        if not unplayed:
            continue
        targets = {match_seed[m] for m in unplayed}
        public = numbers(chunks) | bot_seeds
        assert seed not in public, "the tournament's seed was public while it ran"
        tried = set().union(*(tries(p) for p in public))
        found = targets & tried
        assert not found, f"deals still to be played computed from public data: {found}"
        chance = {derive_seed(t, "chance") for t in targets}
        assert not chance & tried, "a deal's chance seed was computed"
    # The control: given the tournament's seed, the same attack makes every deal.
    assert set(match_seed.values()) <= tries(seed)

    # -- once over: published, derivable, verifiable ---------------------------------------
    def api(path: str) -> Any:
        status, body = _get(arena.http + path)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    assert api("/api/tournaments/cup")["settings"]["seed"] == seed
    verified = 0
    for season_id in seasons:
        page = api(f"/api/seasons/{season_id}")
        for m in page["matches"]:
            if season_id == "cup-q":
                q = derive_seed(seed, "qualifying")
                assert page["spec"]["seed"] == q
                label = f"deal:{m['deal']}" if m["deal"] is not None else f"match:{m['index']}"
                expected = derive_seed(q, label)
            else:
                assert page["spec"]["seed"] == seed
                expected = derive_seed(seed, f"deal:{page['spec']['deals'][m['deal']]}")
            record = MatchRecord.from_json(api(f"/api/matches/{m['match_id']}/record"))
            assert record.seed == expected == match_seed[m["match_id"]]
            verify(record)
            assert verify_deals(record) > 0
            verified += 1
    assert verified == len(match_seed)
