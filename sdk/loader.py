"""Loading a bot from a file or folder: what ``python -m saloon.sdk.run BOT`` serves.

A bot is a Python file, or a folder whose entry point is ``bot.py`` (the folder is put on
``sys.path`` so the bot can import its own modules). In that module, the first of these
found is the bot:

1. ``BOT``: a :class:`~saloon.sdk.bot.Bot` subclass;
2. ``make_bot()``: a function returning a fresh Bot;
3. the one Bot subclass defined in the module;
4. ``act(decision)``: a function, wrapped in a :class:`~saloon.sdk.bot.FunctionBot`.

``house:NAME`` serves a house bot instead (its game is known only when a match starts).
Every match gets a fresh bot instance.

A bot's content version (:func:`content_version`) is defined here too, next to
:func:`bot_version`, which the referee records: a bot package (saloon.worker.sandbox.packages)
computes its version with the same function.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType

from saloon.sdk.bot import Bot, FunctionBot
from saloon.sdk.botref import HOUSE, parse_seat
from saloon.sdk.errors import BotLoadError, UnknownHouseBot
from saloon.sdk.output import where

#: A fresh bot for a match of the given game id.
BotFactory = Callable[[str], Bot]
ENTRY_FILE = "bot.py"


def bot_entry(path: str | Path) -> Path:
    """The entry file of a bot file or folder; BotLoadError when there is none."""
    p = Path(path)
    if p.is_dir():
        entry = p / ENTRY_FILE
        if not entry.is_file():
            raise BotLoadError(f"bot folder {p} has no {ENTRY_FILE}")
        return entry
    if p.is_file():
        if p.suffix != ".py":
            raise BotLoadError(f"bot file {p} is not a .py file")
        return p
    raise BotLoadError(f"no bot file or folder at {p}")


def is_skipped(parts: Sequence[str]) -> bool:
    """True for an entry that is not part of a bot: hidden, a cache, or inside one
    (``parts``: its path relative to the bot's folder, part by part)."""
    return any(part.startswith(".") or part == "__pycache__" for part in parts)


def content_version(files: Iterable[tuple[str, bytes]]) -> str:
    """The content version of a bot's files, given as (relative POSIX path, bytes):
    ``sha256:`` + 16 hex digits over every path and its bytes, in path order (part by
    part). The one definition of a bot version: the loader's and a package's."""
    digest = hashlib.sha256()
    for name, data in sorted(files, key=lambda item: item[0].split("/")):
        digest.update(name.encode() + b"\0")
        digest.update(data)
        digest.update(b"\0")
    return f"sha256:{digest.hexdigest()[:16]}"


def bot_version(path: str | Path) -> str:
    """A content version of a bot file or folder (:func:`content_version` of its files,
    caches and hidden entries skipped). The same files give the same version on every
    machine."""
    root = Path(path)
    if root.is_file():
        return content_version([(root.name, root.read_bytes())])
    return content_version(
        (f.relative_to(root).as_posix(), f.read_bytes())
        for f in root.rglob("*")
        if f.is_file() and not is_skipped(f.relative_to(root).parts)
    )


def _import(entry: Path) -> ModuleType:
    folder = str(entry.parent.resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    digest = hashlib.sha256(str(entry.resolve()).encode()).hexdigest()[:12]
    name = f"saloon_bot_{digest}"
    spec = importlib.util.spec_from_file_location(name, entry)
    if spec is None or spec.loader is None:
        raise BotLoadError(f"cannot import {entry}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        # One line that starts with the author's file:line (a SyntaxError's own place, else
        # the innermost frame: where the bot's code raised), then what went wrong.
        place = where(exc) or str(entry)
        text = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        raise BotLoadError(f"{place}: {type(exc).__name__}: {text} (importing {entry})") from exc
    return module


def _bot_class(value: object) -> type[Bot] | None:
    if inspect.isclass(value) and issubclass(value, Bot) and value is not Bot:
        return value
    return None


def _with_act(cls: type[Bot], where: str) -> type[Bot]:
    """``cls`` if it defines ``act``; BotLoadError now rather than at its first decision."""
    if getattr(cls, "act", Bot.act) is Bot.act:
        raise BotLoadError(f"{where}: bot class {cls.__name__} does not define act(decision)")
    return cls


def find_bot(module: ModuleType) -> BotFactory:
    """The bot a loaded module defines (see the module docstring for the order)."""
    where = module.__file__ or module.__name__
    explicit = getattr(module, "BOT", None)
    if explicit is not None:
        cls = _bot_class(explicit)
        if cls is None:
            raise BotLoadError(f"{where}: BOT must be a Bot subclass, not {explicit!r}")
        cls = _with_act(cls, where)
        return lambda _game: cls()
    make = getattr(module, "make_bot", None)
    if callable(make):
        return lambda _game: _checked(make(), where)
    own = [
        cls
        for value in vars(module).values()
        if (cls := _bot_class(value)) is not None and cls.__module__ == module.__name__
    ]
    if len(own) == 1:
        only = _with_act(own[0], where)
        return lambda _game: only()
    if len(own) > 1:
        names = ", ".join(sorted(c.__name__ for c in own))
        raise BotLoadError(f"{where} defines several bots ({names}): set BOT = <the one>")
    act = getattr(module, "act", None)
    if callable(act):
        return lambda _game: FunctionBot(act)
    raise BotLoadError(f"{where} defines no bot (a Bot subclass, make_bot() or act())")


def _checked(bot: object, where: str) -> Bot:
    if not isinstance(bot, Bot):
        raise BotLoadError(f"{where}: make_bot() returned {bot!r}, not a Bot")
    _with_act(type(bot), where)
    return bot


def load_bot(spec: str) -> BotFactory:
    """A factory of fresh bots for ``spec``: a bot file, a bot folder or ``house:NAME``."""
    ref = parse_seat(spec)
    if ref.kind == HOUSE:
        from saloon.sdk.house import make_house_bot

        def house(game: str) -> Bot:
            try:
                return make_house_bot(game, ref.name)
            except UnknownHouseBot as exc:
                raise BotLoadError(str(exc)) from None

        return house
    return find_bot(_import(bot_entry(spec)))
