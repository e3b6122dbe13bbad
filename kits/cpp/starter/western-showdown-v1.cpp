// My Western Legends: Showdown bot (western-showdown-v1).
// The types come from the game's wire schema (<saloon/games/western_showdown_v1.hpp>);
// docs/reference/western-showdown-v1.md says what each field means. saloon::act returns
// the index of one of the legal actions; the runtime library has the program's main.
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include <saloon/games/western_showdown_v1.hpp>

namespace game = saloon::games::western_showdown_v1;

namespace {

// What a condition reads of a card: its colour and value.
struct Card {
  game::Colour colour;
  int value;
};

int count(const std::vector<Card>& stack, const std::function<bool(const Card&)>& keep) {
  int n = 0;
  for (const Card& c : stack) n += keep(c) ? 1 : 0;
  return n;
}

// Whether a stack (bottom first) meets location's condition: then the player who placed
// the last card wins the whole stack (docs/rules/western-showdown.md).
bool met(int location, const std::vector<Card>& stack) {
  int sum = 0;
  for (const Card& c : stack) sum += c.value;
  auto has = [&](int v) { return count(stack, [v](const Card& c) { return c.value == v; }) > 0; };
  switch (location) {
    case 0:  // Saloon: three 1s
      return count(stack, [](const Card& c) { return c.value == 1; }) >= 3;
    case 1:  // Sheriff's Office: two red and two black
      return count(stack, [](const Card& c) { return c.colour == game::Colour::Red; }) >= 2 &&
             count(stack, [](const Card& c) { return c.colour == game::Colour::Black; }) >= 2;
    case 2: {  // Doctor's Office: four different values
      std::set<int> values;
      for (const Card& c : stack) values.insert(c.value);
      return values.size() >= 4;
    }
    case 3:  // Mine: three of one colour next to each other
      for (std::size_t i = 2; i < stack.size(); ++i) {
        if (stack[i].colour == stack[i - 1].colour && stack[i].colour == stack[i - 2].colour) {
          return true;
        }
      }
      return false;
    case 4:  // Ranch: a sum of 12 or more
      return sum >= 12;
    case 5:  // Cabaret: a 1, a 5 and a 6
      return has(1) && has(5) && has(6);
    case 6:  // Bandit Hideout: four cards or more summing to 10 or less
      return stack.size() >= 4 && sum <= 10;
  }
  return false;
}

// Scores placing a card from hand at a location: a placement that wins the stack first
// (the bigger the better); else the cheapest card, one that tops the stack (its ability
// fires) before one that does not. Passing scores lowest.
int place(const game::Observation& obs, std::optional<int> id, std::optional<int> location) {
  if (!id || !location) return -100;
  Card played{game::Colour::Red, 0};
  for (const game::Card& c : obs.hand) {
    if (c.id == *id) played = Card{c.colour, c.value};
  }
  for (const game::Location& l : obs.locations) {
    if (l.id != *location) continue;
    std::vector<Card> stack;
    for (const game::StackCard& c : l.stack) stack.push_back(Card{c.colour, c.value});
    int top = stack.empty() ? 0 : stack.back().value;
    stack.push_back(played);
    if (met(l.id, stack)) return 100 + static_cast<int>(stack.size()) - 1;
    if (played.value > top) return 50 - played.value;
  }
  return 10 - played.value;
}

int best(std::size_t n, const std::function<int(std::size_t)>& score) {
  std::size_t top = 0;
  for (std::size_t i = 1; i < n; ++i) {
    if (score(i) > score(top)) top = i;
  }
  return static_cast<int>(top);
}

}  // namespace

int saloon::act(const saloon::Decision& d) {
  game::View view = game::view(d);
  const game::Observation& obs = view.observation;
  if (d.kind == game::kTurn) {
    auto legal = view.legal_turn();
    return best(legal.size(), [&](std::size_t i) { return place(obs, legal[i].card, legal[i].location); });
  }
  if (d.kind == game::kDeterminationExtra) {
    auto legal = view.legal_determination_extra();
    return best(legal.size(), [&](std::size_t i) { return place(obs, legal[i].card, legal[i].location); });
  }
  if (d.kind == game::kMulligan) {
    auto legal = view.legal_mulligan();
    for (std::size_t i = 0; i < legal.size(); ++i) {
      if (legal[i].done.value_or(false)) return static_cast<int>(i);
    }
  }
  if (d.kind == game::kActivate) {
    auto legal = view.legal_activate();
    for (std::size_t i = 0; i < legal.size(); ++i) {
      if (legal[i].yes) return static_cast<int>(i);
    }
  }
  if (d.kind == game::kWallopSecond) {
    auto legal = view.legal_wallop_second();
    for (std::size_t i = 0; i < legal.size(); ++i) {
      if (legal[i].yes) return static_cast<int>(i);
    }
  }
  return 0;
}
