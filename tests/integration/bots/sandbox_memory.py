"""Allocates memory in act until stopped, and stops by itself at BOUND_MIB if never stopped."""

import sys
from typing import Any

from saloon.sdk import Bot, Decision

CHUNK_MIB = 32
BOUND_MIB = 2048


class MemoryBomb(Bot):
    def act(self, decision: Decision[Any, Any]) -> Any:
        held = []
        for _ in range(BOUND_MIB // CHUNK_MIB):
            held.append(bytearray(CHUNK_MIB * 1024 * 1024))  # address space, not touched
        print(f"NOT CONTAINED: held {BOUND_MIB} MiB", file=sys.stderr, flush=True)
        del held
        return decision.legal[0]
