/*
 * spawn: cost of starting a program, run to completion and waited for.
 *
 *   spawn N CMD [ARGS...]
 *
 * Starts CMD with posix_spawnp() and waits for it with waitpid(), 20 times
 * as a warm-up and then N times, timing each start-to-reaped interval with
 * CLOCK_MONOTONIC. The environment is passed through unchanged, so an
 * LD_PRELOAD or SHIMTRACE_RUNDIR set for spawn applies to every child (and
 * to spawn itself, which does nothing a preloaded library wraps). Prints
 * one line:
 *
 *   us_mean=<mean> us_median=<median> us_min=<fastest> runs=<N>
 *
 * glibc's posix_spawn is clone(CLONE_VM | CLONE_VFORK) + execve, so the
 * numbers are the child's exec, dynamic loading, constructors, run and
 * exit (destructors included), not the copying of this process.
 *
 * Fails (exit 1, a message on stderr) if CMD cannot be started or a run
 * does not exit with status 0: a broken child must not pass for a fast one.
 *
 * It is used by run-control.sh for the process start rows.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#define WARMUP 20

extern char **environ;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One start of argv[0], waited for; its duration in us, or < 0 on failure. */
static double run_once(char **argv)
{
	pid_t pid, w;
	int err, status;
	double t0 = now_us();

	err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (err) {
		fprintf(stderr, "spawn: %s: %s\n", argv[0], strerror(err));
		return -1;
	}
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	if (w < 0) {
		perror("spawn: waitpid");
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFSIGNALED(status))
			fprintf(stderr, "spawn: %s: killed by signal %d\n", argv[0], WTERMSIG(status));
		else
			fprintf(stderr, "spawn: %s: exit status %d\n", argv[0], WEXITSTATUS(status));
		return -1;
	}
	return now_us() - t0;
}

int main(int argc, char **argv)
{
	unsigned long n;
	char *end;
	double *us, sum = 0;

	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("usage: %s N CMD [ARGS...]\n", argv[0]);
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: %s N CMD [ARGS...]\n", argv[0]);
		return 2;
	}
	errno = 0;
	n = strtoul(argv[1], &end, 10);
	if (errno || end == argv[1] || *end || n == 0 || argv[1][0] == '-') {
		fprintf(stderr, "spawn: bad N '%s'\n", argv[1]);
		return 2;
	}
	us = calloc(n, sizeof(*us));
	if (!us) {
		perror("calloc");
		return 1;
	}

	for (int i = 0; i < WARMUP; i++)
		if (run_once(argv + 2) < 0)
			return 1;
	for (unsigned long i = 0; i < n; i++) {
		us[i] = run_once(argv + 2);
		if (us[i] < 0)
			return 1;
		sum += us[i];
	}

	qsort(us, n, sizeof(*us), cmp_double);
	printf("us_mean=%.1f us_median=%.1f us_min=%.1f runs=%lu\n", sum / (double)n,
	       n % 2 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2, us[0], n);
	free(us);
	return 0;
}
