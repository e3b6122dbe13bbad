package saloon;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
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
    /** The legal actions' JSON text, parsed when first read ({@link #legal()}). */
    private final String legalJson;
    private final int count;
    private JsonArray legal;

    Decision(String kind, String observation, String legalJson, int count, int index,
            Match match, Clock clock) {
        this.kind = kind;
        this.observation = observation;
        this.legalJson = legalJson;
        this.count = count;
        this.index = index;
        this.match = match;
        this.clock = clock;
    }

    /** The legal actions, each a JSON value; {@link Bot#act} returns the index of one. */
    public JsonArray legal() {
        if (legal == null) {
            try {
                legal = JsonParser.parseString(legalJson).getAsJsonArray();
            } catch (RuntimeException e) {
                throw new IllegalStateException("the legal actions do not decode: "
                        + e.getMessage(), e);
            }
        }
        return legal;
    }

    /** The legal actions' JSON text, as the referee sent it (an array). */
    public String legalJson() {
        return legalJson;
    }

    /** How many legal actions there are. */
    public int count() {
        return count;
    }

    /**
     * The number of values in the JSON array {@code json}, counted without parsing them
     * (its top-level commas, strings and nesting minded), or -1 when it is not an array.
     */
    static int arrayLength(String json) {
        int n = json.length();
        int i = 0;
        while (i < n && json.charAt(i) <= ' ') {
            i++;
        }
        if (i == n || json.charAt(i) != '[') {
            return -1;
        }
        int depth = 0;
        int commas = 0;
        boolean empty = true;
        for (; i < n; i++) {
            char c = json.charAt(i);
            if (c == '"') {
                for (i++; i < n && json.charAt(i) != '"'; i++) {
                    if (json.charAt(i) == '\\') {
                        i++;
                    }
                }
                empty = false;
            } else if (c == '[' || c == '{') {
                if (depth == 1) {
                    empty = false;
                }
                depth++;
            } else if (c == ']' || c == '}') {
                depth--;
                if (depth == 0) {
                    for (i++; i < n; i++) {
                        if (json.charAt(i) > ' ') {
                            return -1; // something after the array
                        }
                    }
                    return empty ? 0 : commas + 1;
                }
            } else if (c == ',' && depth == 1) {
                commas++;
            } else if (c > ' ' && depth == 1) {
                empty = false;
            }
        }
        return -1; // not closed
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
        JsonArray all = legal();
        List<T> out = new ArrayList<>(all.size());
        try {
            for (JsonElement action : all) {
                out.add(GSON.fromJson(action, type));
            }
        } catch (JsonParseException e) {
            throw new IllegalStateException("a legal action does not decode: " + e.getMessage(), e);
        }
        return out;
    }
}
