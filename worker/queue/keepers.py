"""What the queue's keepers do over the store: enqueue again what the store says is
pending and no live job holds, and settle a running season with nothing left to play.

The store is the truth; Redis only carries jobs. Workers' keepers
(saloon.worker.queue.worker) and ``saloon serve`` run :func:`requeue_lost` every 10 s, so
a season whose jobs Redis lost, or RQ failed while the store was away, completes with no
one running ``start``, and its status is settled even when the job that recorded its last
match could not settle it (the store away at that moment).
"""

from __future__ import annotations

import logging

from saloon.worker.matches.batching import JobLayout
from saloon.worker.matches.spec import MatchSpec, match_id
from saloon.worker.queue.season_queue import SeasonQueue
from saloon.worker.store.rows import MatchState, MatchStatus, SeasonRow, SeasonStatus
from saloon.worker.store.store import Store

log = logging.getLogger(__name__)

#: Statuses of a match the store says is still to be played.
PENDING = (MatchStatus.PENDING, MatchStatus.QUEUED, MatchStatus.RUNNING)


def job_layout(store: Store, season: SeasonRow) -> JobLayout:
    """How the season's schedule is cut into queue jobs (as its first start decided)."""
    total = store.progress(season.season_id).total if season.batch_tapered else 0
    return JobLayout(season.batch, total, season.batch_tapered)


def recorded(store: Store, match_id: str) -> bool:
    """True when the store has match ``match_id`` recorded (its scheduled match DONE)."""
    row = store.scheduled_match(match_id)
    return row is not None and row.status is MatchStatus.DONE


def lost_matches(store: Store, queue: SeasonQueue, season: SeasonRow) -> list[MatchState]:
    """The season's matches the store says are still to be played but no live job holds:
    their job is absent from Redis (a Redis without persistence restarted, a flushed
    queue) or over (RQ failed it for good without the store knowing: the store was away
    when its retries were spent; finished, stopped, cancelled), and they are not being
    played: a RUNNING match whose job is absent counts as played while its claiming
    worker is alive and running that job (a worker that lost the job's run, alive and
    idle, plays it no more). Two light queries of the store, two round trips to Redis;
    it reads only."""
    return _lost(store, queue, season, store.match_states(season.season_id, PENDING))


def _lost(
    store: Store, queue: SeasonQueue, season: SeasonRow, rows: list[MatchState]
) -> list[MatchState]:
    if not rows:
        return []
    layout = job_layout(store, season)
    holders = {r.match_id: match_id(season.season_id, layout.first_of_job(r.index)) for r in rows}
    over = queue.not_live(sorted(set(holders.values())))
    lost = [r for r in rows if holders[r.match_id] in over]
    claimers = [
        r.detail
        for r in lost
        if r.status is MatchStatus.RUNNING and r.detail and over[holders[r.match_id]] is None
    ]
    playing = queue.playing(claimers)

    def being_played(r: MatchState) -> bool:
        if r.status is not MatchStatus.RUNNING or over[holders[r.match_id]] is not None:
            return False  # not claimed, or its job is over: no one plays it
        if r.detail not in playing:
            return False  # its claimer is gone
        job = playing[r.detail]
        return job is None or job == holders[r.match_id]  # None: a worker that does not say

    return [r for r in lost if not being_played(r)]


def requeue_lost(store: Store, queue: SeasonQueue, store_url: str) -> int:
    """Enqueue again what the store says is pending in the running seasons started on this
    queue and no live job holds (see :func:`lost_matches`); how many. A running season
    with nothing left to play is settled here (Store.settle_season: done, or failed if a
    match failed) when the job that played its last match could not (the store was away
    then). A look costs one query for the running seasons and one light query each
    (their specs are read only when some of their matches are lost)."""
    added = 0
    for season in store.seasons_on_queue(queue.queue.name, SeasonStatus.RUNNING):
        rows = store.match_states(season.season_id, PENDING)
        if not rows:
            store.settle_season(season.season_id)
            continue
        lost = {r.match_id for r in _lost(store, queue, season, rows)}
        if not lost:
            continue
        scheduled = store.scheduled(season.season_id, PENDING)
        specs = [MatchSpec.from_json(r.spec) for r in scheduled if r.match_id in lost]
        enq = queue.enqueue(
            specs,
            store_url,
            recorded=lambda m: recorded(store, m),
            layout=job_layout(store, season),
        )
        if enq.added:
            log.warning(
                "season %s: %d pending matches were queued nowhere; enqueued again",
                season.season_id,
                enq.added,
            )
        added += enq.added
    return added
