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
        seats = set(r.seats)
        if len(seats) != len(r.seats):
            raise FinalsInputError(f"match {r.match_id}: an entrant holds two seats")
        if not seats <= known:
            seat = next(s for s in r.seats if s not in known)
            raise FinalsInputError(f"match {r.match_id}: {seat!r} is not an entrant")
        if all(type(place) is int and place >= 0 for place in r.places):
            continue
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
    # games grouped by seat count, so each group's pairs are taken column by column
    groups: dict[int, tuple[list[int], list[int], list[int], list[int]]] = {}
    for g, r in enumerate(results):
        game_ids, deal_ids, seats, places = groups.setdefault(len(r.seats), ([], [], [], []))
        game_ids.append(g)
        deal_ids.append(deal_index.setdefault(r.deal, len(deal_index)))
        seats.extend(map(index.__getitem__, r.seats))
        places.extend(r.places)
    parts: list[tuple[np.ndarray, ...]] = []
    for k, (game_ids, deal_ids, seats, places) in sorted(groups.items()):
        seat = np.array(seats, dtype=np.int64).reshape(-1, k)
        place = np.array(places, dtype=np.int64).reshape(-1, k)
        game = np.array(game_ids, dtype=np.int64)
        deal = np.array(deal_ids, dtype=np.int64)
        for a in range(k):
            for b in range(a + 1, k):
                ahead = place[:, a] <= place[:, b]
                parts.append((
                    np.where(ahead, seat[:, a], seat[:, b]),
                    np.where(ahead, seat[:, b], seat[:, a]),
                    place[:, a] == place[:, b],
                    game,
                    deal,
                ))  # fmt: skip
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return Comparisons(empty, empty, np.zeros(0, dtype=bool), empty, empty, (), 0)
    first, second, tie, game, deal = (np.concatenate(column) for column in zip(*parts, strict=True))
    return Comparisons(first, second, tie, game, deal, tuple(deal_index), len(results))
