"""Regenerate every golden playthrough file: ``python tests/golden/regen.py``.

Run it after a deliberate rule change (and bump the game's version), then review the diff.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from saloon.referee.playthrough import playthrough
from tests.golden.cases import CASES, HERE


def main() -> int:
    for name, game, players, seed, options in CASES:
        (HERE / name).write_text(playthrough(game, players, seed, options), encoding="utf-8")
        print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
