"""Where the results store lives by default and how its URL is read (SQLite only: no service)."""

from __future__ import annotations

from pathlib import Path

import pytest

from saloon.worker.errors import StoreError
from saloon.worker.store.config import (
    DEFAULT_BUSY_TIMEOUT_MS,
    DEFAULT_STORE_PATH,
    STORE_ENV,
    StoreConfig,
    resolve_url,
)
from saloon.worker.store.engine import migrations_dir
from saloon.worker.store.store import Store


def test_no_url_and_no_environment_means_saloon_db_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(STORE_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert resolve_url(None) == f"sqlite:///{tmp_path / DEFAULT_STORE_PATH}"


def test_the_environment_names_a_path_or_a_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(STORE_ENV, "runs/results.db")
    assert resolve_url(None) == f"sqlite:///{tmp_path / 'runs' / 'results.db'}"
    monkeypatch.setenv(STORE_ENV, "postgresql+psycopg://u@db/saloon")
    assert resolve_url(None) == "postgresql+psycopg://u@db/saloon"
    # An explicit URL wins over the environment.
    assert resolve_url("sqlite://") == "sqlite://"


@pytest.mark.parametrize("scheme", ["postgresql://", "postgres://"])
def test_a_driverless_postgres_url_gets_psycopg(scheme: str) -> None:
    assert resolve_url(f"{scheme}u@h:5432/d") == "postgresql+psycopg://u@h:5432/d"


def test_the_default_store_is_a_wal_sqlite_file_with_a_busy_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(STORE_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with Store.open() as store:
        store.add_bot("alpha", "alice")
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == DEFAULT_BUSY_TIMEOUT_MS
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    assert (tmp_path / DEFAULT_STORE_PATH).is_file()
    with Store.open(tmp_path / DEFAULT_STORE_PATH) as again:
        assert [b.name for b in again.bots()] == ["alpha"]


def test_an_in_memory_store_keeps_its_data_across_calls() -> None:
    with Store.open("sqlite://") as store:
        store.add_bot("alpha", "alice")
        assert store.bot("alpha") is not None


def test_an_unsupported_database_is_refused_by_name_without_its_password() -> None:
    with pytest.raises(StoreError, match="unsupported store URL mysql") as caught:
        Store.open("mysql://u:secret@h/d")
    assert "secret" not in str(caught.value)


def test_an_unknown_sqlite_synchronous_level_is_refused() -> None:
    with pytest.raises(ValueError, match="sqlite_synchronous"):
        StoreConfig(sqlite_synchronous="SOMETIMES")


def test_the_migrations_ship_inside_the_package() -> None:
    folder = migrations_dir()
    assert (folder / "env.py").is_file()
    assert (folder / "versions" / "0001_initial.py").is_file()
