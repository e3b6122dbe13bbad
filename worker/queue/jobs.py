"""The job of one match: play it from its spec and record it once (RQ or in-process).

:func:`run_match` is the whole job; :func:`match_job` is its RQ entry point (the spec as
JSON, the store URL). Bot faults are inside the record, so they never fail a job; what
fails a job is infrastructure, and never counts against the match: a job that failed
only because the store was away (:func:`platform_away`) goes back to its queue, no retry
spent, and its worker waits for the store (saloon.worker.queue.worker, outages); any
other (a sandbox that cannot start, a timeout) RQ retries with backoff
(saloon.worker.queue.season_queue). Recording is idempotent by
match id (``Store.record_results`` writes each once), so a retried or duplicated job changes
nothing.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
import time
from enum import StrEnum
from types import TracebackType
from typing import Any

from saloon.worker.errors import (
    BotRefError,
    RedisLostAtStart,
    SeasonSpecError,
    StoreUnavailable,
    WorkerError,
)
from saloon.worker.logs import log_context
from saloon.worker.matches.play import StoredResolver, play_spec
from saloon.worker.matches.spec import MatchSpec
from saloon.worker.metrics import (
    JOB_SECONDS,
    JOBS_FAILED,
    JOBS_FINISHED,
    JOBS_RETRIED,
    JOBS_STARTED,
    RESULTS_RECORDED,
    instrument_store,
    observe_match,
)
from saloon.worker.queue.defaults import WORKER_GC_THRESHOLD
from saloon.worker.store.config import resolve_url
from saloon.worker.store.rows import MatchStatus
from saloon.worker.store.store import PendingResults, PreparedResult, Store

log = logging.getLogger(__name__)

#: Played matches whose recording failed (store unavailable), kept (as the store will
#: write them) so that a retry on the same worker records them instead of playing them
#: again. Bounded: oldest dropped first.
MAX_UNRECORDED = 64

#: A match id no season schedules (season ids never contain '/'): the warm-up's claim.
WARM_UP_MATCH_ID = "saloon/warm-up"

_stores: dict[str, Store] = {}
_stores_lock = threading.Lock()
_unrecorded: dict[str, PreparedResult] = {}


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
            instrument_store(store)
        return store


def open_store_urls() -> list[str]:
    """The URLs of the stores this process has open (its jobs' stores, its --store)."""
    with _stores_lock:
        return list(_stores)


def warm_up(store_url: str | None = None) -> None:
    """Pay a worker's one-time costs before its first job, not inside it.

    Imports every game and its house bots (the first seat of a game otherwise imports
    them) and the stored bots' resolver, and, given ``store_url``, opens that store and
    runs the claim once on a match id no season schedules (connects, checks the schema,
    compiles the hot statements, else all done inside the first job). A store that
    cannot be reached now is only logged: the first job opens it (or fails and retries)
    as before.

    Last, everything loaded so far (modules, the engine, the pool) is moved out of the
    garbage collector's sight (``gc.freeze``): matches allocate heavily, and every full
    collection would otherwise walk these long-lived objects again; and the collector's
    youngest generation waits for WORKER_GC_THRESHOLD net allocations. docs/seasons.md
    has what each of these saves.
    """
    from saloon.games import game_ids, get_game
    from saloon.sdk.house import house_bots
    from saloon.worker.sandbox import stored  # noqa: F401  (stored_resolver's, ~25 ms)

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
    gc.set_threshold(WORKER_GC_THRESHOLD, *gc.get_threshold()[1:])


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

    Three store round trips per match: claim it (RUNNING, an attempt; or DONE / CANCELLED
    and left alone), record the result, then settle its season if that was its last
    match to play (:func:`settle_season`).
    """
    prepared = _unrecorded.pop(spec.match_id, None)
    if prepared is None:
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
            settle_season(store, spec.season_id)
            return JobOutcome.REFUSED
        observe_match(spec.game, played.record)
        prepared = store.prepare_result(spec.match_id, played.record, played.stderr)
    try:
        [wrote] = store.record_results([prepared])
    except WorkerError:
        # Keep the played match: the retry records it without playing it again.
        _keep_unrecorded([prepared])
        raise
    if wrote:
        RESULTS_RECORDED.labels(spec.game).inc()
        settle_season(store, spec.season_id)
    return JobOutcome.RECORDED if wrote else JobOutcome.DUPLICATE


def settle_season(store: Store, season_id: str) -> None:
    """Settle the season of matches this job just recorded or failed, if it has none left
    to play (Store.settle_season: one statement, after the job's own write is committed).
    A store away now is only logged: the keepers settle it (saloon.worker.queue.keepers)."""
    if not season_id:
        return  # a match of no season
    try:
        store.settle_season(season_id)
    except WorkerError as exc:
        log.info("season %s: not settled now (%s); the keepers will", season_id, exc)


#: A batch job records what it played every this many matches (one statement each), at
#: least every FLUSH_EVERY_MS of play, and at its end: a worker killed mid-batch loses at
#: most that much play. On PostgreSQL each flush but the last is sent without waiting
#: (Store.send_results): the database executes and commits it while the next matches
#: play, and its answer is read at the next flush. (Recording on a thread of its own was
#: slower: the GIL hand-over between the playing and the recording thread cost more than
#: the database's wait it hid.) A statement has a cost of its own besides its rows
#: (executing it, its commit): PostgreSQL spent ~0.3 ms of CPU per Seas of Strife match
#: at 8 a statement, ~0.2 ms at 32, CPU the workers' cores then have back.
FLUSH_EVERY = 32
FLUSH_EVERY_MS = 250.0
#: ... and, on PostgreSQL, when this many matches of the batch are left and when one is:
#: the job waits for its last flush only, and it finds the flushes before it done when the
#: database had the time of a few matches to execute each one (a flush of ~30 matches
#: sent before the last match was still executing, ~1.5 ms a job).
FLUSH_AHEAD = 8


def _keep_unrecorded(played: list[PreparedResult]) -> None:
    """Keep played matches whose recording failed: the retry records them unplayed."""
    for prepared in played:
        while len(_unrecorded) >= MAX_UNRECORDED:
            _unrecorded.pop(next(iter(_unrecorded)))
        _unrecorded[prepared.result["match_id"]] = prepared


class _Recorder:
    """A batch's played matches on their way into the store, a flush at a time, each by
    its own id; at most one flush in flight. A failure to record keeps every played
    match not known to be recorded (in flight or waiting) for the retry, and raises."""

    def __init__(self, store: Store, outcomes: dict[str, JobOutcome]) -> None:
        self.store = store
        self.outcomes = outcomes
        self.ready: list[PreparedResult] = []
        self.flushed = time.perf_counter()
        self._flight: tuple[list[PreparedResult], PendingResults] | None = None
        self._early = store.sends_in_background  # a flush before the last match is free

    def add(self, prepared: PreparedResult, left: int) -> None:
        """One more played match, prepared (Store.prepare_result: as soon as it ended,
        while its record is in the CPU's caches; the record itself is dropped then),
        ``left`` more to play: a flush is sent when FLUSH_EVERY or FLUSH_EVERY_MS is up,
        and, when the store records in the background, FLUSH_AHEAD matches before the
        batch's end and before its last match (the job waits for its last flush: it then
        carries one match or two)."""
        self.ready.append(prepared)
        now = time.perf_counter()
        if (
            len(self.ready) >= FLUSH_EVERY
            or (now - self.flushed) * 1000 >= FLUSH_EVERY_MS
            or (self._early and left in (FLUSH_AHEAD, 1) and len(self.ready) > 1)
        ):
            self.flush(wait=False)
            self.flushed = now

    def flush(self, *, wait: bool) -> None:
        """Settle the flush in flight, send what is ready; with ``wait``, settle it too."""
        self._settle()
        ready, self.ready = self.ready, []
        if ready:
            try:
                self._flight = (ready, self.store.send_results(ready))
            except WorkerError:
                _keep_unrecorded(ready)
                raise
        if wait:
            self._settle()

    def _settle(self) -> None:
        if self._flight is None:
            return
        (sent, pending), self._flight = self._flight, None
        try:
            wrote = pending.wait()
        except WorkerError:
            _keep_unrecorded(sent + self.ready)
            self.ready = []
            raise
        for prepared, w in zip(sent, wrote, strict=True):
            match_id = prepared.result["match_id"]
            self.outcomes[match_id] = JobOutcome.RECORDED if w else JobOutcome.DUPLICATE
            if w:
                RESULTS_RECORDED.labels(prepared.result["game"]).inc()


def run_batch(specs: list[MatchSpec], store: Store, worker: str = "") -> list[JobOutcome]:
    """Play a batch of scheduled matches (one season's, in schedule order), each claimed
    and recorded by its own id exactly once; the outcome of each.

    Last, its season is settled if the batch played its last matches (:func:`settle_season`).
    One claim statement for the batch (matches DONE or CANCELLED are left alone: a
    retried batch skips what it recorded before), sent without waiting where the store
    can (PostgreSQL): the batch's first match plays meanwhile and the claim is looked at
    before it is recorded (dropped if the claim found it done or cancelled). Then the
    matches one by one, their results recorded in flushes (_Recorder), the last flush
    waited for before the job returns (a match counts as recorded only once the store
    said so). A failure to record keeps the played matches for the retry, as a one-match
    job does.
    """
    outcomes: dict[str, JobOutcome] = {}
    fresh = [s for s in specs if s.match_id not in _unrecorded]
    claim = store.send_claim([s.match_id for s in fresh], worker) if fresh else None
    statuses: dict[str, MatchStatus] | None = None if claim is not None else {}
    recorder = _Recorder(store, outcomes)
    resolver = stored_resolver(store)
    try:
        for k, spec in enumerate(specs):
            prepared = _unrecorded.pop(spec.match_id, None)
            if prepared is None:
                ahead = statuses is None  # the claim is still out: play now, look after
                if statuses is not None and _skipped(spec, statuses, outcomes, recorder):
                    continue
                refused = ""
                played = None  # a refused match has none (it was unbound: UnboundLocalError)
                try:
                    with log_context(match=spec.match_id):
                        played = play_spec(spec, resolver)
                except BotRefError as exc:
                    refused = str(exc)
                except BaseException:
                    recorder.flush(wait=True)  # what was played stays played
                    raise
                if played is not None:
                    observe_match(spec.game, played.record)
                    prepared = store.prepare_result(spec.match_id, played.record, played.stderr)
                    del played  # only the prepared rows are kept
                if ahead and claim is not None:
                    try:
                        statuses = claim.wait()
                    except WorkerError:
                        if prepared is not None:
                            _keep_unrecorded([prepared])
                        raise
                    if _skipped(spec, statuses, outcomes, recorder):
                        continue  # played ahead of a claim that found it done: dropped
                if prepared is None:
                    store.mark_match(spec.match_id, MatchStatus.FAILED, refused)
                    outcomes[spec.match_id] = JobOutcome.REFUSED
                    continue
            recorder.add(prepared, left=len(specs) - 1 - k)
        recorder.flush(wait=True)
        changed = (JobOutcome.RECORDED, JobOutcome.REFUSED)
        for season_id in dict.fromkeys(
            s.season_id for s in specs if outcomes[s.match_id] in changed
        ):
            settle_season(store, season_id)
    finally:
        if claim is not None and not claim.done:  # left early: free the claim's connection
            with contextlib.suppress(WorkerError):
                claim.wait()
    return [outcomes[s.match_id] for s in specs]


def _skipped(
    spec: MatchSpec,
    statuses: dict[str, MatchStatus],
    outcomes: dict[str, JobOutcome],
    recorder: _Recorder,
) -> bool:
    """True when the claim found ``spec``'s match done or cancelled (its outcome noted);
    SeasonSpecError, after recording what was played, when it is not scheduled."""
    status = statuses.get(spec.match_id)
    if status is None:
        recorder.flush(wait=True)
        raise SeasonSpecError(f"match {spec.match_id} is not in any season's schedule")
    if status in (MatchStatus.DONE, MatchStatus.CANCELLED):
        done = status is MatchStatus.DONE
        outcomes[spec.match_id] = JobOutcome.DUPLICATE if done else JobOutcome.CANCELLED
        return True
    return False


def batch_job(specs_json: list[dict[str, Any]], store_url: str) -> str:
    """RQ entry point of a batch: play and record each match of ``specs_json``."""
    from rq import get_current_job

    specs = [MatchSpec.from_json(s) for s in specs_json]
    job = get_current_job()
    worker = (job.worker_name or "") if job is not None else ""
    queue = (job.origin or "") if job is not None else ""
    started = time.perf_counter()
    JOBS_STARTED.labels(queue).inc()
    with log_context(job=job.id if job is not None else "", season=specs[0].season_id):
        outcomes = run_batch(specs, store_for(store_url), worker=worker)
    JOBS_FINISHED.labels(queue).inc()
    JOB_SECONDS.labels(queue).observe(time.perf_counter() - started)
    counts = {o.value: outcomes.count(o) for o in JobOutcome if o in outcomes}
    log.info("%s .. %s: %s", specs[0].match_id, specs[-1].match_id, counts)
    return ",".join(o.value for o in outcomes)


def match_job(spec_json: dict[str, Any], store_url: str) -> str:
    """RQ entry point: play and record the match of ``spec_json`` in the store at ``store_url``."""
    from rq import get_current_job

    spec = MatchSpec.from_json(spec_json)
    job = get_current_job()
    worker = (job.worker_name or "") if job is not None else ""
    job_id = job.id if job is not None else ""
    queue = (job.origin or "") if job is not None else ""
    started = time.perf_counter()
    JOBS_STARTED.labels(queue).inc()
    with log_context(job=job_id, season=spec.season_id, match=spec.match_id):
        outcome = run_match(spec, store_for(store_url), worker=worker)
        log.info("%s: %s", spec.match_id, outcome.value)
    JOBS_FINISHED.labels(queue).inc()
    JOB_SECONDS.labels(queue).observe(time.perf_counter() - started)
    return outcome.value


def platform_away(exc: BaseException | None) -> bool:
    """True when a job's ``exc`` says only that the platform was away (the store could
    not be reached): the job goes back to the queue as it was, no retry spent, and the
    store is not marked (it is what failed); or that Redis was lost as the job started
    (it never ran)."""
    return isinstance(exc, (StoreUnavailable, RedisLostAtStart))


def on_match_failure(
    job: Any,
    connection: Any,
    exc_type: type[BaseException] | None,
    exc: BaseException | None,
    tb: TracebackType | None,
) -> None:
    """RQ failure callback (every failed attempt): the store shows QUEUED while retries are
    left, FAILED once they are spent. Nothing for a job that failed only because the
    store was away: it goes back to the queue, no attempt spent (see :func:`platform_away`)."""
    del connection, tb
    if platform_away(exc):
        return
    retrying = bool(job.retries_left and job.retries_left > 0)
    status = MatchStatus.QUEUED if retrying else MatchStatus.FAILED
    name = exc_type.__name__ if exc_type is not None else "failure"
    detail = f"{'retrying after ' if retrying else ''}{name}: {exc}"[:500]
    log.warning("%s: attempt failed (%s)", job.id, detail, extra={"job": job.id})
    (JOBS_RETRIED if retrying else JOBS_FAILED).labels(job.origin or "").inc()
    payload = job.args[0]
    # A batch job: every match of it not yet recorded (DONE ones are never changed).
    ids = [s["match_id"] for s in payload] if isinstance(payload, list) else [job.id]
    try:
        store = store_for(str(job.args[1]))
        store.mark_matches(ids, status, detail)
    except WorkerError as err:  # the store may be what failed; the retry will tell
        log.warning("%s: could not mark the store: %s", job.id, err)
        return
    if not retrying:  # its last attempt: the season may have nothing left to play now
        specs = payload if isinstance(payload, list) else [payload]
        for season_id in dict.fromkeys(str(s.get("season_id") or "") for s in specs):
            settle_season(store, season_id)
