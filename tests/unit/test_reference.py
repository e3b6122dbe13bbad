"""The SDK reference pages (docs/reference/) are made from the code and are current."""

from __future__ import annotations

from pathlib import Path

from saloon.games import game_ids
from saloon.sdk.reference import main, pages, undocumented

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"


def test_every_field_of_every_typed_value_has_a_meaning() -> None:
    assert undocumented() == []


def test_checked_in_pages_are_current() -> None:
    stale = [n for n, text in pages().items() if (REFERENCE / n).read_text() != text]
    assert stale == [], "run: .venv/bin/python -m saloon.sdk.reference"


def test_every_game_has_a_page_listing_its_observation_fields() -> None:
    made = pages()
    for game_id in game_ids():
        page = made[f"{game_id}.md"]
        assert "### `Observation`" in page and "| `hand` |" in page
        assert "| `num_seats` | `int` |" in page
    assert "| `seed` | `int` | A seed for the bot's own randomness, DERIVED" in made["sdk.md"]


def test_check_mode_reports_a_stale_page(tmp_path: Path) -> None:
    assert main(["--out", str(tmp_path)]) == 0
    assert main(["--out", str(tmp_path), "--check"]) == 0
    (tmp_path / "seizure-v1.md").write_text("old\n")
    assert main(["--out", str(tmp_path), "--check"]) == 1


def test_the_search_page_lists_callbacks_values_and_the_engine_methods() -> None:
    page = pages()["search.md"]
    for name in ("Playout", "Evaluation", "Prior", "Horizon", "Rollout"):
        assert f"| `{name}` | `Callable[" in page
    assert "`bot_playout(game_id: 'str', bot: 'Bot') -> 'Playout'`" in page
    for method in ("current_player", "is_terminal", "is_chance", "legal_actions"):
        assert f"| `{method}()" in page
    for method in ("apply_action(action", "clone()", "resample_hidden(seat", "render()"):
        assert f"| `{method}" in page
    assert "| `capped` | `bool` |" in page


def test_western_pass_skip_and_done_are_in_its_constants_table() -> None:
    page = pages()["western-showdown-v1.md"]
    for name in ("PASS", "SKIP", "DONE"):
        assert f"| `{name}` | `" in page.split("## Constants", 1)[1]


def test_no_field_meaning_repeats_its_class_docstring() -> None:
    from saloon.sdk.games import seizure, western_showdown
    from saloon.sdk.reference import fields_of

    for cls in (seizure.Card, seizure.NothingPlayable, western_showdown.Pick):
        doc = " ".join((cls.__doc__ or "").split())
        assert all(f.meaning and f.meaning not in doc for f in fields_of(cls))


def test_every_public_engine_attribute_a_playout_reads_is_typed_and_documented() -> None:
    """Issue 30: the house playouts read private engine state (s._phase,
    s._pending_card); what a fast playout reads is now each engine State's declared,
    typed and documented attributes, listed on search.md."""
    from saloon.sdk.reference import engine_state_classes, state_attributes

    page = pages()["search.md"]
    for game_id, cls in engine_state_classes().items():
        attributes = state_attributes(cls)
        assert attributes and all(f.meaning and f.type for f in attributes), game_id
        section = page.split(f"### `{cls.__module__}.{cls.__name__}` ({game_id})", 1)[1]
        for f in attributes:
            assert f"| `{f.name}` | `" in section.split("\n### ", 1)[0]
    # What the house playouts read that used to be private is public now.
    for name in ("colour_mask", "gift", "pending_card", "pending_slot", "picked"):
        assert f"| `{name}` | `int` |" in page


def test_house_search_parts_read_no_private_engine_state() -> None:
    """No ``x._name`` outside ``self``/``cls`` in saloon.sdk.house: the playouts and
    rewards use the engines' public API only."""
    import ast

    found = []
    for path in sorted((ROOT / "sdk" / "house").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                found.append(f"{path.name}:{node.lineno}: .{node.attr}")
    assert found == []


def test_the_search_page_lists_the_fast_playouts_and_rewards() -> None:
    page = pages()["search.md"]
    for name in (
        "saloon.sdk.house.playouts.greedy_western_playout(",
        "saloon.sdk.house.playouts.greedy_seizure_playout(",
        "saloon.sdk.house.playouts.greedy_strife_playout(",
        "saloon.sdk.house.playouts.greedy_strife_rollout(",
        "saloon.sdk.house.search.cards_won_rewards(",
        "saloon.sdk.house.search.tricks_rewards(",
        "saloon.sdk.house.search.hand_points_rewards(",
    ):
        assert f"### `{name}" in page
    assert "| western-showdown-v1 | `saloon.sdk.house.western_showdown.GreedyBot` |" in page
    assert "### `CappedNote`" in page and "### `parse_capped_note(" in page


GUIDE = ROOT / "docs" / "bot-guide.md"


def undocumented_imports(code: str) -> list[str]:
    """``module.name`` of every name a piece of Python imports from saloon's SDK (or the
    engines) that the reference pages do not document. The referee's own Python API
    (saloon.referee: the guide's debugging harness) has no reference page and is left
    out."""
    import ast

    from saloon.sdk.reference import documented_names

    documented = documented_names()
    missing = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module:
            module = node.module
            if not module.startswith("saloon.") or module.startswith("saloon.referee"):
                continue
            missing += [
                f"{module}.{alias.name}"
                for alias in node.names
                if alias.name not in documented.get(module, set())
            ]
        elif isinstance(node, ast.Import):
            missing += [
                f"import {alias.name}"
                for alias in node.names
                if alias.name.startswith("saloon.") and alias.name not in documented
            ]
    return missing


def test_the_reference_covers_every_name_the_guide_s_examples_import() -> None:
    """Issue 30: every saloon name a code example of docs/bot-guide.md imports is on a
    reference page (search.md did not list greedy_western_playout nor cards_won_rewards)."""
    import re
    import textwrap

    blocks = [
        textwrap.dedent(code)
        for code in re.findall(r"```python\n(.*?)[ ]*```", GUIDE.read_text(), re.S)
    ]
    assert len(blocks) >= 6
    assert [name for code in blocks for name in undocumented_imports(code)] == []


def test_an_example_importing_an_undocumented_name_fails_the_check() -> None:
    code = (
        "from saloon.sdk.search import RolloutSearch, _Draws\n"
        "from saloon.sdk.house.playouts import _western_key, greedy_western_playout\n"
        "from saloon.sdk.house.western_showdown import push_card\n"
        "from saloon.referee.match import play_match\n"
    )
    assert undocumented_imports(code) == [
        "saloon.sdk.search._Draws",
        "saloon.sdk.house.playouts._western_key",
        "saloon.sdk.house.western_showdown.push_card",
    ]
