"""The HTML leaderboard rendered in a real headless browser (Debian's chromium).

Chromium loads the page from a file with every network feature off, and what it renders
is checked: the table's rows in leaderboard order (unrated last), one chart per rated bot,
the head-to-head table; and a screenshot of the page is a real image of the window's size.
"""

from __future__ import annotations

import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

from saloon.ratings.fold import fold
from saloon.ratings.htmlpage import render_html
from saloon.ratings.leaderboard import BotInfo, Leaderboard, build_leaderboard
from tests import services
from tests.unit.ratings_results import LADDER, result

#: Flags for a root, sandbox-less, network-less headless run (see the tests' docs).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WINDOW = (1200, 1600)


def chromium(page: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run headless chromium on ``page`` with its own throwaway profile."""
    services.require("chromium")
    binary = services.chromium_binary()
    assert binary is not None
    profile = tmp / "profile"
    return subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
         f"--window-size={WINDOW[0]},{WINDOW[1]}", *extra, page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip


class Shown(HTMLParser):
    """What the rendered DOM holds: leaderboard rows, chart bots, head-to-head rows."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str]] = []  # (rank cell, bot)
        self.charts: list[str] = []
        self.h2h_rows = 0
        self._table = ""
        self._cell: str | None = None
        self._row: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self._table = a.get("id") or ""
        elif tag == "tr" and self._table == "leaderboard" and a.get("data-bot"):
            self._row = {"bot": a["data-bot"] or ""}
        elif tag == "td" and self._row:
            self._cell = (a.get("class") or "").split()[0]
        elif tag == "svg" and "chart" in (a.get("class") or ""):
            self.charts.append(a.get("data-bot") or "")
        elif tag == "tr" and self._table == "head-to-head":
            self.h2h_rows += 1

    def handle_data(self, data: str) -> None:
        if self._cell == "rank":
            self._row["rank"] = data.strip()

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._cell = None
        elif tag == "tr" and self._row:
            self.rows.append((self._row.get("rank", ""), self._row["bot"]))
            self._row = {}


def board() -> Leaderboard:
    # ann always first, then bob, cat, dan: the true order is known
    results = [
        result(i, [("dan", 3), ("ann", 0), ("cat", 2), ("bob", 1)], faults={"dan": i % 2})
        for i in range(40)
    ]
    return build_leaderboard(fold(results, LADDER), "s0", known=[BotInfo("newbie", "me", "v1")])


def test_chromium_shows_the_table_in_order_a_chart_per_bot_and_head_to_head(
    tmp_path: Path,
) -> None:
    page = tmp_path / "leaderboard.html"
    with page.open("w", encoding="utf-8") as fh:
        render_html(board(), fh)
    text = page.read_text(encoding="utf-8")
    assert "http" not in text and "<script" not in text  # self-contained, nothing to fetch
    dom = chromium(page, tmp_path, "--dump-dom").stdout
    shown = Shown()
    shown.feed(dom)
    assert shown.rows == [("1", "ann"), ("2", "bob"), ("3", "cat"), ("4", "dan"),
                          ("unrated", "newbie")]  # fmt: skip
    assert shown.charts == ["ann", "bob", "cat", "dan"]
    assert shown.h2h_rows == 1 + 4  # header + one per bot that played


def test_chromium_screenshot_is_an_image_of_the_window(tmp_path: Path) -> None:
    page = tmp_path / "leaderboard.html"
    with page.open("w", encoding="utf-8") as fh:
        render_html(board(), fh)
    shot = tmp_path / "shot.png"
    chromium(page, tmp_path, f"--screenshot={shot}")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == WINDOW
    # a blank page compresses to a few kB; a table, 4 charts and text do not
    assert len(data) > 30_000, f"screenshot only {len(data)} bytes"
