// My Seizure bot (seizure-v1). Shed your hand first; points count against you.
// Every field of decision.observation is in docs/reference/seizure-v1.md, and the wire
// JSON in kits/schema/seizure-v1.json. Return one of decision.legal.

// What a card costs in hand: a number card its number, a special card the most.
const cost = (card) => (card.number === null ? 11 : card.number);

class MyBot {
  act(decision) {
    const legal = decision.legal;
    switch (decision.kind) {
      case "PLAY_CARD":
      case "GIVE_CARD":
        // Get rid of the card that would cost most if the round ended now.
        return legal.reduce((a, b) => (cost(b.card) > cost(a.card) ? b : a));
      case "DEAL_SIZE":
        return legal.reduce((a, b) => (b.hand_size < a.hand_size ? b : a));
      case "GIVE_TO":
      case "TRADE_PARTNER": {
        // The seat holding the fewest cards.
        const sizes = decision.observation.hand_sizes;
        return legal.reduce((a, b) => (sizes[b.seat] < sizes[a.seat] ? b : a));
      }
      default:
        return legal[0];
    }
  }
}

module.exports = MyBot;
