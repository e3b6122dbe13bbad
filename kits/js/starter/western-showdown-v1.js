// My Western Legends: Showdown bot (western-showdown-v1).
// Every field of decision.observation is in docs/reference/western-showdown-v1.md, and the
// wire JSON in kits/schema/western-showdown-v1.json. Return one of decision.legal.

class MyBot {
  act(decision) {
    const legal = decision.legal;
    const hand = new Map(decision.observation.hand.map((c) => [c.id, c]));
    switch (decision.kind) {
      case "TURN":
      case "DETERMINATION_EXTRA": {
        // Place the strongest card in hand where it tops the stack (its ability fires).
        const places = legal.filter((a) => a.card !== undefined);
        if (places.length === 0) return legal[0];
        const top = (loc) => {
          const stack = decision.observation.locations.find((l) => l.id === loc).stack;
          return stack.length ? stack[stack.length - 1].value : 0;
        };
        const score = (a) => hand.get(a.card).value * 10 + (hand.get(a.card).value > top(a.location) ? 5 : 0);
        return places.reduce((a, b) => (score(b) > score(a) ? b : a));
      }
      case "MULLIGAN":
        return legal.find((a) => a.done) || legal[0];
      case "ACTIVATE":
      case "WALLOP_SECOND":
        return legal.find((a) => a.yes) || legal[0];
      default:
        return legal[0];
    }
  }
}

module.exports = MyBot;
