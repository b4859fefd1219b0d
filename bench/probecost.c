/*
 * probecost: what a dynamic probe costs a call of the function it is
 * planted in (bench/run-dynprobe.sh).
 *
 *   probecost N ROUNDS
 *
 * Prints "ready PID", then for each line PHASE read from standard input
 * runs ROUNDS rounds of N calls of bench_fn (an assembly function whose
 * first instruction is RIP-relative, so that a probe's trampoline runs
 * it relocated), of N calls of bench_plain (one without: the one uftrace's
 * dynamic patching takes) and of N pthread_mutex_lock+unlock pairs, each
 * round timed with CLOCK_MONOTONIC, and prints
 *
 *   PHASE fn_ns=<median ns a call> plain_ns=<the same> mutex_ns=<a pair>
 *
 * The probes are planted and removed between the phases by the script,
 * while the program waits for its next line (blocked in read: a safe
 * point).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

long bench_fn(long x);
long bench_plain(long x);
long bench_count;

__asm__(".text\n"
	".globl bench_fn\n.type bench_fn,@function\n"
	"bench_fn:\n"
	"  addq %rdi, bench_count(%rip)\n"
	"  mov bench_count(%rip), %rax\n"
	"  ret\n"
	".size bench_fn, .-bench_fn\n"
	".globl bench_plain\n.type bench_plain,@function\n"
	"bench_plain:\n"
	"  lea 1(%rdi), %rax\n"
	"  add %rax, %rax\n"
	"  shr $1, %rax\n"
	"  ret\n"
	".size bench_plain, .-bench_plain\n");

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	double fn[64], pl[64], mu[64];
	long sink = 0;
	char phase[128];

	if (n <= 0 || rounds <= 0 || rounds > 64)
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(phase, sizeof(phase), stdin)) {
		phase[strcspn(phase, "\n")] = '\0';
		for (int r = 0; r < rounds; r++) {
			uint64_t t0 = now_ns();

			for (long i = 0; i < n; i++)
				bench_fn(1);
			fn[r] = (double)(now_ns() - t0) / (double)n;
			t0 = now_ns();
			for (long i = 0; i < n; i++)
				sink += bench_plain(i);
			pl[r] = (double)(now_ns() - t0) / (double)n;
			t0 = now_ns();
			for (long i = 0; i < n; i++) {
				pthread_mutex_lock(&m);
				pthread_mutex_unlock(&m);
			}
			mu[r] = (double)(now_ns() - t0) / (double)n;
		}
		printf("%s fn_ns=%.2f plain_ns=%.2f mutex_ns=%.2f sink=%ld\n", phase, median(fn, rounds),
		       median(pl, rounds), median(mu, rounds), sink);
		fflush(stdout);
	}
	return 0;
}
