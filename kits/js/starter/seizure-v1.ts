// My Seizure bot (seizure-v1). Shed your hand first; points count against you.
// The types come from the game's wire schema; docs/reference/seizure-v1.md says what each
// field means. Return one of decision.legal.
import type { Bot, Seizure } from "saloon";

// How much to play a card now: a number card first (the higher the better, a 10 last of
// them: it makes you give cards away), one matching the reference's colours far first; a
// special card only when nothing else goes.
function playScore(card: Seizure.Card, ref: Seizure.Card | null): number {
  if (card.kind !== "number" || card.number === null) return 0;
  let score = card.number === 10 ? 10 : 100 + card.number;
  if (ref && ref.colours.join() === card.colours.join() && card.colours.length === 2) score += 1000;
  return score;
}

// How much to be rid of a card: +3 first, then the other special cards, the low numbers,
// and -3 last (it lowers your points).
function giveScore(card: Seizure.Card): number {
  if (card.kind === "plus_three") return 400;
  if (card.kind === "minus_three") return 0;
  if (card.kind !== "number" || card.number === null) return 300;
  return card.number === 10 ? 189 : 200 - card.number;
}

// The legal action that scores most (the first of equals).
function best<A>(legal: A[], score: (a: A) => number): A {
  return legal.reduce((a, b) => (score(b) > score(a) ? b : a));
}

export default class MyBot implements Bot<Seizure.Decision> {
  act(decision: Seizure.Decision): unknown {
    const obs = decision.observation;
    switch (decision.kind) {
      case "PLAY_CARD":
        return best(decision.legal, (a) => playScore(a.card, obs.reference));
      case "GIVE_CARD":
        return best(decision.legal, (a) => giveScore(a.card));
      case "DEAL_SIZE":
        // Small deals: fewer cards to shed.
        return best(decision.legal, (a) => -Math.abs(a.hand_size - 7));
      case "GIVE_TO":
      case "TRADE_PARTNER":
        // The seat holding the fewest cards.
        return best<{ seat: number }>(decision.legal, (a) => -obs.hand_sizes[a.seat]);
      default:
        return decision.legal[0];
    }
  }
}
