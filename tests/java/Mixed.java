/*
 * Mixed: one lock-order cycle through a Java monitor and a native lock.
 *
 * Phase 1: a thread holding monitor M (synchronized) takes the pthread
 * mutex P through JNI while another thread holds P: it blocks on P with M
 * held (the order M then P). Phase 2: a thread holding P enters M while
 * another thread holds it: it blocks on M with P held (P then M). Each
 * wait is made certain: the holder lets go only once the other thread is
 * seen blocked (P's word for P, Thread.State.BLOCKED for M).
 *
 *   usage: java -Djnilock=/path/libjnilock.so Mixed
 */
import java.util.concurrent.CountDownLatch;

public final class Mixed {
	static native void lockP();
	static native void unlockP();
	static native void awaitWaiterP();

	/* the monitor, of a class of its own so that a report names it */
	static final class Monitor {
	}

	static final Monitor M = new Monitor();

	public static void main(String[] args) throws Exception {
		System.load(System.getProperty("jnilock"));

		/* phase 1: M then P */
		final CountDownLatch pHeld = new CountDownLatch(1);
		Thread holderP = new Thread(() -> {
			lockP();
			pHeld.countDown();
			awaitWaiterP();
			unlockP();
		}, "holds-P");
		Thread mThenP = new Thread(() -> {
			try {
				pHeld.await();
			} catch (InterruptedException e) {
				return;
			}
			synchronized (M) {
				lockP(); // M-THEN-P
				unlockP();
			}
		}, "M-then-P");
		holderP.start();
		mThenP.start();
		holderP.join();
		mThenP.join();

		/* phase 2: P then M */
		final CountDownLatch mHeld = new CountDownLatch(1);
		final Thread pThenM = new Thread(() -> {
			try {
				mHeld.await();
			} catch (InterruptedException e) {
				return;
			}
			lockP();
			synchronized (M) { // P-THEN-M
				unlockP();
			}
		}, "P-then-M");
		Thread holderM = new Thread(() -> {
			synchronized (M) {
				mHeld.countDown();
				while (pThenM.getState() != Thread.State.BLOCKED)
					Thread.onSpinWait();
			}
		}, "holds-M");
		pThenM.start();
		holderM.start();
		pThenM.join();
		holderM.join();
		System.out.println("done");
	}
}
