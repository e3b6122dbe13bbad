"""A tournament's published result: the standings with the probability that each place
is right, the crosstable, the finals' match count; every number reproducible from the
seed and the records (:func:`build_report`, JSON and CSV)."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from saloon.ratings.finals.crosstable import RESAMPLES, Cell, crosstable
from saloon.ratings.finals.fit import Ranking, rank
from saloon.ratings.finals.policy import FinalsPolicy
from saloon.ratings.finals.records import (
    FinalsInputError,
    Placing,
    check_entrants,
    check_results,
    comparisons,
)
from saloon.ratings.finals.schedule import settled

#: The report's format version (a field of its JSON).
FORMAT = 1
#: What the standings are fitted with (a field of its JSON).
METHOD = "thurstone-map"


@dataclass(frozen=True)
class Standing:
    """One line of the standings: ``p_next`` is the probability that this entrant is
    truly better than the next one down (None on the last line)."""

    place: int
    entrant: str
    mu: float
    sigma: float
    p_next: float | None
    games: int
    finals_games: int


@dataclass(frozen=True)
class Report:
    """The final result (see :func:`build_report`)."""

    seed: int
    policy: FinalsPolicy
    results: int
    finals_matches: int
    deals: int
    resamples: int
    settled: bool
    standings: tuple[Standing, ...]
    crosstable: tuple[Cell, ...]
    ranking: Ranking

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON-ready data."""
        return {
            "format": FORMAT,
            "method": METHOD,
            "seed": self.seed,
            "policy": {**asdict(self.policy), "table_sizes": list(self.policy.table_sizes)},
            "results": self.results,
            "finals_matches": self.finals_matches,
            "deals": self.deals,
            "resamples": self.resamples,
            "settled": self.settled,
            "standings": [asdict(s) for s in self.standings],
            "crosstable": [asdict(c) for c in self.crosstable],
        }

    def to_csv(self, part: str = "standings") -> str:
        """One part of the report as CSV: "standings" (default) or "crosstable"."""
        rows: Sequence[Standing | Cell]
        if part == "standings":
            rows, head = self.standings, list(Standing.__dataclass_fields__)
        elif part == "crosstable":
            rows, head = self.crosstable, list(Cell.__dataclass_fields__)
        else:
            raise FinalsInputError(f"report part {part!r}: 'standings' or 'crosstable'")
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(head)
        for row in rows:
            writer.writerow(["" if v is None else _cell(v) for v in asdict(row).values()])
        return out.getvalue()


def _cell(value: object) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def build_report(
    entrants: Sequence[str],
    results: Sequence[Placing],
    policy: FinalsPolicy,
    seed: int,
    *,
    finals_from: int = 0,
    resamples: int = RESAMPLES,
) -> Report:
    """The report on ``results`` (the finals' from position ``finals_from`` on);
    ``resamples`` bootstrap resamples of the deals for the crosstable's intervals."""
    policy.check()
    if not 0 <= finals_from <= len(results):
        raise FinalsInputError(
            f"finals_from {finals_from!r}: must be in 0..{len(results)} (the results given)"
        )
    if not isinstance(resamples, int) or resamples < 1:
        raise FinalsInputError(f"resamples {resamples!r}: must be an integer >= 1")
    field_ = check_entrants(entrants)
    ordered = check_results(field_, results)
    comp = comparisons(field_, ordered)
    ranking = rank(field_, comp)
    finals_games = Counter(e for r in results[finals_from:] for e in r.seats)
    standings = tuple(
        Standing(
            place + 1,
            e,
            ranking.skill[e][0],
            ranking.skill[e][1],
            ranking.p_next[place] if place < len(ranking.p_next) else None,
            ranking.games[e],
            finals_games[e],
        )
        for place, e in enumerate(ranking.order)
    )
    return Report(
        seed,
        policy,
        len(results),
        len(results) - finals_from,
        len(comp.deals),
        resamples,
        settled(ranking, policy),
        standings,
        crosstable(field_, ranking.order, comp, seed, resamples),
        ranking,
    )
