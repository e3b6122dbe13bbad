"""Text a bot controls, made safe to show: on a web page, in a terminal, in a log.

A bot chooses its fault details (an exception's message), what it prints to stderr and
what it notes. Shown as they are, a right-to-left override (U+202E) renders the rest of a
line reversed (``exe.gnp`` reads as ``png.exe``), on a page as in a terminal, and a
terminal obeys the escape sequences in them (``ESC [ 2 J`` clears the screen, others move
the cursor, retitle the window or hide text). :func:`shown` is the one place that decides
what is shown instead, and every output that carries bot text goes through it:

* the web pages (every value a template prints) and the JSON API (every string of an
  answer: :func:`shown_json`), so the replay viewer and the seat view, which write the
  API's strings with ``textContent``, get them safe too;
* ``saloon play`` and ``saloon replay`` (the printed log, the seat problem lines, a seat's
  stderr), ``saloon eval``'s faults;
* the logs of ``saloon serve``, ``saloon worker`` and the other commands
  (:func:`log_to_stderr`: a formatter that passes every line through it).

What it does: every C0 control but newline and tab (so ESC, CR, BEL, backspace), DEL,
every C1 control (U+0080-U+009F, CSI among them) and every bidirectional control (the
embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069, the marks U+200E,
U+200F and U+061C) is replaced by its code, written as ``\\x1b`` (under U+0100) or
``\\u202e``: visible, so a reader sees that the bot sent it, and inert. Right-to-left
*letters* stay: they are text, and without an override they cannot reverse the
left-to-right text around them. Records keep what the bot sent, byte for byte (a replay
must stay exact); only what is shown is escaped.
"""

from __future__ import annotations

import logging
import re
import sys

#: The characters :func:`shown` escapes (a regex character class body).
_UNSAFE_CLASS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[{_UNSAFE_CLASS}]")

#: The same characters in compact UTF-8 JSON (orjson's, json's with ensure_ascii=False):
#: DEL, C1 and the bidi controls raw (JSON leaves them as they are), the C0 controls as
#: JSON's escapes (``\u001b``, ``\b``, ``\f``, ``\r``). A run of backslashes is matched
#: whole (linear, whatever its length): an escape ends it only when the run is odd (the
#: backslashes before it escape each other).
_JSON_UNSAFE = re.compile(
    rb"\\++(u00[01][0-9a-fA-F]|[bfr])?|\x7f|\xc2[\x80-\x9f]|\xd8\x9c"
    rb"|\xe2(?:\x80[\x8e\x8f\xaa-\xae]|\x81[\xa6-\xa9])"
)
#: The bytes every match of :data:`_JSON_UNSAFE` starts with. They are found with
#: ``bytes.find`` (C speed); a regex scan of a long replay's JSON took ~100 ns a byte.
_JSON_STARTS = b"\\\x7f\xc2\xd8\xe2"
_SHORT = {b"b": 0x08, b"f": 0x0C, b"r": 0x0D}


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str) -> str:
    """``text`` with every control and bidi control character escaped (see the module
    docstring); ``text`` itself when it has none."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(lambda m: _escape(ord(m.group())), text)


def _json_escape(match: re.Match[bytes]) -> bytes:
    """What :data:`_JSON_UNSAFE`'s ``match`` becomes (itself when it is harmless)."""
    text, escape = match.group(), match.group(1)
    if text[:1] != b"\\":  # a raw character: its escape, as JSON text (the backslash doubled)
        return b"\\" + _escape(ord(text.decode())).encode()
    run = len(text) - (len(escape) if escape else 0)
    if escape is None or run % 2 == 0:  # no escape, or the backslash before it is escaped
        return text
    code = _SHORT[escape] if len(escape) == 1 else int(escape[3:], 16)
    if code in (0x09, 0x0A):  # tab and newline are shown as they are
        return text
    return text[: run - 1] + b"\\\\" + _escape(code)[1:].encode()


def shown_json(body: bytes) -> bytes:
    """Compact UTF-8 JSON ``body`` with every string in it as :func:`shown` makes it (the
    same document otherwise): ``loads(shown_json(dumps(x)))`` is ``x`` with each string
    ``s`` replaced by ``shown(s)``. ``body`` itself when nothing in it needs escaping."""
    if len(body.translate(None, _JSON_STARTS)) == len(body):
        return body  # none of the bytes a match starts with (one C pass)
    starts: list[int] = []
    for byte in _JSON_STARTS:
        needle = bytes((byte,))
        at = body.find(needle)
        while at != -1:
            starts.append(at)
            at = body.find(needle, at + 1)
    starts.sort()
    parts: list[bytes] = []
    done = 0  # body[:done] is dealt with
    for at in starts:
        if at < done:  # inside a run of backslashes already matched
            continue
        match = _JSON_UNSAFE.match(body, at)
        if match is None:
            continue
        instead = _json_escape(match)
        if instead != match.group():
            parts += (body[done:at], instead)
        else:
            parts.append(body[done : match.end()])
        done = match.end()
    if not parts:
        return body
    parts.append(body[done:])
    return b"".join(parts)


class ShownFormatter(logging.Formatter):
    """A log formatter whose lines (tracebacks included) go through :func:`shown`: a log
    line that quotes a bot cannot drive the terminal or the log viewer it is read in."""

    def format(self, record: logging.LogRecord) -> str:
        return shown(super().format(record))


def log_to_stderr(level: int, fmt: str) -> None:
    """``logging.basicConfig(level=level, format=fmt)`` with a :class:`ShownFormatter` (a
    no-op, like basicConfig, when the root logger has handlers already)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(ShownFormatter(fmt))
    logging.basicConfig(level=level, handlers=[handler])
