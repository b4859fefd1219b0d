/*
 * An inspector's channel (see channel.h): the daemon's socket on
 * descriptor 3, and for the objects and lines roles the socket joining
 * the pair on descriptor 4 (proto.h). Below the request handlers, which
 * reply through it, and the request loop, which reads through it.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl/common/fdpass.h"
#include "ctl/inspect/channel.h"

static int sock = ST_INSPECTOR_FD, pair = ST_INSPECTOR_PAIR_FD;

/* Lines role: the object files handed over, oldest first. */
static struct {
	struct st_insp_key key;
	int fd;
} handed[ST_INSP_HANDOFF_MAX];
static uint32_t nhanded;

int st_insp_send(const void *msg, size_t len, int fd)
{
	if (st_send_fd(sock, msg, len, fd, 0) == 0)
		return 0;
	/* the daemon is gone, or no longer wants us */
	_exit(0);
}

void st_insp_handoff(const struct st_insp_key *key, int fd)
{
	struct st_insp_handoff m = { { ST_INSP_HANDOFF, sizeof(m), 0 }, *key };

	st_send_fd(pair, &m, sizeof(m), fd, MSG_DONTWAIT);
}

/* Lines role: takes in what the objects inspector handed over. */
static void take_handoffs(void)
{
	struct st_insp_handoff m;
	int fd, truncated;

	while (st_recv_fd(pair, &m, sizeof(m), &fd, MSG_DONTWAIT, &truncated) > 0) {
		if (fd < 0)
			continue;
		if (truncated || m.hdr.type != ST_INSP_HANDOFF) {
			close(fd);
			continue;
		}
		if (nhanded == ST_INSP_HANDOFF_MAX) {
			close(handed[0].fd);
			memmove(handed, handed + 1, (ST_INSP_HANDOFF_MAX - 1) * sizeof(handed[0]));
			nhanded--;
		}
		handed[nhanded].key = m.key;
		handed[nhanded++].fd = fd;
	}
}

int st_insp_handed(const struct st_insp_key *key)
{
	take_handoffs();
	for (uint32_t i = nhanded; i-- > 0;)
		if (memcmp(&handed[i].key, key, sizeof(*key)) == 0) {
			int fd = handed[i].fd;

			memmove(handed + i, handed + i + 1, (nhanded - i - 1) * sizeof(handed[0]));
			nhanded--;
			return fd;
		}
	return -1;
}

void st_insp_done(uint64_t id, int32_t status, uint32_t count, const char *fmt, ...)
{
	struct {
		struct st_insp_done d;
		char text[ST_INSP_MSG_MAX - sizeof(struct st_insp_done)];
	} m;
	va_list ap;
	int n;

	memset(&m, 0, sizeof(m));
	va_start(ap, fmt);
	n = vsnprintf(m.text, sizeof(m.text), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(m.text))
		n = sizeof(m.text) - 1;
	m.d.hdr.type = ST_INSP_DONE;
	m.d.hdr.id = id;
	m.d.hdr.len = (uint32_t)(sizeof(m.d) + (size_t)n + 1);
	m.d.status = status;
	m.d.count = count;
	st_insp_send(&m, m.d.hdr.len, -1);
}

ssize_t st_insp_next(bool handoffs, void *buf, size_t cap, int *fd, int *truncated)
{
	/* the lines role takes in handed files while it waits */
	while (handoffs) {
		struct pollfd pf[2] = { { sock, POLLIN, 0 }, { pair, POLLIN, 0 } };

		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			_exit(1);
		if (pf[1].revents & POLLIN)
			take_handoffs();
		if (pf[0].revents)
			break;
	}
	return st_recv_fd(sock, buf, cap, fd, 0, truncated);
}
