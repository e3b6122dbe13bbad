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
