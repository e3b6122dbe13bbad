"""The suite's Redis databases: each xdist worker its own (tests/services.redis_database)."""

from __future__ import annotations

from tests.services import redis_database


def test_each_xdist_worker_has_a_redis_database_of_its_own_and_a_plain_run_has_0() -> None:
    assert redis_database("") == 0 and redis_database("master") == 0
    assert [redis_database(f"gw{n}") for n in range(15)] == list(range(1, 16))
    assert redis_database("gw15") == 1  # past the 15 a stock server has beside 0: wraps
