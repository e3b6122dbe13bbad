"""The host lock (saloon.worker.sandbox.hostlock): one holder among the host's processes,
a bounded wait, and a holder that dies frees it at once."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from saloon.worker.sandbox import hostlock
from saloon.worker.sandbox.hostlock import host_lock

HOLD = """
import sys, time
from saloon.worker.sandbox.hostlock import host_lock
with host_lock(sys.argv[1], 5.0) as held:
    print("held" if held else "not held", flush=True)
    time.sleep(60)  # until the test kills it
"""


@pytest.fixture(autouse=True)
def own_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "locks"
    monkeypatch.setenv(hostlock.LOCK_DIR_ENV, str(folder))
    return folder


def test_a_lock_another_process_holds_is_waited_for_within_the_bound_then_taken_when_it_dies(
    own_dir: Path,
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, "bot-image:v1@base"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, hostlock.LOCK_DIR_ENV: str(own_dir)},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with host_lock("bot-image:v1@base", 0.3) as held:
            assert not held
        assert 0.3 <= time.monotonic() - started < 3.0
        with host_lock("bot-image:other@base", 0.3) as held:  # another name: its own lock
            assert held
        holder.kill()
        holder.wait(10)
        started = time.monotonic()
        with host_lock("bot-image:v1@base", 5.0) as held:
            assert held
        assert time.monotonic() - started < 1.0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(10)


def test_the_lock_folder_is_the_uids_own(own_dir: Path, tmp_path: Path) -> None:
    with host_lock("x", 0.1) as held:
        assert held
    assert own_dir.stat().st_mode & 0o777 == 0o700
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    os.environ[hostlock.LOCK_DIR_ENV] = str(link)
    with pytest.raises(PermissionError, match="not this uid's own folder"):
        hostlock.lock_dir()


def test_workers_that_share_a_package_cache_share_its_locks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compose files' workers, each in a container of its own, share the package cache
    volume: the locks are there unless $SALOON_LOCK_DIR says otherwise."""
    monkeypatch.delenv(hostlock.LOCK_DIR_ENV)
    monkeypatch.setenv("SALOON_PACKAGE_CACHE", str(tmp_path / "cache"))
    assert hostlock.lock_dir() == tmp_path / "cache" / "locks"
    monkeypatch.setenv(hostlock.LOCK_DIR_ENV, str(tmp_path / "mine"))
    assert hostlock.lock_dir() == tmp_path / "mine"


def test_the_folder_holds_a_bounded_number_of_lock_files(own_dir: Path) -> None:
    """A long-lived host locks a name per bot version: the folder must not grow with them."""
    for n in range(500):
        with host_lock(f"bot-image:{n}@base", 0.1) as held:
            assert held
    files = list(own_dir.iterdir())
    assert len(files) <= hostlock.BUCKETS and all(f.suffix == ".lock" for f in files)


def test_a_folder_that_will_not_do_is_no_lock_and_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A lock only saves work: a lock folder that is not the uid's own (or cannot be made)
    is logged and the work goes on without the lock, never fails."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "link").symlink_to(elsewhere)
    monkeypatch.setenv(hostlock.LOCK_DIR_ENV, str(tmp_path / "link"))
    with host_lock("bot-image:v1@base", 0.1) as held:
        assert not held
    assert "no host lock for bot-image:v1@base" in caplog.text
    assert list(elsewhere.iterdir()) == []
