"""The job of one match: play it from its spec and record it once (RQ or in-process).

:func:`run_match` is the whole job; :func:`match_job` is its RQ entry point (the spec as
JSON, the store URL). Bot faults are inside the record, so they never fail a job; what
fails a job is infrastructure (the store unreachable, a sandbox that cannot start), and
RQ retries it with backoff (saloon.worker.queue.season_queue). Recording is idempotent by
match id (``Store.record_result`` writes once), so a retried or duplicated job changes
nothing.
"""

from __future__ import annotations

import gc
import logging
import threading
from enum import StrEnum
from types import TracebackType
from typing import Any

from saloon.worker.errors import BotRefError, SeasonSpecError, WorkerError
from saloon.worker.seasons.play import PlayedMatch, StoredResolver, play_spec
from saloon.worker.seasons.spec import MatchSpec
from saloon.worker.store.config import resolve_url
from saloon.worker.store.rows import MatchStatus
from saloon.worker.store.store import Store

log = logging.getLogger(__name__)

#: Played matches whose recording failed (store unavailable), kept so that a retry on the
#: same worker records them instead of playing them again. Bounded: oldest dropped first.
MAX_UNRECORDED = 64

#: A match id no season schedules (season ids never contain '/'): the warm-up's claim.
WARM_UP_MATCH_ID = "saloon/warm-up"

_stores: dict[str, Store] = {}
_stores_lock = threading.Lock()
_unrecorded: dict[str, PlayedMatch] = {}


class JobOutcome(StrEnum):
    """What one run of a match job did."""

    RECORDED = "recorded"
    #: Someone recorded the match already (a retried or duplicated job): nothing written.
    DUPLICATE = "duplicate"
    #: The match or its season was cancelled: not played.
    CANCELLED = "cancelled"
    #: A seat names a bot this worker cannot run: marked failed, never retried.
    REFUSED = "refused"


def store_for(url: str) -> Store:
    """The open store at ``url`` for this process (opened once, kept warm)."""
    url = resolve_url(url)  # the worker's --store and the jobs' URL name one store
    with _stores_lock:
        store = _stores.get(url)
        if store is None:
            store = _stores[url] = Store.open(url)
        return store


def warm_up(store_url: str | None = None) -> None:
    """Pay a worker's one-time costs before its first job, not inside it.

    Imports every game and its house bots (the first seat of a game otherwise imports
    them) and, given ``store_url``, opens that store and runs the claim once on a match id
    no season schedules (connects, checks the schema, compiles the hot statements, else
    all done inside the first job). A store that cannot be reached now is only logged:
    the first job opens it (or fails and retries) as before.

    Last, everything loaded so far (modules, the engine, the pool) is moved out of the
    garbage collector's sight (``gc.freeze``): matches allocate heavily, and every full
    collection would otherwise walk these long-lived objects again. docs/seasons.md has
    what each of these saves.
    """
    from saloon.games import game_ids, get_game
    from saloon.sdk.house import house_bots

    for game_id in game_ids():
        try:
            get_game(game_id)
            house_bots(game_id)
        except Exception as exc:  # a broken plug-in fails its own matches, not the worker
            log.warning("warm-up: game %s: %s", game_id, exc)
    if store_url:
        try:
            store_for(store_url).claim_match(WARM_UP_MATCH_ID)
        except WorkerError as exc:
            log.warning("warm-up: store %s: %s", store_url, exc)
    gc.collect()
    gc.freeze()


def close_stores() -> None:
    """Close every store this process opened (a worker shutting down)."""
    with _stores_lock:
        for store in _stores.values():
            store.close()
        _stores.clear()


def stored_resolver(store: Store) -> StoredResolver:
    """Seats ``bot:NAME@VERSION`` from the store's package registry: (local path, version)."""
    from saloon.worker.sandbox.stored import StoredBots, parse_ref

    registry = StoredBots(store)

    def resolve(ref: str) -> tuple[str, str]:
        return registry.unpacked(ref), parse_ref(ref)[1]

    return resolve


def run_match(spec: MatchSpec, store: Store, worker: str = "") -> JobOutcome:
    """Play the scheduled match of ``spec`` unless it is done or cancelled; record it once.

    Two store round trips per match: claim it (RUNNING, an attempt; or DONE / CANCELLED
    and left alone), record the result. The season's own status is settled by whoever
    reads its progress (saloon.worker.seasons.run.progress), not by every job.
    """
    played = _unrecorded.pop(spec.match_id, None)
    if played is None:
        status = store.claim_match(spec.match_id, worker)
        if status is None:
            raise SeasonSpecError(f"match {spec.match_id} is not in any season's schedule")
        if status is MatchStatus.DONE:
            return JobOutcome.DUPLICATE
        if status is MatchStatus.CANCELLED:  # cancelling a season cancels its waiting matches
            return JobOutcome.CANCELLED
        try:
            played = play_spec(spec, stored_resolver(store))
        except BotRefError as exc:
            store.mark_match(spec.match_id, MatchStatus.FAILED, str(exc))
            return JobOutcome.REFUSED
    try:
        record = played.record
        wrote = store.record_result(spec.match_id, record.to_json(), played.stderr, parsed=record)
    except WorkerError:
        # Keep the played match: the retry records it without playing it again.
        while len(_unrecorded) >= MAX_UNRECORDED:
            _unrecorded.pop(next(iter(_unrecorded)))
        _unrecorded[spec.match_id] = played
        raise
    return JobOutcome.RECORDED if wrote else JobOutcome.DUPLICATE


def match_job(spec_json: dict[str, Any], store_url: str) -> str:
    """RQ entry point: play and record the match of ``spec_json`` in the store at ``store_url``."""
    from rq import get_current_job

    spec = MatchSpec.from_json(spec_json)
    job = get_current_job()
    worker = (job.worker_name or "") if job is not None else ""
    outcome = run_match(spec, store_for(store_url), worker=worker)
    log.info("%s: %s", spec.match_id, outcome.value)
    return outcome.value


def on_match_failure(
    job: Any,
    connection: Any,
    exc_type: type[BaseException] | None,
    exc: BaseException | None,
    tb: TracebackType | None,
) -> None:
    """RQ failure callback (every failed attempt): the store shows QUEUED while retries are
    left, FAILED once they are spent."""
    del connection, tb
    retrying = bool(job.retries_left and job.retries_left > 0)
    status = MatchStatus.QUEUED if retrying else MatchStatus.FAILED
    name = exc_type.__name__ if exc_type is not None else "failure"
    detail = f"{'retrying after ' if retrying else ''}{name}: {exc}"[:500]
    log.warning("%s: attempt failed (%s)", job.id, detail)
    try:
        store_for(str(job.args[1])).mark_match(job.id, status, detail)
    except WorkerError as err:  # the store may be what failed; the retry will tell
        log.warning("%s: could not mark the store: %s", job.id, err)
