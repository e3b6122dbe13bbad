"""The web side over real HTTP: a real uvicorn server on a loopback port, a real store."""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from saloon.arena.web.guard import CSP
from saloon.arena.web.limits import WebLimits
from saloon.arena.web.sessions import COOKIE, sign_in_allowed
from saloon.referee.record import MatchRecord
from saloon.referee.replay import replay
from tests.integration.web_fixtures import (
    DECISION_LINE,
    FAULTY_MATCH,
    SEAS,
    SEASONS,
    STDERR,
    Web,
    first_decision,
    serve_filled,
    start_web,
)


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    yield from serve_filled(tmp_path_factory)


PAGES = [
    "/",
    f"/leaderboard/{SEAS}",
    "/season/web-seas",
    "/season/web-live",
    "/bot/alicebot",
    "/bot/house%3Arandom",
    f"/match/{FAULTY_MATCH}",
    "/signin",
]


def get(site: Web, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", site.server.port, timeout=10)
    try:
        conn.request("GET", path, headers=headers)
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        conn.close()


def api(site: Web, path: str, **headers: str) -> Any:
    status, _, body = get(site, path, **headers)
    assert status == 200, body
    return json.loads(body)


def post(site: Web, path: str, body: bytes, **headers: str) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", site.server.port, timeout=10)
    conn.request(
        "POST", path, body=body, headers={"Content-Type": "application/x-www-form-urlencoded",
                                          **headers}
    )  # fmt: skip
    reply = conn.getresponse()
    reply.read()
    conn.close()
    return reply


@pytest.mark.parametrize("path", PAGES)
def test_every_page_answers_with_the_strict_headers_and_no_banner(web: Web, path: str) -> None:
    status, headers, body = get(web, path)
    assert status == 200 and body.startswith(b"<!DOCTYPE html>")
    assert headers["content-security-policy"] == CSP
    assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP
    assert headers["x-content-type-options"] == "nosniff"
    assert "server" not in headers
    assert b"<script>" not in body and b" style=" not in body  # nothing inline for the CSP


def test_errors_are_short_pages_with_the_same_headers_never_tracebacks(web: Web) -> None:
    for path, code in (("/nope", 404), ("/season/nope", 404), ("/bot/nobody", 404),
                       ("/match/nope", 404), ("/leaderboard/no-such-game", 404)):  # fmt: skip
        status, headers, body = get(web, path)
        assert status == code, path
        assert headers["content-security-policy"] == CSP
        assert b"Traceback" not in body and b"uvicorn" not in body.lower()
    status, headers, body = get(web, "/api/bots/nobody")
    assert status == 404 and json.loads(body) == {"error": "no bot 'nobody'", "status": 404}
    reply = post(web, "/", b"x=1")
    assert reply.status == 405


def test_a_request_body_past_the_limit_is_refused_with_413(web: Web) -> None:
    reply = post(web, "/signin", b"token=" + b"x" * (WebLimits().max_body_bytes + 1))
    assert reply.status == 413


def test_the_board_page_links_every_bot_and_its_matches(web: Web) -> None:
    _, _, body = get(web, f"/leaderboard/{SEAS}")
    page = body.decode()
    for bot in ("alicebot", "bobbot", "house:random", "house:greedy"):
        assert f'href="/bot/{bot.replace(":", "%3A")}">{bot}</a>' in page
    for i in range(3):
        assert f'href="/match/web-seas-{i}"' in page
    assert 'id="leaderboard"' in page and 'id="head-to-head"' in page


def test_the_index_lists_ladders_top_bots_live_seasons_and_recent_matches(web: Web) -> None:
    index = api(web, "/api/index")
    assert {g["game"] for g in index["games"]} >= set(SEASONS)
    seas = next(g for g in index["games"] if g["game"] == SEAS)["ladders"][0]
    assert seas["matches"] == 3 and len(seas["top"]) == 3
    assert [s["season_id"] for s in index["live_seasons"]] == ["web-live"]
    assert index["live_seasons"][0]["total"] == 4 and index["live_seasons"][0]["done"] == 0
    assert len(index["recent_matches"]) == 9


def test_a_season_gives_progress_board_and_every_match(web: Web) -> None:
    season = api(web, "/api/seasons/web-seas")
    assert season["done"] == season["total"] == 3
    assert [m["match_id"] for m in season["matches"]] == [f"web-seas-{i}" for i in range(3)]
    assert season["board"]["matches"] == 3
    progress = api(web, "/api/seasons/web-live/progress")
    assert progress["status"] == "running" and progress["counts"]["pending"] == 3
    assert progress["counts"]["running"] == 1 and progress["remaining"] == 4


def test_a_bot_gives_owner_versions_history_matches_with_faults_and_head_to_head(
    web: Web,
) -> None:
    bot = api(web, "/api/bots/alicebot")
    assert bot["owner"] == "alice" and [v["version"] for v in bot["versions"]] == ["a1"]
    assert bot["matches_total"] == 9
    faulty = next(m for m in bot["matches"] if m["match_id"] == FAULTY_MATCH)
    assert faulty["faults"] and faulty["faults"][0]["kind"] == "CRASH"
    seas = next(lad for lad in bot["ladders"] if lad["label"] == SEAS)
    assert seas["history"] and {h["opponent"] for h in seas["head_to_head"]} >= {"bobbot"}


@pytest.mark.parametrize("match_id", [f"{season}-0" for season, _ in SEASONS.values()])
def test_the_replay_is_the_records_replay_step_for_step(web: Web, match_id: str) -> None:
    data = api(web, f"/api/matches/{match_id}/replay")
    record = MatchRecord.from_json(web.store.match_record(match_id))
    labels: list[str] = []
    replay(record, lambda step: labels.append(step.label))
    assert len(data["steps"]) == len(record.log) == len(labels)
    assert len(data["tables"]) == len(record.log) + 1
    for step, entry, label in zip(data["steps"], record.log, labels, strict=True):
        assert step["events"] == [dict(e) for e in entry.events]
        assert step["label"] in (label, None)  # None: a label only one seat saw
    full = api(web, f"/api/matches/{match_id}/replay?hands=all")
    assert [s["label"] for s in full["steps"]] == labels
    assert len(full["hands"]) == len(record.log) + 1
    assert full["scores"] == record.scores


def test_the_public_replay_hides_hands_until_asked(web: Web) -> None:
    data = api(web, "/api/matches/web-seizure-0/replay")
    assert "hands" not in data
    dealt = [s for s in data["steps"] if s["kind"] == "DEAL"]
    assert dealt and all(s["label"] is None for s in dealt)
    gifts = [s for s in data["steps"] if s["kind"] == "GIVE_CARD"]
    assert all(s["label"] is None for s in gifts)


def sign_in(site: Web, user: str) -> str:
    """The session cookie ``user`` gets for their token."""
    reply = post(site, "/signin", f"token={site.tokens[user]}&next=/".encode())
    assert reply.status == 303, reply.status
    cookie = reply.getheader("set-cookie") or ""
    for flag in ("HttpOnly", "Secure", "SameSite=strict"):
        assert flag.lower() in cookie.lower(), cookie
    assert site.tokens[user] not in cookie and site.tokens[user] not in (
        reply.getheader("location") or ""
    )
    return cookie.split(";")[0]


def test_the_seat_view_is_for_the_owner_only(web: Web) -> None:
    record = MatchRecord.from_json(web.store.match_record(FAULTY_MATCH))
    seat = next(s.seat for s in record.seats if s.bot.startswith("bot:alice"))
    path = f"/api/matches/{FAULTY_MATCH}/seats/{seat}"
    assert get(web, path)[0] == 401
    assert get(web, f"/match/{FAULTY_MATCH}/seat/{seat}")[0] == 401
    alice, bob = sign_in(web, "alice"), sign_in(web, "bob")
    view = api(web, path, Cookie=alice)
    decision = first_decision(record, seat)
    assert view["view"] == f"seat {seat}"
    assert view["stderr"] == f"[start]\n{STDERR}[decision {decision}]\n{DECISION_LINE}\n"
    assert [(b["when"], b["decision"], b["lines"]) for b in view["stderr_blocks"]] == [
        ("start", None, [STDERR.strip()]),
        ("decision", decision, [DECISION_LINE]),
    ]
    assert all("observation" in s for s in view["steps"] if "chose" in s)
    assert get(web, path, Cookie=bob)[0] == 403
    status, _, body = get(web, f"/match/{FAULTY_MATCH}/seat/{seat}", Cookie=alice)
    assert status == 200 and STDERR.strip().encode() in body
    # The decision's line sits in that decision's row of the table, not only below it.
    row = body.split(f'<td class="num">{decision}</td>'.encode(), 1)[1].split(b"</tr>")[0]
    assert DECISION_LINE.encode() in row
    assert get(web, path, Cookie=f"{COOKIE}=forged")[0] == 401


def test_a_wrong_token_signs_no_one_in_and_a_token_in_the_url_is_ignored(web: Web) -> None:
    reply = post(web, "/signin", b"token=alice.not-the-real-secret-at-all")
    assert reply.status == 403 and reply.getheader("set-cookie") is None
    status, headers, _ = get(web, f"/signin?token={web.tokens['alice']}")
    assert status == 200 and "set-cookie" not in headers


def test_sign_in_needs_tls_or_loopback() -> None:
    assert sign_in_allowed("https", "203.0.113.9")
    assert sign_in_allowed("http", "127.0.0.1") and sign_in_allowed("http", "::1")
    assert not sign_in_allowed("http", "203.0.113.9") and not sign_in_allowed("http", None)


def test_a_connection_slow_to_send_its_headers_is_closed(tmp_path: Path) -> None:
    limits = WebLimits(header_timeout_s=0.5, keep_alive_s=1)
    running = start_web(str(tmp_path / "s.db"), limits)
    try:
        with socket.create_connection(("127.0.0.1", running.server.port), timeout=10) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # never the blank line
            started = time.monotonic()
            assert s.recv(100) == b""  # closed by the server
            assert time.monotonic() - started < 5
        with socket.create_connection(("127.0.0.1", running.server.port), timeout=10) as s:
            assert s.recv(100) == b""  # a connection that sends nothing is closed too
    finally:
        running.server.stop()
        running.store.close()


def test_headers_past_the_limit_are_refused(web: Web) -> None:
    status, _, _ = get(web, "/", **{"X-Big": "x" * (WebLimits().max_header_bytes + 10)})
    assert status == 431


def test_a_port_in_use_fails_at_construction(web: Web) -> None:
    from saloon.arena.web.serve import WebServer

    with pytest.raises(OSError):
        WebServer(("127.0.0.1", web.server.port), object())


def test_static_assets_are_packaged_and_typed(web: Web) -> None:
    for path, kind in (("/static/replay.js", "text/javascript"), ("/static/saloon.css", "text/css"),
                       ("/static/board.css", "text/css")):  # fmt: skip
        status, headers, _ = get(web, path)
        assert status == 200 and headers["content-type"].startswith(kind)
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(web.url + "/static/../app.py", timeout=10)


def test_responses_are_not_held_back_by_nagle(web: Web) -> None:
    # uvicorn writes a response's head and body apart: without TCP_NODELAY (inherited from
    # the listening socket) every keep-alive read waited ~40 ms for the client's ACK.
    assert web.server.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_a_board_page_is_rendered_once_while_the_results_do_not_change(web: Web) -> None:
    boards = web.server.server.config.app.app.state.ctx.views.pages
    get(web, f"/leaderboard/{SEAS}")
    made = boards.made
    for _ in range(5):
        assert get(web, f"/leaderboard/{SEAS}")[0] == 200
    assert boards.made == made


def test_the_bot_page_charts_its_rating_on_each_ladder(web: Web) -> None:
    _, _, body = get(web, "/bot/alicebot")
    assert body.count(b'<svg class="chart" data-bot="alicebot"') == len(SEASONS)


def test_a_sign_in_posted_from_another_site_is_refused(web: Web) -> None:
    token = web.tokens["alice"]
    reply = post(web, "/signin", f"token={token}".encode(), Origin="http://evil.example")
    assert reply.status == 403 and reply.getheader("set-cookie") is None
    origin = f"http://127.0.0.1:{web.server.port}"
    assert post(web, "/signin", f"token={token}".encode(), Origin=origin).status == 303


def test_guessing_tokens_is_throttled_per_address() -> None:
    from saloon.arena.web.sessions import Sessions, same_origin

    sessions = Sessions(lambda name: None, max_failures=3)
    for _ in range(3):
        assert not sessions.throttled("203.0.113.9")
        sessions.failed("203.0.113.9")
    assert sessions.throttled("203.0.113.9") and not sessions.throttled("203.0.113.10")
    assert same_origin(None, "http", "h:1") and same_origin("https://h:1", "https", "h:1")
    assert not same_origin("https://h:1", "http", "h:1")


def test_a_pages_stamp_is_reread_once_its_half_second_is_over(tmp_path: Path) -> None:
    from saloon.arena.web.views import RecentStamp
    from saloon.worker.store.store import Store

    with Store.open(str(tmp_path / "s.db")) as store:
        stamp = RecentStamp(store, every_s=0.2)
        before = stamp.results_stamp()
        store.create_season("later", {"game": SEAS}, [])
        assert stamp.results_stamp() == before  # within its window: not read again
        time.sleep(0.25)
        assert stamp.results_stamp() != before  # then the store is asked again


def test_a_web_port_in_use_fails_serve_with_one_line(web: Web, tmp_path: Path) -> None:
    # It raised the bind's OSError, a traceback instead of serve's one-line refusal.
    from saloon.arena.errors import AddressInUse
    from saloon.arena.server import ArenaServer, ServeOptions

    options = ServeOptions(
        store_url=str(tmp_path / "b.db"),
        listen="127.0.0.1:0",
        http=f"127.0.0.1:{web.server.port}",
        sandbox="process",
    )
    with pytest.raises(AddressInUse, match=f"web side on 127.0.0.1:{web.server.port}"):
        ArenaServer(options)


def test_saloon_serve_says_a_web_port_in_use_in_one_line(
    web: Web, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from saloon.arena.cli import main

    argv = ["serve", "--store", str(tmp_path / "c.db"), "--listen", "127.0.0.1:0"]
    code = main([*argv, "--http", f"127.0.0.1:{web.server.port}", "--sandbox", "process"])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("saloon: error: cannot serve the web side on")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
