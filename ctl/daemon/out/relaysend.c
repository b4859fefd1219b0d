/*
 * A trace directory sent to an lttng-relayd (see relaysend.h): each
 * stream file a stream, its packets sent in order with their indexes,
 * read from each packet's header and context (packet.h, as trace.c
 * writes them), the metadata file the metadata. The streams close once the
 * relay says every packet is written (it writes as packets arrive; a
 * packet cut by a lost connection would spoil its file for readers).
 *
 * Owns: nothing past the call: one relay session, opened and closed.
 * Thread: the caller's (blocking, with time limits).
 * Calls: wire.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/daemon/out/packet.h"
#include "ctl/daemon/out/relaysend.h"
#include "ctl/daemon/wire/relayd.h"

#define MAX_STREAMS 4096
#define TRACE_PATH "trace" /* the streams' directory in the session */
#define TIMEOUT_MS 5000

struct stream {
	char name[256];
	uint64_t handle, packets;
};

/* The bytes of file name in dir (NULL, with err, when it cannot be read). */
static uint8_t *slurp(int dirfd, const char *name, size_t *len, char *err, size_t errlen)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	uint8_t *b = NULL;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(b = malloc((size_t)st.st_size + 1)))
		goto fail;
	while (got < (size_t)st.st_size) {
		ssize_t k = read(fd, b + got, (size_t)st.st_size - got);

		if (k <= 0)
			goto fail;
		got += (size_t)k;
	}
	close(fd);
	*len = got;
	return b;
fail:
	snprintf(err, errlen, "cannot read %s of the trace", name);
	if (fd >= 0)
		close(fd);
	free(b);
	return NULL;
}

/* Sends the packets of stream s: 0, or -1 with err. */
static int send_stream(struct st_relayd *r, int dirfd, struct stream *s, char *err, size_t errlen)
{
	size_t len, off = 0;
	uint8_t *b = slurp(dirfd, s->name, &len, err, errlen);

	if (!b)
		return -1;
	while (off + sizeof(struct packet_prefix) <= len) {
		struct packet_prefix p;
		struct st_relayd_index ix;

		memcpy(&p, b + off, sizeof(p));
		if (p.magic != CTF_MAGIC || p.packet_size % 8 || p.packet_size / 8 > len - off ||
		    p.packet_size < 8 * sizeof(p)) {
			snprintf(err, errlen, "%s: a packet that is not shimtrace's at offset %zu", s->name,
				 off);
			free(b);
			return -1;
		}
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
		if (st_relayd_send_packet(r, s->handle, s->packets, b + off, p.packet_size / 8, &ix) < 0) {
			snprintf(err, errlen, "%s", r->err);
			free(b);
			return -1;
		}
		s->packets++;
		off += p.packet_size / 8;
	}
	free(b);
	return 0;
}

/* Waits (5 s at most) until the relay has written every packet of s. */
static int written(struct st_relayd *r, const struct stream *s)
{
	for (int tries = 0; s->packets && tries < 500; tries++) {
		int w = st_relayd_written(r, s->handle, s->packets - 1);

		if (w)
			return w < 0 ? -1 : 0;
		usleep(10000);
	}
	if (s->packets)
		snprintf(r->err, sizeof(r->err), "the relay daemon did not write %s in 5 s", s->name);
	return s->packets ? -1 : 0;
}

/* The stream files of the trace (every regular file but the metadata and
 * dotfiles), in v (at most MAX_STREAMS); their number, or -1. */
static int list_streams(int dirfd, struct stream *v, char *err, size_t errlen)
{
	int n = 0, fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "cannot list the trace");
		return -1;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, "metadata") != 0 && e->d_type == DT_REG) {
			if (n == MAX_STREAMS) {
				snprintf(err, errlen, "more than %d streams in the trace", MAX_STREAMS);
				closedir(d);
				return -1;
			}
			snprintf(v[n].name, sizeof(v[n].name), "%s", e->d_name);
			v[n].packets = 0;
			n++;
		}
	closedir(d);
	return n;
}

int st_relay_send_trace(const struct st_relay_url *u, const char *session, const char *dir,
			uint32_t live_us, void (*hold)(const char *path), char *path, size_t pathlen,
			uint64_t *packets, char *err, size_t errlen)
{
	struct stream *v = calloc(MAX_STREAMS, sizeof(*v));
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n, ret = -1;
	struct st_relayd r = { .ctrl = -1, .data = -1 };
	char host[256];
	uint64_t meta;
	uint8_t *text = NULL;
	size_t text_len;

	*packets = 0;
	if (!v || dirfd < 0) {
		snprintf(err, errlen, "%s: cannot open the trace", dir);
		goto out;
	}
	n = list_streams(dirfd, v, err, errlen);
	text = n < 0 ? NULL : slurp(dirfd, "metadata", &text_len, err, errlen);
	if (!text)
		goto out;
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "localhost");
	if (st_relayd_connect(&r, u, TIMEOUT_MS) < 0 ||
	    st_relayd_create_session(&r, session, host, live_us) < 0)
		goto relay_failed;
	snprintf(path, pathlen, "%s", r.path);
	for (int i = 0; i < n; i++)
		if (st_relayd_add_stream(&r, v[i].name, TRACE_PATH, &v[i].handle) < 0)
			goto relay_failed;
	if (st_relayd_add_stream(&r, "metadata", TRACE_PATH, &meta) < 0 ||
	    st_relayd_streams_sent(&r) < 0 || st_relayd_send_metadata(&r, meta, text, text_len) < 0)
		goto relay_failed;
	for (int i = 0; i < n; i++) {
		if (send_stream(&r, dirfd, &v[i], err, errlen) < 0)
			goto out;
		*packets += v[i].packets;
	}
	for (int i = 0; i < n; i++)
		if (written(&r, &v[i]) < 0)
			goto relay_failed;
	if (hold)
		hold(r.path);
	for (int i = 0; i < n; i++)
		if (st_relayd_close_stream(&r, v[i].handle, v[i].packets ? v[i].packets - 1 : UINT64_MAX) < 0)
			goto relay_failed;
	if (st_relayd_close_stream(&r, meta, UINT64_MAX) < 0)
		goto relay_failed;
	ret = 0;
	goto out;
relay_failed:
	snprintf(err, errlen, "%s", r.err);
out:
	st_relayd_close(&r);
	if (dirfd >= 0)
		close(dirfd);
	free(text);
	free(v);
	return ret;
}
