"""How many matches of a season one queue job carries: from measured match times, or a
setting (``season start --batch N``).

A job has a fixed cost besides its matches: RQ's two Redis round trips, the claim and the
record statements, the job's own start (JOB_COST_MS, measured with bench/seasons.py). A
match of a few milliseconds (Seas of Strife, house bots) paid it in full, more than the
match itself. A batch of B matches pays it once; B is chosen so that a job plays about
TARGET_JOB_MS, capped so that the season still splits into MIN_JOBS jobs or more (several
workers share it evenly: with 2 workers the last job leaves at most 1/16 of the season to
one of them) and at MAX_BATCH.

The match time is the median of the game's latest recorded matches in the store
(``timing.match_ms``); with none, and only house bots seated (in-process, cheap), the
first match of the season played once here, unrecorded; else one match a job. The size is
fixed at the season's first start and kept in the store (seasons.batch), so every later
``start`` and every keeper finds the same jobs.
"""

from __future__ import annotations

import logging
import math
import statistics
from collections.abc import Sequence

from saloon.sdk.botref import HOUSE, parse_entry
from saloon.worker.seasons.spec import MatchSpec
from saloon.worker.store.store import Store

log = logging.getLogger(__name__)

#: A job's fixed cost besides its matches, ms (RQ, claim, record, job start; bench/seasons.py).
JOB_COST_MS = 4.0
#: A batch aims at about this much play: the fixed cost is then ~4% of it.
TARGET_JOB_MS = 100.0
#: At most this many matches a job...
MAX_BATCH = 64
#: ... and at least this many jobs a season (when it has that many matches).
MIN_JOBS = 16
#: How many of the game's latest recorded matches the match time is measured on.
HISTORY = 16


def batch_size(match_ms: float | None, matches: int) -> int:
    """Matches per job for matches of ``match_ms`` each (None: unknown, one a job) in a
    season of ``matches``."""
    if match_ms is None or matches <= 1:
        return 1
    wanted = math.ceil(TARGET_JOB_MS / max(match_ms, 0.01))
    spread = max(1, matches // MIN_JOBS)
    return max(1, min(wanted, spread, MAX_BATCH))


def measured_match_ms(store: Store, specs: Sequence[MatchSpec]) -> float | None:
    """The match time a season's batch size is measured on (see the module docstring)."""
    if not specs:
        return None
    history = store.recent_match_ms(specs[0].game, HISTORY)
    if history:
        return statistics.median(history)
    if all(parse_entry(ref).kind == HOUSE for ref in specs[0].seats):
        from saloon.worker.seasons.play import play_spec

        probe = play_spec(specs[0]).record.timing.get("match_ms")
        if isinstance(probe, int | float):
            log.info(
                "%s: no recorded %s match: one played here took %.1f ms",
                specs[0].season_id,
                specs[0].game,
                probe,
            )
            return float(probe)
    return None


def choose_batch(store: Store, specs: Sequence[MatchSpec], setting: int | None = None) -> int:
    """The batch size of a season of ``specs``: ``setting`` when given, else measured."""
    if setting is not None:
        return max(1, int(setting))
    return batch_size(measured_match_ms(store, specs), len(specs))
