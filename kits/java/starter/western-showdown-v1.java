// My Western Legends: Showdown bot (western-showdown-v1).
// The types come from the game's wire schema (class saloon.games.western_showdown_v1.View);
// docs/reference/western-showdown-v1.md says what each field means. act returns the index
// of one of the legal actions.
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.IntUnaryOperator;
import saloon.games.western_showdown_v1.View;

public final class Bot implements saloon.Bot {
    /** What a condition reads of a card: its colour and value. */
    record Card(View.Colour colour, int value) {}

    static int count(List<Card> stack, java.util.function.Predicate<Card> keep) {
        int n = 0;
        for (Card c : stack) {
            if (keep.test(c)) {
                n++;
            }
        }
        return n;
    }

    /** Whether a stack (bottom first) meets the location's condition: then the player who
     * placed the last card wins the whole stack (docs/rules/western-showdown.md). */
    static boolean met(int location, List<Card> stack) {
        int sum = 0;
        for (Card c : stack) {
            sum += c.value();
        }
        switch (location) {
            case 0: // Saloon: three 1s
                return count(stack, c -> c.value() == 1) >= 3;
            case 1: // Sheriff's Office: two red and two black
                return count(stack, c -> c.colour() == View.Colour.RED) >= 2
                        && count(stack, c -> c.colour() == View.Colour.BLACK) >= 2;
            case 2: { // Doctor's Office: four different values
                HashSet<Integer> values = new HashSet<>();
                for (Card c : stack) {
                    values.add(c.value());
                }
                return values.size() >= 4;
            }
            case 3: // Mine: three of one colour next to each other
                for (int i = 2; i < stack.size(); i++) {
                    if (stack.get(i).colour() == stack.get(i - 1).colour()
                            && stack.get(i).colour() == stack.get(i - 2).colour()) {
                        return true;
                    }
                }
                return false;
            case 4: // Ranch: a sum of 12 or more
                return sum >= 12;
            case 5: // Cabaret: a 1, a 5 and a 6
                return count(stack, c -> c.value() == 1) > 0 && count(stack, c -> c.value() == 5) > 0
                        && count(stack, c -> c.value() == 6) > 0;
            case 6: // Bandit Hideout: four cards or more summing to 10 or less
                return stack.size() >= 4 && sum <= 10;
            default:
                return false;
        }
    }

    /** Scores placing a card from hand at a location: a placement that wins the stack first
     * (the bigger the better); else the cheapest card, one that tops the stack (its ability
     * fires) before one that does not. Passing scores lowest. */
    static int place(View.Observation obs, Integer id, Integer location) {
        if (id == null || location == null) {
            return -100;
        }
        Card played = new Card(null, 0);
        for (View.Card c : obs.hand) {
            if (c.id == id) {
                played = new Card(c.colour, c.value);
            }
        }
        for (View.Location l : obs.locations) {
            if (l.id != location) {
                continue;
            }
            List<Card> stack = new ArrayList<>();
            for (View.StackCard c : l.stack) {
                stack.add(new Card(c.colour, c.value));
            }
            int top = stack.isEmpty() ? 0 : stack.get(stack.size() - 1).value();
            int size = stack.size();
            stack.add(played);
            if (met(l.id, stack)) {
                return 100 + size;
            }
            if (played.value() > top) {
                return 50 - played.value();
            }
        }
        return 10 - played.value();
    }

    static int best(int n, IntUnaryOperator score) {
        int top = 0;
        for (int i = 1; i < n; i++) {
            if (score.applyAsInt(i) > score.applyAsInt(top)) {
                top = i;
            }
        }
        return top;
    }

    @Override
    public int act(saloon.Decision raw) {
        View.Decision d = View.of(raw);
        View.Observation obs = d.observation;
        switch (d.kind) {
            case View.TURN -> {
                List<View.Turn> legal = d.legalTurn();
                return best(legal.size(), i -> place(obs, legal.get(i).card, legal.get(i).location));
            }
            case View.DETERMINATION_EXTRA -> {
                List<View.DeterminationExtra> legal = d.legalDeterminationExtra();
                return best(legal.size(), i -> place(obs, legal.get(i).card, legal.get(i).location));
            }
            case View.MULLIGAN -> {
                List<View.Mulligan> legal = d.legalMulligan();
                for (int i = 0; i < legal.size(); i++) {
                    if (Boolean.TRUE.equals(legal.get(i).done)) {
                        return i;
                    }
                }
            }
            case View.ACTIVATE -> {
                List<View.Activate> legal = d.legalActivate();
                for (int i = 0; i < legal.size(); i++) {
                    if (legal.get(i).yes) {
                        return i;
                    }
                }
            }
            case View.WALLOP_SECOND -> {
                List<View.WallopSecond> legal = d.legalWallopSecond();
                for (int i = 0; i < legal.size(); i++) {
                    if (legal.get(i).yes) {
                        return i;
                    }
                }
            }
            default -> { }
        }
        return 0;
    }
}
