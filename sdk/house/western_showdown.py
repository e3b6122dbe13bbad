"""House bots for Western Legends: Showdown (written only against the SDK's typed view)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from saloon.sdk.bot import Bot, Decision
from saloon.sdk.games.western_showdown import (
    ACTIVATE,
    BULLETPROOF,
    CABARET,
    CHEAT,
    CHEAT_PICK,
    DETERMINATION,
    DETERMINATION_EXTRA,
    DONE,
    HIDEOUT,
    LIVING_LEGEND,
    MULLIGAN,
    SADDLE_DEST,
    SADDLE_UP,
    SALOON,
    SKIP,
    STICK_DEST,
    STICK_EM_UP,
    STICK_SOURCE,
    TURN,
    WALLOP,
    WALLOP_SECOND,
    Card,
    Observation,
    Pick,
    Place,
    activates,
    condition_met,
    stack_winner,
)

#: A board: one (location id, stack bottom first) per location on the table.
Board = tuple[tuple[int, tuple[Card, ...]], ...]

#: What spending the LIVING LEGEND is worth keeping for (cards), before the last turns.
LEGEND_RESERVE = 3.0
#: How much of the opponent's best immediate take counts against a move.
THREAT_WEIGHT = 0.7
#: A move must be at least this bad before the bot passes REPUTATION instead.
PASS_BELOW = -1.5


class GreedyBot(Bot):
    """One-turn lookahead over its own choices, with a guess at the opponent's reply.

    A move (placement plus every ability choice it opens: second WALLOP, DETERMINATION's
    extra card, SADDLE UP's destination, STICK 'EM UP's card and destination, CHEAT's
    swap, LIVING LEGEND's take) is scored as: cards won now, minus 0.7 x the largest stack
    the opponent could take next turn with a card it may still hold (BULLETPROOF tops
    shut it out), plus a small share for stacks whose highest card is ours (end
    scoring), minus a reserve for spending LIVING LEGEND on a thin stack early. Follow-up
    decisions re-score the same way, so the plan stays consistent. Mulligan: throw 1s
    back when no location on the table wants them. Passes REPUTATION only when every move
    scores badly.
    """

    def act(self, decision: Decision[Observation, Any]) -> Any:
        legal = decision.legal
        if len(legal) == 1:
            return legal[0]
        obs = decision.observation
        kind = decision.kind
        plan = _Planner(obs)
        if kind == MULLIGAN:
            return _mulligan(obs, legal)
        if kind in (TURN, DETERMINATION_EXTRA):
            return plan.choose_placement(legal, allow_extra=kind == TURN)
        pending = obs.pending
        if pending is None:  # not expected: every follow-up names its card
            return legal[0]
        board = plan.board
        if kind == WALLOP_SECOND:
            ones = [c for c in obs.hand if c.value == WALLOP]
            return max(
                legal,
                key=lambda yes: plan.score(
                    push_card(board, pending.location, ones[0]) if yes else board, []
                ),
            )
        if kind == ACTIVATE:
            return max(legal, key=lambda yes: plan.best_after(board, pending, yes))
        if kind == SADDLE_DEST:
            return max(
                legal, key=lambda dest: plan.score(saddle_stack(board, pending.location, dest))
            )
        if kind == STICK_SOURCE:
            dests = [loc for loc, _ in board]
            return max(
                legal,
                key=lambda pick: max(
                    plan.score(stick_card(board, pick.card, d)) for d in dests if d != pick.location
                ),
            )
        if kind == STICK_DEST and pending.picked is not None:
            moved = pending.picked
            return max(legal, key=lambda dest: plan.score(stick_card(board, moved, dest)))
        if kind == CHEAT_PICK:
            picks: Sequence[Pick] = legal
            if pending.picked is not None:
                first = pending.picked
                return max(picks, key=lambda p: plan.score(swap_cards(board, first, p.card)))
            table = [c for _, stack in board for c in stack]
            return max(
                picks,
                key=lambda p: max(
                    plan.score(swap_cards(board, p.card, other))
                    for other in table
                    if other != p.card
                ),
            )
        return legal[0]


def _mulligan(obs: Observation, legal: Sequence[Any]) -> Any:
    wanted = {loc.id for loc in obs.locations} & {SALOON, CABARET, HIDEOUT}
    if not wanted:
        ones = [c for c in legal if isinstance(c, Card) and c.value == WALLOP]
        if ones:
            return ones[0]
    return DONE


# -- board edits: greedy's "what if" boards (cards as SDK Cards here, as engine ints in
# saloon.sdk.house.playouts; one code for both) ------------------------------------------
C = TypeVar("C")
AnyBoard = tuple[tuple[int, tuple[C, ...]], ...]


def push_card(board: AnyBoard[C], location: int, card: C) -> AnyBoard[C]:
    """``board`` with ``card`` put on top of ``location``'s stack."""
    return tuple((loc, (*stack, card) if loc == location else stack) for loc, stack in board)


def saddle_stack(board: AnyBoard[C], source: int, dest: int) -> AnyBoard[C]:
    """``board`` with ``source``'s whole stack moved on top of ``dest``'s (SADDLE UP)."""
    moving = next(stack for loc, stack in board if loc == source)
    return tuple(
        (loc, () if loc == source else (*stack, *moving) if loc == dest else stack)
        for loc, stack in board
    )


def stick_card(board: AnyBoard[C], moved: C, dest: int) -> AnyBoard[C]:
    """``board`` with ``moved`` taken from its stack and put on top of ``dest``'s."""
    return tuple(
        (loc, (*(c for c in stack if c != moved), moved))
        if loc == dest
        else (loc, tuple(c for c in stack if c != moved) if moved in stack else stack)
        for loc, stack in board
    )


def swap_cards(board: AnyBoard[C], a: C, b: C) -> AnyBoard[C]:
    """``board`` with cards ``a`` and ``b`` trading places (CHEAT)."""
    return tuple(
        (loc, tuple(b if c == a else a if c == b else c for c in stack))
        if a in stack or b in stack
        else (loc, stack)
        for loc, stack in board
    )


class _Planner:
    """Scores boards from one seat's point of view."""

    def __init__(self, obs: Observation) -> None:
        self.obs = obs
        self.me = obs.seat
        self.board: Board = tuple((loc.id, loc.stack) for loc in obs.locations)
        self.shield = frozenset().union(*(loc.bulletproof for loc in obs.locations))
        unseen = obs.opponent_unseen()
        self.opponent_values = sorted({c.value for c in unseen})
        self.opponent_cards = {c.value: c for c in unseen}
        remaining = sum(obs.hand_sizes) + sum(obs.draw_pile_sizes)
        self.late = remaining <= 6
        self.end_weight = 0.15 + 0.6 * (1 - remaining / 18)

    # -- scoring ----------------------------------------------------------------------
    def score(self, board: Board, extra_shield: Iterable[Card] = ()) -> float:
        """Cards won by resolving ``board`` now, minus threat, plus end-scoring share."""
        shield = self.shield | {c.id for c in extra_shield}
        gained = 0
        left = []
        for loc, stack in board:
            if stack and condition_met(loc, stack):
                gained += len(stack)
            else:
                left.append((loc, stack))
        return gained - THREAT_WEIGHT * self._threat(left, shield) + self._end_share(left)

    def _threat(
        self, left: Sequence[tuple[int, tuple[Card, ...]]], shield: frozenset[int]
    ) -> float:
        worst = 0
        for loc, stack in left:
            if stack and stack[-1].id in shield and stack[-1].owner == self.me:
                continue
            size = len(stack) + 1
            if size <= worst:
                continue
            for value in self.opponent_values:
                c = self.opponent_cards[value]
                if (value == LIVING_LEGEND and stack and stack[-1].value < 7) or condition_met(
                    loc, (*stack, c)
                ):
                    worst = size
                    break
        return worst

    def _end_share(self, left: Sequence[tuple[int, tuple[Card, ...]]]) -> float:
        share = 0
        for _loc, stack in left:
            if stack:
                share += len(stack) if stack_winner(stack) == self.me else -len(stack)
        return self.end_weight * share

    # -- choices ----------------------------------------------------------------------
    def choose_placement(self, legal: Sequence[Any], allow_extra: bool) -> Any:
        """The best TURN / DETERMINATION_EXTRA action (PASS / SKIP when nothing is good)."""
        best: Any = None
        best_value = float("-inf")
        fallback: Any = None
        for action in legal:
            if not isinstance(action, Place):
                fallback = action
                continue
            value = self.place_value(self.board, action, allow_extra)
            if value > best_value:
                best, best_value = action, value
        if fallback is SKIP:
            if best is None or best_value < self.score(self.board):
                return SKIP
            return best
        if fallback is not None and (best is None or best_value < PASS_BELOW):
            return fallback
        return best

    def place_value(self, board: Board, place: Place, allow_extra: bool) -> float:
        """The best score reachable by this placement and the choices it opens."""
        played = place.card
        stack = next(s for loc, s in board if loc == place.location)
        after = push_card(board, place.location, played)
        cost = 0.0
        if played.value == LIVING_LEGEND and not self.late:
            cost = LEGEND_RESERVE
        if not activates(played, stack):
            return self.score(after) - cost
        value = played.value
        if value == WALLOP:
            base = self.score(after)
            ones = [c for c in self.obs.hand if c.value == WALLOP and c != played]
            if ones:
                base = max(base, self.score(push_card(after, place.location, ones[0])))
            return base - cost
        if value == DETERMINATION:
            base = self.score(after)
            if not allow_extra:
                return base
            # The check runs before the extra card: stacks met now are won first.
            gained = sum(len(s) for loc, s in after if s and condition_met(loc, s))
            rest: Board = tuple((loc, () if s and condition_met(loc, s) else s) for loc, s in after)
            hand = [c for c in self.obs.hand if c != played]
            for c in hand:
                for loc, s in rest:
                    top = s[-1] if s else None
                    if top and top.owner != self.me and top.id in self.shield:
                        continue
                    base = max(base, gained + self.place_value(rest, Place(c, loc), False))
            return base
        pending = _Pending(played, place.location)
        return max(self.best_after(after, pending, False), self.best_after(after, pending, True))

    def best_after(self, board: Board, pending: Any, yes: bool) -> float:
        """The best score once ``pending.card``'s ability is declined or used."""
        played: Card = pending.card
        cost = LEGEND_RESERVE if played.value == LIVING_LEGEND and not self.late else 0.0
        if not yes:
            return self.score(board) - cost
        value = played.value
        source = pending.location
        if value == BULLETPROOF:
            return self.score(board, [played])
        if value == SADDLE_UP:
            return max(self.score(saddle_stack(board, source, d)) for d, _ in board if d != source)
        if value == STICK_EM_UP:
            best = float("-inf")
            for loc, stack in board:
                for c in stack:
                    if c == played or c.id in self.shield:
                        continue
                    for d, _ in board:
                        if d != loc:
                            best = max(best, self.score(stick_card(board, c, d)))
            return best
        if value == CHEAT:
            table = [c for _, stack in board for c in stack]
            best = float("-inf")
            for i, a in enumerate(table):
                for b in table[i + 1 :]:
                    best = max(best, self.score(swap_cards(board, a, b)))
            return best
        if value == LIVING_LEGEND:
            taken = next(len(s) for loc, s in board if loc == source)
            rest = tuple((loc, () if loc == source else s) for loc, s in board)
            return taken + self.score(rest) - cost
        return self.score(board)


class _Pending:
    """A card about to resolve its ability (the planner's stand-in for obs.pending)."""

    __slots__ = ("card", "location")

    def __init__(self, card: Card, location: int) -> None:
        self.card = card
        self.location = location
