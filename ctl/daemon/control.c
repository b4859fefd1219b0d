/*
 * The daemon's control socket: requests from the shimtrace command
 * (see ctl/control.h), one per connection, handled on the event loop.
 *
 * Who may send requests (SO_PEERCRED): the daemon's own user, root, and for
 * the system daemon (run as root) the members of the group ST_GROUP. The
 * socket's mode says the same to the kernel: 0600 for a user daemon, 0660
 * and group ST_GROUP for the system daemon. A request is read with a time
 * limit and parsed with every length checked; a client that sends garbage
 * gets an error and its connection closed.
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl/control.h"
#include "ctl/daemon/commands.h"
#include "ctl/daemon/daemon.h"
#include "ctl/daemon/loop.h"

/* The control group (a name, or a number): its gid, or -1 if none. */
static gid_t control_group(const char *name)
{
	struct group *g;
	char *end;
	unsigned long v;

	if (geteuid() != 0)
		return (gid_t)-1;
	v = strtoul(name, &end, 10);
	if (*name && !*end && v < UINT32_MAX)
		return (gid_t)v;
	g = getgrnam(name);
	return g ? g->gr_gid : (gid_t)-1;
}

int st_control_listen(struct st_daemon *d, char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	gid_t gid = control_group(d->group);
	bool g = gid != (gid_t)-1;
	int fd;

	if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", d->rundir, ST_CTL_SOCKET) >=
	    sizeof(a.sun_path)) {
		snprintf(err, errlen, "run directory path too long: %s", d->rundir);
		return -ENAMETOOLONG;
	}
	unlink(a.sun_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    chmod(a.sun_path, g ? 0660 : 0600) < 0 || (g && chown(a.sun_path, 0, gid) < 0) ||
	    listen(fd, 64) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", a.sun_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	d->cfd = fd;
	d->control_gid = gid;
	return st_loop_watch(d, fd, ST_TAG_CONTROL, NULL);
}

/* Whether the peer belongs to the control group (system daemon). */
static bool in_group(int fd, gid_t gid)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);

	if (gid == (gid_t)-1 || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (socklen_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/* ---- replies ---- */

static void send_kind(struct st_request *r, uint32_t kind, int32_t status, const char *text,
		      size_t len)
{
	uint8_t buf[ST_CTL_MSG_MAX];
	struct st_ctl_reply h = { kind, status };

	while (true) {
		size_t n = len < sizeof(buf) - sizeof(h) ? len : sizeof(buf) - sizeof(h);

		memcpy(buf, &h, sizeof(h));
		memcpy(buf + sizeof(h), text, n);
		if (send(r->fd, buf, sizeof(h) + n, MSG_NOSIGNAL) < 0)
			return; /* the client went away */
		text += n;
		len -= n;
		if (!len)
			return;
	}
}

void st_reply(struct st_request *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (r->out_len + (size_t)n + 1 > r->out_cap) {
		size_t cap = r->out_cap ? r->out_cap * 2 : 4096;
		char *p;

		while (cap < r->out_len + (size_t)n + 1)
			cap *= 2;
		p = realloc(r->out, cap);
		if (!p)
			return;
		r->out = p;
		r->out_cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(r->out + r->out_len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	r->out_len += (size_t)n;
}

int st_reply_error(struct st_request *r, int status, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return status;
	send_kind(r, ST_CTL_ERR, 0, line, strnlen(line, sizeof(line)));
	return status;
}

/* ---- requests ---- */

const char *st_req_get(const struct st_request *r, const char *key)
{
	size_t kl = strlen(key);

	for (uint32_t i = 0; i < r->nitems; i++)
		if (strncmp(r->items[i], key, kl) == 0 && r->items[i][kl] == '=')
			return r->items[i] + kl + 1;
	return NULL;
}

uint32_t st_req_all(const struct st_request *r, const char *key, const char **out, uint32_t max)
{
	size_t kl = strlen(key);
	uint32_t n = 0;

	for (uint32_t i = 0; i < r->nitems; i++)
		if (strncmp(r->items[i], key, kl) == 0 && r->items[i][kl] == '=' && n < max)
			out[n++] = r->items[i] + kl + 1;
	return n;
}

/*
 * A refused peer's request is not read; closing with it unread would make
 * the peer's receive fail with ECONNRESET before it reads why it was
 * refused. So: hang up our side, and wait briefly for the peer to read
 * and close, discarding what it sent.
 */
static void linger_refused(int fd)
{
	char junk[512];
	struct pollfd p = { fd, POLLIN, 0 };

	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 20 && poll(&p, 1, 10) >= 0; i++) {
		ssize_t n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN))
			break;
	}
}

void st_control_accept(struct st_daemon *d)
{
	static char buf[ST_CTL_MSG_MAX];
	struct timeval tv = { 0, 500000 };
	struct pollfd pf;
	struct st_request r;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	ssize_t n;
	int status;

	memset(&r, 0, sizeof(r));
	r.fd = accept4(d->cfd, NULL, NULL, SOCK_CLOEXEC);
	if (r.fd < 0)
		return;
	/* A client that does not send its request (it sends it as it
	 * connects), or does not read the reply, must not hold the daemon:
	 * half a second at most, so that a stop request is never late. */
	setsockopt(r.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(r.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (getsockopt(r.fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0)
		goto out;
	r.uid = cred.uid;
	r.gid = cred.gid;
	r.pid = cred.pid;
	r.root = cred.uid == 0;
	if (cred.uid != d->uid && cred.uid != 0 && !in_group(r.fd, d->control_gid)) {
		st_reply_error(&r, 0, "shimtrace: not allowed: this session daemon takes commands "
				      "from uid %u%s%s%s only", (unsigned)d->uid,
			       d->uid == 0 ? ", root and the group " : " and root",
			       d->uid == 0 ? d->group : "", "");
		send_kind(&r, ST_CTL_END, ST_EXIT_FAIL, "", 0);
		linger_refused(r.fd);
		goto out;
	}
	pf = (struct pollfd){ r.fd, POLLIN, 0 };
	n = poll(&pf, 1, 500) == 1 ? recv(r.fd, buf, sizeof(buf), MSG_DONTWAIT) : -1;
	if (n <= 0 || st_request_parse(&r, buf, (size_t)n) < 0) {
		status = st_reply_error(&r, ST_EXIT_USAGE, "shimtrace: malformed request");
		goto end;
	}
	status = st_command(d, &r);
	if (status == ST_CTL_DEFERRED)
		return; /* the verb owns the request now */
end:
	st_request_finish(&r, status);
	return;
out:
	free(r.out);
	close(r.fd);
}

void st_request_finish(struct st_request *r, int status)
{
	if (r->out_len)
		send_kind(r, ST_CTL_OUT, 0, r->out, r->out_len);
	send_kind(r, ST_CTL_END, status, "", 0);
	free(r->out);
	r->out = NULL;
	close(r->fd);
	r->fd = -1;
}
