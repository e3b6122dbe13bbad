"""The matchmaker of continuous ladders: which bots meet in the next batch, in which seats.

Pure and deterministic: the same entries, settings and seed give the same batch (no clock,
no global random state), so a continuous ladder's results do not depend on how many
workers played the earlier batches. Expected information decides, in two steps:

1. **Seats per bot.** The batch has ``batch x seats`` seats. Every active bot gets its
   minimum share first (``min_share`` of a fair share; a bot whose fair share rounds to
   no seat gets one whenever it sat out ``1 / (min_share x fair)`` batches, so none
   starves), house baselines at least one seat in every batch (they anchor the scale: they
   never change, so every batch ties the field to the same fixed points). The rest go by
   *need*: the chance that the board has the bot on the wrong side of a neighbour,
   ``Phi(-|mu_a - mu_b| / sqrt(sigma_a^2 + sigma_b^2))`` summed over its two neighbours in
   mu order, weighted up for the board's top ``top_focus`` places (the order people read)
   and ``new_boost`` times for a version whose sigma is still above ``new_sigma`` (a new
   version plays more until it has settled).
2. **Tables.** The bot with the most seats left to fill starts a table; each seat goes to
   the candidate (among ``window`` neighbours either side in mu order that still have seats
   left) with the most expected information with those already seated: TrueSkill's match
   quality times the sigma^2 the pair would share. With ``one_per_owner`` no two bots of
   one owner share a table (Halite's rule; house baselines are nobody's, so they may meet).
   A new version's first table of the batch includes the nearest house baseline. A
   newcomer in a settled field (sigma above ``new_sigma`` and ``place_ratio`` times the
   field's median) is *placed* instead: its tables alternate between the opponents
   nearest ``mu + place_spread x sigma`` and ``mu - place_spread x sigma``, where a
   result moves it furthest, so that a version far from its predecessor finds its place
   in tens of matches, not hundreds.

Seat positions: each table's seating is the permutation that puts every bot where it has
sat least (counts carried across batches, updated within one); 5-6 seats: greedily.
Duplicate deals: a table is one deal, replayed with the seats rotated, so positions even
out by construction.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from saloon.ratings.params import DEFAULT_BETA, DEFAULT_SIGMA

#: A version whose sigma is above this (TrueSkill units, prior 25/3) is still new.
NEW_SIGMA = 2.5
#: ... and its need counts this many times over.
NEW_BOOST = 3.0
#: A bot's minimum seats per batch, as a share of its fair share (batch seats / bots).
MIN_SHARE = 0.5
#: Board places (from the top) whose order the matchmaker weighs up ...
TOP_FOCUS = 10
#: ... by this factor.
TOP_WEIGHT = 4.0
#: ... once their sigma is at most this.
FOCUS_SIGMA = 1.5
#: Neighbours either side in mu order considered for each seat.
WINDOW = 8
#: How far (in windows) a seat looks for a bot that still has seats of its own to fill,
#: before it takes a near bot as an extra.
REACH_FACTOR = 1
#: Most seats one bot fills in one batch, as a multiple of its fair share (at least 2).
MAX_SHARE = 4.0
#: Placement of a newcomer in a settled field (its sigma above ``new_sigma`` and above
#: ``place_ratio`` times the field's median sigma): its tables alternate between opponents
#: ``place_spread`` of its sigmas above and below its mu, where a result moves it most (it
#: may be far from where its predecessor was). In a young field, where every bot is new,
#: nobody is placed: neighbours in mu order sort it fastest.
PLACE_SPREAD = 1.5
PLACE_RATIO = 2.0


@dataclass(frozen=True)
class Entry:
    """An active bot on the ladder as the matchmaker sees it."""

    bot: str
    owner: str
    mu: float = 25.0
    sigma: float = DEFAULT_SIGMA
    #: House baselines: always in, anchors of the scale, exempt from the owner rule.
    house: bool = False
    #: Batches since the bot last played (0: it played in the last one).
    idle: int = 0
    #: Times it sat in each seat position so far (shorter than the seat count: zeros).
    seat_counts: tuple[int, ...] = ()


@dataclass(frozen=True)
class Settings:
    """How a ladder's matchmaker chooses (a ladder setting, stored with the ladder)."""

    #: Tables per batch (each a match, or a deal of ``seats`` matches); 0: one seat per bot.
    batch: int = 0
    min_share: float = MIN_SHARE
    new_sigma: float = NEW_SIGMA
    new_boost: float = NEW_BOOST
    one_per_owner: bool = True
    top_focus: int = TOP_FOCUS
    top_weight: float = TOP_WEIGHT
    focus_sigma: float = FOCUS_SIGMA
    window: int = WINDOW
    reach_factor: int = REACH_FACTOR
    max_share: float = MAX_SHARE
    place_spread: float = PLACE_SPREAD
    place_ratio: float = PLACE_RATIO
    beta: float = DEFAULT_BETA

    def tables(self, bots: int, seats: int) -> int:
        """Tables in a batch of ``bots`` bots at ``seats`` seats."""
        return self.batch or max(1, bots // seats)


@dataclass
class _Bot:
    index: int
    entry: Entry
    rank: int = 0
    need: float = 0.0
    left: int = 0
    #: Seats of its minimum share not filled yet (they are filled first).
    owed: int = 0
    #: Seats it fills in this batch so far.
    taken: int = 0
    key: float = 0.0
    counts: list[int] = field(default_factory=list)
    met: set[int] = field(default_factory=set)


def _phi_low(x: float) -> float:
    """P(N(0, 1) < -x) for x >= 0."""
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def pair_information(a: Entry, b: Entry, beta: float) -> float:
    """What a match of a and b is expected to teach: TrueSkill's 1v1 match quality times
    the uncertainty (sigma^2) the two share."""
    spread = 2 * beta * beta + a.sigma**2 + b.sigma**2
    quality = math.sqrt(2 * beta * beta / spread) * math.exp(-((a.mu - b.mu) ** 2) / (2 * spread))
    return quality * (a.sigma**2 + b.sigma**2)


def choose_batch(
    entries: Sequence[Entry], seats: int, settings: Settings, seed: int
) -> list[tuple[int, ...]]:
    """The next batch: tables of entry indices in seat order (first seat first).

    Deterministic in (entries, seats, settings, seed). Fewer tables than asked when the
    owner rule leaves too few eligible bots; [] when there are fewer bots than seats.
    """
    if len(entries) < seats or seats < 2:
        return []
    rng = random.Random(seed)
    bots = [_Bot(i, e, key=rng.random()) for i, e in enumerate(entries)]
    order = sorted(bots, key=lambda b: (-b.entry.mu, b.key))
    for rank, bot in enumerate(order):
        bot.rank = rank
        bot.counts = [*bot.entry.seat_counts[:seats], *([0] * (seats - len(bot.entry.seat_counts)))]
    n = len(bots)
    tables_wanted = settings.tables(n, seats)
    total = tables_wanted * seats
    fair = total / n
    cap = max(2, math.ceil(settings.max_share * fair))
    _needs(order, settings)
    field = sorted(b.entry.sigma for b in order if not b.entry.house)
    placing = settings.place_ratio * field[len(field) // 2] if field else math.inf
    placing = max(placing, settings.new_sigma)
    neg_mus = [-b.entry.mu for b in order]
    _shares(order, total, fair, cap, settings)
    houses = sorted((b for b in order if b.entry.house), key=lambda b: b.rank)
    heap = [(-b.owed, -b.left, -b.need, b.key, b.index) for b in bots if b.left > 0]
    heapq.heapify(heap)
    tables: list[tuple[int, ...]] = []
    anchored: set[int] = set()
    while heap and len(tables) < tables_wanted:
        owed, left, _need, _key, index = heapq.heappop(heap)
        first = bots[index]
        if first.left != -left or first.owed != -owed:  # stale: the current one was pushed
            continue
        table = _table(first, order, houses, seats, settings, anchored, placing, neg_mus)
        if table is None:
            first.left = 0  # nobody may sit with it in this batch
            continue
        for bot in table:
            bot.left -= 1
            bot.owed = max(0, bot.owed - 1)
            bot.taken += 1
            bot.met.update(b.index for b in table)
        for bot in table:
            if bot.left > 0:
                heapq.heappush(heap, (-bot.owed, -bot.left, -bot.need, bot.key, bot.index))
        tables.append(_seated(table))
    return tables


def _needs(order: list[_Bot], settings: Settings) -> None:
    for rank, bot in enumerate(order):
        e = bot.entry
        need = 0.0
        for other in (rank - 1, rank + 1):
            if 0 <= other < len(order):
                o = order[other].entry
                spread = math.sqrt(e.sigma**2 + o.sigma**2) or 1e-9
                need += _phi_low(abs(e.mu - o.mu) / spread)
        if rank < settings.top_focus + 1 and e.sigma <= settings.focus_sigma:
            # the top places and the boundary below them, once the order there is known
            # well enough to be worth refining (earlier, the whole field needs sorting)
            need *= settings.top_weight
        if e.sigma > settings.new_sigma and not e.house:
            need *= settings.new_boost
        bot.need = need + 1e-6


def _shares(order: list[_Bot], total: int, fair: float, cap: int, settings: Settings) -> None:
    """Seats per bot: the minimum share, then the rest by need (largest remainders)."""
    minimum = settings.min_share * fair
    every = math.ceil(1 / minimum) if minimum > 0 else 0
    used = 0
    for bot in order:
        least = math.floor(minimum)
        if least == 0 and every and bot.entry.idle + 1 >= every:
            least = 1
        if bot.entry.house:
            least = max(least, 1)
        bot.left = bot.owed = min(least, cap)
        used += bot.left
    rest = max(0, total - used)
    if rest == 0:
        return
    weight = sum(b.need for b in order)
    shares = [(b, rest * b.need / weight) for b in order]
    given = 0
    for bot, share in shares:
        add = min(int(share), cap - bot.left)
        bot.left += add
        given += add
    by_remainder = sorted(shares, key=lambda s: (-(s[1] - int(s[1])), s[0].key))
    while given < rest:
        before = given
        for bot, _share in by_remainder:
            if given >= rest:
                break
            if bot.left < cap:
                bot.left += 1
                given += 1
        if given == before:  # every bot at its cap
            break


def _table(
    first: _Bot,
    order: list[_Bot],
    houses: list[_Bot],
    seats: int,
    settings: Settings,
    anchored: set[int],
    placing: float,
    neg_mus: list[float],
) -> list[_Bot] | None:
    """A table around ``first``: the most informative eligible neighbours (a newcomer's:
    those nearest its placement target), or None."""
    table = [first]
    if (
        first.entry.sigma > settings.new_sigma
        and not first.entry.house
        and first.index not in anchored
        and houses
    ):
        anchor = min(houses, key=lambda h: (abs(h.entry.mu - first.entry.mu), h.rank))
        anchored.add(first.index)
        if anchor is not first:
            table.append(anchor)
    target = None
    if first.entry.sigma > placing and not first.entry.house and settings.place_spread:
        side = 1 if first.taken % 2 == 0 else -1  # above, below, above, ...
        target = first.entry.mu + side * settings.place_spread * first.entry.sigma
    while len(table) < seats:
        if target is not None:
            pick = _near(target, table, order, settings, neg_mus)
            if pick is not None:
                table.append(pick)
                continue
        pick = _best(table, order, settings, need_left=True) or _best(
            table, order, settings, need_left=False
        )
        if pick is None:
            return None
        table.append(pick)
    return table


def _eligible(cand: _Bot, table: list[_Bot], settings: Settings) -> bool:
    if any(cand is b for b in table):
        return False
    if settings.one_per_owner and not cand.entry.house and cand.entry.owner:
        return all(b.entry.house or b.entry.owner != cand.entry.owner for b in table)
    return True


def _best(table: list[_Bot], order: list[_Bot], settings: Settings, need_left: bool) -> _Bot | None:
    """The candidate near the table in mu order with the most information with it."""
    n = len(order)
    center = table[0].rank
    best: tuple[float, float, float, _Bot] | None = None
    reach = settings.window
    while best is None:
        low, high = max(0, center - reach), min(n, center + reach + 1)
        for cand in order[low:high]:
            if need_left and cand.left <= 0:
                continue
            if not _eligible(cand, table, settings):
                continue
            info = sum(pair_information(b.entry, cand.entry, settings.beta) for b in table)
            if any(cand.index in b.met for b in table):
                info *= 0.5  # met already in this batch: something else first
            if not need_left:  # beyond its seats a bot is an extra: spread the extras
                info /= 1 + cand.taken
            # a bot still owed its minimum share first, so that none starves
            score = (float(cand.owed > 0 and need_left), info, -cand.key)
            if best is None or score > best[:3]:
                best = (*score, cand)
        if reach >= n or (need_left and reach >= settings.window * settings.reach_factor):
            break  # a far opponent teaches little: better an extra seat for a near one
        reach *= 2  # nobody eligible near: look further out
    return None if best is None else best[3]


def _near(
    target: float, table: list[_Bot], order: list[_Bot], settings: Settings, neg_mus: list[float]
) -> _Bot | None:
    """The eligible bot with seats left whose mu is nearest ``target``, among the
    ``2 x window`` nearest; None when none of those is."""
    high = bisect.bisect_left(neg_mus, -target)  # order[high:] have mu <= target
    low = high - 1
    for _ in range(2 * settings.window):
        above = order[low] if low >= 0 else None
        below = order[high] if high < len(order) else None
        if above is None and below is None:
            return None
        if below is None or (
            above is not None and above.entry.mu - target <= target - below.entry.mu
        ):
            cand, low = above, low - 1
        else:
            cand, high = below, high + 1
        assert cand is not None
        if cand.left > 0 and _eligible(cand, table, settings):
            return cand
    return None


def _seated(table: list[_Bot]) -> tuple[int, ...]:
    """The table's seating that puts every bot where it has sat least; counts updated."""
    k = len(table)
    if k <= 4:
        best = min(
            itertools.permutations(range(k)),
            key=lambda perm: (sum(table[i].counts[pos] for pos, i in enumerate(perm)), perm),
        )
        seating = [table[i] for i in best]
    else:
        free = list(range(k))
        placed: dict[int, _Bot] = {}
        # the bot with the most uneven counts chooses first
        for bot in sorted(table, key=lambda b: (-(max(b.counts) - min(b.counts)), b.key)):
            pos = min(free, key=lambda p: (bot.counts[p], p))
            free.remove(pos)
            placed[pos] = bot
        seating = [placed[p] for p in range(k)]
    for pos, bot in enumerate(seating):
        bot.counts[pos] += 1
    return tuple(b.index for b in seating)
