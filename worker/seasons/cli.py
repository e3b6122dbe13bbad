"""``saloon season create/start/status/cancel/run``, ``saloon worker`` and ``saloon demo``.

Added to the ``saloon`` command by :mod:`saloon.arena.cli` (``register``); heavy imports
(rq, redis, SQLAlchemy, rich) stay inside the handlers so ``saloon play`` is quick.
The store is ``--store URL`` (a SQLAlchemy URL or a SQLite path), else ``$SALOON_STORE``,
else ``./saloon.db``; the queue is ``--redis URL``, else ``$SALOON_REDIS``, else the local
Redis.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from saloon.referee.cli import parse_option
from saloon.referee.limits import DEFAULT_BANK_MS, DEFAULT_DECISION_MS, DEFAULT_START_MS
from saloon.referee.shown import shown
from saloon.worker.errors import WorkerError
from saloon.worker.queue.defaults import (
    DEFAULT_QUEUE,
    DEFAULT_REDIS_URL,
    REDIS_ENV,
    add_worker_arguments,
)
from saloon.worker.sandbox import SandboxKind

#: Seconds between two looks at a followed season.
FOLLOW_INTERVAL_S = 0.5
#: Rounds of the demo season of each game.
DEMO_ROUNDS = 2
#: The demo's seed (the same demo every time).
DEMO_SEED = 7
#: The house bots of the demo, one entry each: the ladder in miniature (random < greedy <
#: search; docs/strength.md has the whole ladder). The graded searches up to
#: house:search-800 would turn a seconds-long demo into many minutes.
DEMO_BOTS = ("random", "greedy", "search")
#: What is printed after a demo season: ``report(store, season_id, out)``, a function of a
#: higher layer (saloon.ratings prints the season's leaderboard).
SeasonReport = Callable[[Any, str, TextIO], None]


def _int_in(lo: int, hi: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{value} is out of range {lo}..{hi}")
        return value

    return parse


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--store URL`` argument every command that reads or writes the store takes."""
    parser.add_argument(
        "--store",
        help="results store: SQLAlchemy URL or SQLite file (default $SALOON_STORE or ./saloon.db)",
    )


def _add_batch(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--batch",
        type=_int_in(1, 1000),
        default=None,
        metavar="N",
        help="matches per full queue job, the season's last jobs smaller (default: from "
        "measured match times; fixed at the season's first start)",
    )


def _add_queue(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--redis",
        default=os.environ.get(REDIS_ENV, DEFAULT_REDIS_URL),
        help=f"Redis URL of the queue (default ${REDIS_ENV} or {DEFAULT_REDIS_URL})",
    )
    parser.add_argument("--queue", default=DEFAULT_QUEUE, help="RQ queue name")


def _add_season_spec(parser: argparse.ArgumentParser, required: bool) -> None:
    parser.add_argument("--game", required=required, help="game id (see `saloon games`)")
    parser.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="REF",
        help="a participant, repeatable: house:NAME, bot:NAME@VERSION or a path (REF#TAG: "
        "another entry of the same bot)",
    )
    parser.add_argument(
        "--seats", type=_int_in(2, 6), help="seats per match (default: the game's least)"
    )
    parser.add_argument("--rounds", type=_int_in(1, 10_000), default=1, help="rounds (default 1)")
    parser.add_argument(
        "--seed",
        type=_int_in(0, 2**63 - 1),
        default=None,
        help="season seed (default: a secret one from the OS's random source)",
    )
    parser.add_argument(
        "--duplicate",
        action="store_true",
        help="duplicate deals: each deal replayed with the seats rotated",
    )
    parser.add_argument(
        "--option", type=parse_option, action="append", default=[], metavar="NAME=VALUE"
    )
    parser.add_argument("--decision-ms", type=_int_in(1, 86_400_000), default=DEFAULT_DECISION_MS)
    parser.add_argument("--bank-ms", type=_int_in(0, 86_400_000), default=DEFAULT_BANK_MS)
    parser.add_argument("--start-ms", type=_int_in(1, 86_400_000), default=DEFAULT_START_MS)
    parser.add_argument(
        "--sandbox",
        choices=list(SandboxKind),
        default="process",
        help="where bot paths run (process: the local process sandbox, NOT a security boundary)",
    )


def register(subparsers: Any, reports: Sequence[SeasonReport] = ()) -> tuple[type[Exception], ...]:
    """Add ``season``, ``worker`` and ``demo`` to the ``saloon`` command.

    ``reports``: what ``saloon demo`` prints after each season's standings, from layers this
    one may not import (the ``saloon`` command gives the ratings' leaderboard).
    """
    season = subparsers.add_parser("season", help="create, start, follow and run seasons")
    sub = season.add_subparsers(dest="season_command", required=True)

    create = sub.add_parser("create", help="store a season and its schedule (idempotent)")
    create.add_argument("season_id")
    _add_season_spec(create, required=True)
    add_store_argument(create)
    create.set_defaults(handler=cmd_create)

    start = sub.add_parser("start", help="enqueue the season's unplayed matches on Redis")
    start.add_argument("season_id")
    add_store_argument(start)
    _add_queue(start)
    _add_batch(start)
    start.set_defaults(handler=cmd_start)

    status = sub.add_parser("status", help="done, running, failed and remaining matches")
    status.add_argument("season_id")
    status.add_argument("--follow", action="store_true", help="show a progress bar until done")
    status.add_argument("--timeout", type=float, default=0, help="stop following after S s")
    add_store_argument(status)
    _add_queue(status)
    status.set_defaults(handler=cmd_status)

    cancel = sub.add_parser("cancel", help="drop the season's unplayed matches")
    cancel.add_argument("season_id")
    add_store_argument(cancel)
    _add_queue(cancel)
    cancel.set_defaults(handler=cmd_cancel)

    run = sub.add_parser(
        "run",
        help="create the season if needed and play it all on this machine, print standings",
    )
    run.add_argument("season_id")
    _add_season_spec(run, required=False)
    run.add_argument(
        "--local",
        action="store_true",
        help="in-process queue even when Redis answers (the default without Redis)",
    )
    add_store_argument(run)
    _add_queue(run)
    _add_batch(run)
    run.set_defaults(handler=cmd_run)

    overview = subparsers.add_parser(
        "status",
        help="the arena on one screen: workers, queues, running seasons and ladders, store, Redis",
    )
    add_store_argument(overview)
    overview.add_argument(
        "--redis",
        default=os.environ.get(REDIS_ENV, DEFAULT_REDIS_URL),
        help=f"Redis URL of the queue (default ${REDIS_ENV} or {DEFAULT_REDIS_URL})",
    )
    overview.add_argument(
        "--queue", action="append", help=f"queue name, repeatable (default {DEFAULT_QUEUE})"
    )
    overview.add_argument(
        "--watch", type=float, default=0.0, metavar="S", help="redraw every S seconds (Ctrl-C ends)"
    )
    overview.set_defaults(handler=cmd_overview)

    worker = subparsers.add_parser("worker", help="run an RQ worker that plays season matches")
    add_worker_arguments(worker)
    worker.set_defaults(handler=cmd_worker)

    demo = subparsers.add_parser(
        "demo", help="a short season of the house bots for each game, with standings"
    )
    demo.add_argument("--rounds", type=_int_in(1, 100), default=DEMO_ROUNDS)
    demo.add_argument("--game", action="append", help="only this game (repeatable)")
    demo.add_argument("--store", help="keep the results in this store (default: a temp file)")
    demo.set_defaults(handler=cmd_demo, reports=tuple(reports))
    return (WorkerError,)


# -- handlers ---------------------------------------------------------------------------


def _store_url(args: argparse.Namespace) -> str:
    from saloon.worker.store.config import resolve_url

    return resolve_url(args.store)


def _season_from_args(args: argparse.Namespace, store: Any) -> Any:
    """The season the arguments describe; without ``--seed``, a secret seed (the stored
    season's own when it exists already, so creating it again changes nothing)."""
    from saloon.games import get_game
    from saloon.referee.limits import MatchLimits
    from saloon.worker.sandbox import SandboxKind
    from saloon.worker.seasons.schedule import SeasonSpec

    seats = args.seats or get_game(args.game).min_players
    return SeasonSpec(
        season_id=args.season_id,
        game=args.game,
        participants=tuple(args.bot),
        seats=seats,
        rounds=args.rounds,
        seed=_seed(args, store),
        duplicate=args.duplicate,
        options=dict(args.option),
        limits=MatchLimits(
            decision_ms=args.decision_ms, bank_ms=args.bank_ms, start_ms=args.start_ms
        ),
        sandbox=SandboxKind(args.sandbox),
    )


def _seed(args: argparse.Namespace, store: Any) -> int:
    from saloon.referee.seeds import secret_seed

    if args.seed is not None:
        return int(args.seed)
    stored = store.season(args.season_id)
    if stored is not None and "seed" in stored.spec:
        return int(stored.spec["seed"])
    return secret_seed()


def cmd_create(args: argparse.Namespace, out: TextIO) -> int:
    """Store the season and its schedule."""
    from saloon.worker.seasons.run import create
    from saloon.worker.store.store import Store

    with Store.open(_store_url(args)) as store:
        season = _season_from_args(args, store)
        specs = create(store, season)
    out.write(f"season {season.season_id}: {len(specs)} matches of {season.game} scheduled\n")
    return 0


def cmd_start(args: argparse.Namespace, out: TextIO) -> int:
    """Enqueue the season's unplayed matches."""
    from saloon.worker.queue.season_queue import SeasonQueue, connect
    from saloon.worker.seasons.run import start
    from saloon.worker.store.store import Store

    url = _store_url(args)
    queue = SeasonQueue(connect(args.redis), args.queue)
    with Store.open(url) as store:
        enq = start(store, queue, args.season_id, url, batch=args.batch)
        row = store.season(args.season_id)
    per_job = ""
    if row is not None and row.batch > 1:
        per_job = f", up to {row.batch} a job" if row.batch_tapered else f", {row.batch} a job"
    out.write(
        f"season {args.season_id}: {enq.added} matches enqueued, {enq.present} already "
        f"queued or recorded (queue {args.queue}{per_job})\n"
    )
    return 0


def _queue_or_none(args: argparse.Namespace) -> Any:
    from saloon.worker.errors import QueueUnavailable
    from saloon.worker.queue.season_queue import SeasonQueue, connect

    try:
        return SeasonQueue(connect(args.redis), args.queue)
    except QueueUnavailable:
        return None


def cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    """Print (or follow, with a progress bar) the season's progress."""
    from saloon.worker.seasons.run import progress
    from saloon.worker.store.store import Store

    queue = _queue_or_none(args)
    with Store.open(_store_url(args)) as store:
        if not args.follow:
            _print_progress(progress(store, args.season_id, queue), out)
            return 0
        return _follow(store, args.season_id, queue, out, args.timeout)


def _print_progress(p: Any, out: TextIO) -> None:
    out.write(
        f"season {p.season_id} ({p.status.value}): {p.done} done, {p.running} running, "
        f"{p.failed} failed, {p.remaining} remaining of {p.total}\n"
    )
    if p.unqueued:
        out.write(
            f"season {p.season_id}: {p.unqueued} pending matches are queued nowhere (Redis "
            "lost their jobs, or failed them while the store was away); a worker's keeper "
            "or the server enqueues them again within "
            f"a minute, `saloon season start {p.season_id}` does it now\n"
        )


def _follow(store: Any, season_id: str, queue: Any, out: TextIO, timeout: float) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from saloon.worker.seasons.run import progress

    console = Console(file=out)
    first = progress(store, season_id, queue)
    deadline = time.monotonic() + timeout if timeout > 0 else None
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(season_id, total=first.total)
        while True:
            p = progress(store, season_id, queue)
            bar.update(
                task,
                completed=p.done + p.failed + p.cancelled,
                description=f"{season_id}: {p.running} running, {p.failed} failed",
            )
            if p.finished or (deadline is not None and time.monotonic() > deadline):
                break
            time.sleep(FOLLOW_INTERVAL_S)
    _print_progress(p, out)
    return 0 if p.finished and p.failed == 0 else 1


def cmd_cancel(args: argparse.Namespace, out: TextIO) -> int:
    """Cancel the season."""
    from saloon.worker.seasons.run import cancel
    from saloon.worker.store.store import Store

    with Store.open(_store_url(args)) as store:
        dropped = cancel(store, args.season_id, _queue_or_none(args))
    out.write(f"season {args.season_id}: cancelled, {dropped} unplayed matches dropped\n")
    return 0


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    """Create (if needed) and play the whole season here; print its standings."""
    from saloon.worker.seasons.run import create
    from saloon.worker.store.store import Store

    url = _store_url(args)
    with Store.open(url) as store:
        if args.game:
            create(store, _season_from_args(args, store))
        queue = None if args.local else _queue_or_none(args)
        played = _run_queued(store, url, args, queue) if queue else _run_local(store, args, out)
        out.write(f"season {args.season_id}: {played} matches recorded here\n")
        print_standings(store, args.season_id, out)
        return _report_failures(store, args.season_id)


def _report_failures(store: Any, season_id: str) -> int:
    """After ``season run``: 0 when every match is recorded, else 1 and one line on stderr
    saying how many failed and why the first did."""
    from saloon.worker.store.rows import MatchStatus

    rows = store.scheduled(season_id)
    failed = [r for r in rows if r.status is MatchStatus.FAILED]
    if not failed:
        return 0
    sys.stderr.write(
        f"saloon: season {season_id}: {len(failed)} of {len(rows)} matches failed "
        f"(first: {failed[0].match_id}: {shown(failed[0].detail) or 'no detail'}); "
        f"`saloon season status {season_id}` has the progress\n"
    )
    return 1


def _run_local(store: Any, args: argparse.Namespace, out: TextIO) -> int:
    from saloon.worker.seasons.run import run_here

    return run_here(store, args.season_id)


def _run_queued(store: Any, url: str, args: argparse.Namespace, queue: Any) -> int:
    """Enqueue on Redis and work the queue in this process until the season is done."""
    from saloon.worker.queue.worker import run_worker
    from saloon.worker.seasons.run import progress, start

    start(store, queue, args.season_id, url, batch=args.batch)
    before = progress(store, args.season_id).done
    while True:
        run_worker(args.redis, [args.queue], burst=True)
        p = progress(store, args.season_id, queue)
        if p.finished:
            store.settle_season(args.season_id)  # its jobs did; this loop watches it too
            return p.done - before
        time.sleep(FOLLOW_INTERVAL_S)  # retries waiting out their backoff, or other workers


def print_standings(store: Any, season_id: str, out: TextIO) -> None:
    """Print the season's standings as a table."""
    from rich.console import Console

    from saloon.referee.record import Outcome
    from saloon.worker.seasons.standings import render, standings

    results = store.results(season_id=season_id)
    aborted = sum(1 for r in results if r.outcome is not Outcome.COMPLETED)
    console = Console(file=out, width=100)
    console.print(render(f"{season_id}: standings", standings(results), aborted))


def cmd_worker(args: argparse.Namespace, out: TextIO) -> int:
    """Run a match worker until stopped."""
    import logging

    from saloon.worker.logs import configure_logging
    from saloon.worker.queue.worker import run_from_args

    del out
    if args.log_format == "json":
        configure_logging("json")
    logging.getLogger().setLevel(logging.INFO)
    return run_from_args(args, sys.argv[2:])


def demo_seasons(rounds: int = DEMO_ROUNDS) -> list[Any]:
    """The demo: for each game, a season of random, greedy and search (one entry each)."""
    from saloon.games import game_ids, get_game
    from saloon.sdk.botref import ENTRY_TAG, HOUSE_PREFIX
    from saloon.worker.seasons.schedule import SeasonSpec

    seasons = []
    for game_id in game_ids():
        game = get_game(game_id)
        names = [f"{HOUSE_PREFIX}{name}" for name in DEMO_BOTS]
        entries = list(names)
        seats = max(game.min_players, min(len(entries), game.max_players, 4))
        while len(entries) < seats:
            entries.append(f"{names[len(entries) % len(names)]}{ENTRY_TAG}{len(entries)}")
        seasons.append(
            SeasonSpec(
                season_id=f"demo-{game_id}",
                game=game_id,
                participants=tuple(entries),
                seats=seats,
                rounds=rounds,
                seed=DEMO_SEED,
            )
        )
    return seasons


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    """Play a short house-bot season of every game here and print the standings."""
    from saloon.worker.seasons.run import create, run_here
    from saloon.worker.store.store import Store

    with tempfile.TemporaryDirectory(prefix="saloon-demo-") as tmp:
        url = args.store or os.path.join(tmp, "demo.db")
        with Store.open(url) as store:
            for season in demo_seasons(args.rounds):
                if args.game and season.game not in args.game:
                    continue
                create(store, season)
                started = time.perf_counter()
                played = run_here(store, season.season_id)
                seconds = time.perf_counter() - started
                out.write(
                    f"{season.game}: {played} matches of {season.seats} seats in {seconds:.1f} s\n"
                )
                # Each season once: its leaderboard, the report of a higher layer
                # (saloon.ratings, handed in by the saloon command: ratings, matches, wins
                # or placings); the plain standings only where no report was handed in.
                if args.reports:
                    for report in args.reports:
                        report(store, season.season_id, out)
                else:
                    print_standings(store, season.season_id, out)
    return 0


def cmd_overview(args: argparse.Namespace, out: TextIO) -> int:
    """``saloon status``: the arena on one screen (saloon.worker.status)."""
    from rich.console import Console
    from rich.live import Live

    from saloon.worker.status import gather, render
    from saloon.worker.store.config import resolve_url

    queues = args.queue or [DEFAULT_QUEUE]
    store_url = resolve_url(args.store)
    console = Console(file=out, width=max(100, Console().width))
    if args.watch <= 0:
        console.print(render(gather(store_url, args.redis, queues)))
        return 0
    with Live(console=console, screen=False, auto_refresh=False) as live:
        while True:
            live.update(render(gather(store_url, args.redis, queues)), refresh=True)
            time.sleep(args.watch)
