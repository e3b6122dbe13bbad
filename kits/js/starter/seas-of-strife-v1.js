// My Seas of Strife bot (seas-of-strife-v1). Points are bad: avoid winning tricks.
// Every field of decision.observation is in docs/reference/seas-of-strife-v1.md, and
// the wire JSON in kits/schema/seas-of-strife-v1.json. Return one of decision.legal.

// The colour of a card number: black 0-10, red 11-20, then one colour per ten (21-29, ...).
const colour = (card) => (card <= 10 ? 0 : card <= 20 ? 1 : Math.floor(card / 10));

// The card that takes a trick: the highest card of the colours with the most cards in it
// (docs/rules/seas-of-strife.md).
function winner(trick) {
  const counts = new Map();
  for (const c of trick) counts.set(colour(c), (counts.get(colour(c)) || 0) + 1);
  const most = Math.max(...counts.values());
  return Math.max(...trick.filter((c) => counts.get(colour(c)) === most));
}

class MyBot {
  act(decision) {
    const obs = decision.observation;
    if (decision.kind === "PLAY_CARD") {
      // Following: the highest card that does not take the trick as it stands (shed a
      // dangerous card safely); leading, or when every card takes it: the lowest.
      const trick = obs.trick.map((p) => p.card);
      const safe = decision.legal.filter((a) => trick.length > 0 && winner([...trick, a.card]) !== a.card);
      if (safe.length) return safe.reduce((a, b) => (b.card > a.card ? b : a));
      return decision.legal.reduce((a, b) => (b.card < a.card ? b : a));
    }
    // CHOOSE_LEADER: let the next seat lead.
    const next = (obs.seat + 1) % obs.num_players;
    return decision.legal.find((a) => a.seat === next) || decision.legal[0];
  }
}

module.exports = MyBot;
