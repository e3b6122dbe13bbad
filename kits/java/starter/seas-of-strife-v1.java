// My Seas of Strife bot (seas-of-strife-v1). Points are bad: avoid winning tricks.
// The types come from the game's wire schema (class saloon.games.seas_of_strife_v1.View);
// docs/reference/seas-of-strife-v1.md says what each field means. act returns the index of
// one of the legal actions.
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import saloon.games.seas_of_strife_v1.View;

public final class Bot implements saloon.Bot {
    /** The colour of a card number: black 0-10, red 11-20, then one colour per ten. */
    static int colour(int card) {
        if (card <= 10) {
            return 0;
        }
        return card <= 20 ? 1 : card / 10;
    }

    /** The card that takes a trick: the highest card of the colour with the most cards in
     * it (docs/rules/seas-of-strife.md). */
    static int winner(List<Integer> trick) {
        Map<Integer, Integer> counts = new HashMap<>();
        int most = 0;
        for (int c : trick) {
            most = Math.max(most, counts.merge(colour(c), 1, Integer::sum));
        }
        int best = -1;
        for (int c : trick) {
            if (counts.get(colour(c)) == most && c > best) {
                best = c;
            }
        }
        return best;
    }

    @Override
    public int act(saloon.Decision raw) {
        View.Decision d = View.of(raw);
        View.Observation obs = d.observation;
        if (d.kind.equals(View.PLAY_CARD)) {
            List<View.PlayCard> legal = d.legalPlayCard();
            List<Integer> trick = new ArrayList<>();
            for (View.PlayedCard p : obs.trick) {
                trick.add(p.card);
            }
            // Following: the highest card that does not take the trick as it stands (shed a
            // dangerous card safely); leading, or when every card takes it: the lowest.
            int best = 0;
            boolean safe = false;
            for (int i = 0; i < legal.size(); i++) {
                int card = legal.get(i).card;
                List<Integer> after = new ArrayList<>(trick);
                after.add(card);
                boolean loses = !trick.isEmpty() && winner(after) != card;
                if (loses && (!safe || card > legal.get(best).card)) {
                    best = i;
                    safe = true;
                } else if (!safe && card < legal.get(best).card) {
                    best = i;
                }
            }
            return best;
        }
        if (d.kind.equals(View.CHOOSE_LEADER)) {
            // Let the next seat lead.
            int next = (obs.seat + 1) % obs.numPlayers;
            List<View.ChooseLeader> legal = d.legalChooseLeader();
            for (int i = 0; i < legal.size(); i++) {
                if (legal.get(i).seat == next) {
                    return i;
                }
            }
        }
        return 0;
    }
}
