package org.shimtrace;

/**
 * libshimtrace-java.so (java/native/jni.c), loaded when the first
 * tracepoint is defined, from the path the build baked in
 * (Installed.LIBRARY) or the one the system property shimtrace.lib gives
 * ("none": do not load it, every tracepoint stays off, silently). A
 * library that cannot be loaded leaves every tracepoint off and says so
 * once on standard error; the program runs on.
 */
final class Native {
    static final boolean LOADED = load();

    private Native() {}

    private static boolean load() {
        String path = Installed.LIBRARY;
        try {
            path = System.getProperty("shimtrace.lib", path);
            if (path.equals("none"))
                return false;
            System.load(path);
            return true;
        } catch (LinkageError | RuntimeException e) {
            System.err.println("shimtrace: cannot load " + path + " (" + e.getMessage()
                    + "): Java tracepoints stay off");
            return false;
        }
    }

    /** Whether the library can record fields of this kind (its ordinal). */
    static native boolean canRecord(int kind);

    /** Defines and registers provider:name; its handle, or 0 if it
     * cannot be made (it stays off). */
    static native long define(String provider, String name, String[] fields, int[] kinds);

    /** The enable masks of the provider of tracepoint handle, one int per
     * slot, which the session daemon writes. */
    static native java.nio.ByteBuffer page(long handle);

    /** The slot of tracepoint handle in its provider's page. */
    static native int slot(long handle);

    /** The address of a direct buffer's memory. */
    static native long address(java.nio.ByteBuffer buffer);

    /** Writes an event of tracepoint handle, of the len bytes at payload
     * (with 8 more readable after them), if a session records it. */
    static native void write(long handle, long payload, int len);
}
