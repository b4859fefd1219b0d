/*
 * sleeper: one thread that takes a lock N times, then sleeps (blocked in
 * nanosleep) or spins (--spin, never calling a traced function), prints
 * what it did and exits when its time is up or when it reads a line on
 * standard input (--stdin). For the control-plane tests: a process running
 * before the daemon, enabled while it runs, loaded with a probe while
 * blocked.
 *
 *   sleeper [--spin|--stdin] SECONDS LOCKS_PER_ROUND [ROUNDS]
 *
 * Each round takes the lock LOCKS_PER_ROUND times, then waits SECONDS /
 * ROUNDS; the output is the same whatever is traced.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long counter;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int spin = 0, in = 0, a = 1;
	double secs, end;
	long locks, rounds = 1;

	if (argc > a && strcmp(argv[a], "--spin") == 0)
		spin = 1, a++;
	else if (argc > a && strcmp(argv[a], "--stdin") == 0)
		in = 1, a++;
	if (argc - a < 2) {
		fprintf(stderr, "usage: sleeper [--spin|--stdin] SECONDS LOCKS [ROUNDS]\n");
		return 2;
	}
	secs = atof(argv[a]);
	locks = atol(argv[a + 1]);
	if (argc - a > 2)
		rounds = atol(argv[a + 2]);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long r = 0; r < rounds; r++) {
		for (long i = 0; i < locks; i++) {
			pthread_mutex_lock(&lock);
			counter++;
			pthread_mutex_unlock(&lock);
		}
		end = now() + secs / (double)rounds;
		if (in) {
			char line[64];

			if (!fgets(line, sizeof(line), stdin))
				break;
		} else if (spin) {
			while (now() < end)
				counter += 0;
		} else {
			struct timespec ts = { (time_t)(secs / (double)rounds),
					       (long)((secs / (double)rounds - (time_t)(secs / (double)rounds)) * 1e9) };

			while (nanosleep(&ts, &ts) != 0)
				;
		}
	}
	printf("done %lu\n", counter);
	return 0;
}
