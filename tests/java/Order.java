/*
 * Two threads take two monitors in opposite orders, each order made to
 * contend once, without deadlocking: in phase 1 order-1 holds B until
 * order-2, holding A, is seen BLOCKED on B; in phase 2 order-2 holds A
 * until order-1, holding B, is seen BLOCKED on A. The threads signal each
 * other with latches (which park, not block).
 */
import java.util.concurrent.CountDownLatch;

public class Order {
	static final class MonitorA {
	}

	static final class MonitorB {
	}

	static final MonitorA a = new MonitorA();
	static final MonitorB b = new MonitorB();
	static final CountDownLatch bHeld = new CountDownLatch(1), aHeld = new CountDownLatch(1);
	static Thread one, two;

	static void untilBlocked(Thread t) {
		while (t.getState() != Thread.State.BLOCKED)
			Thread.onSpinWait();
	}

	static void first() throws InterruptedException {
		synchronized (b) {
			bHeld.countDown();
			untilBlocked(two);
		}
		aHeld.await();
		synchronized (b) {
			synchronized (a) { // B-THEN-A
				System.out.println("order-1 took B then A");
			}
		}
	}

	static void second() throws InterruptedException {
		bHeld.await();
		synchronized (a) {
			synchronized (b) { // A-THEN-B
				System.out.println("order-2 took A then B");
			}
		}
		synchronized (a) {
			aHeld.countDown();
			untilBlocked(one);
		}
	}

	public static void main(String[] args) throws Exception {
		one = new Thread(() -> {
			try {
				first();
			} catch (InterruptedException e) {
				throw new RuntimeException(e);
			}
		}, "order-1");
		two = new Thread(() -> {
			try {
				second();
			} catch (InterruptedException e) {
				throw new RuntimeException(e);
			}
		}, "order-2");
		one.start();
		two.start();
		one.join();
		two.join();
	}
}
