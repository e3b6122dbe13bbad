// My Seizure bot (seizure-v1). Shed your hand first; points count against you.
// The types come from the game's wire schema (<saloon/games/seizure_v1.hpp>);
// docs/reference/seizure-v1.md says what each field means. saloon::act returns the index
// of one of the legal actions; the runtime library has the program's main.
#include <cstdlib>
#include <functional>
#include <optional>
#include <vector>

#include <saloon/games/seizure_v1.hpp>

namespace game = saloon::games::seizure_v1;

namespace {

// How much to play a card now: a number card first (the higher the better, a 10 last of
// them: it makes you give cards away), one matching the reference's colours far first; a
// special card only when nothing else goes.
int play_score(const game::Card& card, const std::optional<game::Card>& ref) {
  if (card.kind != game::CardKind::Number || !card.number) return 0;
  int score = *card.number == 10 ? 10 : 100 + *card.number;
  if (ref && ref->colours.size() == 2 && card.colours == ref->colours) score += 1000;
  return score;
}

// How much to be rid of a card: +3 first, then the other special cards, the low numbers,
// and -3 last (it lowers your points).
int give_score(const game::Card& card) {
  if (card.kind == game::CardKind::PlusThree) return 400;
  if (card.kind == game::CardKind::MinusThree) return 0;
  if (card.kind != game::CardKind::Number || !card.number) return 300;
  if (*card.number == 10) return 189;
  return 200 - *card.number;
}

// The index of the largest of n values.
int most(std::size_t n, const std::function<int(std::size_t)>& value) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i) {
    if (value(i) > value(best)) best = i;
  }
  return static_cast<int>(best);
}

}  // namespace

int saloon::act(const saloon::Decision& d) {
  game::View view = game::view(d);
  const game::Observation& obs = view.observation;
  if (d.kind == game::kPlayCard) {
    auto legal = view.legal_play_card();
    return most(legal.size(), [&](std::size_t i) { return play_score(legal[i].card, obs.reference); });
  }
  if (d.kind == game::kGiveCard) {
    auto legal = view.legal_give_card();
    return most(legal.size(), [&](std::size_t i) { return give_score(legal[i].card); });
  }
  if (d.kind == game::kDealSize) {
    // Small deals: fewer cards to shed.
    auto legal = view.legal_deal_size();
    return most(legal.size(), [&](std::size_t i) { return -std::abs(legal[i].hand_size - 7); });
  }
  if (d.kind == game::kGiveTo) {
    // The seat holding the fewest cards.
    auto legal = view.legal_give_to();
    return most(legal.size(), [&](std::size_t i) { return -obs.hand_sizes[legal[i].seat]; });
  }
  if (d.kind == game::kTradePartner) {
    auto legal = view.legal_trade_partner();
    return most(legal.size(), [&](std::size_t i) { return -obs.hand_sizes[legal[i].seat]; });
  }
  return 0;
}
