package saloon;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The bot protocol's messages (proto/saloon/v1/bot.proto) in protobuf's wire format, by
 * hand: the runtime needs no protobuf library and no generated code. Only the fields a bot
 * reads or writes are known; every other field is skipped, as protobuf's decoders do, so a
 * newer referee's additions are ignored. A message protobuf would refuse (cut short, a bad
 * wire type, a string that is not UTF-8) is an IOException.
 */
final class Wire {
    private Wire() {}

    /** BotError.Kind: a CRASH, or an INVALID choice. */
    static final int ERROR_EXCEPTION = 1;
    static final int ERROR_ILLEGAL_CHOICE = 2;

    private static final int VARINT = 0;
    private static final int FIXED64 = 1;
    private static final int LENGTH_DELIMITED = 2;
    private static final int START_GROUP = 3;
    private static final int END_GROUP = 4;
    private static final int FIXED32 = 5;

    static final class MatchStart {
        int protocolVersion;
        String matchId = "";
        String game = "";
        String optionsJson = "";
        int seat;
        int numSeats;
        long seed;
        int decisionMs;
        int bankMs;
        int startMs;
        boolean keepStream;
    }

    static final class DecisionRequest {
        int index;
        String kind = "";
        String observation = "";
        String legal = "";
        int decisionMs;
        int bankMs;
    }

    /** ToBot: one of start, decision, end (all null: a message this runtime does not know). */
    static final class ToBot {
        MatchStart start;
        DecisionRequest decision;
        boolean end;
    }

    /** A reader of one message's fields, {@code [pos, end)} of {@code buf}. */
    private static final class Reader {
        final byte[] buf;
        int pos;
        final int end;
        /** The field read last: its number and wire type; a VARINT's value; a
         * LENGTH_DELIMITED's bytes, {@code [from, to)}. */
        int number;
        int type;
        long value;
        int from;
        int to;

        Reader(byte[] buf, int pos, int end) {
            this.buf = buf;
            this.pos = pos;
            this.end = end;
        }

        private long varint() throws IOException {
            long v = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                if (pos >= end) {
                    throw new IOException("a varint cut short");
                }
                byte b = buf[pos++];
                v |= (long) (b & 0x7f) << shift;
                if (b >= 0) {
                    return v;
                }
            }
            throw new IOException("a malformed varint");
        }

        private void skip(long n) throws IOException {
            if (n < 0 || n > end - pos) {
                throw new IOException("a field cut short");
            }
            pos += (int) n;
        }

        private void tag() throws IOException {
            long tag = varint();
            number = (int) (tag >>> 3);
            type = (int) (tag & 7);
            if (number == 0 || tag >>> 32 != 0) {
                throw new IOException("a bad tag: " + tag);
            }
        }

        /** Reads the next field (a group, an unknown field's type, is skipped whole); false
         * at the message's end. */
        boolean next() throws IOException {
            if (pos >= end) {
                return false;
            }
            tag();
            if (type == END_GROUP) {
                throw new IOException("an END_GROUP outside a group");
            }
            read();
            return true;
        }

        private void read() throws IOException {
            switch (type) {
                case VARINT -> value = varint();
                case FIXED64 -> skip(8);
                case FIXED32 -> skip(4);
                case LENGTH_DELIMITED -> {
                    long n = varint();
                    from = pos;
                    skip(n);
                    to = pos;
                }
                case START_GROUP -> {
                    int group = number;
                    while (true) {
                        if (pos >= end) {
                            throw new IOException("a group cut short");
                        }
                        tag();
                        if (type == END_GROUP) {
                            if (number != group) {
                                throw new IOException("a group ended by another");
                            }
                            break;
                        }
                        read();
                    }
                    number = group;
                    type = START_GROUP;
                }
                default -> throw new IOException("a bad wire type: " + type);
            }
        }

        Reader inner() {
            return new Reader(buf, from, to);
        }

        String utf8() throws IOException {
            try {
                return StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(buf, from, to - from)).toString();
            } catch (CharacterCodingException e) {
                throw new IOException("a string field that is not UTF-8");
            }
        }

        String text() {
            return new String(buf, from, to - from, StandardCharsets.UTF_8);
        }
    }

    static ToBot decodeToBot(byte[] frame) throws IOException {
        ToBot out = new ToBot();
        Reader in = new Reader(frame, 0, frame.length);
        while (in.next()) {
            if (in.type != LENGTH_DELIMITED || in.number > 3) {
                continue;
            }
            out = new ToBot();
            switch (in.number) {
                case 1 -> out.start = decodeStart(in.inner());
                case 2 -> out.decision = decodeDecision(in.inner());
                default -> {
                    Reader end = in.inner();
                    while (end.next()) {
                        // MatchEnd: the bot reads nothing of it (read through, to check it)
                    }
                    out.end = true;
                }
            }
        }
        return out;
    }

    private static MatchStart decodeStart(Reader in) throws IOException {
        MatchStart m = new MatchStart();
        while (in.next()) {
            int num = in.number;
            if (in.type == VARINT) {
                long v = in.value;
                switch (num) {
                    case 1 -> m.protocolVersion = (int) v;
                    case 5 -> m.seat = (int) v;
                    case 6 -> m.numSeats = (int) v;
                    case 7 -> m.seed = v;
                    case 8 -> m.decisionMs = (int) v;
                    case 9 -> m.bankMs = (int) v;
                    case 10 -> m.startMs = (int) v;
                    case 11 -> m.keepStream = v != 0;
                    default -> { }
                }
            } else if (in.type == LENGTH_DELIMITED && num >= 2 && num <= 4) {
                String s = in.utf8();
                switch (num) {
                    case 2 -> m.matchId = s;
                    case 3 -> m.game = s;
                    default -> m.optionsJson = s;
                }
            }
        }
        return m;
    }

    private static DecisionRequest decodeDecision(Reader in) throws IOException {
        DecisionRequest m = new DecisionRequest();
        while (in.next()) {
            int num = in.number;
            if (in.type == VARINT) {
                long v = in.value;
                switch (num) {
                    case 1 -> m.index = (int) v;
                    case 5 -> m.decisionMs = (int) v;
                    case 6 -> m.bankMs = (int) v;
                    default -> { }
                }
            } else if (in.type == LENGTH_DELIMITED && num >= 2 && num <= 4) {
                switch (num) {
                    case 2 -> m.kind = in.utf8();
                    case 3 -> m.observation = in.text();
                    default -> m.legal = in.text();
                }
            }
        }
        return m;
    }

    // -- encoding ---------------------------------------------------------------------------

    /** A message being written: fields appended in order. */
    private static final class Writer {
        final ByteArrayOutputStream out = new ByteArrayOutputStream(32);

        Writer varint(long v) {
            while ((v & ~0x7fL) != 0) {
                out.write((int) ((v & 0x7f) | 0x80));
                v >>>= 7;
            }
            out.write((int) v);
            return this;
        }

        Writer uint(int number, long v) {
            if (v != 0) {
                varint((long) number << 3 | VARINT).varint(v);
            }
            return this;
        }

        Writer bytes(int number, byte[] b) {
            varint((long) number << 3 | LENGTH_DELIMITED).varint(b.length);
            out.write(b, 0, b.length);
            return this;
        }

        Writer string(int number, String s) {
            if (!s.isEmpty()) {
                bytes(number, s.getBytes(StandardCharsets.UTF_8));
            }
            return this;
        }

        byte[] done() {
            return out.toByteArray();
        }
    }

    /** A FromBot with its one field {@code number} set to the message {@code body}. */
    private static byte[] fromBot(int number, Writer body) {
        return new Writer().bytes(number, body.done()).done();
    }

    static byte[] ready(int version, String name, boolean keeps) {
        return fromBot(1, new Writer().uint(1, version).string(2, name).uint(3, keeps ? 1 : 0));
    }

    static byte[] decision(int index, int action) {
        return fromBot(2, new Writer()
                .uint(1, Integer.toUnsignedLong(index))
                .uint(2, Integer.toUnsignedLong(action)));
    }

    static byte[] error(int index, int kind, String detail) {
        return fromBot(3, new Writer()
                .uint(1, Integer.toUnsignedLong(index))
                .uint(2, kind)
                .string(3, detail));
    }

    static byte[] ended() {
        return fromBot(4, new Writer());
    }
}
