"""The match loop: one game, one seat per player, faults contained, everything recorded.

The loop knows no game: it reaches the engine through the contract (games/base.py)
and the bots through :class:`~saloon.referee.seats.Seat`.

Fault policy (docs/match-record.md): a late, invalid or malformed answer is a fault; the
seat gets the decision's default action (the first legal one) and a strike. A crash, or
reaching the strike limit, hands the seat to house:random for the rest of the match and
ranks it last. The match always finishes with a valid record.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Mapping, Sequence

from saloon.games import CHANCE, TERMINAL, GameSpec, State, get_game
from saloon.referee.faults import Fault, FaultKind, SeatFault
from saloon.referee.limits import DEFAULT_LIMITS, MatchLimits, wall_cap_ms
from saloon.referee.record import AbortReason, LogEntry, MatchRecord, Note, Outcome, SeatInfo
from saloon.referee.seats import (
    DecisionRequest,
    EndInfo,
    InProcessSeat,
    Seat,
    SeatFactory,
    StartInfo,
)
from saloon.referee.seeds import LOCAL_PREFIX, bot_match_id, bot_seed, derive_seed
from saloon.sdk.botref import HOUSE_PREFIX
from saloon.sdk.house.random_bot import RandomBot

log = logging.getLogger(__name__)


def final_ranks(engine_ranks: Sequence[int], played_out: Sequence[int]) -> list[int]:
    """The engine's ranks, with played-out seats moved below every other seat (sharing last).

    Without played-out seats these are the engine's ranks unchanged: an engine whose rules
    rank ties densely (Seizure ``end=gap``: ``[0, 0, 1]``) keeps them so. With played-out
    seats, the kept seats keep their order and ties, renumbered in the engine's own style:
    competition ranks (``[0, 0, 2]``) close up by the seats removed above them, dense ranks
    (``[0, 0, 1]``) by the rank groups removed entirely above them.
    """
    out = set(played_out)
    n = len(engine_ranks)
    if not out:
        return list(engine_ranks)
    kept = [s for s in range(n) if s not in out]
    competition = all(r == sum(1 for q in engine_ranks if q < r) for r in engine_ranks)
    kept_values = {engine_ranks[s] for s in kept}
    ranks = [0] * n
    for seat in kept:
        rank = engine_ranks[seat]
        if competition:
            shift = sum(1 for t in out if engine_ranks[t] < rank)
        else:
            shift = len({engine_ranks[t] for t in out if engine_ranks[t] < rank} - kept_values)
        ranks[seat] = rank - shift
    last = len(kept) if competition else max((ranks[s] for s in kept), default=-1) + 1
    for seat in out:
        ranks[seat] = last
    return ranks


class _Aborted(Exception):
    """Raised inside the loop when the match must stop before the game ends."""

    def __init__(self, reason: AbortReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


class _SeatClock:
    """One seat's time bank and strikes."""

    __slots__ = ("bank_ms", "played_out", "strikes")

    def __init__(self, bank_ms: int) -> None:
        self.bank_ms = bank_ms
        self.strikes = 0
        self.played_out = False


class Match:
    """One match being played; :meth:`run` plays it to the end and returns the record."""

    def __init__(
        self,
        game: GameSpec,
        seats: Sequence[Seat],
        seed: int,
        options: Mapping[str, str | int] | None = None,
        limits: MatchLimits = DEFAULT_LIMITS,
        match_id: str | None = None,
        wall_ms: int | None = None,
        seed_label: str | None = None,
    ) -> None:
        """``wall_ms`` caps the whole match (default: saloon.referee.limits.wall_cap_ms);
        ``seed_label`` names the match in its bots' seeds (default: the match id; a season
        match: its place in the season, so the same season spec records the same matches
        under any season id)."""
        self.game = game
        self.seats = list(seats)
        self.state: State = game.new_game(len(self.seats), options)
        self.options = game.parse_options(options)
        self.seed = seed
        self.limits = limits
        self.match_id = match_id or f"{LOCAL_PREFIX}{game.id}-{seed}"
        #: What names the match in its bots' seeds and told id (see __init__).
        self.seed_label = seed_label or self.match_id
        if wall_ms is None:
            wall_ms = wall_cap_ms(limits, len(self.seats), game.max_length)
        self.wall_ms = wall_ms
        self.record = MatchRecord(
            match_id=self.match_id,
            game=game.id,
            options=self.options,
            seed=seed,
            seats=[
                SeatInfo(i, s.bot_id, s.bot_version, s.sandbox) for i, s in enumerate(self.seats)
            ],
            limits=limits,
        )
        self._chance_rng = random.Random(derive_seed(seed, "chance"))
        self._clocks = [_SeatClock(limits.bank_ms) for _ in self.seats]
        self._fallback: dict[int, Seat] = {}
        self._timings: list[list[int]] = []
        self._deadline = 0.0  # perf_counter() time at which the match is aborted

    # -- the loop ---------------------------------------------------------------------
    def run(self) -> MatchRecord:
        """Play the match to its end; never raises for anything a bot does."""
        started = time.perf_counter()
        self._deadline = started + self.wall_ms / 1000
        try:
            for seat in self.seats:
                seat.launch()
            for seat_index, seat in enumerate(self.seats):
                self._start(seat_index, seat)
            try:
                self._play()
                record = self._finish()
            except _Aborted as abort:
                record = self._abort(abort)
        finally:
            for seat in [*self.seats, *self._fallback.values()]:
                seat.close()
        record.timing = {
            "match_ms": round((time.perf_counter() - started) * 1000, 3),
            "decisions_us": self._timings,
        }
        return record

    def _start(self, seat_index: int, seat: Seat) -> None:
        # The bot is told an opaque match id and a seed of its own, both from the match
        # seed (secret while its season runs): neither names its match or its deal.
        info = StartInfo(
            match_id=bot_match_id(self.seed, self.seed_label, seat_index),
            game=self.game.id,
            options=dict(self.options),
            seat=seat_index,
            num_seats=len(self.seats),
            seed=bot_seed(self.seed, self.seed_label, seat_index),
            decision_ms=self.limits.decision_ms,
            bank_ms=self.limits.bank_ms,
            start_ms=self.limits.start_ms,
        )
        try:
            seat.start(info)
        except SeatFault as fault:
            self._fault(seat_index, fault.kind, -1, fault.detail)
            self._play_out(seat_index)

    def _play(self) -> None:
        state = self.state
        log_entries = self.record.log
        limit = self.game.max_length
        while True:
            player = state.current_player()
            if player == TERMINAL:
                return
            if len(log_entries) >= limit:
                raise _Aborted(AbortReason.MAX_LENGTH, f"the log reached max_length {limit}")
            if time.perf_counter() > self._deadline:
                raise _Aborted(AbortReason.WALL_CLOCK, f"ran past its {self.wall_ms} ms cap")
            kind = state.decision_kind()
            if player == CHANCE:
                outcome = state.sample_chance(self._chance_rng)
                state.apply_chance(outcome)
                events = tuple(state.take_events())
                log_entries.append(LogEntry(None, kind, outcome=outcome, events=events))
                continue
            legal = state.legal_actions()
            clock = self._clocks[player]
            auto = fallback = False
            if clock.played_out:
                action = legal[self._ask(self._fallback[player], player, kind, legal)]
                fallback = True
            elif len(legal) == 1:
                action = legal[0]
                auto = True
            else:
                action = self._decide(player, kind, legal)
            state.apply_action(action)
            events = tuple(state.take_events())
            log_entries.append(
                LogEntry(player, kind, action, auto=auto, fallback=fallback, events=events)
            )

    def _ask(self, seat: Seat, player: int, kind: str, legal: list[int]) -> int:
        state = self.state
        request = DecisionRequest(
            index=len(self.record.log),
            kind=kind,
            observation=state.observation(player),
            legal=[state.action_to_json(a) for a in legal],
            decision_ms=self.limits.decision_ms,
            bank_ms=self._clocks[player].bank_ms,
        )
        index = seat.decide(request)
        if not isinstance(index, int) or not 0 <= index < len(legal):
            raise SeatFault(FaultKind.INVALID, f"answer {index!r} is not an index of {len(legal)}")
        return index

    def _decide(self, player: int, kind: str, legal: list[int]) -> int:
        seat = self.seats[player]
        clock = self._clocks[player]
        entry = len(self.record.log)
        started = time.perf_counter_ns()
        try:
            index = self._ask(seat, player, kind, legal)
        except SeatFault as fault:
            elapsed_us = (time.perf_counter_ns() - started) // 1000
            self._timings.append([entry, player, elapsed_us])
            self._fault(player, fault.kind, entry, fault.detail)
            if fault.kind is FaultKind.TIMEOUT:
                clock.bank_ms = 0  # the seat waited out the deadline and the whole bank
            if fault.fatal:
                self._play_out(player)
                return legal[self._ask(self._fallback[player], player, kind, legal)]
            self._strike(player)
            return legal[0]
        elapsed_us = (time.perf_counter_ns() - started) // 1000
        self._timings.append([entry, player, elapsed_us])
        for text in seat.take_notes():
            self.record.notes.append(Note(player, entry, text))
        if seat.timed:
            over_ms = elapsed_us / 1000 - self.limits.decision_ms
            if over_ms > 0:
                clock.bank_ms -= int(over_ms + 0.999)
                if clock.bank_ms < 0:
                    clock.bank_ms = 0
                    self._fault(player, FaultKind.TIMEOUT, entry, f"answered after {elapsed_us} us")
                    self._strike(player)
                    return legal[0]
        return legal[index]

    # -- faults -----------------------------------------------------------------------
    def _fault(self, player: int, kind: FaultKind, entry: int, detail: str) -> None:
        log.warning(
            "%s: seat %d %s at entry %d: %s", self.match_id, player, kind.value, entry, detail
        )
        self.record.faults.append(Fault(player, kind, entry, detail))

    def _strike(self, player: int) -> None:
        clock = self._clocks[player]
        clock.strikes += 1
        if clock.strikes >= self.limits.strike_limit:
            self._play_out(player)

    def _play_out(self, player: int) -> None:
        """Hand the seat to house:random for the rest of the match; it will rank last."""
        clock = self._clocks[player]
        if clock.played_out:
            return
        clock.played_out = True
        self.record.played_out.append(player)
        self.seats[player].close()
        fallback = InProcessSeat(RandomBot(), f"{HOUSE_PREFIX}random")
        fallback.start(
            StartInfo(
                match_id=self.match_id,
                game=self.game.id,
                options=dict(self.options),
                seat=player,
                num_seats=len(self.seats),
                seed=derive_seed(self.seed, f"fallback:{player}"),
                decision_ms=self.limits.decision_ms,
                bank_ms=self.limits.bank_ms,
            )
        )
        self._fallback[player] = fallback

    # -- the end ----------------------------------------------------------------------
    def _abort(self, abort: _Aborted) -> MatchRecord:
        """The record of a match stopped before the game ended: no scores, no ranks."""
        log.warning("%s: aborted (%s): %s", self.match_id, abort.reason.value, abort)
        record = self.record
        record.played_out.sort()
        record.outcome = Outcome.ABORTED
        record.abort_reason = abort.reason
        return record

    def _finish(self) -> MatchRecord:
        record = self.record
        record.played_out.sort()
        record.scores = self.state.scores()
        record.ranks = final_ranks(self.state.ranks(), record.played_out)
        end = EndInfo(list(record.scores), list(record.ranks))
        for seat in self.seats:
            seat.finish(end)
        return record


def play_match(
    game_id: str,
    seats: Sequence[Seat],
    seed: int,
    options: Mapping[str, str | int] | None = None,
    limits: MatchLimits = DEFAULT_LIMITS,
    match_id: str | None = None,
    wall_ms: int | None = None,
) -> MatchRecord:
    """Play one match of ``game_id`` between ``seats`` and return its record."""
    return Match(get_game(game_id), seats, seed, options, limits, match_id, wall_ms).run()


def play_local(
    game_id: str,
    bots: Sequence[str],
    seed: int,
    options: Mapping[str, str | int] | None = None,
    limits: MatchLimits = DEFAULT_LIMITS,
) -> MatchRecord:
    """Play one match between bots given as ``house:NAME``, paths or ``grpc:TARGET``."""
    return Match(get_game(game_id), local_seats(game_id, bots), seed, options, limits).run()


def local_seats(
    game_id: str,
    bots: Sequence[str],
    debug: bool = False,
    sandbox: str = "process",
    kinds: Mapping[str, SeatFactory] | None = None,
) -> list[Seat]:
    """One seat per bot spec, after checking the game takes that many seats.

    ``debug``: bot paths play in-process and their exceptions propagate (see resolve_seat);
    ``sandbox``: where bare bot paths run otherwise (the local process by default);
    ``kinds``: the seat kinds of higher layers (``docker``), by name.
    """
    from saloon.referee.bots import resolve_seat

    get_game(game_id).check_players(len(bots))
    return [resolve_seat(spec, game_id, debug, sandbox, kinds) for spec in bots]
