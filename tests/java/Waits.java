/*
 * Object.wait and notify with known counts: ROUNDS waits that a notify
 * ends (main notifies only once the waiter is seen WAITING, so each wait
 * really waits) and one timed wait that times out.
 */
public class Waits {
	static final class Mailbox {
		boolean full;
	}

	static final Mailbox box = new Mailbox();
	static final int ROUNDS = 5;

	static void receive() throws InterruptedException {
		for (int r = 0; r < ROUNDS; r++) {
			synchronized (box) {
				while (!box.full)
					box.wait(); // WAIT-LINE
				box.full = false;
			}
		}
		synchronized (box) {
			box.wait(20); // TIMED-LINE
		}
	}

	public static void main(String[] args) throws Exception {
		Thread waiter = new Thread(() -> {
			try {
				receive();
			} catch (InterruptedException e) {
				throw new RuntimeException(e);
			}
		}, "waiter");

		waiter.start();
		for (int r = 0; r < ROUNDS; r++) {
			while (waiter.getState() != Thread.State.WAITING)
				Thread.sleep(1);
			synchronized (box) {
				box.full = true;
				box.notify();
			}
		}
		waiter.join();
		System.out.println("notified " + ROUNDS + " waits and one timed out");
	}
}
