// My Seas of Strife bot (seas-of-strife-v1). Points are bad: avoid winning tricks.
// Every field of decision.observation is in docs/reference/seas-of-strife-v1.md, and
// the wire JSON in kits/schema/seas-of-strife-v1.json. Return one of decision.legal.

class MyBot {
  onMatchStart(info) {
    this.seat = info.seat;
  }

  act(decision) {
    if (decision.kind === "PLAY_CARD") {
      // Shed the lowest card this trick allows: low cards rarely win a trick.
      return decision.legal.reduce((a, b) => (b.card < a.card ? b : a));
    }
    // CHOOSE_LEADER: let the next seat lead.
    const next = (this.seat + 1) % decision.observation.num_players;
    return decision.legal.find((a) => a.seat === next) || decision.legal[0];
  }
}

module.exports = MyBot;
