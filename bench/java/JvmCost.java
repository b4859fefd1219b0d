/*
 * What the JVM agent costs when nothing records (bench/run-jvm-cost.sh): ns per
 * synchronized block, three ways, each the median of ROUNDS rounds after a
 * warm-up round:
 *   contended    THREADS threads increment one counter under one monitor
 *                (the monitor is inflated and threads block: the agent's
 *                callbacks run, read their masks and return)
 *   uncontended  one thread, a monitor of its own held in a field
 *   elided       one thread, a monitor on an object that never escapes
 *                (C2 removes the lock: a capability that kept it would
 *                show here)
 * Usage: java JvmCost THREADS OPS
 */
import java.util.Arrays;

public class JvmCost {
	static final int ROUNDS = 5;
	static final Object shared = new Object();
	static long counter;
	Object mine = new Object();
	long n;

	static double contended(int threads, long ops) throws InterruptedException {
		Thread[] t = new Thread[threads];
		long start = System.nanoTime();

		for (int i = 0; i < threads; i++) {
			t[i] = new Thread(() -> {
				for (long k = 0; k < ops / threads; k++)
					synchronized (shared) {
						counter++;
					}
			});
			t[i].start();
		}
		for (Thread x : t)
			x.join();
		return (double)(System.nanoTime() - start) / ops;
	}

	double uncontended(long ops) {
		long start = System.nanoTime();

		for (long k = 0; k < ops; k++)
			synchronized (mine) {
				n++;
			}
		return (double)(System.nanoTime() - start) / ops;
	}

	static double elided(long ops) {
		long start = System.nanoTime(), s = 0;

		for (long k = 0; k < ops; k++) {
			Object local = new Object();

			synchronized (local) {
				s += k;
			}
		}
		if (s == 42)
			System.out.print("");
		return (double)(System.nanoTime() - start) / ops;
	}

	static double median(double[] v) {
		double[] c = v.clone();

		Arrays.sort(c);
		return c[c.length / 2];
	}

	public static void main(String[] args) throws Exception {
		int threads = Integer.parseInt(args[0]);
		long ops = Long.parseLong(args[1]);
		JvmCost me = new JvmCost();
		double[] c = new double[ROUNDS], u = new double[ROUNDS], e = new double[ROUNDS];

		contended(threads, ops / 10);
		me.uncontended(ops);
		elided(ops);
		for (int r = 0; r < ROUNDS; r++) {
			c[r] = contended(threads, ops / 10);
			u[r] = me.uncontended(ops);
			e[r] = elided(ops);
		}
		System.out.printf("contended_ns=%.2f uncontended_ns=%.2f elided_ns=%.2f%n", median(c), median(u),
				  median(e));
	}
}
