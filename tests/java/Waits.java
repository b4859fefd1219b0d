/*
 * Object.wait and notify with known counts: ROUNDS waits that a notify
 * ends (main notifies only once the waiter has taken the last one and is
 * seen WAITING, so each wait really waits and no notify is lost) and one
 * timed wait that times out.
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
		/* (HotSpot says a notified thread WAITING until it has entered
		 * the monitor again: only an empty box and a waiter WAITING,
		 * seen under the lock, say that it waits for the next notify) */
		for (int r = 0; r < ROUNDS;) {
			synchronized (box) {
				if (!box.full && waiter.getState() == Thread.State.WAITING) {
					box.full = true;
					box.notify();
					r++;
					continue;
				}
			}
			Thread.sleep(1);
		}
		waiter.join();
		System.out.println("notified " + ROUNDS + " waits and one timed out");
	}
}
