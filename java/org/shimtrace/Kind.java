package org.shimtrace;

/**
 * The Java types a tracepoint's field can have, and how each is recorded
 * (the ordinals are java/native/jni.c's KIND_ values):
 * int as a signed 32-bit integer, long as a signed 64-bit one, double as
 * an IEEE 754 binary64, String as UTF-8 up to 1023 bytes (a longer one is
 * cut to 1020 bytes and "...", null is "", and a U+0000 ends it).
 */
enum Kind {
    INT("int", 4),
    LONG("long", 8),
    DOUBLE("double", 8),
    STRING("String", 1024);

    /** The name a field's definition uses ("long id"). */
    final String javaName;
    /** The most bytes a value takes in an event. */
    final int maxSize;

    Kind(String javaName, int maxSize) {
        this.javaName = javaName;
        this.maxSize = maxSize;
    }

    /** The kind named name in a definition, or null. */
    static Kind named(String name) {
        for (Kind k : values())
            if (k.javaName.equals(name))
                return k;
        return null;
    }
}
