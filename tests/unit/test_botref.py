"""Bot references: every seat and season-entry form parsed, formatted back, and the bad forms."""

from __future__ import annotations

import pytest

from saloon.sdk.botref import (
    GRPC,
    HOUSE,
    PATH,
    STORED,
    BotRef,
    parse_entry,
    parse_seat,
    parse_stored,
    split_tag,
)
from saloon.sdk.errors import MalformedBotRef, SdkError

KINDS = ("docker",)


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("house:greedy", BotRef(HOUSE, "greedy")),
        ("house:search-100", BotRef(HOUSE, "search-100")),
        ("grpc:unix:/tmp/bot.sock", BotRef(GRPC, "unix:/tmp/bot.sock")),
        ("grpc:127.0.0.1:50051", BotRef(GRPC, "127.0.0.1:50051")),
        ("docker:mybot/", BotRef("docker", "mybot/")),
        ("mybot.py", BotRef(PATH, "mybot.py")),
        ("/tmp/bots/a#b.py", BotRef(PATH, "/tmp/bots/a#b.py")),  # a seat has no tags
        ("bot:solo@sha256:0123", BotRef(PATH, "bot:solo@sha256:0123")),  # nor stored versions
        ("nosuchkind:bot", BotRef(PATH, "nosuchkind:bot")),  # an unregistered kind: a path
        ("C:bots/b.py", BotRef(PATH, "C:bots/b.py")),  # a drive letter, not a kind
    ],
)
def test_seats_parse_and_format_back(spec: str, parsed: BotRef) -> None:
    assert parse_seat(spec, KINDS) == parsed
    assert str(parsed) == spec


@pytest.mark.parametrize(
    ("ref", "parsed"),
    [
        ("house:greedy", BotRef(HOUSE, "greedy")),
        ("house:greedy#2", BotRef(HOUSE, "greedy", tag="2")),
        ("house:greedy#", BotRef(HOUSE, "greedy", tag="")),  # an empty tag is a tag
        ("bot:solo@sha256:0123456789abcdef", BotRef(STORED, "solo", "sha256:0123456789abcdef")),
        ("bot:solo@v3#b", BotRef(STORED, "solo", "v3", "b")),
        ("grpc:unix:/tmp/b.sock", BotRef(GRPC, "unix:/tmp/b.sock")),
        ("mybot/", BotRef(PATH, "mybot/")),
        ("/tmp/mybot.py#2", BotRef(PATH, "/tmp/mybot.py", tag="2")),
        ("docker:mybot/", BotRef(PATH, "docker:mybot/")),  # an entry has no seat kinds
    ],
)
def test_season_entries_parse_and_format_back(ref: str, parsed: BotRef) -> None:
    assert parse_entry(ref) == parsed
    assert str(parsed) == ref
    assert parsed.body == split_tag(ref)[0]


def test_constructors_format_the_forms() -> None:
    assert str(BotRef.house("random")) == "house:random"
    assert str(BotRef.house("greedy", tag="2")) == "house:greedy#2"
    assert str(BotRef.stored("solo", "sha256:00")) == "bot:solo@sha256:00"
    assert str(BotRef.stored("solo", "v1", "x")) == "bot:solo@v1#x"
    assert parse_stored(str(BotRef.stored("solo", "v1", "x"))) == BotRef(STORED, "solo", "v1", "x")
    assert BotRef.stored("solo", "v1").tag_suffix == "" and BotRef.house("g", "").tag_suffix == "#"


def test_seat_kinds_are_only_the_registered_ones() -> None:
    assert parse_seat("docker:b").is_seat_kind is False
    assert parse_seat("docker:b", KINDS).is_seat_kind is True
    # The built-in prefixes keep their meaning even when a kind of that name is handed in.
    for builtin in ("house", "grpc", "bot"):
        assert not parse_seat(f"{builtin}:x", (builtin,)).is_seat_kind
    for ref in ("house:g", "grpc:unix:/s", "bot:a@v", "b.py"):
        assert not parse_entry(ref).is_seat_kind


def test_split_tag_tells_no_tag_from_an_empty_one() -> None:
    assert split_tag("house:greedy") == ("house:greedy", None)
    assert split_tag("house:greedy#") == ("house:greedy", "")
    assert split_tag("bot:a@v#t#u") == ("bot:a@v", "t#u")  # the first # starts the tag


def test_malformed_stored_versions_are_kept_by_entries_and_refused_by_parse_stored() -> None:
    assert parse_entry("bot:solo") == BotRef(STORED, "solo", "")
    assert parse_entry("bot:@v") == BotRef(STORED, "", "v")
    for bad in ("bot:solo", "bot:@v", "bot:solo@", "bot:solo@#2", "bot:"):
        with pytest.raises(MalformedBotRef, match=r"a stored bot is named bot:NAME@VERSION"):
            parse_stored(bad)
    for other in ("house:greedy", "mybot.py", "grpc:unix:/s", "#bot:a@v"):
        with pytest.raises(MalformedBotRef, match=r"is not a stored bot reference"):
            parse_stored(other)
    with pytest.raises(MalformedBotRef) as caught:
        parse_stored("bot:solo")
    assert str(caught.value) == "'bot:solo': a stored bot is named bot:NAME@VERSION"
    assert isinstance(caught.value, SdkError)
