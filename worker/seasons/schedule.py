"""Seasons and their schedules: a season expands deterministically into ordered match specs.

Round-robin, per round (docs/seasons.md states and the tests check these bounds):

* **Full set** (every 2-player game, and 3-6 seats while ``C(n, k) x k`` is at most
  :data:`FULL_SET_MAX_MATCHES`): every k-subset of the n participants plays once in each of
  its k rotated seatings. Every bot sits in every seat position exactly ``C(n-1, k-1)``
  times and every pair meets exactly ``k x C(n-2, k-2)`` times per round. For 2 players this
  is "every pair, in both seat orders".
* **Cyclic** (larger fields): table ``t`` (``t = 0..n-1``) seats participants
  ``t + d_0, ..., t + d_{k-1} (mod n)`` for an offset set ``D = {0 = d_0, ..., d_{k-1}}``
  chosen per round. Every bot sits in every seat position exactly once per round (so
  k matches per bot per round); a pair whose indices differ by ``delta`` meets once per
  ordered offset pair with difference ``delta``. Each round's ``D`` is picked greedily to
  even out the meeting counts accumulated so far: after any number of rounds, the meeting
  counts of any two pairs differ by at most :data:`CYCLIC_PAIR_SPREAD`.

Duplicate deals (``duplicate=True``): each table of the schedule (a pair, a k-subset, a
cyclic table) is one *deal*: one seed, replayed k times with the seats rotated so every
bot at the table plays every seat's hand. Matches of a deal share ``MatchSpec.deal``.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from saloon.games import get_game
from saloon.games.errors import GameError
from saloon.referee.errors import RefereeError
from saloon.referee.limits import (
    DEFAULT_LIMITS,
    DEFAULT_SANDBOX_LIMITS,
    MatchLimits,
    SandboxLimits,
)
from saloon.referee.seeds import derive_seed
from saloon.worker.errors import SeasonSpecError
from saloon.worker.matches.spec import MatchSpec, check_season_id, match_id
from saloon.worker.sandbox import SandboxKind

#: Largest round (in matches) played as the full set of k-subsets x rotations; above it
#: the cyclic schedule keeps a round at n matches.
FULL_SET_MAX_MATCHES = 120
#: Offset sets tried per round by the cyclic schedule (all of them when there are fewer).
CYCLIC_CANDIDATES = 3000
#: The bound on the cyclic schedule's pair meeting counts (max - min over all pairs),
#: after any number of rounds (tests/unit/test_schedule.py checks it with hypothesis).
CYCLIC_PAIR_SPREAD = 2
#: Most matches one season may schedule (a typo in rounds should not fill the queue).
MAX_SEASON_MATCHES = 100_000


class ScheduleKind(StrEnum):
    """How a season's participants are paired into matches."""

    ROUND_ROBIN = "round-robin"
    #: A continuous ladder's batch (saloon.arena.continuous): its matches are chosen by a
    #: matchmaker and stored with the season, never expanded from the spec.
    MATCHMAKER = "matchmaker"


@dataclass(frozen=True)
class SeasonSpec:
    """A season: who plays what, how often, under which limits (JSON-able)."""

    season_id: str
    game: str
    participants: tuple[str, ...]
    #: Seats per match (every match of a season has the same number).
    seats: int
    rounds: int = 1
    seed: int = 0
    kind: ScheduleKind = ScheduleKind.ROUND_ROBIN
    duplicate: bool = False
    options: dict[str, str | int] = field(default_factory=dict)
    limits: MatchLimits = DEFAULT_LIMITS
    sandbox_limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS
    sandbox: SandboxKind = SandboxKind.PROCESS

    def check(self) -> SeasonSpec:
        """The spec unchanged when it can be played; SeasonSpecError names what cannot."""
        check_season_id(self.season_id)
        try:
            game = get_game(self.game)
            game.check_players(self.seats)
            game.parse_options(self.options)
        except (GameError, RefereeError) as exc:
            raise SeasonSpecError(str(exc)) from None
        if len(set(self.participants)) != len(self.participants):
            raise SeasonSpecError("a season's participants must be distinct bots")
        if len(self.participants) < self.seats:
            raise SeasonSpecError(
                f"{len(self.participants)} participants cannot fill {self.seats} seats"
            )
        if not 1 <= self.rounds <= 10_000:
            raise SeasonSpecError(f"rounds {self.rounds} is out of range 1..10000")
        if not 0 <= self.seed < 2**63:
            raise SeasonSpecError(f"seed {self.seed} is out of range 0..2**63-1")
        total = matches_per_round(len(self.participants), self.seats, self.duplicate)
        if total * self.rounds > MAX_SEASON_MATCHES:
            raise SeasonSpecError(
                f"{total * self.rounds} matches is more than {MAX_SEASON_MATCHES} per season"
            )
        return self

    def to_json(self) -> dict[str, Any]:
        """The season as a JSON object (stored with the season)."""
        return {
            "season_id": self.season_id,
            "game": self.game,
            "participants": list(self.participants),
            "seats": self.seats,
            "rounds": self.rounds,
            "seed": self.seed,
            "kind": self.kind.value,
            "duplicate": self.duplicate,
            "options": dict(self.options),
            "limits": self.limits.to_json(),
            "sandbox_limits": self.sandbox_limits.to_json(),
            "sandbox": self.sandbox.value,
        }

    @classmethod
    def from_json(cls, raw: Any) -> SeasonSpec:
        """A season from its JSON form; SeasonSpecError names what is wrong."""
        if not isinstance(raw, dict):
            raise SeasonSpecError("a season spec is a JSON object")
        try:
            return cls(
                season_id=str(raw["season_id"]),
                game=str(raw["game"]),
                participants=tuple(str(p) for p in raw["participants"]),
                seats=int(raw["seats"]),
                rounds=int(raw.get("rounds", 1)),
                seed=int(raw.get("seed", 0)),
                kind=ScheduleKind(raw.get("kind", ScheduleKind.ROUND_ROBIN.value)),
                duplicate=bool(raw.get("duplicate", False)),
                options=dict(raw.get("options", {})),
                limits=MatchLimits.from_json(dict(raw.get("limits", {}))),
                sandbox_limits=SandboxLimits.from_json(dict(raw.get("sandbox_limits", {}))),
                sandbox=SandboxKind(raw.get("sandbox", SandboxKind.PROCESS.value)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SeasonSpecError(f"malformed season spec: {type(exc).__name__}: {exc}") from None


def uses_full_set(n: int, k: int) -> bool:
    """True when a round of n participants at k seats is the full set of k-subsets."""
    return k == 2 or math.comb(n, k) * k <= FULL_SET_MAX_MATCHES


def matches_per_round(n: int, k: int, duplicate: bool = False) -> int:
    """How many matches one round schedules."""
    if uses_full_set(n, k):
        return math.comb(n, k) * k
    return n * k if duplicate else n


def rotations(table: Sequence[int]) -> list[tuple[int, ...]]:
    """The k seatings of a table with the seats rotated (the table itself first)."""
    k = len(table)
    return [tuple(table[(p + r) % k] for p in range(k)) for r in range(k)]


def round_tables(n: int, k: int, offsets: Sequence[int] | None = None) -> list[tuple[int, ...]]:
    """One round's base tables (participant indices in seat order).

    Full set: every k-subset (sorted, lexicographic). Cyclic: table t seats t + d (mod n)
    for each offset d in ``offsets``.
    """
    if offsets is None:
        return list(itertools.combinations(range(n), k))
    return [tuple((t + d) % n for d in offsets) for t in range(n)]


class CyclicOffsets:
    """Chooses each round's offset set so pair meeting counts stay even (see module doc)."""

    def __init__(self, n: int, k: int, seed: int) -> None:
        self.n, self.k = n, k
        #: Meetings so far of a pair whose indices differ by delta (index delta, 0 unused).
        self.counts = [0] * n
        total = math.comb(n - 1, k - 1)
        if total <= CYCLIC_CANDIDATES:
            self.candidates = [(0, *rest) for rest in itertools.combinations(range(1, n), k - 1)]
        else:
            rng = random.Random(derive_seed(seed, f"offsets:{n}:{k}"))
            picks = {
                tuple(sorted(rng.sample(range(1, n), k - 1))) for _ in range(CYCLIC_CANDIDATES)
            }
            self.candidates = [(0, *rest) for rest in sorted(picks)]

    def _added(self, offsets: Sequence[int]) -> list[int]:
        added = [0] * self.n
        for p in offsets:
            for q in offsets:
                if p != q:
                    added[(q - p) % self.n] += 1
        return added

    def next(self) -> tuple[int, ...]:
        """The next round's offsets; updates the accumulated meeting counts."""
        best: tuple[tuple[int, int], tuple[int, ...], list[int]] | None = None
        for cand in self.candidates:
            added = self._added(cand)
            after = [c + a for c, a in zip(self.counts, added, strict=True)][1:]
            score = (max(after) - min(after), sum(x * x for x in after))
            if best is None or score < best[0]:
                best = (score, cand, added)
        if best is None:  # n == k is always the full set; kept for the type checker
            raise SeasonSpecError(f"no cyclic schedule for {self.n} participants at {self.k}")
        self.counts = [c + a for c, a in zip(self.counts, best[2], strict=True)]
        return best[1]


def _seatings(season: SeasonSpec) -> Iterator[tuple[tuple[int, ...], int | None]]:
    """(seating, deal group or None) for every match in schedule order."""
    n, k = len(season.participants), season.seats
    cyclic = None if uses_full_set(n, k) else CyclicOffsets(n, k, season.seed)
    group = 0
    for _ in range(season.rounds):
        tables = round_tables(n, k, None if cyclic is None else cyclic.next())
        for table in tables:
            if season.duplicate:
                for seating in rotations(table):
                    yield seating, group
                group += 1
            elif cyclic is None:
                for seating in rotations(table):
                    yield seating, None
            else:
                yield table, None


def expand(season: SeasonSpec) -> list[MatchSpec]:
    """The season's matches in schedule order, each with its own derived seed."""
    season.check()
    if season.kind is not ScheduleKind.ROUND_ROBIN:
        raise SeasonSpecError(f"a {season.kind.value} season's matches are stored, not expanded")
    out = []
    for index, (seating, deal) in enumerate(_seatings(season)):
        # A deal's matches share one seed: same shuffles, bots in rotated seats.
        seed = derive_seed(season.seed, f"deal:{deal}" if deal is not None else f"match:{index}")
        out.append(
            MatchSpec(
                match_id=match_id(season.season_id, index),
                game=season.game,
                seats=tuple(season.participants[i] for i in seating),
                seed=seed,
                options=dict(season.options),
                limits=season.limits,
                sandbox_limits=season.sandbox_limits,
                sandbox=season.sandbox,
                season_id=season.season_id,
                index=index,
                deal=deal,
            )
        )
    return out
