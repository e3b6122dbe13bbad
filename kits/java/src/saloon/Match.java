package saloon;

import com.google.gson.JsonObject;

/** What a bot knows of its match from its start. */
public final class Match {
    /** The match's id. */
    public final String id;
    /** The game's id, e.g. {@code "seizure-v1"}. */
    public final String game;
    /** The match's options, a JSON object. */
    public final JsonObject options;
    /** This bot's seat (from 0), and how many seats play. */
    public final int seat;
    public final int numSeats;
    /** Seed for the bot's own randomness (derived from the match seed and the seat). */
    public final long seed;
    /** Time per decision, and the match's time bank drawn on beyond it, in milliseconds. */
    public final int decisionMs;
    public final int bankMs;

    Match(String id, String game, JsonObject options, int seat, int numSeats, long seed,
            int decisionMs, int bankMs) {
        this.id = id;
        this.game = game;
        this.options = options;
        this.seat = seat;
        this.numSeats = numSeats;
        this.seed = seed;
        this.decisionMs = decisionMs;
        this.bankMs = bankMs;
    }
}
