"""The engine contract every game implements.

A game is a :class:`GameSpec` (static metadata, options, a factory) plus a :class:`State`.
The referee, the conformance suite and the SDK reach games only through this contract.

Conventions (binding for every engine):

* Seats are ``0..n-1``; "clockwise" / "to the left" is ``i -> i+1 (mod n)``.
* :meth:`State.current_player` is a seat, :data:`CHANCE` or :data:`TERMINAL`.
* Seat actions are plain ``int`` codes, meaningful only to their game and decision kind;
  :meth:`State.legal_actions` lists them sorted ascending. :meth:`State.action_to_json`
  turns one into the typed JSON value that bots see; :meth:`State.action_to_string` into
  a short readable label.
* Chance (shuffles, deals, random draws) is a *chance node*: the referee asks the state to
  :meth:`State.sample_chance` an outcome from the match's seeded RNG, records the outcome
  in the action log and applies it with :meth:`State.apply_chance`. An outcome is a tuple
  of ints (a permutation for a shuffle, a single value for a pick), so the action log
  alone replays a match exactly, with no RNG at all.
* States are mutable: ``apply_*`` changes the state in place (it is the hot path; a copy
  per decision would halve engine speed). :meth:`State.clone` gives an independent copy
  for search. The referee is a state's only owner; observations are fresh values that
  share nothing with the state.
* Anything a bot or user can trigger raises a :class:`~saloon.referee.errors.RefereeError`
  subclass, never ``assert``: an illegal action leaves the state unchanged.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from saloon.games.errors import GameOptionError, IllegalActionError, SeatCountError

#: ``current_player()`` when the next event is a chance event.
CHANCE = -1
#: ``current_player()`` when the game is over.
TERMINAL = -2

#: A JSON value: what observations, typed actions and options are made of.
Json: TypeAlias = Any
#: A chance outcome: a permutation, a pick, ...; always a tuple of ints.
Outcome: TypeAlias = tuple[int, ...]
#: Game options after validation: name -> value (str or int).
Options: TypeAlias = dict[str, str | int]


@dataclass(frozen=True)
class OptionSpec:
    """One documented game option: a set of choices (all str or all int) or an int range."""

    name: str
    default: str | int
    help: str
    choices: tuple[str, ...] | tuple[int, ...] = ()
    int_range: tuple[int, int] | None = None

    def parse(self, raw: str | int) -> str | int:
        """Validate one raw value (from the CLI or a season spec) and return it typed."""
        if self.choices and isinstance(self.choices[0], int):
            try:
                number = int(raw)
            except (TypeError, ValueError):
                number = None
            if number is None or number not in self.choices:
                raise GameOptionError(
                    f"option {self.name}={raw!r}: expected one of {self.describe(', ')}"
                )
            return number
        if self.int_range is not None:
            lo, hi = self.int_range
            try:
                value = int(raw)
            except (TypeError, ValueError):
                raise GameOptionError(
                    f"option {self.name}={raw!r}: expected an integer from {lo} to {hi}"
                ) from None
            if not lo <= value <= hi:
                raise GameOptionError(
                    f"option {self.name}={value}: expected an integer from {lo} to {hi}"
                )
            return value
        text = str(raw)
        if text not in self.choices:
            raise GameOptionError(
                f"option {self.name}={text!r}: expected one of {self.describe(', ')}"
            )
        return text

    def describe(self, sep: str = "|") -> str:
        """The option's accepted values, for --help and `saloon games`."""
        if self.int_range is not None:
            return f"{self.int_range[0]}..{self.int_range[1]}"
        return sep.join(str(c) for c in self.choices)


@dataclass(frozen=True)
class GameSpec:
    """Static metadata of one versioned game, and its factory."""

    id: str
    name: str
    min_players: int
    max_players: int
    #: Decision kinds a seat can be asked (PLAY_CARD, ...), in a stable order.
    decision_kinds: tuple[str, ...]
    #: Kinds of chance events (DEAL, SHUFFLE, ...).
    chance_kinds: tuple[str, ...]
    #: True when fewer points is better (Seas of Strife, Seizure).
    lower_score_is_better: bool
    #: An upper bound on the number of log entries (actions + chance) of one game.
    max_length: int
    factory: Callable[[int, Options], State] = field(repr=False)
    options: tuple[OptionSpec, ...] = ()
    #: One line for `saloon games`.
    summary: str = ""
    #: ``from_observation(observation, rng) -> State``: a state the observing seat cannot
    #: tell apart from the true one, built from that seat's observation alone (taken when
    #: the seat is to decide), every hidden card dealt at random among the places it could
    #: be. What bots that search start from (``saloon.sdk.search``); None when the game
    #: offers none.
    from_observation: Callable[[dict[str, Json], random.Random], State] | None = field(
        default=None, repr=False
    )

    def parse_options(self, raw: Mapping[str, str | int] | None = None) -> Options:
        """Validate raw options and fill in defaults; unknown names are an error."""
        raw = dict(raw or {})
        known = {o.name: o for o in self.options}
        unknown = sorted(set(raw) - set(known))
        if unknown:
            listing = ", ".join(sorted(known)) or "none"
            raise GameOptionError(
                f"{self.id} has no option {unknown[0]!r} (its options: {listing})"
            )
        return {
            name: spec.parse(raw[name]) if name in raw else spec.default
            for name, spec in known.items()
        }

    def check_players(self, num_players: int) -> None:
        """Raise SeatCountError unless the game can be played by ``num_players`` seats."""
        if not self.min_players <= num_players <= self.max_players:
            span = (
                str(self.min_players)
                if self.min_players == self.max_players
                else f"{self.min_players} to {self.max_players}"
            )
            raise SeatCountError(f"{self.id} is played by {span} seats, not {num_players}")

    def new_game(self, num_players: int, options: Mapping[str, str | int] | None = None) -> State:
        """A fresh game (its first events are usually chance: the shuffle and deal)."""
        self.check_players(num_players)
        return self.factory(num_players, self.parse_options(options))


def competition_ranks(values: Sequence[float], lower_is_better: bool) -> list[int]:
    """Competition ranks, 0 best, ties shared, next rank skips (3,3,5 -> 0,0,2)."""
    sign = 1 if lower_is_better else -1
    keyed = [sign * v for v in values]
    return [sum(1 for other in keyed if other < mine) for mine in keyed]


class State(ABC):
    """The state of one game in progress. See the module docstring for the conventions.

    Subclasses compute legal actions in :meth:`_compute_legal` and apply a checked action in
    :meth:`_apply`; this class caches the legal list (``_legal``: set it to None whenever
    the state changes outside :meth:`apply_action`, e.g. in ``apply_chance``) and refuses an
    illegal action before anything changes.
    """

    __slots__ = ("_events", "_legal")

    _legal: list[int] | None
    _events: list[dict[str, Json]]

    spec: GameSpec
    num_players: int

    # -- whose turn -------------------------------------------------------------------
    @abstractmethod
    def current_player(self) -> int:
        """The seat to decide, :data:`CHANCE` or :data:`TERMINAL`."""

    def is_terminal(self) -> bool:
        """True once the game is over."""
        return self.current_player() == TERMINAL

    def is_chance(self) -> bool:
        """True when the next event is a chance event."""
        return self.current_player() == CHANCE

    @abstractmethod
    def decision_kind(self) -> str:
        """The kind of the pending decision (a seat kind or a chance kind); "" at terminal."""

    # -- seat decisions ---------------------------------------------------------------
    def legal_actions(self) -> list[int]:
        """The pending seat's legal actions, sorted; empty at chance and terminal nodes."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return list(legal)

    def apply_action(self, action: int) -> None:
        """Play a legal action for the pending seat; IllegalActionError changes nothing."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if action not in legal:
            kind = self.decision_kind() or "action"
            raise IllegalActionError(f"{action!r} is not a legal {kind} here (legal: {legal})")
        self._legal = None
        self._apply(action)

    def take_events(self) -> list[dict[str, Json]]:
        """The public events (a trick won, a stack taken, a round scored...) caused since
        the last call, as JSON objects ``{"event": name, ...}``, and forget them. Every seat
        may see them; the referee records them with the action or chance event that caused
        them (docs/match-record.md). They change no rule: engines only report."""
        events: list[dict[str, Json]] | None = getattr(self, "_events", None)
        if not events:
            return []
        self._events = []
        return events

    def _emit(self, event: str, **data: Json) -> None:
        """Record one public event of the action being applied (engines call this)."""
        if not hasattr(self, "_events"):
            self._events = []
        self._events.append({"event": event, **data})

    @abstractmethod
    def _compute_legal(self) -> list[int]:
        """The legal actions of the pending decision, sorted (uncached)."""

    @abstractmethod
    def _apply(self, action: int) -> None:
        """Apply an action already checked to be legal."""

    @abstractmethod
    def action_to_json(self, action: int) -> Json:
        """The typed JSON value of one action of the pending decision, as bots see it."""

    @abstractmethod
    def action_to_string(self, action: int) -> str:
        """A short readable label of one action of the pending decision."""

    # -- chance -----------------------------------------------------------------------
    @abstractmethod
    def sample_chance(self, rng: random.Random) -> Outcome:
        """Draw the pending chance event's outcome from ``rng`` (does not apply it)."""

    @abstractmethod
    def apply_chance(self, outcome: Sequence[int]) -> None:
        """Apply a chance outcome (validated: a malformed one changes nothing)."""

    def outcome_to_string(self, outcome: Sequence[int]) -> str:
        """A short readable label of a chance outcome of the pending chance event."""
        return " ".join(str(x) for x in outcome)

    # -- information ------------------------------------------------------------------
    @abstractmethod
    def observation(self, seat: int) -> dict[str, Json]:
        """Everything ``seat`` may know now, as a fresh JSON object; nothing else."""

    @abstractmethod
    def resample_hidden(self, seat: int, rng: random.Random) -> State:
        """A copy that ``seat`` cannot tell apart from this state: every card the seat
        cannot know is redealt at random among the places it could be. Used by the leak
        check (observations must be equal) and by bots that search (determinization)."""

    @abstractmethod
    def cards(self) -> dict[str, list[int]]:
        """Every card id by zone (hands, piles, table...), for conservation checks."""

    # -- results ----------------------------------------------------------------------
    @abstractmethod
    def scores(self) -> list[float]:
        """Each seat's points in the game's own unit (running total before the end)."""

    def ranks(self) -> list[int]:
        """Final competition ranks (0 best, ties shared); meaningful at terminal."""
        return competition_ranks(self.scores(), self.spec.lower_score_is_better)

    # -- misc -------------------------------------------------------------------------
    @abstractmethod
    def clone(self) -> State:
        """An independent copy."""

    @abstractmethod
    def render(self) -> str:
        """A readable multi-line dump of the whole state (for playthroughs and debugging)."""
