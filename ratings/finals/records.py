"""A tournament's finished games as the finals read them: :class:`Placing`, checked and
put in one canonical order, and the pairwise comparisons every fit starts from."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from saloon.ratings.errors import RatingsError


class FinalsInputError(RatingsError, ValueError):
    """Entrants, results or a policy the finals cannot use as given (a ValueError)."""


@dataclass(frozen=True)
class Placing:
    """One finished game of the tournament.

    ``deal`` is the deal key: games that share it were dealt the same cards (duplicates,
    seats rotated); the bootstrap resamples deals, not games. ``seats`` holds entrant ids
    in seat order and ``places`` each seat's place: 0 is first, equal numbers tie.
    """

    match_id: str
    deal: str
    seats: tuple[str, ...]
    places: tuple[int, ...]


def check_entrants(entrants: Sequence[str]) -> tuple[str, ...]:
    """The entrants as a tuple; ValueError when empty, repeated or not strings."""
    field = tuple(entrants)
    if not field:
        raise FinalsInputError("no entrants: a tournament needs at least one")
    for entrant in field:
        if not isinstance(entrant, str) or not entrant:
            raise FinalsInputError(f"entrant {entrant!r} is not a non-empty string")
    if len(set(field)) != len(field):
        twice = sorted(e for e, count in Counter(field).items() if count > 1)
        raise FinalsInputError(f"entrants named twice: {', '.join(twice)}")
    return field


def check_results(entrants: tuple[str, ...], results: Sequence[Placing]) -> list[Placing]:
    """The results in canonical order (by match id), each checked; ValueError naming the
    first bad one. The order makes every fit independent of the order results arrived in
    (workers finish in any order), down to the last bit of every sum."""
    known = set(entrants)
    ids: set[str] = set()
    for r in results:
        if not isinstance(r, Placing):
            raise FinalsInputError(f"result {r!r} is not a Placing")
        if not isinstance(r.match_id, str) or not r.match_id:
            raise FinalsInputError(f"result {r!r}: match_id must be a non-empty string")
        if r.match_id in ids:
            raise FinalsInputError(f"match {r.match_id} appears twice in the results")
        ids.add(r.match_id)
        if not isinstance(r.deal, str) or not r.deal:
            raise FinalsInputError(f"match {r.match_id}: deal must be a non-empty string")
        if len(r.seats) < 2:
            raise FinalsInputError(
                f"match {r.match_id}: {len(r.seats)} seat(s), a game needs 2 or more"
            )
        if len(r.places) != len(r.seats):
            raise FinalsInputError(
                f"match {r.match_id}: {len(r.seats)} seats but {len(r.places)} places"
            )
        if len(set(r.seats)) != len(r.seats):
            raise FinalsInputError(f"match {r.match_id}: an entrant holds two seats")
        for seat in r.seats:
            if seat not in known:
                raise FinalsInputError(f"match {r.match_id}: {seat!r} is not an entrant")
        for place in r.places:
            if isinstance(place, bool) or not isinstance(place, int) or place < 0:
                raise FinalsInputError(
                    f"match {r.match_id}: place {place!r} is not an integer >= 0"
                )
    return sorted(results, key=lambda r: r.match_id)


@dataclass(frozen=True)
class Comparisons:
    """Every seat pair of every game as one comparison: ``first`` finished ahead of
    ``second`` (``tie`` when level, then the order is arbitrary), in game ``game`` of
    deal ``deal`` (indices into :attr:`deals`)."""

    first: np.ndarray
    second: np.ndarray
    tie: np.ndarray
    game: np.ndarray
    deal: np.ndarray
    deals: tuple[str, ...]
    games: int


def comparisons(entrants: tuple[str, ...], results: Sequence[Placing]) -> Comparisons:
    """The comparisons of checked, canonically ordered results."""
    index = {e: i for i, e in enumerate(entrants)}
    deal_index: dict[str, int] = {}
    first: list[int] = []
    second: list[int] = []
    tie: list[bool] = []
    game: list[int] = []
    deal: list[int] = []
    for g, r in enumerate(results):
        d = deal_index.setdefault(r.deal, len(deal_index))
        seats = [index[s] for s in r.seats]
        k = len(seats)
        for a in range(k):
            for b in range(a + 1, k):
                pa, pb = r.places[a], r.places[b]
                if pa <= pb:
                    first.append(seats[a])
                    second.append(seats[b])
                else:
                    first.append(seats[b])
                    second.append(seats[a])
                tie.append(pa == pb)
                game.append(g)
                deal.append(d)
    return Comparisons(
        np.array(first, dtype=np.int64),
        np.array(second, dtype=np.int64),
        np.array(tie, dtype=bool),
        np.array(game, dtype=np.int64),
        np.array(deal, dtype=np.int64),
        tuple(deal_index),
        len(results),
    )
