"""Seat bot ids as the store holds them -> the names, versions and owners rated."""

from __future__ import annotations

from saloon.ratings.source import bot_name, owner_of, registry_name


def test_seat_ids_become_names_versions_and_owners() -> None:
    owners = {"alice": "ann"}
    assert bot_name("bot:alice@v3") == ("alice", "v3")
    assert bot_name("bot:alice@v3#2") == ("alice#2", "v3")  # a second entry, rated apart
    assert registry_name("alice#2") == "alice"
    assert bot_name("house:greedy#2") == ("house:greedy#2", "")
    assert bot_name("/tmp/mybot.py") == ("/tmp/mybot.py", "")
    assert owner_of("bot:alice@v3#2", owners) == "ann"
    assert owner_of("bot:nobody@v1", owners) == ""
    assert owner_of("house:random", owners) == "house"
    assert owner_of("./mybot", owners) == "local"
