"""Regression tests of the web side's defects found by probing it as an attacker (issue 32,
"Defects"), each on a real uvicorn server on a loopback port, with raw sockets where the
client must misbehave."""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from saloon.arena.web.guard import CSP
from saloon.arena.web.limits import WebLimits
from saloon.referee.match import play_match
from saloon.referee.record import MatchRecord
from saloon.referee.seats import InProcessSeat
from saloon.referee.shown import shown
from saloon.sdk.house import make_house_bot
from saloon.sdk.output import MARK
from saloon.worker.store.rows import ScheduledMatch
from saloon.worker.store.store import Store
from tests.integration.web_fixtures import (
    FAULTY_MATCH,
    WESTERN,
    Crasher,
    Web,
    first_decision,
    start_web,
)

#: Short body timeout, so that a body that stops short is answered within the test.
LIMITS = WebLimits(body_timeout_s=0.5)


#: What a hostile bot puts in its exception's message and its stderr: a right-to-left
#: override (the rest reads reversed: "exe.gnp" as "png.exe"), a clear-screen, a window
#: retitle ended by BEL, a C1 CSI, a bidi isolate.
HOSTILE = "\u202egnp.exe \x1b[2J\x1b]0;owned\x07 \x9b31m \u2066x\u2069 \x08\x7f"
#: The raw characters none of the outputs may carry.
RAW = ("\u202e", "\x1b", "\x07", "\x9b", "\u2066", "\u2069", "\x08", "\x7f")
HOSTILE_MATCH = "web-hostile-0"


def record_hostile_match(store: Store) -> int:
    """A match where alicebot faults with :data:`HOSTILE` as its detail (as the process
    sandbox's runtime reports ``str(exc)``) and printed it to stderr; alicebot's seat."""
    seats = ["bot:alicebot@a1", "bot:bobbot@b1"]
    played = play_match(
        WESTERN,
        [
            InProcessSeat(Crasher(), seats[0], "a1"),
            InProcessSeat(make_house_bot(WESTERN, "greedy"), seats[1], "b1"),
        ],
        7,
        match_id=HOSTILE_MATCH,
    )
    played.faults = [
        replace(f, detail=f"act raised RuntimeError: {HOSTILE}") for f in played.faults
    ]
    decision = first_decision(played, 0)
    stderr = f"{MARK}start\n{HOSTILE}\n{MARK}decision {decision}\n{HOSTILE}\n"
    store.create_season(
        "web-hostile",
        {"game": WESTERN},
        [ScheduledMatch(HOSTILE_MATCH, 0, {"seats": seats, "seed": 7})],
    )
    store.record_results([store.prepare_result(HOSTILE_MATCH, played.to_json(), {0: stderr})])
    return 0


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    folder: Path = tmp_path_factory.mktemp("defects")
    running = start_web(str(folder / "saloon.db"), LIMITS)
    record_hostile_match(running.store)
    try:
        yield running
    finally:
        running.server.stop()
        running.store.close()


def exchange(site: Web, data: bytes) -> bytes:
    """Send ``data`` on a raw connection; everything the server answers until it closes
    the connection (bounded: 10 s)."""
    with socket.create_connection(("127.0.0.1", site.server.port), timeout=10) as s:
        s.sendall(data)
        chunks = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def head_of(reply: bytes) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-case names) and body of a raw HTTP/1.1 answer."""
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


def logged_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Every line the server logged (tracebacks counted line by line). uvicorn's access
    log is off in a server (``access_log=False``), but pytest hangs its capture handlers
    on that logger too, which turns it on here."""
    lines: list[str] = []
    for record in caplog.records:
        if record.name == "uvicorn.access":
            continue
        lines.extend(caplog.handler.format(record).splitlines())
    return lines


def assert_secured(headers: dict[str, str]) -> None:
    assert headers["content-security-policy"] == CSP
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"


# -- body limits ---------------------------------------------------------------------------


def test_a_chunked_body_past_the_limit_gets_413_and_one_log_line(
    web: Web, caplog: pytest.LogCaptureFixture
) -> None:
    # It was "internal error" (500) and ~45 log lines with two tracebacks (guard.TooLarge).
    body = b"token=" + b"x" * 8994  # 9,000 bytes, sent in chunks: no Content-Length
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in (body[:4000], body[4000:]))
    request = (
        b"POST /signin HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n\r\n" + chunks + b"0\r\n\r\n"
    )
    with caplog.at_level(logging.INFO):
        status, headers, reply = head_of(exchange(web, request))
        time.sleep(0.3)  # anything logged after the answer
    assert status == 413, reply
    assert_secured(headers)
    lines = logged_lines(caplog)
    assert len(lines) == 1, lines
    assert "413" in lines[0] and "/signin" in lines[0]
    assert not any("Traceback" in line for line in lines)


def test_a_body_that_stops_short_of_its_content_length_gets_408_and_one_log_line(
    web: Web, caplog: pytest.LogCaptureFixture
) -> None:
    # It was "internal error" (500) and a TimeoutError traceback.
    request = (
        b"POST /signin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n\r\ntoken=abc"
    )
    with caplog.at_level(logging.INFO):
        started = time.monotonic()
        status, headers, reply = head_of(exchange(web, request))
        took = time.monotonic() - started
        time.sleep(0.3)
    assert status == 408, reply
    assert LIMITS.body_timeout_s <= took < 5
    assert_secured(headers)
    lines = logged_lines(caplog)
    assert len(lines) == 1, lines
    assert "408" in lines[0] and "/signin" in lines[0]


def test_a_body_whose_client_goes_away_logs_one_line_and_no_traceback(
    web: Web, caplog: pytest.LogCaptureFixture
) -> None:
    request = (
        b"POST /signin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n\r\ntoken=abc"
    )
    with caplog.at_level(logging.INFO):
        with socket.create_connection(("127.0.0.1", web.server.port), timeout=10) as s:
            s.sendall(request)
            time.sleep(0.1)
        time.sleep(LIMITS.body_timeout_s + 0.5)
    lines = logged_lines(caplog)
    assert len(lines) <= 1, lines
    assert not any("Traceback" in line for line in lines)


def test_the_server_still_answers_after_refusing_bodies(web: Web) -> None:
    status, _, _ = head_of(
        exchange(web, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    )
    assert status == 200


# -- Host header ---------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8443", "127.0.0.1"])
def test_a_redirect_never_names_the_host_the_client_sent(web: Web, host: str) -> None:
    # GET /static with Host: evil.example redirected to http://evil.example/static/.
    request = f"GET /static HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
    status, headers, _ = head_of(exchange(web, request))
    assert status in (301, 302, 307, 308)
    assert headers["location"] == "/static/"
    assert_secured(headers)


def test_a_redirect_keeps_its_query_and_never_becomes_protocol_relative(web: Web) -> None:
    from saloon.arena.web.guard import relative_location

    assert relative_location("http://evil.example/static/?a=1") == "/static/?a=1"
    assert relative_location("/signin?next=/bot/x") == "/signin?next=/bot/x"
    assert relative_location("http://evil.example//evil.example/x") == "/evil.example/x"
    assert relative_location("//evil.example/x") == "/x"
    assert relative_location("/\\evil.example/x") == "/evil.example/x"
    assert relative_location("https://h") == "/"


# -- the server's own 400s -----------------------------------------------------------------


@pytest.mark.parametrize(
    "garbage",
    [b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03garbage\r\n\r\n", b"NOT HTTP AT ALL\r\n\r\n",
     b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"],
)  # fmt: skip
def test_the_servers_own_400_carries_the_security_headers(web: Web, garbage: bytes) -> None:
    # uvicorn's "Invalid HTTP request received." had no CSP and no nosniff.
    status, headers, body = head_of(exchange(web, garbage))
    assert status == 400, body
    assert_secured(headers)
    assert headers["connection"] == "close"
    assert headers["content-type"].startswith("text/plain")


def test_the_servers_own_503_past_the_connection_limit_carries_the_security_headers(
    tmp_path: Path,
) -> None:
    # uvicorn's "Service Unavailable" (limit_concurrency) had none either.
    running = start_web(str(tmp_path / "s.db"), WebLimits(max_connections=2))
    try:
        with contextlib.ExitStack() as idle:
            for _ in range(2):
                idle.enter_context(
                    socket.create_connection(("127.0.0.1", running.server.port), timeout=10)
                )
            time.sleep(0.2)  # both accepted
            status, headers, body = head_of(
                exchange(running, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            )
        assert status == 503, body
        assert_secured(headers)
        time.sleep(0.2)  # the idle ones closed
        status, _, _ = head_of(
            exchange(running, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        )
        assert status == 200
    finally:
        running.server.stop()
        running.store.close()


# -- sessions end with their token ---------------------------------------------------------


def sign_in(site: Web, user: str) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", site.server.port, timeout=10)
    try:
        conn.request(
            "POST", "/signin", body=f"token={site.tokens[user]}".encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )  # fmt: skip
        reply = conn.getresponse()
        reply.read()
        assert reply.status == 303
        return (reply.getheader("set-cookie") or "").split(";")[0]
    finally:
        conn.close()


def status_of(site: Web, path: str, cookie: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", site.server.port, timeout=10)
    try:
        conn.request("GET", path, headers={"Cookie": cookie})
        reply = conn.getresponse()
        reply.read()
        return reply.status
    finally:
        conn.close()


def saloon_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The ``saloon`` command in its own process (as an operator runs it)."""
    return subprocess.run(
        [sys.executable, "-m", "saloon.arena.cli", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def alice_seat(site: Web) -> tuple[str, str]:
    record = MatchRecord.from_json(site.store.match_record(FAULTY_MATCH))
    seat = next(s.seat for s in record.seats if s.bot.startswith("bot:alice"))
    return f"/match/{FAULTY_MATCH}/seat/{seat}", f"/api/matches/{FAULTY_MATCH}/seats/{seat}"


def test_rotating_a_token_ends_the_sessions_signed_in_with_it(web: Web) -> None:
    # After `saloon user rotate alice` a session signed in with the old token still read
    # alice's seat views (200) for up to 12 h.
    page, api = alice_seat(web)
    cookie = sign_in(web, "alice")
    assert status_of(web, page, cookie) == 200 and status_of(web, api, cookie) == 200
    done = saloon_cli("user", "rotate", "alice", "--store", web.store.url)
    assert done.returncode == 0, done.stderr
    web.tokens["alice"] = done.stdout.strip().splitlines()[-1]
    assert status_of(web, page, cookie) == 401
    assert status_of(web, api, cookie) == 401
    # The new token signs in again.
    assert status_of(web, page, sign_in(web, "alice")) == 200


def test_removing_a_user_ends_their_sessions_and_refuses_their_token(web: Web) -> None:
    from saloon.arena.registry import Registry
    from saloon.worker.errors import BadToken, UserExists

    bob = sign_in(web, "bob")
    token = web.tokens["bob"]
    assert status_of(web, f"/api/matches/{FAULTY_MATCH}/seats/0", bob) in (200, 403)
    done = saloon_cli("user", "remove", "bob", "--store", web.store.url)
    assert done.returncode == 0, done.stderr
    assert "bob" in done.stdout
    assert status_of(web, "/", bob) == 200  # pages stay public
    assert status_of(web, f"/api/matches/{FAULTY_MATCH}/seats/0", bob) == 401
    registry = Registry(web.store)
    with pytest.raises(BadToken):
        registry.authenticate(token)
    listing = saloon_cli("user", "list", "--store", web.store.url).stdout
    assert "bob\tuser\tremoved" in listing.splitlines()
    # The name stays taken (its bots keep their owner): nobody can inherit them.
    with pytest.raises(UserExists):
        registry.add_user("bob")
    assert web.store.bot("bobbot") is not None and web.store.bot("bobbot").owner == "bob"
    again = saloon_cli("user", "remove", "bob", "--store", web.store.url)
    assert again.returncode == 1 and "removed already" in again.stderr
    rotate = saloon_cli("user", "rotate", "bob", "--store", web.store.url)
    assert rotate.returncode == 1 and "removed already" in rotate.stderr


# -- bidi and terminal controls in bot text ------------------------------------------------


def read(site: Web, path: str, cookie: str = "") -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", site.server.port, timeout=10)
    try:
        conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        reply = conn.getresponse()
        body = reply.read()
        assert reply.status == 200, (path, reply.status, body[:300])
        return body
    finally:
        conn.close()


def assert_no_raw_controls(body: bytes) -> None:
    text = body.decode()
    assert not [c for c in RAW if c in text], [hex(ord(c)) for c in RAW if c in text]


def test_a_fault_detail_with_bidi_and_terminal_controls_shows_them_escaped(web: Web) -> None:
    # A fault detail with U+202E rendered reversed on the bot page, the viewer (its data)
    # and the seat view.
    visible = shown(HOSTILE)
    assert visible.startswith("\\u202egnp.exe \\x1b[2J") and "\\x9b31m" in visible
    bot_page = read(web, "/bot/alicebot")
    assert_no_raw_controls(bot_page)
    assert b"\\u202egnp.exe" in bot_page  # the detail, escaped, on the bot's page
    replay = read(web, f"/api/matches/{HOSTILE_MATCH}/replay")
    assert_no_raw_controls(replay)
    faults = [f for step in json.loads(replay)["steps"] for f in step.get("faults", [])]
    assert faults and faults[0]["detail"] == f"act raised RuntimeError: {visible}"
    assert_no_raw_controls(read(web, f"/match/{HOSTILE_MATCH}"))
    summary = read(web, "/api/bots/alicebot")
    assert_no_raw_controls(summary)
    cookie = sign_in(web, "alice")
    seat_page = read(web, f"/match/{HOSTILE_MATCH}/seat/0", cookie)
    assert_no_raw_controls(seat_page)
    assert seat_page.count(b"\\u202egnp.exe") >= 2  # the fault and what it printed
    seat = read(web, f"/api/matches/{HOSTILE_MATCH}/seats/0", cookie)
    assert_no_raw_controls(seat)
    stored = MatchRecord.from_json(web.store.match_record(HOSTILE_MATCH))
    decision = first_decision(stored, 0)
    expected = f"[start]\n{visible}\n[decision {decision}]\n{visible}\n"
    assert json.loads(seat)["stderr"] == expected
    # The record keeps what the bot sent, byte for byte: only what is shown is escaped.
    assert HOSTILE in stored.faults[0].detail


def test_an_error_page_does_not_echo_bidi_controls(web: Web) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", web.server.port, timeout=10)
    try:
        for path in ("/bot/x%E2%80%AEfdp", "/api/bots/x%E2%80%AEfdp"):
            conn.request("GET", path)
            reply = conn.getresponse()
            body = reply.read()
            assert reply.status == 404
            assert_no_raw_controls(body)
            assert b"\\u202e" in body
    finally:
        conn.close()
