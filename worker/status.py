"""``saloon status``: an arena on one screen, for an organiser at a terminal.

Workers (alive or not, what each plays now: its job's season, match and game, for how
long), the queues (jobs queued, running, waiting for a retry, failed), the running
seasons and continuous ladders with their progress, the tournaments not over (phase,
deadline, field size, finals matches so far), and whether the store and Redis answer (and
how fast). Read from Redis (RQ's public registries, the workers' alive keys)
and the store; every read is bounded (Redis: 2 s socket timeouts), and a service that does
not answer is shown as down, never a traceback. ``--watch S`` redraws every S seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import RenderableType

    from saloon.worker.store.store import Store


@dataclass
class WorkerInfo:
    name: str
    host: str
    pid: int
    alive: bool
    state: str
    #: What it plays now: "SEASON: MATCH (GAME)" or "".
    playing: str = ""
    #: Seconds since its job started.
    busy_s: float | None = None


@dataclass
class QueueInfo:
    name: str
    counts: dict[str, int]


@dataclass
class SeasonInfo:
    season_id: str
    game: str
    queue: str
    total: int
    done: int
    running: int
    failed: int


@dataclass
class TournamentInfo:
    tournament_id: str
    game: str
    #: open, frozen, finals or reporting (saloon.arena.tournaments.Phase, as stored).
    phase: str
    deadline: datetime
    #: Entrants of the frozen field (None while open: the field is not fixed yet).
    field_size: int | None
    #: Finals batches made and finals matches recorded so far (at the driver's last step).
    batches: int
    finals_matches: int


#: Phases of a tournament that is over (not shown).
_TOURNAMENT_OVER = ("done", "cancelled")


@dataclass
class Status:
    """What ``saloon status`` shows."""

    redis: str = ""
    redis_ms: float | None = None
    redis_error: str = ""
    store: str = ""
    store_ms: float | None = None
    store_error: str = ""
    workers: list[WorkerInfo] = field(default_factory=list)
    queues: list[QueueInfo] = field(default_factory=list)
    seasons: list[SeasonInfo] = field(default_factory=list)
    ladders: list[tuple[str, str, int]] = field(default_factory=list)
    tournaments: list[TournamentInfo] = field(default_factory=list)


def _redacted(url: str) -> str:
    """``url`` without its password."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return parts._replace(netloc=netloc).geturl()


def _playing(job: Any) -> str:
    """The season, match and game of a job's payload (one match's spec or a batch's)."""
    try:
        payload = job.args[0]
    except Exception:
        return ""
    specs = payload if isinstance(payload, list) else [payload]
    if not specs or not isinstance(specs[0], dict):
        return ""
    first = specs[0]
    match = str(first.get("match_id", ""))
    if len(specs) > 1:
        match = f"{match} .. {specs[-1].get('match_id', '')} ({len(specs)} matches)"
    season = str(first.get("season_id", "")) or "-"
    return f"{season}: {match} [{first.get('game', '?')}]"


def read_redis(status: Status, redis_url: str, queue_names: list[str]) -> None:
    """The workers and queues (Redis down: the error noted)."""
    from redis import Redis
    from rq import Queue, Worker

    from saloon.worker.queue.season_queue import SeasonQueue

    status.redis = _redacted(redis_url)
    try:
        redis = Redis.from_url(redis_url, socket_timeout=2, socket_connect_timeout=2)
        started = time.perf_counter()
        redis.ping()
        status.redis_ms = (time.perf_counter() - started) * 1000
        now = datetime.now(UTC)
        seen: dict[str, WorkerInfo] = {}
        for name in queue_names:
            queue = Queue(name, connection=redis)
            status.queues.append(
                QueueInfo(
                    name,
                    {
                        "queued": queue.count,
                        "running": queue.started_job_registry.count,
                        "retry": queue.scheduled_job_registry.count,
                        "failed": queue.failed_job_registry.count,
                    },
                )
            )
            workers = Worker.all(queue=queue)
            alive = SeasonQueue(redis, name).alive([w.name for w in workers])
            for worker in workers:
                if worker.name in seen:
                    continue
                info = WorkerInfo(
                    worker.name,
                    str(worker.hostname or ""),
                    int(worker.pid or 0),
                    worker.name in alive,
                    str(worker.get_state()),
                )
                job = worker.get_current_job()
                if job is not None:
                    # The state and the job are two reads: a job that began between them
                    # shows a worker "idle" playing it. A worker with a job is busy.
                    if info.state == "idle":
                        info.state = "busy"
                    info.playing = _playing(job)
                    if job.started_at is not None:
                        began = job.started_at
                        began = began if began.tzinfo else began.replace(tzinfo=UTC)
                        info.busy_s = max(0.0, (now - began).total_seconds())
                seen[worker.name] = info
        status.workers = sorted(seen.values(), key=lambda w: (not w.alive, w.host, w.name))
    except Exception as exc:
        status.redis_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def read_store(status: Status, store: Store) -> None:
    """The running seasons, ladders and tournaments (the store down: the error noted)."""
    import sqlalchemy as sa

    from saloon.worker.store import schema as t
    from saloon.worker.store.rows import MatchStatus, SeasonStatus

    try:
        started = time.perf_counter()
        with store.read("status") as conn:
            conn.execute(sa.text("SELECT 1"))
        status.store_ms = (time.perf_counter() - started) * 1000
        for season in store.seasons():
            if season.status is not SeasonStatus.RUNNING:
                continue
            progress = store.progress(season.season_id)
            status.seasons.append(
                SeasonInfo(
                    season.season_id,
                    season.game,
                    season.queue or "-",
                    progress.total,
                    progress.done,
                    progress.count(MatchStatus.RUNNING),
                    progress.count(MatchStatus.FAILED),
                )
            )
        ladders = t.continuous_ladders
        with store.read("status ladders") as conn:
            rows = conn.execute(
                sa.select(ladders.c.ladder_id, ladders.c.spec, ladders.c.batches)
                .where(ladders.c.active.is_(True))
                .order_by(ladders.c.ladder_id)
            ).all()
        status.ladders = [(str(r[0]), str(dict(r[1]).get("game", "?")), int(r[2])) for r in rows]
        cups = t.tournaments
        with store.read("status tournaments") as conn:
            found = conn.execute(
                sa.select(
                    cups.c.tournament_id, cups.c.game, cups.c.phase, cups.c.deadline,
                    cups.c.field, cups.c.batches, cups.c.state,
                )
                .where(cups.c.phase.not_in(_TOURNAMENT_OVER))
                .order_by(cups.c.deadline, cups.c.tournament_id)
            ).all()  # fmt: skip
        status.tournaments = [
            TournamentInfo(
                str(r.tournament_id),
                str(r.game),
                str(r.phase),
                r.deadline if r.deadline.tzinfo else r.deadline.replace(tzinfo=UTC),
                None if r.field is None else len(r.field),
                int(r.batches),
                int(dict(r.state or {}).get("finals_matches", 0)),
            )
            for r in found
        ]
    except Exception as exc:
        status.store_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def gather(store_url: str, redis_url: str, queue_names: list[str]) -> Status:
    """Everything ``saloon status`` shows, read now."""
    from saloon.worker.store.store import Store

    status = Status(store=_redacted(store_url))
    read_redis(status, redis_url, queue_names)
    try:
        store = Store.open(store_url)
    except Exception as exc:
        status.store_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return status
    try:
        read_store(status, store)
    finally:
        store.close()
    return status


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def render(status: Status) -> RenderableType:
    """The screen: services, workers, queues, seasons, ladders and tournaments."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from saloon.referee.shown import shown

    services = Table(title="services", title_justify="left", expand=True)
    services.add_column("service")
    services.add_column("where")
    services.add_column("state")
    for name, where, ms, error in (
        ("store", status.store, status.store_ms, status.store_error),
        ("redis", status.redis, status.redis_ms, status.redis_error),
    ):
        state = (
            Text(f"DOWN: {shown(error)}", style="bold red")
            if error
            else Text(f"up ({ms:.1f} ms)", style="green")
        )
        services.add_row(name, shown(where), state)

    workers = Table(
        title=f"workers ({sum(w.alive for w in status.workers)} alive)",
        title_justify="left",
        expand=True,
    )
    for column in ("worker", "host", "pid", "state", "playing", "for"):
        workers.add_column(column)
    for w in status.workers:
        state = Text(w.state if w.alive else "gone", style="" if w.alive else "bold red")
        workers.add_row(
            shown(w.name), shown(w.host), str(w.pid), state, shown(w.playing), _duration(w.busy_s)
        )
    if not status.workers:
        workers.add_row("-", "", "", Text("no worker", style="yellow"), "", "")

    queues = Table(title="queues", title_justify="left", expand=True)
    for column in ("queue", "queued", "running", "retry", "failed"):
        queues.add_column(column, justify="left" if column == "queue" else "right")
    for q in status.queues:
        queues.add_row(
            shown(q.name), *(str(q.counts[k]) for k in ("queued", "running", "retry", "failed"))
        )

    seasons = Table(title="running seasons", title_justify="left", expand=True)
    for column in ("season", "game", "queue", "done", "running", "failed", "progress"):
        seasons.add_column(column)
    for s in status.seasons:
        share = s.done / s.total if s.total else 1.0
        seasons.add_row(
            shown(s.season_id),
            s.game,
            shown(s.queue),
            f"{s.done}/{s.total}",
            str(s.running),
            Text(str(s.failed), style="bold red" if s.failed else ""),
            f"{share:.0%}",
        )
    if not status.seasons:
        seasons.add_row("-", "", "", "", "", "", "")

    ladders = Table(title="continuous ladders", title_justify="left", expand=True)
    for column in ("ladder", "game", "batches played"):
        ladders.add_column(column)
    for ladder_id, game, batches in status.ladders:
        ladders.add_row(shown(ladder_id), game, str(batches))
    if not status.ladders:
        ladders.add_row("-", "", "")

    cups = Table(title="tournaments", title_justify="left", expand=True)
    for column in ("tournament", "game", "phase", "deadline", "field", "finals matches"):
        cups.add_column(column)
    for c in status.tournaments:
        cups.add_row(
            shown(c.tournament_id), c.game, c.phase,
            c.deadline.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
            "-" if c.field_size is None else str(c.field_size),
            f"{c.finals_matches} ({c.batches} batches)" if c.batches else str(c.finals_matches),
        )  # fmt: skip
    if not status.tournaments:
        cups.add_row("-", "", "", "", "", "")
    return Group(services, workers, queues, seasons, ladders, cups)
