"""The fold: ratings and standings of one ladder from results in schedule order.

:func:`fold` is pure: it sorts its input by schedule order (``Result.order``, then match
id), so the same results give the same standings whatever order they were recorded in.
Aborted matches are skipped. Every other result, or every deal group, is one rated
comparison (docs/ratings.md):

* each distinct bot version in it is one TrueSkill "team" of one;
* its placement is the mean of its seats' ranks over the comparison's matches (one match:
  simply its rank; a duplicate deal: its placings summed over the rotated replays; a bot
  that fills two seats: the mean of the two), lower is better, equal is a tie;
* 2 bots rate 1v1, 3-6 rate free-for-all; a comparison of fewer than 2 bots changes no
  rating (its matches still count in the statistics).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

from saloon.ratings.ladders import Ladder
from saloon.ratings.params import RatingParams, Scope
from saloon.ratings.results import Result
from saloon.referee.record import Outcome

if TYPE_CHECKING:
    import trueskill

log = logging.getLogger(__name__)

#: A bot version's identity: (bot name, version).
Key = tuple[str, str]


class HistoryPoint(NamedTuple):
    """A bot's rating right after one rated comparison it took part in."""

    #: Index of the comparison in the ladder's fold (0 = the first one rated).
    step: int
    #: The comparison's first match.
    match_id: str
    season: str
    version: str
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """mu - 3 sigma."""
        return self.mu - 3 * self.sigma


@dataclass
class BotStats:
    """What one bot did in the folded results (all its versions together).

    Not the season standings' count (saloon.worker.seasons.standings, which counts every
    seat and every shared first as a win): a bot in several seats of a match counts one
    match at the mean of its places, and a win is a first place alone.
    """

    bot: str
    owner: str = ""
    #: The version the bot last played with (its rating is this version's).
    version: str = ""
    matches: int = 0
    #: Matches the bot ranked first alone.
    wins: int = 0
    #: Sum over matches of its placing (1 = first, as people count).
    placing_sum: float = 0.0
    points_sum: float = 0.0
    faults: int = 0
    played_out: int = 0
    #: Matches per version, in the order the versions first played.
    versions: dict[str, int] = field(default_factory=dict)

    @property
    def avg_placing(self) -> float | None:
        """Average placing (1 = first), None without matches."""
        return self.placing_sum / self.matches if self.matches else None

    @property
    def avg_points(self) -> float | None:
        """Average score per match, None without matches."""
        return self.points_sum / self.matches if self.matches else None


@dataclass
class HeadToHead:
    """Matches in which both bots of a pair played: how often the first placed higher."""

    above: int = 0
    below: int = 0
    tied: int = 0


@dataclass
class Standings:
    """The outcome of a fold: ratings, statistics, rating histories, head-to-head."""

    ladder: Ladder
    scope: Scope
    params: RatingParams
    #: The current rating (mu, sigma) of every bot version rated.
    ratings: dict[Key, tuple[float, float]] = field(default_factory=dict)
    #: Per bot, the version it was last rated with (its rating on the leaderboard).
    current: dict[str, Key] = field(default_factory=dict)
    stats: dict[str, BotStats] = field(default_factory=dict)
    history: dict[str, list[HistoryPoint]] = field(default_factory=dict)
    #: (a, b) -> how a placed against b, for every ordered pair that met.
    head_to_head: dict[tuple[str, str], HeadToHead] = field(default_factory=dict)
    #: Rated comparisons (a deal group counts once).
    comparisons: int = 0
    #: Completed matches folded (rated or not).
    matches: int = 0
    #: Seat counts seen (2 alone: a two-player ladder).
    seat_counts: set[int] = field(default_factory=set)

    def rating(self, bot: str) -> tuple[float, float] | None:
        """The bot's current (mu, sigma): that of the version it was last rated with."""
        key = self.current.get(bot)
        return None if key is None else self.ratings[key]


def rate_groups(env: trueskill.TrueSkill, groups: list[Any], ranks: list[Any]) -> Any:
    """``env.rate(groups, ranks)``; on an extreme upset, where the builtin backend
    underflows (FloatingPointError), the same with mpmath if it is installed (6-15x
    slower, and only then); None when neither can rate it (the ratings then stay as
    they were: the match still counts in the statistics)."""
    try:
        return env.rate(groups, ranks)
    except FloatingPointError:
        pass
    import trueskill

    try:
        precise = trueskill.TrueSkill(
            env.mu, env.sigma, env.beta, env.tau, env.draw_probability, backend="mpmath"
        )
        return precise.rate(groups, ranks)
    except (ImportError, ValueError, FloatingPointError):
        return None


def _units(results: list[Result]) -> Iterator[list[Result]]:
    """Rated comparisons in order: each result alone, or a deal group at its first match."""
    groups: dict[str, list[Result]] = {}
    for result in results:
        if result.deal_group is not None:
            groups.setdefault(result.deal_group, []).append(result)
    emitted: set[str] = set()
    for result in results:
        group = result.deal_group
        if group is None:
            yield [result]
        elif group not in emitted:
            emitted.add(group)
            yield groups[group]


def schedule_order(results: Iterable[Result]) -> list[Result]:
    """``results`` sorted into schedule order (order key, then match id)."""
    return sorted(results, key=lambda r: (r.order, r.match_id))


class Folder:
    """The mutable state of one fold: :func:`fold` drives it over every result at once,
    saloon.ratings.incremental over a stored checkpoint's state, one result at a time."""

    def __init__(self, ladder: Ladder, scope: Scope, params: RatingParams) -> None:
        self.out = Standings(ladder, scope, params)
        self.params = params
        self.scope = scope
        self._envs: dict[int, trueskill.TrueSkill] = {}
        #: Live trueskill.Rating objects per bot version (the Standings keep plain tuples).
        self.live_ratings: dict[Key, Any] = {}

    def env(self, seats: int) -> trueskill.TrueSkill:
        env = self._envs.get(seats)
        if env is None:
            env = self._envs[seats] = self.params.environment(self.scope, seats)
        return env

    def live(self, key: Key, env: trueskill.TrueSkill) -> Any:
        rating = self.live_ratings.get(key)
        if rating is None:
            before = self.out.current.get(key[0])  # a new version starts from it
            if before is None:
                rating = env.create_rating()
            else:
                prev = self.live_ratings[before]
                rating = env.create_rating(prev.mu, self.params.successor_sigma(prev.sigma))
            self.live_ratings[key] = rating
        return rating

    def rate(self, keys: list[Key], ranks: list[Any], step: int, first: Result) -> None:
        env = self.env(len(keys))
        groups = [(self.live(k, env),) for k in keys]
        rated = rate_groups(env, groups, ranks)
        if rated is None:
            log.warning("ladder %s: %s cannot be rated (extreme upset, no mpmath); skipped",
                        self.out.ladder.label, first.match_id)  # fmt: skip
            return
        history, live, ratings = self.out.history, self.live_ratings, self.out.ratings
        last = self.out.current
        match_id, season = first.match_id, first.season
        for key, (new,) in zip(keys, rated, strict=True):
            live[key] = new
            last[key[0]] = key
            mu, sigma = new.mu, new.sigma  # properties computed from pi, tau: read once
            ratings[key] = (mu, sigma)
            point = HistoryPoint(step, match_id, season, key[1], mu, sigma)
            points = history.get(key[0])
            if points is None:
                history[key[0]] = [point]
            else:
                points.append(point)

    def count(self, result: Result) -> None:
        """The match's statistics and head-to-head."""
        out = self.out
        out.matches += 1
        seats = result.seats
        out.seat_counts.add(len(seats))
        top = min(s.rank for s in seats)
        alone_on_top = sum(1 for s in seats if s.rank == top) == 1
        bots = [s.bot for s in seats]
        placing: list[Fraction] | list[int]
        means: list[Fraction] = []
        if len(set(bots)) == len(bots):  # the common case: one seat per bot
            all_stats = out.stats
            for seat in seats:
                stats = all_stats.get(seat.bot)
                if stats is None:
                    stats = all_stats[seat.bot] = BotStats(seat.bot)
                stats.matches += 1
                if seat.owner:
                    stats.owner = seat.owner
                version = stats.version = seat.version
                stats.versions[version] = stats.versions.get(version, 0) + 1
                stats.placing_sum += seat.rank + 1
                stats.points_sum += seat.score
                stats.faults += seat.faults
                stats.played_out += seat.played_out
                if alone_on_top and seat.rank == top:
                    stats.wins += 1
            placing = [s.rank for s in seats]
        else:
            # A bot in several seats: it counts one match, at the mean of its seats.
            per_bot: dict[str, list[int]] = {}
            for index, seat in enumerate(seats):
                per_bot.setdefault(seat.bot, []).append(index)
            bots = list(per_bot)
            for bot, indexes in per_bot.items():
                stats = self._stats(bot)
                first = seats[indexes[0]]
                self._seen(stats, first.owner, first.version)
                n = len(indexes)
                stats.placing_sum += sum(seats[i].rank + 1 for i in indexes) / n
                stats.points_sum += sum(seats[i].score for i in indexes) / n
                stats.faults += sum(seats[i].faults for i in indexes)
                stats.played_out += any(seats[i].played_out for i in indexes)
                if alone_on_top and any(seats[i].rank == top for i in indexes):
                    stats.wins += 1
                means.append(Fraction(sum(seats[i].rank for i in indexes), n))
            placing = means
        h2h = out.head_to_head
        for i, a in enumerate(bots):
            pa = placing[i]
            for j, b in enumerate(bots):
                if i != j:
                    cell = h2h.get((a, b))
                    if cell is None:
                        cell = h2h[(a, b)] = HeadToHead()
                    pb = placing[j]
                    if pa < pb:
                        cell.above += 1
                    elif pa > pb:
                        cell.below += 1
                    else:
                        cell.tied += 1

    def _stats(self, bot: str) -> BotStats:
        stats = self.out.stats.get(bot)
        if stats is None:
            stats = self.out.stats[bot] = BotStats(bot)
        return stats

    @staticmethod
    def _seen(stats: BotStats, owner: str, version: str) -> None:
        stats.matches += 1
        if owner:
            stats.owner = owner
        stats.version = version
        stats.versions[version] = stats.versions.get(version, 0) + 1

    def unit(self, unit: list[Result]) -> None:
        """Rate one comparison (one match, or a deal group) and count its matches."""
        for result in unit:
            self.count(result)
        first = unit[0]
        if len(unit) == 1:
            seats = first.seats
            keys = [(s.bot, s.version) for s in seats]
            if len(set(keys)) == len(keys):  # the common case: one seat per bot version
                if len(keys) >= 2:
                    self.rate(keys, [s.rank for s in seats], self.out.comparisons, first)
                    self.out.comparisons += 1
                return
        sums: dict[Key, list[int]] = {}
        for result in unit:
            for seat in result.seats:
                entry = sums.setdefault((seat.bot, seat.version), [0, 0])
                entry[0] += seat.rank
                entry[1] += 1
        if len(sums) < 2:
            return
        keys = list(sums)
        ranks = [Fraction(sums[k][0], sums[k][1]) for k in keys]
        self.rate(keys, ranks, self.out.comparisons, first)
        self.out.comparisons += 1


def fold(
    results: Iterable[Result],
    ladder: Ladder,
    scope: Scope = Scope.SEASON,
    params: RatingParams | None = None,
) -> Standings:
    """Rate ``ladder``'s completed results in schedule order; other ladders are ignored."""
    chosen = [r for r in results if r.ladder == ladder and r.outcome is Outcome.COMPLETED]
    folder = Folder(ladder, scope, params or ladder.params)
    for unit in _units(schedule_order(chosen)):
        folder.unit(unit)
    return folder.out
