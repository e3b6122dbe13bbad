"""The arena's commands: ``saloon serve``, ``saloon user``, ``saloon submit``, ``saloon bots``,
``saloon ladder``.

``submit``, ``bots`` and ``ladder`` talk to a server when one is configured (``--server``,
``$SALOON_SERVER`` or the client config file, see saloon.sdk.client) and work on the local
store otherwise (``--store``, default ``./saloon.db``), through the same functions the
server calls. ``serve`` and ``user`` always work on a store: they are the operator's.
"""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO, TypeVar

from saloon.arena import DEFAULT_HTTP, DEFAULT_LISTEN
from saloon.referee.cli import parse_option
from saloon.referee.shown import log_to_stderr, shown
from saloon.sdk.client import (
    ArenaClient,
    ArenaClientError,
    add_server_arguments,
    server_or_local,
)
from saloon.worker.errors import WorkerError
from saloon.worker.logs import add_log_format_argument, configure_logging
from saloon.worker.sandbox import SandboxKind
from saloon.worker.sandbox.runtimes import version_language
from saloon.worker.seasons.cli import add_store_argument

#: Owner of bots submitted to a local store (no server): the OS user.
LOCAL_OWNER_ENV = "USER"

_T = TypeVar("_T")


def register(subparsers: Any) -> tuple[type[Exception], ...]:
    """Add the arena's commands to ``saloon``."""
    serve = subparsers.add_parser("serve", help="run the arena API (gRPC) and the web boards")
    add_store_argument(serve)
    serve.add_argument("--redis", default=None, help="Redis URL of the season queue")
    serve.add_argument("--queue", default="saloon", help="RQ queue name (default saloon)")
    serve.add_argument(
        "--listen", default=DEFAULT_LISTEN, help=f"gRPC host:port ({DEFAULT_LISTEN})"
    )
    serve.add_argument(
        "--http",
        default=DEFAULT_HTTP,
        help=f"web pages and JSON API host:port ({DEFAULT_HTTP}; '' = none)",
    )
    serve.add_argument(
        "--sandbox",
        choices=sorted(SandboxKind),
        default="docker",
        help="where qualification matches run (process: NOT a security boundary)",
    )
    serve.add_argument(
        "--season-sandbox",
        choices=sorted(SandboxKind),
        default="docker",
        help="where the workers run ladder season matches",
    )
    serve.add_argument("--submit-burst", type=int, default=5, help="submissions at once per user")
    serve.add_argument(
        "--submit-every", type=float, default=12.0, help="then one per N s per user (12)"
    )
    serve.add_argument(
        "--tls-cert", default="", help="PEM certificate (TLS on the gRPC port and the web side)"
    )
    serve.add_argument("--tls-key", default="", help="PEM private key")
    add_log_format_argument(serve)
    serve.set_defaults(handler=cmd_serve)

    user = subparsers.add_parser("user", help="manage arena users and their API tokens")
    sub = user.add_subparsers(dest="user_command", required=True)
    add = sub.add_parser("add", help="add a user; prints their token (shown once)")
    add.add_argument("name")
    add.add_argument("--organiser", action="store_true", help="may create and run seasons")
    add_store_argument(add)
    add.set_defaults(handler=cmd_user_add)
    rotate = sub.add_parser("rotate", help="a new token for a user (the old one stops working)")
    rotate.add_argument("name")
    add_store_argument(rotate)
    rotate.set_defaults(handler=cmd_user_rotate)
    remove = sub.add_parser(
        "remove", help="remove a user: their token and web sessions end; their bots stay"
    )
    remove.add_argument("name")
    add_store_argument(remove)
    remove.set_defaults(handler=cmd_user_remove)
    listing = sub.add_parser("list", help="users and their roles")
    add_store_argument(listing)
    listing.set_defaults(handler=cmd_user_list)

    submit = subparsers.add_parser(
        "submit", help="submit a bot version: validate, build, qualify, store"
    )
    submit.add_argument("path", help="a bot file, folder, .tar.gz, .tar or .zip")
    submit.add_argument("--game", required=True, help="the game it plays (see `saloon games`)")
    submit.add_argument("--name", required=True, help="the bot's name (a-z 0-9 _ -)")
    submit.add_argument(
        "--tournament",
        default="",
        help="for this tournament: refused after its deadline, marked final when accepted",
    )
    _add_target(submit)
    submit.add_argument(
        "--sandbox",
        choices=list(SandboxKind),
        default="process",
        help="local store only: where the qualification match runs",
    )
    submit.set_defaults(handler=cmd_submit)

    bots = subparsers.add_parser("bots", help="bots and their accepted versions")
    bots.add_argument("--game", default="")
    bots.add_argument("--owner", default="")
    _add_target(bots)
    bots.set_defaults(handler=cmd_bots)

    lad = subparsers.add_parser("ladder", help="seasons of a game's ladder on an arena server")
    lsub = lad.add_subparsers(dest="ladder_command", required=True)
    season = lsub.add_parser("season", help="create (and start) a season of a ladder")
    season.add_argument("--game", required=True)
    season.add_argument("--option", action="append", default=[], type=parse_option)
    season.add_argument("--players", type=int, default=0, help="seats per match")
    season.add_argument("--rounds", type=int, default=1)
    season.add_argument("--seed", type=_seed, default=None, help=SEED_HELP)
    season.add_argument("--season-id", default="")
    season.add_argument("--house", action="append", default=[], help="a house bot baseline")
    season.add_argument("--start", action="store_true", help="enqueue its matches now")
    season.add_argument("--every", type=int, default=0, help="repeat: a new season every N s")
    season.add_argument("--follow", action="store_true", help="print progress until done")
    add_server_arguments(season)
    season.set_defaults(handler=cmd_ladder_season)
    for name, helptext in (
        ("start", "enqueue a season's unplayed matches"),
        ("status", "a season's progress"),
        ("cancel", "drop a season's unplayed matches"),
    ):
        cmd = lsub.add_parser(name, help=helptext)
        cmd.add_argument("season_id")
        if name == "status":
            cmd.add_argument("--follow", action="store_true")
        add_server_arguments(cmd)
        cmd.set_defaults(handler=cmd_ladder_season_op, op=name)
    stop = lsub.add_parser("stop", help="stop a ladder's repeating seasons")
    stop.add_argument("schedule_id")
    add_server_arguments(stop)
    stop.set_defaults(handler=cmd_ladder_stop)
    listing = lsub.add_parser("matches", help="a season's matches: seats, status, ranks")
    listing.add_argument("season_id")
    add_server_arguments(listing)
    listing.set_defaults(handler=cmd_ladder_matches)
    _add_continuous(lsub)
    match = lsub.add_parser("match", help="a match record: as a seat, or in full (organiser)")
    match.add_argument("match_id")
    match.add_argument("--seat", type=int, default=-1)
    add_server_arguments(match)
    match.set_defaults(handler=cmd_ladder_match)
    _add_tournament(subparsers)
    return (WorkerError, ArenaClientError)


#: ``--seed``'s help: what happens without it, and who sees it.
SEED_HELP = (
    "the seed its deals come from (default: a secret one the server draws); published when "
    "it is over, hidden until then"
)


def _seed(text: str) -> int:
    """A ``--seed``: an integer in 0..2**63-1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed {text!r} is not an integer") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"seed {value} is out of range 0..2**63-1")
    return value


def _add_continuous(lsub: Any) -> None:
    """``saloon ladder continuous start|stop|status`` (docs/arena.md)."""
    cont = lsub.add_parser(
        "continuous", help="continuous ladders: batches of matches chosen from the ratings"
    )
    csub = cont.add_subparsers(dest="continuous_command", required=True)
    start = csub.add_parser("start", help="start a continuous ladder (organisers)")
    start.add_argument("ladder_id")
    start.add_argument("--game", required=True)
    start.add_argument("--option", action="append", default=[], type=parse_option)
    start.add_argument("--players", type=int, default=0, help="seats per match")
    start.add_argument("--seed", type=_seed, default=None, help=SEED_HELP)
    start.add_argument("--house", action="append", default=[], help="a house bot baseline")
    start.add_argument("--duplicate", action="store_true", help="each table a duplicate deal")
    start.add_argument(
        "--batch", type=int, default=0, help="tables per batch (0: one seat per bot)"
    )
    start.add_argument("--min-share", type=float, default=0.0, help="of a fair share (0.5)")
    start.add_argument(
        "--allow-same-owner", action="store_true", help="two bots of one owner may meet"
    )
    start.add_argument("--max-batches", type=int, default=0, help="stop after N (0: never)")
    start.add_argument("--follow", action="store_true", help="print progress until it stops")
    add_server_arguments(start)
    start.set_defaults(handler=cmd_continuous, op="start")
    for name, helptext in (("stop", "make no more batches"), ("status", "state and board")):
        cmd = csub.add_parser(name, help=helptext)
        cmd.add_argument("ladder_id")
        if name == "status":
            cmd.add_argument("--follow", action="store_true", help="until it stops")
            cmd.add_argument("--board", action="store_true", help="print its board too")
        add_server_arguments(cmd)
        cmd.set_defaults(handler=cmd_continuous, op=name)


def _deadline(text: str) -> str:
    """A ``--deadline``: ISO 8601 with a time zone, or ``+N`` minutes from now (UTC)."""
    from datetime import UTC, datetime, timedelta

    if text.startswith("+"):
        try:
            minutes = float(text[1:])
        except ValueError:
            raise argparse.ArgumentTypeError(f"deadline {text!r}: +MINUTES") from None
        return (datetime.now(UTC) + timedelta(minutes=minutes)).isoformat()
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"deadline {text!r}: ISO 8601 (2026-12-24T18:00:00+00:00) or +MINUTES"
        ) from None
    if when.tzinfo is None:
        raise argparse.ArgumentTypeError(f"deadline {text!r}: give its time zone (+00:00)")
    return when.isoformat()


def _add_tournament(subparsers: Any) -> None:
    """``saloon tournament create|status|report|mark|cancel`` (docs/tournaments.md)."""
    tour = subparsers.add_parser(
        "tournament", help="tournaments: a deadline, final versions, finals, a report"
    )
    tsub = tour.add_subparsers(dest="tournament_command", required=True)
    create = tsub.add_parser("create", help="create a tournament (organisers)")
    create.add_argument("tournament_id")
    create.add_argument("--game", required=True)
    create.add_argument(
        "--deadline", required=True, type=_deadline, help="ISO 8601 with a zone, or +MINUTES"
    )
    create.add_argument("--option", action="append", default=[], type=parse_option)
    create.add_argument("--players", type=int, default=0, help="seats per match")
    create.add_argument("--seed", type=_seed, default=None, help=SEED_HELP)
    create.add_argument("--house", action="append", default=[], help="a house bot entrant")
    create.add_argument("--finals-per-owner", type=int, default=1, help="final versions (1)")
    create.add_argument(
        "--qualifying-rounds", type=int, default=1, help="round-robin rounds after the deadline"
    )
    create.add_argument("--top-k", type=int, default=10, help="places the finals settle (10)")
    create.add_argument("--confidence", type=float, default=0.95, help="per adjacent pair")
    create.add_argument("--budget", type=int, default=2000, help="finals matches at most")
    create.add_argument("--batch-matches", type=int, default=50, help="matches per batch")
    create.add_argument(
        "--table-size", type=int, action="append", default=[], help="seats per finals table"
    )
    create.add_argument("--no-duplicate", action="store_true", help="no duplicate deals")
    create.add_argument("--resamples", type=int, default=1000, help="the report's bootstrap")
    _add_target(create)
    create.set_defaults(handler=cmd_tournament, op="create")
    status = tsub.add_parser("status", help="phase, deadline, field, finals progress")
    status.add_argument("tournament_id")
    status.add_argument(
        "--follow", action="store_true", help="a line at every change until it is over (server)"
    )
    _add_target(status)
    status.set_defaults(handler=cmd_tournament, op="status")
    report = tsub.add_parser("report", help="the published report (text, --json, --csv)")
    report.add_argument("tournament_id")
    shape = report.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true")
    shape.add_argument("--csv", action="store_true")
    _add_target(report)
    report.set_defaults(handler=cmd_tournament, op="report")
    mark = tsub.add_parser("mark", help="mark a version of your bot final (before the deadline)")
    mark.add_argument("tournament_id")
    mark.add_argument("bot")
    mark.add_argument("--version", default="", help="default: the bot's latest")
    mark.add_argument("--clear", action="store_true", help="unmark it")
    _add_target(mark)
    mark.set_defaults(handler=cmd_tournament, op="mark")
    cancel = tsub.add_parser("cancel", help="cancel a tournament (its organiser)")
    cancel.add_argument("tournament_id")
    _add_target(cancel)
    cancel.set_defaults(handler=cmd_tournament, op="cancel")


def _add_target(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser)
    add_store_argument(parser)


@contextmanager
def _registry(args: argparse.Namespace) -> Iterator[Any]:
    from saloon.arena.registry import Registry
    from saloon.worker.store.config import resolve_url
    from saloon.worker.store.store import Store

    with Store.open(resolve_url(args.store)) as store:
        yield Registry(store)


# -- serve and users -------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    """Run the arena service until SIGINT/SIGTERM."""
    from saloon.arena.errors import AddressInUse
    from saloon.arena.server import ArenaServer, ServeOptions
    from saloon.worker.store.config import resolve_url

    if args.log_format == "json":
        configure_logging("json")
    else:
        log_to_stderr(logging.INFO, "%(asctime)s %(name)s: %(message)s")
    try:
        server = ArenaServer(
            ServeOptions(
                store_url=resolve_url(args.store),
                redis_url=args.redis,
                queue_name=args.queue,
                listen=args.listen,
                http=args.http,
                sandbox=args.sandbox,
                season_sandbox=args.season_sandbox,
                submit_burst=args.submit_burst,
                submit_every_s=args.submit_every,
                tls_cert=args.tls_cert,
                tls_key=args.tls_key,
            )
        )
    except AddressInUse as exc:  # the operator's input: one line, not a traceback
        print(f"saloon: error: {exc}", file=sys.stderr)
        return 1
    server.start()
    boards = ""
    if server.boards is not None:
        host = server.options.http.rpartition(":")[0]
        boards = f", boards on {server.boards.scheme}://{host}:{server.boards.port}/"
    out.write(f"saloon serve: arena API on {server.address}{boards}\n")
    out.flush()

    def stop(_signum: int, _frame: Any) -> None:
        server.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.wait()
    return 0


def cmd_user_add(args: argparse.Namespace, out: TextIO) -> int:
    """Add a user and print their token."""
    from saloon.arena.registry import Role

    role = Role.ORGANISER if args.organiser else Role.USER
    with _registry(args) as registry:
        token = registry.add_user(args.name, role)
    out.write(f"user {args.name} ({role.value}) added; their API token (shown once):\n{token}\n")
    return 0


def cmd_user_rotate(args: argparse.Namespace, out: TextIO) -> int:
    """Give a user a new token."""
    with _registry(args) as registry:
        token = registry.rotate_token(args.name)
    out.write(
        f"user {args.name}: new API token (the old one no longer works, and the web sessions "
        f"signed in with it have ended):\n{token}\n"
    )
    return 0


def cmd_user_remove(args: argparse.Namespace, out: TextIO) -> int:
    """Remove a user (their token and sessions end; what they own stays)."""
    with _registry(args) as registry:
        registry.remove_user(args.name)
    out.write(
        f"user {args.name} removed: their token no longer works and their web sessions have "
        "ended; their bots and results stay, and the name stays taken\n"
    )
    return 0


def cmd_user_list(args: argparse.Namespace, out: TextIO) -> int:
    """List users (a removed one is marked ``removed``)."""
    with _registry(args) as registry:
        for user in registry.users():
            removed = "\tremoved" if user.removed else ""
            out.write(f"{user.name}\t{user.role.value}{removed}\n")
    return 0


# -- bots ------------------------------------------------------------------------------


def cmd_submit(args: argparse.Namespace, out: TextIO) -> int:
    """Submit a bot version to the server, or to the local store."""
    with server_or_local(args.server, args.token, args.tls_ca) as client:
        if client is not None:
            reply = client.submit(
                args.path, game=args.game, name=args.name, tournament=args.tournament
            )
            q = reply.qualification if reply.HasField("qualification") else None
            return _print_submission(out, reply.accepted, reply.message, q)
    from saloon.arena.submit import submit
    from saloon.sdk.client import package_bytes
    from saloon.worker.sandbox import open_sandbox

    data, filename = package_bytes(args.path)
    owner = getpass.getuser() or "local"
    with _registry(args) as registry, open_sandbox(args.sandbox) as sandbox:
        if args.tournament:
            from datetime import UTC, datetime

            from saloon.arena.tournament import check_entry

            check_entry(registry, args.tournament, owner, datetime.now(UTC))
        done = submit(registry, owner, args.name, args.game, data, filename, sandbox)
        if args.tournament and done.accepted:
            from saloon.arena.tournament import mark_final

            mark_final(registry, args.tournament, owner, done.bot, done.version, datetime.now(UTC))
    return _print_submission(out, done.accepted, done.message, done.qualification)


def _print_submission(out: TextIO, accepted: bool, message: str, q: Any) -> int:
    """The verdict, the qualification, its faults and (refused) the bot's stderr, with
    what the bot wrote in them :func:`shown` (no raw escapes reach the terminal)."""
    out.write(shown(message) + "\n")
    if q is not None:
        out.write(
            f"qualification {q.match_id}: {'passed' if q.passed else 'FAILED'}, rank {q.rank} "
            f"against {', '.join(q.opponents)} ({q.seconds:.1f} s)\n"
        )
        for fault in q.faults:
            out.write(f"  fault: {shown(fault)}\n")
        if not accepted and q.stderr:
            out.write("the bot's stderr:\n")
            out.write(shown("".join(f"  | {line}\n" for line in q.stderr.splitlines())))
    return 0 if accepted else 1


def cmd_bots(args: argparse.Namespace, out: TextIO) -> int:
    """List bots and versions (server or local store)."""
    rows: list[tuple[str, str, str, list[str], str]] = []
    with server_or_local(args.server, args.token, args.tls_ca) as client:
        if client is not None:
            for bot in client.bots(args.game, args.owner):
                versions = [v.version for v in bot.versions]
                language = bot.versions[-1].language if bot.versions else ""
                rows.append((bot.name, bot.owner, bot.game, versions, language or "python"))
        else:
            with _registry(args) as registry:
                for s in registry.latest(game=args.game, owner=args.owner):
                    versions = [v.version for v in s.history]
                    language = version_language(s.version.meta)
                    rows.append((s.bot, s.owner, s.game, versions, language))
    if not rows:
        out.write("no bots\n")
    for name, owner, game, versions, language in rows:
        out.write(
            f"{name}  ({owner}, {game}, {language})  {len(versions)} version(s), "
            f"latest {versions[-1]}\n"
        )
    return 0


# -- ladder seasons (server) ------------------------------------------------------------


@contextmanager
def _server(args: argparse.Namespace, otherwise: str) -> Iterator[ArenaClient]:
    """The configured server's client; ArenaClientError saying ``otherwise`` without one."""
    with server_or_local(args.server, args.token, args.tls_ca) as client:
        if client is None:
            raise ArenaClientError("NO_SERVER", f"no arena server configured ({otherwise})")
        yield client


def cmd_ladder_season(args: argparse.Namespace, out: TextIO) -> int:
    """Create (and start, or repeat) a season of a ladder on the server."""
    with _server(args, "ladder seasons run on a server: --server HOST:PORT") as client:
        info = client.create_season(
            args.game,
            options=dict(args.option),
            players=args.players,
            rounds=args.rounds,
            seed=args.seed,
            season_id=args.season_id,
            house=args.house,
            start=args.start,
            repeat_every_s=args.every,
        )
        _print_season(info, out)
        if args.follow:
            follow_season(client, info.season_id, out)
    return 0


def cmd_ladder_season_op(args: argparse.Namespace, out: TextIO) -> int:
    """start / status / cancel a season on the server."""
    with _server(args, "for a local store use `saloon season`") as client:
        if args.op == "start":
            _print_season(client.start_season(args.season_id), out)
        elif args.op == "cancel":
            _print_season(client.cancel_season(args.season_id), out)
        elif args.follow:
            follow_season(client, args.season_id, out)
        else:
            _print_season(client.season(args.season_id), out)
    return 0


def cmd_ladder_stop(args: argparse.Namespace, out: TextIO) -> int:
    """Stop a repeating schedule."""
    with _server(args, "schedules live on a server: --server HOST:PORT") as client:
        info = client.cancel_schedule(args.schedule_id)
    out.write(f"schedule {info.schedule_id}: stopped after {len(info.seasons)} season(s)\n")
    return 0


def cmd_continuous(args: argparse.Namespace, out: TextIO) -> int:
    """start / stop / status of a continuous ladder on the server."""
    with _server(args, "continuous ladders run on a server: --server HOST:PORT") as client:
        if args.op == "start":
            info = client.start_ladder(
                args.ladder_id,
                args.game,
                options=dict(args.option),
                players=args.players,
                seed=args.seed,
                house=args.house,
                duplicate=args.duplicate,
                batch=args.batch,
                min_share=args.min_share,
                allow_same_owner=args.allow_same_owner,
                max_batches=args.max_batches,
            )
        elif args.op == "stop":
            info = client.stop_ladder(args.ladder_id)
        else:
            info = client.ladder(args.ladder_id)
        _print_ladder(info, out, getattr(args, "board", False))
        if getattr(args, "follow", False):
            info = follow_ladder(client, args.ladder_id, out, shown=info)
            if getattr(args, "board", False):
                _print_ladder(info, out, True)
    return 0


def _ladder_line(info: Any) -> str:
    state = "running" if info.active else "stopped"
    batch = ""
    if info.batch_season:
        b = info.batch
        batch = f"; batch {info.batch_season}: {b.done} done, {b.running} running of {b.total}"
    return (
        f"ladder {info.ladder_id} ({info.game}, {state}): {info.batches} batch(es), "
        f"{info.matches} rated match(es){batch}\n"
    )


def _print_ladder(info: Any, out: TextIO, board: bool) -> None:
    out.write(_ladder_line(info))
    if board:
        for row in info.board.rows:
            rank = str(row.rank) if row.rank else "-"
            rating = f"{row.conservative:7.2f}" if row.rank else "unrated"
            out.write(f"  {rank:>4}  {row.bot:<32} {rating}  {row.matches} matches\n")
    out.flush()


def cmd_ladder_matches(args: argparse.Namespace, out: TextIO) -> int:
    """List a season's matches."""
    with _server(args, "for a local store use `saloon season status`") as client:
        for m in client.matches(args.season_id):
            ranks = " ranks " + ",".join(str(r + 1) for r in m.ranks) if m.ranks else ""
            out.write(f"{m.match_id}  {m.status:<9} {' vs '.join(m.seats)}{ranks}\n")
    return 0


def cmd_ladder_match(args: argparse.Namespace, out: TextIO) -> int:
    """Print a match record (JSON) as a seat or in full, then the seat's stderr."""
    with _server(args, "for a local record file use `saloon replay`") as client:
        record, stderr = client.match(args.match_id, args.seat)
    json.dump(record, out, indent=1)
    out.write("\n")
    if stderr:
        sys.stderr.write(shown(stderr))  # the bot's own text: no raw escapes
    return 0


#: The statuses after which a season's progress no longer changes.
SEASON_OVER = ("done", "failed", "cancelled")
#: How long ``--follow`` keeps trying to reconnect to a server that went away...
RECONNECT_FOR_S = 300.0
#: ... waiting this long (seconds, doubling up to RECONNECT_MAX_S) between tries.
RECONNECT_FIRST_S = 0.25
RECONNECT_MAX_S = 2.0


def reconnecting(client: ArenaClient, watch: Callable[[], Iterator[_T]]) -> Iterator[_T]:
    """What the stream ``watch()`` opens sends, until it ends; when the server goes away
    (a restart: UNAVAILABLE), say so on stderr and open it again, for RECONNECT_FOR_S (the
    first message after a reconnect repeats where things are)."""
    lost_at: float | None = None
    wait = RECONNECT_FIRST_S
    while True:
        try:
            for item in watch():
                if lost_at is not None:
                    sys.stderr.write(f"saloon: reconnected to {client.config.server}\n")
                    lost_at, wait = None, RECONNECT_FIRST_S
                yield item
            return
        except ArenaClientError as exc:
            if exc.code != "UNAVAILABLE":
                raise
            now = time.monotonic()
            if lost_at is None:
                lost_at = now
                sys.stderr.write(
                    f"saloon: lost the server ({exc.message}); reconnecting for up to "
                    f"{RECONNECT_FOR_S:.0f} s\n"
                )
                sys.stderr.flush()
            elif now - lost_at > RECONNECT_FOR_S:
                raise
        time.sleep(wait)
        wait = min(wait * 2, RECONNECT_MAX_S)


def follow_season(client: ArenaClient, season_id: str, out: TextIO) -> None:
    """Print the season's progress at each change until it is over, across server
    restarts (:func:`reconnecting`)."""
    last: str | None = None
    for info in reconnecting(client, lambda: client.watch_season(season_id)):
        line = f"{info.status} {info.done} {info.running} {info.failed} {info.total}"
        if line != last:  # a reconnect sends the progress again
            last = line
            _print_season(info, out)
        if info.status in SEASON_OVER:
            return


def follow_ladder(client: ArenaClient, ladder_id: str, out: TextIO, shown: Any = None) -> Any:
    """Print a continuous ladder's state at each change (from ``shown``, a LadderInfo
    printed already) until it has stopped and settled, across server restarts
    (:func:`reconnecting`); its last LadderInfo."""
    last = None if shown is None else _ladder_line(shown)
    info = shown
    for info in reconnecting(client, lambda: client.watch_ladder(ladder_id)):
        line = _ladder_line(info)
        if line != last:  # a reconnect sends the state again
            last = line
            out.write(line)
            out.flush()
    return info


def _print_season(info: Any, out: TextIO) -> None:
    repeat = f", repeats as schedule {info.schedule_id}" if info.schedule_id else ""
    out.write(
        f"season {info.season_id} ({info.game}, {info.status}): {info.done} done, "
        f"{info.running} running, {info.failed} failed of {info.total}; "
        f"{len(info.participants)} entries{repeat}\n"
    )
    out.flush()


# -- tournaments ------------------------------------------------------------------------


def cmd_tournament(args: argparse.Namespace, out: TextIO) -> int:
    """create / status / report / mark / cancel a tournament, on the server or the local
    store (the local one moves on only while a ``saloon serve`` drives it)."""
    with server_or_local(args.server, args.token, args.tls_ca) as client:
        if client is not None:
            data, csv = _tournament_on_server(client, args)
            if getattr(args, "follow", False):
                _print_tournament(data, out)
                follow_tournament(client, args.tournament_id, out, _progress_line(data))
                return 0
        else:
            data, csv = _tournament_here(args)
    if args.op == "report":
        return _print_report(data, csv, args, out)
    _print_tournament(data, out)
    return 0


def _create_settings(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "options": dict(args.option),
        "players": args.players,
        "seed": args.seed,
        "house": list(args.house),
        "finals_per_owner": args.finals_per_owner,
        "qualifying_rounds": args.qualifying_rounds,
        "top_k": args.top_k,
        "confidence": args.confidence,
        "budget": args.budget,
        "batch_matches": args.batch_matches,
        "table_sizes": list(args.table_size),
        "duplicate": not args.no_duplicate,
        "resamples": args.resamples,
    }


def _progress_line(data: dict[str, Any]) -> str:
    """One line of a followed tournament: phase, batches, results, the season playing."""
    season = data.get("season")
    playing = f"; {season['season_id']} {season['done']}/{season['total']}" if season else ""
    stop = f"; stopped: {data['stop']}" if data.get("stop") else ""
    return (
        f"tournament {data['tournament_id']}: {data['phase']}, {data['batches']} batch(es), "
        f"{data['finals_matches']} finals match(es){playing}{stop}\n"
    )


def follow_tournament(client: ArenaClient, tournament_id: str, out: TextIO, shown: str) -> None:
    """Print a line at each change of a tournament (from ``shown``, the line printed
    already) until it is done or cancelled, across server restarts (:func:`reconnecting`)."""
    last = shown
    for info in reconnecting(client, lambda: client.watch_tournament(tournament_id)):
        line = _progress_line(_info_dict(info))
        if line != last:
            last = line
            out.write(line)
            out.flush()


def _tournament_on_server(client: ArenaClient, args: argparse.Namespace) -> tuple[Any, str]:
    """The operation on the server: (the tournament as a dict, its report's CSV)."""
    tid = args.tournament_id
    if args.op == "create":
        info = client.create_tournament(tid, args.game, args.deadline, **_create_settings(args))
    elif args.op == "mark":
        info = client.mark_final(tid, args.bot, args.version, args.clear)
    elif args.op == "cancel":
        info = client.cancel_tournament(tid)
    else:
        info = client.tournament(tid)
    return _info_dict(info), info.report_csv


def _info_dict(info: Any) -> dict[str, Any]:
    """A TournamentInfo as the dict the local store's status gives."""
    state = json.loads(info.state_json or "{}")
    return {
        "tournament_id": info.tournament_id,
        "game": info.game,
        "organiser": info.organiser,
        "phase": info.phase,
        "deadline": info.deadline,
        "frozen_at": info.frozen_at or None,
        "field": list(info.field),
        "batches": info.batches,
        "matches": info.matches,
        "finals_matches": info.finals_matches,
        "season": (
            {"season_id": info.batch_season, "status": info.batch.status,
             "done": info.batch.done, "total": info.batch.total}
            if info.batch_season else None
        ),
        "settings": json.loads(info.settings_json or "{}"),
        "my_finals": list(info.my_finals),
        "report": json.loads(info.report_json) if info.report_json else None,
        **state,
    }  # fmt: skip


def _tournament_here(args: argparse.Namespace) -> tuple[Any, str]:
    """The operation on the local store."""
    from datetime import UTC, datetime

    from saloon.arena import tournament
    from saloon.arena.tournaments import Tournaments

    owner = getpass.getuser() or "local"
    now = datetime.now(UTC)
    with _registry(args) as registry:
        tid = args.tournament_id
        if args.op == "create":
            s = _create_settings(args)
            asked = tournament.TournamentRequest(
                tournament_id=tid, game=args.game, deadline=datetime.fromisoformat(args.deadline),
                options=s["options"], players=s["players"],
                seed=s["seed"] if s["seed"] is not None else _secret_seed(),
                house=tuple(s["house"]), finals_per_owner=s["finals_per_owner"],
                qualifying_rounds=s["qualifying_rounds"],
                finals=tournament.FinalsSettings(
                    top_k=s["top_k"], confidence=s["confidence"], budget=s["budget"],
                    batch_matches=s["batch_matches"], table_sizes=tuple(s["table_sizes"]),
                    duplicate=s["duplicate"],
                ),
                resamples=s["resamples"], sandbox=SandboxKind.PROCESS,
            )  # fmt: skip
            tournament.create(registry, asked, owner, now)
        elif args.op == "mark":
            tournament.mark_final(
                registry, tid, owner, args.bot, args.version, now, clear=args.clear
            )
        elif args.op == "cancel":
            tournament.cancel(registry, None, tid, owner)
        row = Tournaments(registry.store).get(tid)
        data = tournament.status(registry, row, organiser=True, user=owner)
        csv = tournament.report_csv(row) if row.report is not None else ""
    return data, csv


def _secret_seed() -> int:
    from saloon.referee.seeds import secret_seed

    return secret_seed()


def _print_tournament(data: dict[str, Any], out: TextIO) -> None:
    """One tournament as text: phase, deadline, field, finals progress."""
    out.write(
        f"tournament {data['tournament_id']} ({data['game']}, {data['phase']}): deadline "
        f"{data['deadline']}"
        + (f", frozen at {data['frozen_at']}" if data.get("frozen_at") else "")
        + "\n"
    )
    if data.get("my_finals"):
        out.write(f"  your final versions: {', '.join(data['my_finals'])}\n")
    if data["field"]:
        out.write(f"  field ({len(data['field'])}): {', '.join(data['field'])}\n")
    if data["batches"] or data["matches"]:
        out.write(
            f"  finals: {data['batches']} batch(es), {data['finals_matches']} finals "
            f"match(es), {data['matches']} ranked in all\n"
        )
    season = data.get("season")
    if season:
        out.write(
            f"  playing {season['season_id']}: {season['done']} of {season['total']} "
            f"({season['status']})\n"
        )
    if data.get("stop"):
        out.write(f"  finals stopped: {data['stop']}\n")
    if data.get("reason"):
        out.write(f"  {data['reason']}\n")
    out.flush()


def _print_report(data: dict[str, Any], csv: str, args: argparse.Namespace, out: TextIO) -> int:
    """The published report: as JSON, CSV, or the standings as text."""
    report = data.get("report")
    if report is None:
        raise ArenaClientError(
            "FAILED_PRECONDITION",
            f"tournament {data['tournament_id']} has no report yet ({data['phase']})",
        )
    if args.json:
        json.dump(report, out, indent=1, sort_keys=True)
        out.write("\n")
    elif args.csv:
        out.write(csv)
    else:
        out.write(report_text(data, report))
    return 0


def report_text(data: dict[str, Any], report: dict[str, Any]) -> str:
    """The report's final standings as text: place, entrant, P(right above the next)."""
    lines = [
        f"tournament {data['tournament_id']} ({data['game']}): final standings after "
        f"{data['finals_matches']} finals match(es) ({data.get('stop') or data['phase']})"
    ]
    lines.append(f"  {'place':>5}  {'entrant':<36} {'skill':>7} {'±':>6}  P(above next)  games")
    for s in report.get("standings", []):
        p = "" if s.get("p_next") is None else f"{float(s['p_next']):.3f}"
        lines.append(
            f"  {s['place']:>5}  {s['entrant']:<36} {float(s['mu']):7.2f} "
            f"{float(s['sigma']):6.2f}  {p:>13}  {s['games']}"
        )
    return "\n".join(lines) + "\n"
