/*
 * latemaps: library loads reported out of order, as the dlopens of two
 * threads can be (the one that began first reports last). It registers by
 * hand (not preloaded), then for each line read on standard input (a
 * round): loads LIB1 and reports it dated now; loads LIB2 and reports it
 * dated before LIB1's report (when the round began); closes both and
 * reports that; prints "round N". Each report is a MAPS message and a
 * SYNC it waits for: the daemon answers once it has read the objects and
 * written the batch, so the order the daemon sees is this one.
 *
 *   latemaps RUNDIR LIB1 LIB2
 *
 * Prints "ready PID" once registered (its statedump written).
 */
#include <dlfcn.h>
#include <poll.h>
#include <time.h>
#include <x86intrin.h>

#include "tests/progs/rawreg.h"

struct when {
	uint64_t tsc, mono;
};

static struct when now(void)
{
	struct timespec ts;
	struct when w;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.tsc = __rdtsc();
	w.mono = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return w;
}

/* Sends MAPS of this kind dated w, then a SYNC; exits unless answered. */
static void report(int sock, uint32_t kind, struct when w)
{
	static uint64_t seq;
	struct st_abi_maps m = { { ST_MSG_MAPS, sizeof(m) }, kind, 0, w.tsc, w.mono };
	struct st_abi_sync s = { { ST_MSG_SYNC, sizeof(s) }, ++seq }, r;
	struct pollfd p = { sock, POLLIN, 0 };

	if (raw_send(sock, &m, sizeof(m), -1) < 0 || raw_send(sock, &s, sizeof(s), -1) < 0 ||
	    poll(&p, 1, 10000) != 1 || recv(sock, &r, sizeof(r), 0) != (ssize_t)sizeof(r) ||
	    r.hdr.type != ST_MSG_READY || r.seq != seq) {
		fprintf(stderr, "latemaps: no answer from the daemon\n");
		exit(1);
	}
}

static void *load(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "latemaps: %s\n", dlerror());
		exit(1);
	}
	return h;
}

int main(int argc, char **argv)
{
	char line[64];
	int sock;
	long r = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: latemaps RUNDIR LIB1 LIB2\n");
		return 2;
	}
	sock = raw_dial(argv[1]);
	if (raw_hello(sock, raw_status_memfd("shimtrace-status")) < 0)
		return 1;
	report(sock, ST_MAPS_STATEDUMP, now());
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		struct when began = now();
		void *h1 = load(argv[2]), *h2;

		report(sock, ST_MAPS_DLOPEN, now());
		h2 = load(argv[3]);
		report(sock, ST_MAPS_DLOPEN, began);
		dlclose(h2);
		dlclose(h1);
		report(sock, ST_MAPS_DLCLOSE, now());
		printf("round %ld\n", ++r);
		fflush(stdout);
	}
	printf("done\n");
	return 0;
}
