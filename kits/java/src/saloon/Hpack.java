package saloon;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * HTTP/2's header decoder (HPACK, RFC 7541): the static table, the dynamic table the
 * client's encoder fills, and Huffman-coded strings. One per connection, fed every header
 * block in order (a block the server refuses is decoded all the same: the table is the
 * connection's). The server's own headers need no encoder: they are written as indexed or
 * literal fields that never touch a table (see {@link Http2}).
 */
final class Hpack {
    /** The dynamic table's size the server's SETTINGS allow (the default: none sent). */
    static final int TABLE_SIZE = 4096;
    /** A header list larger than this (RFC 7541's entry sizes) is refused (its stream). */
    static final int MAX_LIST_SIZE = 64 * 1024;

    /** The last block decoded was larger than {@link #MAX_LIST_SIZE} (its fields cut). */
    boolean oversize;

    private static final String[] STATIC = {
        null,
        ":authority", "",
        ":method", "GET",
        ":method", "POST",
        ":path", "/",
        ":path", "/index.html",
        ":scheme", "http",
        ":scheme", "https",
        ":status", "200",
        ":status", "204",
        ":status", "206",
        ":status", "304",
        ":status", "400",
        ":status", "404",
        ":status", "500",
        "accept-charset", "",
        "accept-encoding", "gzip, deflate",
        "accept-language", "",
        "accept-ranges", "",
        "accept", "",
        "access-control-allow-origin", "",
        "age", "",
        "allow", "",
        "authorization", "",
        "cache-control", "",
        "content-disposition", "",
        "content-encoding", "",
        "content-language", "",
        "content-length", "",
        "content-location", "",
        "content-range", "",
        "content-type", "",
        "cookie", "",
        "date", "",
        "etag", "",
        "expect", "",
        "expires", "",
        "from", "",
        "host", "",
        "if-match", "",
        "if-modified-since", "",
        "if-none-match", "",
        "if-range", "",
        "if-unmodified-since", "",
        "last-modified", "",
        "link", "",
        "location", "",
        "max-forwards", "",
        "proxy-authenticate", "",
        "proxy-authorization", "",
        "range", "",
        "referer", "",
        "refresh", "",
        "retry-after", "",
        "server", "",
        "set-cookie", "",
        "strict-transport-security", "",
        "transfer-encoding", "",
        "user-agent", "",
        "vary", "",
        "via", "",
        "www-authenticate", "",
    };
    private static final int STATIC_ENTRIES = (STATIC.length - 1) / 2;

    // -- Huffman (RFC 7541, Appendix B) -----------------------------------------------------
    /**
     * The code length of each symbol (0-255, then EOS), as 'A' + length - 5. HPACK's code is
     * canonical (codes of one length are consecutive, in symbol order, each length's first
     * code following the last of the shorter lengths), so the lengths are the whole code.
     */
    private static final String LENGTHS =
            "ISXXXXXXXTZXXZXXXXXXXXZXXXXXXXXXBFFHIBDGFFDGDBBBAAABBBBBBBCDKBHFIBCCCCCCCCCCCCCCCCCCC"
            + "CCCDCDIOIJBKABABABBBACCBBBABCBAABCCCCCKGJIXPRPPRRRSRSSSSSTSTTRSTSSSSQRSRSSTRQPRRSSQS"
            + "RRTQRSSQQRQSRSSPRRRSRRSVVPORSRUVVVWWVTUOQVWWVWTQQVVXWWWPTPQRQQSRRUUTTVSVWVVWWWWWXWWW"
            + "WWVZ";
    private static final int EOS = 256;
    private static final int MAX_CODE = 30;
    /** Per length: its first code, how many codes it has, and where its symbols start. */
    private static final int[] FIRST = new int[MAX_CODE + 1];
    private static final int[] COUNT = new int[MAX_CODE + 1];
    private static final int[] OFFSET = new int[MAX_CODE + 1];
    /** The symbols by (length, symbol). */
    private static final int[] SYMBOLS = new int[EOS + 1];

    static {
        int n = 0;
        for (int length = 5; length <= MAX_CODE; length++) {
            OFFSET[length] = n;
            for (int symbol = 0; symbol <= EOS; symbol++) {
                if (LENGTHS.charAt(symbol) - 'A' + 5 == length) {
                    SYMBOLS[n++] = symbol;
                    COUNT[length]++;
                }
            }
        }
        int code = 0;
        for (int length = 1; length <= MAX_CODE; length++) {
            FIRST[length] = code;
            code = (code + COUNT[length]) << 1;
        }
    }

    static String huffman(byte[] in, int from, int to) throws IOException {
        byte[] out = new byte[(to - from) * 8 / 5 + 1];
        int n = 0;
        int code = 0;
        int length = 0;
        for (int i = from; i < to; i++) {
            int b = in[i];
            for (int bit = 7; bit >= 0; bit--) {
                code = (code << 1) | ((b >> bit) & 1);
                length++;
                int k = code - FIRST[length];
                if (k >= 0 && k < COUNT[length]) {
                    int symbol = SYMBOLS[OFFSET[length] + k];
                    if (symbol == EOS) {
                        throw new IOException("HPACK: EOS in a Huffman string");
                    }
                    out[n++] = (byte) symbol;
                    code = 0;
                    length = 0;
                } else if (length == MAX_CODE) {
                    throw new IOException("HPACK: a Huffman code that does not exist");
                }
            }
        }
        // The padding: fewer than 8 bits, all ones (the start of EOS).
        if (length > 7 || code != (1 << length) - 1) {
            throw new IOException("HPACK: bad padding of a Huffman string");
        }
        return new String(out, 0, n, StandardCharsets.ISO_8859_1);
    }

    // -- the dynamic table ------------------------------------------------------------------
    /** Entries, newest at {@code head}; a ring of names and values. */
    private String[] names = new String[16];
    private String[] values = new String[16];
    private int head;
    private int count;
    private int size;
    private int maxSize = TABLE_SIZE;

    private void add(String name, String value) {
        int entry = name.length() + value.length() + 32;
        while (count > 0 && size + entry > maxSize) {
            evict();
        }
        if (entry > maxSize) {
            return; // larger than the table: it empties the table, nothing is added
        }
        if (count == names.length) {
            String[] n = new String[count * 2];
            String[] v = new String[count * 2];
            for (int i = 0; i < count; i++) {
                n[i] = names[(head + i) % count];
                v[i] = values[(head + i) % count];
            }
            names = n;
            values = v;
            head = 0;
        }
        head = (head - 1 + names.length) % names.length;
        names[head] = name;
        values[head] = value;
        count++;
        size += entry;
    }

    private void evict() {
        int last = (head + count - 1) % names.length;
        size -= names[last].length() + values[last].length() + 32;
        names[last] = null;
        values[last] = null;
        count--;
    }

    private void resize(int newMax) throws IOException {
        if (newMax > TABLE_SIZE) {
            throw new IOException("HPACK: a table size over the one allowed: " + newMax);
        }
        maxSize = newMax;
        while (size > maxSize) {
            evict();
        }
    }

    private String name(int index) throws IOException {
        if (index >= 1 && index <= STATIC_ENTRIES) {
            return STATIC[2 * index - 1];
        }
        int i = index - STATIC_ENTRIES - 1;
        if (index < 1 || i >= count) {
            throw new IOException("HPACK: no entry " + index);
        }
        return names[(head + i) % names.length];
    }

    private String value(int index) {
        if (index <= STATIC_ENTRIES) {
            return STATIC[2 * index];
        }
        return values[(head + index - STATIC_ENTRIES - 1) % names.length];
    }

    // -- decoding ---------------------------------------------------------------------------
    private byte[] block;
    private int pos;
    private int end;

    private int integer(int prefixBits) throws IOException {
        int max = (1 << prefixBits) - 1;
        int value = block[pos++] & max;
        if (value < max) {
            return value;
        }
        for (int shift = 0; ; shift += 7) {
            if (pos >= end || shift > 21) {
                throw new IOException("HPACK: a bad integer");
            }
            int b = block[pos++];
            value += (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
    }

    private String string() throws IOException {
        if (pos >= end) {
            throw new IOException("HPACK: a string cut short");
        }
        boolean huffman = (block[pos] & 0x80) != 0;
        int length = integer(7);
        if (length > end - pos) {
            throw new IOException("HPACK: a string cut short");
        }
        int from = pos;
        pos += length;
        return huffman ? huffman(block, from, pos)
                : new String(block, from, length, StandardCharsets.ISO_8859_1);
    }

    /**
     * The header fields of one whole block (HEADERS and its CONTINUATIONs), as name, value,
     * name, value... (those past {@link #MAX_LIST_SIZE} left out, and {@link #oversize} set);
     * an IOException is the connection's COMPRESSION_ERROR.
     */
    List<String> decode(byte[] in, int from, int to) throws IOException {
        block = in;
        pos = from;
        end = to;
        List<String> fields = new ArrayList<>(16);
        int listSize = 0;
        boolean first = true;
        oversize = false;
        while (pos < end) {
            int b = block[pos] & 0xff;
            String name;
            String value;
            if ((b & 0x80) != 0) { // indexed
                int index = integer(7);
                name = name(index);
                value = value(index);
            } else if ((b & 0xe0) == 0x20) { // a dynamic table size update
                if (!first) {
                    throw new IOException("HPACK: a table size update after a field");
                }
                resize(integer(5));
                continue;
            } else {
                boolean indexing = (b & 0xc0) == 0x40;
                int index = integer(indexing ? 6 : 4); // 0000 without, 0001 never indexed
                name = index == 0 ? string() : name(index);
                value = string();
                if (indexing) {
                    add(name, value);
                }
            }
            first = false;
            listSize += name.length() + value.length() + 32;
            if (listSize > MAX_LIST_SIZE) {
                oversize = true;
            } else {
                fields.add(name);
                fields.add(value);
            }
        }
        block = null;
        return fields;
    }
}
