"""``saloon leaderboard`` and ``saloon bot show``, added to the ``saloon`` command by
:mod:`saloon.arena.cli`.

Heavy imports (the store, trueskill, rich) happen inside the handlers, so that registering
these commands costs ``saloon play`` nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

from saloon.ratings.errors import NoResultsError, OutputError, RatingsError
from saloon.ratings.formats import Format
from saloon.referee.cli import parse_option
from saloon.sdk.client import ArenaClientError, add_server_arguments, server_or_local
from saloon.worker.seasons.cli import add_store_argument

if TYPE_CHECKING:
    from saloon.ratings.ladders import Ladder
    from saloon.sdk.client import ArenaClient
    from saloon.worker.store.store import Store

#: Matches `saloon bot show` lists by default.
DEFAULT_RECENT = 10
#: Rating history points `saloon bot show` prints per ladder by default (the last ones).
DEFAULT_HISTORY = 12


def register(subparsers: Any) -> tuple[type[Exception], ...]:
    """Add ``leaderboard`` and ``bot show`` to the ``saloon`` command line."""
    board = subparsers.add_parser(
        "leaderboard",
        help="a game's TrueSkill leaderboard (all-time, or one season's)",
        description="Rank the bots of a game's ladder by mu - 3 sigma (see docs/ratings.md).",
    )
    board.add_argument("--game", required=True, help="a game id, e.g. seas-of-strife-v1")
    board.add_argument("--season", metavar="S", help="only season S (no drift: tau 0)")
    board.add_argument(
        "--option",
        type=parse_option,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="the ladder: a rated-apart game option (e.g. end=gap); default: the game's "
        "default options",
    )
    board.add_argument(
        "--format", choices=list(Format), default=Format.TABLE.value, help="default table"
    )
    board.add_argument("--out", metavar="F", help="write to file F instead of stdout")
    add_store_argument(board)
    add_server_arguments(
        board,
        server_help="read it from an arena server (host:port; default $SALOON_SERVER or the "
        "client config file; none: the local store)",
    )
    board.set_defaults(handler=cmd_leaderboard)

    bot = subparsers.add_parser("bot", help="a bot's versions, ratings and recent matches")
    bot_sub = bot.add_subparsers(dest="bot_command", required=True, metavar="show")
    show = bot_sub.add_parser("show", help="versions, rating history, recent matches")
    show.add_argument("name", help="a stored bot's name, house:NAME, or a bot path")
    show.add_argument(
        "--recent", type=int, default=DEFAULT_RECENT, help=f"matches listed ({DEFAULT_RECENT})"
    )
    show.add_argument(
        "--history", type=int, default=DEFAULT_HISTORY,
        help=f"rating points listed per ladder, the last ones ({DEFAULT_HISTORY})",
    )  # fmt: skip
    add_store_argument(show)
    show.set_defaults(handler=cmd_bot_show)
    return (RatingsError, ArenaClientError)


@contextlib.contextmanager
def _open_store(url: str | None) -> Iterator[Store]:
    from saloon.worker.errors import WorkerError
    from saloon.worker.store.config import resolve_url
    from saloon.worker.store.store import Store

    resolved = resolve_url(url)
    # Reading must not create: opening a missing SQLite file would make an empty store.
    if resolved.startswith("sqlite:///") and not os.path.exists(resolved[len("sqlite:///") :]):
        raise NoResultsError(f"no results store at {resolved[len('sqlite:///') :]}")
    try:
        store = Store.open(url)
    except WorkerError as exc:
        raise RatingsError(str(exc)) from None
    try:
        yield store
        from saloon.ratings.incremental import write_held

        write_held(store)  # the boards read: what they took in, for the next reader
    except WorkerError as exc:
        raise RatingsError(str(exc)) from None
    finally:
        store.close()


@contextlib.contextmanager
def _output(path: str | None, out: TextIO) -> Iterator[TextIO]:
    if path is None:
        yield out
        return
    try:
        fh = open(path, "w", encoding="utf-8")  # noqa: SIM115 -- closed below
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    with fh:
        yield fh


def cmd_leaderboard(args: argparse.Namespace, out: TextIO) -> int:
    """Print (or write) a leaderboard."""
    from saloon.games import get_game
    from saloon.ratings.boards import (
        game_leaderboard,
        season_leaderboard,
        write_leaderboard,
    )

    get_game(args.game)  # an unknown game is a clear error before the store is opened
    options = dict(args.option)
    with server_or_local(args.server, args.token, args.tls_ca) as client:
        if client is not None:
            return _remote_leaderboard(client, args, options, out)
    with _open_store(args.store) as store:
        if args.season:
            board = season_leaderboard(store, args.season)
            if board.ladder.game != args.game:
                raise RatingsError(
                    f"season {args.season} is a season of {board.ladder.game}, not {args.game}"
                )
            others: list[Ladder] = []
        else:
            board, others = game_leaderboard(store, args.game, options)
    with _output(args.out, out) as sink:
        write_leaderboard(board, Format(args.format), sink)
    if others:
        listing = "; ".join(f"--option {' '.join(f'{k}={v}' for k, v in o.options)}"
                            for o in others)  # fmt: skip
        print(f"saloon: other ladders of {args.game} have results: {listing}", file=sys.stderr)
    return 0


def _remote_leaderboard(
    client: ArenaClient, args: argparse.Namespace, options: dict[str, str], out: TextIO
) -> int:
    """The leaderboard from an arena server: JSON as the server renders it, or its rows as
    a table or CSV (the HTML page is the server's own, at /leaderboard/GAME)."""
    if args.format == Format.HTML:
        raise RatingsError("the server's HTML board is its web page: /leaderboard/GAME")
    board = client.leaderboard(args.game, options, args.season or "")
    head = ["rank", "bot", "owner", "version", "mu-3sigma", "mu", "sigma", "matches", "faults"]
    rows = [
        [
            str(r.rank) if r.rank else "-",
            r.bot,
            r.owner,
            r.version,
            *(f"{x:.3f}" if r.rank else "-" for x in (r.conservative, r.mu, r.sigma)),
            str(r.matches),
            str(r.faults),
        ]
        for r in board.rows
    ]
    with _output(args.out, out) as sink:
        if args.format == Format.JSON:
            sink.write(board.json)
        elif args.format == Format.CSV:
            writer = csv.writer(sink, lineterminator="\n")
            writer.writerows([head, *rows])
        else:
            widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
            sink.write(board.title + "\n")
            for line in [head, *rows]:
                sink.write("  ".join(x.ljust(w) for x, w in zip(line, widths, strict=True)))
                sink.write("\n")
    return 0


def cmd_bot_show(args: argparse.Namespace, out: TextIO) -> int:
    """Print a bot's versions, rating history per ladder and recent matches with faults."""
    from saloon.ratings.botview import show_bot

    with _open_store(args.store) as store:
        show_bot(store, args.name, out, recent=args.recent, history=args.history)
    return 0
