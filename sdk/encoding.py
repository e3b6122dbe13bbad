"""A numeric encoding of every game's observation and legal actions, for learning bots.

What ``saloon.referee.training`` (the PettingZoo environment) gives a policy, built here
in plain Python so that the same policy plays in the arena through :class:`PolicyBot`
(the bot image has no numpy: there the policy gets lists; where numpy is installed,
arrays, as in the environment).

The observation of a seat is one flat vector (:func:`encode`), the same length at every
decision of a game (:func:`observation_size`):

* the decision kind, one-hot over the game's decision kinds;
* the seat, one-hot over the game's most seats;
* per card field of the observation (:attr:`Layout.card_fields`: the hand, the table...),
  a multi-hot over the deck's card ids (every card id found anywhere in the field);
* per seat field (:attr:`Layout.seat_fields`: hand sizes, points...), one number per
  seat, zero-padded to the most seats;
* the scalar fields (:attr:`Layout.scalar_fields`), as numbers (None as -1).

An action is the engine's action id (:func:`action_count` of them; the same id means a
card in one decision kind and a seat in another: the kind is in the observation), and the
action mask has a 1 at every legal id. The typed :class:`~saloon.sdk.bot.Decision` stays
beside it (the environment's ``info``), so a policy can also read the typed view.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from saloon.games import get_game
from saloon.sdk.bot import Bot, Decision, MatchInfo
from saloon.sdk.errors import SdkError
from saloon.sdk.search import determinize


class EncodingError(SdkError):
    """A game without an encoding, or an action the encoding has no room for."""


@dataclass(frozen=True)
class Layout:
    """How one game's observation becomes numbers."""

    #: Card ids run 0 .. deck - 1.
    deck: int
    #: Engine action ids run 0 .. actions - 1, in every decision kind.
    actions: int
    #: Observation keys holding cards (ids, or objects with an ``id`` or ``card``).
    card_fields: tuple[str, ...]
    #: Observation keys holding one number per seat.
    seat_fields: tuple[str, ...]
    #: Observation keys holding one number.
    scalar_fields: tuple[str, ...]


#: The encodings, by full game id (a new game version gets its own, never v1's).
LAYOUTS: dict[str, Layout] = {
    "seas-of-strife-v1": Layout(
        deck=75,
        actions=75,
        card_fields=("hand", "trick", "completed_tricks"),
        seat_fields=("hand_sizes", "tricks_taken", "points"),
        scalar_fields=("hand_number", "leader", "end_threshold"),
    ),
    "seizure-v1": Layout(
        deck=140,
        actions=140,
        card_fields=("hand", "play_pile", "reference", "known", "draw_pile_bottom"),
        seat_fields=("hand_sizes", "scores", "deals"),
        scalar_fields=(
            "round",
            "dealer",
            "deal_size",
            "draw_pile_size",
            "reference_value",
            "gives_left",
            "draws_in_a_row",
        ),
    ),
    "western-showdown-v1": Layout(
        deck=18,
        actions=129,
        card_fields=("hand", "draw_pile", "played", "locations"),
        seat_fields=("hand_sizes", "draw_pile_sizes", "won_sizes", "games_won"),
        scalar_fields=("reputation", "game_number", "best_of", "start_player"),
    ),
}


def layout(game_id: str) -> Layout:
    """The encoding of ``game_id``; EncodingError when it has none."""
    found = LAYOUTS.get(game_id)
    if found is None:
        raise EncodingError(f"{game_id} has no numeric encoding (known: {', '.join(LAYOUTS)})")
    return found


def observation_size(game_id: str) -> int:
    """The length of every observation vector of ``game_id``."""
    spec, lay = get_game(game_id), layout(game_id)
    return (
        len(spec.decision_kinds)
        + spec.max_players
        + lay.deck * len(lay.card_fields)
        + spec.max_players * len(lay.seat_fields)
        + len(lay.scalar_fields)
    )


def action_count(game_id: str) -> int:
    """How many action ids ``game_id`` has (the action space and the mask's length)."""
    return layout(game_id).actions


def _card_ids(value: Any, out: list[int]) -> None:
    """Every card id in a JSON value: ints in lists, ``id`` / ``card`` / ``cards`` of
    objects (a Western location's ``id`` is a location, not a card: its ``stack`` is)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        out.append(value)
    elif isinstance(value, list):
        for item in value:
            _card_ids(item, out)
    elif isinstance(value, dict):
        if "stack" in value:
            _card_ids(value["stack"], out)
        elif "id" in value and isinstance(value["id"], int):
            out.append(value["id"])
        else:
            for key in ("card", "cards"):
                if key in value:
                    _card_ids(value[key], out)


def encode(game_id: str, kind: str, raw_observation: dict[str, Any]) -> list[float]:
    """The seat's observation (its JSON, at a decision of ``kind``) as one flat vector."""
    spec, lay = get_game(game_id), layout(game_id)
    vector = [0.0] * observation_size(game_id)
    at = 0
    if kind in spec.decision_kinds:
        vector[spec.decision_kinds.index(kind)] = 1.0
    at += len(spec.decision_kinds)
    seat = raw_observation.get("seat")
    if isinstance(seat, int) and 0 <= seat < spec.max_players:
        vector[at + seat] = 1.0
    at += spec.max_players
    for key in lay.card_fields:
        ids: list[int] = []
        _card_ids(raw_observation.get(key), ids)
        for card in ids:
            if 0 <= card < lay.deck:
                vector[at + card] = 1.0
        at += lay.deck
    for key in lay.seat_fields:
        values = raw_observation.get(key) or []
        for index, value in enumerate(values[: spec.max_players]):
            vector[at + index] = float(value)
        at += spec.max_players
    for key in lay.scalar_fields:
        value = raw_observation.get(key)
        vector[at] = -1.0 if value is None else float(value)
        at += 1
    return vector


def mask(game_id: str, legal_ids: Sequence[int]) -> list[int]:
    """The action mask: 1 at every legal engine action id."""
    out = [0] * action_count(game_id)
    for action in legal_ids:
        if not 0 <= action < len(out):
            raise EncodingError(f"{game_id}: action id {action} is outside 0..{len(out) - 1}")
        out[action] = 1
    return out


def legal_ids(game_id: str, decision: Decision[Any, Any]) -> list[int]:
    """The engine action id of each of ``decision.legal``, in its order (from a state
    built from the observation: the ids are the engine's, the JSON is what the bot got)."""
    state = determinize(game_id, decision.raw_observation, random.Random(0))
    by_json = {_key(state.action_to_json(a)): a for a in state.legal_actions()}
    try:
        return [by_json[_key(raw)] for raw in decision.raw_legal]
    except KeyError as exc:
        raise EncodingError(f"{game_id}: no engine action for {exc.args[0]}") from None


def _key(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)


#: A policy: the observation dict (``observation``, ``action_mask``) and an info dict (the
#: typed ``decision``) in, an engine action id with a 1 in the mask out: what a policy
#: driven through the environment already is.
Policy = Callable[[dict[str, Any], dict[str, Any]], int]


def _arrays(observation: list[float], action_mask: list[int]) -> dict[str, Any]:
    """The observation dict, as numpy arrays where numpy is installed (the environment's
    types), else as lists (the arena's bot image has no numpy)."""
    try:
        numpy = importlib.import_module("numpy")
    except ImportError:
        return {"observation": observation, "action_mask": action_mask}
    return {
        "observation": numpy.asarray(observation, dtype=numpy.float32),
        "action_mask": numpy.asarray(action_mask, dtype=numpy.int8),
    }


class PolicyBot(Bot):
    """A :class:`Bot` that plays a policy written for the training environment: each
    decision is encoded exactly as the environment encodes it, the policy's action id is
    mapped back to the typed legal action. Subclass and set :attr:`policy`, or pass one."""

    def __init__(self, policy: Policy | None = None) -> None:
        self._policy = policy
        self.game = ""

    def policy(self, observation: dict[str, Any], info: dict[str, Any]) -> int:
        """The action id to play (override, or pass ``policy`` to the constructor)."""
        if self._policy is None:
            raise EncodingError("PolicyBot needs a policy")
        return self._policy(observation, info)

    def on_match_start(self, info: MatchInfo) -> None:
        self.game = info.game
        layout(info.game)  # a game without an encoding fails at the start, not mid-match

    def act(self, decision: Decision[Any, Any]) -> Any:
        ids = legal_ids(self.game, decision)
        observation = _arrays(
            encode(self.game, decision.kind, decision.raw_observation), mask(self.game, ids)
        )
        chosen = int(self.policy(observation, {"decision": decision}))
        if chosen not in ids:
            raise EncodingError(f"the policy chose action id {chosen}, not one of {ids}")
        return decision.legal[ids.index(chosen)]
