"""The ``saloon`` command: every layer's commands on one command line.

Each layer keeps its own commands in a ``register(subparsers)`` function (the referee's
``games``/``play``/``replay``/``new``, the arena's ``serve``/``user``/``submit``/``bots``/
``ladder``, the ratings' ``leaderboard``/``bot show``, the worker's ``season``/``worker``/
``demo``); this module, on top of every layer, adds them all and hands the lower layers
what they may not import: the Docker seat kind to ``play``, the season leaderboard to
``demo``. Every error a user can cause prints one line on stderr (``saloon: error: ...``)
and exits non-zero, without a traceback; registering imports nothing heavy, so that
``saloon play`` of house bots stays quick.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from saloon.arena import commands as arena_commands
from saloon.ratings import cli as ratings_cli
from saloon.referee import cli as referee_cli
from saloon.referee.cli import Handler, Parser, UsageError
from saloon.referee.seats import Seat, SeatFactory
from saloon.referee.shown import log_to_stderr
from saloon.worker.seasons import cli as season_cli


def docker_seat(path: str, game_id: str) -> Seat:
    """``docker:PATH``: the bot package at PATH in a locked-down container (one match)."""
    from saloon.worker.sandbox.docker import play_seat

    return play_seat(path, game_id)


def season_leaderboard(store: Any, season_id: str, out: TextIO) -> None:
    """What ``saloon demo`` prints after a season's standings: its leaderboard."""
    from saloon.ratings.reports import season_report

    season_report(store, season_id, out)


#: The seat kinds ``saloon play`` offers beyond house, grpc and path seats.
SEAT_KINDS: dict[str, SeatFactory] = {"docker": docker_seat}


def build_parser(user_errors: list[type[BaseException]] | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``saloon`` command, with every layer's commands.

    ``user_errors`` collects the exception classes the commands raise for mistakes a user
    made (printed as one line, exit status 1).
    """
    parser = Parser(prog="saloon", description="Saloon: a tournament arena for card-game bots.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    errors = [
        *referee_cli.register(sub, seat_kinds=SEAT_KINDS),
        *arena_commands.register(sub),
        *ratings_cli.register(sub),
        *season_cli.register(sub, reports=(season_leaderboard,)),
    ]
    if user_errors is not None:
        user_errors.extend(errors)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``saloon`` console script."""
    # gRPC's fork handlers off, before a command loads grpc: with them, a child forked while
    # gRPC's threads run (a bot process of the process sandbox, any subprocess) can abort
    # before it execs (grpcio >= 1.81, grpc/grpc#43055; seen as a SIGABRT of a process that
    # never started). Saloon never uses gRPC in a forked child that does not exec.
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
    log_to_stderr(logging.WARNING, "saloon: %(message)s")
    user_errors: list[type[BaseException]] = []
    try:
        args = build_parser(user_errors).parse_args(argv)
        handler: Handler = args.handler
        return handler(args, sys.stdout)
    except UsageError as exc:
        print(f"saloon: error: {exc} (see saloon --help)", file=sys.stderr)
        return 2
    except tuple(user_errors) as exc:
        print(f"saloon: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
