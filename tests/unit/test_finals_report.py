"""The tournament's report (saloon.ratings.finals.build_report): a simulated tournament's
standings in true order, the crosstable's bootstrap, the JSON and CSV."""

from __future__ import annotations

import csv
import io
import json

import pytest

from saloon.ratings.finals import FinalsPolicy, Placing, build_report
from tests.unit.finals_games import entrants, random_games, run_finals

NAMES = entrants(8)
POLICY = FinalsPolicy(top_k=5, batch_matches=24, table_sizes=(2, 3))
HISTORY = random_games(NAMES, 80, 3, seed=11)
STOP, RESULTS = run_finals(NAMES, HISTORY, POLICY, seed=11)


def test_a_simulated_tournament_reports_graded_skills_in_true_order() -> None:
    report = build_report(NAMES, RESULTS, POLICY, seed=11, finals_from=len(HISTORY),
                          resamples=200)  # fmt: skip
    assert STOP.reason == "confident" and report.settled
    assert [s.entrant for s in report.standings][:6] == NAMES[:6]
    assert report.finals_matches == len(RESULTS) - len(HISTORY) == STOP.matches
    assert all(s.p_next is not None and s.p_next >= 0.95 for s in report.standings[:5])
    assert report.standings[-1].p_next is None
    assert sum(s.finals_games for s in report.standings) == sum(
        len(r.seats) for r in RESULTS[len(HISTORY) :]
    )


def test_the_crosstable_is_reproducible_from_the_seed() -> None:
    one = build_report(NAMES, RESULTS, POLICY, seed=4, resamples=100)
    again = build_report(NAMES, list(reversed(RESULTS)), POLICY, seed=4, resamples=100)
    other = build_report(NAMES, RESULTS, POLICY, seed=5, resamples=100)
    assert one.to_json() == again.to_json()
    assert one.crosstable != other.crosstable
    assert [(c.entrant, c.opponent, c.score) for c in one.crosstable] == [
        (c.entrant, c.opponent, c.score) for c in other.crosstable
    ]


def test_a_crosstable_cell_counts_the_games_and_brackets_the_score() -> None:
    names = ["a", "b", "c"]
    games = [Placing(f"m{i}", f"d{i // 2}", ("a", "b", "c") if i % 2 else ("c", "b", "a"),
                     (0, 1, 1) if i % 2 else (1, 1, 0)) for i in range(8)]  # fmt: skip
    games += [Placing("x", "dx", ("b", "a"), (0, 1))]
    report = build_report(names, games, FinalsPolicy(top_k=2), seed=1, resamples=300)
    cells = {(c.entrant, c.opponent): c for c in report.crosstable}
    ab = cells[("a", "b")]
    assert ab.games == 9 and ab.score == pytest.approx(8 / 9)
    assert ab.low <= ab.score <= ab.high <= 1
    bc = cells[("b", "c")]
    assert bc.games == 8 and bc.score == pytest.approx(0.5) and bc.low == bc.high == 0.5
    assert report.deals == 5


def test_the_report_as_json_and_csv() -> None:
    report = build_report(NAMES, RESULTS, POLICY, seed=3, finals_from=len(HISTORY),
                          resamples=50)  # fmt: skip
    data = json.loads(json.dumps(report.to_json()))
    assert set(data) == {"format", "method", "seed", "policy", "results", "finals_matches",
                         "deals", "resamples", "settled", "standings", "crosstable"}  # fmt: skip
    assert data["policy"]["table_sizes"] == [2, 3] and data["seed"] == 3
    assert set(data["standings"][0]) == {"place", "entrant", "mu", "sigma", "p_next", "games",
                                         "finals_games"}  # fmt: skip
    assert set(data["crosstable"][0]) == {"entrant", "opponent", "games", "score", "low", "high"}
    standings = list(csv.DictReader(io.StringIO(report.to_csv())))
    assert [row["entrant"] for row in standings] == [s["entrant"] for s in data["standings"]]
    assert standings[-1]["p_next"] == ""
    cross = list(csv.DictReader(io.StringIO(report.to_csv("crosstable"))))
    assert len(cross) == len(data["crosstable"])
    with pytest.raises(ValueError, match="report part"):
        report.to_csv("bracket")


def test_a_report_with_no_results_lists_the_entrants() -> None:
    report = build_report(["a", "b"], [], FinalsPolicy(), seed=1)
    assert [s.entrant for s in report.standings] == ["a", "b"]
    assert report.crosstable == () and report.finals_matches == 0
    assert report.standings[0].p_next == pytest.approx(0.5)
