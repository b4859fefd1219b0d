/*
 * MonitorBench: a contended `synchronized` workload for bench/run-jvm.sh.
 *
 * THREADS threads each enter one shared monitor OPS times and do a little
 * work inside (-Dinside multiply-adds), so that the others often find it
 * owned and block: the contended enters a monitor tracer records, and
 * some work outside (-Doutside), so that the lock is not held all the
 * time (both 2000 by default; run-jvm.sh passes 200 and 2000).
 *
 * Prints one line: the wall time of the loops (ms), the enters per second,
 * and the contended enters the JVM itself counted in the loops (the sum
 * over the workers of ThreadInfo.getBlockedCount(): each time a thread
 * blocked to enter a monitor), to compare with what a tracer recorded of
 * the monitor (its class: MonitorBench$BenchLock).
 *
 *   usage: java MonitorBench THREADS OPS
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

public final class MonitorBench {
	/* the monitor, of a class of its own: the tools' counts are of it */
	static final class BenchLock {
	}

	private static final BenchLock LOCK = new BenchLock();
	private static long shared;
	private static volatile long sink;
	private static final int INSIDE = Integer.getInteger("inside", 2000);
	private static final int OUTSIDE = Integer.getInteger("outside", 2000);
	private static final int PARK_EVERY = Integer.getInteger("parkEvery", 0);
	private static final long PARK_NS = Long.getLong("parkNs", 20000);
	private static final int YIELD_EVERY = Integer.getInteger("yieldEvery", 0);
	private static final int DEPTH = Integer.getInteger("depth", 0);

	private static long work(long x, int n) {
		for (int i = 0; i < n; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	/* the loop, DEPTH frames below the thread's run: the stacks of a
	 * real program are deeper than a bench's, and what a tracer does
	 * per contended enter may walk them */
	private static long at(int depth, int ops, long x) {
		return depth > 0 ? at(depth - 1, ops, x) + 1 : loop(ops, x);
	}

	private static long loop(int ops, long x) {
		for (int i = 0; i < ops; i++) {
			synchronized (LOCK) {
				shared = work(shared, INSIDE);
				if (PARK_EVERY > 0 && i % PARK_EVERY == 0)
					LockSupport.parkNanos(PARK_NS);
				if (YIELD_EVERY > 0 && i % YIELD_EVERY == 0)
					Thread.yield();
			}
			x = work(x, OUTSIDE);
		}
		return x;
	}

	public static void main(String[] args) throws Exception {
		if (args.length != 2) {
			System.err.println("usage: java MonitorBench THREADS OPS");
			System.exit(2);
		}
		final int threads = Integer.parseInt(args[0]);
		final int ops = Integer.parseInt(args[1]);
		final CountDownLatch start = new CountDownLatch(1);
		final Thread[] workers = new Thread[threads];
		final long[] blockedBy = new long[threads];
		final ThreadMXBean mx = ManagementFactory.getThreadMXBean();

		for (int t = 0; t < threads; t++) {
			final int me = t;
			workers[t] = new Thread(() -> {
				long x = Thread.currentThread().getId();
				try {
					start.await();
				} catch (InterruptedException e) {
					return;
				}
				sink += at(DEPTH, ops, x);
				/* the thread's own count, read before it ends */
				ThreadInfo info = mx.getThreadInfo(Thread.currentThread().getId());
				blockedBy[me] = info == null ? 0 : info.getBlockedCount();
			}, "bench-worker-" + t);
			workers[t].start();
		}
		/* the workers' blocks before the loop (a thread's start may block
		 * on the JVM's own locks) are not the loop's: read once every
		 * worker waits at the start */
		long before = 0;
		for (Thread w : workers) {
			while (w.getState() != Thread.State.WAITING)
				Thread.sleep(1);
			before += mx.getThreadInfo(w.getId()).getBlockedCount();
		}
		long t0 = System.nanoTime();
		start.countDown();
		for (Thread w : workers)
			w.join();
		long ns = System.nanoTime() - t0;

		long blocked = -before;
		for (long b : blockedBy)
			blocked += b;
		System.out.printf("ms %.1f enters_per_s %.0f blocked %d%n", ns / 1e6,
				  (double)threads * ops / (ns / 1e9), blocked);
	}
}
