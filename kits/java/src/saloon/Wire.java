package saloon;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.WireFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

/**
 * The bot protocol's messages (proto/saloon/v1/bot.proto) in protobuf's wire format, by hand
 * with protobuf-java's coded streams: the runtime needs no generated code. Only the fields a
 * bot reads or writes are known; every other field is skipped, as protobuf's decoders do, so
 * a newer referee's additions are ignored.
 */
final class Wire {
    private Wire() {}

    /** BotError.Kind: a CRASH, or an INVALID choice. */
    static final int ERROR_EXCEPTION = 1;
    static final int ERROR_ILLEGAL_CHOICE = 2;

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
        ByteString observation = ByteString.EMPTY;
        ByteString legal = ByteString.EMPTY;
        int decisionMs;
        int bankMs;
    }

    /** ToBot: one of start, decision, end (all null: a message this runtime does not know). */
    static final class ToBot {
        MatchStart start;
        DecisionRequest decision;
        boolean end;
    }

    static ToBot decodeToBot(byte[] frame) throws IOException {
        ToBot out = new ToBot();
        CodedInputStream in = CodedInputStream.newInstance(frame);
        in.setSizeLimit(Integer.MAX_VALUE);
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            int num = WireFormat.getTagFieldNumber(tag);
            if (WireFormat.getTagWireType(tag) != WireFormat.WIRETYPE_LENGTH_DELIMITED || num > 3) {
                in.skipField(tag);
                continue;
            }
            ByteString body = in.readBytes();
            out = new ToBot();
            switch (num) {
                case 1 -> out.start = decodeStart(body.newCodedInput());
                case 2 -> out.decision = decodeDecision(body.newCodedInput());
                default -> out.end = true; // MatchEnd: the bot reads nothing of it
            }
        }
        return out;
    }

    private static MatchStart decodeStart(CodedInputStream in) throws IOException {
        MatchStart m = new MatchStart();
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            int type = WireFormat.getTagWireType(tag);
            int num = WireFormat.getTagFieldNumber(tag);
            if (type == WireFormat.WIRETYPE_VARINT) {
                long v = in.readUInt64();
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
            } else if (type == WireFormat.WIRETYPE_LENGTH_DELIMITED && num >= 2 && num <= 4) {
                String s = in.readStringRequireUtf8();
                switch (num) {
                    case 2 -> m.matchId = s;
                    case 3 -> m.game = s;
                    default -> m.optionsJson = s;
                }
            } else {
                in.skipField(tag);
            }
        }
        return m;
    }

    private static DecisionRequest decodeDecision(CodedInputStream in) throws IOException {
        DecisionRequest m = new DecisionRequest();
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            int type = WireFormat.getTagWireType(tag);
            int num = WireFormat.getTagFieldNumber(tag);
            if (type == WireFormat.WIRETYPE_VARINT) {
                long v = in.readUInt64();
                switch (num) {
                    case 1 -> m.index = (int) v;
                    case 5 -> m.decisionMs = (int) v;
                    case 6 -> m.bankMs = (int) v;
                    default -> { }
                }
            } else if (type == WireFormat.WIRETYPE_LENGTH_DELIMITED && num >= 2 && num <= 4) {
                ByteString b = in.readBytes();
                switch (num) {
                    case 2 -> m.kind = b.toStringUtf8();
                    case 3 -> m.observation = b;
                    default -> m.legal = b;
                }
            } else {
                in.skipField(tag);
            }
        }
        return m;
    }

    /** A FromBot with its one field {@code num} set to the message {@code body}. */
    private static byte[] fromBot(int num, Body body) {
        try {
            ByteArrayOutputStream inner = new ByteArrayOutputStream();
            CodedOutputStream out = CodedOutputStream.newInstance(inner);
            body.write(out);
            out.flush();
            ByteArrayOutputStream whole = new ByteArrayOutputStream(inner.size() + 8);
            CodedOutputStream outer = CodedOutputStream.newInstance(whole);
            outer.writeByteArray(num, inner.toByteArray());
            outer.flush();
            return whole.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private interface Body {
        void write(CodedOutputStream out) throws IOException;
    }

    static byte[] ready(int version, String name, boolean keeps) {
        return fromBot(1, out -> {
            if (version != 0) {
                out.writeUInt32(1, version);
            }
            if (!name.isEmpty()) {
                out.writeString(2, name);
            }
            if (keeps) {
                out.writeBool(3, true);
            }
        });
    }

    static byte[] decision(int index, int action) {
        return fromBot(2, out -> {
            if (index != 0) {
                out.writeUInt32(1, index);
            }
            if (action != 0) {
                out.writeUInt32(2, action);
            }
        });
    }

    static byte[] error(int index, int kind, String detail) {
        return fromBot(3, out -> {
            if (index != 0) {
                out.writeUInt32(1, index);
            }
            out.writeEnum(2, kind);
            if (!detail.isEmpty()) {
                out.writeString(3, detail);
            }
        });
    }

    static byte[] ended() {
        return fromBot(4, out -> { });
    }
}
