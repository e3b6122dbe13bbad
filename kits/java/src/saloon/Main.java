package saloon;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalServerChannel;
import java.io.ByteArrayInputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URL;
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

    private static final int MAX_REFEREE_MESSAGE_BYTES = 16 * 1024 * 1024;
    /** What the referee reads as the reason a bot did not load (the Python runtime's words). */
    private static final String LOAD_ERROR = "saloon.sdk.run: cannot load the bot: ";
    private static final int DETAIL_CHARS = 900;

    private static Marked output;
    /** netty's own logger, kept quiet (its warnings are no business of the bot's stderr). */
    private static final java.util.logging.Logger NETTY = java.util.logging.Logger.getLogger("io.netty");

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
    private static final class Session implements StreamObserver<byte[]> {
        private final Bot bot;
        private final CodeSource source;
        private final String name;
        private final StreamObserver<byte[]> replies;
        private Match match;
        private boolean keepStream;
        private boolean done;

        Session(Bot bot, String name, StreamObserver<byte[]> replies) {
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
            JsonArray legal;
            try {
                JsonElement parsed = JsonParser.parseString(r.legal.toStringUtf8());
                if (!parsed.isJsonArray()) {
                    throw new IllegalArgumentException("not an array");
                }
                legal = parsed.getAsJsonArray();
            } catch (RuntimeException e) {
                return Wire.error(r.index, Wire.ERROR_EXCEPTION,
                        "the legal actions are not a JSON array: " + e.getMessage());
            }
            Decision d = new Decision(r.kind, r.observation.toStringUtf8(), legal, r.index, match,
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
            if (choice < 0 || choice >= legal.size()) {
                String detail = choice + " is not the index of one of the " + legal.size()
                        + " legal actions";
                System.err.println("decision " + r.index + ": " + detail);
                return Wire.error(r.index, Wire.ERROR_ILLEGAL_CHOICE, detail);
            }
            return Wire.decision(r.index, choice);
        }

        @Override
        public void onNext(byte[] frame) {
            if (done) {
                return;
            }
            Wire.ToBot message;
            try {
                message = Wire.decodeToBot(frame);
            } catch (IOException e) {
                done = true;
                replies.onError(io.grpc.Status.INVALID_ARGUMENT
                        .withDescription("a message the runtime cannot read: " + e.getMessage())
                        .asRuntimeException());
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
                    replies.onCompleted();
                    return;
                }
                match = null;
                reply = Wire.ended();
            } else {
                return;
            }
            replies.onNext(reply);
        }

        @Override
        public void onError(Throwable t) {
            done = true;
        }

        @Override
        public void onCompleted() {
            if (!done) {
                done = true;
                replies.onCompleted();
            }
        }
    }

    /** Passes the runtime's hand-encoded messages through as bytes. */
    private static final class Raw implements MethodDescriptor.Marshaller<byte[]> {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static ServerServiceDefinition service(Bot bot, String name) {
        Raw raw = new Raw();
        MethodDescriptor<byte[], byte[]> play = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
                .setFullMethodName(MethodDescriptor.generateFullMethodName("saloon.v1.Bot", "Play"))
                .setRequestMarshaller(raw)
                .setResponseMarshaller(raw)
                .build();
        return ServerServiceDefinition.builder("saloon.v1.Bot")
                .addMethod(play, ServerCalls.asyncBidiStreamingCall(
                        replies -> new Session(bot, name, replies)))
                .build();
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
                Files.writeString(tmp, ProcessHandle.current().pid() + "\n");
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
        NETTY.setLevel(java.util.logging.Level.SEVERE);
        output = new Marked(new FileOutputStream(FileDescriptor.err));
        PrintStream marked = new PrintStream(output, true, StandardCharsets.UTF_8);
        System.setOut(marked);
        System.setErr(marked);

        // One event loop thread for the server and the bridge, and act runs on it (gRPC's
        // direct executor): a decision crosses two threads (the socket's reader, the loop),
        // not four. One stream is served at a time, as the Python runtime serves it.
        DefaultEventLoopGroup loop = new DefaultEventLoopGroup(1);
        NettyServerBuilder builder;
        LocalAddress local = new LocalAddress("saloon-bot");
        if (socket != null) {
            builder = NettyServerBuilder.forAddress(local)
                    .channelType(LocalServerChannel.class)
                    .bossEventLoopGroup(loop)
                    .workerEventLoopGroup(loop);
        } else {
            builder = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port));
        }
        Server server = builder
                .maxInboundMessageSize(MAX_REFEREE_MESSAGE_BYTES)
                .directExecutor()
                .addService(service(bot, name))
                .build();
        Bridge bridge = null;
        try {
            server.start();
            if (socket != null) {
                bridge = new Bridge(Path.of(socket), loop, local);
                bridge.start();
            } else {
                System.err.println("saloon runtime: serving on 127.0.0.1:" + server.getPort());
            }
        } catch (IOException e) {
            System.err.println("saloon runtime: cannot serve: " + e);
            System.err.flush();
            System.exit(1);
        }
        Bridge opened = bridge;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (opened != null) {
                opened.close();
            }
            server.shutdownNow();
            System.err.flush();
        }, "saloon-shutdown"));
        server.awaitTermination();
    }
}
