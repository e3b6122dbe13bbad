"""A match's replay as the viewer steps through it, made by replaying its record through
the engine with :func:`saloon.referee.replay.replay`, the replay ``saloon replay`` runs: the
page and the CLI can never disagree.

``tables[p]`` is the public table (:mod:`saloon.arena.web.tables`) after the first
``p`` log entries (``tables[0]`` is the start, ``tables[-1]`` the end). ``steps[i]`` is
log entry ``i``: its label, public events, the seat that acted, whose turn it was and any
fault there; a label only that seat saw (a card given, a deal) is null unless ``hands``.
A shown label the viewer words otherwise has ``text`` too (a Seizure special card by its
name: :func:`saloon.arena.web.tables.readable`), and a shown deal ``dealt``: its card ids
per seat (:func:`saloon.arena.web.tables.dealt`), which the viewer draws as cards.
With ``hands``, ``hands[p]`` is every zone of cards at position ``p``: the full deal, for
a finished match (every stored match is: a record is written when its match ends).
"""

from __future__ import annotations

from typing import Any

from saloon.arena.web.errors import NotFound
from saloon.arena.web.tables import (
    TableMaker,
    all_hands,
    card_legend,
    dealt,
    label_is_public,
    readable,
)
from saloon.arena.web.views import shown_name
from saloon.referee.record import MatchRecord, stderr_blocks
from saloon.referee.replay import Step, replay, seat_view
from saloon.sdk.output import unmarked
from saloon.worker.store.store import Store


def load_record(store: Store, match_id: str) -> MatchRecord:
    """The stored record of ``match_id``; NotFound when there is none."""
    raw = store.match_record(match_id)
    if raw is None:
        raise NotFound(f"no recorded match {match_id!r}")
    return MatchRecord.from_json(raw)


def match_replay(record: MatchRecord, *, hands: bool = False) -> dict[str, Any]:
    """The viewer's data for ``record`` (see the module docstring)."""
    faults: dict[int, list[dict[str, Any]]] = {}
    for f in record.faults:
        faults.setdefault(f.decision, []).append(
            {"seat": f.seat, "kind": f.kind.value, "detail": f.detail}
        )
    steps: list[dict[str, Any]] = []
    tables: list[dict[str, Any]] = []
    zones: list[dict[str, list[int]]] = []
    maker = TableMaker(record.game)
    legend: dict[int, str] = {}

    def on_step(step: Step) -> None:
        entry = step.entry
        if step.index == 0:
            legend.update(card_legend(step.before))
        tables.append(maker.table(step.before))
        maker.after(step)
        if hands:
            zones.append(all_hands(step.before))
        shown = hands or label_is_public(record.game, step)
        label = step.label if shown else None  # made only when shown: a label costs
        item: dict[str, Any] = {
            "index": step.index,
            "seat": entry.seat,
            "to_play": step.before.current_player(),
            "kind": entry.kind,
            "label": label,
            "events": [dict(e) for e in entry.events],
        }
        if label is not None:
            text = readable(record.game, label)
            if text != label:
                item["text"] = text  # the label with its cards' names, as the viewer shows it
            if entry.is_chance and legend:
                # A deal's card ids, per seat, for the viewer to show as cards.
                groups = dealt(label, legend)
                if groups is not None:
                    item["dealt"] = groups
        if entry.auto:
            item["auto"] = True
        if entry.fallback:
            item["fallback"] = True
        if step.index in faults:
            item["faults"] = faults[step.index]
        steps.append(item)

    final = replay(record, on_step)
    tables.append(maker.table(final))
    if hands:
        zones.append(all_hands(final))
    full = record.to_json(timing=False)
    out: dict[str, Any] = {
        "match_id": record.match_id,
        "game": record.game,
        "options": full["options"],
        # Each seat also as boards show its bot (``alicebot``, not ``bot:alicebot@a1``).
        "seats": [{**s, "name": shown_name(s["bot"])} for s in full["seats"]],
        "outcome": full["outcome"],
        "abort_reason": full.get("abort_reason"),
        "scores": full["scores"],
        "ranks": full["ranks"],
        "played_out": full["played_out"],
        "start_faults": faults.get(-1, []),
        "cards": {str(c): text for c, text in legend.items()},
        "steps": steps,
        "tables": tables,
    }
    if hands:
        out["hands"] = zones
    return out


def seat_replay(record: MatchRecord, seat: int) -> dict[str, Any]:
    """What seat ``seat`` saw (the owner's view): :func:`saloon.referee.replay.seat_view`."""
    if not 0 <= seat < len(record.seats):
        raise NotFound(f"match {record.match_id} has no seat {seat}")
    return seat_view(record, seat)


def seat_stderr(seat: int, text: str) -> dict[str, Any]:
    """A seat's stored stderr for its owner: the text with each of the runtime's marks as a
    ``[decision N]`` heading, and the same as blocks by moment (saloon.sdk.output)."""
    return {
        "stderr": unmarked(text),
        "stderr_blocks": [block.to_json() for block in stderr_blocks(seat, text)],
    }
