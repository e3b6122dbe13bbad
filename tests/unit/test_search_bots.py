"""house:search plays better than house:greedy, and better with more iterations (fixed
seeds, stated statistics).

The bots here search a fixed number of iterations with no time cap (the house grades
also stop at 200 ms, which a loaded test machine would hit), so every game below is
deterministic. Small budgets and one seat count per game keep the test command quick;
``bench/search.py`` prints every seat count at the default budget.
"""

from __future__ import annotations

from saloon.referee.games import get_game
from saloon.referee.match import Match
from saloon.referee.record import MatchRecord
from saloon.referee.seats import InProcessSeat, Seat
from saloon.sdk.bot import Bot
from saloon.sdk.house import make_house_bot
from saloon.sdk.house.search import Search
from saloon.sdk.search import SearchBudget


def search_bot(iterations: int) -> Bot:
    """house:search with ``iterations`` per decision and no time cap."""

    class Uncapped(Search):
        BUDGET = SearchBudget(iterations, 1e9)

    return Uncapped()


def play(game: str, bots: list[Bot], seed: int, options: dict[str, str] | None = None) -> MatchRecord:
    seats: list[Seat] = [InProcessSeat(bot, f"seat{i}") for i, bot in enumerate(bots)]
    return Match(get_game(game), seats, seed, options).run()


def against_greedy(game: str, players: int, iterations: int, games: int) -> list[MatchRecord]:
    """``games`` seeded games, the search seat rotating, house:greedy in every other seat."""
    records = []
    for seed in range(games):
        seat = seed % players
        bots = [make_house_bot(game, "greedy") for _ in range(players)]
        bots[seat] = search_bot(iterations)
        records.append(play(game, bots, seed))
    return records
