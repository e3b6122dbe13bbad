"""The web pages in a real browser: Playwright for Python driving Debian's chromium
(``executable_path``; no browser is downloaded), against the real server on loopback.

Every page must load with no console error and no request leaving the host; the replay
viewer, stepped with its buttons, the keyboard and the slider, must show the trick, stack
and round winners the record's events name; the seat view needs the owner signed in.
A screenshot of each page is kept in ``.artifacts/web-screenshots/`` (``$SALOON_ARTIFACTS``
names another folder; gitignored)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from saloon.referee.record import MatchRecord
from tests import services
from tests.integration.web_fixtures import FAULTY_MATCH, SEAS, STDERR, Web, serve_filled

ARTIFACTS = Path(os.environ.get("SALOON_ARTIFACTS", Path(__file__).parents[2] / ".artifacts"))
SHOTS = ARTIFACTS / "web-screenshots"
MATCHES = {"seas": "web-seas-0", "seizure": "web-seizure-0", "western": "web-western-0"}


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    yield from serve_filled(tmp_path_factory)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    services.require("chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # Root (CI) cannot use chromium's own sandbox; the pages come from loopback only.
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        browser = p.chromium.launch(executable_path=services.chromium_binary(), args=args)
        yield browser
        browser.close()


class Watched:
    """A page whose console errors and off-host requests are recorded (and refused)."""

    def __init__(self, browser: Any, web: Web) -> None:
        self.context = browser.new_context(viewport={"width": 1200, "height": 900})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.off_host: list[str] = []
        origin = web.url

        def route(r: Any) -> None:
            if r.request.url.startswith(origin + "/"):
                r.continue_()
            else:
                self.off_host.append(r.request.url)
                r.abort()

        self.context.route("**/*", route)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.url = origin

    def open(self, path: str) -> Any:
        return self.page.goto(self.url + path, wait_until="load")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def watched(browser: Any, web: Web) -> Iterator[Watched]:
    w = Watched(browser, web)
    yield w
    w.close()


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


PAGES = {
    "index": "/",
    "board": f"/leaderboard/{SEAS}",
    "season": "/season/web-seas",
    "season-live": "/season/web-live",
    "bot": "/bot/alicebot",
    "signin": "/signin",
    "not-found": "/bot/nobody",
    **{f"match-{game}": f"/match/{match}" for game, match in MATCHES.items()},
}


@pytest.mark.parametrize("name", PAGES)
def test_every_page_loads_clean_with_nothing_leaving_the_host(watched: Watched, name: str) -> None:
    reply = watched.open(PAGES[name])
    assert reply.status == (404 if name == "not-found" else 200)
    if name.startswith("match-"):
        watched.page.wait_for_selector("#viewer[data-ready]")
        for key in ("ArrowRight",) * 30 + ("End",):  # the start, a middle, the end
            watched.page.keyboard.press(key)
            shown = watched.page.inner_text("#viewer")
            assert "undefined" not in shown and "NaN" not in shown and "[object" not in shown
        assert "game over" in watched.page.inner_text("#turn")
    shot(watched.page, name)
    expected = ["status of 404"] if name == "not-found" else []  # the page's own status
    assert [e for e in watched.errors if not any(x in e for x in expected)] == []
    assert watched.off_host == []


def record_of(web: Web, match_id: str) -> MatchRecord:
    raw = web.store.match_record(match_id)
    assert raw is not None
    return MatchRecord.from_json(raw)


def events_of(record: MatchRecord, name: str) -> list[dict[str, Any]]:
    return [e for entry in record.log for e in entry.events if e["event"] == name]


def shown_events(page: Any, name: str) -> list[dict[str, str]]:
    return page.eval_on_selector_all(
        f'#events li[data-event="{name}"]',
        "els => els.map(e => ({winner: e.dataset.winner, seat: e.dataset.seat,"
        " points: e.dataset.points}))",
    )


def open_match(watched: Watched, match_id: str) -> Any:
    watched.open(f"/match/{match_id}")
    page = watched.page
    page.wait_for_selector("#viewer[data-ready]")
    return page


def test_stepping_with_the_next_button_shows_every_trick_winner_of_the_record(
    watched: Watched, web: Web
) -> None:
    record = record_of(web, MATCHES["seas"])
    page = open_match(watched, MATCHES["seas"])
    winners = []
    for _ in record.log:
        page.click("#next")
        for e in shown_events(page, "trick"):
            winners.append(int(e["winner"]))
            assert page.get_attribute("#last-trick", "data-winner") == e["winner"]
    assert winners == [e["winner"] for e in events_of(record, "trick")]
    assert page.inner_text("#position") == f"{len(record.log)} / {len(record.log)}"
    assert watched.errors == [] and watched.off_host == []


def test_the_keyboard_steps_and_shows_every_stack_taken_and_game_won(
    watched: Watched, web: Web
) -> None:
    record = record_of(web, MATCHES["western"])
    page = open_match(watched, MATCHES["western"])
    n = len(record.log)
    takers, games = [], []
    for _ in record.log:
        page.keyboard.press("ArrowRight")
        takers += [int(e["seat"]) for e in shown_events(page, "stack_taken")]
        games += [int(e["winner"]) for e in shown_events(page, "game_won")]
    assert takers == [e["seat"] for e in events_of(record, "stack_taken")]
    assert games == [e["winner"] for e in events_of(record, "game_won")]
    page.keyboard.press("Home")
    assert page.inner_text("#position") == f"0 / {n}"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert page.inner_text("#position") == f"1 / {n}"
    page.keyboard.press("End")
    assert page.inner_text("#position") == f"{n} / {n}" and "game over" in page.inner_text("#turn")
    assert watched.errors == []


def test_the_slider_shows_every_round_scored_with_its_points(watched: Watched, web: Web) -> None:
    record = record_of(web, MATCHES["seizure"])
    page = open_match(watched, MATCHES["seizure"])
    scored = [(i, e) for i, entry in enumerate(record.log) for e in entry.events
              if e["event"] == "round_scored"]  # fmt: skip
    assert scored
    for index, event in scored:
        page.eval_on_selector(
            "#slider", "(s, v) => { s.value = v; s.dispatchEvent(new Event('input')); }", index + 1
        )
        shown = shown_events(page, "round_scored")
        assert [s["points"] for s in shown] == [re.sub(r"\s", "", str(event["points"]))]
        assert page.inner_text("#position").startswith(f"{index + 1} /")
    assert watched.errors == []


def test_show_all_hands_reveals_the_full_deal_and_the_hidden_labels(
    watched: Watched, web: Web
) -> None:
    page = open_match(watched, MATCHES["seizure"])
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")  # past the dealer, onto the deal
    assert "hidden" in page.inner_text("#action")
    assert page.is_hidden("#allhands")
    page.check("#hands")
    page.wait_for_selector('#viewer[data-ready="hands"]')
    assert page.is_visible("#allhands")
    cards = page.eval_on_selector_all("#allhands .card", "els => els.length")
    assert cards == 140  # every Seizure card, somewhere
    assert "hidden" not in page.inner_text("#action")
    shot(page, "match-seizure-all-hands")
    assert watched.errors == []


def sign_in(watched: Watched, web: Web, user: str, next_path: str) -> Any:
    watched.open(f"/signin?next={next_path}")
    page = watched.page
    page.fill('input[name="token"]', web.tokens[user])
    with page.expect_navigation():
        page.click('form.signin button[type="submit"]')
    assert web.tokens[user] not in page.url
    return page


def test_the_seat_view_needs_the_owner_signed_in_and_refuses_another_user(
    browser: Any, web: Web
) -> None:
    record = record_of(web, FAULTY_MATCH)
    seat = next(s.seat for s in record.seats if s.bot.startswith("bot:alice"))
    path = f"/match/{FAULTY_MATCH}/seat/{seat}"
    alice, bob = Watched(browser, web), Watched(browser, web)
    try:
        assert alice.open(path).status == 401
        page = sign_in(alice, web, "alice", path)
        assert page.url.endswith(path)
        assert STDERR.strip() in page.inner_text("#stderr")
        assert page.eval_on_selector_all("#decisions tbody tr", "els => els.length") > 0
        shot(page, "seat-view")
        (cookie,) = alice.context.cookies()
        assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Strict"
        assert web.tokens["alice"] not in cookie["value"]
        page = sign_in(bob, web, "bob", path)
        assert "not a bot of bob" in page.inner_text("main")
        assert bob.open(path).status == 403
        # The only console errors: the browser noting the 401 and 403 answers themselves.
        for errors in (alice.errors, bob.errors):
            assert all(re.search(r"status of 40[13]", e) for e in errors), errors
        assert alice.off_host == [] and bob.off_host == []
    finally:
        alice.close()
        bob.close()


def test_a_running_seasons_page_follows_its_progress(watched: Watched, web: Web) -> None:
    from saloon.worker.store.rows import MatchStatus

    watched.open("/season/web-live")
    page = watched.page
    # The page's CSP forbids evaluating strings, so the test polls from here.
    page.wait_for_selector("#live:has-text('1 running')", timeout=10_000)
    web.store.mark_match("web-live-1", MatchStatus.RUNNING)  # a worker took another match
    page.wait_for_selector("#live:has-text('2 running')", timeout=10_000)
    assert page.inner_text(".progress .count") == "0/4"
    assert watched.errors == [] and watched.off_host == []


def test_signing_in_from_the_browser_form_keeps_its_origin(browser: Any, web: Web) -> None:
    # With Referrer-Policy no-referrer chromium posted the form with "Origin: null", which
    # the cross-site check refused: signing in from the page itself failed.
    w = Watched(browser, web)
    try:
        page = sign_in(w, web, "bob", "/")
        assert page.url == web.url + "/" and "signed in as" in page.inner_text("header")
    finally:
        w.close()
