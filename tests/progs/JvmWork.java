/*
 * A Java program for jvm-attach.test, started without any agent: it says
 * "ready PID", then runs a round for each line of its standard input and
 * says "round K" after each; at the end of its input, "done TOTAL".
 *
 * A round is N (its argument) contended entries of a monitor, exactly:
 * the main thread enters the monitor (an object of class Gate), lets the
 * worker thread go, and holds the monitor until the worker is blocked
 * entering it (the JVM has then posted its contended enter), then leaves
 * it and waits until the worker is out again. The two threads hand over
 * through semaphores, which park and never touch a monitor, so that the
 * rounds' only monitor events are those of Gate. TOTAL counts the
 * worker's entries.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.Semaphore;

public class JvmWork {
	static final class Gate {
	}

	static final Gate gate = new Gate();
	static final Semaphore go = new Semaphore(0), back = new Semaphore(0);
	static long entries;

	static void worker() {
		for (;;) {
			go.acquireUninterruptibly();
			synchronized (gate) {
				entries++;
			}
			back.release();
		}
	}

	public static void main(String[] args) throws Exception {
		int n = Integer.parseInt(args[0]), round = 0;
		Thread worker = new Thread(JvmWork::worker, "worker");
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));

		worker.setDaemon(true);
		worker.start();
		System.out.println("ready " + ProcessHandle.current().pid());
		while (in.readLine() != null) {
			for (int i = 0; i < n; i++) {
				synchronized (gate) {
					go.release();
					while (worker.getState() != Thread.State.BLOCKED)
						Thread.onSpinWait();
				}
				back.acquireUninterruptibly();
			}
			System.out.println("round " + ++round);
		}
		synchronized (gate) {
			System.out.println("done " + entries);
		}
	}
}
