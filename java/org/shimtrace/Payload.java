package org.shimtrace;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A thread's event payload, encoded field by field in the layout the
 * trace's metadata gives the tracepoint (native byte order, no padding,
 * strings NUL-terminated), in a direct buffer whose address the native
 * write takes: one JNI call per event, with primitives only.
 *
 * A value is put by the type of its field: a long into an int field (in
 * range), an int or a long into a double field; anything else, or a
 * count of values other than the fields', throws IllegalArgumentException
 * (the program's mistake, found when the tracepoint is on).
 *
 * Nothing of the program runs between begin and end (the general fire
 * turns objects into strings before), so a tracepoint fired from inside
 * another's encoding cannot happen on the same thread.
 */
final class Payload {
    /** Room after a payload that the native write may read (it copies
     * 8-byte words: ST_PAYLOAD_SLACK). */
    private static final int SLACK = 8;
    /** The most bytes of a string, its NUL excluded (ST_STRING_MAX - 1). */
    private static final int STRING_MAX = 1023;

    private static final ThreadLocal<Payload> OF_THREAD = ThreadLocal.withInitial(Payload::new);

    private ByteBuffer buf;
    private long address;
    private int pos;

    private Payload() {
        room(256);
    }

    private void room(int size) {
        buf = ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder());
        address = Native.address(buf);
    }

    /** The thread's payload, emptied, for count values of tp. */
    static Payload begin(Tracepoint tp, int count) {
        if (count != tp.kinds.length)
            throw new IllegalArgumentException(tp.id() + " has " + tp.kinds.length
                    + " field(s), fire was given " + count + " value(s)");
        Payload p = OF_THREAD.get();
        if (p.buf.capacity() < tp.maxSize + SLACK)
            p.room(Math.max(tp.maxSize + SLACK, 2 * p.buf.capacity()));
        p.pos = 0;
        return p;
    }

    /** Writes the event. */
    void end(Tracepoint tp) {
        Native.write(tp.handle, address, pos);
    }

    private IllegalArgumentException mismatch(Tracepoint tp, int i, String given) {
        return new IllegalArgumentException(tp.id() + ": field " + tp.fieldNames[i] + " is "
                + tp.kinds[i].javaName + ", given " + given);
    }

    Payload put(Tracepoint tp, int i, long v) {
        switch (tp.kinds[i]) {
        case INT:
            if (v != (int) v)
                throw mismatch(tp, i, v + ", out of its range");
            buf.putInt(pos, (int) v);
            pos += 4;
            return this;
        case LONG:
            buf.putLong(pos, v);
            pos += 8;
            return this;
        case DOUBLE:
            return put(tp, i, (double) v);
        default:
            throw mismatch(tp, i, "a number");
        }
    }

    Payload put(Tracepoint tp, int i, double v) {
        if (tp.kinds[i] != Kind.DOUBLE)
            throw mismatch(tp, i, "a double");
        buf.putDouble(pos, v);
        pos += 8;
        return this;
    }

    /** A String field: UTF-8 (an unpaired surrogate as '?'), cut as a C
     * string is (shimtrace/tracepoint.h): at most STRING_MAX bytes, a
     * longer one ending in "..." after a whole character. */
    Payload put(Tracepoint tp, int i, String s) {
        if (tp.kinds[i] != Kind.STRING)
            throw mismatch(tp, i, "a String");
        int start = pos, n = s == null ? 0 : s.length(), k = 0;
        /* (ASCII that fits as it is: a byte a character, nothing to cut) */
        for (int ascii = Math.min(n, STRING_MAX); k < ascii; k++) {
            char c = s.charAt(k);
            if (c >= 0x80 || c == 0)
                break;
            buf.put(pos++, (byte) c);
        }
        int fits = Math.min(pos, start + STRING_MAX - 3);
        for (; k < n; k++) {
            int c = s.charAt(k);
            if (c == 0)
                break;
            if (Character.isHighSurrogate((char) c) && k + 1 < n
                    && Character.isLowSurrogate(s.charAt(k + 1)))
                c = Character.toCodePoint((char) c, s.charAt(++k));
            else if (Character.isSurrogate((char) c))
                c = '?';
            int len = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
            if (pos + len - start > STRING_MAX) {
                pos = fits;
                buf.put(pos++, (byte) '.').put(pos++, (byte) '.').put(pos++, (byte) '.');
                break;
            }
            utf8(c, len);
            if (pos - start <= STRING_MAX - 3)
                fits = pos;
        }
        buf.put(pos++, (byte) 0);
        return this;
    }

    private void utf8(int c, int len) {
        if (len == 1) {
            buf.put(pos++, (byte) c);
            return;
        }
        int lead = len == 2 ? 0xc0 : len == 3 ? 0xe0 : 0xf0;
        buf.put(pos++, (byte) (lead | c >> 6 * (len - 1)));
        for (int shift = 6 * (len - 2); shift >= 0; shift -= 6)
            buf.put(pos++, (byte) (0x80 | (c >> shift & 0x3f)));
    }

    /** A value of the general fire: a boxed number or a String (the
     * caller made other objects strings). */
    Payload put(Tracepoint tp, int i, Object v) {
        if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte)
            return put(tp, i, ((Number) v).longValue());
        if (v instanceof Double || v instanceof Float)
            return put(tp, i, ((Number) v).doubleValue());
        if (v instanceof String || (v == null && tp.kinds[i] == Kind.STRING))
            return put(tp, i, (String) v);
        if (v == null)
            throw mismatch(tp, i, "null");
        throw mismatch(tp, i, "a " + v.getClass().getName());
    }
}
