"""A failure that repeats is logged once in full, then a line now and then, then once when
it ends (the server's background threads while Redis or the store is away)."""

from __future__ import annotations

import logging

import pytest

from saloon.arena.failures import RepeatedFailure


def test_a_repeating_failure_is_logged_once_in_full_then_now_and_then(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    log = logging.getLogger("saloon.test.failures")
    failures = RepeatedFailure(log, "driving continuous ladders", every_s=60, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger=log.name):
        for _ in range(240):  # two minutes of tries every 0.5 s, Redis away
            try:
                raise ConnectionError("Redis away")
            except ConnectionError:
                failures.failed()
            now[0] += 0.5
        failures.succeeded()
        failures.succeeded()  # nothing more to say
    lines = [(r.levelname, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert lines == [
        ("ERROR", "driving continuous ladders failed (tried again until it works)", True),
        ("WARNING", "driving continuous ladders still failing (121 tries in a row)", False),
        ("WARNING", "driving continuous ladders works again (after 240 failed tries)", False),
    ]
