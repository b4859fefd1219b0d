/*
 * relaysend: sends a trace shimtrace wrote to an lttng-relayd, through
 * the daemon's relay client (ctl/daemon/wire/relayd.c), so that the
 * client is tested against the real relay daemon.
 *
 *   relaysend URL SESSION DIR [--live US] [--hold]
 *
 * Every stream file of DIR becomes a stream (its packets sent with their
 * indexes, read from each packet's header and context: the layout
 * ctl/daemon/out/trace.c writes), the metadata file the metadata. Waits
 * until the relay has written every packet, closes the streams and says
 * "sent N packets to PATH" (PATH: the session's directory under the
 * relay's output). --live makes the session live (a beacon period of US
 * microseconds); --hold keeps it open, after saying "holding", until
 * standard input ends. A failure: one line on stderr, exit 1.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl/common/relayurl.h"
#include "ctl/daemon/wire/relayd.h"

#define MAX_STREAMS 256
#define PATH "trace"

/* A packet's header and context, as the daemon writes them
 * (little-endian, packed). */
struct __attribute__((packed)) prefix {
	uint32_t magic;
	uint8_t uuid[16];
	uint32_t stream_id;
	uint64_t stream_instance_id;
	uint64_t timestamp_begin, timestamp_end, content_size, packet_size, packet_seq_num;
	uint64_t events_discarded;
	int32_t pid, tid;
};

struct stream {
	char name[256];
	uint64_t handle, packets;
};

static void die(const char *what, const char *why)
{
	fprintf(stderr, "relaysend: %s%s%s\n", what, why ? ": " : "", why ? why : "");
	exit(1);
}

static uint8_t *slurp(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	FILE *f;
	uint8_t *b;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		die(path, "cannot read it");
	b = malloc((size_t)n + 1);
	if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
		die(path, "cannot read it");
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* Sends the packets of stream s (file in dir); their number. */
static uint64_t send_stream(struct st_relayd *r, const char *dir, struct stream *s)
{
	size_t len, off = 0;
	uint8_t *b = slurp(dir, s->name, &len);

	while (off + sizeof(struct prefix) <= len) {
		struct prefix p;
		struct st_relayd_index ix;

		memcpy(&p, b + off, sizeof(p));
		if (p.magic != 0xC1FC1FC1u || p.packet_size % 8 || p.packet_size / 8 > len - off ||
		    p.packet_size < 8 * sizeof(p))
			die(s->name, "not a packet of shimtrace's");
		ix = (struct st_relayd_index){
			.packet_size = p.packet_size / 8,
			.content_size = p.content_size / 8,
			.timestamp_begin = p.timestamp_begin,
			.timestamp_end = p.timestamp_end,
			.events_discarded = p.events_discarded,
			.stream_id = p.stream_id,
			.stream_instance_id = p.stream_instance_id,
			.packet_seq_num = p.packet_seq_num,
		};
		if (st_relayd_send_packet(r, s->handle, s->packets, b + off, p.packet_size / 8, &ix) < 0)
			die(r->err, NULL);
		s->packets++;
		off += p.packet_size / 8;
	}
	free(b);
	return s->packets;
}

int main(int argc, char **argv)
{
	struct st_relay_url u;
	struct st_relayd r;
	struct stream streams[MAX_STREAMS];
	uint32_t n = 0, live = 0;
	uint64_t meta, packets = 0;
	bool hold = false;
	char err[256], host[256];
	struct dirent *d;
	DIR *dir;
	uint8_t *text;
	size_t text_len;

	if (argc < 4)
		die("usage: relaysend URL SESSION DIR [--live US] [--hold]", NULL);
	for (int i = 4; i < argc; i++) {
		if (strcmp(argv[i], "--live") == 0 && i + 1 < argc)
			live = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--hold") == 0)
			hold = true;
		else
			die("unknown option", argv[i]);
	}
	if (st_relay_url_parse(argv[1], &u, err, sizeof(err)) < 0)
		die(err, NULL);
	dir = opendir(argv[3]);
	if (!dir)
		die(argv[3], "not a directory");
	while ((d = readdir(dir)) && n < MAX_STREAMS)
		if (d->d_name[0] != '.' && strcmp(d->d_name, "metadata") != 0 && d->d_type == DT_REG)
			snprintf(streams[n++].name, sizeof(streams[0].name), "%s", d->d_name);
	closedir(dir);
	if (gethostname(host, sizeof(host)) < 0)
		die("no host name", NULL);
	if (st_relayd_connect(&r, &u, 5000) < 0 ||
	    st_relayd_create_session(&r, argv[2], host, live) < 0)
		die(r.err, NULL);
	for (uint32_t i = 0; i < n; i++) {
		streams[i].packets = 0;
		if (st_relayd_add_stream(&r, streams[i].name, PATH, &streams[i].handle) < 0)
			die(r.err, NULL);
	}
	text = slurp(argv[3], "metadata", &text_len);
	if (st_relayd_add_stream(&r, "metadata", PATH, &meta) < 0 || st_relayd_streams_sent(&r) < 0 ||
	    st_relayd_send_metadata(&r, meta, text, text_len) < 0)
		die(r.err, NULL);
	free(text);
	for (uint32_t i = 0; i < n; i++)
		packets += send_stream(&r, argv[3], &streams[i]);
	/* every packet written before the streams close */
	for (uint32_t i = 0; i < n; i++) {
		int w = 0;

		for (int tries = 0; streams[i].packets && !w && tries < 500; tries++) {
			w = st_relayd_written(&r, streams[i].handle, streams[i].packets - 1);
			if (w < 0)
				die(r.err, NULL);
			if (!w)
				usleep(10000);
		}
		if (streams[i].packets && !w)
			die("the relay daemon did not write every packet in 5 s", NULL);
	}
	if (hold) {
		char c;

		printf("holding %s\n", r.path);
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	}
	for (uint32_t i = 0; i < n; i++)
		if (st_relayd_close_stream(&r, streams[i].handle,
					   streams[i].packets ? streams[i].packets - 1 : UINT64_MAX) < 0)
			die(r.err, NULL);
	if (st_relayd_close_stream(&r, meta, UINT64_MAX) < 0)
		die(r.err, NULL);
	printf("sent %llu packets to %s\n", (unsigned long long)packets, r.path);
	st_relayd_close(&r);
	return 0;
}
