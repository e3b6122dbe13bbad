// Plays the last legal action; prints its first three decisions of each match.
class LastBot {
  onMatchStart(info) {
    this.seen = 0;
    this.seat = info.seat;
  }

  act(decision) {
    if (this.seen++ < 3) console.log("deciding", decision.kind, decision.legal.length);
    return decision.legal[decision.legal.length - 1];
  }
}

module.exports = LastBot;
