"""Pages people can read: at 1280 x 900 in chromium, with 40-character names everywhere and
a bot that prints 5,000 characters at every decision, no page is wider than the window
and the seat view shows every column; the viewer's and the navigation's defects of issue
32, each as a test named after it (HTML over real HTTP, or in the browser).

Screenshots go to ``.artifacts/web-screenshots/layout-*.png`` (see test_web_browser.py)."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from saloon.arena.registry import Registry
from tests.integration.test_web_browser import Watched, browser, shot
from tests.integration.web_fixtures import (
    LONG_A,
    LONG_B,
    NOISE_CHARS,
    NOISY,
    WIDE_LADDER,
    WIDE_MATCH,
    WIDE_OPEN,
    WIDE_OWNER,
    WIDE_RUNNING,
    WIDE_SEASON,
    WIDE_TOURNAMENT,
    WIDE_WAITING,
    WORKER_ID,
    Web,
    serve_filled,
    serve_wide,
)

__all__ = ["browser"]  # the browser fixture, shared with test_web_browser.py

WIDTH, HEIGHT = 1280, 900


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    yield from serve_wide(tmp_path_factory)


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    yield from serve_filled(tmp_path_factory)


class Reader(Watched):
    """A reader's browser window of 1280 x 900."""

    def __init__(self, browser: Any, site: Web) -> None:
        super().__init__(browser, site)
        self.page.set_viewport_size({"width": WIDTH, "height": HEIGHT})

    def sign_in(self, site: Web, user: str, next_path: str) -> Any:
        self.open(f"/signin?next={quote(next_path)}")
        self.page.get_by_label("API token").fill(site.tokens[user])
        with self.page.expect_navigation():
            self.page.get_by_role("button", name="sign in").click()
        return self.page

    def overflow(self) -> tuple[int, int]:
        """(the document's scroll width, the window's inner width)."""
        width, inner = self.page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth]"
        )
        return int(width), int(inner)


@pytest.fixture
def reader(browser: Any, wide: Web) -> Iterator[Reader]:
    r = Reader(browser, wide)
    yield r
    r.close()


def get(site: Web, path: str, cookie: str = "") -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", site.server.port, timeout=10)
    try:
        conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        reply = conn.getresponse()
        return reply.status, reply.read().decode()
    finally:
        conn.close()


def session(site: Web, user: str) -> str:
    """The Cookie header of ``user`` signed in."""
    conn = http.client.HTTPConnection("127.0.0.1", site.server.port, timeout=10)
    try:
        body = f"token={site.tokens[user]}&next=/".encode()
        conn.request("POST", "/signin", body=body,
                     headers={"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
        reply = conn.getresponse()
        reply.read()
        assert reply.status == 303
        return reply.getheader("set-cookie", "").split(";")[0]
    finally:
        conn.close()


# -- every page fits the window ---------------------------------------------------------

SEAT = f"/match/{WIDE_MATCH}/seat/0"
WIDE_PAGES = {
    "index": "/",
    "board": "/leaderboard/seas-of-strife-v1",
    "seasons": "/seasons",
    "season": f"/season/{WIDE_SEASON}",
    "season-running": f"/season/{WIDE_RUNNING}",
    "season-not-started": f"/season/{WIDE_WAITING}",
    "ladders": "/ladders",
    "continuous-ladder": f"/ladder/{WIDE_LADDER}",
    "tournaments": "/tournaments",
    "tournament-open": f"/tournament/{WIDE_OPEN}",
    "tournament-done": f"/tournament/{WIDE_TOURNAMENT}",
    "bot": f"/bot/{LONG_A}",
    "bot-noisy": f"/bot/{NOISY}",
    "match-viewer": f"/match/{WIDE_MATCH}",
    "signin": "/signin",
    "error-404": "/bot/nobody",
    "error-401": SEAT,
}


@pytest.mark.parametrize("name", WIDE_PAGES)
def test_every_page_fits_1280_px_with_40_character_names(reader: Reader, name: str) -> None:
    reply = reader.open(WIDE_PAGES[name])
    assert reply.status == {"error-404": 404, "error-401": 401}.get(name, 200)
    page = reader.page
    if name == "match-viewer":
        page.wait_for_selector("#viewer[data-ready]")
        for key in ("ArrowRight",) * 20 + ("End",):
            page.keyboard.press(key)
        width, inner = reader.overflow()
        assert width <= inner, (name, width)
        page.get_by_label("show all hands").check()
        page.wait_for_selector('#viewer[data-ready="hands"]')
        page.keyboard.press("Home")
        page.keyboard.press("ArrowRight")  # the deal, every hand as cards
    width, inner = reader.overflow()
    assert inner == WIDTH and width <= inner, (name, width)
    shot(page, f"layout-{name}")
    assert reader.off_host == []


def test_the_seat_view_and_a_403_fit_1280_px_signed_in(reader: Reader, wide: Web) -> None:
    page = reader.sign_in(wide, WIDE_OWNER, SEAT)
    assert page.url.endswith(SEAT)
    width, inner = reader.overflow()
    assert width <= inner, width
    shot(page, "layout-seat-view")
    assert reader.open(f"/match/{WIDE_MATCH}/seat/1").status == 403  # LONG_A's seat
    width, inner = reader.overflow()
    assert width <= inner, width
    shot(page, "layout-error-403")


def test_the_seat_view_of_a_bot_printing_5000_characters_shows_every_column(
    reader: Reader, wide: Web
) -> None:
    # Was: rows ~1,700 px tall, "legal" 1,491 px wide, "chose" and "printed" off-screen,
    # and the page 45,179 px wide (a 5,000-character stderr line on one row).
    page = reader.sign_in(wide, WIDE_OWNER, SEAT)
    table = page.get_by_role("table").filter(has=page.get_by_role("columnheader", name="saw"))
    for column in ("entry", "saw", "legal", "chose", "printed"):
        box = table.get_by_role("columnheader", name=column, exact=True).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, column
    rows = table.get_by_role("row")
    heights = [rows.nth(i).bounding_box()["height"] for i in range(1, min(rows.count(), 12))]
    assert heights and max(heights) < 300, heights  # a glance per decision, not a screenful
    # Each decision's 5,000 characters: the start shown, all of them one click away.
    more = page.get_by_text(f"all {NOISE_CHARS} characters").first
    assert more.is_visible()
    more.click()
    opened = page.locator("td.printed details[open] pre").first
    assert len(opened.inner_text()) == NOISE_CHARS
    width, inner = reader.overflow()
    assert width <= inner, width  # opened, it wraps within its column
    # The whole stderr: in a box of its own height, every character there to scroll to.
    stderr = page.locator("#stderr")
    box = stderr.bounding_box()
    assert box is not None and box["height"] <= 0.6 * HEIGHT and box["width"] <= WIDTH
    stored = wide.store.stderr(WIDE_MATCH, 0)
    assert stderr.inner_text().count("noise-") == stored.count("noise-") > 10 * 800
    shot(page, "layout-seat-view-opened")


# -- the viewer ---------------------------------------------------------------------------


def open_viewer(reader: Reader, match_id: str) -> Any:
    reader.open(f"/match/{match_id}")
    reader.page.wait_for_selector("#viewer[data-ready]")
    return reader.page


def test_the_viewer_log_counts_entries_as_the_pane_does(reader: Reader) -> None:
    # Was: the log numbered from 1 while the pane said "Entry 130" for its 131st line.
    page = open_viewer(reader, WIDE_MATCH)
    for _ in range(130):
        page.keyboard.press("ArrowRight")
    assert page.get_by_role("heading", name="Entry 129").is_visible()
    current = page.locator("#log li.current")
    assert current.evaluate("li => li.value") == 129
    page.locator("#log li").nth(7).click()
    assert page.get_by_role("heading", name="Entry 7").is_visible()
    assert page.locator("#log li.current").evaluate("li => li.value") == 7


def test_the_viewer_shows_the_deal_as_cards_not_raw_ids(browser: Any, web: Web) -> None:
    # Was: with all hands shown the deal read "0 43 46 50 | ...".
    reader = Reader(browser, web)
    try:
        for match_id, game_cards in (("web-seas-0", 60), ("web-seizure-0", 140)):
            page = open_viewer(reader, match_id)
            page.get_by_label("show all hands").check()
            page.wait_for_selector('#viewer[data-ready="hands"]')
            data = json.loads(get(web, f"/api/matches/{match_id}/replay?hands=all")[1])
            deal = next(s for s in data["steps"] if s.get("dealt"))
            page.get_by_role("slider").fill(str(deal["index"] + 1))
            action = page.locator("#action")
            text = action.inner_text()
            assert " | " not in text and not re.search(r"\d+ \d+ \d+", text)
            dealt = [c for g in deal["dealt"] for c in g["cards"]]
            shown = action.locator(".card").all_inner_texts()
            assert shown == [data["cards"][str(c)] for c in dealt]
            assert len(dealt) <= game_cards
            assert page.locator("#log li").nth(deal["index"]).inner_text().endswith(" cards")
    finally:
        reader.close()


def test_the_viewer_names_special_cards_as_the_rules_do_not_in_snake_case(
    browser: Any, web: Web
) -> None:
    # Was: "play to_the_right #124".
    data = json.loads(get(web, "/api/matches/web-seizure-0/replay?hands=all")[1])
    specials = [c for c in data["cards"].values() if "#" in c and not c[0].isdigit()]
    assert specials and not [c for c in specials if "_" in c]
    assert {c.rsplit(" #", 1)[0] for c in specials} <= {
        "To the Left", "To the Right", "Direct Trade", "Plus Three", "Minus Three"}  # fmt: skip
    played = [s for s in data["steps"] if s.get("text")]
    assert played and all("_" not in s["text"] for s in played)
    assert all(s["label"] != s["text"] for s in played)  # the record's own label kept
    reader = Reader(browser, web)
    try:
        page = open_viewer(reader, "web-seizure-0")
        page.get_by_label("show all hands").check()
        page.wait_for_selector('#viewer[data-ready="hands"]')
        log = page.locator("#log").inner_text()
        assert "to_the_" not in log and "direct_trade" not in log and "PLAY_CARD" not in log
        page.get_by_role("slider").fill(str(played[0]["index"] + 1))
        assert played[0]["text"] in page.locator("#action").inner_text()
        assert "_" not in page.locator("#allhands").inner_text()
    finally:
        reader.close()


def test_the_hands_pane_does_not_push_the_table_off_screen_while_stepping(
    reader: Reader,
) -> None:
    page = open_viewer(reader, WIDE_MATCH)
    page.get_by_label("show all hands").check()
    page.wait_for_selector('#viewer[data-ready="hands"]')
    table = page.locator("#table")
    for _ in range(80):
        page.get_by_role("button", name="▶", exact=True).click()
        box = table.bounding_box()
        assert box is not None and 0 <= box["y"] < HEIGHT, box
    assert page.evaluate("window.scrollY") == 0
    assert page.locator("#log li.current").evaluate("li => li.value") == 79
    shot(page, "layout-match-viewer-stepping-with-hands")


def test_owners_view_is_offered_for_stored_bots_seats_only(web: Web) -> None:
    # Was: "owner's view" links for every seat, house seats too.
    status, page = get(web, "/match/web-seas-0")
    assert status == 200
    links = re.findall(r'href="/match/web-seas-0/seat/(\d)">seat \d \(([^)]*)\)', page)
    record = json.loads(get(web, "/api/matches/web-seas-0")[1])
    stored = {s["seat"] for s in record["seats"] if not s["bot"].startswith("house:")}
    assert {int(s) for s, _ in links} == stored and len(stored) < len(record["seats"])
    assert all(not b.startswith("house:") for _, b in links)
    # Signed in: one's own bots' seats alone.
    status, page = get(web, "/match/web-seas-0", cookie=session(web, "bob"))
    mine = re.findall(r'href="/match/web-seas-0/seat/(\d)">seat \d \(([^)]*)\)', page)
    assert [b for _, b in mine] == ["bobbot"]


# -- navigation ---------------------------------------------------------------------------


def test_continuous_ladders_are_linked_from_the_index_and_the_ladders_page(wide: Web) -> None:
    href = f'href="/ladder/{WIDE_LADDER}"'
    for path in ("/", "/ladders"):
        status, page = get(wide, path)
        assert status == 200 and href in page, path
    assert 'href="/ladders"' in get(wide, "/bot/nobody")[1]  # in every page's header
    index = json.loads(get(wide, "/api/index")[1])
    assert [lad["ladder_id"] for lad in index["continuous_ladders"]] == [WIDE_LADDER]
    (listed,) = json.loads(get(wide, "/api/ladders")[1])["ladders"]
    assert listed["state"] == "running" and listed["batches"] == 1 and listed["max_batches"] == 5


def test_a_ladder_page_says_whether_it_runs_and_how_many_batches_it_played(wide: Web) -> None:
    status, page = get(wide, f"/ladder/{WIDE_LADDER}")
    assert status == 200
    state = re.search(r'<p class="meta" id="ladder-state">(.*?)</p>', page, re.S)
    assert state is not None
    text = re.sub(r"<[^>]+>", "", state.group(1))
    assert "running" in text and "1 batch played of 5" in text
    assert f'href="/season/{WIDE_LADDER}-b1"' in page  # the newest batch
    registry = Registry(wide.store)
    registry.set_continuous(WIDE_LADDER, active=False)
    try:
        # The page is kept while the results do not change: stopping changes no result.
        _, page = get(wide, f"/ladder/{WIDE_LADDER}")
        assert "stopped" in page and "running" not in page.split("ladder-state")[1][:200]
        _, listing = get(wide, "/ladders")
        assert "stopped" in listing and "1 batch played of 5" in listing
    finally:
        registry.set_continuous(WIDE_LADDER, active=True)


def test_a_season_never_started_is_listed_as_not_started(wide: Web) -> None:
    _, page = get(wide, "/")
    running = page.split("<h2>Running seasons</h2>")[1].split("<h2>")[0]
    waiting = page.split("<h2>Seasons not started</h2>")[1].split("<h2>")[0]
    assert WIDE_RUNNING in running and WIDE_WAITING not in running
    assert WIDE_WAITING in waiting and "not started" in waiting
    index = json.loads(get(wide, "/api/index")[1])
    assert [s["season_id"] for s in index["live_seasons"]] == [WIDE_RUNNING]
    assert [s["season_id"] for s in index["waiting_seasons"]] == [WIDE_WAITING]
    _, seasons = get(wide, "/seasons")
    row = seasons.split(f'<tr data-season="{WIDE_WAITING}"')[1].split("</tr>")[0]
    assert "not started" in row
    _, season = get(wide, f"/season/{WIDE_WAITING}")
    assert "not started" in season


def test_finished_matches_show_no_unlabelled_worker_id(wide: Web) -> None:
    # Was: "done bd127f17…" (the worker that played it, unlabelled).
    _, page = get(wide, f"/season/{WIDE_SEASON}")
    assert WORKER_ID not in page and WORKER_ID[:8] not in page
    _, page = get(wide, f"/season/{WIDE_RUNNING}")
    assert re.search(rf"running <span class=\"meta\">on worker <code>{WORKER_ID}</code>", page)


@pytest.mark.parametrize(
    ("path", "status"),
    [("/bot/nobody", 404), (SEAT, 401), (f"/match/{WIDE_MATCH}/seat/1", 403)],
)
def test_error_pages_offer_a_way_back_and_a_sign_in_link(wide: Web, path: str, status: int) -> None:
    cookie = session(wide, WIDE_OWNER) if status == 403 else ""
    got, page = get(wide, path, cookie=cookie)
    assert got == status
    for nav in ('href="/"', 'href="/seasons"', 'href="/ladders"'):
        assert nav in page
    # The header's sign-in link (signed out), and the page's own for a 401 or a 403.
    links = page.count(f'href="/signin?next={quote(path)}"')
    assert links == {404: 1, 401: 2, 403: 1}[status]
    if status != 404:
        assert f'href="/match/{WIDE_MATCH}">back to the match' in page


def test_an_error_page_links_back_to_the_page_the_reader_came_from(reader: Reader) -> None:
    page = reader.page
    reader.open(f"/season/{WIDE_SEASON}")
    reader.open(f"/season/{WIDE_SEASON}x")  # a mistyped address
    back = page.get_by_role("link", name="back to the page you came from")
    assert back.count() == 0  # typed, not followed: no page to go back to
    reader.open(f"/match/{WIDE_MATCH}")
    page.get_by_role("link", name=f"seat 1 ({LONG_A})").click()
    assert page.get_by_text("sign in as the bot's owner", exact=False).count() >= 1
    page.get_by_role("link", name="back to the match").click()
    assert page.url.endswith(f"/match/{WIDE_MATCH}")
    assert LONG_B in page.inner_text("main")
