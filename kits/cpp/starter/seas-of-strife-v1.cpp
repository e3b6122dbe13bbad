// My Seas of Strife bot (seas-of-strife-v1). Points are bad: avoid winning tricks.
// The types come from the game's wire schema (<saloon/games/seas_of_strife_v1.hpp>);
// docs/reference/seas-of-strife-v1.md says what each field means. saloon::act returns the
// index of one of the legal actions; the runtime library has the program's main.
#include <map>
#include <vector>

#include <saloon/games/seas_of_strife_v1.hpp>

namespace game = saloon::games::seas_of_strife_v1;

namespace {

// The colour of a card number: black 0-10, red 11-20, then one colour per ten (21-29, ...).
int colour(int card) {
  if (card <= 10) return 0;
  if (card <= 20) return 1;
  return card / 10;
}

// The card that takes a trick: the highest card of the colours with the most cards in it
// (docs/rules/seas-of-strife.md).
int winner(const std::vector<int>& trick) {
  std::map<int, int> counts;
  int most = 0;
  for (int c : trick) most = std::max(most, ++counts[colour(c)]);
  int best = -1;
  for (int c : trick) {
    if (counts[colour(c)] == most && c > best) best = c;
  }
  return best;
}

}  // namespace

int saloon::act(const saloon::Decision& d) {
  game::View view = game::view(d);
  const game::Observation& obs = view.observation;
  if (d.kind == game::kPlayCard) {
    std::vector<game::PlayCard> legal = view.legal_play_card();
    std::vector<int> trick;
    for (const game::PlayedCard& played : obs.trick) trick.push_back(played.card);
    // Following: the highest card that does not take the trick as it stands (shed a
    // dangerous card safely); leading, or when every card takes it: the lowest.
    int best = 0;
    bool safe = false;
    for (int i = 0; i < static_cast<int>(legal.size()); ++i) {
      int card = legal[i].card;
      std::vector<int> after = trick;
      after.push_back(card);
      bool loses = !trick.empty() && winner(after) != card;
      if (loses && (!safe || card > legal[best].card)) {
        best = i;
        safe = true;
      } else if (!safe && card < legal[best].card) {
        best = i;
      }
    }
    return best;
  }
  if (d.kind == game::kChooseLeader) {
    // Let the next seat lead.
    int next = (obs.seat + 1) % obs.num_players;
    std::vector<game::ChooseLeader> legal = view.legal_choose_leader();
    for (int i = 0; i < static_cast<int>(legal.size()); ++i) {
      if (legal[i].seat == next) return i;
    }
  }
  return 0;
}
