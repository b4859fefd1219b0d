/*
 * sleeper: one thread that takes a lock LOCKS times per round and waits
 * between rounds: blocked in nanosleep, spinning (--spin: never calling a
 * traced function), or blocked reading standard input (--stdin: a round
 * starts on each line read, and ends with the line "round N"; end of input
 * ends the program). For the control-plane tests: a process running before
 * the daemon, enabled while it runs, loaded with a probe while blocked.
 *
 *   sleeper [--undumpable] [--spin|--stdin] SECONDS LOCKS [ROUNDS]
 *
 * Timed rounds wait SECONDS / ROUNDS after their locks. The output is the
 * same whatever is traced. --undumpable: PR_SET_DUMPABLE 0 first (a
 * process that refuses ptrace, for attach's tests).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

	if (argc > a && strcmp(argv[a], "--undumpable") == 0)
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), a++;
	if (argc > a && strcmp(argv[a], "--spin") == 0)
		spin = 1, a++;
	else if (argc > a && strcmp(argv[a], "--stdin") == 0)
		in = 1, a++;
	if (argc - a < 2) {
		fprintf(stderr, "usage: sleeper [--undumpable] [--spin|--stdin] SECONDS LOCKS [ROUNDS]\n");
		return 2;
	}
	secs = atof(argv[a]);
	locks = atol(argv[a + 1]);
	if (argc - a > 2)
		rounds = atol(argv[a + 2]);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long r = 0; r < rounds; r++) {
		if (in) {
			char line[64];

			if (!fgets(line, sizeof(line), stdin))
				break;
		}
		for (long i = 0; i < locks; i++) {
			pthread_mutex_lock(&lock);
			counter++;
			pthread_mutex_unlock(&lock);
		}
		end = now() + secs / (double)rounds;
		if (in) {
			printf("round %ld\n", r + 1);
			fflush(stdout);
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
