package org.shimtrace;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;

/**
 * A shimtrace tracepoint of a Java program: an application event with
 * int, long, double and String fields, recorded by shimtrace beside the
 * native events of the process (shimtrace-events(7)).
 *
 * <pre>
 * static final Tracepoint REQUEST = Tracepoint.define("app", "request",
 *         "long id", "String path", "int status", "double ratio");
 * ...
 * if (REQUEST.enabled())
 *     REQUEST.fire(id, path, status, ratio);
 * </pre>
 *
 * and {@code shimtrace record -e 'app:*' -- java -cp shimtrace.jar:. App}
 * records app:request events.
 *
 * <p>{@link #enabled()} is one load of the tracepoint's enable mask, which
 * the session daemon writes into shared memory (no JNI call, no lock); a
 * disabled {@link #fire} costs the same, plus the call. Enabled, a fire
 * encodes the values in Java and makes one JNI call that writes the event
 * into the thread's ring buffer. The typed overloads of fire cover the
 * common shapes without boxing; {@link #fire(Object...)} takes any.
 *
 * <p>Defining is checked: a bad name or type throws
 * IllegalArgumentException with the reason. Nothing else of ours throws:
 * without the native library (libshimtrace-java.so, loaded from where
 * shimtrace installed it, or from the system property shimtrace.lib), or
 * when a tracepoint cannot be registered, tracepoints stay off and the
 * program runs on. A fire whose values do not fit the fields throws
 * IllegalArgumentException when the tracepoint is on.
 *
 * <p>Thread-safe. A tracepoint lives as long as the process.
 */
public final class Tracepoint {
    /** The most tracepoints a provider has (ST_PROVIDER_MAX_TRACEPOINTS). */
    public static final int MAX_PER_PROVIDER = 512;
    /** The most fields a tracepoint has. */
    public static final int MAX_FIELDS = 255;
    /** The longest name of a provider, tracepoint or field. */
    public static final int MAX_NAME = 63;

    /* An opaque load: one plain load on x86-64, as a plain one, but the
     * JIT may not keep its value across loop iterations, so a loop that
     * checks a tracepoint sees it switched on. */
    private static final VarHandle MASK =
            MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    /* The mask of every tracepoint that stays off. */
    private static final ByteBuffer OFF = ByteBuffer.allocateDirect(4);

    private static final Map<String, Tracepoint> DEFINED = new HashMap<>();
    private static final Map<String, Provider> PROVIDERS = new HashMap<>();
    private static boolean warnedKind;

    private static final class Provider {
        int count;
        ByteBuffer page; /* null until one of its tracepoints is registered */
    }

    final String provider;
    final String name;
    final String[] fieldNames;
    final Kind[] kinds;
    /** Bytes of the largest payload. */
    final int maxSize;
    /** The native descriptor's address (0: never on). */
    final long handle;
    private final ByteBuffer mask;
    private final int offset;

    private Tracepoint(String provider, String name, String[] fieldNames, Kind[] kinds,
            long handle, ByteBuffer mask, int offset) {
        this.provider = provider;
        this.name = name;
        this.fieldNames = fieldNames;
        this.kinds = kinds;
        int size = 0;
        for (Kind k : kinds)
            size += k.maxSize;
        this.maxSize = size;
        this.handle = handle;
        this.mask = mask;
        this.offset = offset;
    }

    /**
     * Defines tracepoint provider:name with the given fields, each
     * "TYPE NAME" with TYPE int, long, double or String, and returns it
     * (the same one again for the same definition). Names are a letter
     * or '_', then letters, digits or '_', at most 63 characters.
     *
     * @throws IllegalArgumentException a bad name or type, two fields of
     *         one name, more than 255 fields, more than 512 tracepoints in
     *         the provider, a provider name of shimtrace's own events, or
     *         provider:name defined before with other fields
     */
    public static Tracepoint define(String provider, String name, String... fields) {
        checkName("provider", provider);
        checkName("tracepoint", name);
        if (provider.equals("shimtrace") || provider.startsWith("lttng_ust_"))
            throw new IllegalArgumentException("provider name '" + provider
                    + "' is reserved for shimtrace's own events");
        String id = provider + ":" + name;
        if (fields == null)
            fields = new String[0];
        if (fields.length > MAX_FIELDS)
            throw new IllegalArgumentException(id + ": " + fields.length
                    + " fields, more than " + MAX_FIELDS);
        String[] names = new String[fields.length];
        Kind[] kinds = new Kind[fields.length];
        for (int i = 0; i < fields.length; i++) {
            String[] f = fields[i] == null ? new String[0] : fields[i].trim().split("\\s+");
            if (f.length != 2)
                throw new IllegalArgumentException(id + ": field '" + fields[i]
                        + "' is not TYPE NAME, as in \"long id\"");
            kinds[i] = Kind.named(f[0]);
            if (kinds[i] == null)
                throw new IllegalArgumentException(id + ": field '" + fields[i] + "': type '"
                        + f[0] + "' is not int, long, double or String");
            checkName(id + " field", f[1]);
            for (int k = 0; k < i; k++)
                if (names[k].equals(f[1]))
                    throw new IllegalArgumentException(id + ": two fields named " + f[1]);
            names[i] = f[1];
        }
        synchronized (DEFINED) {
            Tracepoint tp = DEFINED.get(id);
            if (tp != null) {
                if (!java.util.Arrays.equals(tp.fieldNames, names)
                        || !java.util.Arrays.equals(tp.kinds, kinds))
                    throw new IllegalArgumentException(id + " is defined already, as " + tp);
                return tp;
            }
            Provider p = PROVIDERS.computeIfAbsent(provider, k -> new Provider());
            if (p.count == MAX_PER_PROVIDER)
                throw new IllegalArgumentException(id + ": provider " + provider + " has "
                        + MAX_PER_PROVIDER + " tracepoints already, the most it can");
            p.count++;
            tp = register(p, provider, name, names, kinds);
            DEFINED.put(id, tp);
            return tp;
        }
    }

    /* The tracepoint, registered if the library can record it, else off. */
    private static Tracepoint register(Provider p, String provider, String name, String[] names,
            Kind[] kinds) {
        long handle = 0;
        if (Native.LOADED && recordable(provider + ":" + name, kinds)) {
            int[] ordinals = new int[kinds.length];
            for (int i = 0; i < kinds.length; i++)
                ordinals[i] = kinds[i].ordinal();
            handle = Native.define(provider, name, names, ordinals);
        }
        if (handle != 0 && p.page == null)
            p.page = Native.page(handle);
        if (handle == 0 || p.page == null)
            return new Tracepoint(provider, name, names, kinds, 0, OFF, 0);
        return new Tracepoint(provider, name, names, kinds, handle, p.page, 4 * Native.slot(handle));
    }

    /* Whether the library records every kind (double fields need a
     * libshimtrace that knows them); says once when not. */
    private static boolean recordable(String id, Kind[] kinds) {
        for (Kind k : kinds)
            if (!Native.canRecord(k.ordinal())) {
                if (!warnedKind)
                    System.err.println("shimtrace: " + id + " stays off: this libshimtrace "
                            + "cannot record " + k.javaName + " fields");
                warnedKind = true;
                return false;
            }
        return true;
    }

    private static void checkName(String what, String s) {
        boolean ok = s != null && !s.isEmpty() && s.length() <= MAX_NAME;
        for (int i = 0; ok && i < s.length(); i++) {
            char c = s.charAt(i);
            ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'
                    || (i > 0 && c >= '0' && c <= '9');
        }
        if (!ok)
            throw new IllegalArgumentException("bad " + what + " name '" + s + "': a name is a "
                    + "letter or '_', then letters, digits or '_', at most " + MAX_NAME
                    + " characters");
    }

    /** Whether the native library is loaded: without it no tracepoint is
     * ever on. */
    public static boolean available() {
        return Native.LOADED;
    }

    /** Whether a session records this tracepoint now. */
    public boolean enabled() {
        return (int) MASK.getOpaque(mask, offset) != 0;
    }

    public String provider() {
        return provider;
    }

    public String name() {
        return name;
    }

    String id() {
        return provider + ":" + name;
    }

    /** provider:name(TYPE NAME, ...), as defined. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(id()).append('(');
        for (int i = 0; i < kinds.length; i++)
            b.append(i > 0 ? ", " : "").append(kinds[i].javaName).append(' ').append(fieldNames[i]);
        return b.append(')').toString();
    }

    /**
     * Records an event with these values, one per field in order, if the
     * tracepoint is on: Integer, Long, Short or Byte for an int or long
     * field (in range), any of those or Double or Float for a double
     * field, anything for a String field (its toString(), null as "").
     * The typed overloads do the same without boxing.
     */
    public void fire(Object... values) {
        if (!enabled())
            return;
        Object[] v = values == null ? new Object[0] : values;
        /* (the program's toString runs now, not while the thread's payload
         * is being encoded: it may fire a tracepoint itself) */
        for (int i = 0; i < v.length && i < kinds.length; i++)
            if (kinds[i] == Kind.STRING && v[i] != null && !(v[i] instanceof String)) {
                if (v == values)
                    v = values.clone();
                v[i] = v[i].toString();
            }
        Payload p = Payload.begin(this, v.length);
        for (int i = 0; i < v.length; i++)
            p.put(this, i, v[i]);
        p.end(this);
    }

    /* The typed overloads: a long serves int, long and double fields, a
     * double double fields, a String String fields. */

    public void fire() {
        if (enabled())
            Payload.begin(this, 0).end(this);
    }

    public void fire(long a) {
        if (enabled())
            Payload.begin(this, 1).put(this, 0, a).end(this);
    }

    public void fire(double a) {
        if (enabled())
            Payload.begin(this, 1).put(this, 0, a).end(this);
    }

    public void fire(String a) {
        if (enabled())
            Payload.begin(this, 1).put(this, 0, a).end(this);
    }

    public void fire(long a, long b) {
        if (enabled())
            Payload.begin(this, 2).put(this, 0, a).put(this, 1, b).end(this);
    }

    public void fire(long a, double b) {
        if (enabled())
            Payload.begin(this, 2).put(this, 0, a).put(this, 1, b).end(this);
    }

    public void fire(long a, String b) {
        if (enabled())
            Payload.begin(this, 2).put(this, 0, a).put(this, 1, b).end(this);
    }

    public void fire(double a, long b) {
        if (enabled())
            Payload.begin(this, 2).put(this, 0, a).put(this, 1, b).end(this);
    }

    public void fire(double a, double b) {
        if (enabled())
            Payload.begin(this, 2).put(this, 0, a).put(this, 1, b).end(this);
    }

    public void fire(double a, String b) {
        if (enabled())
            Payload.begin(this, 2).put(this, 0, a).put(this, 1, b).end(this);
    }

    public void fire(String a, long b) {
        if (enabled())
            Payload.begin(this, 2).put(this, 0, a).put(this, 1, b).end(this);
    }

    public void fire(String a, double b) {
        if (enabled())
            Payload.begin(this, 2).put(this, 0, a).put(this, 1, b).end(this);
    }

    public void fire(String a, String b) {
        if (enabled())
            Payload.begin(this, 2).put(this, 0, a).put(this, 1, b).end(this);
    }

    public void fire(long a, long b, long c) {
        if (enabled())
            Payload.begin(this, 3).put(this, 0, a).put(this, 1, b).put(this, 2, c).end(this);
    }

    public void fire(long a, long b, String c) {
        if (enabled())
            Payload.begin(this, 3).put(this, 0, a).put(this, 1, b).put(this, 2, c).end(this);
    }

    public void fire(long a, String b, long c) {
        if (enabled())
            Payload.begin(this, 3).put(this, 0, a).put(this, 1, b).put(this, 2, c).end(this);
    }

    public void fire(long a, String b, String c) {
        if (enabled())
            Payload.begin(this, 3).put(this, 0, a).put(this, 1, b).put(this, 2, c).end(this);
    }

    public void fire(String a, long b, long c) {
        if (enabled())
            Payload.begin(this, 3).put(this, 0, a).put(this, 1, b).put(this, 2, c).end(this);
    }

    public void fire(String a, long b, String c) {
        if (enabled())
            Payload.begin(this, 3).put(this, 0, a).put(this, 1, b).put(this, 2, c).end(this);
    }

    public void fire(String a, String b, long c) {
        if (enabled())
            Payload.begin(this, 3).put(this, 0, a).put(this, 1, b).put(this, 2, c).end(this);
    }

    public void fire(String a, String b, String c) {
        if (enabled())
            Payload.begin(this, 3).put(this, 0, a).put(this, 1, b).put(this, 2, c).end(this);
    }

    public void fire(long a, String b, long c, double d) {
        if (enabled())
            Payload.begin(this, 4).put(this, 0, a).put(this, 1, b).put(this, 2, c).put(this, 3, d)
                    .end(this);
    }
}
