"""``saloon check-bot PATH``: a conformance run for a bot of any language.

It plays each game (or the ones asked for) a few times against house:random, the bot in
every seat position in turn, exactly as the arena would (the same referee, clocks and
sandbox), and reports every protocol slip in plain words: a runtime that never served its
socket, a wrong protocol version, a late, missing, out-of-range or garbled answer, a crash,
an error the bot's own runtime reported. A bot with no slip in any match passes.

Meant first for authors of a runtime Saloon does not ship (Rust, C#, ...): serve the
protocol (docs/protocol.md) on a unix socket and run ``saloon check-bot grpc:unix:PATH``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from saloon.games import get_game
from saloon.referee.faults import Fault, FaultKind
from saloon.referee.limits import DEFAULT_LIMITS, MatchLimits
from saloon.referee.record import MatchRecord
from saloon.referee.seeds import derive_seed

#: Matches per game by default (the bot takes a different seat position in each).
DEFAULT_MATCHES = 3
#: What each fault kind means, in the words of someone writing a runtime.
MEANINGS = {
    FaultKind.TIMEOUT: "no answer in time (the decision clock and the bank ran out)",
    FaultKind.CRASH: "the bot or its runtime is gone, or its code raised",
    FaultKind.INVALID: "an answer that is not one of the legal actions, or a malformed message",
}


@dataclass
class GameCheck:
    """What one game's matches showed."""

    game: str
    matches: int = 0
    completed: int = 0
    decisions: int = 0
    slips: list[str] = field(default_factory=list)


def _slip(record: MatchRecord, seat: int, fault: Fault, number: int) -> str:
    where = "at the start" if fault.decision < 0 else f"at decision {fault.decision}"
    return (
        f"match {number} (seat {seat}, seed {record.seed}): {fault.kind.value} {where}: "
        f"{MEANINGS[fault.kind]} -- {fault.detail.strip()}"
    )


def check_game(
    game: str,
    play: Callable[[str, int, int, int], MatchRecord],
    matches: int = DEFAULT_MATCHES,
    seed: int = 0,
) -> GameCheck:
    """Play ``matches`` matches of ``game`` through ``play(game, seats, bot_seat, seed)``."""
    spec = get_game(game)
    result = GameCheck(game)
    for number in range(1, matches + 1):
        seats = spec.min_players + (number - 1) % (spec.max_players - spec.min_players + 1)
        bot_seat = (number - 1) % seats
        record = play(game, seats, bot_seat, derive_seed(seed, f"check:{game}:{number}"))
        result.matches += 1
        if record.outcome.value == "completed":
            result.completed += 1
        else:
            result.slips.append(f"match {number}: the referee aborted it ({record.outcome.value})")
        result.decisions += sum(
            1
            for entry in record.log
            if entry.seat == bot_seat and not entry.auto and not entry.fallback
        )
        result.slips += [
            _slip(record, bot_seat, fault, number)
            for fault in record.faults
            if fault.seat == bot_seat
        ]
        if bot_seat in record.played_out and not any(f.seat == bot_seat for f in record.faults):
            result.slips.append(f"match {number}: the bot was played out by the house bot")
    return result


def print_report(bot: str, checks: Sequence[GameCheck], out: TextIO) -> bool:
    """Print the report; True when the bot passed (no slip anywhere)."""
    passed = all(not c.slips for c in checks)
    for c in checks:
        state = "ok" if not c.slips else f"{len(c.slips)} slip(s)"
        out.write(
            f"{c.game}: {c.matches} matches, {c.completed} completed, "
            f"{c.decisions} decisions asked of the bot: {state}\n"
        )
        for line in c.slips:
            out.write(f"  - {line}\n")
    verdict = "passes" if passed else "does NOT pass"
    out.write(f"{bot} {verdict} the conformance run\n")
    return passed


def default_limits() -> MatchLimits:
    """The clocks of a check: the arena's defaults."""
    return DEFAULT_LIMITS
