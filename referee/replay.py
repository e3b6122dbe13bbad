"""Re-running a match record through its engine: replay, per-seat views, verification."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from saloon.games import CHANCE, TERMINAL, State, get_game
from saloon.games.errors import GameError
from saloon.referee.errors import RecordError
from saloon.referee.match import final_ranks
from saloon.referee.record import LogEntry, MatchRecord, Outcome
from saloon.referee.seeds import derive_seed


@dataclass(frozen=True)
class Step:
    """One log entry, with the state just before it was applied."""

    index: int
    entry: LogEntry
    before: State
    label: str


def replay(record: MatchRecord, on_step: Callable[[Step], None] | None = None) -> State:
    """Rebuild ``record``'s game from its log alone and return the final state.

    ``on_step`` sees each entry with the live state just before it is applied (clone it to
    keep it). RecordError names the first entry the engine refuses, or the first whose
    recorded public events differ from the engine's (records written before events were
    recorded have none anywhere, and are not checked for them).
    """
    check_events = any(entry.events for entry in record.log)
    game = get_game(record.game)
    try:
        state = game.new_game(len(record.seats), record.options)
    except GameError as exc:
        raise RecordError(f"the record's game set-up is invalid: {exc}") from None
    for index, entry in enumerate(record.log):
        player = state.current_player()
        if player == TERMINAL:
            raise RecordError(f"log entry {index}: the game was already over")
        if entry.is_chance != (player == CHANCE):
            expected = "a chance event" if player == CHANCE else f"a decision of seat {player}"
            raise RecordError(f"log entry {index}: expected {expected}")
        kind = state.decision_kind()
        if entry.kind != kind:
            raise RecordError(f"log entry {index}: kind {entry.kind} but the game asks {kind}")
        if entry.is_chance:
            label = state.outcome_to_string(entry.outcome)
        else:
            if entry.seat != player:
                raise RecordError(
                    f"log entry {index}: seat {entry.seat} but seat {player} is to act"
                )
            label = state.action_to_string(entry.action)
        if on_step is not None:
            on_step(Step(index, entry, state, label))
        try:
            if entry.is_chance:
                state.apply_chance(entry.outcome)
            else:
                state.apply_action(entry.action)
        except GameError as exc:
            raise RecordError(f"log entry {index}: {exc}") from None
        events = tuple(state.take_events())
        if check_events and events != entry.events:
            raise RecordError(
                f"log entry {index}: recorded events {list(entry.events)} "
                f"but the engine reports {list(events)}"
            )
    return state


def verify(record: MatchRecord) -> State:
    """Replay ``record`` and check it ends where the record says; RecordError otherwise."""
    state = replay(record)
    if record.outcome is Outcome.ABORTED:
        # The referee stopped it: the log replays, and there is no result to check.
        if record.scores or record.ranks:
            raise RecordError("an aborted match records no scores or ranks")
        return state
    if not state.is_terminal():
        raise RecordError(f"the log stops before the game is over ({len(record.log)} entries)")
    scores = state.scores()
    if [float(s) for s in record.scores] != scores:
        raise RecordError(f"recorded scores {record.scores} but the log gives {scores}")
    ranks = final_ranks(state.ranks(), record.played_out)
    if record.ranks != ranks:
        raise RecordError(f"recorded ranks {record.ranks} but the log gives {ranks}")
    for fault in record.faults:
        if not 0 <= fault.seat < len(record.seats):
            raise RecordError(f"a fault names seat {fault.seat}, which does not exist")
    return state


def verify_deals(record: MatchRecord) -> int:
    """Check that every chance outcome of ``record`` is the one its seed deals (the match
    loop draws them from ``derive_seed(seed, "chance")``); how many were checked.

    With a season's published seed (docs/seasons.md, "Secret seeds") this shows that no
    deal was chosen by hand: the match seed derives from the season's, the deals from it.
    RecordError names the first outcome that differs.
    """
    rng = random.Random(derive_seed(record.seed, "chance"))
    checked = 0

    def on_step(step: Step) -> None:
        nonlocal checked
        if step.entry.is_chance:
            dealt = tuple(step.before.sample_chance(rng))
            if dealt != tuple(step.entry.outcome):
                raise RecordError(
                    f"log entry {step.index}: seed {record.seed} deals {list(dealt)}, "
                    f"the record has {list(step.entry.outcome)}"
                )
            checked += 1

    replay(record, on_step)
    return checked


def seat_view(record: MatchRecord, seat: int) -> dict[str, Any]:
    """What seat ``seat`` saw of ``record``, as JSON: never another seat's private cards.

    Kept: the match's header (game, options, who sat where, limits), its result, the seat's
    own faults, and one step per log entry that the seat saw something of: its own
    decisions (the observation it was sent, the legal actions, what it chose) and the
    public events every seat saw. Left out: the seed (it would re-deal every hand), chance
    outcomes, and other seats' decisions and faults' details.
    """
    if not 0 <= seat < len(record.seats):
        raise RecordError(f"seat {seat} is not a seat of match {record.match_id}")
    steps: list[dict[str, Any]] = []

    def on_step(step: Step) -> None:
        item: dict[str, Any] = {"index": step.index}
        if step.entry.seat == seat:
            item["observation"] = step.before.observation(seat)
            item["legal"] = [step.before.action_to_string(a) for a in step.before.legal_actions()]
            item["chose"] = step.label
            if step.entry.auto:
                item["auto"] = True
        if step.entry.events:
            item["events"] = [dict(e) for e in step.entry.events]
        if len(item) > 1:
            steps.append(item)

    replay(record, on_step)
    full = record.to_json(timing=False)
    return {
        "view": f"seat {seat}",
        "match_id": record.match_id,
        "game": record.game,
        "options": full["options"],
        "seats": full["seats"],
        "limits": full["limits"],
        "outcome": full["outcome"],
        "abort_reason": full.get("abort_reason"),
        "scores": full["scores"],
        "ranks": full["ranks"],
        "played_out": full["played_out"],
        "faults": [f for f in full["faults"] if f["seat"] == seat],
        "steps": steps,
    }
