import org.shimtrace.Tracepoint;

/**
 * The Java program of jni-tracepoint.test: fires known numbers of events
 * with known values from several threads, and prints what it fired (the
 * same whether recorded or not).
 *
 *   TpApp run THREADS N [double]  each thread fires app:request N times
 *                                 (id = thread * 1000000 + i, path
 *                                 "/t<thread>/<i>", status i % 600, the
 *                                 typed fire), app:note twice (the general
 *                                 fire, and a null string; thread 0 once
 *                                 more, 1500 x's), other:tick once;
 *                                 with double, app:ratio (double r = i / 4.0)
 *                                 N times too
 *   TpApp bad PROVIDER NAME SPEC...
 *                                 defines PROVIDER:NAME with these fields,
 *                                 then again with one more: for each,
 *                                 "no exception" or the exception's message
 *   TpApp mismatch                fires app:small (int x) with a long out
 *                                 of range, then with a String, and
 *                                 prints what each threw (when it is on)
 */
public final class TpApp {
    interface Step {
        void run();
    }

    static void say(Step s) {
        try {
            s.run();
            System.out.println("no exception");
        } catch (IllegalArgumentException e) {
            System.out.println("IllegalArgumentException: " + e.getMessage());
        }
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("bad")) {
            String[] fields = java.util.Arrays.copyOfRange(args, 3, args.length);
            String[] more = java.util.Arrays.copyOf(fields, fields.length + 1);
            more[fields.length] = "int extra";
            say(() -> Tracepoint.define(args[1], args[2], fields));
            say(() -> Tracepoint.define(args[1], args[2], more));
            return;
        }
        if (args[0].equals("mismatch")) {
            Tracepoint small = Tracepoint.define("app", "small", "int x");
            say(() -> small.fire(1L << 40));
            say(() -> small.fire("text"));
            return;
        }
        int threads = Integer.parseInt(args[1]), n = Integer.parseInt(args[2]);
        boolean dbl = args.length > 3 && args[3].equals("double");
        /* defined once the process runs (and talks to the daemon), one
         * after the other: the provider grows */
        Tracepoint request = Tracepoint.define("app", "request", "long id", "String path",
                "int status");
        Tracepoint note = Tracepoint.define("app", "note", "String text", "long n", "int k");
        Tracepoint tick = Tracepoint.define("other", "tick", "long thread");
        Tracepoint ratio = dbl ? Tracepoint.define("app", "ratio", "double r", "long i") : null;
        if (Tracepoint.define("app", "request", "long id", "String path", "int status") != request)
            throw new AssertionError("a second definition is another tracepoint");

        Thread[] t = new Thread[threads];
        long[] sums = new long[threads];
        for (int k = 0; k < threads; k++) {
            final int me = k;
            t[k] = new Thread(() -> {
                long sum = 0;
                for (int i = 0; i < n; i++) {
                    long id = me * 1000000L + i;
                    if (request.enabled())
                        request.fire(id, "/t" + me + "/" + i, i % 600);
                    if (ratio != null)
                        ratio.fire(i / 4.0, i);
                    sum += id;
                }
                note.fire(new Object[] { "caf\u00e9 \ud83d\ude00 " + me, 7L * me, me });
                note.fire(null, Long.MAX_VALUE, Integer.MIN_VALUE);
                if (me == 0)
                    note.fire("x".repeat(1500), 0, 0);
                tick.fire(me);
                sums[me] = sum;
            });
            t[k].start();
        }
        long total = 0;
        for (int k = 0; k < threads; k++) {
            t[k].join();
            total += sums[k];
        }
        System.out.println(request + " " + note + " " + tick);
        System.out.println("fired " + threads * n + " requests, id sum " + total);
    }
}
