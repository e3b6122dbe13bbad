package saloon;

/**
 * A bot: one method, handed each decision, returning the index of one of its legal actions.
 *
 * <p>The bot's entry class (Bot.java, class {@code Bot}) implements this with a public
 * constructor taking no arguments; the runtime ({@link Main}) makes one instance and serves
 * it for as long as the program runs. A game's typed view ({@code saloon.games.GAME.View})
 * decodes a decision's observation and legal actions.
 */
public interface Bot {
    /** Decides: the index into {@code d.legal()} of the action to play. */
    int act(Decision d);
}
