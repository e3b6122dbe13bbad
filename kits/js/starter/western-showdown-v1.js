// My Western Legends: Showdown bot (western-showdown-v1).
// Every field of decision.observation is in docs/reference/western-showdown-v1.md, and the
// wire JSON in kits/schema/western-showdown-v1.json. Return one of decision.legal.

// Whether a stack (bottom first) meets its location's condition: then the player who
// placed the last card wins the whole stack (docs/rules/western-showdown.md).
function met(location, stack) {
  const count = (keep) => stack.filter(keep).length;
  const sum = stack.reduce((s, c) => s + c.value, 0);
  const has = (v) => stack.some((c) => c.value === v);
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
function place(obs, action) {
  const card = obs.hand.find((c) => c.id === action.card);
  const location = obs.locations.find((l) => l.id === action.location);
  if (card === undefined || location === undefined) return -100;
  const stack = location.stack;
  const top = stack.length ? stack[stack.length - 1].value : 0;
  if (met(location.id, [...stack, card])) return 100 + stack.length;
  return card.value > top ? 50 - card.value : 10 - card.value;
}

class MyBot {
  act(decision) {
    const legal = decision.legal;
    switch (decision.kind) {
      case "TURN":
      case "DETERMINATION_EXTRA": {
        const score = (a) => place(decision.observation, a);
        return legal.reduce((a, b) => (score(b) > score(a) ? b : a));
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
