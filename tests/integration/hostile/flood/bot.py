"""Floods stdout and stderr with 16 MiB each at import (bounded), then plays honestly."""

import os
import sys

LINE = b"x" * 1023 + b"\n"
for fd in (1, 2):
    for _ in range(16 * 1024):
        os.write(fd, LINE)
print("flood done", file=sys.stderr)


def act(decision):
    return decision.legal[0]
