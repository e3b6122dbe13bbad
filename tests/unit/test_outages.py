"""A worker's log of the platform's outages: one line when one starts, one when it ends,
whatever happens in between; a flapping service a line a minute; no password shown."""

from __future__ import annotations

import logging

import pytest

from saloon.worker.queue import outages as outages_module
from saloon.worker.queue.outages import REDIS, STORE, Outages, shown

URL = "postgresql+psycopg://saloon:s3cret@db:5432/saloon"


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records]


def test_an_outage_is_one_line_when_it_starts_and_one_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("test-outages")
    outages = Outages(log, "worker w1")
    with caplog.at_level(logging.WARNING, logger="test-outages"):
        assert outages.away(STORE, URL, "StoreUnavailable: refused", put_back=1)
        for _ in range(100):  # every job, every keeper round, every probe
            assert not outages.away(STORE, URL, "StoreUnavailable: refused", put_back=1)
        assert outages.urls_away(STORE) == [URL] and outages.is_away(STORE, URL)
        assert outages.back(STORE, URL)
        assert not outages.back(STORE, URL)  # over already
    said = lines(caplog)
    assert len(said) == 2, said
    assert said[0].startswith("worker w1: the store postgresql+psycopg://saloon:***@db")
    assert "is unreachable (StoreUnavailable: refused); taking no jobs" in said[0]
    assert "answers again after" in said[1] and "101 job(s) went back" in said[1]
    assert "s3cret" not in "".join(said)
    assert outages.urls_away(STORE) == []


def test_services_are_told_apart(caplog: pytest.LogCaptureFixture) -> None:
    outages = Outages(logging.getLogger("test-outages"))
    with caplog.at_level(logging.WARNING, logger="test-outages"):
        outages.away(STORE, URL, "a")
        outages.away(REDIS, "redis://:pw@r:6379/0", "b")
        outages.back(REDIS, "redis://:pw@r:6379/0")
    assert outages.urls_away(STORE) == [URL] and outages.urls_away(REDIS) == []
    said = lines(caplog)
    assert len(said) == 3
    assert "Redis redis://:***@r:6379/0 is unreachable (b); retrying in a few s" in said[1]


def test_a_flapping_store_is_a_line_a_minute(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(outages_module.time, "monotonic", lambda: clock[0])
    outages = Outages(logging.getLogger("test-outages"))
    with caplog.at_level(logging.WARNING, logger="test-outages"):
        outages.away(STORE, URL, "down")
        clock[0] += 40
        outages.back(STORE, URL)  # two lines so far
        assert outages.flapping(STORE, URL)  # it just came back
        for _ in range(40):  # fails again 1 s after each answer, for 80 s
            clock[0] += 1
            outages.away(STORE, URL, "disk full")
            assert outages.flapping(STORE, URL)
            clock[0] += 1
            outages.back(STORE, URL)
        clock[0] += outages_module.FLAP_S + 1
        assert not outages.flapping(STORE, URL)
        outages.away(STORE, URL, "down again")  # a new outage: said again
    said = lines(caplog)
    keeps = [line for line in said if "keeps failing" in line]
    assert len(keeps) == 2, said  # at the first flap, and a minute later
    assert "keeps failing (1 times" in keeps[0] and "keeps failing (31 times" in keeps[1]
    assert len(said) == 2 + 2 + 1, said
    assert "is unreachable (down again)" in said[-1]


def test_shown_hides_passwords_only() -> None:
    assert shown("redis://:pw@h:1/0") == "redis://:***@h:1/0"
    assert shown("postgresql://u:p@h/db") == "postgresql://u:***@h/db"
    assert shown("postgresql://u@h/db") == "postgresql://u@h/db"
    assert shown("sqlite:///x.db") == "sqlite:///x.db"
