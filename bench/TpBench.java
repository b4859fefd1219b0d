import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Arrays;
import org.shimtrace.Tracepoint;

/**
 * bench/run-java-tracepoint.sh's program: ns per iteration of a loop with
 * no tracepoint, and of the same loop with one (checked with enabled(),
 * or fired at once), off and then recorded, in one JVM.
 *
 *   java TpBench CALLS ROUNDS
 *
 * prints "ready", measures the rows off, prints "off done", waits for a
 * line on standard input (the script has started the session by then),
 * waits until the tracepoint is on, measures the rows recorded, and prints
 * one line a row: "ROW median min max" (ns per iteration, of ROUNDS rounds
 * of CALLS iterations, after as many untimed ones for the JIT).
 */
public final class TpBench {
    static final Tracepoint CALL = Tracepoint.define("bench", "call", "long i", "long x");
    static final Tracepoint NAMED = Tracepoint.define("bench", "named", "long i", "String name");
    static final String NAME = "GET /index.html";
    static long sink;

    interface Loop {
        long run(int n);
    }

    /* The work each loop does: a dependency chain the JIT cannot drop. */
    static long empty(int n) {
        long s = 0;
        for (int i = 0; i < n; i++)
            s += i ^ (s >>> 3);
        return s;
    }

    static long checked(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += i ^ (s >>> 3);
            if (CALL.enabled())
                CALL.fire(i, s);
        }
        return s;
    }

    static long fired(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += i ^ (s >>> 3);
            CALL.fire(i, s);
        }
        return s;
    }

    static long named(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += i ^ (s >>> 3);
            if (NAMED.enabled())
                NAMED.fire(i, NAME);
        }
        return s;
    }

    static String measure(String row, Loop loop, int calls, int rounds) {
        double[] ns = new double[rounds];
        for (int r = 0; r < rounds; r++)
            sink += loop.run(calls);
        for (int r = 0; r < rounds; r++) {
            long t0 = System.nanoTime();
            sink += loop.run(calls);
            ns[r] = (double) (System.nanoTime() - t0) / calls;
        }
        Arrays.sort(ns);
        return String.format("%s %.2f %.2f %.2f", row, ns[rounds / 2], ns[0], ns[rounds - 1]);
    }

    public static void main(String[] args) throws Exception {
        int calls = Integer.parseInt(args[0]), rounds = Integer.parseInt(args[1]);
        StringBuilder out = new StringBuilder();
        System.out.println("ready");
        for (String row : new String[] { "empty", "off_checked", "off_fired", "off_named" })
            out.append(measure(row, loopOf(row), calls, rounds)).append('\n');
        System.out.println("off done");
        new BufferedReader(new InputStreamReader(System.in)).readLine();
        for (int i = 0; i < 1000 && !(CALL.enabled() && NAMED.enabled()); i++)
            Thread.sleep(10);
        if (!CALL.enabled())
            throw new IllegalStateException("bench:call is not on");
        for (String row : new String[] { "empty_on", "on_checked", "on_fired", "on_named" })
            out.append(measure(row, loopOf(row), calls, rounds)).append('\n');
        System.out.print(out);
        System.out.println("sink " + sink);
    }

    static Loop loopOf(String row) {
        switch (row.replaceFirst("^(off|on)_", "").replace("_on", "")) {
        case "checked":
            return TpBench::checked;
        case "fired":
            return TpBench::fired;
        case "named":
            return TpBench::named;
        default:
            return TpBench::empty;
        }
    }
}
