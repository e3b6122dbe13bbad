"""An arena server for tests: real gRPC on a real loopback port, a real store, the process
sandbox for qualification (the Docker one in the end-to-end test), users with tokens."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from saloon.arena.registry import Registry, Role
from saloon.arena.server import ArenaServer, ServeOptions
from saloon.sdk.client import ArenaClient
from saloon.worker.store.store import Store

HONEST_BOT = """\
from saloon.sdk import Bot


class Honest(Bot):
    def act(self, decision):
        return decision.legal[0]
"""

CRASHING_BOT = """\
import sys

from saloon.sdk import Bot


class Crasher(Bot):
    def act(self, decision):
        print("crasher: about to fail on purpose", file=sys.stderr, flush=True)
        raise RuntimeError("this bot fails on purpose")
"""


@dataclass
class Arena:
    """A running test arena and its users' tokens."""

    server: ArenaServer
    store_url: str
    tokens: dict[str, str]

    @property
    def address(self) -> str:
        return self.server.address

    def client(self, user: str) -> ArenaClient:
        return ArenaClient(self.address, self.tokens[user], timeout_s=120)

    @property
    def http(self) -> str:
        assert self.server.boards is not None
        return f"http://127.0.0.1:{self.server.boards.port}"


def start_arena(store_url: str, redis_url: str | None = None, **options: object) -> Arena:
    """Users alice and bob (users) and olga (organiser), a server on free ports."""
    with Store.open(store_url) as store:
        registry = Registry(store)
        tokens = {
            "alice": registry.add_user("alice"),
            "bob": registry.add_user("bob"),
            "olga": registry.add_user("olga", Role.ORGANISER),
        }
    server = ArenaServer(
        ServeOptions(
            store_url=store_url,
            redis_url=redis_url,
            listen="127.0.0.1:0",
            http="127.0.0.1:0",
            sandbox=str(options.pop("sandbox", "process")),
            season_sandbox=str(options.pop("season_sandbox", "process")),
            **options,  # type: ignore[arg-type]
        )
    )
    server.start()
    return Arena(server, store_url, tokens)


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    """An arena on a SQLite store, process sandbox, no queue."""
    running = start_arena(str(tmp_path / "arena.db"))
    try:
        yield running
    finally:
        running.server.stop(0)


def write_bot(folder: Path, source: str = HONEST_BOT, extra: dict[str, str] | None = None) -> Path:
    """A bot folder with bot.py (and extra files)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(source)
    for name, text in (extra or {}).items():
        (folder / name).write_text(text)
    return folder
