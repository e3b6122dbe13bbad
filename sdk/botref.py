"""Bot references: how a seat or a season entry names its bot, parsed and formatted here only.

The forms:

* ``house:NAME``: a house bot (saloon.sdk.house);
* ``grpc:TARGET``: a bot runtime already serving at a gRPC target (``grpc:unix:/tmp/b.sock``);
* ``bot:NAME@VERSION``: a stored bot version (the arena's bots, by their content hash);
* ``KIND:PATH``: a bot path run by a seat kind that a higher layer registers
  (``docker:mybot/``);
* anything else: a path to a bot file or folder.

A season entry may end in ``#TAG``: another entry of the same bot in one season (self-play
baselines, ``house:greedy#2``); the record names the entry, tag included.

Which forms a place reads differs, so there are two parsers: a match seat
(:func:`parse_seat`, what ``saloon play --seat`` takes) knows seat kinds but neither stored
versions nor tags; a season entry (:func:`parse_entry`) knows stored versions and tags but no
seat kinds. Both take every string (anything unrecognised is a path): whether the bot exists
is for the place that seats it to say. :func:`parse_stored` is the strict reading of a
stored version. This is the SDK's because its lowest reader, the bot loader, reads
``house:NAME``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from saloon.sdk.errors import MalformedBotRef

HOUSE_PREFIX = "house:"
GRPC_PREFIX = "grpc:"
STORED_PREFIX = "bot:"
#: Between a stored bot's name and its version.
VERSION_MARK = "@"
#: Before a season entry's tag.
ENTRY_TAG = "#"

#: A reference's kind: the built-in ones; any other kind is a seat kind's name.
HOUSE = "house"
GRPC = "grpc"
STORED = "bot"
PATH = ""
#: Kinds a seat kind may not be named after: their prefixes mean the built-in forms.
BUILTIN_KINDS = frozenset({HOUSE, GRPC, STORED, PATH})


@dataclass(frozen=True)
class BotRef:
    """One parsed bot reference; ``str()`` formats it back."""

    #: HOUSE, GRPC, STORED, PATH, or the name of a seat kind (``docker``).
    kind: str
    #: The house bot's name, the gRPC target, the stored bot's name, or the path.
    name: str
    #: A stored version's version ("" for every other kind).
    version: str = ""
    #: A season entry's tag; None when it has none ("" is an empty tag: ``house:greedy#``).
    tag: str | None = None

    @classmethod
    def house(cls, name: str, tag: str | None = None) -> BotRef:
        """``house:NAME``."""
        return cls(HOUSE, name, tag=tag)

    @classmethod
    def stored(cls, name: str, version: str, tag: str | None = None) -> BotRef:
        """``bot:NAME@VERSION``."""
        return cls(STORED, name, version, tag)

    @property
    def is_seat_kind(self) -> bool:
        """True for ``KIND:PATH``: a path run by a seat kind of a higher layer."""
        return self.kind not in BUILTIN_KINDS

    @property
    def body(self) -> str:
        """The reference without its tag."""
        if self.kind == PATH:
            return self.name
        if self.kind == STORED:
            return f"{STORED_PREFIX}{self.name}{VERSION_MARK}{self.version}"
        return f"{self.kind}:{self.name}"

    @property
    def tag_suffix(self) -> str:
        """``#TAG``, or "" without a tag."""
        return "" if self.tag is None else ENTRY_TAG + self.tag

    def __str__(self) -> str:
        return self.body + self.tag_suffix


def split_tag(ref: str) -> tuple[str, str | None]:
    """(the reference without its tag, the tag or None) of a season entry."""
    body, mark, tag = ref.partition(ENTRY_TAG)
    return body, tag if mark else None


def parse_seat(spec: str, kinds: Collection[str] = ()) -> BotRef:
    """A match seat: ``house:NAME``, ``grpc:TARGET``, ``KIND:PATH`` for one of ``kinds``,
    otherwise a path (never a stored version, never a tag)."""
    if spec.startswith(HOUSE_PREFIX):
        return BotRef(HOUSE, spec[len(HOUSE_PREFIX) :])
    if spec.startswith(GRPC_PREFIX):
        return BotRef(GRPC, spec[len(GRPC_PREFIX) :])
    kind, sep, rest = spec.partition(":")
    # One letter before the colon is a Windows drive (C:\bots\b.py), never a seat kind.
    if sep and len(kind) > 1 and kind not in BUILTIN_KINDS and kind in kinds:
        return BotRef(kind, rest)
    return BotRef(PATH, spec)


def parse_entry(ref: str) -> BotRef:
    """A season entry: ``house:NAME``, ``bot:NAME@VERSION``, ``grpc:TARGET`` or a path, each
    with an optional ``#TAG``. A malformed stored version keeps what it has (name or version
    empty): :func:`parse_stored` refuses it."""
    body, tag = split_tag(ref)
    if body.startswith(STORED_PREFIX):
        name, _, version = body[len(STORED_PREFIX) :].partition(VERSION_MARK)
        return BotRef(STORED, name, version, tag)
    if body.startswith(HOUSE_PREFIX):
        return BotRef(HOUSE, body[len(HOUSE_PREFIX) :], tag=tag)
    if body.startswith(GRPC_PREFIX):
        return BotRef(GRPC, body[len(GRPC_PREFIX) :], tag=tag)
    return BotRef(PATH, body, tag=tag)


def parse_stored(ref: str) -> BotRef:
    """A ``bot:NAME@VERSION[#TAG]`` reference; MalformedBotRef for anything else."""
    parsed = parse_entry(ref)
    if parsed.kind != STORED:
        raise MalformedBotRef(f"{ref!r} is not a stored bot reference (bot:NAME@VERSION)")
    if not parsed.name or not parsed.version:
        raise MalformedBotRef(f"{ref!r}: a stored bot is named bot:NAME@VERSION")
    return parsed
