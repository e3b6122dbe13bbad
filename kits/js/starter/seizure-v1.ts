// My Seizure bot (seizure-v1). Shed your hand first; points count against you.
// The types come from the game's wire schema; docs/reference/seizure-v1.md says what each
// field means. Return one of decision.legal.
import type { Bot, Seizure } from "saloon";

// What a card costs in hand: a number card its number, a special card the most.
const cost = (card: Seizure.Card): number => (card.number === null ? 11 : card.number);

export default class MyBot implements Bot<Seizure.Decision> {
  act(decision: Seizure.Decision): unknown {
    switch (decision.kind) {
      case "PLAY_CARD":
        return decision.legal.reduce((a, b) => (cost(b.card) > cost(a.card) ? b : a));
      case "GIVE_CARD":
        return decision.legal.reduce((a, b) => (cost(b.card) > cost(a.card) ? b : a));
      case "DEAL_SIZE":
        return decision.legal.reduce((a, b) => (b.hand_size < a.hand_size ? b : a));
      case "GIVE_TO":
      case "TRADE_PARTNER": {
        // The seat holding the fewest cards.
        const sizes = decision.observation.hand_sizes;
        return decision.legal.reduce((a, b) => (sizes[b.seat] < sizes[a.seat] ? b : a));
      }
      default:
        return decision.legal[0];
    }
  }
}
