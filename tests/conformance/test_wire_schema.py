"""Every observation and legal action the engines send fits the game's wire schema, and the
files generated from the schemas (kits/schema, each language's typed views) are current."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from saloon.games import CHANCE, TERMINAL, sdk_views_table
from saloon.sdk.schema import GameWire, generated, json_schema, problems, wires
from tests.conformance.playout import Case, all_cases, playout

ROOT = Path(__file__).resolve().parents[2]
KITS = ROOT / "kits"
SEEDS = 2
#: Every decision of a kind not seen yet is checked, and every EVERY-th one after.
EVERY = 9


def _wire(game: str) -> GameWire:
    return {w.game: w for w in wires()}[game]


def test_every_game_with_a_view_has_a_wire_schema() -> None:
    assert sorted(w.game for w in wires()) == sorted(sdk_views_table())


@pytest.mark.parametrize("case", all_cases(), ids=lambda c: c.id)
def test_every_observation_and_action_fits_the_wire_schema(case: Case) -> None:
    wire = _wire(case.game)
    found: list[str] = []
    kinds: set[str] = set()
    steps = [0]

    def check(state: object, _rng: random.Random) -> None:
        player = state.current_player()  # type: ignore[attr-defined]
        if player in (CHANCE, TERMINAL) or len(found) > 5:
            return
        kind = state.decision_kind()  # type: ignore[attr-defined]
        steps[0] += 1
        if kind in kinds and steps[0] % EVERY:
            return
        kinds.add(kind)
        # Through JSON, as the wire carries it.
        observation = json.loads(json.dumps(state.observation(player)))  # type: ignore[attr-defined]
        found.extend(problems(observation, wire.observation, "observation"))
        if kind not in wire.actions:
            found.append(f"decision kind {kind} has no action type")
            return
        for action in state.legal_actions():  # type: ignore[attr-defined]
            value = json.loads(json.dumps(state.action_to_json(action)))  # type: ignore[attr-defined]
            found.extend(problems(value, wire.actions[kind], kind))

    for seed in range(SEEDS):
        playout(case, seed, check)
    assert found == []
    assert kinds <= set(wire.actions)


def test_the_schema_refuses_what_does_not_fit() -> None:
    wire = _wire("western-showdown-v1")
    said = list(problems({"seat": "0", "extra": 1}, wire.observation))
    assert "$.seat: '0' is not a integer" in said
    assert "$.extra: not a field of Observation" in said
    assert "$.hand: missing from Observation" in said


def test_the_json_schemas_name_every_type_once() -> None:
    for wire in wires():
        schema = json_schema(wire)
        text = json.dumps(schema)
        for ref in {part.split('"')[0] for part in text.split('"$ref": "#/$defs/')[1:]}:
            assert ref in schema["$defs"], f"{wire.game}: {ref} is not defined"


def test_generated_files_are_current() -> None:
    """Regenerating the schemas and every language's views changes nothing checked in
    (run `python -m saloon.sdk.schema kits --write` after changing a game's WIRE)."""
    stale = [
        str(path.relative_to(ROOT))
        for path, text in generated(KITS).items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    assert stale == [], f"stale generated files: {stale}"
    check = subprocess.run(
        [sys.executable, "-m", "saloon.sdk.schema", str(KITS), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stderr
