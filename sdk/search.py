"""Information-set search over the game engines, for bot authors (and the house search bots).

A bot sees only its observation; the engine needs a whole state. :func:`determinize` builds
one from the observation alone: every card the seat cannot know is dealt at random among
the places it could be (the game's ``GameSpec.from_observation``, then its
``resample_hidden``). :class:`InformationSetSearch` runs single-observer information-set
Monte Carlo tree search (SO-ISMCTS, Cowling, Powley & Whitehouse 2012) over such states:
every iteration draws a fresh determinization, walks one tree shared by all of them (a
node is a sequence of actions from the decision; an action is only offered where it is
legal in the iteration's determinization, and UCB counts how often it was available),
adds one node, finishes with a playout and backs up each seat's reward into the nodes
where that seat chose. The action tried most often at the root is the answer, so the
statistics are aggregated over every sample. :class:`RolloutSearch` is the simpler,
often stronger choice when a good policy exists (e.g. a rule-based bot, through
:func:`bot_playout`): per sample it tries every legal action and finishes each with that
policy on the same random draws, and keeps the policy's own choice unless another action
does better (the rollout algorithm's improvement step, over determinizations).

Plug in your own knowledge::

    from saloon.sdk.search import InformationSetSearch, SearchBudget

    search = InformationSetSearch(
        info.game, info.seat, random.Random(info.seed),
        budget=SearchBudget(iterations=300, time_ms=200),
        playout=my_policy,          # (state, legal, rng) -> an action of legal
        evaluate=my_evaluation,     # (state, root_scores) -> a reward in [0, 1] per seat
        # rollout=my_loop,          # optional: (state, rng, depth) -> None, a whole playout
    )
    result = search.run(decision)   # result.index is the chosen index into decision.legal
    return decision.legal[result.index]

Determinism: everything is drawn from the ``rng`` you pass, and the iteration budget (a
number of playouts, never a time) decides how much is searched: with the same seed the
same decision sequence follows on any machine under any load. The time cap is only a
safety net: when it stops a search before its budget, :attr:`SearchResult.capped` is set
and :class:`SearchBot` notes it (:meth:`SearchBot.take_notes`: the match record's
``notes`` for a house bot, the bot's stderr for yours), because that answer depends on
the machine's speed. Keep the budget well under the cap and it never fires.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from saloon.games import (
    CHANCE,
    TERMINAL,
    GameSpec,
    State,
    competition_ranks,
    get_game,
)
from saloon.sdk.bot import Bot, Decision, MatchInfo
from saloon.sdk.errors import SearchError
from saloon.sdk.games import make_decision

#: Iterations (determinize + tree walk + playout) per decision of ``house:search``.
DEFAULT_ITERATIONS = 200
#: The search stops after this many milliseconds even below its iteration budget (a
#: safety cap: set the iterations so that it does not fire, see the module docstring).
DEFAULT_TIME_MS = 200
#: Never use more than this share of the per-decision clock (the rest is the margin for
#: the protocol, a loaded machine and a Python garbage collection at the wrong moment).
CLOCK_SHARE = 0.25
#: UCB1 exploration constant (rewards are in [0, 1]).
DEFAULT_EXPLORATION = 0.7
#: Decision and chance kinds that begin a new hand / round / game: a playout stops there
#: (the scores then hold the hand's outcome) unless the game is over first.
ROUND_STARTS = frozenset({"DEAL", "DEALER", "DEAL_SIZE", "LOCATIONS"})
#: Virtual visits, and their mean reward, that a prior's choice starts with.
DEFAULT_PRIOR_VISITS = 10
DEFAULT_PRIOR_REWARD = 0.6
#: How much better (mean reward) a rollout search's choice must be than its prior's.
DEFAULT_PRIOR_MARGIN = 0.02
#: ... and by this many standard errors of the paired reward differences (0: the margin
#: alone; 1 makes a search whose budget is too small to tell actions apart play its
#: prior's choice, at the cost of fewer good deviations).
DEFAULT_CONFIDENCE = 0.0
#: Scale of the points margin in :func:`score_rewards` (tanh(margin / scale)).
MARGIN_SCALE = 4.0

#: A playout policy: pick one of ``legal`` for the seat to act in ``state``.
Playout = Callable[[State, Sequence[int], random.Random], int]
#: An evaluation: each seat's reward in [0, 1] at the end of a playout; ``root_scores`` are
#: the scores when the search started (for rewarding what happened during the playout).
Evaluation = Callable[[State, Sequence[float]], Sequence[float]]
#: A prior: a heuristic's choice for the decision (one of ``decision.legal``).
Prior = Callable[[Decision[Any, Any]], Any]
#: A horizon: True where a playout stops (it always stops at the end of the game).
Horizon = Callable[[State], bool]
#: A whole playout: play ``state`` on (chance drawn from the rng) to where the evaluation
#: reads it, making at most ``depth`` seat decisions (None: no limit). Given to a search,
#: it replaces :func:`play_out` with its playout policy and horizon: one loop written for
#: one game can skip the generic loop's per-step dispatch (see
#: saloon.sdk.house.playouts.greedy_strife_rollout).
Rollout = Callable[[State, random.Random, int | None], None]


@dataclass(frozen=True)
class SearchBudget:
    """How much one decision may search: iterations (what decides, reproducibly), and a
    wall-time safety cap in milliseconds (when it fires the result says so: ``capped``)."""

    #: Playouts per decision (RolloutSearch: samples x legal actions, so 24 with 12 legal
    #: actions is 2 samples): what decides how much is searched, the same on every machine.
    iterations: int = DEFAULT_ITERATIONS
    #: The wall-time safety cap of one decision, in milliseconds (``capped`` when it fires).
    time_ms: float = DEFAULT_TIME_MS

    def within(self, decision_ms: float, share: float = CLOCK_SHARE) -> SearchBudget:
        """This budget, its time cap cut to ``share`` (:data:`CLOCK_SHARE`) of a
        per-decision clock."""
        if decision_ms <= 0:
            return self
        return SearchBudget(self.iterations, min(self.time_ms, decision_ms * share))


@dataclass
class ActionStats:
    """What the search learned about one legal action at the root."""

    #: The engine's action id.
    action: int
    #: Its index into ``decision.legal``.
    index: int
    #: How often the search tried it (RolloutSearch: the samples dealt).
    visits: int
    #: Its mean reward for the deciding seat, in [0, 1].
    mean_reward: float


@dataclass
class SearchResult:
    """The chosen action and the root statistics behind the choice."""

    #: The chosen action's index into ``decision.legal`` (what ``act`` returns the item of).
    index: int
    #: The chosen engine action id.
    action: int
    #: Playouts done.
    iterations: int
    #: Wall time the search took, in milliseconds (measured: not reproducible).
    elapsed_ms: float
    #: Every root action's statistics, by engine action id.
    stats: list[ActionStats] = field(default_factory=list)
    #: True when the time cap stopped the search before its iteration budget: this answer
    #: depends on the machine's speed, and a rerun may differ.
    capped: bool = False
    #: The iteration budget the search had (``iterations`` < ``budget`` when capped).
    budget: int = 0


@dataclass(frozen=True)
class CappedNote:
    """What :class:`SearchBot` notes about a decision its time cap cut short; ``str()`` is
    the note's text (on a path bot's stderr after ``note: ``) and
    :func:`parse_capped_note` reads one back (``saloon eval`` counts them)."""

    #: The decision's index (``decision.index``: its entry in the match log).
    decision: int
    #: Playouts done when the cap stopped the search.
    iterations: int
    #: Playouts the iteration budget allowed.
    budget: int
    #: Wall time of the search, in milliseconds (measured: not reproducible).
    elapsed_ms: float

    def __str__(self) -> str:
        return (
            f"{CAPPED_PREFIX}{self.decision} after {self.iterations} of {self.budget} "
            f"playouts ({self.elapsed_ms:.0f} ms): this move depends on the machine's speed"
        )


#: How a :class:`CappedNote`'s text starts.
CAPPED_PREFIX = "search: the time cap stopped decision "
_CAPPED = re.compile(
    r"(?:note: )?" + re.escape(CAPPED_PREFIX) + r"(\d+) after (\d+) of (\d+) playouts \((\d+) ms\)"
)


def parse_capped_note(text: str) -> CappedNote | None:
    """The :class:`CappedNote` a note's text (or a stderr line ``note: ...``) states, or
    None when it is not one."""
    match = _CAPPED.match(text.strip())
    if match is None:
        return None
    decision, iterations, budget, elapsed = map(int, match.groups())
    return CappedNote(decision, iterations, budget, float(elapsed))


def determinize(game_id: str, raw_observation: dict[str, Any], rng: random.Random) -> State:
    """A full engine state consistent with everything the observing seat knows, built from
    its observation alone (``decision.raw_observation``, the seat being to decide)."""
    build = get_game(game_id).from_observation
    if build is None:
        raise SearchError(f"{game_id} cannot build a state from an observation")
    return build(raw_observation, rng)


def random_playout(state: State, legal: Sequence[int], rng: random.Random) -> int:
    """The default playout policy: uniformly random."""
    return legal[int(rng.random() * len(legal))]


def bot_playout(game_id: str, bot: Bot) -> Playout:
    """A playout policy that asks ``bot`` (any :class:`Bot` whose ``act`` needs only the
    decision, e.g. a house greedy bot or your own rule-based bot) for every seat's choice,
    through the same typed decision a real match would give it. Slower than a policy that
    reads the engine state (an observation is built per decision), but exact."""

    def policy(state: State, legal: Sequence[int], rng: random.Random) -> int:
        raw = [state.action_to_json(a) for a in legal]
        player = state.current_player()
        decision = make_decision(game_id, state.decision_kind(), state.observation(player), raw)
        return legal[decision.index_of(bot.act(decision))]

    return policy


def round_horizon(state: State) -> bool:
    """The default horizon: stop where the next hand, round or game begins."""
    return state.decision_kind() in ROUND_STARTS


def score_rewards(state: State, root_scores: Sequence[float]) -> list[float]:
    """The default evaluation. At the end of the game: 1 for first place down to 0 for last
    (ties share). Otherwise: how a seat's points since the search began compare with the
    others' average, squashed into [0, 1] (0.5 is even)."""
    n = state.num_players
    if state.current_player() == TERMINAL:
        if n == 1:
            return [1.0]
        return [1.0 - r / (n - 1) for r in state.ranks()]
    sign = -1.0 if state.spec.lower_score_is_better else 1.0
    scores = state.scores()
    return squash([sign * (s - r) for s, r in zip(scores, root_scores, strict=True)])


def squash(gains: Sequence[float], scale: float = MARGIN_SCALE) -> list[float]:
    """Rewards in [0, 1] from each seat's gain (higher better): how it compares with the
    others' average gain, through tanh(difference / scale); 0.5 is even."""
    n = len(gains)
    if n == 1:
        return [0.5 + 0.5 * math.tanh(gains[0] / scale)]
    total = sum(gains)
    tanh = math.tanh
    rest = n - 1
    return [0.5 + 0.5 * tanh((gain - (total - gain) / rest) / scale) for gain in gains]


def rank_rewards(state: State, root_scores: Sequence[float]) -> list[float]:
    """An alternative evaluation: the seats' places by their current scores, 1 best."""
    n = state.num_players
    ranks = (
        state.ranks()
        if state.current_player() == TERMINAL
        else competition_ranks(state.scores(), state.spec.lower_score_is_better)
    )
    return [1.0 - r / (n - 1) for r in ranks] if n > 1 else [1.0]


class _Node:
    """One tree node: reached by ``player`` choosing an action at its parent."""

    __slots__ = ("avail", "children", "player", "reward", "visits")

    def __init__(self, player: int) -> None:
        self.player = player
        self.visits = 0
        self.avail = 0
        self.reward = 0.0
        self.children: dict[int, _Node] = {}


class _SearchBase:
    """What both searches are given: the game and seat, the randomness, the budget, and the
    policies that play out and score a sampled state."""

    def __init__(
        self,
        game_id: str,
        seat: int,
        rng: random.Random,
        budget: SearchBudget | None,
        playout: Playout,
        evaluate: Evaluation,
        horizon: Horizon,
        playout_depth: int | None,
        prior: Prior | None,
        rollout: Rollout | None = None,
    ) -> None:
        if get_game(game_id).from_observation is None:
            raise SearchError(f"{game_id} cannot build a state from an observation")
        self.game_id = game_id
        self.seat = seat
        self.rng = rng
        self.budget = budget or SearchBudget()
        self.playout = playout
        self.evaluate = evaluate
        self.horizon = horizon
        #: Seat decisions a playout makes before it stops and evaluates (None: to the
        #: horizon). A short playout needs an evaluation that reads the state mid-round.
        self.playout_depth = playout_depth
        #: A heuristic's choice (one of decision.legal) the search starts from.
        self.prior = prior
        #: A whole-playout function replacing ``playout`` and ``horizon`` in the playouts
        #: (``playout`` still picks the tree's expansions in InformationSetSearch).
        self.rollout = rollout

    def _root(
        self, decision: Decision[Any, Any]
    ) -> tuple[State, dict[int, int], SearchResult | None]:
        """The determinized root, engine action -> index in ``decision.legal``, and the
        result already when there is only one action to choose."""
        base = determinize(self.game_id, decision.raw_observation, self.rng)
        if base.current_player() != self.seat:
            raise SearchError("the observation is not this seat's decision")
        index_of = _index_map(base, decision.raw_legal)
        if len(index_of) != 1:
            return base, index_of, None
        action, index = next(iter(index_of.items()))
        return (
            base,
            index_of,
            SearchResult(index, action, 0, 0.0, [ActionStats(action, index, 0, 0.0)]),
        )

    def _play_out(self, state: State, rng: random.Random) -> None:
        if self.rollout is not None:
            self.rollout(state, rng, self.playout_depth)
        else:
            play_out(state, self.playout, self.horizon, rng, self.playout_depth)


class InformationSetSearch(_SearchBase):
    """SO-ISMCTS for one seat of one game (see the module docstring)."""

    def __init__(
        self,
        game_id: str,
        seat: int,
        rng: random.Random,
        budget: SearchBudget | None = None,
        *,
        playout: Playout = random_playout,
        evaluate: Evaluation = score_rewards,
        horizon: Horizon = round_horizon,
        exploration: float = DEFAULT_EXPLORATION,
        playout_depth: int | None = None,
        prior: Prior | None = None,
        prior_visits: int = DEFAULT_PRIOR_VISITS,
        prior_reward: float = DEFAULT_PRIOR_REWARD,
        rollout: Rollout | None = None,
    ) -> None:
        super().__init__(
            game_id, seat, rng, budget, playout, evaluate, horizon, playout_depth, prior, rollout
        )
        self.exploration = exploration
        #: With a prior: ``prior_visits`` virtual visits of mean ``prior_reward`` start the
        #: root, so the search keeps it unless its own statistics say otherwise
        #: (progressive bias, the cheap way).
        self.prior_visits = prior_visits
        self.prior_reward = prior_reward

    def run(self, decision: Decision[Any, Any]) -> SearchResult:
        """Search the decision; the result's ``index`` points into ``decision.legal``."""
        start = time.perf_counter()
        rng = self.rng
        base, index_of, only = self._root(decision)
        if only is not None:
            return only
        root = _Node(-1)
        if self.prior is not None and self.prior_visits > 0:
            favourite = decision.index_of(self.prior(decision))
            for action, index in index_of.items():
                if index == favourite:
                    node = root.children[_key(action, self.seat)] = _Node(self.seat)
                    node.visits = node.avail = self.prior_visits
                    node.reward = self.prior_visits * self.prior_reward
        root_scores = base.scores()
        deadline = start + self.budget.time_ms / 1000.0
        done = 0
        seat = self.seat
        while done < self.budget.iterations:
            state = base.resample_hidden(seat, rng) if done else base.clone()
            self._iterate(root, state, root_scores)
            done += 1
            if time.perf_counter() >= deadline:
                break
        stats = [
            ActionStats(
                k >> 3, index_of[k >> 3], c.visits, c.reward / c.visits if c.visits else 0.0
            )
            for k, c in sorted(root.children.items())
        ]
        best = max(stats, key=lambda s: (s.visits, s.mean_reward, -s.index))
        elapsed = (time.perf_counter() - start) * 1000.0
        budget = self.budget.iterations
        return SearchResult(best.index, best.action, done, elapsed, stats, done < budget, budget)

    def _iterate(self, root: _Node, state: State, root_scores: Sequence[float]) -> None:
        rng = self.rng
        horizon = self.horizon
        c = self.exploration
        path: list[_Node] = []
        node = root
        expanded = False
        # Selection and expansion: walk the tree while every action here has a node.
        at_root = True
        while True:
            player = state.current_player()
            if player == TERMINAL or (horizon(state) and not at_root):
                break
            at_root = False
            if player == CHANCE:
                state.apply_chance(state.sample_chance(rng))
                continue
            legal = state.legal_actions()
            if len(legal) == 1:  # forced: no choice, no node
                state.apply_action(legal[0])
                continue
            # A child is keyed by the action and who takes it: after a move forced in one
            # sample but not in another, two seats' actions can meet at one node.
            children = node.children
            untried = [a for a in legal if _key(a, player) not in children]
            if untried:
                for a in legal:
                    known = children.get(_key(a, player))
                    if known is not None:
                        known.avail += 1
                # Expand what the playout policy would play first: the tree's first look
                # at a reply is then a sensible one, not a random one.
                action = untried[0] if len(untried) == 1 else self.playout(state, untried, rng)
                child = children[_key(action, player)] = _Node(player)
                child.avail = 1
                path.append(child)
                state.apply_action(action)
                expanded = True
                break
            best_value = -1.0
            best: _Node | None = None
            best_action = legal[0]
            for a in legal:
                child = children[_key(a, player)]
                child.avail += 1
                value = child.reward / child.visits + c * math.sqrt(
                    math.log(child.avail) / child.visits
                )
                if value > best_value:
                    best_value, best, best_action = value, child, a
            if best is None:  # unreachable: every child has visits
                break
            path.append(best)
            node = best
            state.apply_action(best_action)
        if expanded:
            self._play_out(state, self.rng)
        rewards = self.evaluate(state, root_scores)
        for visited in path:
            visited.visits += 1
            visited.reward += rewards[visited.player]


class RolloutSearch(_SearchBase):
    """Determinized rollouts of a base policy (Perfect Information Monte Carlo with the
    rollout algorithm's improvement step): deal ``samples`` determinizations; in each, try
    every legal action and finish with the same playout policy and the same random draws
    (common random numbers: the actions are compared on identical futures, so a few
    samples separate them); answer the action with the best mean reward for this seat.

    With a prior (the base policy's own choice), another action must beat it by
    ``prior_margin`` on average (and, with ``confidence`` > 0, by that many standard errors
    of the paired differences): small differences leave the base policy's choice standing.
    The iteration budget counts playouts: ``samples x legal actions``, so 24 playouts with
    12 legal actions is 2 samples (at least ``min_samples``, however many actions); the
    time cap is checked between samples.
    """

    def __init__(
        self,
        game_id: str,
        seat: int,
        rng: random.Random,
        budget: SearchBudget | None = None,
        *,
        playout: Playout = random_playout,
        evaluate: Evaluation = score_rewards,
        horizon: Horizon = round_horizon,
        playout_depth: int | None = None,
        prior: Prior | None = None,
        prior_margin: float = DEFAULT_PRIOR_MARGIN,
        min_samples: int = 1,
        confidence: float = DEFAULT_CONFIDENCE,
        rollout: Rollout | None = None,
    ) -> None:
        super().__init__(
            game_id, seat, rng, budget, playout, evaluate, horizon, playout_depth, prior, rollout
        )
        self.prior_margin = prior_margin
        #: Samples dealt even when the budget divided by the actions is smaller.
        self.min_samples = min_samples
        #: With a prior, another action must also beat it by this many standard errors of
        #: the paired (same sample, same draws) reward differences: a few noisy samples
        #: then leave the prior's choice standing instead of following the noise.
        self.confidence = confidence

    def run(self, decision: Decision[Any, Any]) -> SearchResult:
        """Search the decision; the result's ``index`` points into ``decision.legal``."""
        start = time.perf_counter()
        rng = self.rng
        seat = self.seat
        base, index_of, only = self._root(decision)
        if only is not None:
            return only
        actions = sorted(index_of)
        favourite = -1
        if self.prior is not None:
            favourite = decision.index_of(self.prior(decision))
        samples = max(self.min_samples, self.budget.iterations // len(actions))
        root_scores = base.scores()
        deadline = start + self.budget.time_ms / 1000.0
        totals = dict.fromkeys(actions, 0.0)
        rewards: dict[int, list[float]] = {a: [] for a in actions}
        done = 0
        dealt = 0
        draws = _Draws()
        rollout = self.rollout
        policy, horizon, depth = self.playout, self.horizon, self.playout_depth
        while dealt < samples:
            sample = base.resample_hidden(seat, rng) if dealt else base
            seed = rng.getrandbits(64)
            draws.seed(seed)
            draws.used = False
            for action in actions:
                state = sample.clone()
                state.apply_action(action)
                if draws.used:  # every action's playout gets the same draws
                    draws.seed(seed)
                    draws.used = False
                if rollout is not None:
                    rollout(state, draws, depth)
                else:
                    play_out(state, policy, horizon, draws, depth)
                reward = self.evaluate(state, root_scores)[seat]
                totals[action] += reward
                rewards[action].append(reward)
            done += len(actions)
            dealt += 1
            if time.perf_counter() >= deadline:
                break
        stats = [ActionStats(a, index_of[a], dealt, totals[a] / dealt) for a in actions]
        best = max(stats, key=lambda s: (s.mean_reward, -s.index))
        if favourite >= 0:
            kept = next(s for s in stats if s.index == favourite)
            if not self._clearly_better(rewards[best.action], rewards[kept.action]):
                best = kept
        elapsed = (time.perf_counter() - start) * 1000.0
        return SearchResult(
            best.index, best.action, done, elapsed, stats, dealt < samples, samples * len(actions)
        )

    def _clearly_better(self, mine: list[float], prior: list[float]) -> bool:
        """Whether rewards ``mine`` beat the prior's (paired by sample) by more than
        ``prior_margin`` and by ``confidence`` standard errors of the differences."""
        diffs = [a - b for a, b in zip(mine, prior, strict=True)]
        count = len(diffs)
        mean = sum(diffs) / count
        if mean <= self.prior_margin:
            return False
        if count < 2:
            return self.confidence <= 0
        variance = sum((d - mean) ** 2 for d in diffs) / (count - 1)
        return mean > self.confidence * math.sqrt(variance / count)


class _Draws(random.Random):
    """A generator that notes whether anything was drawn from it since ``used`` was
    cleared: a rollout reseeds it for the next action's playout only then (seeding costs
    as much as a few engine steps, and most engine-level playouts draw nothing). The same
    numbers as :class:`random.Random` with the same seed."""

    used = False

    def random(self) -> float:
        self.used = True
        return super().random()

    def getrandbits(self, k: int, /) -> int:
        self.used = True
        return super().getrandbits(k)


def play_out(
    state: State,
    policy: Playout,
    horizon: Horizon,
    rng: random.Random,
    depth: int | None = None,
) -> None:
    """Play ``state`` on with ``policy`` (chance drawn from ``rng``) until the game ends,
    ``horizon`` says stop, or ``depth`` seat decisions were made (None: no limit)."""
    left = depth if depth is not None else -1
    # Bound once: a playout step is a few microseconds of engine time, and the loop's own
    # lookups would be a good share of it.
    current = state.current_player
    kind = state.decision_kind
    legal_actions = state.legal_actions
    apply_action = state.apply_action
    # The default horizon inlined; where no seat decision starts a round (only chance
    # does), it is only asked at chance steps.
    default = horizon is round_horizon
    seat_starts = default and _seat_decision_starts_round(state.spec)
    while left:
        player = current()
        if player < 0:  # TERMINAL or CHANCE
            if player == TERMINAL:
                return
            if default:
                if kind() in ROUND_STARTS:
                    return
            elif horizon(state):
                return
            state.apply_chance(state.sample_chance(rng))
            continue
        if default:
            if seat_starts and kind() in ROUND_STARTS:
                return
        elif horizon(state):
            return
        legal = legal_actions()
        apply_action(legal[0] if len(legal) == 1 else policy(state, legal, rng))
        left -= 1


def _seat_decision_starts_round(spec: GameSpec) -> bool:
    """Whether a seat decision of this game can begin a round (:data:`ROUND_STARTS`)."""
    known = _SEAT_STARTS.get(spec.id)
    if known is None:
        known = _SEAT_STARTS[spec.id] = not ROUND_STARTS.isdisjoint(spec.decision_kinds)
    return known


_SEAT_STARTS: dict[str, bool] = {}


def _key(action: int, player: int) -> int:
    """A tree child's key: the action and the seat taking it (seats 0..7)."""
    return (action << 3) | player


def _index_map(state: State, raw_legal: Sequence[Any]) -> dict[int, int]:
    """Engine action -> index into the decision's legal actions (matched by their JSON)."""
    out: dict[int, int] = {}
    wanted = list(raw_legal)
    for action in state.legal_actions():
        value = state.action_to_json(action)
        try:
            out[action] = wanted.index(value)
        except ValueError:
            raise SearchError(
                f"the determinized state offers {value!r}, which the decision does not"
            ) from None
    if len(out) != len(wanted):
        raise SearchError("the determinized state and the decision disagree on what is legal")
    return out


class Searcher(Protocol):
    """What :class:`SearchBot` runs: :class:`InformationSetSearch`, :class:`RolloutSearch`
    or your own."""

    def run(self, decision: Decision[Any, Any]) -> SearchResult:
        """Search the decision; the result's ``index`` points into ``decision.legal``."""
        ...


class SearchBot(Bot):
    """A bot that plays every game with a ``from_observation`` by information-set search.

    Subclass and set :attr:`BUDGET` for another strength, or override :meth:`make_search`
    to give the search your own playout policy or evaluation. The time cap is
    ``BUDGET.time_ms`` cut to :attr:`CLOCK_SHARE` of the decision clock (a quarter; set
    it to 1.0 for a cap that is a safety only, up to the whole clock: time over the
    clock comes from the bank). A decision the time cap cut short is noted
    (:meth:`take_notes`), with the decision's index.
    """

    BUDGET = SearchBudget()
    CLOCK_SHARE = CLOCK_SHARE

    def __init__(self) -> None:
        self.search: Searcher | None = None
        self.last: SearchResult | None = None
        self._notes: list[str] = []

    def take_notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes

    def on_match_start(self, info: MatchInfo) -> None:
        budget = self.BUDGET.within(info.decision_ms, self.CLOCK_SHARE)
        self.search = self.make_search(info, budget)

    def make_search(self, info: MatchInfo, budget: SearchBudget) -> Searcher:
        """The search this bot runs (override to plug in a policy or an evaluation)."""
        return InformationSetSearch(info.game, info.seat, random.Random(info.seed), budget)

    def act(self, decision: Decision[Any, Any]) -> Any:
        if len(decision.legal) == 1:
            return decision.legal[0]
        if self.search is None:
            raise SearchError("on_match_start was not called")
        self.last = result = self.search.run(decision)
        if result.capped:
            note = CappedNote(decision.index, result.iterations, result.budget, result.elapsed_ms)
            self._notes.append(str(note))
        return decision.legal[result.index]
