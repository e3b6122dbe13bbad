package saloon;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * What the bot prints (System.out and System.err both) goes to the real stderr through this
 * stream, with a mark line naming the moment of the match it was printed at ("start",
 * "decision 12", "end") before the first text of each moment, none when it prints nothing:
 * the referee keeps each decision's diagnostics this way, as it does a Python bot's.
 */
final class Marked extends OutputStream {
    /** The start of a mark line on stderr (a record separator, then the moment). */
    static final String PREFIX = "\u001e[saloon] ";

    private final OutputStream real;
    private String pending;
    private boolean lineStart = true;

    Marked(OutputStream real) {
        this.real = real;
    }

    /** What is printed from now on was printed at {@code moment}. */
    synchronized void mark(String moment) {
        pending = moment;
    }

    private void emitMark() throws IOException {
        if (pending != null) {
            String line = (lineStart ? "" : "\n") + PREFIX + pending + "\n";
            real.write(line.getBytes(StandardCharsets.UTF_8));
            pending = null;
        }
    }

    @Override
    public synchronized void write(int b) throws IOException {
        emitMark();
        real.write(b);
        lineStart = b == '\n';
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return;
        }
        emitMark();
        real.write(b, off, len);
        lineStart = b[off + len - 1] == '\n';
    }

    @Override
    public synchronized void flush() throws IOException {
        real.flush();
    }
}
