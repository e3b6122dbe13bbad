"""A worker's warm-up: the store it is given is opened before the first job, once."""

from __future__ import annotations

import gc
import logging
from pathlib import Path

import pytest

from saloon.worker.queue import jobs
from saloon.worker.queue.defaults import WORKER_GC_THRESHOLD
from saloon.worker.queue.jobs import WARM_UP_MATCH_ID, close_stores, store_for, warm_up
from saloon.worker.store.config import resolve_url


@pytest.fixture(autouse=True)
def _fresh_stores() -> object:
    close_stores()
    thresholds = gc.get_threshold()
    yield None
    close_stores()
    gc.unfreeze()  # warm_up freezes what the test process holds
    gc.set_threshold(*thresholds)  # and sets a worker's collector thresholds


def test_the_store_given_is_opened_once_and_the_jobs_use_it(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    warm_up(str(path))
    store = jobs._stores[resolve_url(str(path))]
    # The jobs name the store by URL: the same open store (not a second one).
    assert store_for(f"sqlite:///{path}") is store and store_for(str(path)) is store
    assert store.scheduled_match(WARM_UP_MATCH_ID) is None  # the warm-up wrote nothing
    assert store.results() == []
    assert gc.get_threshold()[0] == WORKER_GC_THRESHOLD


def test_an_unreachable_store_is_only_logged(caplog: pytest.LogCaptureFixture) -> None:
    url = "postgresql+psycopg://nobody@127.0.0.1:1/none"
    with caplog.at_level(logging.WARNING, logger="saloon.worker.queue.jobs"):
        warm_up(url)
    assert "warm-up: store" in caplog.text and "unavailable" in caplog.text
    assert jobs._stores == {}  # the first job opens it (or fails and retries)
