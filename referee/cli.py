"""The referee's commands: ``saloon games``, ``play``, ``replay``, ``new``; and the pieces
every layer's commands share (the one-line usage error, ``--option NAME=VALUE``).

The ``saloon`` command itself is :mod:`saloon.arena.cli`, on top of every layer: it builds
the parser, adds each layer's commands by calling its ``register(subparsers)`` (which adds
parsers with ``set_defaults(handler=fn)``, ``fn(args, out) -> int``, and returns the base
exception classes its commands raise for user errors), and prints every user error as one
line (``saloon: error: ...``) with a non-zero exit status, without a traceback. A register
module keeps its heavy imports inside its handlers, so that ``saloon play`` stays quick.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from saloon.games import State, game_ids, get_game
from saloon.games.errors import GameError
from saloon.referee.errors import RefereeError
from saloon.referee.faults import FaultKind
from saloon.referee.limits import DEFAULT_BANK_MS, DEFAULT_DECISION_MS, DEFAULT_LIMITS
from saloon.referee.record import MatchRecord, stderr_blocks
from saloon.referee.replay import Step, replay, verify, verify_deals
from saloon.referee.shown import shown
from saloon.sdk.botref import HOUSE_PREFIX
from saloon.sdk.errors import SdkError
from saloon.sdk.house import house_bot_names
from saloon.sdk.output import unmarked

if TYPE_CHECKING:
    from saloon.referee.seats import SeatFactory

MAX_SEED = 2**63 - 1
#: A command handler: parsed arguments and the output stream in, exit status out.
Handler = Callable[[argparse.Namespace, TextIO], int]


class UsageError(Exception):
    """A command line that does not parse."""


class Parser(argparse.ArgumentParser):
    """argparse, but errors become one line (raised, printed by main)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed {text!r} is not an integer") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"seed {value} is out of range 0..2**63-1")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 < value <= 86_400_000:
        raise argparse.ArgumentTypeError(f"{value} is out of range 1..86400000 (ms)")
    return value


def parse_option(text: str) -> tuple[str, str]:
    """A ``--option NAME=VALUE`` argument as (name, value) (argparse type)."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"option {text!r} is not NAME=VALUE")
    return name, value


def register(
    sub: Any, seat_kinds: Mapping[str, SeatFactory] | None = None
) -> tuple[type[Exception], ...]:
    """Add ``games``, ``play``, ``replay`` and ``new`` to the ``saloon`` command line.

    ``seat_kinds``: the seat kinds of the higher layers ``play`` offers (``docker:PATH``,
    ``--sandbox docker``), by name; the referee itself knows house, grpc and path seats.
    """

    games = sub.add_parser("games", help="list the games, their seats, options and house bots")
    games.add_argument("--json", action="store_true", help="print JSON")

    play = sub.add_parser(
        "play",
        help="play one match (house bots in-process, bot paths over gRPC), print its log",
        epilog="A bot path runs in the process sandbox: its own process, PID namespace, "
        "rlimits, an allow-listed environment and (under root) an unprivileged uid. The "
        "process sandbox is NOT a security boundary: the bot shares this machine's kernel, "
        "files and network. Run untrusted bots in containers (docs/sandbox.md).",
    )
    play.add_argument("game", help="a game id, e.g. seas-of-strife-v1 (see `saloon games`)")
    play.add_argument(
        "--seat",
        action="append",
        required=True,
        metavar="BOT",
        help="one per seat, in seat order: house:NAME, grpc:TARGET, a path to a bot file or "
        "folder, or docker:PATH (the bot in the Docker sandbox, as the arena runs it)",
    )
    play.add_argument(
        "--sandbox",
        default="process",
        metavar="KIND",
        help="where bare bot paths run: process (default; a local process, NOT a security "
        "boundary) or docker (a locked-down container; needs a Docker engine)",
    )
    play.add_argument("--seed", type=_seed, default=0, help="match seed (default 0)")
    play.add_argument(
        "--option",
        type=parse_option,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a game option (see `saloon games`), repeatable",
    )
    play.add_argument(
        "--decision-ms",
        type=_positive,
        help=f"time per decision for bots outside the referee (default {DEFAULT_DECISION_MS})",
    )
    play.add_argument(
        "--bank-ms", type=_positive, help=f"match time bank per bot (default {DEFAULT_BANK_MS})"
    )
    play.add_argument("--json", action="store_true", help="print the match record as JSON")
    play.add_argument("--out", metavar="FILE", help="also write the match record to FILE")
    play.add_argument(
        "--debug",
        action="store_true",
        help="play bot paths in this process, unclocked, and let their exceptions propagate "
        "(python -m pdb -m saloon.arena.cli play --debug ... stops at them)",
    )

    rep = sub.add_parser("replay", help="show a recorded match (JSON record file)")
    rep.add_argument("file", help="a match record written by `saloon play --json`/--out")
    rep.add_argument("--as-seat", type=int, metavar="K", help="show only what seat K saw")
    rep.add_argument(
        "--json",
        action="store_true",
        help="print the record as JSON; with --as-seat: each observation as raw JSON",
    )
    rep.add_argument(
        "--verify",
        action="store_true",
        help="re-run the log through the engine and check the recorded result, and that "
        "every deal is the one the record's seed deals",
    )
    ev = sub.add_parser(
        "eval",
        help="measure a bot: N seeded matches against opponents, seats rotated, on every core",
        epilog="Prints the win rate (two seats) or mean placing with a 95% interval and a "
        "one-sided p-value against 'no better than the opponents' (docs/bot-guide.md). "
        "Exit status 3 when the bot crashed or was played out in some match.",
    )
    ev.add_argument("bot", help="the bot to measure: a path, house:NAME, grpc:TARGET ...")
    ev.add_argument("--game", required=True, help="a game id (see `saloon games`)")
    ev.add_argument(
        "--vs",
        action="append",
        metavar="SPEC",
        help="an opponent, repeatable; the opponents fill the other seats in turn "
        "(default house:greedy)",
    )
    ev.add_argument(
        "--seats",
        type=int,
        help="seats per match (default: the game's least, or one per opponent and the bot)",
    )
    ev.add_argument("-n", "--matches", type=int, default=40, help="matches (default 40)")
    ev.add_argument("--jobs", type=int, help="matches played at once (default: every core)")
    ev.add_argument(
        "--duplicate",
        action="store_true",
        help="duplicate deals: each deal played once per rotation of the seats",
    )
    ev.add_argument("--seed", type=_seed, default=0, help="the evaluation's seed (default 0)")
    ev.add_argument(
        "--option",
        type=parse_option,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a game option, repeatable",
    )
    ev.add_argument("--sandbox", default="process", metavar="KIND", help="as for play")
    ev.add_argument("--json", action="store_true", help="print the summary and every match")
    new = sub.add_parser("new", help="write a starter bot and a test that plays it")
    new.add_argument("game", help="a game id (see `saloon games`)")
    new.add_argument("dir", help="a new or empty folder for the bot, its build files and test")
    new.add_argument(
        "--lang",
        default="python",
        metavar="LANG",
        help="the bot's language: python (default), js, ts, go or cpp",
    )
    check = sub.add_parser(
        "check-bot",
        help="play each game a few times and report every protocol slip in plain words",
    )
    check.add_argument(
        "bot", help="a bot file or folder, docker:PATH, or grpc:TARGET (a runtime you started)"
    )
    check.add_argument(
        "--game", action="append", default=[], metavar="GAME", help="a game (repeatable; all)"
    )
    check.add_argument(
        "--matches", type=int, default=3, metavar="N", help="matches per game (default 3)"
    )
    check.add_argument("--seed", type=int, default=0, help="the seed of the run (default 0)")
    check.add_argument(
        "--sandbox",
        default="",
        metavar="KIND",
        help="where a bot path runs: process or docker (default: process for Python, "
        "docker for other languages)",
    )
    for parser, handler in (
        (games, cmd_games),
        (play, cmd_play),
        (rep, cmd_replay),
        (ev, cmd_eval),
        (new, cmd_new),
        (check, cmd_check_bot),
    ):
        parser.set_defaults(handler=handler)
    play.set_defaults(seat_kinds=dict(seat_kinds or {}))
    ev.set_defaults(seat_kinds=dict(seat_kinds or {}))
    check.set_defaults(seat_kinds=dict(seat_kinds or {}))
    return (GameError, RefereeError, SdkError)


# -- commands -------------------------------------------------------------------------
def cmd_games(args: argparse.Namespace, out: TextIO) -> int:
    """List the registered games."""
    rows: list[dict[str, Any]] = []
    for game_id in game_ids():
        spec = get_game(game_id)
        rows.append(
            {
                "id": spec.id,
                "name": spec.name,
                "min_players": spec.min_players,
                "max_players": spec.max_players,
                "summary": spec.summary,
                "decision_kinds": list(spec.decision_kinds),
                "options": [
                    {"name": o.name, "values": o.describe(), "default": o.default, "help": o.help}
                    for o in spec.options
                ],
                "house_bots": [f"{HOUSE_PREFIX}{name}" for name in house_bot_names(spec.id)],
            }
        )
    if args.json:
        out.write(json.dumps(rows, indent=1) + "\n")
        return 0
    for row in rows:
        seats = (
            f"{row['min_players']}"
            if row["min_players"] == row["max_players"]
            else f"{row['min_players']}-{row['max_players']}"
        )
        out.write(f"{row['id']:<22} {row['name']} ({seats} seats): {row['summary']}\n")
        out.write(f"{'':<22} house bots: {', '.join(row['house_bots'])}\n")
        for opt in row["options"]:
            out.write(
                f"{'':<22} --option {opt['name']}={opt['values']} "
                f"(default {opt['default']}): {opt['help']}\n"
            )
    return 0


def cmd_play(args: argparse.Namespace, out: TextIO) -> int:
    """Play one match and print its log (or its record as JSON)."""
    with ended_by_sigterm():
        return _play(args, out)


#: ``saloon play``'s exit status when a SIGTERM ended it (128 + the signal, as a shell says).
EXIT_TERMINATED = 128 + signal.SIGTERM


@contextlib.contextmanager
def ended_by_sigterm() -> Iterator[None]:
    """SIGTERM ends the command as Ctrl-C does (SystemExit(143) where the main thread is):
    every seat is closed on the way out, and a sandbox's exit handler removes what it
    started (bot processes, containers and their volumes). Only the first SIGTERM is
    acted on: later ones, while that clean-up runs (every wait of it bounded), are
    ignored. Outside the main thread, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    terminated = False

    def terminate(_signum: int, _frame: object) -> None:
        nonlocal terminated
        terminated = True
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # until the process exits
        raise SystemExit(EXIT_TERMINATED)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        if not terminated:
            signal.signal(signal.SIGTERM, previous)


def _play(args: argparse.Namespace, out: TextIO) -> int:
    from saloon.referee.match import Match, local_seats

    limits = replace(
        DEFAULT_LIMITS,
        decision_ms=args.decision_ms or DEFAULT_LIMITS.decision_ms,
        bank_ms=args.bank_ms or DEFAULT_LIMITS.bank_ms,
    )
    seats = local_seats(
        args.game, args.seat, debug=args.debug, sandbox=args.sandbox, kinds=args.seat_kinds
    )
    # The loop's fault warnings are for workers' logs: here every fault is in the printed
    # log, and a seat that failed gets its own line first (seat_problems).
    logging.getLogger("saloon.referee.match").setLevel(logging.ERROR)
    record = Match(get_game(args.game), seats, args.seed, dict(args.option), limits).run()
    for index, seat in enumerate(seats):
        record.stderr.extend(stderr_blocks(index, seat.diagnostics()))
    # A seat that did not load or crashed is the first thing on the screen, one line each.
    problems = [shown(line) for line in seat_problems(record)]
    for line in problems:
        sys.stderr.write(f"saloon: {line}\n")
    sys.stderr.flush()
    text = record.dumps()
    if args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise RefereeError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    if args.json:
        out.write(text)
    else:
        print_match(record, out)
    out.flush()
    # After the log, so a bot's traceback is the last thing on the screen, not scrolled away.
    # Each section starts with an empty line: its header is on a line of its own however
    # the two streams end up joined (a terminal, ``2>&1``, a tool that strips stdout's
    # last newline before it appends stderr).
    for info, seat in zip(record.seats, seats, strict=True):
        if diag := unmarked(seat.diagnostics()).rstrip():
            lines = diag.splitlines()[-40:]
            sys.stderr.write(
                shown(
                    f"\n--- seat {info.seat} ({info.bot}) stderr, last {len(lines)} lines "
                    "([decision N]: what it printed at log entry N) ---\n" + "\n".join(lines) + "\n"
                )
            )
    for line in problems:  # and again below the tracebacks, for a long log
        sys.stderr.write(f"saloon: {line}\n")
    return play_status(record)


#: ``saloon play``'s exit statuses (docs: README, docs/bot-guide.md).
EXIT_PLAYED = 0
EXIT_ERROR = 1  # nothing was played: a bad command line or input (one line on stderr)
EXIT_USAGE = 2  # the command line does not parse
EXIT_SEAT_FAILED = 3  # played, but a seat crashed or was played out (did not load, faults)
EXIT_ABORTED = 4  # the referee stopped the match before the game ended


def play_status(record: MatchRecord) -> int:
    """The exit status of ``saloon play`` for a played match."""
    if record.abort_reason is not None:
        return EXIT_ABORTED
    if record.played_out or any(f.kind is FaultKind.CRASH for f in record.faults):
        return EXIT_SEAT_FAILED
    return EXIT_PLAYED


def seat_problems(record: MatchRecord) -> list[str]:
    """One line per seat that crashed or was played out, starting with the bot's own
    file:line where the fault names one."""
    lines = []
    crashed = {f.seat for f in record.faults if f.kind is FaultKind.CRASH}
    for seat in sorted({*record.played_out, *crashed}):
        who = f"seat {seat} ({record.seats[seat].bot})"
        faults = [f for f in record.faults if f.seat == seat]
        if not faults:
            lines.append(f"{who} was played out by house:random")
            continue
        fault = next((f for f in faults if f.kind is FaultKind.CRASH), faults[-1])
        when = "at match start" if fault.decision < 0 else f"at decision {fault.decision}"
        what = (
            f"{fault.kind.value} {when}"
            if len(faults) == 1
            else (f"played out after {len(faults)} faults, the last {fault.kind.value} {when}")
        )
        detail = fault.detail
        place = _PLACE.search(detail)
        if detail.startswith(LOADING):
            what, detail = "did not load", detail[len(LOADING) :]
            place = None  # the load error already starts with it
        lead = f"{place.group(1)}: " if place else ""
        lines.append(f"{lead}{who} {what}: {detail}; house:random played its moves, ranked last")
    return lines


#: Where a fault says the bot's code raised: `` at FILE:LINE`` (the last one in the line).
_PLACE = re.compile(r".* at (\S+:\d+)")
#: How a seat's fault says its bot did not load (saloon.referee.process.seat.ProcessSeat).
LOADING = "the bot did not load: "


def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    """Show a recorded match, optionally as one seat saw it, optionally verified."""
    record = MatchRecord.load(args.file)
    if args.as_seat is not None and not 0 <= args.as_seat < len(record.seats):
        raise RefereeError(
            f"--as-seat {args.as_seat}: the match has seats 0..{len(record.seats) - 1}"
        )
    deals = 0
    if args.verify:
        verify(record)
        deals = verify_deals(record)
    if args.json and args.as_seat is None:
        out.write(record.dumps())  # the whole record, as read (and checked, with --verify)
        return 0
    print_match(record, out, as_seat=args.as_seat, raw=args.json)
    if args.verify:
        out.write(
            "verified: the log replays to the recorded scores and ranks, and its "
            f"{deals} chance draw(s) are the ones seed {record.seed} deals\n"
        )
    return 0


def cmd_eval(args: argparse.Namespace, out: TextIO) -> int:
    """Play N seeded matches of a bot against opponents and sum them up."""
    from saloon.referee import evaluate
    from saloon.referee.match import local_seats

    opponents = args.vs or [f"{HOUSE_PREFIX}greedy"]
    if not 0 < args.matches <= 100_000:
        raise RefereeError(f"-n {args.matches}: give 1..100000 matches")
    if args.jobs is not None and args.jobs < 1:
        raise RefereeError(f"--jobs {args.jobs}: give at least 1")
    seats = evaluate.check_table(args.game, args.bot, opponents, args.seats)
    matches = evaluate.schedule(args.bot, opponents, seats, args.matches, args.seed, args.duplicate)
    get_game(args.game).parse_options(dict(args.option))  # a bad option: one line, now
    # Every spec resolves (and a grpc target answers) before anything is played.
    for seat in local_seats(
        args.game, matches[0].bots, sandbox=args.sandbox, kinds=args.seat_kinds
    ):
        seat.close()
    bar = evaluate.ProgressBar(len(matches))
    jobs = min(args.jobs or evaluate.default_jobs(), len(matches))
    outcomes = evaluate.play_all(
        args.game,
        matches,
        dict(args.option),
        jobs=jobs,
        sandbox=args.sandbox,
        kinds=args.seat_kinds,
        done=bar,
    )
    summary = evaluate.summarize(
        args.bot, args.game, opponents, seats, args.seed, args.duplicate, outcomes, jobs
    )
    if args.json:
        out.write(json.dumps(summary.to_json(), indent=1) + "\n")
    else:
        evaluate.print_summary(summary, out)
    return EXIT_SEAT_FAILED if summary.failed else EXIT_PLAYED


def cmd_new(args: argparse.Namespace, out: TextIO) -> int:
    """Write a starter kit: a bot for the game, its build files and a test that plays it."""
    from saloon.referee.starter import next_steps, write_starter

    paths = write_starter(args.game, args.dir, args.lang)
    for path in paths:
        out.write(f"wrote {path}\n")
    out.write(next_steps(args.game, args.dir, args.lang))
    return 0


def cmd_check_bot(args: argparse.Namespace, out: TextIO) -> int:
    """Play each game a few times against house:random and report every protocol slip."""
    from saloon.games import game_ids
    from saloon.referee.conformance import check_game, print_report
    from saloon.referee.match import Match, local_seats
    from saloon.sdk.botref import PATH, parse_seat
    from saloon.sdk.languages import Language, ManifestError, detect_path

    if args.matches < 1:
        raise RefereeError("--matches must be at least 1")
    bot = args.bot
    sandbox = args.sandbox or "process"
    if parse_seat(bot).kind == PATH and not args.sandbox:
        try:
            if detect_path(bot).language is not Language.PYTHON:
                sandbox = "docker"  # the other languages' runtimes live in their images
        except ManifestError as exc:
            raise RefereeError(str(exc)) from None
    logging.getLogger("saloon.referee.match").setLevel(logging.CRITICAL)

    def play(game: str, seats: int, bot_seat: int, seed: int) -> MatchRecord:
        specs = ["house:random"] * seats
        specs[bot_seat] = bot
        resolved = local_seats(game, specs, sandbox=sandbox, kinds=args.seat_kinds)
        try:
            return Match(get_game(game), resolved, seed, {}, DEFAULT_LIMITS).run()
        finally:
            for seat in resolved:
                seat.close()

    games = args.game or list(game_ids())
    checks = [check_game(game, play, args.matches, args.seed) for game in games]
    return 0 if print_report(bot, checks, out) else EXIT_SEAT_FAILED


# -- printing -------------------------------------------------------------------------
def print_match(
    record: MatchRecord, out: TextIO, as_seat: int | None = None, raw: bool = False
) -> None:
    """A readable log of a match; with ``as_seat``, only what that seat saw (``raw``: JSON).
    What the bots wrote in it (fault details, stderr) is :func:`shown`: a record's escape
    sequences and bidi overrides never reach the terminal."""
    text = io.StringIO()
    _print_match(record, text, as_seat, raw)
    out.write(shown(text.getvalue()))


def _print_match(record: MatchRecord, out: TextIO, as_seat: int | None, raw: bool) -> None:
    seats = ", ".join(f"{s.seat}={s.bot}" for s in record.seats)
    opts = " ".join(f"{k}={v}" for k, v in record.options.items())
    out.write(f"{record.game} seed {record.seed} {opts} seats {seats}\n".replace("  ", " "))
    printed: dict[int, tuple[str, ...]] = {}
    if as_seat is not None:
        out.write(f"as seen by seat {as_seat}\n")
        for block in record.stderr:
            if block.seat != as_seat:
                continue
            if block.decision is None:
                _show_printed(f"at {block.when}", block.lines, out)
            else:
                printed[block.decision] = block.lines
    faults = {f.decision: f for f in record.faults}

    def show(step: Step) -> None:
        entry = step.entry
        if as_seat is not None:
            _show_as_seat(step, as_seat, out, raw)
            if step.index in printed:
                _show_printed("", printed[step.index], out)
            _show_events(entry.events, out)  # public: every seat saw them
            return
        if entry.is_chance:
            out.write(f"{step.index:5}  chance  {entry.kind:<14} {step.label}\n")
            _show_events(entry.events, out)
            return
        marks = " (only move)" if entry.auto else " (house:random)" if entry.fallback else ""
        if step.index in faults:
            fault = faults[step.index]
            marks += f" [{fault.kind.value}: {fault.detail}]"
        out.write(f"{step.index:5}  seat {entry.seat}  {entry.kind:<14} {step.label}{marks}\n")
        _show_events(entry.events, out)

    state = replay(record, show)
    for fault in record.faults:
        if fault.decision < 0:
            out.write(
                f"fault at match start: seat {fault.seat} {fault.kind.value}: {fault.detail}\n"
            )
    _print_result(record, state, out)


def _show_as_seat(step: Step, seat: int, out: TextIO, raw: bool) -> None:
    entry = step.entry
    if entry.seat != seat:
        return
    obs = step.before.observation(seat)
    if raw:
        out.write(f"{step.index:5}  you see: {json.dumps(obs, separators=(',', ':'))}\n")
    else:
        out.write(f"{step.index:5}  you see:\n")
        for key, text in _observation_lines(step.before.spec.id, obs):
            out.write(f"{'':7}{key}: {text}\n")
        legal = [step.before.action_to_string(a) for a in step.before.legal_actions()]
        out.write(f"{'':7}legal: {' | '.join(legal)}\n")
    # A forced move (one legal action) was played without asking the bot, a fallback one
    # by house:random: the seat's view says so, as the full log does.
    marks = " (only move)" if entry.auto else " (house:random)" if entry.fallback else ""
    out.write(f"{'':5}  you {entry.kind}: {step.label}{marks}\n")


def _show_printed(when: str, lines: Sequence[str], out: TextIO) -> None:
    """What the seat's bot wrote to stderr at one moment, indented under it."""
    out.write(f"{'':7}you printed{' ' + when if when else ''}:\n")
    for line in lines:
        out.write(f"{'':9}| {line}\n")


def _show_events(events: Sequence[dict[str, Any]], out: TextIO) -> None:
    """The public events of a log entry, one line each under it."""
    for event in events:
        name = event.get("event", "?")
        rest = ", ".join(f"{k} {_readable(v)}" for k, v in event.items() if k != "event")
        out.write(f"{'':7}=> {name}: {rest}\n")


def _observation_lines(game_id: str, obs: dict[str, Any]) -> list[tuple[str, str]]:
    """The observation field by field, as the SDK types it (cards as their short names)."""
    from dataclasses import fields, is_dataclass

    from saloon.sdk.games import adapter_for

    adapter = adapter_for(game_id)
    typed = None if adapter is None else adapter.decode_observation(obs)
    if typed is None or not is_dataclass(typed):  # a game without an SDK view: raw values
        return [(key, _readable(value)) for key, value in obs.items()]
    return [(f.name, _typed(getattr(typed, f.name))) for f in fields(typed)]


def _typed(value: object) -> str:
    """A typed SDK value on one line: a value with its own ``__str__`` (cards) as that."""
    from dataclasses import fields, is_dataclass

    if isinstance(value, tuple | list | frozenset):
        return "[" + ", ".join(_typed(v) for v in value) + "]"
    if type(value).__str__ is not object.__str__ and not isinstance(value, bool | int | float):
        return str(value)
    if is_dataclass(value) and not isinstance(value, type):
        inner = ", ".join(f"{f.name} {_typed(getattr(value, f.name))}" for f in fields(value))
        return f"{type(value).__name__}({inner})"
    return json.dumps(value) if value is None or isinstance(value, bool) else str(value)


def _readable(value: object) -> str:
    """A JSON value on one line without quotes around plain words."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + ", ".join(_readable(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_readable(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def _print_result(record: MatchRecord, state: State, out: TextIO) -> None:
    if not state.is_terminal():
        out.write("the log ends before the game is over\n")
        return
    # Ranks shown to people count from 1 (the record keeps them 0-based).
    rows = [("seat", "bot", "score", "rank", "")]
    for info in record.seats:
        flag = "played out after faults" if info.seat in record.played_out else ""
        score = record.scores[info.seat] if info.seat < len(record.scores) else float("nan")
        rank = record.ranks[info.seat] + 1 if info.seat < len(record.ranks) else 0
        rows.append((str(info.seat), info.bot, f"{score:g}", str(rank) if rank else "?", flag))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    out.write("result:\n")
    for cells in rows:
        line = (
            f"  {cells[0]:<{widths[0]}}  {cells[1]:<{widths[1]}}  {cells[2]:>{widths[2]}}"
            f"  {cells[3]:>{widths[3]}}  {cells[4]}"
        )
        out.write(line.rstrip() + "\n")
