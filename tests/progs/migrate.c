/*
 * migrate: THREADS writer threads each write RECORDS numbered events of a
 * provider of their own (seq, and a check value of thread and seq, so
 * that a torn or mixed record shows), while a helper thread moves every
 * writer to another CPU every few microseconds (sched_setaffinity) and
 * another signals them; their signal handler writes an event too (sig,
 * numbered per thread). With per-CPU buffers, commits are restarted by the
 * kernel on those migrations and signals: the trace must hold every
 * record once, in order within each thread, none torn.
 *
 * usage: migrate THREADS RECORDS
 * Prints one line per thread: "thread I: RECORDS records, S signals".
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <shimtrace/tracepoint.h>

#define MIG_TRACEPOINTS(TP, F)                                        \
	TP(mig, rec, F(U32, thread) F(U64, seq) F(U64, check))        \
	TP(mig, sig, F(U32, thread) F(U64, seq) F(U64, check))
ST_PROVIDER_DECLARE(mig, MIG_TRACEPOINTS)
ST_PROVIDER_DEFINE(mig, MIG_TRACEPOINTS)

#define MAX_THREADS 64

static long records;
static int nthreads;
static pid_t tids[MAX_THREADS];
static pthread_t threads[MAX_THREADS];
static atomic_int done_writers, stop;
static _Thread_local int my_index = -1;
static _Thread_local uint64_t my_sigs;
static uint64_t sigs[MAX_THREADS];

static uint64_t check_of(uint32_t thread, uint64_t seq)
{
	return seq * 2654435761u + thread;
}

static void on_signal(int sig)
{
	(void)sig;
	if (my_index < 0)
		return;
	st_tracepoint(mig, sig, (uint32_t)my_index, my_sigs, check_of((uint32_t)my_index, my_sigs));
	my_sigs++;
}

static void *writer(void *arg)
{
	sigset_t set;

	my_index = (int)(intptr_t)arg;
	tids[my_index] = (pid_t)syscall(SYS_gettid);
	for (long seq = 0; seq < records; seq++)
		st_tracepoint(mig, rec, (uint32_t)my_index, (uint64_t)seq,
			      check_of((uint32_t)my_index, (uint64_t)seq));
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sigs[my_index] = my_sigs;
	atomic_fetch_add(&done_writers, 1);
	return NULL;
}

static void *migrator(void *arg)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	(void)arg;
	for (long k = 0; !atomic_load(&stop); k++) {
		struct timespec ts = { 0, 2000 };

		for (int i = 0; i < nthreads; i++) {
			cpu_set_t set;

			if (!tids[i])
				continue;
			CPU_ZERO(&set);
			CPU_SET((int)((k + i) % cpus), &set);
			sched_setaffinity(tids[i], sizeof(set), &set);
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void *signaller(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		struct timespec ts = { 0, 5000 };

		for (int i = 0; i < nthreads; i++)
			if (tids[i])
				pthread_kill(threads[i], SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	pthread_t mig, sig;

	if (argc != 3 || (nthreads = atoi(argv[1])) < 1 || nthreads > MAX_THREADS ||
	    (records = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: migrate THREADS RECORDS\n");
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&threads[i], NULL, writer, (void *)(intptr_t)i) != 0)
			return 1;
	if (pthread_create(&mig, NULL, migrator, NULL) != 0 ||
	    pthread_create(&sig, NULL, signaller, NULL) != 0)
		return 1;
	/* (the helpers stop before the writers are joined: a joined thread is
	 * no thread to signal) */
	while (atomic_load(&done_writers) < nthreads) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	atomic_store(&stop, 1);
	pthread_join(mig, NULL);
	pthread_join(sig, NULL);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(threads[i], NULL);
		printf("thread %d: %ld records, %llu signals\n", i, records,
		       (unsigned long long)sigs[i]);
	}
	return 0;
}
