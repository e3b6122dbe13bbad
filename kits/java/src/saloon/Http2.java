package saloon;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A gRPC server of one method, by hand: HTTP/2 (RFC 9113) without TLS over a socket the JDK
 * accepted (a unix socket, or TCP for development), the gRPC framing of messages on it, and
 * nothing else. It replaces grpc-java and netty, which a JVM that lives one match ran
 * interpreted: this is a few classes, parsed once into the class-data archive.
 *
 * <p>What it does, for a client such as gRPC's own (the referee's is gRPC's C core):
 * <ul>
 * <li>the connection: the client's preface, SETTINGS both ways (each acknowledged), PING
 *     answered, GOAWAY taken as the client's last word (it closes the socket after it);
 *     a protocol error ends the connection with a GOAWAY naming it;
 * <li>streams: a request's HEADERS (and CONTINUATIONs) decoded by {@link Hpack}; a stream
 *     of another method than the one served is answered UNIMPLEMENTED at once; RST_STREAM
 *     from the client cancels its stream;
 * <li>flow control both ways: what the client sends is acknowledged (WINDOW_UPDATE) as it
 *     is taken, and what the server sends waits for the client's windows;
 * <li>gRPC on a stream: each message's 5-byte prefix (uncompressed; a compressed one is
 *     refused UNIMPLEMENTED: the server accepts no grpc-encoding), messages of up to 16 MiB;
 *     the response's HEADERS, its messages, then trailers with grpc-status (and
 *     grpc-message), after which a stream the client has not half-closed is reset with
 *     NO_ERROR, as gRPC's own servers do.
 * </ul>
 *
 * <p>One thread per connection reads its frames and calls the handler on them; what the
 * handler sends is written when the frames read so far are handled (one write per batch).
 * The handler of every connection is called under one lock: the bot is called by one
 * thread at a time.
 */
final class Http2 {
    private Http2() {}

    /** The one method served. */
    static final String METHOD = "/saloon.v1.Bot/Play";
    /** The largest message taken from the client (the referee's limit, docs/protocol.md). */
    static final int MAX_MESSAGE = 16 * 1024 * 1024;

    static final int OK = 0;
    static final int INVALID_ARGUMENT = 3;
    static final int RESOURCE_EXHAUSTED = 8;
    static final int UNIMPLEMENTED = 12;
    static final int INTERNAL = 13;

    /** What a stream's calls go to: one per stream, made when the stream opens. */
    interface Call {
        /** A whole message from the client. */
        void message(byte[] message);

        /** The client half-closed the stream: it sends nothing more. */
        void halfClosed();

        /** The stream is gone (reset by the client, or its connection closed). */
        void cancelled();
    }

    /** Makes the call of each stream of the method served. */
    interface Handler {
        Call open(Stream stream);
    }

    private static final byte[] PREFACE =
            "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);

    private static final int DATA = 0;
    private static final int HEADERS = 1;
    private static final int PRIORITY = 2;
    private static final int RST_STREAM = 3;
    private static final int SETTINGS = 4;
    private static final int PUSH_PROMISE = 5;
    private static final int PING = 6;
    private static final int GOAWAY = 7;
    private static final int WINDOW_UPDATE = 8;
    private static final int CONTINUATION = 9;

    private static final int END_STREAM = 0x1;
    private static final int ACK = 0x1;
    private static final int END_HEADERS = 0x4;
    private static final int PADDED = 0x8;
    private static final int PRIORITY_FLAG = 0x20;

    private static final int NO_ERROR = 0;
    private static final int PROTOCOL_ERROR = 1;
    private static final int FLOW_CONTROL_ERROR = 3;
    private static final int STREAM_CLOSED = 5;
    private static final int FRAME_SIZE_ERROR = 6;
    private static final int COMPRESSION_ERROR = 9;

    private static final int SETTINGS_MAX_CONCURRENT_STREAMS = 3;
    private static final int SETTINGS_INITIAL_WINDOW_SIZE = 4;
    private static final int SETTINGS_MAX_FRAME_SIZE = 5;
    private static final int SETTINGS_MAX_HEADER_LIST_SIZE = 6;

    /** The largest frame the server takes (HTTP/2's default: it sets no other). */
    private static final int MAX_FRAME = 16384;
    /** The window the server gives each stream and the connection, kept open as it reads. */
    private static final int RECEIVE_WINDOW = 1 << 20;
    private static final int DEFAULT_WINDOW = 65535;
    private static final int MAX_STREAMS = 100;

    /** The response's HEADERS block: :status 200 (static entry 8), then content-type
     * (static name 31, a literal not indexed) application/grpc. */
    private static final byte[] RESPONSE_HEADERS;

    static {
        byte[] type = "application/grpc".getBytes(StandardCharsets.ISO_8859_1);
        RESPONSE_HEADERS = new byte[3 + 1 + type.length];
        RESPONSE_HEADERS[0] = (byte) 0x88;
        RESPONSE_HEADERS[1] = 0x0f; // literal without indexing, name index 31 = 15 + 16
        RESPONSE_HEADERS[2] = 0x10;
        RESPONSE_HEADERS[3] = (byte) type.length;
        System.arraycopy(type, 0, RESPONSE_HEADERS, 4, type.length);
    }

    /** A connection error: GOAWAY with {@code code}, then the socket closes. */
    private static final class ConnectionError extends Exception {
        private static final long serialVersionUID = 1L;
        final int code;

        ConnectionError(int code, String message) {
            super(message);
            this.code = code;
        }
    }

    /** One stream: what its call sends goes through here. */
    static final class Stream {
        private final Connection connection;
        final int id;
        Call call;
        long sendWindow;
        int receivedUnacked;
        boolean remoteClosed;
        /** The server has ended its side (trailers written or waiting to be). */
        boolean localClosed;
        boolean headersSent;
        /** Messages waiting for a window: their prefixed bytes, {@code [pendingFrom, pendingTo)}. */
        byte[] pending = new byte[0];
        int pendingFrom;
        int pendingTo;
        /** Trailers to write once the pending bytes are written (null: not yet). */
        byte[] trailers;
        // A message being received: its prefix, then its body.
        final byte[] prefix = new byte[5];
        int prefixLength;
        byte[] body;
        int bodyLength;

        Stream(Connection connection, int id, long sendWindow) {
            this.connection = connection;
            this.id = id;
            this.sendWindow = sendWindow;
        }

        /** Sends one message on the stream (nothing once the stream is closed). */
        void send(byte[] message) {
            if (localClosed) {
                return;
            }
            connection.send(this, message);
        }

        /** Ends the stream with a gRPC status (OK: 0) and, for another, its message. */
        void close(int status, String message) {
            if (localClosed) {
                return;
            }
            localClosed = true;
            connection.finish(this, status, message);
        }
    }

    /** One client connection, served by the thread that runs it. */
    static final class Connection implements Runnable {
        private final SocketChannel channel;
        private final Handler handler;
        private final Object lock;
        private final Hpack hpack = new Hpack();
        private final Map<Integer, Stream> streams = new HashMap<>();
        private int lastStreamId;

        private byte[] in = new byte[64 * 1024];
        private int inStart;
        private int inEnd;
        private byte[] out = new byte[16 * 1024];
        private int outLength;

        private long sendWindow = DEFAULT_WINDOW;
        private int receivedUnacked;
        private int peerInitialWindow = DEFAULT_WINDOW;
        private int peerMaxFrame = MAX_FRAME;

        /** A header block being received (HEADERS, then CONTINUATIONs): its stream, or 0. */
        private int blockStream;
        private int blockFlags;
        private byte[] block = new byte[1024];
        private int blockLength;

        Connection(SocketChannel channel, Handler handler, Object lock) {
            this.channel = channel;
            this.handler = handler;
            this.lock = lock;
        }

        @Override
        public void run() {
            try {
                serve();
            } catch (ConnectionError e) {
                try {
                    goAway(e.code, e.getMessage());
                    flush();
                } catch (IOException ignored) {
                    // the client is gone too
                }
            } catch (IOException e) {
                // the client went away
            } catch (RuntimeException e) {
                System.err.println("saloon runtime: a connection failed: " + e);
            } finally {
                for (Stream stream : new ArrayList<>(streams.values())) {
                    cancel(stream);
                }
                streams.clear();
                try {
                    channel.close();
                } catch (IOException e) {
                    // closed already
                }
            }
        }

        // -- reading --------------------------------------------------------------------

        /** Makes {@code n} bytes readable at {@code inStart}: writes what is pending first,
         * then reads (blocking) only when they are not here yet. */
        private void need(int n) throws IOException {
            if (inEnd - inStart >= n) {
                return;
            }
            flush();
            if (in.length - inStart < n) {
                System.arraycopy(in, inStart, in, 0, inEnd - inStart);
                inEnd -= inStart;
                inStart = 0;
            }
            ByteBuffer into = ByteBuffer.wrap(in);
            while (inEnd - inStart < n) {
                into.limit(in.length).position(inEnd);
                int read = channel.read(into);
                if (read < 0) {
                    throw new EOFException();
                }
                inEnd += read;
            }
        }

        private int int32(int at) {
            return (in[at] & 0xff) << 24 | (in[at + 1] & 0xff) << 16 | (in[at + 2] & 0xff) << 8
                    | (in[at + 3] & 0xff);
        }

        private void serve() throws IOException, ConnectionError {
            // The server's preface: its SETTINGS, then a window for the whole connection.
            frame(18, SETTINGS, 0, 0);
            setting(SETTINGS_MAX_CONCURRENT_STREAMS, MAX_STREAMS);
            setting(SETTINGS_INITIAL_WINDOW_SIZE, RECEIVE_WINDOW);
            setting(SETTINGS_MAX_HEADER_LIST_SIZE, Hpack.MAX_LIST_SIZE);
            windowUpdate(0, RECEIVE_WINDOW - DEFAULT_WINDOW);
            need(PREFACE.length);
            if (!Arrays.equals(in, inStart, inStart + PREFACE.length, PREFACE, 0,
                    PREFACE.length)) {
                throw new ConnectionError(PROTOCOL_ERROR, "not the HTTP/2 client preface");
            }
            inStart += PREFACE.length;
            while (true) {
                need(9);
                int length = (in[inStart] & 0xff) << 16 | (in[inStart + 1] & 0xff) << 8
                        | (in[inStart + 2] & 0xff);
                int type = in[inStart + 3] & 0xff;
                int flags = in[inStart + 4] & 0xff;
                int id = int32(inStart + 5) & 0x7fffffff;
                if (length > MAX_FRAME) {
                    throw new ConnectionError(FRAME_SIZE_ERROR, "a frame of " + length + " bytes");
                }
                need(9 + length);
                int at = inStart + 9;
                inStart += 9 + length;
                if (blockStream != 0 && type != CONTINUATION) {
                    throw new ConnectionError(PROTOCOL_ERROR, "a header block cut by a frame");
                }
                switch (type) {
                    case DATA -> data(id, flags, at, length);
                    case HEADERS -> headers(id, flags, at, length);
                    case PRIORITY -> {
                        if (id == 0) {
                            throw new ConnectionError(PROTOCOL_ERROR, "PRIORITY on stream 0");
                        }
                    }
                    case RST_STREAM -> reset(id, length);
                    case SETTINGS -> settings(id, flags, at, length);
                    case PUSH_PROMISE -> throw new ConnectionError(PROTOCOL_ERROR,
                            "a PUSH_PROMISE from the client");
                    case PING -> ping(id, flags, at, length);
                    case GOAWAY -> {
                        // The client ends the connection: it closes the socket once its
                        // streams are done.
                    }
                    case WINDOW_UPDATE -> windowUpdate(id, at, length);
                    case CONTINUATION -> continuation(id, flags, at, length);
                    default -> { } // frames of an unknown type are ignored
                }
            }
        }

        private void data(int id, int flags, int at, int length) throws ConnectionError {
            if (id == 0) {
                throw new ConnectionError(PROTOCOL_ERROR, "DATA on stream 0");
            }
            // All of it counts against the windows, padding too.
            int frameLength = length;
            receivedUnacked += length;
            if (receivedUnacked >= RECEIVE_WINDOW / 2) {
                windowUpdate(0, receivedUnacked);
                receivedUnacked = 0;
            }
            int pad = 0;
            if ((flags & PADDED) != 0) {
                if (length < 1 || (pad = in[at] & 0xff) >= length) {
                    throw new ConnectionError(PROTOCOL_ERROR, "bad DATA padding");
                }
                at++;
                length -= 1 + pad;
            }
            Stream stream = streams.get(id);
            if (stream == null) {
                if (id > lastStreamId) {
                    throw new ConnectionError(PROTOCOL_ERROR, "DATA on an idle stream");
                }
                return; // a stream closed already: what was in flight is dropped
            }
            if (stream.remoteClosed) {
                streamError(stream, STREAM_CLOSED);
                return;
            }
            boolean end = (flags & END_STREAM) != 0;
            stream.receivedUnacked += frameLength;
            if (!end && stream.receivedUnacked >= RECEIVE_WINDOW / 2) {
                windowUpdate(id, stream.receivedUnacked);
                stream.receivedUnacked = 0;
            }
            // Half-closed before its messages are handled: a stream they end is not reset.
            stream.remoteClosed = end;
            receive(stream, at, length);
            if (end) {
                halfClosed(stream);
            }
        }

        /** The client sends nothing more on the stream. */
        private void halfClosed(Stream stream) {
            stream.remoteClosed = true;
            if (stream.localClosed) {
                if (stream.trailers == null) {
                    streams.remove(stream.id);
                }
            } else if (stream.prefixLength != 0) {
                stream.close(INTERNAL, "the stream ended inside a message");
            } else {
                synchronized (lock) {
                    stream.call.halfClosed();
                }
            }
        }

        /** Takes a stream's DATA: whole messages go to its call. */
        private void receive(Stream stream, int at, int length) {
            while (length > 0 && !stream.localClosed) {
                if (stream.body == null) {
                    int n = Math.min(5 - stream.prefixLength, length);
                    System.arraycopy(in, at, stream.prefix, stream.prefixLength, n);
                    stream.prefixLength += n;
                    at += n;
                    length -= n;
                    if (stream.prefixLength < 5) {
                        return;
                    }
                    int size = (stream.prefix[1] & 0xff) << 24 | (stream.prefix[2] & 0xff) << 16
                            | (stream.prefix[3] & 0xff) << 8 | (stream.prefix[4] & 0xff);
                    if (stream.prefix[0] != 0) {
                        stream.close(UNIMPLEMENTED, "a compressed message: this server takes"
                                + " only uncompressed messages (grpc-encoding identity)");
                        return;
                    }
                    if (size < 0 || size > MAX_MESSAGE) {
                        stream.close(RESOURCE_EXHAUSTED, "a message of "
                                + Integer.toUnsignedString(size) + " bytes, over the limit of "
                                + MAX_MESSAGE);
                        return;
                    }
                    stream.body = new byte[size];
                    stream.bodyLength = 0;
                } else {
                    int n = Math.min(stream.body.length - stream.bodyLength, length);
                    System.arraycopy(in, at, stream.body, stream.bodyLength, n);
                    stream.bodyLength += n;
                    at += n;
                    length -= n;
                }
                if (stream.bodyLength == stream.body.length) {
                    byte[] message = stream.body;
                    stream.body = null;
                    stream.prefixLength = 0;
                    synchronized (lock) {
                        stream.call.message(message);
                    }
                }
            }
        }

        private void headers(int id, int flags, int at, int length) throws ConnectionError,
                IOException {
            if (id == 0) {
                throw new ConnectionError(PROTOCOL_ERROR, "HEADERS on stream 0");
            }
            int pad = 0;
            if ((flags & PADDED) != 0) {
                if (length < 1) {
                    throw new ConnectionError(PROTOCOL_ERROR, "bad HEADERS padding");
                }
                pad = in[at] & 0xff;
                at++;
                length--;
            }
            if ((flags & PRIORITY_FLAG) != 0) {
                if (length < 5) {
                    throw new ConnectionError(PROTOCOL_ERROR, "bad HEADERS priority");
                }
                at += 5;
                length -= 5;
            }
            if (pad > length) {
                throw new ConnectionError(PROTOCOL_ERROR, "bad HEADERS padding");
            }
            blockLength = 0;
            blockStream = id;
            blockFlags = flags;
            fragment(at, length - pad);
            if ((flags & END_HEADERS) != 0) {
                headerBlock();
            }
        }

        private void continuation(int id, int flags, int at, int length) throws ConnectionError,
                IOException {
            if (blockStream == 0 || id != blockStream) {
                throw new ConnectionError(PROTOCOL_ERROR, "a CONTINUATION out of place");
            }
            fragment(at, length);
            if ((flags & END_HEADERS) != 0) {
                headerBlock();
            }
        }

        private void fragment(int at, int length) throws ConnectionError {
            if (blockLength + length > 4 * Hpack.MAX_LIST_SIZE) {
                throw new ConnectionError(COMPRESSION_ERROR, "a header block too large");
            }
            if (blockLength + length > block.length) {
                block = Arrays.copyOf(block, Math.max(block.length * 2, blockLength + length));
            }
            System.arraycopy(in, at, block, blockLength, length);
            blockLength += length;
        }

        /** A whole header block: a new stream's request, or a client's trailers. */
        private void headerBlock() throws ConnectionError, IOException {
            int id = blockStream;
            boolean end = (blockFlags & END_STREAM) != 0;
            blockStream = 0;
            List<String> fields;
            try {
                fields = hpack.decode(block, 0, blockLength);
            } catch (IOException | RuntimeException e) {
                throw new ConnectionError(COMPRESSION_ERROR, e.getMessage());
            }
            Stream stream = streams.get(id);
            if (stream != null) { // trailers: they must end the stream
                if (!end || stream.remoteClosed) {
                    streamError(stream, PROTOCOL_ERROR);
                    return;
                }
                halfClosed(stream);
                return;
            }
            if (id <= lastStreamId) {
                return; // a stream closed already
            }
            if ((id & 1) == 0) {
                throw new ConnectionError(PROTOCOL_ERROR, "a stream the client may not open");
            }
            lastStreamId = id;
            stream = new Stream(this, id, peerInitialWindow);
            stream.remoteClosed = end;
            streams.put(id, stream);
            String path = null;
            for (int i = 0; i < fields.size(); i += 2) {
                if (fields.get(i).equals(":path")) {
                    path = fields.get(i + 1);
                }
            }
            if (hpack.oversize) {
                stream.close(RESOURCE_EXHAUSTED, "request headers over "
                        + Hpack.MAX_LIST_SIZE + " bytes");
            } else if (streams.size() > MAX_STREAMS) {
                streams.remove(id);
                streamError(stream, 7); // REFUSED_STREAM
            } else if (!METHOD.equals(path)) {
                stream.close(UNIMPLEMENTED, "Method not found: " + path);
            } else {
                synchronized (lock) {
                    stream.call = handler.open(stream);
                    if (end) {
                        stream.call.halfClosed();
                    }
                }
            }
        }

        private void reset(int id, int length) throws ConnectionError {
            if (length != 4) {
                throw new ConnectionError(FRAME_SIZE_ERROR, "RST_STREAM of " + length + " bytes");
            }
            if (id == 0 || id > lastStreamId) {
                throw new ConnectionError(PROTOCOL_ERROR, "RST_STREAM on an idle stream");
            }
            Stream stream = streams.remove(id);
            if (stream != null) {
                cancel(stream);
            }
        }

        private void cancel(Stream stream) {
            stream.localClosed = true;
            if (stream.call != null) {
                synchronized (lock) {
                    stream.call.cancelled();
                }
            }
        }

        private void settings(int id, int flags, int at, int length) throws ConnectionError,
                IOException {
            if (id != 0) {
                throw new ConnectionError(PROTOCOL_ERROR, "SETTINGS on a stream");
            }
            if ((flags & ACK) != 0) {
                if (length != 0) {
                    throw new ConnectionError(FRAME_SIZE_ERROR, "a SETTINGS ACK with a body");
                }
                return;
            }
            if (length % 6 != 0) {
                throw new ConnectionError(FRAME_SIZE_ERROR, "SETTINGS of " + length + " bytes");
            }
            for (int i = at; i < at + length; i += 6) {
                int key = (in[i] & 0xff) << 8 | (in[i + 1] & 0xff);
                int value = int32(i + 2);
                if (key == SETTINGS_INITIAL_WINDOW_SIZE) {
                    if (value < 0) {
                        throw new ConnectionError(FLOW_CONTROL_ERROR, "a window over 2^31-1");
                    }
                    int delta = value - peerInitialWindow;
                    peerInitialWindow = value;
                    for (Stream stream : streams.values()) {
                        stream.sendWindow += delta;
                    }
                } else if (key == SETTINGS_MAX_FRAME_SIZE) {
                    if (value < MAX_FRAME || value > 0xffffff) {
                        throw new ConnectionError(PROTOCOL_ERROR, "a bad SETTINGS_MAX_FRAME_SIZE");
                    }
                    peerMaxFrame = value;
                }
                // The rest change nothing here: the server's header blocks use no table, it
                // pushes nothing, and it opens no streams.
            }
            frame(0, SETTINGS, ACK, 0);
            writePending();
        }

        private void ping(int id, int flags, int at, int length) throws ConnectionError {
            if (id != 0) {
                throw new ConnectionError(PROTOCOL_ERROR, "PING on a stream");
            }
            if (length != 8) {
                throw new ConnectionError(FRAME_SIZE_ERROR, "PING of " + length + " bytes");
            }
            if ((flags & ACK) == 0) {
                frame(8, PING, ACK, 0);
                put(in, at, 8);
            }
        }

        private void windowUpdate(int id, int at, int length) throws ConnectionError,
                IOException {
            if (length != 4) {
                throw new ConnectionError(FRAME_SIZE_ERROR, "WINDOW_UPDATE of " + length
                        + " bytes");
            }
            int increment = int32(at) & 0x7fffffff;
            if (id == 0) {
                if (increment == 0) {
                    throw new ConnectionError(PROTOCOL_ERROR, "a WINDOW_UPDATE of 0");
                }
                sendWindow += increment;
                if (sendWindow > Integer.MAX_VALUE) {
                    throw new ConnectionError(FLOW_CONTROL_ERROR, "a window over 2^31-1");
                }
                writePending();
                return;
            }
            Stream stream = streams.get(id);
            if (stream == null) {
                if (id > lastStreamId) {
                    throw new ConnectionError(PROTOCOL_ERROR, "WINDOW_UPDATE on an idle stream");
                }
                return;
            }
            if (increment == 0) {
                streamError(stream, PROTOCOL_ERROR);
                return;
            }
            stream.sendWindow += increment;
            if (stream.sendWindow > Integer.MAX_VALUE) {
                streamError(stream, FLOW_CONTROL_ERROR);
                return;
            }
            writePending(stream);
        }

        /** A stream error: RST_STREAM, and the stream is gone. */
        private void streamError(Stream stream, int code) {
            rstStream(stream.id, code);
            streams.remove(stream.id);
            if (!stream.localClosed) {
                cancel(stream);
            }
        }

        // -- writing --------------------------------------------------------------------

        private void ensure(int n) {
            if (outLength + n > out.length) {
                out = Arrays.copyOf(out, Math.max(out.length * 2, outLength + n));
            }
        }

        private void put(byte[] b, int from, int n) {
            ensure(n);
            System.arraycopy(b, from, out, outLength, n);
            outLength += n;
        }

        private void putInt(int v) {
            ensure(4);
            out[outLength++] = (byte) (v >>> 24);
            out[outLength++] = (byte) (v >>> 16);
            out[outLength++] = (byte) (v >>> 8);
            out[outLength++] = (byte) v;
        }

        private void frame(int length, int type, int flags, int id) {
            ensure(9);
            out[outLength++] = (byte) (length >>> 16);
            out[outLength++] = (byte) (length >>> 8);
            out[outLength++] = (byte) length;
            out[outLength++] = (byte) type;
            out[outLength++] = (byte) flags;
            putInt(id);
        }

        private void setting(int key, int value) {
            ensure(2);
            out[outLength++] = (byte) (key >>> 8);
            out[outLength++] = (byte) key;
            putInt(value);
        }

        private void windowUpdate(int id, int increment) {
            frame(4, WINDOW_UPDATE, 0, id);
            putInt(increment);
        }

        private void rstStream(int id, int code) {
            frame(4, RST_STREAM, 0, id);
            putInt(code);
        }

        private void goAway(int code, String message) {
            byte[] debug = message == null ? new byte[0]
                    : message.getBytes(StandardCharsets.UTF_8);
            int n = Math.min(debug.length, 256);
            frame(8 + n, GOAWAY, 0, 0);
            putInt(lastStreamId);
            putInt(code);
            put(debug, 0, n);
        }

        private void flush() throws IOException {
            ByteBuffer buffer = ByteBuffer.wrap(out, 0, outLength);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            outLength = 0;
        }

        /** The stream's response HEADERS, once, before its first message or trailers. */
        private void responseHeaders(Stream stream, byte[] more, int flags) {
            int length = RESPONSE_HEADERS.length + (more == null ? 0 : more.length);
            frame(length, HEADERS, END_HEADERS | flags, stream.id);
            put(RESPONSE_HEADERS, 0, RESPONSE_HEADERS.length);
            if (more != null) {
                put(more, 0, more.length);
            }
            stream.headersSent = true;
        }

        void send(Stream stream, byte[] message) {
            if (!stream.headersSent) {
                responseHeaders(stream, null, 0);
            }
            int need = stream.pendingTo - stream.pendingFrom + 5 + message.length;
            if (stream.pendingFrom > 0 || stream.pending.length < need) {
                byte[] pending = stream.pending.length < need
                        ? new byte[Math.max(need, 2 * stream.pending.length)] : stream.pending;
                System.arraycopy(stream.pending, stream.pendingFrom, pending, 0,
                        stream.pendingTo - stream.pendingFrom);
                stream.pending = pending;
                stream.pendingTo -= stream.pendingFrom;
                stream.pendingFrom = 0;
            }
            byte[] p = stream.pending;
            int at = stream.pendingTo;
            p[at] = 0;
            p[at + 1] = (byte) (message.length >>> 24);
            p[at + 2] = (byte) (message.length >>> 16);
            p[at + 3] = (byte) (message.length >>> 8);
            p[at + 4] = (byte) message.length;
            System.arraycopy(message, 0, p, at + 5, message.length);
            stream.pendingTo += 5 + message.length;
            writePending(stream);
        }

        void finish(Stream stream, int status, String message) {
            byte[] trailers = trailers(status, message);
            if (!stream.headersSent) {
                // Trailers only: the status with the response's headers, ending the stream.
                responseHeaders(stream, trailers, END_STREAM);
                ended(stream);
                return;
            }
            stream.trailers = trailers;
            writePending(stream);
        }

        /** Writes what the windows let through of the stream's pending messages, then its
         * trailers once they are all written. */
        private void writePending(Stream stream) {
            while (stream.pendingTo > stream.pendingFrom) {
                long room = Math.min(Math.min(sendWindow, stream.sendWindow), peerMaxFrame);
                if (room <= 0) {
                    return;
                }
                int n = (int) Math.min(room, stream.pendingTo - stream.pendingFrom);
                frame(n, DATA, 0, stream.id);
                put(stream.pending, stream.pendingFrom, n);
                stream.pendingFrom += n;
                sendWindow -= n;
                stream.sendWindow -= n;
            }
            if (stream.trailers != null) {
                byte[] trailers = stream.trailers;
                stream.trailers = null;
                frame(trailers.length, HEADERS, END_HEADERS | END_STREAM, stream.id);
                put(trailers, 0, trailers.length);
                ended(stream);
            }
        }

        private void writePending() {
            for (Stream stream : new ArrayList<>(streams.values())) {
                writePending(stream);
            }
        }

        /** The server's side of the stream is written whole: a stream the client still
         * sends on is reset (NO_ERROR: the response is complete), as gRPC's servers do. */
        private void ended(Stream stream) {
            streams.remove(stream.id);
            if (!stream.remoteClosed) {
                rstStream(stream.id, NO_ERROR);
            }
        }
    }

    /** The trailers' header block: grpc-status, and grpc-message (percent-encoded). */
    static byte[] trailers(int status, String message) {
        StringBuilder block = new StringBuilder();
        literal(block, "grpc-status", Integer.toString(status));
        if (message != null && !message.isEmpty()) {
            literal(block, "grpc-message", percentEncoded(message));
        }
        return block.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** A literal header field without indexing, a new name (no Huffman). */
    private static void literal(StringBuilder block, String name, String value) {
        block.append('\0');
        length(block, name.length());
        block.append(name);
        length(block, value.length());
        block.append(value);
    }

    /** An HPACK integer of a 7-bit prefix (the string length, Huffman bit 0). */
    private static void length(StringBuilder block, int n) {
        if (n < 127) {
            block.append((char) n);
            return;
        }
        block.append((char) 127);
        n -= 127;
        while (n >= 128) {
            block.append((char) ((n & 0x7f) | 0x80));
            n >>>= 7;
        }
        block.append((char) n);
    }

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    /** gRPC's percent-encoding of grpc-message: UTF-8, each byte outside printable ASCII
     * (and '%') as %XX; cut to its first 1,000 bytes. */
    static String percentEncoded(String message) {
        byte[] utf8 = message.getBytes(StandardCharsets.UTF_8);
        StringBuilder s = new StringBuilder(Math.min(utf8.length, 1000));
        for (int i = 0; i < utf8.length && i < 1000; i++) {
            int b = utf8[i] & 0xff;
            if (b >= 0x20 && b <= 0x7e && b != '%') {
                s.append((char) b);
            } else {
                s.append('%').append(HEX[b >> 4]).append(HEX[b & 0xf]);
            }
        }
        return s.toString();
    }
}
