/*
 * relaysend: streams a trace shimtrace wrote to an lttng-relayd through
 * the daemon's follower (ctl/daemon/out/relaylive.c, over
 * ctl/daemon/wire/relayd.c), so that both are tested against the real
 * relay daemon by themselves.
 *
 *   relaysend URL SESSION DIR [--live US] [--hold]
 *
 * The trace's metadata is taken as its live metadata (a trace recorded
 * without --set-url has none). Says "sent N packets to PATH" (PATH: the
 * trace's directory under the relay's output) once the relay said every
 * packet written. --live sets the beacons' period (US microseconds);
 * --hold keeps the session open once every packet is written, after
 * saying "holding PATH", until standard input ends. A failure: one line
 * on stderr, exit 1.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/common/relayurl.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/out/relaylive.h"
#include "ctl/daemon/out/trace.h"

/* DIR/metadata copied to DIR/.metadata.live: 0, or -1. */
static int live_metadata(int dirfd)
{
	int in = openat(dirfd, "metadata", O_RDONLY | O_CLOEXEC);
	int out = openat(dirfd, ST_TRACE_LIVE_META, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char b[65536];
	ssize_t k;
	int ret = in >= 0 && out >= 0 ? 0 : -1;

	while (ret == 0 && (k = read(in, b, sizeof(b))) > 0)
		ret = write(out, b, (size_t)k) == k ? 0 : -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ret;
}

int main(int argc, char **argv)
{
	struct st_relay_url u;
	struct st_relaylive_stats st;
	struct st_relaylive *rl;
	struct st_clock clk;
	uint32_t live = 0;
	bool holding = false;
	char err[512], c;
	int dirfd;

	if (argc < 4) {
		fprintf(stderr, "usage: relaysend URL SESSION DIR [--live US] [--hold]\n");
		return 2;
	}
	for (int i = 4; i < argc; i++) {
		if (strcmp(argv[i], "--live") == 0 && i + 1 < argc) {
			live = (uint32_t)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--hold") == 0) {
			holding = true;
		} else {
			fprintf(stderr, "relaysend: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (st_relay_url_parse(argv[1], &u, err, sizeof(err)) < 0 ||
	    st_clock_init(&clk, 0, err, sizeof(err)) < 0) {
		fprintf(stderr, "relaysend: %s\n", err);
		return 1;
	}
	dirfd = open(argv[3], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || live_metadata(dirfd) < 0) {
		fprintf(stderr, "relaysend: %s: cannot open the trace\n", argv[3]);
		return 1;
	}
	rl = st_relaylive_start(&u, argv[2], dirfd, getuid(), getgid(), &clk, live);
	if (!rl) {
		fprintf(stderr, "relaysend: cannot start\n");
		return 1;
	}
	if (holding) {
		/* until the relay said every packet written */
		do {
			usleep(20000);
			st_relaylive_stats(rl, &st);
		} while (!(st.connected && st.packets && !st.pending) && !st.err[0]);
		printf("holding %s\n", st.path);
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	}
	/* (a relay not there is not waited for) */
	st_relaylive_end(rl, 0);
	st_relaylive_wait(rl, 60000);
	st_relaylive_stats(rl, &st);
	if (!st.done || st.lost || !st.sessions) {
		fprintf(stderr, "relaysend: %s\n", st.err[0] ? st.err : "not sent");
		return 1;
	}
	printf("sent %llu packets to %s\n", (unsigned long long)st.packets, st.path);
	return 0;
}
