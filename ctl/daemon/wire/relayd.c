/*
 * A client of lttng-relayd (see relayd.h and doc/relayd-protocol.md).
 *
 * Every integer on the wire is big-endian and every message is packed: a
 * control command is a 24-byte header (circuit 0, payload size, command,
 * version 0) and its payload, answered by a fixed-size reply without a
 * header (SEND_METADATA gets none); a packet on the data connection is a
 * 32-byte header (circuit 0, stream handle, sequence number, size,
 * padding) and its bytes.
 *
 * Owns: the two connections of one relay session.
 * Thread: the caller's (blocking, with time limits).
 * Calls: none.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "ctl/daemon/wire/relayd.h"

enum {
	CMD_ADD_STREAM = 1,
	CMD_CREATE_SESSION = 2,
	CMD_VERSION = 5,
	CMD_SEND_METADATA = 6,
	CMD_CLOSE_STREAM = 7,
	CMD_DATA_PENDING = 8,
	CMD_SEND_INDEX = 13,
	CMD_STREAMS_SENT = 16,
	CMD_CREATE_TRACE_CHUNK = 19,
};

#define MAJOR 2
#define MINOR 13
#define MINOR_LEAST 11 /* the session and stream messages spoken here */
#define STATUS_OK 10
#define NAME_MAX_LEN 255

/* ---- bytes ---- */

/* A message being built: big-endian fields appended. */
struct msg {
	uint8_t b[512];
	size_t n;
	bool over;
};

static void put(struct msg *m, const void *p, size_t n)
{
	if (m->n + n > sizeof(m->b)) {
		m->over = true;
		return;
	}
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void put_u8(struct msg *m, uint8_t v)
{
	put(m, &v, 1);
}

static void put_u32(struct msg *m, uint32_t v)
{
	v = htobe32(v);
	put(m, &v, 4);
}

static void put_u64(struct msg *m, uint64_t v)
{
	v = htobe64(v);
	put(m, &v, 8);
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

/* ---- the connections ---- */

/* The reason of a failure, into r->err: -1. */
static int fail(struct st_relayd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct st_relayd *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* Sends the n bytes of the iovecs whole on fd: 0, or -1. */
static int send_all(struct st_relayd *r, int fd, struct iovec *iov, int niov)
{
	while (niov > 0) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)niov };
		ssize_t k = sendmsg(fd, &mh, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return fail(r, "the relay daemon does not take what is sent (%s)",
				    k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? "timed out"
											: strerror(errno));
		while (niov > 0 && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++;
			niov--;
		}
		if (niov > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

static int recv_all(struct st_relayd *r, void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n) {
		ssize_t k = recv(r->ctrl, p, n, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			return fail(r, "the relay daemon closed the connection");
		if (k < 0)
			return fail(r, "no answer from the relay daemon (%s)",
				    errno == EAGAIN || errno == EWOULDBLOCK ? "timed out" : strerror(errno));
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Sends command cmd with payload m (and extra bytes after it). */
static int command(struct st_relayd *r, uint32_t cmd, const struct msg *m, const void *extra,
		   uint64_t extra_len)
{
	struct msg h = { .n = 0 };
	struct iovec iov[3];

	if (m->over)
		return fail(r, "a relay message too long (a name?)");
	put_u64(&h, 0);
	put_u64(&h, m->n + extra_len);
	put_u32(&h, cmd);
	put_u32(&h, 0);
	iov[0] = (struct iovec){ h.b, h.n };
	iov[1] = (struct iovec){ (void *)m->b, m->n };
	iov[2] = (struct iovec){ (void *)extra, extra_len };
	return send_all(r, r->ctrl, iov, extra_len ? 3 : 2);
}

/* The 4-byte status a command answers: 0 when it is OK, else -1 saying
 * which command the relay refused. */
static int status(struct st_relayd *r, const char *what)
{
	uint8_t b[4];
	uint32_t s;

	if (recv_all(r, b, sizeof(b)) < 0)
		return -1;
	s = get_u32(b);
	if (s != STATUS_OK)
		return fail(r, "the relay daemon refused %s (status %u)", what, s);
	return 0;
}

/* A connection to host:port with the time limit: the descriptor, or -1. */
static int dial(struct st_relayd *r, const char *host, uint16_t port, int timeout_ms)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *a;
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	char service[8];
	int fd = -1, e = 0, rc;

	snprintf(service, sizeof(service), "%u", port);
	rc = getaddrinfo(host, service, &hints, &res);
	if (rc)
		return fail(r, "relay daemon host '%s': %s", host, gai_strerror(rc));
	for (a = res; a && fd < 0; a = a->ai_next) {
		struct pollfd p;

		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno == EINPROGRESS) {
			socklen_t len = sizeof(e);

			p = (struct pollfd){ .fd = fd, .events = POLLOUT };
			e = poll(&p, 1, timeout_ms) == 1 &&
					    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0
				    ? e
				    : ETIMEDOUT;
		} else {
			e = errno;
		}
		if (e) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		return fail(r, "cannot connect to the relay daemon at %s:%u (%s)", host, port, strerror(e));
	/* blocking from now on, every send and receive within the limit */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/* (each message goes at once: a command sent after one the relay
	 * does not answer, such as metadata, would otherwise wait, by Nagle's
	 * rule, for the relay's delayed acknowledgement, 40 ms) */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	return fd;
}

int st_relayd_connect(struct st_relayd *r, const struct st_relay_url *u, int timeout_ms)
{
	struct msg m = { .n = 0 };
	uint8_t b[8];
	uint32_t major, minor;

	memset(r, 0, sizeof(*r));
	r->ctrl = r->data = -1;
	r->ctrl = dial(r, u->host, u->ctrl_port, timeout_ms);
	if (r->ctrl < 0)
		return -1;
	put_u32(&m, MAJOR);
	put_u32(&m, MINOR);
	if (command(r, CMD_VERSION, &m, NULL, 0) < 0 || recv_all(r, b, sizeof(b)) < 0)
		return -1;
	major = get_u32(b);
	minor = get_u32(b + 4);
	if (major != MAJOR || minor < MINOR_LEAST)
		return fail(r, "the relay daemon speaks protocol %u.%u: 2.%u or later is needed", major,
			    minor, MINOR_LEAST);
	r->minor = minor < MINOR ? minor : MINOR;
	r->data = dial(r, u->data_host[0] ? u->data_host : u->host, u->data_port, timeout_ms);
	return r->data < 0 ? -1 : 0;
}

/* A name relayd takes for a session or a host: not empty, no '/', not
 * starting with '.'. */
static bool name_ok(const char *s)
{
	return *s && *s != '.' && !strchr(s, '/') && strlen(s) < NAME_MAX_LEN;
}

int st_relayd_create_session(struct st_relayd *r, const char *name, const char *hostname,
			     uint32_t live_us)
{
	struct msg m = { .n = 0 };
	uint8_t uuid[16], b[16];
	uint64_t now = (uint64_t)time(NULL), sid;
	uint32_t len;

	if (!name_ok(name) || !name_ok(hostname))
		return fail(r, "'%s': not a relay session or host name (empty, '/', or a leading '.')",
			    name_ok(name) ? hostname : name);
	/* (relayd keys a session's trace chunks by this id: one per session,
	 * or two sessions would share a directory) */
	if (getrandom(uuid, sizeof(uuid), 0) != sizeof(uuid))
		return fail(r, "no random session id (%s)", strerror(errno));
	uuid[0] |= 1;
	memcpy(&sid, uuid, sizeof(sid));
	put_u32(&m, (uint32_t)strlen(name) + 1);
	put_u32(&m, (uint32_t)strlen(hostname) + 1);
	put_u32(&m, 1); /* the base path: "" */
	put_u32(&m, live_us);
	put_u8(&m, 0); /* not a snapshot */
	put_u8(&m, 0); /* the name holds no creation time */
	put(&m, uuid, sizeof(uuid));
	put_u64(&m, sid);
	put_u64(&m, now);
	put_u8(&m, 0); /* no current trace chunk */
	put_u64(&m, 0);
	put(&m, name, strlen(name) + 1);
	put(&m, hostname, strlen(hostname) + 1);
	put_u8(&m, 0);
	if (command(r, CMD_CREATE_SESSION, &m, NULL, 0) < 0 || recv_all(r, b, sizeof(b)) < 0)
		return -1;
	r->session = get_u64(b);
	len = get_u32(b + 12);
	if (get_u32(b + 8) != STATUS_OK)
		return fail(r, "the relay daemon refused to create session '%s'", name);
	if (len == 0 || len > sizeof(r->path))
		return fail(r, "the relay daemon answered a session path of a bad length");
	if (recv_all(r, r->path, len) < 0)
		return -1;
	r->path[len - 1] = '\0';
	/* the session's first trace chunk, which every stream goes into */
	m.n = 0;
	put_u64(&m, 0);
	put_u64(&m, now);
	put_u32(&m, 0);
	if (command(r, CMD_CREATE_TRACE_CHUNK, &m, NULL, 0) < 0)
		return -1;
	return status(r, "the session's trace chunk");
}

int st_relayd_add_stream(struct st_relayd *r, const char *channel, const char *path,
			 uint64_t *handle)
{
	struct msg m = { .n = 0 };
	uint8_t b[12];

	if (!*channel || strchr(channel, '/') || strlen(path) >= NAME_MAX_LEN)
		return fail(r, "'%s': not a relay stream name", channel);
	put_u32(&m, (uint32_t)strlen(channel) + 1);
	put_u32(&m, (uint32_t)strlen(path) + 1);
	put_u64(&m, 0); /* one file, of any size */
	put_u64(&m, 0);
	put_u64(&m, 0); /* the trace chunk */
	put(&m, channel, strlen(channel) + 1);
	put(&m, path, strlen(path) + 1);
	if (command(r, CMD_ADD_STREAM, &m, NULL, 0) < 0 || recv_all(r, b, sizeof(b)) < 0)
		return -1;
	if (get_u32(b + 8) != STATUS_OK)
		return fail(r, "the relay daemon refused stream '%s'", channel);
	*handle = get_u64(b);
	return 0;
}

int st_relayd_streams_sent(struct st_relayd *r)
{
	struct msg m = { .n = 0 };

	if (command(r, CMD_STREAMS_SENT, &m, NULL, 0) < 0)
		return -1;
	return status(r, "the list of streams");
}

int st_relayd_send_metadata(struct st_relayd *r, uint64_t handle, const void *bytes, uint64_t len)
{
	struct msg m = { .n = 0 };

	put_u64(&m, handle);
	put_u32(&m, 0); /* no padding */
	/* (no answer to this one) */
	return command(r, CMD_SEND_METADATA, &m, bytes, len);
}

static int send_index(struct st_relayd *r, uint64_t handle, uint64_t seq,
		      const struct st_relayd_index *ix)
{
	struct msg m = { .n = 0 };

	put_u64(&m, handle);
	put_u64(&m, seq);
	put_u64(&m, ix->packet_size * 8);
	put_u64(&m, ix->content_size * 8);
	put_u64(&m, ix->timestamp_begin);
	put_u64(&m, ix->timestamp_end);
	put_u64(&m, ix->events_discarded);
	put_u64(&m, ix->stream_id);
	put_u64(&m, ix->stream_instance_id);
	put_u64(&m, ix->packet_seq_num);
	if (command(r, CMD_SEND_INDEX, &m, NULL, 0) < 0)
		return -1;
	return status(r, "a packet's index");
}

/* The data connection's header of packet seq of a stream, len bytes, in
 * h: 0, or -1 (too big for the protocol). */
static int data_header(struct st_relayd *r, struct msg *h, uint64_t handle, uint64_t seq,
		       uint64_t len)
{
	if (len > UINT32_MAX)
		return fail(r, "a packet too big for the relay protocol");
	put_u64(h, 0);
	put_u64(h, handle);
	put_u64(h, seq);
	put_u32(h, (uint32_t)len);
	put_u32(h, 0); /* no padding: the packet is sent whole */
	return 0;
}

int st_relayd_send_packet(struct st_relayd *r, uint64_t handle, uint64_t seq, const void *bytes,
			  uint64_t len, const struct st_relayd_index *ix)
{
	struct msg h = { .n = 0 };
	struct iovec iov[2];

	if (data_header(r, &h, handle, seq, len) < 0)
		return -1;
	iov[0] = (struct iovec){ h.b, h.n };
	iov[1] = (struct iovec){ (void *)bytes, len };
	if (send_all(r, r->data, iov, 2) < 0)
		return -1;
	return send_index(r, handle, seq, ix);
}

int st_relayd_send_packet_file(struct st_relayd *r, uint64_t handle, uint64_t seq, int fd,
			       uint64_t off, uint64_t len, const struct st_relayd_index *ix)
{
	struct msg h = { .n = 0 };
	struct iovec iov;
	off_t at = (off_t)off;

	if (data_header(r, &h, handle, seq, len) < 0)
		return -1;
	iov = (struct iovec){ h.b, h.n };
	if (send_all(r, r->data, &iov, 1) < 0)
		return -1;
	while (len) {
		/* (from the page cache to the socket: no copy of ours) */
		ssize_t k = sendfile(r->data, fd, &at, len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return fail(r, "the relay daemon does not take what is sent (%s)",
				    k == 0 ? "the file is shorter" : errno == EAGAIN ? "timed out"
									      : strerror(errno));
		len -= (uint64_t)k;
	}
	return send_index(r, handle, seq, ix);
}

int st_relayd_beacon(struct st_relayd *r, uint64_t handle, uint64_t last_seq, uint64_t stream_id,
		     uint64_t ts_end)
{
	struct st_relayd_index ix = { .timestamp_end = ts_end, .stream_id = stream_id };

	return send_index(r, handle, last_seq, &ix);
}

int st_relayd_written(struct st_relayd *r, uint64_t handle, uint64_t last_seq)
{
	struct msg m = { .n = 0 };
	uint8_t b[4];

	put_u64(&m, handle);
	put_u64(&m, last_seq);
	if (command(r, CMD_DATA_PENDING, &m, NULL, 0) < 0 || recv_all(r, b, sizeof(b)) < 0)
		return -1;
	switch (get_u32(b)) {
	case 0:
		return 1;
	case 1:
		return 0;
	default:
		return fail(r, "the relay daemon does not know a stream");
	}
}

int st_relayd_close_stream(struct st_relayd *r, uint64_t handle, uint64_t last_seq)
{
	struct msg m = { .n = 0 };

	put_u64(&m, handle);
	put_u64(&m, last_seq);
	if (command(r, CMD_CLOSE_STREAM, &m, NULL, 0) < 0)
		return -1;
	return status(r, "to close a stream");
}

void st_relayd_close(struct st_relayd *r)
{
	if (r->ctrl >= 0)
		close(r->ctrl);
	if (r->data >= 0)
		close(r->data);
	r->ctrl = r->data = -1;
}
