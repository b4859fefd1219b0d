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
 *
 * Then it prints what the daemon let through -- "connection open" or
 * "connection closed" after a SYNC, or "open K of N" -- and holds its
 * connections until standard input ends, so that what it registered stays
 * registered meanwhile.
 */
#include <poll.h>

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

int main(int argc, char **argv)
{
	char c;

	if (argc == 5 && strcmp(argv[1], "classes") == 0)
		classes(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	else if (argc == 4 && strcmp(argv[1], "connections") == 0)
		connections(argv[2], (unsigned)atoi(argv[3]));
	else if (argc == 4 && strcmp(argv[1], "hello-with") == 0)
		hello_with(argv[2], argv[3]);
	else {
		fprintf(stderr, "usage: flood classes RUNDIR PROVIDERS TRACEPOINTS | "
				"flood connections RUNDIR N\n");
		return 2;
	}
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
