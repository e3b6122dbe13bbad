"""A bot's stderr marked by decision (saloon.sdk.output) and split again by the referee."""

from __future__ import annotations

import io

from saloon.referee.record import StderrBlock, stderr_blocks
from saloon.sdk.output import MarkedStream, split_marked, unmarked


def test_marks_only_moments_with_output_and_split_them_back() -> None:
    raw = io.StringIO()
    stream = MarkedStream(raw)
    stream.write("loading\n")
    stream.at("start")
    stream.at("decision 3")
    stream.write("half a line")  # the next mark starts its own line
    stream.at("decision 5")
    stream.at("decision 7")
    stream.write("seven\n")
    stream.at("end")
    assert split_marked(raw.getvalue()) == [
        ("load", ["loading"]),
        ("decision 3", ["half a line"]),
        ("decision 7", ["seven"]),
    ]
    assert unmarked(raw.getvalue()).splitlines() == [
        "loading",
        "[decision 3]",
        "half a line",
        "[decision 7]",
        "seven",
    ]
    assert stderr_blocks(1, raw.getvalue())[1] == StderrBlock(1, "decision", 3, ("half a line",))


def test_unmarked_text_is_one_load_block() -> None:
    assert split_marked("Traceback\n  boom\n") == [("load", ["Traceback", "  boom"])]
    assert split_marked("") == []


def test_a_partial_line_is_written_at_once() -> None:
    """Regression: a bot's last print(..., end="") waited in the buffer and was lost when
    the runtime was ended at the match's end."""

    class Counting(io.StringIO):
        flushes = 0

        def flush(self) -> None:
            self.flushes += 1

    raw = Counting()
    stream = MarkedStream(raw)
    stream.at("decision 9")
    stream.write("no newline")
    assert raw.flushes >= 1 and raw.getvalue().endswith("no newline")
