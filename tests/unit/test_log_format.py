"""``--log-format json``: one JSON object a line with the match, season, job and worker."""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Iterator

import pytest

from saloon.arena.cli import build_parser
from saloon.referee.cli import UsageError
from saloon.worker.logs import configure_logging, log_context, set_log_context


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    set_log_context(worker="")


def _lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_json_lines_carry_time_level_logger_message_and_the_context(
    restore_logging: None,
) -> None:
    out = io.StringIO()
    configure_logging("json", stream=out)
    log = logging.getLogger("saloon.test")
    set_log_context(worker="w-1")
    log.info("plain %s", "line")
    with log_context(job="job-7", season="spring", match="spring-3"):
        log.warning('a "quoted"\nmultiline message')
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            log.exception("failed")
    log.info("after", extra={"match": "given"})
    first, second, third, fourth = _lines(out)
    assert set(first) == {"time", "level", "logger", "message", "worker"}
    assert first["level"] == "INFO" and first["logger"] == "saloon.test"
    assert first["message"] == "plain line" and first["worker"] == "w-1"
    assert str(first["time"]).endswith("Z") and "T" in str(first["time"])
    assert second == {
        "time": second["time"],
        "level": "WARNING",
        "logger": "saloon.test",
        "message": 'a "quoted"\nmultiline message',
        "job": "job-7",
        "season": "spring",
        "match": "spring-3",
        "worker": "w-1",
    }
    assert "RuntimeError: boom" in str(third["exception"])
    assert fourth["match"] == "given" and "season" not in fourth  # the block is over


def test_the_process_wide_worker_name_reaches_other_threads_the_block_does_not(
    restore_logging: None,
) -> None:
    out = io.StringIO()
    configure_logging("json", stream=out)
    set_log_context(worker="w-2")
    with log_context(match="m-1"):
        thread = threading.Thread(target=logging.getLogger("saloon.keeper").info, args=("tick",))
        thread.start()
        thread.join(5)
    [line] = _lines(out)
    assert line["worker"] == "w-2" and "match" not in line


def test_text_stays_the_default_and_unknown_formats_are_refused(restore_logging: None) -> None:
    parser = build_parser()
    assert parser.parse_args(["serve"]).log_format == "text"
    assert parser.parse_args(["worker"]).log_format == "text"
    assert parser.parse_args(["worker", "--log-format", "json"]).log_format == "json"
    with pytest.raises(UsageError, match="xml"):
        parser.parse_args(["serve", "--log-format", "xml"])
    out = io.StringIO()
    configure_logging("text", stream=out)
    logging.getLogger("saloon.test").info("hello")
    assert out.getvalue().rstrip().endswith("saloon.test: hello")
    with pytest.raises(ValueError, match="log format"):
        configure_logging("yaml")


def test_a_bots_words_in_a_json_line_are_escaped_as_in_text(restore_logging: None) -> None:
    out = io.StringIO()
    configure_logging("json", stream=out)
    logging.getLogger("saloon.test").warning("fault: %s", "exe.\u202egnp \x1b[2J\x9b")
    [line] = _lines(out)
    assert line["message"] == "fault: exe.\\u202egnp \\x1b[2J\\x9b"
    assert "\u202e" not in out.getvalue() and "\x1b" not in out.getvalue()
