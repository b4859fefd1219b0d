/*
 * Held: one thread blocks on a monitor of class Target four times, each
 * time owning something else in another way, for the monitor_held events
 * that must come before each contended enter (jvm-held.test):
 *
 *   phase 1  nothing (the agent proves it from the stack: no walk)
 *   phase 2  a monitor of HeldByMethod: a synchronized method below
 *   phase 3  a monitor of HeldByBlock: a synchronized block below
 *   phase 4  a monitor of HeldByJni: entered with JNI's MonitorEnter by a
 *            native method that returned holding it
 *
 * take(), where the thread blocks, has a single monitorenter: the
 * callers decide. Each wait is made certain: main holds the Target until
 * the worker is seen BLOCKED. Prints one line per phase.
 *
 *   usage: java -Djnilock=/path/libjnilock.so Held
 */
import java.util.concurrent.Semaphore;

public final class Held {
	static native void jniEnter(Object o);
	static native void jniExit(Object o);

	static final class Target {
	}

	static final class HeldByMethod {
		synchronized void call(Runnable r) {
			r.run();
		}
	}

	static final class HeldByBlock {
	}

	static final class HeldByJni {
	}

	static final Target target = new Target();
	static final HeldByMethod byMethod = new HeldByMethod();
	static final HeldByBlock byBlock = new HeldByBlock();
	static final HeldByJni byJni = new HeldByJni();
	static final Semaphore go = new Semaphore(0), done = new Semaphore(0);
	static int taken;

	static void take() {
		synchronized (target) { // TAKE
			taken++;
		}
	}

	/* (one method per phase: a frame with a monitorenter anywhere in
	 * its method makes the agent walk, and phase 4 must not get the walk
	 * from phase 3's) */
	static void phase1() {
		take();
	}

	static void phase2() {
		byMethod.call(Held::take);
	}

	static void phase3() {
		synchronized (byBlock) {
			take();
		}
	}

	static void phase4() {
		jniEnter(byJni);
		take();
		jniExit(byJni);
	}

	static void phase(int n) {
		switch (n) {
		case 1:
			phase1();
			break;
		case 2:
			phase2();
			break;
		case 3:
			phase3();
			break;
		default:
			phase4();
		}
	}

	public static void main(String[] args) throws Exception {
		System.load(System.getProperty("jnilock"));
		Thread worker = new Thread(() -> {
			for (int n = 1; n <= 4; n++) {
				go.acquireUninterruptibly();
				phase(n);
				done.release();
			}
		}, "held-worker");
		worker.start();
		for (int n = 1; n <= 4; n++) {
			synchronized (target) {
				go.release();
				while (worker.getState() != Thread.State.BLOCKED)
					Thread.onSpinWait();
			}
			done.acquireUninterruptibly();
			System.out.println("phase " + n + " taken " + taken);
		}
		worker.join();
	}
}
