// My Western Legends: Showdown bot (western-showdown-v1).
// The types come from the game's wire schema; docs/reference/western-showdown-v1.md says
// what each field means. Return one of decision.legal.
import type { Bot, WesternShowdown } from "saloon";

type Obs = WesternShowdown.Observation;
type Card = { colour: WesternShowdown.Colour; value: number };

// Whether a stack (bottom first) meets its location's condition: then the player who
// placed the last card wins the whole stack (docs/rules/western-showdown.md).
function met(location: number, stack: Card[]): boolean {
  const count = (keep: (c: Card) => boolean): number => stack.filter(keep).length;
  const sum = stack.reduce((s, c) => s + c.value, 0);
  const has = (v: number): boolean => stack.some((c) => c.value === v);
  switch (location) {
    case 0: // Saloon: three 1s
      return count((c) => c.value === 1) >= 3;
    case 1: // Sheriff's Office: two red and two black
      return count((c) => c.colour === "red") >= 2 && count((c) => c.colour === "black") >= 2;
    case 2: // Doctor's Office: four different values
      return new Set(stack.map((c) => c.value)).size >= 4;
    case 3: // Mine: three of one colour next to each other
      return stack.some((c, i) => i >= 2 && c.colour === stack[i - 1].colour && c.colour === stack[i - 2].colour);
    case 4: // Ranch: a sum of 12 or more
      return sum >= 12;
    case 5: // Cabaret: a 1, a 5 and a 6
      return has(1) && has(5) && has(6);
    case 6: // Bandit Hideout: four cards or more summing to 10 or less
      return stack.length >= 4 && sum <= 10;
  }
  return false;
}

// How good placing a card from hand is: a placement that wins the stack first (the bigger
// the better); else the cheapest card, one that tops the stack (its ability fires) before
// one that does not. Passing or skipping scores lowest.
function place(obs: Obs, action: { card?: number; location?: number }): number {
  const card = obs.hand.find((c) => c.id === action.card);
  const location = obs.locations.find((l) => l.id === action.location);
  if (card === undefined || location === undefined) return -100;
  const stack = location.stack;
  const top = stack.length ? stack[stack.length - 1].value : 0;
  if (met(location.id, [...stack, card])) return 100 + stack.length;
  return card.value > top ? 50 - card.value : 10 - card.value;
}

// The legal action that scores most (the first of equals).
function best<A>(legal: A[], score: (a: A) => number): A {
  return legal.reduce((a, b) => (score(b) > score(a) ? b : a));
}

export default class MyBot implements Bot<WesternShowdown.Decision> {
  act(decision: WesternShowdown.Decision): unknown {
    switch (decision.kind) {
      case "TURN":
      case "DETERMINATION_EXTRA": {
        const obs = decision.observation;
        return best<{ card?: number; location?: number }>(decision.legal, (a) => place(obs, a));
      }
      case "MULLIGAN":
        return decision.legal.find((a) => a.done) ?? decision.legal[0];
      case "ACTIVATE":
      case "WALLOP_SECOND":
        return decision.legal.find((a) => a.yes) ?? decision.legal[0];
      default:
        return decision.legal[0];
    }
  }
}

