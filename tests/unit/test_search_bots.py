"""house:search against house:greedy, and against itself with fewer playouts (fixed
seeds, stated statistics).

house:search is rollouts of house:greedy's own policy over determinizations (greedy's
rules read off the engine state in the playouts, saloon.sdk.house.playouts): ahead of
greedy at every game, tested here.

The bots here are house:search-N for other N: a fixed number of playouts per decision
(the house bots' only time cap is a safety far above what they need), so every game
below is deterministic whatever the machine's load. Small budgets and one seat count per
game keep the test command quick; ``bench/search.py`` prints every seat count at the default budget.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from saloon.games import get_game
from saloon.referee.match import Match
from saloon.referee.record import MatchRecord
from saloon.referee.seats import InProcessSeat, Seat
from saloon.sdk.bot import Bot
from saloon.sdk.house import make_house_bot
from saloon.sdk.house.search import graded


def search_bot(iterations: int) -> Bot:
    """house:search with ``iterations`` playouts per decision."""
    return graded(iterations)()


def play(
    game: str, bots: list[Bot], seed: int, options: dict[str, str] | None = None
) -> MatchRecord:
    seats: list[Seat] = [InProcessSeat(bot, f"seat{i}") for i, bot in enumerate(bots)]
    return Match(get_game(game), seats, seed, options).run()


def against_greedy(game: str, players: int, iterations: int) -> Iterator[tuple[int, MatchRecord]]:
    """Seeded games 0, 1, ... (each played when asked for), the search seat rotating,
    house:greedy in every other seat: (the search's seat, the record)."""
    for seed in itertools.count():
        seat = seed % players
        bots = [make_house_bot(game, "greedy") for _ in range(players)]
        bots[seat] = search_bot(iterations)
        yield seat, play(game, bots, seed)


@dataclass
class Counts:
    """A sign test's counts: games better, worse, and played."""

    better: int = 0
    worse: int = 0
    played: int = 0

    def __str__(self) -> str:
        return f"better {self.better}, worse {self.worse} in the first {self.played} games"


def sign_test(games: Iterator[tuple[int, MatchRecord]], n: int, threshold: int) -> Counts:
    """Of ``n`` games, those the seat placed better than the other seats' average, worse,
    and the games played: a game is played only while it can change whether ``better >=
    threshold`` (curtailment: the verdict is the one all ``n`` games would give, so the
    test's error probabilities are those of the full ``n``; it is only quicker).

    Under the null hypothesis (the seat's bot no better than the others: seats
    exchangeable) a game is as likely to go either way, so the count of "better" among
    the untied games is Binomial(untied, 1/2): a one-sided sign test."""
    counts = Counts()
    for seat, record in itertools.islice(games, n):
        mine = record.ranks[seat]
        others = [r for s, r in enumerate(record.ranks) if s != seat]
        counts.better += mine < sum(others) / len(others)
        counts.worse += mine > sum(others) / len(others)
        counts.played += 1
        if counts.better >= threshold or counts.better + n - counts.played < threshold:
            break
    return counts


def test_search_beats_greedy_at_seas_of_strife_by_placing() -> None:
    """16 four-seat games, search (40 playouts per decision, house:search's default) in a
    rotating seat, greedy in the other three. Threshold: the search seat places better
    than the greedy seats' average in at least 12 games. Under the null hypothesis
    (search no better than greedy: seats exchangeable) "better" is at most as likely as
    "worse", so P(better >= 12) <= P(X >= 12 | Binomial(16, 1/2)) = 0.038 (one-sided sign
    test; a tie only makes it less likely). Measured at the time of writing (playouts to
    the end of the hand): 13 better, 3 worse; 64 better, 16 worse over seeds 0..79."""
    counts = sign_test(against_greedy("seas-of-strife-v1", 4, 40), 16, 12)
    assert counts.better >= 12, counts


def test_search_beats_greedy_at_western_showdown_by_win_rate() -> None:
    """12 two-seat games, search (24 playouts per decision: rollouts of house:greedy's own
    policy, house:search's default) against house:greedy, alternating seats. Threshold 10
    wins: P(X >= 10 | Binomial(12, 1/2)) = 0.019 (one-sided sign test under "no better
    than greedy"; the game has no ties). Measured at the time of writing: 12 wins, 0 losses
    (P(X >= 12) = 0.00024); 19 of 20 over seeds 0..19 (P(X >= 19 | Binomial(20, 1/2)) =
    0.00002)."""
    counts = sign_test(against_greedy("western-showdown-v1", 2, 24), 12, 10)
    assert counts.better >= 10, counts


def test_search_beats_greedy_at_seizure_by_win_rate() -> None:
    """24 two-seat Seizure games, search (200 playouts per decision, house:search's
    default) against house:greedy, alternating seats. Threshold 17 wins: under the null
    hypothesis (search no better than greedy) P(wins >= 17) <= P(X >= 17 | Binomial(24,
    1/2)) = 0.032 (one-sided sign test; a tie counts for neither side and only makes it
    less likely). Measured at the time of writing: 19 wins, 5 losses (P(X >= 19) = 0.0033);
    29 wins, 10 losses, 1 tie over seeds 0..39."""
    counts = sign_test(against_greedy("seizure-v1", 2, 200), 24, 17)
    assert counts.better >= 17, counts


def test_more_iterations_beat_fewer_at_seizure() -> None:
    """24 two-seat Seizure games, search with 100 iterations against search with 10,
    alternating seats. Threshold 17 wins: P(X >= 17 | Binomial(24, 1/2)) = 0.032 (one-sided
    sign test; ties would count for neither side). Measured at the time of writing (rollout
    search: 10 playouts is one sample per action, which follows the noise): 17 wins,
    6 losses, 1 tie."""

    def games() -> Iterator[tuple[int, MatchRecord]]:
        for seed in itertools.count():
            strong = seed % 2
            bots = [search_bot(100 if s == strong else 10) for s in range(2)]
            yield strong, play("seizure-v1", bots, seed)

    counts = sign_test(games(), 24, 17)
    assert counts.better >= 17, counts
