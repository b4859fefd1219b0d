/*
 * stackcost: what a call stack costs a wait (record --stack N): the time
 * of st_stack_capture, libshimtrace's unwinder, taking N frames from a
 * stack D frames deep, beside what a contended lock's hand-off costs
 * anyway (a thread woken through a futex by another: the least a wait
 * that blocks takes).
 *
 *   stackcost [D] [ROUNDS]       (defaults: D=40, ROUNDS=5)
 *
 * Run with libshimtrace.so preloaded and SHIMTRACE_STACK_DEPTH=32 (the
 * depth st_stack_capture allows at most). Prints, for N in 1 2 4 8 16
 * 32, a line "depth=N frames=F ns=X" (the median of ROUNDS rounds of
 * 20000 captures; F the frames found), then "handoff_ns=Y" (the median of
 * ROUNDS rounds of 20000 ping-pong round trips between two threads, each
 * a futex wake and wait, halved).
 */
#include "bench.h" /* (first: it sets _GNU_SOURCE) */

#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CAPTURES 20000
#define TRIPS 20000

typedef uint32_t (*capture_fn)(uint64_t *, uint32_t, const void *);

static capture_fn capture;
static unsigned long rounds = 5;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned long n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Times the captures of up to depth frames above this function's caller,
 * as a wrapper takes them above its call site. */
static __attribute__((noinline)) void time_captures(uint32_t depth)
{
	const void *site = __builtin_return_address(0);
	uint64_t pcs[32];
	double ns[64];
	uint32_t got = 0;

	for (unsigned long r = 0; r < rounds; r++) {
		double t0 = bench_clock_ns(CLOCK_MONOTONIC);

		for (int i = 0; i < CAPTURES; i++)
			got = capture(pcs, depth, site);
		ns[r] = (bench_clock_ns(CLOCK_MONOTONIC) - t0) / CAPTURES;
	}
	printf("depth=%u frames=%u ns=%.1f\n", depth, got, median(ns, rounds));
}

static volatile int sink;

/* d frames of the program, then the captures at each depth. */
static __attribute__((noinline)) void deep(int d)
{
	if (d > 0) {
		deep(d - 1);
		sink++; /* (not a tail call: the frame stays) */
		return;
	}
	for (uint32_t depth = 1; depth <= 32; depth *= 2)
		time_captures(depth);
}

/* ---- the hand-off: two threads taking turns through a futex word ---- */

static _Atomic uint32_t turn;

static void futex_wait(_Atomic uint32_t *w, uint32_t v)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Plays side `me` (0 or 1) for n turns: waits for its turn, gives it. */
static void play(uint32_t me, int n)
{
	for (int i = 0; i < n; i++) {
		uint32_t t;

		while ((t = atomic_load(&turn)) % 2 != me)
			futex_wait(&turn, t);
		atomic_store(&turn, t + 1);
		futex_wake(&turn);
	}
}

static void *other(void *arg)
{
	play(1, (int)(intptr_t)arg);
	return NULL;
}

static double handoff_ns(void)
{
	double ns[64];

	for (unsigned long r = 0; r < rounds; r++) {
		pthread_t t;
		double t0;

		atomic_store(&turn, 0);
		t0 = bench_clock_ns(CLOCK_MONOTONIC);
		pthread_create(&t, NULL, other, (void *)(intptr_t)TRIPS);
		play(0, TRIPS);
		pthread_join(t, NULL);
		ns[r] = (bench_clock_ns(CLOCK_MONOTONIC) - t0) / TRIPS / 2;
	}
	return median(ns, rounds);
}

int main(int argc, char **argv)
{
	int d = 40;

	if (argc > 1)
		d = (int)bench_count("stackcost", "D", argv[1], 1000);
	if (argc > 2)
		rounds = bench_count("stackcost", "ROUNDS", argv[2], 64);
	capture = (capture_fn)dlsym(RTLD_DEFAULT, "st_stack_capture");
	if (!capture) {
		fprintf(stderr, "stackcost: no st_stack_capture: preload libshimtrace.so\n");
		return 1;
	}
	deep(d);
	printf("handoff_ns=%.1f\n", handoff_ns());
	return 0;
}
