"""Matchmaking against round-robin on simulated ladders (not a test; run by hand).

    python bench/matchmaking.py [--seeds 5] [--sizes 50 200] [--cap200 N] [--only NAME ...]

**Skill model** (no match is played): bot i of n has true skill (n - 1 - i) x 0.5 beta
(neighbours half a beta apart, bot 0 best); in a match each seat performs at its skill
plus N(0, beta^2) noise and seats are ranked by performance (no ties). beta = 25/6,
TrueSkill's and the ladders' own. With ``luck`` > 0 a share of that noise variance belongs
to the *deal* (one draw per seat position, shared by every replay of a duplicate deal),
the rest to the seat; the total stays beta^2.

**Ratings** are the ladders' own fold (saloon.ratings.fold.Folder, season dynamics tau 0,
draw probability 0.01), fed result by result; the board's order is theirs: mu - 3 sigma,
then mu, then name. Names are dealt in a random order of skill (names in skill order
would hand the board the true order of every tie).

**Measured** every ``n / seats`` matches (one matchmaker batch): Kendall's tau of the
board's order against the true one, and whether the true top 10 are the board's top 10 in
order. A point is *reached* at the first measurement after which it holds at every later
one up to the run's cap (the same cap for both methods); ">cap" when it never settles.

* round-robin: every ordered pair (2 seats) or the season schedule's cyclic tables
  (4 seats), each round in a random order, rounds repeated;
* matchmaker: saloon.arena.matchmaker.choose_batch, batch after batch, every batch chosen
  from the ratings after the previous one (as a continuous ladder does).

Also: a new version of known strength, the time to choose one batch of 1,000 matches
among 10,000 bots, (``--only duplicate``) duplicate deals as the matchmaker's unit, and
(``--only bound``) how far the board is from what the same matches could tell: the
matchmaker's board against a full-information estimate (:func:`estimated_order`) of the
same results, both against round-robin.
Medians over ``--seeds`` seeds; figures depend on load (the header says it).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from saloon.arena.matchmaker import Entry, Settings, choose_batch
from saloon.ratings.fold import Folder
from saloon.ratings.ladders import Ladder
from saloon.ratings.params import DEFAULT_BETA, RatingParams, Scope
from saloon.ratings.results import Result, SeatResult
from saloon.referee.seeds import derive_seed
from saloon.worker.seasons.schedule import CyclicOffsets, round_tables

BETA = DEFAULT_BETA
GAP = 0.5 * BETA
LADDER = Ladder("simulated")
PARAMS = RatingParams(draw_probability=0.01)
TOP = 10


@dataclass
class Sim:
    """One simulated ladder: true skills, the fold, the measurements."""

    n: int
    seats: int
    seed: int
    luck: float = 0.0
    #: False: results are recorded (``games``, ``comparisons``) but not fed to the board.
    rated: bool = True

    def __post_init__(self) -> None:
        self.skill = [(self.n - 1 - i) * GAP for i in range(self.n)]
        # names in a random order of skill: the board breaks ties on names, and names in
        # skill order would hand it the true order of every tie for free
        labels = list(range(self.n))
        random.Random(derive_seed(self.seed, "names")).shuffle(labels)
        self.names = [f"b{label:03d}" for label in labels]
        self.version = ["v1"] * self.n
        self.rng = random.Random(derive_seed(self.seed, "results"))
        self.folder = Folder(LADDER, Scope.SEASON, PARAMS)
        self.played = 0
        self.count = 0
        self.idle = [0] * self.n
        self.counts = [[0] * self.seats for _ in range(self.n)]
        self.matches_of = [0] * self.n
        #: (winner, loser) of every pair in every match played: what the bound sees.
        self.comparisons: list[tuple[int, int]] = []
        #: (seating, each seat's rank, deal key) of every match played, in order.
        self.games: list[tuple[tuple[int, ...], tuple[int, ...], str]] = []
        self.tables = 0

    def play(self, tables: list[tuple[int, ...]], duplicate: bool = False) -> None:
        """Play and rate the tables in order (a duplicate table: all its rotations)."""
        for table in tables:
            k = len(table)
            deal = [self.rng.gauss(0, BETA * self.luck**0.5) for _ in range(k)]
            seatings = [table[r:] + table[:r] for r in range(k)] if duplicate else [table]
            self.tables += 1
            unit = []
            for seating in seatings:
                own = BETA * (1 - self.luck) ** 0.5
                perf = [self.skill[b] + deal[p] + self.rng.gauss(0, own)
                        for p, b in enumerate(seating)]  # fmt: skip
                ranks = [sum(1 for q in perf if q > x) for x in perf]
                self.comparisons.extend(
                    (a, b) for a, ra in zip(seating, ranks, strict=True)
                    for b, rb in zip(seating, ranks, strict=True) if ra < rb
                )  # fmt: skip
                self.count += 1
                deal_key = f"t{self.tables}" if duplicate else f"m{self.count}"
                self.games.append((seating, tuple(ranks), deal_key))
                seats = tuple(
                    SeatResult(self.names[b], self.version[b], r)
                    for b, r in zip(seating, ranks, strict=True)
                )
                deal_id = f"d{self.count}" if duplicate else None
                unit.append(Result(LADDER, f"m{self.count}", (0, self.count), seats,
                                   deal_group=deal_id))  # fmt: skip
                for p, b in enumerate(seating):
                    self.counts[b][p] += 1
                    self.matches_of[b] += 1
            if self.rated:
                self.folder.unit(unit)
            self.played += len(seatings)

    def rating(self, i: int) -> tuple[float, float]:
        """The board's (mu, sigma) of bot i (what its next match starts from)."""
        out = self.folder.out
        key = (self.names[i], self.version[i])
        if key in out.ratings:
            return out.ratings[key]
        before = out.current.get(self.names[i])
        if before is None:
            return PARAMS.mu, PARAMS.sigma
        mu, sigma = out.ratings[before]
        return mu, PARAMS.successor_sigma(sigma)

    def board(self) -> list[int]:
        """Bot indices in the board's order."""
        rated = []
        for i in range(self.n):
            mu, sigma = self.rating(i)
            rated.append((-(mu - 3 * sigma), -mu, self.names[i], i))
        return [i for *_, i in sorted(rated)]

    def true_order(self) -> list[int]:
        return sorted(range(self.n), key=lambda i: (-self.skill[i], i))

    def entries(self) -> list[Entry]:
        out = []
        for i in range(self.n):
            mu, sigma = self.rating(i)
            out.append(Entry(self.names[i], f"o{i}", mu, sigma, False, self.idle[i],
                             tuple(self.counts[i])))  # fmt: skip
        return out


def kendall_tau(board: list[int], truth: list[int]) -> float:
    """Kendall's tau between two orders of the same items (no ties)."""
    place = {b: p for p, b in enumerate(truth)}
    seq = [place[b] for b in board]
    n = len(seq)
    inversions = _inversions(seq)
    return 1 - 4 * inversions / (n * (n - 1))


def _inversions(seq: list[int]) -> int:
    if len(seq) < 2:
        return 0
    mid = len(seq) // 2
    left, right = sorted(seq[:mid]), sorted(seq[mid:])
    count = _inversions(seq[:mid]) + _inversions(seq[mid:])
    j = 0
    for x in left:
        while j < len(right) and right[j] < x:
            j += 1
        count += j
    return count


def top_exact(board: list[int], truth: list[int]) -> bool:
    return board[:TOP] == truth[:TOP]


def round_robin(sim: Sim) -> Iterator[list[tuple[int, ...]]]:
    """Round after round of the round-robin, each in a random order, one table at a time."""
    rng = random.Random(derive_seed(sim.seed, "round-robin"))
    cyclic = None if sim.seats == 2 else CyclicOffsets(sim.n, sim.seats, sim.seed)
    while True:
        if cyclic is None:
            tables = [(a, b) for a in range(sim.n) for b in range(sim.n) if a != b]
        else:
            tables = round_tables(sim.n, sim.seats, cyclic.next())
        rng.shuffle(tables)
        for table in tables:
            yield [table]


def matchmaker(
    sim: Sim, settings: Settings, duplicate: bool = False
) -> Iterator[list[tuple[int, ...]]]:
    """Batch after batch of the matchmaker, each chosen after the last was rated."""
    batch = 0
    while True:
        tables = choose_batch(sim.entries(), sim.seats, settings,
                              derive_seed(sim.seed, f"batch:{batch}"))  # fmt: skip
        batch += 1
        seated = {b for t in tables for b in t}
        sim.idle = [0 if i in seated else sim.idle[i] + 1 for i in range(sim.n)]
        yield tables


def reach(
    sim: Sim, source: Iterator[list[tuple[int, ...]]], cap: int, duplicate: bool = False
) -> tuple[int | None, int | None]:
    """(matches until tau >= 0.9 for good, until the top 10 are exact for good)."""
    every = max(1, sim.n // sim.seats)
    truth = sim.true_order()
    since_tau: int | None = None
    since_top: int | None = None
    next_eval = every
    for tables in source:
        sim.play(tables, duplicate)
        if sim.played < next_eval:
            if sim.played >= cap:
                break
            continue
        next_eval = sim.played + every
        board = sim.board()
        if kendall_tau(board, truth) >= 0.9:
            since_tau = sim.played if since_tau is None else since_tau
        else:
            since_tau = None
        if top_exact(board, truth):
            since_top = sim.played if since_top is None else since_top
        else:
            since_top = None
        if sim.played >= cap:
            break
    return since_tau, since_top


def median_or_cap(values: list[int | None], cap: int) -> str:
    """The median, ">cap" when more than half never settled."""
    known = sorted(v if v is not None else 10**12 for v in values)
    mid = statistics.median_low(known)
    return f">{cap}" if mid >= 10**12 else str(mid)


def _num(text: str) -> float | None:
    return None if text.startswith(">") else float(text)


def compare(n: int, seats: int, seeds: int, cap: int, settings: Settings) -> list[str]:
    """One table row: round-robin vs matchmaker on the same skills and seeds."""
    rr_tau, rr_top, mm_tau, mm_top = [], [], [], []
    for seed in range(seeds):
        sim = Sim(n, seats, seed)
        t, p = reach(sim, round_robin(sim), cap)
        rr_tau.append(t)
        rr_top.append(p)
        sim = Sim(n, seats, seed)
        t, p = reach(sim, matchmaker(sim, settings), cap)
        mm_tau.append(t)
        mm_top.append(p)
    cells = [median_or_cap(v, cap) for v in (rr_tau, mm_tau, rr_top, mm_top)]
    ratios = []
    for rr, mm, target in ((cells[0], cells[1], 1 / 3), (cells[2], cells[3], 1 / 2)):
        a, b = _num(rr), _num(mm)
        if a is None and b is not None:  # round-robin never settled within the cap
            bound = b / cap
            ratios.append(f"<{bound:.2f} {'ok' if bound <= target else 'unknown'}")
        elif a is None or b is None:
            ratios.append("-")
        else:
            ratios.append(f"{b / a:.2f} {'ok' if b / a <= target else 'MISSED'}")
    return [f"{n} bots, {seats} seats", *cells[:2], ratios[0], *cells[2:], ratios[1]]


def duplicate_rows(
    seeds: int, cap: int, settings: Settings, seat_counts: tuple[int, ...]
) -> list[list[str]]:
    """50 bots with half the noise in the deal: plain matches vs duplicate deals."""
    rows = []
    for seats in seat_counts:
        plain_tau, plain_top, dup_tau, dup_top = [], [], [], []
        for seed in range(seeds):
            sim = Sim(50, seats, seed, luck=0.5)
            t, p = reach(sim, matchmaker(sim, settings), cap)
            plain_tau.append(t)
            plain_top.append(p)
            sim = Sim(50, seats, seed, luck=0.5)
            dup = Settings(**{**vars(settings), "batch": max(1, 50 // seats // seats)})
            t, p = reach(sim, matchmaker(sim, dup, True), cap, duplicate=True)
            dup_tau.append(t)
            dup_top.append(p)
        cells = [median_or_cap(v, cap) for v in (plain_tau, dup_tau, plain_top, dup_top)]
        rows.append([f"50 bots, {seats} seats, luck 0.5", *cells])
    return rows


def estimated_order(sim: Sim, iterations: int = 30) -> list[int]:
    """Bot indices by a full-information estimate from every result so far: the MAP of a
    Thurstone model (each seat pair of each match a comparison, performance noise beta,
    prior N(0, (2 beta)^2)), by Newton's method. It reads every result at once, in no
    order, as the board (a filter, one result at a time) cannot: a bound on what any
    board could make of the same matches."""
    import numpy as np

    n = sim.n
    win = np.array([w for w, _ in sim.comparisons], dtype=np.int64)
    lose = np.array([lo for _, lo in sim.comparisons], dtype=np.int64)
    scale = math.sqrt(2) * BETA
    prior = 1 / (2 * BETA) ** 2
    s = np.zeros(n)
    erfc = np.vectorize(math.erfc)
    for _ in range(iterations):
        d = (s[win] - s[lose]) / scale
        cdf = np.maximum(0.5 * erfc(-d / math.sqrt(2)), 1e-300)
        v = np.exp(-d * d / 2) / math.sqrt(2 * math.pi) / cdf  # d/dd log Phi(d)
        g = v / scale
        h = v * (v + d) / scale**2  # -d^2/dd^2 log Phi(d), >= 0
        grad = -prior * s
        np.add.at(grad, win, g)
        np.add.at(grad, lose, -g)
        hess = prior * np.eye(n)
        np.add.at(hess, (win, win), h)
        np.add.at(hess, (lose, lose), h)
        np.add.at(hess, (win, lose), -h)
        np.add.at(hess, (lose, win), -h)
        step = np.linalg.solve(hess, grad)
        s += step
        if float(np.max(np.abs(step))) < 1e-9:
            break
    return sorted(range(n), key=lambda i: (-float(s[i]), sim.names[i]))


def bound_rows(seeds: int, configs: list[tuple[int, int, int]]) -> list[list[str]]:
    """Matches until tau >= 0.9 for good: round-robin, the matchmaker's board, and the
    full-information estimate from the matchmaker's own matches."""
    rows = []
    for n, seats, cap in configs:
        rr, board, best = [], [], []
        for seed in range(seeds):
            sim = Sim(n, seats, seed)
            rr.append(reach(sim, round_robin(sim), cap)[0])
            sim = Sim(n, seats, seed)
            truth = sim.true_order()
            every = max(1, n // seats)
            since_board = since_best = None
            for tables in matchmaker(sim, Settings()):
                sim.play(tables)
                if sim.played % every and sim.played < cap:
                    continue
                ok = kendall_tau(sim.board(), truth) >= 0.9
                since_board = (since_board or sim.played) if ok else None
                ok = kendall_tau(estimated_order(sim), truth) >= 0.9
                since_best = (since_best or sim.played) if ok else None
                if sim.played >= cap:
                    break
            board.append(since_board)
            best.append(since_best)
        cells = [median_or_cap(v, cap) for v in (rr, board, best)]
        rr_cell = _num(cells[0])
        ratios = []
        for cell in cells[1:]:
            value = _num(cell)
            ratios.append("-" if rr_cell is None or value is None else f"{value / rr_cell:.2f}")
        row = [f"{n} bots, {seats} seats", *cells, *ratios]
        print("  ".join(row), flush=True)
        rows.append(row)
    return rows


#: New-version scenarios: (label, the bot replaced (None: a new bot), the true place of
#: the newcomer's strength, 1 = best).
NEWCOMERS = [
    ("new version of place 20, plays like place 10", 19, 10),
    ("new version of place 50, plays like place 10", 49, 10),
    ("a new bot (no predecessor) of place 10's strength", None, 10),
]


def new_version(seeds: int, settings: Settings, seat_counts: tuple[int, ...]) -> list[list[str]]:
    """A settled 50-bot ladder (3,000 matches), then a newcomer of known strength."""
    rows = []
    for seats in seat_counts:
        for label, replaced, place in NEWCOMERS:
            errors_at_40, settled = [], []
            for seed in range(seeds):
                sim = Sim(50, seats, seed)
                reach(sim, matchmaker(sim, settings), 3000)
                if replaced is None:  # a new bot: the last one leaves, another arrives
                    newcomer = sim.n - 1
                    sim.names[newcomer] = "newbot"
                else:
                    newcomer = replaced
                    sim.version[newcomer] = "v2"
                strength = sim.skill[place - 1] - GAP / 2  # between places `place`, +1
                sim.skill[newcomer] = strength
                base = sim.matches_of[newcomer]
                true_place = sim.true_order().index(newcomer)
                history: list[tuple[int, int]] = []
                source = matchmaker(sim, settings)
                while sim.matches_of[newcomer] - base < 80:
                    sim.play(next(source))
                    board_place = sim.board().index(newcomer)
                    history.append((sim.matches_of[newcomer] - base, abs(board_place - true_place)))
                errors_at_40.append([err for m, err in history if m <= 40][-1])
                good_from = None
                for m, err in history:
                    good_from = (m if good_from is None else good_from) if err <= 2 else None
                settled.append(good_from)
            within = sum(1 for e in errors_at_40 if e <= 2)
            row = [f"50 bots, {seats} seats", label, str(statistics.median(errors_at_40)),
                   f"{within}/{seeds}", median_or_cap(settled, 80)]  # fmt: skip
            print("  ".join(row), flush=True)
            rows.append(row)
    return rows


def batch_speed(seeds: int) -> list[list[str]]:
    """Seconds to choose 1,000 tables among 10,000 bots."""
    rows = []
    for seats in (2, 4):
        times = []
        for seed in range(seeds):
            rng = random.Random(seed)
            entries = [
                Entry(f"b{i}", f"o{i % 3000}", rng.gauss(25, 5), rng.uniform(0.5, 8.3),
                      i < 3, rng.randrange(3), (rng.randrange(9),) * seats)
                for i in range(10_000)
            ]  # fmt: skip
            start = time.process_time()
            tables = choose_batch(entries, seats, Settings(batch=1000), seed)
            times.append(time.process_time() - start)
            assert len(tables) == 1000
        rows.append([f"10,000 bots, {seats} seats", f"{statistics.median(times):.3f}",
                     "ok" if statistics.median(times) <= 1 else "MISSED"])  # fmt: skip
    return rows


def table(title: str, head: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="*", default=[50, 200], help="bots")
    parser.add_argument(
        "--seats",
        type=int,
        nargs="*",
        default=[2, 4],
        help="seat counts of the new-version and duplicate parts",
    )
    parser.add_argument("--dup-cap", type=int, default=12_000, help="duplicate runs' length")
    parser.add_argument("--cap200", type=int, default=120_000, help="200 bots: matches per run")
    parser.add_argument("--only", nargs="*", default=[],
                        help="compare, new-version, speed, duplicate, bound")  # fmt: skip
    args = parser.parse_args(argv)
    settings = Settings()
    want: Callable[[str], bool] = lambda name: not args.only or name in args.only  # noqa: E731
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
          f"{args.seeds} seeds; skills 0.5 beta apart, noise beta")  # fmt: skip
    if want("speed"):
        table("choosing a batch of 1,000 matches (CPU s, median)", ["bots", "s", "<= 1 s"],
              batch_speed(args.seeds))  # fmt: skip
    if want("compare"):
        configs = [(50, 2, 20_000), (50, 4, 12_000), (200, 2, args.cap200),
                   (200, 4, args.cap200 // 2)]  # fmt: skip
        configs = [c for c in configs if c[0] in args.sizes]
        head = ["ladder", "tau>=0.9 RR", "MM", "MM/RR (<=1/3)", "top-10 RR", "MM",
                "MM/RR (<=1/2)"]  # fmt: skip
        rows = []
        for n, k, cap in configs:  # each row printed as soon as it is measured
            rows.append(compare(n, k, args.seeds, cap, settings))
            print("  ".join(rows[-1]), flush=True)
        table("matches until the board's order is good and stays so (median)", head, rows)
    if want("new-version"):
        table(
            "a newcomer of known strength on a settled ladder (3,000 matches)",
            [
                "ladder",
                "newcomer",
                "places off at 40 of its matches (median)",
                "within 2",
                "its matches until within 2 for good",
            ],
            new_version(args.seeds, settings, tuple(args.seats)),
        )
    if want("bound"):
        configs = [(50, 2, 1_500), (50, 4, 600), (200, 4, 1_500)]
        configs = [c for c in configs if c[0] in args.sizes]
        table(
            "the bound: tau >= 0.9 for good, the board against a full-information estimate "
            "from the same matches (median)",
            [
                "ladder",
                "round-robin",
                "matchmaker's board",
                "estimate, same matches",
                "board/RR",
                "estimate/RR",
            ],
            bound_rows(args.seeds, configs),
        )
    if want("duplicate"):
        table(
            "duplicate deals as the matchmaker's unit (matches, each replay counted)",
            ["ladder", "tau>=0.9 plain", "duplicate", "top-10 plain", "duplicate"],
            duplicate_rows(args.seeds, args.dup_cap, settings, tuple(args.seats)),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
