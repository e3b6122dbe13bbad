// My Seizure bot (seizure-v1). Shed your hand first; points count against you.
// The types come from the game's wire schema (class saloon.games.seizure_v1.View);
// docs/reference/seizure-v1.md says what each field means. act returns the index of one of
// the legal actions.
import java.util.List;
import java.util.function.IntUnaryOperator;
import saloon.games.seizure_v1.View;

public final class Bot implements saloon.Bot {
    /** How much to play a card now: a number card first (the higher the better, a 10 last
     * of them: it makes you give cards away), one matching the reference's colours far
     * first; a special card only when nothing else goes. */
    static int playScore(View.Card card, View.Card ref) {
        if (card.kind != View.CardKind.NUMBER || card.number == null) {
            return 0;
        }
        int score = card.number == 10 ? 10 : 100 + card.number;
        if (ref != null && ref.colours.size() == 2 && card.colours.size() == 2
                && ref.colours.equals(card.colours)) {
            score += 1000;
        }
        return score;
    }

    /** How much to be rid of a card: +3 first, then the other special cards, the low
     * numbers, and -3 last (it lowers your points). */
    static int giveScore(View.Card card) {
        if (card.kind == View.CardKind.PLUS_THREE) {
            return 400;
        }
        if (card.kind == View.CardKind.MINUS_THREE) {
            return 0;
        }
        if (card.kind != View.CardKind.NUMBER || card.number == null) {
            return 300;
        }
        return card.number == 10 ? 189 : 200 - card.number;
    }

    /** The index of the largest of n values. */
    static int most(int n, IntUnaryOperator value) {
        int best = 0;
        for (int i = 1; i < n; i++) {
            if (value.applyAsInt(i) > value.applyAsInt(best)) {
                best = i;
            }
        }
        return best;
    }

    @Override
    public int act(saloon.Decision raw) {
        View.Decision d = View.of(raw);
        View.Observation obs = d.observation;
        switch (d.kind) {
            case View.PLAY_CARD -> {
                List<View.PlayCard> legal = d.legalPlayCard();
                return most(legal.size(), i -> playScore(legal.get(i).card, obs.reference));
            }
            case View.GIVE_CARD -> {
                List<View.GiveCard> legal = d.legalGiveCard();
                return most(legal.size(), i -> giveScore(legal.get(i).card));
            }
            case View.DEAL_SIZE -> {
                // Small deals: fewer cards to shed.
                List<View.DealSize> legal = d.legalDealSize();
                return most(legal.size(), i -> -Math.abs(legal.get(i).handSize - 7));
            }
            case View.GIVE_TO -> {
                // The seat holding the fewest cards.
                List<View.GiveTo> legal = d.legalGiveTo();
                return most(legal.size(), i -> -obs.handSizes.get(legal.get(i).seat));
            }
            case View.TRADE_PARTNER -> {
                List<View.TradePartner> legal = d.legalTradePartner();
                return most(legal.size(), i -> -obs.handSizes.get(legal.get(i).seat));
            }
            default -> {
                return 0;
            }
        }
    }
}
