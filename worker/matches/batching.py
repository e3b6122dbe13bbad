"""How a season's schedule is cut into queue jobs: how many matches a job carries (from
measured match times, or a setting: ``season start --batch N``), and where each job starts.

A job has a fixed cost besides its matches: RQ's two Redis round trips, the claim and the
last record statement waited for, the job's own start; each round trip after a match of
CPU work also pays the wake-up of a server that slept through it (~0.5 ms here). A match of
a few milliseconds (Seas of Strife, house bots) paid it in full, more than the match
itself. A batch of B matches pays it once; B is chosen so that a job plays about
TARGET_JOB_MS, at most MAX_BATCH, and at most a MIN_JOBS-th of the season.

Few large jobs leave the workers unevenly loaded at a season's end (the last big job runs
alone), so a season's jobs are TAPERED (:class:`JobLayout`): full jobs of B matches first,
then jobs of B/2, B/4, B/8 and, last, B/16 (at least 1): the tail together is about one
full job, and the last jobs are short, so workers that take jobs as they free up end
within a short job of each other. A 288-match season at B = 144 is 6 jobs (77, 76, 72,
36, 18, 9) where uniform jobs of 18 (16 jobs) were needed before for the same spread.

The match time is the median of the game's latest recorded matches in the store
(``timing.match_ms``); with none, and only house bots seated (in-process, cheap), the
first match of the season played once here, unrecorded; else one match a job. The size and
the layout are fixed at the season's first start and kept in the store (seasons.batch,
seasons.batch_tapered; seasons started before tapering keep their uniform jobs), so every
later ``start`` and every keeper finds the same jobs. The layout changes which job
carries a match, never the schedule, a seed or a result.
"""

from __future__ import annotations

import bisect
import functools
import logging
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from saloon.sdk.botref import HOUSE, parse_entry
from saloon.worker.matches.spec import MatchSpec
from saloon.worker.store.store import Store

log = logging.getLogger(__name__)

#: A batch aims at about this much play: a job's fixed cost (~3-6 ms) is then ~1% of it.
TARGET_JOB_MS = 500.0
#: At most this many matches a job...
MAX_BATCH = 256
#: ... and at most a MIN_JOBS-th of the season's matches (so the season still splits into
#: MIN_JOBS full jobs, plus its tapered tail, about one more).
MIN_JOBS = 2
#: The tail's jobs, from the first to the last, carry B >> k matches for k in TAPER
#: (at least one each).
TAPER = (1, 2, 3, 4)
#: How many of the game's latest recorded matches the match time is measured on.
HISTORY = 16


def batch_size(match_ms: float | None, matches: int) -> int:
    """Matches per full job for matches of ``match_ms`` each (None: unknown, one a job)
    in a season of ``matches``."""
    if match_ms is None or matches <= 1:
        return 1
    wanted = math.ceil(TARGET_JOB_MS / max(match_ms, 0.01))
    spread = max(1, matches // MIN_JOBS)
    return max(1, min(wanted, spread, MAX_BATCH))


@dataclass(frozen=True)
class JobLayout:
    """How the ``total`` matches of a season's schedule are cut into jobs of consecutive
    matches: ``size`` a job (1: a job per match), the tail tapered when ``tapered``
    (see the module docstring). A job is named after its first match."""

    size: int = 1
    total: int = 0
    tapered: bool = False

    def starts(self) -> tuple[int, ...]:
        """The schedule index of every job's first match, in order."""
        return _starts(max(1, self.size), max(0, self.total), self.tapered)

    def first_of_job(self, index: int) -> int:
        """The index of the first match of the job that carries match ``index``."""
        if self.size <= 1:
            return index
        if not self.tapered:
            return index - index % self.size
        starts = self.starts()
        return starts[max(0, bisect.bisect_right(starts, index) - 1)] if starts else index


@functools.lru_cache(maxsize=256)
def _starts(size: int, total: int, tapered: bool) -> tuple[int, ...]:
    if size <= 1 or not tapered:
        return tuple(range(0, total, size))
    tail: list[int] = []  # the tail's job sizes, from the season's last job backwards
    left = total
    for k in reversed(TAPER):
        if left <= 0:
            break
        tail.append(min(left, max(1, size >> k)))
        left -= tail[-1]
    jobs = math.ceil(left / size) if left > 0 else 0
    front = [left // jobs + (1 if j < left % jobs else 0) for j in range(jobs)]
    starts, at = [], 0
    for n in [*front, *reversed(tail)]:
        starts.append(at)
        at += n
    return tuple(starts)


def measured_match_ms(store: Store, specs: Sequence[MatchSpec]) -> float | None:
    """The match time a season's batch size is measured on (see the module docstring)."""
    if not specs:
        return None
    history = store.recent_match_ms(specs[0].game, HISTORY)
    if history:
        return statistics.median(history)
    if all(parse_entry(ref).kind == HOUSE for ref in specs[0].seats):
        from saloon.worker.matches.play import play_spec

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
    """The full job size of a season of ``specs``: ``setting`` when given, else measured."""
    if setting is not None:
        return max(1, int(setting))
    return batch_size(measured_match_ms(store, specs), len(specs))
