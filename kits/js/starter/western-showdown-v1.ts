// My Western Legends: Showdown bot (western-showdown-v1).
// The types come from the game's wire schema; docs/reference/western-showdown-v1.md says
// what each field means. Return one of decision.legal.
import type { Bot, WesternShowdown } from "saloon";

type Obs = WesternShowdown.Observation;

function topValue(obs: Obs, location: number): number {
  const stack = obs.locations.find((l) => l.id === location)?.stack ?? [];
  return stack.length ? stack[stack.length - 1].value : 0;
}

export default class MyBot implements Bot<WesternShowdown.Decision> {
  act(decision: WesternShowdown.Decision): unknown {
    const obs = decision.observation;
    const hand = new Map(obs.hand.map((c) => [c.id, c]));
    switch (decision.kind) {
      case "TURN":
      case "DETERMINATION_EXTRA": {
        // Place the strongest card in hand where it tops the stack (its ability fires).
        const places = decision.legal.filter(
          (a): a is { card: number; location: number } => a.card !== undefined && a.location !== undefined,
        );
        if (places.length === 0) return decision.legal[0];
        const score = (a: { card: number; location: number }): number => {
          const value = hand.get(a.card)?.value ?? 0;
          return value * 10 + (value > topValue(obs, a.location) ? 5 : 0);
        };
        return places.reduce((a, b) => (score(b) > score(a) ? b : a));
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
