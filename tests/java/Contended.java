/*
 * Contended monitors, made deterministic: in each round the main thread
 * holds the shared monitor until every worker is seen BLOCKED on it, so
 * each worker enters it contended exactly once per round; each worker
 * also takes a monitor of its own, never contended. No Object.wait (a
 * thread re-entering after a wait counts as blocked too); the threads
 * meet at latches (which park instead of blocking; a Phaser takes a
 * monitor of its own) at the start and the end of each round.
 *
 * Prints the sum of the workers' blocked counts as the JVM counts them
 * (ThreadMXBean) over the rounds: read while they are alive, less what
 * they were before the first round, once every worker waits at its
 * start (a thread's start may block on the JVM's own monitors, the locks
 * of classes being initialised, which JVMTI does not always tell), and
 * the counters.
 * (jvm.test finds the contended line by its marker comment.)
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;

public class Contended {
	static final class Shared {
		long n;
	}

	static final class Private {
		long n;
	}

	static final Shared shared = new Shared();
	static final int WORKERS = 4, ROUNDS = 3;
	static final CountDownLatch[] starts = latches(ROUNDS, 1), ends = latches(ROUNDS, WORKERS + 1);
	static final CountDownLatch read = new CountDownLatch(1), finished = new CountDownLatch(WORKERS);

	static CountDownLatch[] latches(int n, int count) {
		CountDownLatch[] l = new CountDownLatch[n];

		for (int i = 0; i < n; i++)
			l[i] = new CountDownLatch(count);
		return l;
	}

	static void await(CountDownLatch l) {
		for (;;) {
			try {
				l.await();
				return;
			} catch (InterruptedException e) {
			}
		}
	}

	static final class Worker implements Runnable {
		final Private mine = new Private();

		public void run() {
			for (int r = 0; r < ROUNDS; r++) {
				await(starts[r]);
				synchronized (shared) { // CONTENDED-LINE
					shared.n++;
				}
				synchronized (mine) { // UNCONTENDED-LINE
					mine.n++;
				}
				ends[r].countDown();
				await(ends[r]);
			}
			/* alive until main has read the counts */
			finished.countDown();
			await(read);
		}
	}

	static void until(Thread[] threads, Thread.State state) throws InterruptedException {
		for (Thread t : threads)
			while (t.getState() != state)
				Thread.sleep(1);
	}

	public static void main(String[] args) throws Exception {
		ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		Thread[] threads = new Thread[WORKERS];
		Worker[] workers = new Worker[WORKERS];
		long blocked = 0, own = 0;

		mx.getThreadInfo(Thread.currentThread().getId()); /* its classes, loaded now */
		for (int i = 0; i < WORKERS; i++) {
			workers[i] = new Worker();
			threads[i] = new Thread(workers[i], "worker-" + i);
			threads[i].start();
		}
		until(threads, Thread.State.WAITING); /* at the first start */
		for (Thread t : threads)
			blocked -= mx.getThreadInfo(t.getId()).getBlockedCount();
		for (int r = 0; r < ROUNDS; r++) {
			synchronized (shared) {
				starts[r].countDown();
				until(threads, Thread.State.BLOCKED);
			}
			/* (the round's end: shared is free when main takes it again) */
			ends[r].countDown();
			await(ends[r]);
		}
		await(finished);
		for (Thread t : threads)
			blocked += mx.getThreadInfo(t.getId()).getBlockedCount();
		read.countDown();
		for (int i = 0; i < WORKERS; i++) {
			threads[i].join();
			own += workers[i].mine.n;
		}
		System.out.println("blocked " + blocked);
		System.out.println("shared " + shared.n + " own " + own);
	}
}
