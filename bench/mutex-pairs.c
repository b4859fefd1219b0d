/*
 * mutex-pairs: cost of one uncontended pthread_mutex_lock + unlock pair
 * (or of a write(), a malloc+free, an rwlock rdlock+unlock pair or a
 * syscall()).
 *
 *   mutex-pairs [--write [--bytes B]|--malloc|--rwlock|--syscall|--futex] [--ref]
 *               [--idle-thread] [--warm W] [N] [ROUNDS]
 *                                           (defaults: N=1000000, ROUNDS=5)
 *
 * After a warm-up of W pairs (default: N, at most 100000), runs ROUNDS
 * rounds of N lock+unlock pairs on one default mutex and times each round
 * with CLOCK_MONOTONIC, and with CLOCK_THREAD_CPUTIME_ID. Prints one line:
 *
 *   ns_per_pair=<median> min=<fastest round> max=<slowest round>
 *   cpu_ns=<median> minflt=<F> vcsw=<V> ivcsw=<I> pairs=<N*ROUNDS>
 *   impl=<lib>                                                (on one line)
 *
 * cpu_ns is the thread's own CPU time (user and kernel, so page faults are
 * in it) per pair: on a machine shared with other work it leaves out the
 * time the thread waited for a core, which ns_per_pair counts. The loop
 * never blocks, so on an idle machine the two agree. minflt, vcsw and
 * ivcsw are the page faults, voluntary context switches (waits) and
 * involuntary ones (preemptions by other work) of the thread during all
 * timed rounds (getrusage RUSAGE_THREAD): a tracer that touches a new page
 * of its buffer, or waits, shows there.
 *
 * impl= names the object that pthread_mutex_lock resolved to, so a caller
 * can tell whether a preloaded wrapper really interposed.
 *
 * --write times N write(fd, buf, B) calls to /dev/null per round instead
 * (ns_per_write=..., writes=...; impl= names the object write resolved
 * to), B from --bytes (default 1, which run-control.sh's write() row
 * uses; run-mutex.sh --family io gives 8).
 *
 * --malloc times N malloc(32) + free pairs instead (ns_per_pair=...; impl=
 * names the object malloc resolved to), for run-mutex.sh --family malloc.
 *
 * --rwlock times N pthread_rwlock_rdlock + unlock pairs on one default
 * rwlock instead (ns_per_pair=...; impl= names the object
 * pthread_rwlock_rdlock resolved to), for run-mutex.sh --family rwlock.
 *
 * --syscall times N syscall(SYS_getppid) calls instead (ns_per_call=...;
 * impl= names the object syscall resolved to), for run-mutex.sh --family
 * syscall: a number the futex family does not record. --futex times N
 * syscall(SYS_futex, FUTEX_WAKE_PRIVATE) calls on a word nobody waits on
 * (--family futex: each one recorded). Their --ref rounds make the same
 * system calls with the syscall instruction, inline: libc's syscall()
 * and any wrapper are what over_ref shows (ref_impl= names mutex-pairs).
 *
 * --ref adds a reference round beside each timed round: the same N calls
 * made to libc's own functions (through glibc's internal names for them,
 * which no preloaded wrapper defines), in the same process, the two rounds one right after
 * the other (in turn which goes first). The line then also has
 * ref_ns=<median reference round> over_ref=<median of the rounds'
 * differences, round minus its reference> ref_impl=<the object the
 * reference calls resolved to: libc's, or the script warns>. Runs of the same configuration
 * can differ by hundreds of ns a write() on the shared VM (a syscall's
 * cost drifts with the other work for seconds at a time), far more than a
 * wrapper adds; the drift hits a round and its reference alike, so
 * over_ref shows what the wrapper adds to a call within a few ns.
 * (What the tracer costs the whole process, such as a listener thread
 * that moves glibc off its single-threaded paths, is in both rounds, and
 * so not in over_ref.) cpu_ns, minflt, vcsw and ivcsw stay those of the
 * timed rounds alone.
 *
 * --warm W sets the warm-up. run-length.sh gives a small one (1000 pairs:
 * code, symbols and a tracer's buffer set up) and one round, so that the
 * timed round holds the first N pairs of a run as a short traced program
 * would, first touches of trace buffer pages included.
 *
 * It is used by run-mutex.sh to compare running bare, under a dormant
 * shimtrace preload, under shimtrace recording and under LTTng-UST, and by
 * run-control.sh for the dormant costs.
 *
 * Single thread on purpose: without --idle-thread no other thread is ever
 * created, because a second thread would switch glibc off its
 * single-threaded fast paths (e.g. atomics skipped while the process has
 * one thread) and the bare numbers would no longer be the baseline a
 * traced program starts from.
 *
 * --idle-thread creates exactly that second thread before the warm-up: it
 * blocks forever in pause() and never runs again, so the timed thread pays
 * only for no longer being alone. This is what a resident listener thread
 * (as LTTng-UST starts in every traced process) costs a single-threaded
 * program even when it never wakes up. The line then ends in threads=2.
 * (pthread_create is in libc since glibc 2.34, so -pthread is not needed
 * to link.)
 */
#include "bench.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static int devnull = -1;
static size_t write_bytes = 1;

static void mutex_pairs(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		pthread_mutex_lock(&mutex);
		pthread_mutex_unlock(&mutex);
	}
}

static void rwlock_pairs(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		pthread_rwlock_rdlock(&rwlock);
		pthread_rwlock_unlock(&rwlock);
	}
}

/* (--bytes is at most sizeof(buf), checked when parsed) */
static void writes(unsigned long n)
{
	static const char buf[4096];

	for (unsigned long i = 0; i < n; i++) {
		if (write(devnull, buf, write_bytes) != (ssize_t)write_bytes) {
			perror("write");
			exit(1);
		}
	}
}

static long raw_syscall3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(nr), "D"(a), "S"(b), "d"(c)
			     : "rcx", "r11", "memory");
	return ret;
}

static uint32_t futex_word;

static void syscalls(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		if (syscall(SYS_getppid) < 0)
			exit(1);
}

static void syscalls_ref(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		if (raw_syscall3(SYS_getppid, 0, 0, 0) < 0)
			exit(1);
}

static void futex_wakes(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		if (syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) != 0)
			exit(1);
}

static void futex_wakes_ref(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		if (raw_syscall3(SYS_futex, (long)&futex_word, FUTEX_WAKE_PRIVATE, 1) != 0)
			exit(1);
}

static void malloc_pairs(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		/* (volatile: the compiler may not drop the pair) */
		void *volatile p = malloc(32);

		free(p);
	}
}

/*
 * The --ref loops: the same calls to libc's own functions, ref_fn[] in
 * the order of the mode's ref_names (see ref_resolve). They go through a pointer where the
 * timed loops go through the PLT: the bare run's over_ref is what that
 * difference costs, and the scripts subtract it.
 */
static void *ref_fn[2];

static void mutex_pairs_ref(unsigned long n)
{
	int (*lock)(pthread_mutex_t *) = (int (*)(pthread_mutex_t *))ref_fn[0];
	int (*unlock)(pthread_mutex_t *) = (int (*)(pthread_mutex_t *))ref_fn[1];

	for (unsigned long i = 0; i < n; i++) {
		lock(&mutex);
		unlock(&mutex);
	}
}

static void rwlock_pairs_ref(unsigned long n)
{
	int (*rdlock)(pthread_rwlock_t *) = (int (*)(pthread_rwlock_t *))ref_fn[0];
	int (*unlock)(pthread_rwlock_t *) = (int (*)(pthread_rwlock_t *))ref_fn[1];

	for (unsigned long i = 0; i < n; i++) {
		rdlock(&rwlock);
		unlock(&rwlock);
	}
}

static void writes_ref(unsigned long n)
{
	static const char buf[4096];
	ssize_t (*wr)(int, const void *, size_t) = (ssize_t (*)(int, const void *, size_t))ref_fn[0];

	for (unsigned long i = 0; i < n; i++) {
		if (wr(devnull, buf, write_bytes) != (ssize_t)write_bytes) {
			perror("write");
			exit(1);
		}
	}
}

static void malloc_pairs_ref(unsigned long n)
{
	void *(*alloc)(size_t) = (void *(*)(size_t))ref_fn[0];
	void (*release)(void *) = (void (*)(void *))ref_fn[1];

	for (unsigned long i = 0; i < n; i++) {
		void *volatile p = alloc(32);

		release(p);
	}
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of the n sorted values v. */
static double median(const double *v, unsigned long n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * What a round repeats: the option choosing it (NULL: the default), the
 * loop, its --ref loop and the libc functions that one calls, what one
 * iteration is called in the output, and the function whose object impl=
 * names. The function pointers are taken here, through the GOT, so they
 * are the ones the dynamic linker bound: a preloaded wrapper's when it
 * interposed.
 */
static const struct mode {
	const char *option;
	void (*body)(unsigned long n);
	void (*ref)(unsigned long n);
	const char *ref_names[2];
	const char *unit;
	void *fn;
} modes[] = {
	{ NULL, mutex_pairs, mutex_pairs_ref, { "__pthread_mutex_lock", "__pthread_mutex_unlock" },
	  "pair", (void *)pthread_mutex_lock },
	{ "--write", writes, writes_ref, { "__write", NULL }, "write", (void *)write },
	{ "--malloc", malloc_pairs, malloc_pairs_ref, { "__libc_malloc", "__libc_free" }, "pair",
	  (void *)malloc },
	{ "--rwlock", rwlock_pairs, rwlock_pairs_ref,
	  { "__pthread_rwlock_rdlock", "__pthread_rwlock_unlock" }, "pair", (void *)pthread_rwlock_rdlock },
	{ "--syscall", syscalls, syscalls_ref, { NULL, NULL }, "call", (void *)syscall },
	{ "--futex", futex_wakes, futex_wakes_ref, { NULL, NULL }, "call", (void *)syscall },
};

#define USAGE                                                                          \
	"usage: %s [--write [--bytes B]|--malloc|--rwlock|--syscall|--futex] [--ref] [--idle-thread] [--warm W]" \
	" [N] [ROUNDS]\n"

/*
 * The version of glibc's internal names that --ref looks up: x86-64's
 * first, which all of them have (the __pthread_* ones only as old
 * versions since glibc 2.34, so dlsym, which wants a default version,
 * would not find them).
 */
#define REF_VERSION "GLIBC_2.2.5"

/*
 * ref_fn[] for mode: libc's own definitions, under glibc's internal names
 * (the mode's ref_names), which the tracers' wrapper libraries do not
 * define (nm -D): a lookup in the global scope finds libc's. ref_impl=
 * says where they were found. Not dlsym on a dlopen(RTLD_NOLOAD) handle
 * of libc, which would need no such names: under `shimtrace record` the
 * first dlopen of a process waits for the daemon to describe the
 * mappings again (70 ms on the VM), and the daemon then drained so late
 * that a malloc run lost 85% of its events. 0, or 1 with a message. A
 * mode without names makes its reference calls itself (ref_fn[0]: the
 * loop, in mutex-pairs).
 */
static int ref_resolve(const struct mode *mode)
{
	if (!mode->ref_names[0])
		ref_fn[0] = (void *)mode->ref;
	for (int i = 0; i < 2 && mode->ref_names[i]; i++) {
		ref_fn[i] = dlvsym(RTLD_DEFAULT, mode->ref_names[i], REF_VERSION);
		if (!ref_fn[i]) {
			fprintf(stderr, "mutex-pairs: --ref: no %s@%s\n", mode->ref_names[i], REF_VERSION);
			return 1;
		}
	}
	return 0;
}

/* The resource usage between before and after, added to sum. */
static void rusage_add(struct rusage *sum, const struct rusage *before, const struct rusage *after)
{
	sum->ru_minflt += after->ru_minflt - before->ru_minflt;
	sum->ru_nvcsw += after->ru_nvcsw - before->ru_nvcsw;
	sum->ru_nivcsw += after->ru_nivcsw - before->ru_nivcsw;
}

int main(int argc, char **argv)
{
	unsigned long n = 1000000, rounds = 5, warm = 0;
	int argi = 1, idle = 0, nargs = 0, err, bytes_given = 0, ref = 0;
	const struct mode *mode = &modes[0];
	const char *impl;
	double *ns, *cpu, *ref_ns, *over;
	struct rusage ru0, ru1, ru = { 0 };

	for (; argi < argc; argi++) {
		const struct mode *m = NULL;

		for (size_t i = 1; i < sizeof(modes) / sizeof(modes[0]); i++)
			if (strcmp(argv[argi], modes[i].option) == 0)
				m = &modes[i];
		if (m) {
			/* two modes would leave one silently unused */
			if (mode != &modes[0] && mode != m) {
				fprintf(stderr, "mutex-pairs: %s and %s exclude each other\n", mode->option,
					m->option);
				return 2;
			}
			mode = m;
		} else if (strcmp(argv[argi], "--bytes") == 0) {
			if (argi + 1 == argc) {
				fprintf(stderr, "mutex-pairs: --bytes needs a value\n");
				return 2;
			}
			write_bytes = bench_count("mutex-pairs", "B", argv[++argi], 4096);
			bytes_given = 1;
		} else if (strcmp(argv[argi], "--ref") == 0) {
			ref = 1;
		} else if (strcmp(argv[argi], "--idle-thread") == 0) {
			idle = 1;
		} else if (strcmp(argv[argi], "--warm") == 0) {
			if (argi + 1 == argc) {
				fprintf(stderr, "mutex-pairs: --warm needs a value\n");
				return 2;
			}
			warm = bench_count("mutex-pairs", "W", argv[++argi], (unsigned long)-1);
		} else if (strcmp(argv[argi], "-h") == 0 || strcmp(argv[argi], "--help") == 0) {
			printf(USAGE, argv[0]);
			return 0;
		} else if (nargs == 0) {
			n = bench_count("mutex-pairs", "N", argv[argi], (unsigned long)-1);
			nargs++;
		} else if (nargs == 1) {
			rounds = bench_count("mutex-pairs", "ROUNDS", argv[argi], (unsigned long)-1);
			nargs++;
		} else {
			fprintf(stderr, USAGE, argv[0]);
			return 2;
		}
	}
	if (bytes_given && mode->body != writes) {
		fprintf(stderr, "mutex-pairs: --bytes goes with --write\n");
		return 2;
	}

	if (mode->body == writes) {
		devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (devnull < 0) {
			perror("/dev/null");
			return 1;
		}
	}
	impl = bench_impl_of(mode->fn);
	if (ref && ref_resolve(mode))
		return 1;

	ns = calloc(rounds, sizeof(*ns));
	cpu = calloc(rounds, sizeof(*cpu));
	ref_ns = calloc(rounds, sizeof(*ref_ns));
	over = calloc(rounds, sizeof(*over));
	if (!ns || !cpu || !ref_ns || !over) {
		perror("calloc");
		return 1;
	}

	if (idle) {
		pthread_t t;

		err = pthread_create(&t, NULL, idle_thread, NULL);
		if (err) {
			fprintf(stderr, "mutex-pairs: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}

	/* Warm-up: fault in code and data, let the CPU clock settle. */
	if (!warm)
		warm = n < 100000 ? n : 100000;
	mode->body(warm);
	if (ref)
		mode->ref(warm);

	for (unsigned long r = 0; r < rounds; r++) {
		double t0, c0, r0 = 0;

		/* reference first in every other round: neither side always
		 * gets the caches the other left */
		if (ref && r % 2) {
			r0 = bench_clock_ns(CLOCK_MONOTONIC);
			mode->ref(n);
			ref_ns[r] = (bench_clock_ns(CLOCK_MONOTONIC) - r0) / (double)n;
		}
		getrusage(RUSAGE_THREAD, &ru0);
		t0 = bench_clock_ns(CLOCK_MONOTONIC);
		c0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		mode->body(n);
		cpu[r] = (bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / (double)n;
		ns[r] = (bench_clock_ns(CLOCK_MONOTONIC) - t0) / (double)n;
		getrusage(RUSAGE_THREAD, &ru1);
		rusage_add(&ru, &ru0, &ru1);
		if (ref && !(r % 2)) {
			r0 = bench_clock_ns(CLOCK_MONOTONIC);
			mode->ref(n);
			ref_ns[r] = (bench_clock_ns(CLOCK_MONOTONIC) - r0) / (double)n;
		}
		over[r] = ns[r] - ref_ns[r];
	}

	qsort(ns, rounds, sizeof(*ns), cmp_double);
	qsort(cpu, rounds, sizeof(*cpu), cmp_double);
	qsort(ref_ns, rounds, sizeof(*ref_ns), cmp_double);
	qsort(over, rounds, sizeof(*over), cmp_double);
	printf("ns_per_%s=%.2f min=%.2f max=%.2f cpu_ns=%.2f minflt=%ld vcsw=%ld ivcsw=%ld %ss=%lu impl=%s",
	       mode->unit, median(ns, rounds), ns[0], ns[rounds - 1], median(cpu, rounds),
	       ru.ru_minflt, ru.ru_nvcsw, ru.ru_nivcsw, mode->unit, n * rounds, impl);
	if (ref)
		printf(" ref_ns=%.2f over_ref=%.2f ref_impl=%s", median(ref_ns, rounds), median(over, rounds),
		       bench_impl_of(ref_fn[0]));
	printf("%s\n", idle ? " threads=2" : "");
	free(ns);
	free(cpu);
	free(ref_ns);
	free(over);
	if (devnull >= 0)
		close(devnull);
	return 0;
}
