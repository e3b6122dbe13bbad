package saloon;

/** One decision's time. */
public final class Clock {
    /** This decision's time, and what is left of the match's bank, in milliseconds. */
    public final int decisionMs;
    public final int bankMs;
    /** When the runtime received the request ({@link System#nanoTime()}). */
    public final long startedNanos;

    Clock(int decisionMs, int bankMs, long startedNanos) {
        this.decisionMs = decisionMs;
        this.bankMs = bankMs;
        this.startedNanos = startedNanos;
    }

    /** Milliseconds left of the decision's own time (the bank is drawn on after it). */
    public long remainingMs() {
        return decisionMs - (System.nanoTime() - startedNanos) / 1_000_000L;
    }
}
