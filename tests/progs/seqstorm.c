/*
 * seqstorm: threads that write events of a provider of their own as fast
 * as they can, each carrying the thread's sequence number and a check
 * value computed from it, so that a reader can tell a torn or mixed copy:
 * in every thread's events, seq goes up by one from record to record
 * (except where events were overwritten or lost) and check == 3 * seq + 7.
 *
 * usage: seqstorm THREADS
 * Prints "ready PID" once the threads run; they run until standard input
 * ends; each line read is answered by "round N". Prints "done" at the end.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <shimtrace/tracepoint.h>

#define STORM_TRACEPOINTS(TP, F) TP(storm, tick, F(U64, seq) F(U64, check))
ST_PROVIDER_DECLARE(storm, STORM_TRACEPOINTS)
ST_PROVIDER_DEFINE(storm, STORM_TRACEPOINTS)

static atomic_int running = 1;

static void *writer(void *arg)
{
	(void)arg;
	for (uint64_t seq = 0; atomic_load_explicit(&running, memory_order_relaxed); seq++)
		st_tracepoint(storm, tick, seq, 3 * seq + 7);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2, rounds = 0;
	pthread_t t[16];
	char line[64];

	if (n < 1 || n > 16)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, writer, NULL) != 0)
			return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin))
		printf("round %d\n", ++rounds);
	atomic_store(&running, 0);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	puts("done");
	return 0;
}
