"""The platform's log lines: text for a terminal (the default) or JSON for a log system.

``saloon serve`` and ``saloon worker`` take ``--log-format text|json``. JSON is one object
a line, with ``time`` (ISO 8601, UTC, milliseconds), ``level``, ``logger``, ``message``,
``exception`` (the traceback, when there is one) and, where there is one, the ``match``,
``season``, ``job`` and ``worker`` the line is about. Those four come from context
variables set by whoever knows them (a worker names itself once; a job sets its job,
season and match around the play: :func:`log_context`), so any module's logger carries them
without passing them along; a log call's ``extra={"match": ...}`` overrides them. Every
string goes through :func:`saloon.referee.shown.shown` first, as the text format's lines
do: a bot's words in a line (a fault's message) cannot drive a terminal or a log viewer.

Decision: the standard library's logging with a formatter and a filter, no new dependency
(structlog and python-json-logger would add one for what fits in this module).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TextIO

from saloon.referee.shown import ShownFormatter, shown

#: The formats ``--log-format`` takes; text is the default.
LOG_FORMATS = ("text", "json")
#: The text format (unchanged from before the JSON format existed).
TEXT_FORMAT = "%(asctime)s %(name)s: %(message)s"
#: The context fields a JSON line carries when set.
CONTEXT_FIELDS = ("match", "season", "job", "worker")

_context: dict[str, ContextVar[str]] = {
    name: ContextVar(f"saloon_log_{name}", default="") for name in CONTEXT_FIELDS
}
#: Process-wide values (a worker's name): every thread's lines carry them.
_process: dict[str, str] = {}


def set_log_context(**fields: str) -> None:
    """Set context fields for the whole process, every thread (a worker's name, once it
    has one); :func:`log_context` overrides them in a block."""
    for name, value in fields.items():
        if name not in _context:
            raise ValueError(f"log context field {name!r}: one of {', '.join(CONTEXT_FIELDS)}")
        _process[name] = value


@contextlib.contextmanager
def log_context(**fields: str) -> Iterator[None]:
    """Context fields (``match``, ``season``, ``job``, ``worker``) for the lines logged in
    this block; restored after it."""
    tokens = [(_context[name], _context[name].set(value)) for name, value in fields.items()]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


def current_log_context() -> dict[str, str]:
    """The context fields set now (empty ones left out)."""
    fields = {name: var.get() or _process.get(name, "") for name, var in _context.items()}
    return {name: value for name, value in fields.items() if value}


class ContextFilter(logging.Filter):
    """Puts the context fields on each record (as attributes) unless it has them already."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, var in _context.items():
            if not getattr(record, name, ""):
                setattr(record, name, var.get() or _process.get(name, ""))
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        line: dict[str, object] = {
            "time": f"{seconds}.{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": shown(record.getMessage()),
        }
        for name in CONTEXT_FIELDS:
            value = getattr(record, name, "")
            if value:
                line[name] = shown(str(value))
        if record.exc_info:
            line["exception"] = shown(self.formatException(record.exc_info))
        elif record.exc_text:
            line["exception"] = shown(record.exc_text)
        if record.stack_info:
            line["stack"] = shown(self.formatStack(record.stack_info))
        return json.dumps(line, ensure_ascii=False, default=str)


def add_log_format_argument(parser: argparse.ArgumentParser) -> None:
    """``--log-format text|json`` on an argparse parser."""
    parser.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default="text",
        help="log lines as text (default) or as JSON, one object a line (for a log system)",
    )


def configure_logging(
    fmt: str = "text", level: int = logging.INFO, stream: TextIO | None = None
) -> logging.Handler:
    """Send the root logger's lines to ``stream`` (stderr) in ``fmt``, at ``level``; any
    handler configured before is replaced. The handler."""
    if fmt not in LOG_FORMATS:
        raise ValueError(f"log format {fmt!r}: one of {', '.join(LOG_FORMATS)}")
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.addFilter(ContextFilter())
    handler.setFormatter(JsonFormatter() if fmt == "json" else ShownFormatter(TEXT_FORMAT))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    return handler
