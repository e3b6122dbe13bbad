"""Writes one file in its temp dir 1 MiB at a time until refused, stopping at BOUND_MIB."""

import os
import sys
import tempfile
from typing import Any

from saloon.sdk import Bot, Decision, MatchInfo

BOUND_MIB = 256


class FileSize(Bot):
    def on_match_start(self, info: MatchInfo) -> None:
        written, error = 0, "none"
        chunk = b"x" * (1024 * 1024)
        with tempfile.NamedTemporaryFile(dir=os.environ.get("TMPDIR")) as out:
            try:
                while written < BOUND_MIB:
                    out.write(chunk)
                    out.flush()
                    written += 1
            except OSError as exc:
                error = repr(exc)
        print(f"wrote {written} MiB refused by {error}", file=sys.stderr, flush=True)

    def act(self, decision: Decision[Any, Any]) -> Any:
        return decision.legal[0]
