package saloon;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * One request to decide: the seat's observation and the legal actions as the engine's JSON
 * (a game's typed view decodes them: {@code saloon.games.GAME.View.of(d)}).
 */
public final class Decision {
    private static final Gson GSON = new Gson();

    /** The game's decision kind, e.g. {@code "PLAY_CARD"}. */
    public final String kind;
    /** The seat's observation, a JSON object's text. */
    public final String observation;
    /** The match log index this decision becomes. */
    public final int index;
    public final Match match;
    public final Clock clock;
    private final JsonArray legal;

    Decision(String kind, String observation, JsonArray legal, int index, Match match,
            Clock clock) {
        this.kind = kind;
        this.observation = observation;
        this.legal = legal;
        this.index = index;
        this.match = match;
        this.clock = clock;
    }

    /** The legal actions, each a JSON value; {@link Bot#act} returns the index of one. */
    public JsonArray legal() {
        return legal;
    }

    /** How many legal actions there are. */
    public int count() {
        return legal.size();
    }

    /** Writes a line to the bot's stderr (kept with the match, marked by this decision). */
    public void note(String text) {
        System.err.println("note: " + text);
    }

    /** The observation decoded as {@code type} (a game view's Observation). */
    public <T> T observation(Class<T> type) {
        try {
            return GSON.fromJson(observation, type);
        } catch (JsonParseException e) {
            throw new IllegalStateException("the observation does not decode: " + e.getMessage(), e);
        }
    }

    /** The legal actions decoded as {@code type} (a game view's action), in order. */
    public <T> List<T> legal(Class<T> type) {
        List<T> out = new ArrayList<>(legal.size());
        try {
            for (JsonElement action : legal) {
                out.add(GSON.fromJson(action, type));
            }
        } catch (JsonParseException e) {
            throw new IllegalStateException("a legal action does not decode: " + e.getMessage(), e);
        }
        return out;
    }
}
