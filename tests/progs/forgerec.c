/*
 * forgerec: a hostile process for attack-records.test. It writes forged
 * records straight into its own ring buffer, where the producer would
 * write (the pool is its own memory: nothing stops it), with the
 * timestamps that once made a trace unreadable to babeltrace2 for every
 * user in it: 0, 1, 2^64-6, 2^64-1, far in the future, before the record
 * before, compact records that wrap their 24 bits thousands of times
 * (past 2^64 too), and a forged thread record. It also sends the daemon a
 * MAPS message dated 2^64-6 (then dlopens a library, so that the objects
 * read are dated so), and takes a mutex 10 times (the pthread family, if
 * preloaded).
 *
 * usage: forgerec [NAME]
 *   With NAME, the work is done in a fork child that first takes NAME as
 *   its comm (prctl: it registers with it), and the parent waits for it.
 *
 * The forging thread writes one real event of the provider below first
 * (which claims its slot), then its forgeries after what the slot holds
 * (with the id its state page says), and never writes again (the
 * producer's own write offset is stale from then on). Prints "forged N"
 * (N: the events the trace should hold of forge:tick, the real one
 * included: times are clamped, not dropped), then "ready PID" (the
 * forging process), waits for its standard input to end, prints "done".
 */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <shimtrace/tracepoint.h>

#include "core/abi.h"

#define FORGE_TRACEPOINTS(TP, F) TP(forge, tick, F(U64, n))
ST_PROVIDER_DECLARE(forge, FORGE_TRACEPOINTS)
ST_PROVIDER_DEFINE(forge, FORGE_TRACEPOINTS)

#define WRAPS_A 1000u
#define WRAPS_B 20000u
#define TAIL 10u

static atomic_int forged;
static uint64_t events;

static void die(const char *what)
{
	fprintf(stderr, "forgerec: %s\n", what);
	exit(1);
}

/* Descriptors whose link starts with prefix ("/memfd:shimtrace-pool",
 * "socket:"), into fds (at most max); returns how many. */
static int fds_named(const char *prefix, int *fds, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) != NULL && n < max) {
		char path[300], link[256];
		ssize_t k;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		k = readlink(path, link, sizeof(link) - 1);
		if (k > 0 && (link[k] = '\0', strncmp(link, prefix, strlen(prefix)) == 0))
			fds[n++] = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

/* The slot thread tid owns in one of the process's pools (found in its
 * mappings: the process may have closed the descriptor once the daemon
 * took the pool), and its pool. */
static struct st_abi_slot *slot_of(int32_t tid, const struct st_abi_pool **pool)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		uint8_t *base;

		if (!strstr(line, "/memfd:shimtrace-pool") ||
		    sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) != 3 || off != 0 ||
		    hi - lo < 2 * ST_ABI_PAGE)
			continue;
		base = (uint8_t *)lo;
		*pool = (const struct st_abi_pool *)base;
		if ((*pool)->magic != ST_ABI_POOL_MAGIC)
			continue;
		for (uint32_t i = 0; i < (*pool)->slots_used && i < (*pool)->nslots; i++) {
			struct st_abi_slot *s =
				(struct st_abi_slot *)(base + ST_ABI_PAGE + i * (*pool)->slot_size);

			if ((int32_t)s->owner == tid) {
				fclose(f);
				return s;
			}
		}
	}
	if (f)
		fclose(f);
	return NULL;
}

struct forge {
	uint8_t *p;	 /* where the next record goes */
	const uint8_t *end;
	uint32_t id;	 /* forge:tick's id in this process */
	uint64_t ip;	 /* the real record's call site */
	uint64_t ring_ts; /* the ring's time after the last record */
	uint64_t n;
};

static void room(struct forge *f, size_t n)
{
	if (f->p + n + ST_PAYLOAD_SLACK > f->end)
		die("no room left in the sub-buffer");
}

static void extended(struct forge *f, uint64_t ts)
{
	uint8_t *p = f->p;

	room(f, ST_ABI_HDR_EXTENDED + ST_ABI_IP_BYTES + 8);
	p[0] = ST_ABI_ID_EXTENDED;
	memcpy(p + 1, &f->id, 4);
	memcpy(p + 5, &ts, 8);
	memcpy(p + 13, &f->ip, ST_ABI_IP_BYTES);
	memcpy(p + 13 + ST_ABI_IP_BYTES, &f->n, 8);
	f->p += ST_ABI_HDR_EXTENDED + ST_ABI_IP_BYTES + 8;
	f->ring_ts = ts;
	f->n++;
	events++;
}

/* A compact record dated d ticks after the one before (d < 2^24). */
static void compact(struct forge *f, uint64_t d)
{
	uint64_t ts = f->ring_ts + d, w0 = f->id | (ts & 0xffffff) << 8 | f->ip << 32;
	uint16_t hi = (uint16_t)(f->ip >> 32);

	room(f, ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES + 8);
	memcpy(f->p, &w0, 8);
	memcpy(f->p + 8, &hi, 2);
	memcpy(f->p + 10, &f->n, 8);
	f->p += ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES + 8;
	f->ring_ts = ts;
	f->n++;
	events++;
}

static void thread_record(struct forge *f, uint64_t ts, int32_t tid)
{
	uint32_t id = ST_ABI_ID_THREAD;

	room(f, ST_ABI_THREAD_REC);
	f->p[0] = ST_ABI_ID_EXTENDED;
	memcpy(f->p + 1, &id, 4);
	memcpy(f->p + 5, &ts, 8);
	memcpy(f->p + 13, &tid, 4);
	f->p += ST_ABI_THREAD_REC;
	f->ring_ts = ts;
}

static void *forger(void *arg)
{
	int32_t tid = (int32_t)syscall(SYS_gettid);
	const struct st_abi_pool *pool = NULL;
	struct st_abi_slot *slot;
	struct st_abi_subbuf *sb;
	struct forge f = { 0 };
	uint64_t now;
	uint8_t *data;

	(void)arg;
	st_tracepoint(forge, tick, 0); /* claims a slot: thread record, then this */
	events = 1;
	slot = slot_of(tid, &pool);
	if (!slot || slot->sb[0].seq != 1)
		die("no slot of this thread, or not in its first sub-buffer");
	sb = &slot->sb[0];
	data = (uint8_t *)slot + pool->hdr_size;
	/* (records of this thread may come before it: the pthread family's) */
	f.id = st__state_forge.id[st__slot_forge_tick];
	f.ip = (uint64_t)(uintptr_t)forger;
	f.p = data + sb->commit;
	f.end = data + pool->sb_size;
	f.n = 1;
	now = st_clock_read();

	extended(&f, 0);
	extended(&f, 1);
	extended(&f, UINT64_MAX - 5);
	extended(&f, UINT64_MAX);
	for (uint32_t i = 0; i < WRAPS_A; i++) /* past 2^64 */
		compact(&f, (1u << 24) - 1);
	extended(&f, now + (1ull << 50)); /* far in the future */
	extended(&f, now - 10000000000ull); /* before the one before */
	thread_record(&f, UINT64_MAX - 5, tid);
	for (uint32_t i = 0; i < WRAPS_B; i++)
		compact(&f, (1u << 24) - 1);
	extended(&f, now);
	for (uint32_t i = 0; i < TAIL; i++)
		compact(&f, 1000);
	__atomic_store_n(&sb->commit, (uint64_t)(f.p - data), __ATOMIC_RELEASE);
	atomic_store(&forged, 1);
	for (;;)
		pause(); /* (no event from this thread again) */
	return NULL;
}

/* MAPS dated 2^64-6, on the process's own connection; then a real dlopen
 * whose objects the daemon reads with it. */
static void forged_maps(void)
{
	struct st_abi_maps m;
	int sock;

	if (fds_named("socket:", &sock, 1) != 1)
		die("no connection to the daemon");
	memset(&m, 0, sizeof(m));
	m.hdr.type = ST_MSG_MAPS;
	m.hdr.len = sizeof(m);
	m.kind = ST_MAPS_DLOPEN;
	m.ts_tsc = m.ts_mono = UINT64_MAX - 5;
	if (send(sock, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m))
		die("cannot send MAPS");
	if (!dlopen("libm.so.6", RTLD_NOW))
		die("cannot dlopen libm");
}

static int work(void)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_t t;
	char line[64];

	if (pthread_create(&t, NULL, forger, NULL) != 0)
		die("pthread_create");
	while (!atomic_load(&forged))
		usleep(1000);
	forged_maps();
	for (int i = 0; i < 10; i++) {
		pthread_mutex_lock(&mu);
		pthread_mutex_unlock(&mu);
	}
	printf("forged %llu\nready %d\n", (unsigned long long)events, (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		;
	puts("done");
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	pid_t child;
	int status;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return work();
	/* a comm of its choosing: the fork child registers with it */
	prctl(PR_SET_NAME, argv[1]);
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0)
		return work();
	if (waitpid(child, &status, 0) != child)
		die("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
