"""Tournament finals and the final ranking (saloon.ratings.finals) on simulated ladders
(not a test; run by hand).

    python bench/finals.py [--seeds 5] [--only tau finals calibration speed]

The simulator is bench/matchmaking.py's (true skills half a beta apart, performance noise
beta, ``luck`` the share of that noise dealt with the cards). Parts:

* ``tau``: matches until Kendall's tau >= 0.9 holds for good, on the continuous
  matchmaker's matches: the online board, the bound (bench/matchmaking.py's
  :func:`estimated_order`) and the finals' whole-history fit (:func:`final_ranking`);
* ``finals``: from the same ladder history, matches until the true top 10 stand in order
  and stay so (the whole-history fit of each policy's own matches), ours against
  Halite III's (the field cut by rank as games grow, the least-played first) and
  CodinGame's (the top N play on); ours also as it runs for real (its stop rule);
* ``calibration``: over many seeds, each adjacent pair's stated probability against how
  often the order was right (a reliability table);
* ``speed``: the report over 100,000 results.
Medians over ``--seeds`` seeds; times depend on load (the header says it).
"""

from __future__ import annotations

import os

# One BLAS thread: the fits' solves are small, and OpenBLAS's threads spin against each
# other on a loaded 2-core machine (a 200x200 solve: ~2 ms on one, ~30 ms on two).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import itertools
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from saloon.arena.matchmaker import Settings
from saloon.ratings.finals import (
    FinalsPolicy,
    Placing,
    Stop,
    build_report,
    final_ranking,
    plan_batch,
)
from saloon.referee.seeds import derive_seed

sys.path.insert(0, str(Path(__file__).resolve().parent))
from matchmaking import (
    BETA,
    TOP,
    Sim,
    estimated_order,
    kendall_tau,
    matchmaker,
    median_or_cap,
    round_robin,
    table,
)

#: Matches per finals batch, every policy (the finals' default).
BATCH = FinalsPolicy().batch_matches

#: A play: the bots at one table (indices) and whether it is played as duplicates.
Play = tuple[tuple[int, ...], bool]


class Record:
    """A simulated ladder's games as the finals read them (converted once, as played)."""

    def __init__(self, sim: Sim) -> None:
        self.sim = sim
        self.placings: list[Placing] = []
        self.index = {name: i for i, name in enumerate(sim.names)}

    def results(self) -> list[Placing]:
        names = self.sim.names
        for seating, ranks, deal in self.sim.games[len(self.placings) :]:
            self.placings.append(Placing(f"m{len(self.placings):07d}", deal,
                                         tuple(names[b] for b in seating), ranks))  # fmt: skip
        return self.placings

    def order(self) -> list[int]:
        """Bot indices in the whole-history fit's order."""
        ranking = final_ranking(self.sim.names, self.results())
        return [self.index[e] for e in ranking.order]

    def play(self, plays: list[Play]) -> None:
        for seats, duplicate in plays:
            self.sim.play([seats], duplicate)


def settle(first: int | None, ok: bool, played: int) -> int | None:
    """The first measurement of the current run of ``ok`` (None when it does not hold)."""
    return (first if first is not None else played) if ok else None


# ---- tau: the whole-history fit against the online board and the bound ----


def tau_rows(seeds: int, configs: list[tuple[int, int, int]]) -> list[list[str]]:
    rows = []
    for n, seats, cap in configs:
        board, bound, ours = [], [], []
        for seed in range(seeds):
            sim = Sim(n, seats, seed)
            record = Record(sim)
            truth = sim.true_order()
            every = max(1, n // seats)
            marks: list[int | None] = [None, None, None]
            for tables in matchmaker(sim, Settings()):
                sim.play(tables)
                if sim.played % every and sim.played < cap:
                    continue
                orders = (sim.board(), estimated_order(sim), record.order())
                marks = [settle(m, kendall_tau(o, truth) >= 0.9, sim.played)
                         for m, o in zip(marks, orders, strict=True)]  # fmt: skip
                if sim.played >= cap:
                    break
            board.append(marks[0])
            bound.append(marks[1])
            ours.append(marks[2])
        cells = [median_or_cap(v, cap) for v in (board, bound, ours)]
        ratio = "-"
        if not cells[1].startswith(">") and not cells[2].startswith(">"):
            value = float(cells[2]) / float(cells[1])
            ratio = f"{value:.2f} {'ok' if value <= 1.1 else 'MISSED'}"
        row = [f"{n} bots, {seats} seats", *cells, ratio]
        print("  ".join(row), flush=True)
        rows.append(row)
    return rows


# ---- finals: ours, Halite's, CodinGame's ----

#: Halite's cut: when the field's bots have played this many finals games each on
#: average since the last cut, the field keeps its better half ...
HALITE_GAMES_PER_CUT = 20
#: ... down to no fewer than the top 10 and this many more.
HALITE_MARGIN = 5
#: CodinGame's finals field: the top N by the ladder, N = this times the top 10.
CODINGAME_FIELD = 2


class Halite:
    """The field cut by rank as the games grow; each table starts from the bot that has
    played least, its opponents drawn near it in rank."""

    def __init__(self, record: Record, seats: int, seed: int) -> None:
        self.record = record
        self.seats = seats
        self.rng = random.Random(derive_seed(seed, "halite"))
        self.field = record.order()
        self.games = dict.fromkeys(range(record.sim.n), 0)
        self.since_cut = 0

    def batch(self, matches: int) -> list[Play]:
        if self.since_cut >= HALITE_GAMES_PER_CUT * len(self.field) / self.seats:
            keep = max(TOP + HALITE_MARGIN, len(self.field) // 2)
            if keep < len(self.field):
                self.field = self.record.order()[:keep]
                self.since_cut = 0
        place = {b: p for p, b in enumerate(self.field)}
        plays = []
        for _ in range(matches):
            first = min(self.field, key=lambda b: (self.games[b], self.rng.random()))
            p = place[first]
            window = [b for b in self.field if b != first and abs(place[b] - p) <= 2 * self.seats]
            others = self.rng.sample(window, self.seats - 1)
            seats = [first, *others]
            self.rng.shuffle(seats)
            for b in seats:
                self.games[b] += 1
            plays.append((tuple(seats), False))
        self.since_cut += matches
        return plays


class CodinGame:
    """The top N by the ladder play on, the least-played first, opponents at random."""

    def __init__(self, record: Record, seats: int, seed: int) -> None:
        self.seats = seats
        self.rng = random.Random(derive_seed(seed, "codingame"))
        self.field = record.order()[: CODINGAME_FIELD * TOP]
        self.games = dict.fromkeys(self.field, 0)

    def batch(self, matches: int) -> list[Play]:
        plays = []
        for _ in range(matches):
            first = min(self.field, key=lambda b: (self.games[b], self.rng.random()))
            others = self.rng.sample([b for b in self.field if b != first], self.seats - 1)
            seats = [first, *others]
            self.rng.shuffle(seats)
            for b in seats:
                self.games[b] += 1
            plays.append((tuple(seats), False))
        return plays


class Ours:
    """saloon.ratings.finals.plan_batch, batch after batch."""

    def __init__(self, record: Record, policy: FinalsPolicy, seed: int) -> None:
        self.record = record
        self.policy = policy
        self.seed = seed
        self.start = len(record.sim.games)
        self.index = 0
        self.stop: Stop | None = None

    def batch(self, matches: int) -> list[Play]:
        if self.stop is not None:
            return []
        step = plan_batch(self.record.sim.names, self.record.results(), self.policy,
                          self.seed, self.index, finals_from=self.start)  # fmt: skip
        self.index += 1
        if isinstance(step, Stop):
            self.stop = step
            return []
        by_deal: dict[str, list[tuple[int, ...]]] = {}
        for t in step.tables:
            by_deal.setdefault(t.deal, []).append(tuple(self.record.index[e] for e in t.seats))
        plays: list[Play] = []
        for seatings in by_deal.values():
            whole = len(seatings) == len(seatings[0]) and self.policy.duplicate
            plays += [(seatings[0], True)] if whole else [(s, False) for s in seatings]
        return plays


#: Skills drawn at random ("normal" calibration rows): N(0, (this x beta)^2), sorted.
NORMAL_SPREAD = 4.0


def history(n: int, seats: int, seed: int, luck: float, per_bot: int,
            skills: str = "even") -> Record:  # fmt: skip
    """A ladder before its finals: ``per_bot`` games a bot, round-robin tables at random.
    Skills "even" (the simulator's: half a beta apart) or "normal" (drawn at random)."""
    sim = Sim(n, seats, seed, luck=luck, rated=False)
    if skills == "normal":
        rng = random.Random(derive_seed(seed, "skills"))
        draws = sorted((rng.gauss(0, NORMAL_SPREAD * BETA) for _ in range(n)), reverse=True)
        sim.skill = draws
    source = round_robin(sim)
    while sim.played < n * per_bot // seats:
        sim.play(next(source))
    return Record(sim)


def finals_run(record: Record, chooser: Halite | CodinGame | Ours, cap: int,
               batch: int) -> tuple[int | None, int, Ours | None]:  # fmt: skip
    """(finals matches until the fit's top 10 are the true top 10 in order for good,
    matches played, the policy when it is ours)."""
    sim = record.sim
    truth = sim.true_order()[:TOP]
    start = sim.played
    mark = None
    while sim.played - start < cap:
        plays = chooser.batch(min(batch, cap - (sim.played - start)))
        if not plays:
            break  # ours stopped: its order is final from here on
        record.play(plays)
        mark = settle(mark, record.order()[:TOP] == truth, sim.played - start)
    return mark, sim.played - start, chooser if isinstance(chooser, Ours) else None


def finals_rows(seeds: int, configs: list[tuple[int, int, float, int]]) -> list[list[str]]:
    rows = []
    for n, seats, luck, cap in configs:
        columns: dict[str, list[int | None]] = {k: [] for k in ("halite", "cg", "ours", "stop")}
        right = 0
        stops: list[int] = []
        sizes = (seats,)
        for seed in range(seeds):
            never = FinalsPolicy(confidence=0.9999, budget=cap, table_sizes=sizes)
            real = FinalsPolicy(budget=cap, table_sizes=sizes)
            for name in columns:
                record = history(n, seats, seed, luck, per_bot=10)
                chooser: Halite | CodinGame | Ours
                if name == "halite":
                    chooser = Halite(record, seats, seed)
                elif name == "cg":
                    chooser = CodinGame(record, seats, seed)
                else:
                    chooser = Ours(record, never if name == "ours" else real, seed)
                mark, played, ours = finals_run(record, chooser, cap, BATCH)
                columns[name].append(mark)
                if name == "stop" and ours is not None:
                    stops.append(played)
                    right += record.order()[:TOP] == record.sim.true_order()[:TOP]
        cells = {k: median_or_cap(v, cap) for k, v in columns.items()}
        others = [float(cells[k]) for k in ("halite", "cg") if not cells[k].startswith(">")]
        ratio = "-"
        if cells["ours"].startswith(">"):
            ratio = "MISSED"
        elif others:
            value = float(cells["ours"]) / min(others)
            ratio = f"{value:.2f} {'ok' if value <= 0.5 else 'MISSED'}"
        elif not others:
            bound = float(cells["ours"]) / cap
            ratio = f"<{bound:.2f} {'ok' if bound <= 0.5 else 'unknown'}"
        row = [f"{n} bots, {seats} seats, luck {luck}", cells["halite"], cells["cg"],
               cells["ours"], ratio, str(int(statistics.median(stops))),
               f"{right}/{seeds}"]  # fmt: skip
        print("  ".join(row), flush=True)
        rows.append(row)
    return rows


# ---- calibration ----

BINS = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0001]


def calibration_rows(seeds: int, configs: list[tuple[int, int, float, str]]) -> list[list[str]]:
    """Every adjacent pair among the top K+1 after every batch of our finals, by stated
    probability: how often the order was truly right."""
    rows = []
    for n, seats, luck, skills in configs:
        stated: list[list[float]] = [[] for _ in BINS[:-1]]
        right: list[int] = [0 for _ in BINS[:-1]]
        for seed in range(seeds):
            record = history(n, seats, 1000 + seed, luck, per_bot=10, skills=skills)
            skill = record.sim.skill
            policy = FinalsPolicy(budget=1500, table_sizes=(seats,))
            chooser = Ours(record, policy, seed)
            while True:
                plays = chooser.batch(policy.batch_matches)
                ranking = final_ranking(record.sim.names, record.results())
                order = [record.index[e] for e in ranking.order]
                for p, (a, b) in enumerate(itertools.pairwise(order[: TOP + 1])):
                    prob = ranking.p_next[p]
                    slot = next(i for i in range(len(BINS) - 1) if prob < BINS[i + 1])
                    stated[slot].append(prob)
                    right[slot] += skill[a] > skill[b]
                if not plays:
                    break
                record.play(plays)
        for i, values in enumerate(stated):
            if not values:
                continue
            observed = right[i] / len(values)
            low = BINS[i]
            verdict = ("ok" if observed >= 0.95 else "MISSED") if low >= 0.95 else ""
            label = f"{n} bots, {seats} seats, luck {luck}, skills {skills}"
            bin_ = f"[{low:.2f}, {min(BINS[i + 1], 1):.2f})"
            mean = f"{statistics.fmean(values):.3f}"
            rows.append([label, bin_, str(len(values)), mean, f"{observed:.3f}", verdict])
            print("  ".join(rows[-1]), flush=True)
    return rows


# ---- speed ----


def speed_rows(results: int, resamples: int) -> list[list[str]]:
    rows = []
    for n, seats in ((200, 4), (1000, 2)):
        sim = Sim(n, seats, 7, luck=0.5, rated=False)
        rng = random.Random(7)
        while sim.played < results:
            sim.play([tuple(rng.sample(range(n), seats))], duplicate=True)
        record = Record(sim)
        placings = record.results()[:results]
        start = time.perf_counter()
        ranking = final_ranking(sim.names, placings)
        fit = time.perf_counter() - start
        start = time.perf_counter()
        step = plan_batch(sim.names, placings, FinalsPolicy(table_sizes=(seats,)), 1, 0)
        plan = time.perf_counter() - start
        start = time.perf_counter()
        report = build_report(sim.names, placings, FinalsPolicy(table_sizes=(seats,)), 1,
                              resamples=resamples)  # fmt: skip
        whole = time.perf_counter() - start
        del ranking, step
        rows.append([f"{len(placings):,} results, {n} bots, {seats} seats (duplicates)",
                     f"{fit:.2f}", f"{plan:.2f}", f"{whole:.2f}", str(len(report.crosstable)),
                     "ok" if whole <= 60 else "MISSED"])  # fmt: skip
        print("  ".join(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--calibration-seeds", type=int, default=40)
    parser.add_argument("--sizes", type=int, nargs="*", default=[50, 200], help="bots (tau)")
    parser.add_argument("--results", type=int, default=100_000, help="speed: results")
    parser.add_argument("--only", nargs="*", default=[],
                        help="tau, finals, calibration, speed")  # fmt: skip
    args = parser.parse_args(argv)
    want: Callable[[str], bool] = lambda name: not args.only or name in args.only  # noqa: E731
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
          f"{args.seeds} seeds; skills 0.5 beta apart, noise beta")  # fmt: skip
    if want("speed"):
        table(f"the report over {args.results:,} results (wall s; 1,000 resamples)",
              ["results", "final_ranking", "plan_batch", "build_report", "crosstable cells",
               "<= 60 s"], speed_rows(args.results, 1000))  # fmt: skip
    if want("tau"):
        configs = [(50, 2, 1_500), (50, 4, 600), (200, 2, 8_000), (200, 4, 2_500)]
        configs = [c for c in configs if c[0] in args.sizes]
        table("matches until tau >= 0.9 for good, on the matchmaker's matches (median)",
              ["ladder", "online board", "bound (Thurstone MAP)", "finals' fit",
               "fit/bound (<= 1.1)"], tau_rows(args.seeds, configs))  # fmt: skip
    if want("finals"):
        configs = [(50, 2, 0.0, 6000), (50, 4, 0.0, 3000), (50, 2, 0.5, 6000),
                   (50, 4, 0.5, 4000)]  # fmt: skip
        table("finals: matches until the true top 10 stand in order for good, from a "
              "ladder of 10 games a bot (median)",
              ["ladder", "Halite", "CodinGame", "ours", "ours/better (<= 0.5)",
               "ours stops at", "top 10 right at stop"],
              finals_rows(args.seeds, configs))  # fmt: skip
    if want("calibration"):
        table("calibration: adjacent pairs among the top 11 after every finals batch",
              ["ladder", "stated", "pairs", "mean stated", "truly in order", ">= 0.95"],
              calibration_rows(args.calibration_seeds,
                               [(50, 2, 0.0, "even"), (50, 2, 0.0, "normal"),
                                (50, 4, 0.5, "even"), (50, 4, 0.5, "normal")]))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
