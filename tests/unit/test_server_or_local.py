"""The one server-or-local choice of the commands (saloon.sdk.client.server_or_local) and
their shared --server/--token arguments (no server is called: a client connects lazily)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from saloon.arena.cli import build_parser
from saloon.sdk.client import ArenaClient, add_server_arguments, server_or_local


@pytest.fixture
def nothing_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SALOON_CONFIG", str(tmp_path / "none.toml"))
    for name in ("SALOON_SERVER", "SALOON_TOKEN", "SALOON_TLS"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("nothing_configured")
def test_no_server_anywhere_means_the_local_store() -> None:
    with server_or_local(None, None) as client:
        assert client is None


@pytest.mark.usefixtures("nothing_configured")
def test_a_configured_server_gives_a_client_closed_afterwards(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with server_or_local("127.0.0.1:1", "alice.token") as client:
        assert isinstance(client, ArenaClient)
        assert (client.config.server, client.config.token) == ("127.0.0.1:1", "alice.token")
    monkeypatch.setenv("SALOON_SERVER", "127.0.0.1:2")
    with server_or_local(None, None) as client:
        assert client is not None and client.config.server == "127.0.0.1:2"


def test_server_arguments_default_to_none_and_keep_each_commands_help() -> None:
    parser = argparse.ArgumentParser()
    add_server_arguments(parser, server_help="where")
    args = parser.parse_args([])
    assert (args.server, args.token) == (None, None)
    assert parser.parse_args(["--server", "h:1", "--token", "t"]).server == "h:1"
    sub = next(
        a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)
    ).choices
    helps = {name: {a.dest: a.help for a in sub[name]._actions} for name in ("leaderboard", "bots")}
    assert "none: the local store" in str(helps["leaderboard"]["server"])
    assert helps["bots"]["server"] == "arena host:port ($SALOON_SERVER)"
    assert helps["leaderboard"]["token"] == helps["bots"]["token"] == "API token ($SALOON_TOKEN)"
