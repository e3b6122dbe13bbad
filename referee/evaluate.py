"""``saloon eval``: how strong is a bot? N seeded matches against chosen opponents, with
the seats rotated (and duplicate deals), on every core, summed up with an interval and a
p-value.

The table is the bot and its opponents (``--vs``, repeated in order to fill the seats).
Match ``i`` rotates the table by ``i`` seats, so the bot plays every seat equally often.
With duplicate deals a deal (one seed: the same shuffles) is played once per rotation:
every seat's cards go to the bot once, which takes the luck of the deal out of the
comparison. Without them every match has its own seed.

What is reported, per match from the bot's seat:

* two seats: the win rate (a tie counts half) with its 95% Wilson score interval;
* more seats: the mean placing (1 = first, ties shared as the engine ranks them) with a
  95% normal interval, and the share of first places;
* a one-sided p-value against "no better than the opponents": under that hypothesis the
  seats are exchangeable, so a match where the bot placed better than its opponents'
  average is at most as likely as one where it placed worse (a sign test: the count of
  "better" among the untied matches is at most Binomial(untied, 1/2)). With duplicate
  deals the matches of one deal are not independent; the test then treats them as if
  they were (a conservative reading would count deals instead).

and, for reading those figures: the bot's faults by kind, the decisions it was asked and
those its own time cap cut short (as its SDK search notes them: saloon.sdk.search.
CappedNote), what it wrote to stderr and the notes it made, and a warning when a capped
or timed-out decision made the figures depend on the machine's load.

Seeds: match ``i`` is played with ``derive_seed(seed, "eval:i")`` (duplicate: the deal's
``"eval-deal:d"``), so the same command gives the same matches.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO

from saloon.games import get_game
from saloon.referee.errors import RefereeError
from saloon.referee.faults import FaultKind
from saloon.referee.limits import DEFAULT_LIMITS, MatchLimits, platform_start_s, wall_cap_ms
from saloon.referee.record import MatchRecord, Outcome, stderr_blocks
from saloon.referee.seeds import derive_seed
from saloon.referee.shown import shown
from saloon.sdk.search import parse_capped_note

#: How the SDK runtime writes a bot's notes on its stderr (saloon.sdk.runtime).
NOTE_PREFIX = "note: "

#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class EvalMatch:
    """One match to play: its seed and who sits where (``seat`` is the bot's)."""

    index: int
    seed: int
    bots: tuple[str, ...]
    seat: int
    deal: int | None = None


@dataclass(frozen=True)
class MatchOutcome:
    """What one match says about the bot (from its seat)."""

    index: int
    seed: int
    seat: int
    rank: int
    opponents_rank: float
    score: float
    opponents_score: float
    completed: bool
    faulted: bool
    failed: bool
    opponents_failed: bool
    #: The bot's first crash or fault in this match, one line ("" when none).
    problem: str = ""
    #: Decisions the bot was asked (its seat's log entries, forced and house:random's
    #: moves left out).
    decisions: int = 0
    #: The bot's faults in this match, by kind (``{"TIMEOUT": 2}``).
    faults: dict[str, int] = field(default_factory=dict)
    #: The bot's decisions its own time cap cut short, as its SDK search noted them
    #: (saloon.sdk.search.CappedNote: a SearchBot notes each one); load-dependent.
    capped: int = 0
    #: The first such note ("" when none).
    capped_note: str = ""
    #: Lines the bot wrote to stderr (its notes left out), and the notes it made (a path
    #: bot's ``note:`` lines on stderr, an in-process bot's in the record).
    stderr_lines: int = 0
    notes: int = 0
    #: The first line it wrote to stderr, notes left out ("[decision N] text"; "" when none).
    first_stderr: str = ""


@dataclass
class Summary:
    """The evaluation's result (``--json`` prints it)."""

    bot: str
    game: str
    seats: int
    opponents: list[str]
    matches: int
    duplicate: bool
    seed: int
    #: Matches the referee aborted (left out of every figure below).
    aborted: int = 0
    better: int = 0
    worse: int = 0
    even: int = 0
    wins: int = 0
    ties: int = 0
    losses: int = 0
    #: Two seats: wins + ties/2 over the matches, and its 95% Wilson interval.
    win_rate: float = 0.0
    win_rate_95: tuple[float, float] = (0.0, 0.0)
    #: The bot's mean placing (1 best) and its 95% interval, and the opponents' mean.
    mean_placing: float = 0.0
    mean_placing_95: tuple[float, float] = (0.0, 0.0)
    opponents_mean_placing: float = 0.0
    first_places: int = 0
    mean_score: float = 0.0
    opponents_mean_score: float = 0.0
    #: One-sided sign-test p-value against "no better than the opponents".
    p_value: float = 1.0
    #: Matches where the bot had a fault, and where it crashed or was played out.
    faulted: int = 0
    failed: int = 0
    #: Matches where an opponent crashed or was played out (its moves were house:random's).
    opponents_failed: int = 0
    #: The bot's faults over every match, by kind (TIMEOUT, INVALID, CRASH).
    faults: dict[str, int] = field(default_factory=dict)
    #: Decisions the bot was asked, those its own time cap cut short (as its SDK search
    #: noted them), and the matches with at least one such decision.
    decisions: int = 0
    capped: int = 0
    capped_matches: int = 0
    #: What the bot wrote to stderr (notes left out): lines, and matches it wrote in; and
    #: the notes it made.
    stderr_lines: int = 0
    stderr_matches: int = 0
    notes: int = 0
    #: Matches played at once (``--jobs``); the load they put on the machine is what a
    #: time-capped or timed-out decision depends on.
    jobs: int = 1
    #: True when some decision of the bot was cut short by its own time cap or timed
    #: out: how it played then depended on the machine's speed and load, so the figures
    #: above may differ on a rerun (``warnings`` says what).
    load_dependent: bool = False
    warnings: list[str] = field(default_factory=list)
    outcomes: list[MatchOutcome] = field(default_factory=list)

    def to_json(self, with_matches: bool = True) -> dict[str, Any]:
        """The summary as JSON (``with_matches``: every match's outcome too)."""
        out = asdict(self)
        if not with_matches:
            out.pop("outcomes")
        return out


def schedule(
    bot: str,
    opponents: Sequence[str],
    seats: int,
    matches: int,
    seed: int,
    duplicate: bool,
) -> list[EvalMatch]:
    """The matches of an evaluation, seats rotated (duplicate: one deal per rotation set)."""
    table = [bot, *(opponents[i % len(opponents)] for i in range(seats - 1))]
    out = []
    for index in range(matches):
        shift = index % seats
        # Rotating the table by ``shift`` puts the bot at seat ``shift``.
        bots = tuple(table[(p - shift) % seats] for p in range(seats))
        deal = index // seats if duplicate else None
        match_seed = derive_seed(seed, f"eval-deal:{deal}" if duplicate else f"eval:{index}")
        out.append(EvalMatch(index, match_seed, bots, shift, deal))
    return out


def outcome_of(match: EvalMatch, record: MatchRecord, stderr: str = "") -> MatchOutcome:
    """The bot's result in one played match; ``stderr``: what the bot's seat wrote (its
    ``diagnostics()``, marked by decision), for the stderr and capped-decision counts."""
    seat = match.seat
    faults: dict[str, int] = {}
    for fault in record.faults:
        if fault.seat == seat:
            faults[fault.kind.value] = faults.get(fault.kind.value, 0) + 1
    notes = [n.text for n in record.notes if n.seat == seat]
    lines = 0
    first = ""
    for block in stderr_blocks(seat, stderr):
        where = (
            f"[decision {block.decision}] " if block.decision is not None else f"[{block.when}] "
        )
        for line in block.lines:
            if line.startswith(NOTE_PREFIX):
                notes.append(line[len(NOTE_PREFIX) :])
                continue
            lines += 1
            if not first and line.strip():
                first = where + line.strip()
    capped = [text for text in notes if parse_capped_note(text) is not None]
    others = [s for s in range(len(match.bots)) if s != seat]
    failed_seats = set(record.played_out) | {
        f.seat for f in record.faults if f.kind is FaultKind.CRASH
    }
    completed = record.outcome is Outcome.COMPLETED
    return MatchOutcome(
        index=match.index,
        seed=match.seed,
        seat=seat,
        rank=record.ranks[seat] if completed else -1,
        opponents_rank=sum(record.ranks[s] for s in others) / len(others) if completed else -1,
        score=record.scores[seat] if completed else 0.0,
        opponents_score=(sum(record.scores[s] for s in others) / len(others) if completed else 0.0),
        completed=completed,
        faulted=any(f.seat == seat for f in record.faults),
        failed=seat in failed_seats,
        opponents_failed=bool(failed_seats - {seat}),
        problem=next(
            (
                f"{f.kind.value} at decision {f.decision}: {f.detail}"
                for f in sorted(record.faults, key=lambda f: f.kind is not FaultKind.CRASH)
                if f.seat == seat
            ),
            "",
        ),
        decisions=sum(1 for e in record.log if e.seat == seat and not e.auto and not e.fallback),
        faults=faults,
        capped=len(capped),
        capped_note=capped[0] if capped else "",
        stderr_lines=lines,
        notes=len(notes),
        first_stderr=first[:300],
    )


def summarize(
    bot: str,
    game: str,
    opponents: Sequence[str],
    seats: int,
    seed: int,
    duplicate: bool,
    outcomes: Sequence[MatchOutcome],
    jobs: int = 1,
) -> Summary:
    """The figures of an evaluation from its matches' outcomes (``jobs``: matches played
    at once, for the load warning)."""
    summary = Summary(bot, game, seats, list(opponents), len(outcomes), duplicate, seed)
    summary.outcomes = sorted(outcomes, key=lambda o: o.index)
    done = [o for o in summary.outcomes if o.completed]
    summary.aborted = len(outcomes) - len(done)
    summary.faulted = sum(o.faulted for o in outcomes)
    summary.failed = sum(o.failed for o in outcomes)
    summary.opponents_failed = sum(o.opponents_failed for o in outcomes)
    summary.jobs = jobs
    for o in summary.outcomes:
        for kind, count in o.faults.items():
            summary.faults[kind] = summary.faults.get(kind, 0) + count
    summary.faults = dict(sorted(summary.faults.items()))
    summary.decisions = sum(o.decisions for o in outcomes)
    summary.capped = sum(o.capped for o in outcomes)
    summary.capped_matches = sum(o.capped > 0 for o in outcomes)
    summary.stderr_lines = sum(o.stderr_lines for o in outcomes)
    summary.stderr_matches = sum(o.stderr_lines > 0 for o in outcomes)
    summary.notes = sum(o.notes for o in outcomes)
    summary.warnings = load_warnings(summary)
    summary.load_dependent = bool(summary.warnings)
    n = len(done)
    if n == 0:
        return summary
    summary.better = sum(o.rank < o.opponents_rank for o in done)
    summary.worse = sum(o.rank > o.opponents_rank for o in done)
    summary.even = n - summary.better - summary.worse
    best_rank = [o.rank == 0 for o in done]
    summary.first_places = sum(best_rank)
    if seats == 2:
        summary.wins, summary.losses = summary.better, summary.worse
        summary.ties = summary.even
        summary.win_rate = (summary.wins + summary.ties / 2) / n
        summary.win_rate_95 = wilson(summary.wins + summary.ties / 2, n)
    placings = [o.rank + 1 for o in done]
    mean = sum(placings) / n
    summary.mean_placing = mean
    spread = math.sqrt(sum((p - mean) ** 2 for p in placings) / (n - 1) / n) * Z95 if n > 1 else 0.0
    summary.mean_placing_95 = (max(1.0, mean - spread), min(float(seats), mean + spread))
    summary.opponents_mean_placing = sum(o.opponents_rank + 1 for o in done) / n
    summary.mean_score = sum(o.score for o in done) / n
    summary.opponents_mean_score = sum(o.opponents_score for o in done) / n
    summary.p_value = sign_test_p(summary.better, summary.worse)
    return summary


def load_warnings(summary: Summary) -> list[str]:
    """Why the figures depend on the machine's load, if they do: decisions the bot's own
    time cap cut short, and timeouts (both decided by how fast the machine was then)."""
    out = []
    timeouts = summary.faults.get(FaultKind.TIMEOUT.value, 0)
    if summary.capped or timeouts:
        what = []
        if summary.capped:
            what.append(
                f"{summary.capped} of the bot's {summary.decisions} decisions were cut short "
                f"by its own time cap (in {summary.capped_matches} matches)"
            )
        if timeouts:
            what.append(f"{timeouts} decisions timed out")
        out.append(
            f"{' and '.join(what)}: these figures depend on the machine's speed and load "
            f"({summary.jobs} matches at once on {default_jobs()} cores) and may differ on "
            "a rerun; a playout budget that ends each search well inside the cap (or "
            "fewer --jobs) makes them reproducible"
        )
    return out


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``successes / n``."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def sign_test_p(better: int, worse: int) -> float:
    """P(X >= better) for X ~ Binomial(better + worse, 1/2): one-sided, exact."""
    n = better + worse
    if n == 0:
        return 1.0
    tail: int = sum(math.comb(n, k) for k in range(better, n + 1))
    return tail / (1 << n)


# -- playing ------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Job:
    """What a worker process needs to play one match."""

    game: str
    options: dict[str, str]
    limits: MatchLimits
    sandbox: str
    kinds: Mapping[str, Any]
    match: EvalMatch


def _play(job: _Job) -> MatchOutcome:
    """Play one match (in a worker process) and return the bot's outcome."""
    from saloon.referee.match import Match, local_seats

    # The loop's fault warnings would interleave on the terminal: the summary reports them.
    logging.getLogger("saloon.referee.match").setLevel(logging.ERROR)
    seats = local_seats(job.game, job.match.bots, sandbox=job.sandbox, kinds=job.kinds)
    record = Match(get_game(job.game), seats, job.match.seed, job.options, job.limits).run()
    return outcome_of(job.match, record, seats[job.match.seat].diagnostics())


def play_all(
    game: str,
    matches: Sequence[EvalMatch],
    options: Mapping[str, str] | None = None,
    limits: MatchLimits = DEFAULT_LIMITS,
    jobs: int = 1,
    sandbox: str = "process",
    kinds: Mapping[str, Any] | None = None,
    done: Callable[[int], None] | None = None,
) -> list[MatchOutcome]:
    """Play every match on ``jobs`` processes (1: in this one); ``done(count)`` after each.

    Every wait has a bound: RefereeError when a process playing matches dies (killed, out
    of memory: its match would never end) or no match ends within :func:`match_bound_s`;
    the other processes are stopped. A bot runtime of a process that died is left to the
    sweep of orphaned bot processes (saloon.referee.process.orphans.sweep_orphans)."""
    work = [_Job(game, dict(options or {}), limits, sandbox, dict(kinds or {}), m) for m in matches]
    results: list[MatchOutcome] = []

    def collect(outcomes: Iterator[MatchOutcome]) -> None:
        for outcome in outcomes:
            results.append(outcome)
            if done is not None:
                done(len(results))

    if jobs <= 1 or len(work) <= 1:
        collect(_play(job) for job in work)
        return results
    bound = match_bound_s(game, len(work[0].match.bots), limits)
    # spawn: a forked copy of a process that has started gRPC's threads may hang.
    context = multiprocessing.get_context("spawn")
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(min(jobs, len(work)), mp_context=context)
    try:
        pending = {pool.submit(_play, job) for job in work}
        workers = set(multiprocessing.active_children()) - before
        while pending:
            finished, pending = wait(pending, timeout=bound, return_when=FIRST_COMPLETED)
            if not finished:
                for process in workers:  # hung: not left to the executor's exit
                    process.kill()
                raise RefereeError(
                    f"no match of the evaluation ended within {bound:.0f} s of the last "
                    f"({len(results)} of {len(work)} played): stopped"
                )
            collect(future.result() for future in finished)
        pool.shutdown()
    except BrokenProcessPool:
        raise RefereeError(
            f"a process playing the evaluation's matches died ({len(results)} of "
            f"{len(work)} played; killed, or out of memory?): stopped"
        ) from None
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return results


#: Time on top of a match's own bounds before an evaluation stops waiting for it.
MATCH_SLACK_S = 30.0


def match_bound_s(game: str, seats: int, limits: MatchLimits) -> float:
    """The longest one match of an evaluation can take, and then some: its wall-clock cap
    (saloon.referee.limits.wall_cap_ms), every seat's start (the platform's bound twice,
    for its runtime and for the referee's connection, and the start time), and
    :data:`MATCH_SLACK_S`. Every wait of a match is bounded: a match not done by then
    is stuck, and the evaluation stops rather than wait for good."""
    cap_s = wall_cap_ms(limits, seats, get_game(game).max_length) / 1000
    starts_s = seats * (2 * platform_start_s() + limits.start_ms / 1000)
    return cap_s + starts_s + MATCH_SLACK_S


class ProgressBar:
    """A one-line progress bar on a terminal (nothing when ``stream`` is not one)."""

    WIDTH = 30

    def __init__(self, total: int, stream: TextIO = sys.stderr, label: str = "eval") -> None:
        self.total = total
        self.stream = stream
        self.label = label
        self.shown = stream.isatty()

    def __call__(self, count: int) -> None:
        if not self.shown:
            return
        filled = self.WIDTH * count // max(1, self.total)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self.stream.write(f"\r{self.label} [{bar}] {count}/{self.total} matches")
        if count >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def default_jobs() -> int:
    """Every core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def check_table(game: str, bot: str, opponents: Sequence[str], seats: int | None) -> int:
    """The seat count of the evaluation (RefereeError when the game does not take it)."""
    spec = get_game(game)
    count = seats if seats is not None else max(spec.min_players, 1 + len(opponents))
    if not spec.min_players <= count <= spec.max_players:
        raise RefereeError(
            f"{game} takes {spec.min_players}-{spec.max_players} seats, not {count} "
            f"({bot} and {', '.join(opponents)}; --seats sets the count)"
        )
    if count - 1 < len(opponents):
        raise RefereeError(f"{len(opponents)} opponents do not fit at {count} seats")
    return count


# -- printing -----------------------------------------------------------------------------
def print_summary(summary: Summary, out: TextIO) -> None:
    """The evaluation, for people."""
    how = "duplicate deals, seats rotated" if summary.duplicate else "seats rotated"
    out.write(
        f"{summary.bot} at {summary.game}, {summary.seats} seats, vs "
        f"{', '.join(summary.opponents)}: {summary.matches} matches ({how}), seed "
        f"{summary.seed}\n"
    )
    n = summary.matches - summary.aborted
    if n == 0:
        out.write("  no match was played to its end\n")
        return
    if summary.seats == 2:
        low, high = summary.win_rate_95
        out.write(
            f"  win rate {summary.win_rate:.3f} (95% interval {low:.3f}-{high:.3f}): "
            f"{summary.wins} wins, {summary.ties} ties, {summary.losses} losses\n"
        )
    else:
        low, high = summary.mean_placing_95
        out.write(
            f"  mean placing {summary.mean_placing:.2f} of {summary.seats} (95% interval "
            f"{low:.2f}-{high:.2f}; opponents {summary.opponents_mean_placing:.2f}), first "
            f"{summary.first_places} of {n}\n"
        )
    out.write(
        f"  p = {summary.p_value:.3g} against 'no better than the opponents' (one-sided sign "
        f"test: placed better in {summary.better}, worse in {summary.worse}, even in "
        f"{summary.even})\n"
    )
    out.write(
        f"  mean score {summary.mean_score:.2f} (opponents {summary.opponents_mean_score:.2f})\n"
    )
    if summary.faulted or summary.failed or summary.opponents_failed or summary.aborted:
        kinds = ", ".join(f"{count} {kind}" for kind, count in summary.faults.items())
        out.write(
            f"  faults: the bot's {kinds or 'none'} in {summary.faulted} matches; it crashed "
            f"or was played out in {summary.failed}; an opponent crashed in "
            f"{summary.opponents_failed}; aborted {summary.aborted}\n"
        )
    else:
        out.write("  faults: none\n")
    first = next((o for o in summary.outcomes if o.problem), None)
    if first is not None:
        out.write(shown(f"    first: match {first.index} (seat {first.seat}): {first.problem}\n"))
    out.write(
        f"  decisions: {summary.decisions} asked, {summary.capped} cut short by the bot's own "
        f"time cap{f' (in {summary.capped_matches} matches)' if summary.capped else ''}\n"
    )
    capped = next((o for o in summary.outcomes if o.capped_note), None)
    if capped is not None:
        out.write(shown(f"    first: match {capped.index}: {capped.capped_note}\n"))
    out.write(
        f"  stderr: {summary.stderr_lines} lines in {summary.stderr_matches} matches, "
        f"{summary.notes} notes\n"
    )
    printed = next((o for o in summary.outcomes if o.first_stderr), None)
    if printed is not None:
        out.write(shown(f"    first: match {printed.index}: {printed.first_stderr}\n"))
    for warning in summary.warnings:
        out.write(f"  warning: {warning}\n")
