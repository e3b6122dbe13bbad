package saloon;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.URL;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.CodeSource;
import java.util.jar.JarFile;

/**
 * Saloon's bot runtime for Java: it serves one bot over the bot protocol exactly as the
 * Python runtime (saloon.sdk.run) does. docs/protocol.md is the protocol from the bot's side;
 * this is one implementation of it.
 *
 * <pre>java -cp RUNTIME:BOT.jar saloon.Main --jar BOT.jar --socket PATH   (or --port N)</pre>
 *
 * <p>The bot is the class the jar's manifest names (Main-Class: the build step writes it),
 * or {@code --class NAME}: it implements {@link Bot}. The program writes PATH.loading once it
 * is up, then serves gRPC on the unix socket PATH. Each Bot.Play stream is one match; a kept
 * stream (MatchStart.keep_stream) plays further matches. An exception in act is reported as a
 * BotError naming the bot's File.java:line, never a broken stream; what the bot prints
 * (System.out or System.err) goes to stderr, marked by the moment of the match it was
 * printed at.
 */
public final class Main {
    /** The bot protocol's version this runtime speaks. */
    public static final int PROTOCOL_VERSION = 1;

    /** What the referee reads as the reason a bot did not load (the Python runtime's words). */
    private static final String LOAD_ERROR = "saloon.sdk.run: cannot load the bot: ";
    private static final int DETAIL_CHARS = 900;

    private static Marked output;

    private Main() {}

    private static void mark(String moment) {
        if (output != null) {
            output.mark(moment);
        }
    }

    // -- the bot's exceptions, described on one line with its File.java:line -----------------

    /** The bot's own frame nearest the throw: File.java:line (a class from the bot's jar). */
    private static String botPlace(Throwable thrown, CodeSource bot) {
        for (StackTraceElement frame : thrown.getStackTrace()) {
            if (frame.getFileName() == null || frame.getLineNumber() < 0) {
                continue;
            }
            if (bot == null ? !isRuntime(frame.getClassName()) : fromBot(frame.getClassName(), bot)) {
                return frame.getFileName() + ":" + frame.getLineNumber();
            }
        }
        return "";
    }

    private static boolean isRuntime(String name) {
        for (String prefix : new String[] {"java.", "jdk.", "sun.", "com.google.", "io.", "saloon."}) {
            if (name.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    private static boolean fromBot(String className, CodeSource bot) {
        try {
            Class<?> type = Class.forName(className, false, Main.class.getClassLoader());
            CodeSource source = type.getProtectionDomain().getCodeSource();
            URL where = source == null ? null : source.getLocation();
            return where != null && where.equals(bot.getLocation());
        } catch (ClassNotFoundException | LinkageError | SecurityException e) {
            return false;
        }
    }

    // -- matches ---------------------------------------------------------------------------

    /** One Bot.Play stream: a match, or several on a kept stream. */
    private static final class Session implements Http2.Call {
        private final Bot bot;
        private final CodeSource source;
        private final String name;
        private final Http2.Stream replies;
        private Match match;
        private boolean keepStream;
        private boolean done;

        Session(Bot bot, String name, Http2.Stream replies) {
            this.bot = bot;
            this.source = bot.getClass().getProtectionDomain().getCodeSource();
            this.name = name;
            this.replies = replies;
        }

        private byte[] start(Wire.MatchStart m) {
            keepStream = m.keepStream;
            JsonObject options = new JsonObject();
            if (!m.optionsJson.isEmpty()) {
                try {
                    JsonElement parsed = JsonParser.parseString(m.optionsJson);
                    if (parsed.isJsonObject()) {
                        options = parsed.getAsJsonObject();
                    }
                } catch (RuntimeException e) {
                    // options the bot cannot read are no options
                }
            }
            match = new Match(m.matchId, m.game, options, m.seat, m.numSeats, m.seed,
                    m.decisionMs, m.bankMs);
            mark("start");
            return Wire.ready(PROTOCOL_VERSION, name, keepStream);
        }

        private byte[] decide(Wire.DecisionRequest r) {
            long started = System.nanoTime();
            if (match == null) {
                return Wire.error(r.index, Wire.ERROR_EXCEPTION,
                        "decision request before a successful match start");
            }
            mark("decision " + Integer.toUnsignedString(r.index));
            // The legal actions are counted here and parsed only when the bot reads them
            // (Decision.legal()): a bot that reads the observation alone parses no JSON.
            int count = Decision.arrayLength(r.legal);
            if (count < 0) {
                return Wire.error(r.index, Wire.ERROR_EXCEPTION,
                        "the legal actions are not a JSON array");
            }
            Decision d = new Decision(r.kind, r.observation, r.legal, count, r.index, match,
                    new Clock(r.decisionMs, r.bankMs, started));
            int choice;
            try {
                choice = bot.act(d);
            } catch (Throwable thrown) {
                StringWriter trace = new StringWriter();
                thrown.printStackTrace(new PrintWriter(trace));
                System.err.print("act threw " + trace);
                String detail = "act threw " + thrown;
                if (detail.length() > DETAIL_CHARS) {
                    detail = detail.substring(0, DETAIL_CHARS);
                }
                String place = botPlace(thrown, source);
                if (!place.isEmpty()) {
                    detail += " at " + place;
                }
                return Wire.error(r.index, Wire.ERROR_EXCEPTION, detail);
            }
            if (choice < 0 || choice >= count) {
                String detail = choice + " is not the index of one of the " + count
                        + " legal actions";
                System.err.println("decision " + r.index + ": " + detail);
                return Wire.error(r.index, Wire.ERROR_ILLEGAL_CHOICE, detail);
            }
            return Wire.decision(r.index, choice);
        }

        @Override
        public void message(byte[] frame) {
            if (done) {
                return;
            }
            Wire.ToBot message;
            try {
                message = Wire.decodeToBot(frame);
            } catch (IOException e) {
                done = true;
                replies.close(Http2.INVALID_ARGUMENT,
                        "a message the runtime cannot read: " + e.getMessage());
                return;
            }
            byte[] reply;
            if (message.decision != null) {
                reply = decide(message.decision);
            } else if (message.start != null) {
                reply = start(message.start);
            } else if (message.end) {
                mark("end");
                if (!keepStream) {
                    done = true;
                    replies.close(Http2.OK, null);
                    return;
                }
                match = null;
                reply = Wire.ended();
            } else {
                return;
            }
            replies.send(reply);
        }

        @Override
        public void cancelled() {
            done = true;
        }

        @Override
        public void halfClosed() {
            if (!done) {
                done = true;
                replies.close(Http2.OK, null);
            }
        }
    }

    private static Bot load(String className, String jar) throws Exception {
        if (className == null) {
            try (JarFile file = new JarFile(jar)) {
                className = file.getManifest() == null ? null
                        : file.getManifest().getMainAttributes().getValue("Main-Class");
            }
            if (className == null) {
                throw new IllegalArgumentException(jar + " names no Main-Class");
            }
        }
        Class<?> type = Class.forName(className);
        if (!Bot.class.isAssignableFrom(type)) {
            throw new IllegalArgumentException(
                    "class " + className + " does not implement saloon.Bot (int act(Decision d))");
        }
        return (Bot) type.getDeclaredConstructor().newInstance();
    }

    /** Makes each stream's session. (Classes, not lambdas, here and below: a lambda's
     * bootstrap costs a JVM that lives one match more than the class does.) */
    private static final class Sessions implements Http2.Handler {
        private final Bot bot;
        private final String name;

        Sessions(Bot bot, String name) {
            this.bot = bot;
            this.name = name;
        }

        @Override
        public Http2.Call open(Http2.Stream stream) {
            return new Session(bot, name, stream);
        }
    }

    /** On SIGTERM or SIGINT: the listener closed (the accept loop ends), stderr flushed. */
    private static final class Stop extends Thread {
        private final ServerSocketChannel listener;

        Stop(ServerSocketChannel listener) {
            super("saloon-shutdown");
            this.listener = listener;
        }

        @Override
        public void run() {
            try {
                listener.close();
            } catch (IOException e) {
                // closing: nothing to do
            }
            System.err.flush();
        }
    }

    /** This process's id: /proc/self's target on Linux (ProcessHandle's start-up is a
     * lambda's bootstrap and a thread pool, for one number). */
    private static String pid() {
        try {
            return Files.readSymbolicLink(Path.of("/proc/self")).toString();
        } catch (IOException | UnsupportedOperationException e) {
            return Long.toString(ProcessHandle.current().pid());
        }
    }

    private static void usage() {
        System.err.println("usage: saloon.Main (--jar BOT.jar | --class NAME)"
                + " (--socket PATH | --port N) [--name NAME]");
        System.exit(2);
    }

    /** Serves the bot: {@code --socket PATH} (as the sandboxes run it) or {@code --port N}. */
    public static void main(String[] args) throws Exception {
        String socket = null;
        String jar = null;
        String className = null;
        String name = "java bot";
        int port = -1;
        for (int i = 0; i < args.length; i++) {
            if (i + 1 >= args.length) {
                usage();
            }
            switch (args[i]) {
                case "--socket" -> socket = args[++i];
                case "--port" -> port = Integer.parseInt(args[++i]);
                case "--jar" -> jar = args[++i];
                case "--class" -> className = args[++i];
                case "--name" -> name = args[++i];
                default -> usage();
            }
        }
        if ((socket == null) == (port < 0) || (jar == null) == (className == null)) {
            usage();
        }
        if (socket != null) {
            Path marker = Path.of(socket + ".loading");
            Path tmp = Path.of(socket + ".loading.tmp");
            try {
                Files.writeString(tmp, pid() + "\n");
                Files.move(tmp, marker, StandardCopyOption.REPLACE_EXISTING,
                        StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                // the marker only says the program is up: serving says the rest
            }
        }
        PrintStream realErr = new PrintStream(new FileOutputStream(FileDescriptor.err), true,
                StandardCharsets.UTF_8);
        Bot bot;
        try {
            bot = load(className, jar);
        } catch (Throwable e) {
            Throwable cause = e instanceof java.lang.reflect.InvocationTargetException
                    && e.getCause() != null ? e.getCause() : e;
            realErr.println(LOAD_ERROR + cause);
            System.exit(2);
            return;
        }
        output = new Marked(new FileOutputStream(FileDescriptor.err));
        PrintStream marked = new PrintStream(output, true, StandardCharsets.UTF_8);
        System.setOut(marked);
        System.setErr(marked);

        ServerSocketChannel listener;
        try {
            if (socket != null) {
                Path path = Path.of(socket);
                Files.deleteIfExists(path);
                listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                listener.bind(UnixDomainSocketAddress.of(path));
            } else {
                listener = ServerSocketChannel.open();
                listener.bind(new InetSocketAddress("127.0.0.1", port));
                System.err.println("saloon runtime: serving on 127.0.0.1:"
                        + ((InetSocketAddress) listener.getLocalAddress()).getPort());
            }
        } catch (IOException e) {
            System.err.println("saloon runtime: cannot serve: " + e);
            System.err.flush();
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Stop(listener));

        // Each connection is served by a thread of its own (its frames read, its streams'
        // calls made there, act included); the bot is called by one thread at a time.
        Http2.Handler handler = new Sessions(bot, name);
        Object lock = new Object();
        for (int n = 1; ; n++) {
            SocketChannel client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // the listener is closed: the runtime stops
            }
            if (socket == null) {
                client.setOption(StandardSocketOptions.TCP_NODELAY, true);
            }
            Thread serving = new Thread(new Http2.Connection(client, handler, lock),
                    "saloon-connection-" + n);
            serving.setDaemon(true);
            serving.start();
        }
    }
}
