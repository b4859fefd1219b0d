/*
 * The per-CPU commit (core/rseq.c): its compares, and per-CPU logs written
 * by threads that the test migrates between CPUs every few microseconds and
 * interrupts with signals whose handlers write too. No record may be lost,
 * duplicated or torn, each thread's records appear in its order in each
 * CPU's log, and the abort path must have run (the test goes on until it
 * has, so a busy machine gives the same verdict).
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/rseq.h"
#include "run.h"

/* ---- the compares ---- */

START_TEST(usable_here)
{
	/* (this machine's glibc and kernel have rseq: the fallback test
	 * below turns it off) */
	ck_assert(st__rseq_usable());
}
END_TEST

START_TEST(commit_and_compares)
{
	uint64_t word = 7, other = 1, slot[2] = { 0, 0 }, src[2] = { 11, 22 }, dst[2] = { 0, 0 };
	struct st_rseq_op op;
	enum st_rseq_result r;

	for (int tries = 0;; tries++) {
		st__rseq_op_init(&op);
		op.cmp[0] = &word;
		op.expect[0] = 7;
		op.cmp[1] = &other;
		op.expect[1] = 1;
		op.src = src;
		op.dst = dst;
		op.words = 2;
		op.store = slot;
		op.lo = 100;
		op.hi = 200;
		op.cpu = st__rseq_cpu();
		r = st__rseq_commit(&op);
		if (r == ST_RSEQ_DONE)
			break;
		/* (migrated or preempted between the read of the CPU and the
		 * section: again) */
		ck_assert_int_lt(tries, 1000);
	}
	ck_assert_uint_eq(dst[0], 11);
	ck_assert_uint_eq(dst[1], 22);
	ck_assert_uint_eq(slot[0], 100);
	ck_assert_uint_eq(slot[1], 200);

	/* a compare that fails: nothing copied, nothing stored */
	dst[0] = dst[1] = 0;
	slot[0] = slot[1] = 0;
	op.expect[1] = 2;
	op.cpu = st__rseq_cpu();
	ck_assert_int_ne(st__rseq_commit(&op), ST_RSEQ_DONE);
	ck_assert_uint_eq(dst[0], 0);
	ck_assert_uint_eq(slot[0], 0);
	ck_assert_uint_eq(slot[1], 0);

	/* not the CPU the thread runs on */
	op.expect[1] = 1;
	op.cpu = 100000;
	ck_assert_int_eq(st__rseq_commit(&op), ST_RSEQ_CHANGED);
	ck_assert_uint_eq(slot[0], 0);
}
END_TEST

/* ---- per-CPU logs under migration and signals ---- */

#define WRITERS 8
#define LOG_BYTES (256ull << 20) /* (touched only as far as written) */
#define REC_WORDS 3	   /* writer, seq, a check of both */
#define RECORDS 200000	   /* each writer's own, at least */
#define MAX_RECORDS 1000000 /* while no commit was aborted yet */

struct cpu_log {
	uint64_t commit, hi; /* bytes committed (the commit's 16-byte store) */
	uint8_t *data;
} __attribute__((aligned(64)));

static struct cpu_log *logs;
static long ncpus;
static pid_t tids[WRITERS];
static volatile int stop_helpers;
static uint64_t aborted_total, changed_total, signalled_total;
static uint64_t aborts_live; /* as they happen */
static uint64_t sig_live;    /* records made by handlers, as they happen */
static int writers_done;

static __thread int my_index = -1;
static __thread uint32_t my_seq, my_sig_seq;
static __thread uint64_t my_aborted, my_changed;

static uint64_t check_of(uint64_t who, uint64_t seq)
{
	return (who * 0x9E3779B97F4A7C15ull) ^ (seq * 0xC2B2AE3D27D4EB4Full) ^ 0x5bd1e995;
}

/* Appends one record (who: the writer's index, +WRITERS from a signal
 * handler) to the log of the CPU the thread runs on. */
static void log_append(uint64_t who, uint64_t seq)
{
	uint64_t rec[REC_WORDS] = { who, seq, check_of(who, seq) };
	struct st_rseq_op op;

	for (;;) {
		uint32_t cpu = st__rseq_cpu();
		struct cpu_log *l = &logs[cpu];
		uint64_t off = __atomic_load_n(&l->commit, __ATOMIC_RELAXED);
		enum st_rseq_result r;

		if (off + sizeof(rec) > LOG_BYTES)
			abort(); /* (sized for the test's longest run) */
		st__rseq_op_init(&op);
		op.cmp[0] = &l->commit;
		op.expect[0] = off;
		op.src = rec;
		op.dst = l->data + off;
		op.words = REC_WORDS;
		op.store = &l->commit;
		op.lo = off + sizeof(rec);
		op.hi = 0;
		op.cpu = cpu;
		r = st__rseq_commit(&op);
		if (r == ST_RSEQ_DONE)
			return;
		if (r == ST_RSEQ_ABORTED) {
			my_aborted++;
			__atomic_fetch_add(&aborts_live, 1, __ATOMIC_RELAXED);
		}
		else
			my_changed++;
	}
}

static void on_signal(int sig)
{
	int saved = errno;

	(void)sig;
	if (my_index >= 0) {
		log_append((uint64_t)my_index + WRITERS, my_sig_seq++);
		__atomic_fetch_add(&sig_live, 1, __ATOMIC_RELAXED);
	}
	errno = saved;
}

static struct writer_result {
	uint32_t records, sig_records;
	uint64_t aborted, changed;
} results[WRITERS];

static void *writer(void *arg)
{
	int i = (int)(intptr_t)arg;
	sigset_t set;

	my_index = i;
	tids[i] = (pid_t)syscall(SYS_gettid);
	/* (its share, and more while no commit anywhere was aborted, or no
	 * handler wrote yet: the abort path must run, and on a busy machine
	 * the signaller may get a CPU only late) */
	while (my_seq < RECORDS || ((!__atomic_load_n(&aborts_live, __ATOMIC_RELAXED) ||
				     !__atomic_load_n(&sig_live, __ATOMIC_RELAXED)) &&
				    my_seq < MAX_RECORDS))
		log_append((uint64_t)i, my_seq++);
	/* no handler may run once the counts are handed over */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	results[i].records = my_seq;
	results[i].sig_records = my_sig_seq;
	results[i].aborted = my_aborted;
	results[i].changed = my_changed;
	__atomic_fetch_add(&aborted_total, my_aborted, __ATOMIC_RELAXED);
	__atomic_fetch_add(&writers_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Moves every writer to another CPU, over and over. */
static void *migrator(void *arg)
{
	(void)arg;
	for (long k = 0; !stop_helpers; k++) {
		for (int i = 0; i < WRITERS; i++) {
			cpu_set_t set;

			if (!tids[i])
				continue;
			CPU_ZERO(&set);
			CPU_SET((int)((k + i) % ncpus), &set);
			sched_setaffinity(tids[i], sizeof(set), &set);
		}
		struct timespec ts = { 0, 2000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Signals the writers, over and over; their handlers write records. */
static void *signaller(void *arg)
{
	pthread_t *threads = arg;

	while (!stop_helpers) {
		for (int i = 0; i < WRITERS; i++)
			if (tids[i] && pthread_kill(threads[i], SIGUSR1) == 0)
				signalled_total++;
		struct timespec ts = { 0, 5000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Per writer and kind (own, handler), the next sequence number expected
 * in the CPU log being read: records of one thread are in its order. */
static void check_logs(void)
{
	static uint8_t *seen[2 * WRITERS];
	uint32_t total[2 * WRITERS];

	for (int w = 0; w < WRITERS; w++) {
		total[w] = results[w].records;
		total[w + WRITERS] = results[w].sig_records;
	}
	for (int w = 0; w < 2 * WRITERS; w++) {
		seen[w] = calloc(total[w] + 1, 1);
		ck_assert_ptr_nonnull(seen[w]);
	}
	for (long c = 0; c < ncpus; c++) {
		int64_t last[2 * WRITERS];
		uint64_t n = logs[c].commit;

		for (int w = 0; w < 2 * WRITERS; w++)
			last[w] = -1;
		ck_assert_uint_eq(n % (REC_WORDS * 8), 0);
		for (uint64_t off = 0; off < n; off += REC_WORDS * 8) {
			uint64_t rec[REC_WORDS];

			memcpy(rec, logs[c].data + off, sizeof(rec));
			ck_assert_msg(rec[0] < 2 * WRITERS && rec[2] == check_of(rec[0], rec[1]),
				      "cpu %ld offset %llu: a torn record", c, (unsigned long long)off);
			ck_assert_msg(rec[1] < total[rec[0]], "writer %llu: seq %llu past its count",
				      (unsigned long long)rec[0], (unsigned long long)rec[1]);
			ck_assert_msg(!seen[rec[0]][rec[1]], "writer %llu: seq %llu twice",
				      (unsigned long long)rec[0], (unsigned long long)rec[1]);
			ck_assert_msg((int64_t)rec[1] > last[rec[0]],
				      "cpu %ld: writer %llu went back from %lld to %llu", c,
				      (unsigned long long)rec[0], (long long)last[rec[0]],
				      (unsigned long long)rec[1]);
			seen[rec[0]][rec[1]] = 1;
			last[rec[0]] = (int64_t)rec[1];
		}
	}
	for (int w = 0; w < 2 * WRITERS; w++) {
		for (uint32_t s = 0; s < total[w]; s++)
			ck_assert_msg(seen[w][s], "writer %d: seq %u lost", w, s);
		free(seen[w]);
	}
}

START_TEST(migrations_and_signals)
{
	pthread_t threads[WRITERS], mig, sig;
	struct sigaction sa;
	uint32_t records = 0, sig_records = 0;

	ncpus = sysconf(_SC_NPROCESSORS_CONF);
	ck_assert_int_gt(ncpus, 0);
	logs = calloc((size_t)ncpus, sizeof(*logs));
	ck_assert_ptr_nonnull(logs);
	for (long c = 0; c < ncpus; c++) {
		logs[c].data = malloc(LOG_BYTES);
		ck_assert_ptr_nonnull(logs[c].data);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);

	for (int i = 0; i < WRITERS; i++)
		ck_assert_int_eq(pthread_create(&threads[i], NULL, writer, (void *)(intptr_t)i), 0);
	ck_assert_int_eq(pthread_create(&mig, NULL, migrator, NULL), 0);
	ck_assert_int_eq(pthread_create(&sig, NULL, signaller, threads), 0);
	/* (the helpers stop before the writers are joined: a joined thread is
	 * no thread to signal) */
	while (__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE) < WRITERS) {
		struct timespec ts = { 0, 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	stop_helpers = 1;
	pthread_join(mig, NULL);
	pthread_join(sig, NULL);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(threads[i], NULL);

	for (int i = 0; i < WRITERS; i++) {
		records += results[i].records;
		sig_records += results[i].sig_records;
		changed_total += results[i].changed;
	}
	printf("%u records, %u from signal handlers (%llu signals), %llu commits aborted by the "
	       "kernel, %llu retried after a change\n",
	       records, sig_records, (unsigned long long)signalled_total,
	       (unsigned long long)aborted_total, (unsigned long long)changed_total);
	check_logs();
	ck_assert_uint_gt(sig_records, 0);
	ck_assert_msg(aborted_total > 0, "no commit was aborted: the abort path did not run");
	for (long c = 0; c < ncpus; c++)
		free(logs[c].data);
	free(logs);
}
END_TEST

int main(int argc, char **argv)
{
	st__rseq_init();
	if (argc > 1 && strcmp(argv[1], "--usable") == 0) {
		/* (for the fallback test: what a process started with rseq
		 * turned off sees) */
		puts(st__rseq_usable() ? "usable" : "not usable");
		return 0;
	}
	if (!st__rseq_usable()) {
		/* (the fallback pass of quickstart check: rseq turned off) */
		puts("SKIP: glibc registered no rseq area here");
		return 77;
	}
	return st_run_tests("rseq", ST_TESTS(usable_here, commit_and_compares,
					     migrations_and_signals));
}
