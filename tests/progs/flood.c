/*
 * flood: a hostile process for the quota tests. It registers by hand (no
 * preload) and then, depending on the mode:
 *
 *   flood classes RUNDIR PROVIDERS TRACEPOINTS
 *       declares PROVIDERS providers of TRACEPOINTS tracepoints each, all
 *       distinct event classes (provider floodN, tracepoints tK);
 *   flood connections RUNDIR N
 *       opens N connections, each registering (HELLO);
 *   flood hello-with RUNDIR FILE
 *       opens FILE, and at the first line read registers with it as its
 *       status memory (a file on a FUSE mount, whose close waits on its
 *       server).
 *   flood silent RUNDIR N MS
 *       holds N connections to the control socket for MS milliseconds,
 *       sending nothing, opening again those the daemon hangs up
 *       ("silent K connections": K made);
 *   flood fds RUNDIR C N
 *       opens C connections, each registering, then sending N EXIT
 *       messages with a descriptor of /dev/null each ("fds open K of C":
 *       K connections still answered after that);
 *   flood garbage RUNDIR N
 *       N connections, one after the other, each sending a message that is
 *       not one ("garbage N");
 *   flood claims RUNDIR
 *       registers, and claims in its control page every buffer each
 *       session grants it, without ever making a pool ("claimed K in S
 *       sessions");
 *   flood commit RUNDIR
 *       the same, and makes each session's pool, the buffers it claimed
 *       with their pages ("committed K in S sessions").
 *
 * Then it prints what the daemon let through -- "connection open" or
 * "connection closed" after a SYNC, or "open K of N" -- and holds its
 * connections until standard input ends, so that what it registered stays
 * registered meanwhile.
 */
#include <poll.h>
#include <stdbool.h>
#include <time.h>

#include "tests/progs/rawreg.h"

/* Whether the daemon still holds sock: a SYNC answered by READY. */
static int answered(int sock)
{
	struct st_abi_sync m = { { ST_MSG_SYNC, sizeof(m) }, 1 }, r;
	struct pollfd p = { sock, POLLIN, 0 };

	if (raw_send(sock, &m, sizeof(m), -1) < 0 || poll(&p, 1, 5000) != 1)
		return 0;
	return recv(sock, &r, sizeof(r), 0) == (ssize_t)sizeof(r) && r.hdr.type == ST_MSG_READY;
}

static size_t put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return 4;
}

static size_t put_str(uint8_t *p, const char *s)
{
	size_t n = strlen(s) + 1;

	memcpy(p, s, n);
	return n;
}

static void classes(const char *rundir, unsigned providers, unsigned tps)
{
	static uint8_t buf[ST_ABI_MSG_MAX];
	int sock = raw_dial(rundir), status = raw_status_memfd("shimtrace-status");
	unsigned sent = 0;

	if (raw_hello(sock, status) < 0)
		exit(1);
	for (unsigned k = 0; k < providers; k++) {
		struct st_abi_provider *h = (struct st_abi_provider *)buf;
		size_t n = sizeof(*h);

		memset(h, 0, sizeof(*h));
		h->hdr.type = ST_MSG_PROVIDER;
		h->page = k + 1;
		h->count = tps;
		snprintf(h->name, sizeof(h->name), "flood%u", k);
		for (unsigned t = 0; t < tps; t++) {
			char name[16];

			snprintf(name, sizeof(name), "t%u", t);
			n += put_u32(buf + n, t);
			n += put_u32(buf + n, 2);
			n += put_str(buf + n, name);
			n += put_u32(buf + n, ST_TYPE_U64);
			n += put_str(buf + n, "a");
			n += put_u32(buf + n, ST_TYPE_STRING);
			n += put_str(buf + n, "s");
		}
		h->hdr.len = (uint32_t)n;
		if (raw_send(sock, buf, n, -1) < 0)
			break;
		sent++;
	}
	printf("providers sent %u, connection %s\n", sent, answered(sock) ? "open" : "closed");
}

static void connections(const char *rundir, unsigned n)
{
	unsigned open = 0;

	for (unsigned i = 0; i < n; i++) {
		int sock = raw_dial(rundir), status = raw_status_memfd("shimtrace-status");

		raw_hello(sock, status);
		close(status);
		open += answered(sock);
	}
	printf("open %u of %u\n", open, n);
}

static void hello_with(const char *rundir, const char *file)
{
	int fd = open(file, O_RDONLY), sock = raw_dial(rundir);
	char line[64];

	if (fd < 0) {
		perror(file);
		exit(1);
	}
	printf("opened\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		exit(1);
	raw_hello(sock, fd);
	printf("connection %s\n", answered(sock) ? "open" : "closed");
}

/* n connections to the control socket at once for ms milliseconds, each
 * sending nothing; one the daemon hangs up is opened again. */
static void silent(const char *rundir, unsigned n, unsigned ms)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct pollfd p[256];
	struct timespec t0, t;
	unsigned made = 0;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s/control.sock", rundir);
	if (n > 256)
		n = 256;
	for (unsigned i = 0; i < n; i++)
		p[i] = (struct pollfd){ -1, POLLIN, 0 };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (unsigned i = 0; i < n; i++) {
			if (p[i].fd >= 0 && !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (p[i].fd >= 0)
				close(p[i].fd);
			p[i].fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
			if (p[i].fd >= 0 && connect(p[i].fd, (struct sockaddr *)&a, sizeof(a)) == 0)
				made++;
		}
		poll(p, n, 20);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	printf("silent %u connections\n", made);
}

static void fds(const char *rundir, unsigned conns, unsigned n)
{
	struct st_abi_msg m = { ST_MSG_EXIT, sizeof(m) };
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	unsigned open = 0;

	for (unsigned c = 0; c < conns; c++) {
		int sock = raw_dial(rundir), status = raw_status_memfd("shimtrace-status");

		raw_hello(sock, status);
		close(status);
		for (unsigned i = 0; i < n; i++)
			if (raw_send(sock, &m, sizeof(m), null) < 0)
				break;
		open += answered(sock);
	}
	printf("fds open %u of %u\n", open, conns);
}

static void garbage(const char *rundir, unsigned n)
{
	uint32_t junk[4] = { 0xdeadbeef, 16, 0, 0 };

	for (unsigned i = 0; i < n; i++) {
		int sock = raw_dial(rundir);

		raw_send(sock, junk, sizeof(junk), -1);
		answered(sock); /* (until it hangs up) */
		close(sock);
	}
	printf("garbage %u\n", n);
}

/* A pool for session s as the preload makes one, its first `paged`
 * buffers given their pages; sent to the daemon. 0 or -1. */
static int make_pool(int sock, const struct st_abi_control *c, int s, uint32_t paged)
{
	const volatile struct st_abi_session *cs = &c->session[s];
	struct st_abi_pool_msg m = { { ST_MSG_POOL, sizeof(m) }, (uint32_t)s, cs->generation, 0 };
	struct st_abi_geometry g;
	struct st_abi_pool *h;
	uint8_t *base;
	int fd;

	if (st_abi_geometry(cs->mode, cs->sb_size, cs->sb_count, cs->nslots, &g) < 0)
		return -1;
	fd = memfd_create("shimtrace-pool", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, (off_t)g.size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return -1;
	base = mmap(NULL, g.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -1;
	h = (struct st_abi_pool *)base;
	h->magic = ST_ABI_POOL_MAGIC;
	h->version = ST_ABI_VERSION;
	h->session = (uint32_t)s;
	h->generation = cs->generation;
	h->mode = cs->mode;
	h->sb_size = cs->sb_size;
	h->sb_count = cs->sb_count;
	h->nslots = cs->nslots;
	h->slot_size = g.slot_size;
	h->hdr_size = g.hdr_size;
	for (uint32_t i = 0; i < paged && i < cs->nslots; i++)
		memset(base + ST_ABI_PAGE + i * g.slot_size + g.hdr_size, 0xa5,
		       g.slot_size - g.hdr_size);
	m.size = g.size;
	return raw_send(sock, &m, sizeof(m), fd);
}

/* Registers, and claims every buffer each session grants it: with a pool
 * whose buffers have their pages (commit), or with none at all. */
static void claims(const char *rundir, bool commit)
{
	int sock = raw_dial(rundir), status = raw_status_memfd("shimtrace-status");
	struct st_abi_control *c = mmap(NULL, ST_ABI_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, status, 0);
	unsigned n = 0, sessions = 0;

	if (c == MAP_FAILED || raw_hello(sock, status) < 0 || !answered(sock))
		exit(1);
	for (int s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		uint32_t gen = __atomic_load_n(&c->session[s].generation, __ATOMIC_ACQUIRE);
		uint32_t allowed = __atomic_load_n(&c->slots_allowed[s], __ATOMIC_SEQ_CST);

		if (!gen)
			continue;
		__atomic_store_n(&c->slots_claimed[s], ((uint64_t)gen << 32) | allowed,
				 __ATOMIC_SEQ_CST);
		if (commit && make_pool(sock, c, s, allowed) < 0)
			exit(1);
		n += allowed;
		sessions++;
	}
	printf("%s %u in %u sessions\n", commit ? "committed" : "claimed", n, sessions);
}

int main(int argc, char **argv)
{
	char c;

	if (argc == 5 && strcmp(argv[1], "classes") == 0)
		classes(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	else if (argc == 4 && strcmp(argv[1], "connections") == 0)
		connections(argv[2], (unsigned)atoi(argv[3]));
	else if (argc == 4 && strcmp(argv[1], "hello-with") == 0)
		hello_with(argv[2], argv[3]);
	else if (argc == 5 && strcmp(argv[1], "silent") == 0)
		silent(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	else if (argc == 5 && strcmp(argv[1], "fds") == 0)
		fds(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	else if (argc == 4 && strcmp(argv[1], "garbage") == 0)
		garbage(argv[2], (unsigned)atoi(argv[3]));
	else if (argc == 3 && strcmp(argv[1], "claims") == 0)
		claims(argv[2], false);
	else if (argc == 3 && strcmp(argv[1], "commit") == 0)
		claims(argv[2], true);
	else {
		fprintf(stderr, "usage: flood classes RUNDIR PROVIDERS TRACEPOINTS | "
				"flood connections|garbage RUNDIR N | flood silent RUNDIR N MS | "
				"flood fds RUNDIR C N | "
				"flood hello-with RUNDIR FILE | flood claims|commit RUNDIR\n");
		return 2;
	}
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
