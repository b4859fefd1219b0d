/*
 * relaysend: sends a trace shimtrace wrote to an lttng-relayd, through
 * the daemon's relay client (ctl/daemon/out/relaysend.c, over
 * ctl/daemon/wire/relayd.c), so that the client is tested against the
 * real relay daemon by itself.
 *
 *   relaysend URL SESSION DIR [--live US] [--hold]
 *
 * Says "sent N packets to PATH" (PATH: the session's directory under the
 * relay's output). --live makes the session live (beacons every US
 * microseconds); --hold keeps it open once every packet is written,
 * after saying "holding PATH", until standard input ends. A failure: one
 * line on stderr, exit 1.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/common/relayurl.h"
#include "ctl/daemon/out/relaysend.h"

static void hold(const char *path)
{
	char c;

	printf("holding %s\n", path);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
}

int main(int argc, char **argv)
{
	struct st_relay_url u;
	uint32_t live = 0;
	bool holding = false;
	uint64_t packets;
	char err[512], path[256];

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
	    st_relay_send_trace(&u, argv[2], argv[3], live, holding ? hold : NULL, path, sizeof(path),
				&packets, err, sizeof(err)) < 0) {
		fprintf(stderr, "relaysend: %s\n", err);
		return 1;
	}
	printf("sent %llu packets to %s\n", (unsigned long long)packets, path);
	return 0;
}
