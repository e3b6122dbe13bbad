"""Allocates and touches memory in 64 MiB steps up to 6 GiB: the memory limit must kill it."""

import sys

STEP = 64 * 1024 * 1024
BOUND = 6 * 1024 * 1024 * 1024
hoard = []


def act(decision):
    total = 0
    while total < BOUND:
        try:
            hoard.append(bytearray(b"\x01") * STEP)
        except MemoryError:
            hoard.clear()
            print("CONTAINED: MemoryError before the bound", file=sys.stderr)
            return decision.legal[0]
        total += STEP
    hoard.clear()
    raise RuntimeError(f"ESCAPED: allocated {total} bytes")
