"""The finals, one batch at a time: :func:`plan_batch` reads the results so far and says
which tables to play next, or that the finals are over (:class:`Stop`).

It is a pure function of its arguments: results are read in canonical order and every
random choice comes from ``seed`` and the batch's ``index`` (no clock, no global random
state), so a tournament is the same whatever the number of workers or the order in which
they finish.

Each batch: fit the whole history (:func:`saloon.ratings.finals.fit.rank`); stop when
every adjacent pair among the top K and the K-th against the next are ordered with the
policy's confidence ("confident"), or the budget is spent ("budget"). Otherwise cut the
field to the top K and those still in contention for the K-th place, and spend the
batch's matches on the pairs whose order is unsure: each pair draws tables in proportion
to the probability that its order is wrong (pairs already sure draw a tenth of that),
systematic sampling from the seed. A table of more than two seats fills up with the
field's nearest neighbours of its pair. Table sizes go round the sizes the game allows,
and a duplicate table is played in all its seat rotations on one deal (each seat
position once per entrant); a single table seats each entrant where it has sat least.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from saloon.ratings.finals.fit import Ranking, rank
from saloon.ratings.finals.policy import FinalsPolicy
from saloon.ratings.finals.records import (
    FinalsInputError,
    Placing,
    check_entrants,
    check_results,
    comparisons,
)
from saloon.referee.seeds import derive_seed

#: A pair already ordered with the policy's confidence still draws this share of its
#: weight: its neighbours' matches need opponents, and a sure pair may be surely wrong.
SETTLED_WEIGHT = 0.1
#: A table of k > 2 seats draws its other seats among this many times (k - 2) of the
#: field's entrants nearest its pair.
NEIGHBOURHOOD = 2


@dataclass(frozen=True)
class Table:
    """One match to play: entrant ids in seat order; tables sharing ``deal`` get the same
    cards (derive the cards' seed from the deal key, e.g. ``derive_seed(seed, deal)``)."""

    seats: tuple[str, ...]
    deal: str


@dataclass(frozen=True)
class Batch:
    """The next tables (``index``: the batch's number, from 0), the ``field`` still in
    contention (best first) and the ``ranking`` they were chosen from."""

    index: int
    tables: tuple[Table, ...]
    field: tuple[str, ...]
    ranking: Ranking


@dataclass(frozen=True)
class Stop:
    """The finals are over: ``reason`` is "confident" (the stop rule holds) or "budget"
    (the match budget is spent); ``ranking`` is what they stopped on and ``matches`` the
    finals matches played."""

    reason: str
    ranking: Ranking
    matches: int


#: Stop reasons.
CONFIDENT = "confident"
BUDGET_SPENT = "budget"


def settled(ranking: Ranking, policy: FinalsPolicy) -> bool:
    """Whether the stop rule holds: every adjacent pair among the top K, and the K-th
    against the next, ordered with at least the policy's confidence."""
    k = min(policy.top_k, len(ranking.order))
    return all(p >= policy.confidence for p in ranking.p_next[:k])


def plan_batch(
    entrants: Sequence[str],
    results: Sequence[Placing],
    policy: FinalsPolicy,
    seed: int,
    index: int,
    *,
    finals_from: int = 0,
) -> Batch | Stop:
    """The finals' next batch, or :class:`Stop`. ``results``: every game so far, the
    finals' from position ``finals_from`` on (those count against the budget)."""
    policy.check()
    if not isinstance(index, int) or index < 0:
        raise FinalsInputError(f"batch index {index!r}: must be an integer >= 0")
    if not 0 <= finals_from <= len(results):
        raise FinalsInputError(
            f"finals_from {finals_from!r}: must be in 0..{len(results)} (the results given)"
        )
    field_ = check_entrants(entrants)
    ordered = check_results(field_, results)
    ranking = rank(field_, comparisons(field_, ordered))
    played = len(results) - finals_from
    if settled(ranking, policy):
        return Stop(CONFIDENT, ranking, played)
    left = min(policy.batch_matches, policy.budget - played)
    if left <= 0:
        return Stop(BUDGET_SPENT, ranking, played)
    sizes = sorted(k for k in set(policy.table_sizes) if k <= len(field_))
    if not sizes:
        raise FinalsInputError(f"no table size of {policy.table_sizes} fits {len(field_)} entrants")
    rng = random.Random(derive_seed(seed, f"finals:batch:{index}"))
    contenders = contention(ranking, policy, max(sizes))
    seat_counts = Counter(
        (e, len(r.seats), position) for r in ordered for position, e in enumerate(r.seats)
    )
    tables = _tables(ranking, contenders, policy, sizes, left, rng, index, seat_counts)
    return Batch(index, tuple(tables), contenders, ranking)


def contention(ranking: Ranking, policy: FinalsPolicy, least: int = 2) -> tuple[str, ...]:
    """The field still in contention, best first: the top K, and each entrant below
    whose probability of being truly better than the K-th is at least
    ``policy.contention``; at least ``least`` entrants (the best)."""
    order = ranking.order
    k = min(policy.top_k, len(order))
    kth = order[k - 1]
    field_ = list(order[:k])
    field_ += [e for e in order[k:] if ranking.p_above(e, kth) >= policy.contention]
    for e in order:
        if len(field_) >= least:
            break
        if e not in field_:
            field_.append(e)
    return tuple(e for e in order if e in set(field_))


def _targets(
    ranking: Ranking, field_: tuple[str, ...], policy: FinalsPolicy
) -> list[tuple[int, int, float]]:
    """(field position, field position, weight) of every pair worth a table."""
    k = min(policy.top_k, len(field_))
    place = {e: i for i, e in enumerate(ranking.order)}
    out = []
    for pos in range(len(field_) - 1):
        a, b = field_[pos], field_[pos + 1]
        if pos < k:
            p = ranking.p_above(a, b) if place[b] != place[a] + 1 else ranking.p_next[place[a]]
            weight = 1 - p
            if p >= policy.confidence:
                weight *= SETTLED_WEIGHT
            out.append((pos, pos + 1, weight))
        else:  # below the K-th: its chance of belonging above the K-th
            p = ranking.p_above(b, field_[k - 1])
            out.append((k - 1, pos + 1, p))
    return [t for t in out if t[2] > 0] or [(0, 1, 1.0)]


def _tables(
    ranking: Ranking,
    field_: tuple[str, ...],
    policy: FinalsPolicy,
    sizes: list[int],
    left: int,
    rng: random.Random,
    index: int,
    seat_counts: Counter[tuple[str, int, int]],
) -> list[Table]:
    targets = _targets(ranking, field_, policy)
    total = sum(w for *_, w in targets)
    # table sizes in turn, continuing from batch to batch; count the tables this buys
    plan: list[int] = []
    spent = 0
    turn = index * len(sizes)
    while spent < left:
        k = sizes[turn % len(sizes)]
        turn += 1
        plan.append(k)
        spent += k if policy.duplicate else 1
    # systematic sampling of the targets, in proportion to their weights
    start = rng.random()
    picks = []
    cumulative = 0.0
    t = 0
    for a, b, w in targets:
        cumulative += w / total * len(plan)
        while t < len(plan) and start + t < cumulative:
            picks.append((a, b))
            t += 1
    while len(picks) < len(plan):  # rounding at the very end
        picks.append(targets[-1][:2])
    rng.shuffle(picks)
    tables: list[Table] = []
    for number, (k, (a, b)) in enumerate(zip(plan, picks, strict=True)):
        seats = [a, b, *_neighbours(a, b, k - 2, len(field_), rng)]
        rng.shuffle(seats)
        names = tuple(field_[s] for s in seats)
        if not policy.duplicate:
            names = _balanced(names, seat_counts)
            seat_counts.update((e, k, position) for position, e in enumerate(names))
        deal = f"finals:{index}:{number}"
        rotations = [names[r:] + names[:r] for r in range(k)] if policy.duplicate else [names]
        room = left - len(tables)
        tables.extend(Table(seating, deal) for seating in rotations[:room])
    return tables


def _neighbours(a: int, b: int, count: int, size: int, rng: random.Random) -> list[int]:
    """``count`` field positions other than a and b, among the nearest to them."""
    if count <= 0:
        return []
    others = [p for p in range(size) if p not in (a, b)]
    others.sort(key=lambda p: (min(abs(p - a), abs(p - b)), p))
    pool = others[: max(count, NEIGHBOURHOOD * count)]
    return rng.sample(pool, count)


def _balanced(
    names: tuple[str, ...], seat_counts: Counter[tuple[str, int, int]]
) -> tuple[str, ...]:
    """The seat order that puts each entrant where it has sat least at tables of this
    size (fewest past games in the chosen seats, summed); ties: the order given."""
    k = len(names)
    return min(
        itertools.permutations(names),
        key=lambda order: sum(seat_counts[(e, k, p)] for p, e in enumerate(order)),
    )
