"""The finals' ranking and schedule (saloon.ratings.finals): determinism, the stop rule,
ties, duplicate deals, bad input."""

from __future__ import annotations

import dataclasses
import random

import pytest

from saloon.ratings.finals import (
    Batch,
    FinalsInputError,
    FinalsPolicy,
    Placing,
    Stop,
    final_ranking,
    plan_batch,
)
from tests.unit.finals_games import entrants, random_games, run_finals

NAMES = entrants(12)
HISTORY = random_games(NAMES, 120, 2, seed=3)


def test_the_same_arguments_plan_the_same_batch_whatever_the_results_order() -> None:
    policy = FinalsPolicy(top_k=5)
    first = plan_batch(NAMES, HISTORY, policy, seed=9, index=2)
    shuffled = list(HISTORY)
    random.Random(1).shuffle(shuffled)
    again = plan_batch(NAMES, shuffled, policy, seed=9, index=2)
    assert isinstance(first, Batch) and isinstance(again, Batch)
    assert first.tables == again.tables and first.field == again.field
    other = plan_batch(NAMES, HISTORY, policy, seed=9, index=3)
    assert isinstance(other, Batch) and other.tables != first.tables


def test_a_batch_spends_its_matches_on_the_field() -> None:
    policy = FinalsPolicy(top_k=4, batch_matches=20)
    batch = plan_batch(NAMES, HISTORY, policy, seed=1, index=0)
    assert isinstance(batch, Batch)
    assert len(batch.tables) == 20
    assert set(batch.field) >= set(batch.ranking.order[:4])
    assert {e for t in batch.tables for e in t.seats} <= set(batch.field)
    assert all(t.deal.startswith("finals:0:") for t in batch.tables)


def test_duplicate_tables_rotate_the_seats_over_one_deal() -> None:
    policy = FinalsPolicy(top_k=6, batch_matches=24, table_sizes=(3,), duplicate=True)
    batch = plan_batch(NAMES, HISTORY, policy, seed=2, index=0)
    assert isinstance(batch, Batch)
    deals: dict[str, list[tuple[str, ...]]] = {}
    for table in batch.tables:
        deals.setdefault(table.deal, []).append(table.seats)
    assert len(deals) == 8
    for seatings in deals.values():
        assert len(seatings) == 3
        for position in range(3):  # each entrant in each seat once
            assert sorted(s[position] for s in seatings) == sorted(seatings[0])


def test_table_sizes_take_turns() -> None:
    policy = FinalsPolicy(top_k=6, batch_matches=12, table_sizes=(2, 4), duplicate=False)
    batch = plan_batch(NAMES, HISTORY, policy, seed=2, index=0)
    assert isinstance(batch, Batch)
    sizes = [len(t.seats) for t in batch.tables]
    assert sizes.count(2) == sizes.count(4) == 6


def test_the_finals_stop_when_the_top_k_are_ordered_and_the_order_is_true() -> None:
    policy = FinalsPolicy(top_k=4, confidence=0.95, budget=3000, batch_matches=40)
    stop, results = run_finals(NAMES, HISTORY, policy, seed=5)
    assert stop.reason == "confident"
    assert stop.matches == len(results) - len(HISTORY) <= 3000
    assert all(p >= 0.95 for p in stop.ranking.p_next[:4])
    assert stop.ranking.order[:5] == tuple(NAMES[:5])


def test_the_budget_stops_the_finals() -> None:
    policy = FinalsPolicy(top_k=10, confidence=0.999, budget=30, batch_matches=20)
    stop, results = run_finals(NAMES, HISTORY, policy, seed=5)
    assert stop.reason == "budget"
    assert stop.matches == 30 == len(results) - len(HISTORY)


def test_a_tie_counts_half_each_way() -> None:
    names = ["a", "b"]
    tied = [Placing(f"m{i}", f"d{i}", ("a", "b"), (0, 0)) for i in range(20)]
    ranking = final_ranking(names, tied)
    assert ranking.skill["a"][0] == pytest.approx(ranking.skill["b"][0])
    assert ranking.p_next[0] == pytest.approx(0.5)
    won = [*tied, Placing("w", "dw", ("b", "a"), (0, 1))]
    ranking = final_ranking(names, won)
    assert ranking.order == ("b", "a") and 0.5 < ranking.p_next[0] < 0.9


def test_a_four_seat_tie_for_second_ranks_the_winner_alone_first() -> None:
    names = ["a", "b", "c", "d"]
    # seat 0 wins, the others tie for second; seats rotate, so each wins a quarter
    games = [Placing(f"m{i}", f"d{i}", tuple(names[i % 4:] + names[: i % 4]), (0, 1, 1, 1))
             for i in range(40)]  # fmt: skip
    ranking = final_ranking(names, games)
    assert ranking.games == {e: 40 for e in names}
    assert {round(ranking.skill[e][0], 6) for e in names} == {25.0}
    lone = games[:1]  # a wins, b c d tie
    ranking = final_ranking(names, lone)
    assert ranking.order[0] == "a"
    assert ranking.skill["b"][0] == pytest.approx(ranking.skill["c"][0])


def test_duplicates_of_one_deal_are_less_sure_than_independent_deals() -> None:
    rng = random.Random(4)
    names = ["a", "b"]
    outcomes = [(0, 1) if rng.random() < 0.7 else (1, 0) for _ in range(60)]
    independent = [Placing(f"m{i}", f"d{i}", ("a", "b"), o) for i, o in enumerate(outcomes)]
    # the same outcomes, but each deal's two games agree: luck shared by the deal
    grouped = [Placing(f"m{i}", f"d{i // 2}", ("a", "b") if i % 2 else ("b", "a"),
                       outcomes[i // 2 * 2] if i % 2 else outcomes[i // 2 * 2][::-1])
               for i in range(60)]  # fmt: skip
    loose = final_ranking(names, independent)
    tight = final_ranking(names, grouped)
    assert tight.skill["a"][1] > loose.skill["a"][1]


@pytest.mark.parametrize(
    ("names", "results", "message"),
    [
        ([], [], "no entrants"),
        (["a", "a"], [], "named twice"),
        (["a", "b"], [Placing("m", "d", ("a", "z"), (0, 1))], "'z' is not an entrant"),
        (["a", "b"], [Placing("m", "d", ("a", "b"), (0,))], "2 seats but 1 places"),
        (["a", "b"], [Placing("m", "d", ("a",), (0,))], "a game needs 2"),
        (["a", "b"], [Placing("m", "d", ("a", "a"), (0, 1))], "two seats"),
        (["a", "b"], [Placing("m", "d", ("a", "b"), (0, -1))], "place -1"),
        (["a", "b"], [Placing("m", "", ("a", "b"), (0, 1))], "deal must be"),
        (["a", "b"], [Placing("m", "d", ("a", "b"), (0, 1))] * 2, "appears twice"),
    ],
)
def test_bad_input_is_a_clear_value_error(
    names: list[str], results: list[Placing], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        final_ranking(names, results)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"top_k": 0}, "top_k"),
        ({"confidence": 1.0}, "confidence"),
        ({"budget": -1}, "budget"),
        ({"batch_matches": 0}, "batch_matches"),
        ({"table_sizes": ()}, "table_sizes"),
        ({"table_sizes": (1,)}, "table_sizes"),
        ({"table_sizes": (20,)}, "no table size"),
    ],
)
def test_a_bad_policy_is_a_clear_value_error(change: dict[str, object], message: str) -> None:
    policy = dataclasses.replace(FinalsPolicy(), **change)  # type: ignore[arg-type]
    with pytest.raises(FinalsInputError, match=message):
        plan_batch(NAMES, HISTORY, policy, seed=1, index=0)


def test_a_bad_index_or_finals_start_is_a_clear_value_error() -> None:
    with pytest.raises(ValueError, match="batch index"):
        plan_batch(NAMES, HISTORY, FinalsPolicy(), seed=1, index=-1)
    with pytest.raises(ValueError, match="finals_from"):
        plan_batch(NAMES, HISTORY, FinalsPolicy(), seed=1, index=0, finals_from=10**6)


def test_a_single_entrant_needs_no_finals() -> None:
    step = plan_batch(["solo"], [], FinalsPolicy(), seed=1, index=0)
    assert isinstance(step, Stop) and step.reason == "confident"
    assert step.ranking.order == ("solo",) and step.matches == 0


def test_the_batch_goes_to_the_pair_whose_order_is_unsure() -> None:
    names = entrants(6)
    games = []
    for i, a in enumerate(names):  # every pair decided 30-0 by the names' order ...
        for b in names[i + 1 :]:
            if (a, b) != ("e01", "e02"):
                games += [(a, b, (0, 1))] * 30
    games += [("e01", "e02", (0, 1)), ("e02", "e01", (0, 1))] * 2  # ... but this one: 2-2
    results = [Placing(f"m{k:04d}", f"d{k}", (a, b), places)
               for k, (a, b, places) in enumerate(games)]  # fmt: skip
    policy = FinalsPolicy(top_k=4, batch_matches=40, duplicate=False)
    batch = plan_batch(names, results, policy, seed=3, index=0)
    assert isinstance(batch, Batch)
    unsure = sum(1 for t in batch.tables if set(t.seats) == {"e01", "e02"})
    assert unsure >= 30
    assert "e05" not in batch.field  # out of contention for the top 4


def test_a_single_table_seats_each_entrant_where_it_has_sat_least() -> None:
    names = ["a", "b"]
    # a has always sat first: the finals' next table puts it second
    history = [Placing(f"m{i}", f"d{i}", ("a", "b"), (i % 2, 1 - i % 2)) for i in range(10)]
    policy = FinalsPolicy(top_k=1, batch_matches=4, duplicate=False)
    batch = plan_batch(names, history, policy, seed=1, index=0)
    assert isinstance(batch, Batch)
    firsts = [t.seats[0] for t in batch.tables]
    assert firsts[0] == "b" and firsts.count("b") >= 3
