/*
 * The daemon's control socket: requests from the shimtrace command
 * (see ctl/common/control.h), one per connection, handled on the event loop.
 *
 * Who may send requests (SO_PEERCRED): the daemon's own user, root, and for
 * the system daemon (run as root) the members of the group ST_GROUP. The
 * socket's mode says the same to the kernel: 0600 for a user daemon, 0660
 * and group ST_GROUP for the system daemon. A request is parsed with every
 * length checked; a client that sends garbage gets an error and its
 * connection closed.
 *
 * Nothing here waits on a client. A connection is a client of the loop:
 *
 *   reading   its request is read when the loop says it came; a client
 *             that sends none within CLIENT_READ_MS is closed (it holds
 *             nothing but one of its uid's connections meanwhile: the
 *             time is long enough for a command on a busy machine)
 *   running   a verb that answers later (a stop that waits, load-probe)
 *             holds it; a client that hangs up meanwhile is closed, and
 *             the answer goes nowhere
 *   sending   the reply (ERR lines, OUT text, END) is queued and sent as
 *             the client reads it; one that reads nothing for
 *             CLIENT_SEND_MS is closed
 *   closing   a refused peer: told why, then given CLIENT_READ_MS to read
 *             it and hang up, what it sends thrown away
 *
 * So a slow or silent client delays only itself. Each uid has at most
 * CLIENTS_PER_UID connections at once: one more is closed unread.
 *
 * The clients are a list: not cds_lfht: only the daemon's thread reads and
 * changes it, so an RCU table would add grace periods and a library to the
 * one thread for no reader; cds_lfht is for a table another thread reads
 * while this one changes it.
 *
 * Owns: the control socket's clients: their requests and replies.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: loop, wire.
 */
#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/monotime.h"
#include "ctl/common/control.h"
#include "ctl/daemon/cmd/control.h"
#include "ctl/daemon/loop/reactor.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/wire/request.h"

#define CLIENT_READ_MS 5000  /* to send the request, or read a refusal */
#define CLIENT_SEND_MS 5000  /* to read some of the reply */
#define CLIENTS_PER_UID 32   /* connections of one uid at once */
#define ACCEPTS_PER_TURN 64  /* then the loop serves the others */

enum client_state { C_READING, C_RUNNING, C_SENDING, C_CLOSING };

/* One message of a reply, queued until the client takes it. */
struct out_msg {
	struct out_msg *next;
	size_t len;
	uint8_t data[];
};

struct st_client {
	struct st_client *next;
	struct st_daemon *d;
	int fd;	       /* -1 once closed (a running verb still holds it) */
	struct st_watch watch;
	struct ucred cred; /* SO_PEERCRED, when it connected */
	enum client_state state;
	uint64_t deadline; /* ms */
	bool want_out;	   /* watched for room to send */
	struct out_msg *head, **tail;
};

static struct st_client *clients;
static st_control_handler handler; /* the verbs (st_control_listen) */

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

static void control_accept(struct st_daemon *d);

static void on_accept(struct st_loop *l, void *arg, uint32_t events)
{
	(void)l;
	(void)events;
	control_accept(arg);
}

int st_control_listen(struct st_daemon *d, st_control_handler run, char *err, size_t errlen)
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
	handler = run;
	return st_watch_add(&d->loop, &d->control_watch, fd, EPOLLIN, on_accept, d, true);
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

/* ---- clients ---- */

static void client_close(struct st_daemon *d, struct st_client *c)
{
	if (c->fd < 0)
		return;
	st_watch_del(&d->loop, &c->watch);
	close(c->fd);
	c->fd = -1;
	while (c->head) {
		struct out_msg *m = c->head;

		c->head = m->next;
		free(m);
	}
	c->tail = &c->head;
}

/* Frees the closed clients no verb holds (between two loop rounds: an
 * event of theirs may still be in the round's list). */
void st_control_collect(void)
{
	for (struct st_client **pp = &clients; *pp;) {
		struct st_client *c = *pp;

		if (c->fd >= 0 || c->state == C_RUNNING) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		free(c);
	}
}

/* Sends what is queued, as far as the client takes it now. */
static void client_flush(struct st_daemon *d, struct st_client *c)
{
	bool out;

	while (c->fd >= 0 && c->head) {
		struct out_msg *m = c->head;

		if (send(c->fd, m->data, m->len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
				break;
			client_close(d, c); /* it went away */
			return;
		}
		c->head = m->next;
		if (!c->head)
			c->tail = &c->head;
		free(m);
		/* (it takes what we send: its time to read runs anew) */
		if (c->state == C_SENDING)
			c->deadline = st_now_ms() + CLIENT_SEND_MS;
	}
	if (c->fd < 0)
		return;
	if (!c->head && c->state == C_SENDING) {
		client_close(d, c);
		return;
	}
	out = c->head != NULL;
	if (out != c->want_out &&
	    st_watch_mod(&d->loop, &c->watch, EPOLLIN | (out ? EPOLLOUT : 0)) == 0)
		c->want_out = out;
}

/* Queues one message of a reply (kind, status, text), split as the
 * protocol's messages hold. */
static void queue(struct st_client *c, uint32_t kind, int32_t status, const char *text,
		  size_t len)
{
	struct st_ctl_reply h = { kind, status };

	do {
		size_t n = len < ST_CTL_MSG_MAX - sizeof(h) ? len : ST_CTL_MSG_MAX - sizeof(h);
		struct out_msg *m;

		if (c->fd < 0 || !(m = malloc(sizeof(*m) + sizeof(h) + n)))
			return;
		m->next = NULL;
		m->len = sizeof(h) + n;
		memcpy(m->data, &h, sizeof(h));
		memcpy(m->data + sizeof(h), text, n);
		*c->tail = m;
		c->tail = &m->next;
		text += n;
		len -= n;
	} while (len);
}

static unsigned clients_of(uid_t uid)
{
	unsigned n = 0;

	for (const struct st_client *c = clients; c; c = c->next)
		n += c->fd >= 0 && c->cred.uid == uid;
	return n;
}

/* ---- replies ---- */

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
	if (n < 0 || !r->client)
		return status;
	queue(r->client, ST_CTL_ERR, 0, line, strnlen(line, sizeof(line)));
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

void st_request_finish(struct st_request *r, int status)
{
	struct st_client *c = r->client;

	if (r->out_len)
		queue(c, ST_CTL_OUT, 0, r->out, r->out_len);
	queue(c, ST_CTL_END, status, "", 0);
	free(r->out);
	r->out = NULL;
	r->out_len = r->out_cap = 0;
	r->client = NULL;
	if (!c)
		return;
	c->state = C_SENDING;
	c->deadline = st_now_ms() + CLIENT_SEND_MS;
	client_flush(c->d, c);
}

/*
 * A refused peer's request is not read; closing with it unread would make
 * the peer's receive fail with ECONNRESET before it reads why it was
 * refused. So: hang up our side, and give the peer a moment to read and
 * close, throwing away what it sent.
 */
static void refuse(struct st_daemon *d, struct st_client *c)
{
	char line[256];
	int n = snprintf(line, sizeof(line),
			 "shimtrace: not allowed: this session daemon takes commands from uid %u%s%s "
			 "only",
			 (unsigned)d->uid, d->uid == 0 ? ", root and the group " : " and root",
			 d->uid == 0 ? d->group : "");

	queue(c, ST_CTL_ERR, 0, line, n > 0 ? (size_t)n : 0);
	queue(c, ST_CTL_END, ST_EXIT_FAIL, "", 0);
	c->state = C_CLOSING;
	c->deadline = st_now_ms() + CLIENT_READ_MS;
	client_flush(d, c);
	if (c->fd >= 0 && !c->head)
		shutdown(c->fd, SHUT_WR);
}

/* The client's request came, or may have: read it (never waiting), run it. */
static void take_request(struct st_daemon *d, struct st_client *c)
{
	static char buf[ST_CTL_MSG_MAX];
	ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	struct st_request req = { .client = c }, *r = &req;
	int status;

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(d, c);
		return;
	}
	c->state = C_RUNNING;
	r->uid = c->cred.uid;
	r->gid = c->cred.gid;
	r->pid = c->cred.pid;
	r->root = c->cred.uid == 0;
	if (st_request_parse(r, buf, (size_t)n) < 0) {
		r->nitems = 0;
		status = st_reply_error(r, ST_EXIT_USAGE, "shimtrace: malformed request");
	} else {
		status = handler(d, r);
		if (status == ST_CTL_DEFERRED)
			return; /* the verb holds the request now */
	}
	st_request_finish(r, status);
}

static void on_event(struct st_loop *l, void *arg, uint32_t events);

static void control_accept(struct st_daemon *d)
{
	for (int i = 0; i < ACCEPTS_PER_TURN; i++) {
		struct st_client *c;
		struct ucred cred;
		socklen_t clen = sizeof(cred);
		int fd = accept4(d->cfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 ||
		    clients_of(cred.uid) >= CLIENTS_PER_UID || !(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		c->d = d;
		c->fd = fd;
		c->cred = cred;
		c->tail = &c->head;
		c->state = C_READING;
		c->deadline = st_now_ms() + CLIENT_READ_MS;
		c->next = clients;
		clients = c;
		if (st_watch_add(&d->loop, &c->watch, fd, EPOLLIN, on_event, c, true) < 0)
			client_close(d, c);
		else if (cred.uid != d->uid && cred.uid != 0 && !in_group(fd, d->control_gid))
			refuse(d, c);
		else
			take_request(d, c); /* (sent as it connects: most often here now) */
	}
}

/* Reads what a client sends after its request, which only tells whether
 * it hung up; true if it did (it is closed then). */
static bool hung_up(struct st_daemon *d, struct st_client *c)
{
	char junk[512];
	ssize_t n;

	while ((n = recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT)) > 0)
		;
	if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
		client_close(d, c);
		return true;
	}
	return false;
}

static void on_event(struct st_loop *l, void *arg, uint32_t events)
{
	struct st_client *c = arg;
	struct st_daemon *d = c->d;

	(void)l;
	if (c->fd < 0)
		return;
	switch (c->state) {
	case C_READING:
		take_request(d, c);
		return;
	case C_RUNNING:
		/* it hung up while the verb works: nobody to answer */
		hung_up(d, c);
		return;
	case C_SENDING:
	case C_CLOSING:
		if ((events & EPOLLOUT) && (client_flush(d, c), c->fd < 0))
			return;
		if (hung_up(d, c))
			return;
		if (c->state == C_CLOSING && !c->head)
			shutdown(c->fd, SHUT_WR);
		return;
	}
}

void st_control_tick(struct st_daemon *d)
{
	uint64_t now = st_now_ms();

	for (struct st_client *c = clients; c; c = c->next)
		if (c->fd >= 0 && c->state != C_RUNNING && now >= c->deadline)
			client_close(d, c);
}

void st_control_fini(struct st_daemon *d)
{
	for (struct st_client *c = clients; c; c = c->next)
		if (c->state != C_RUNNING)
			client_close(d, c);
	st_control_collect();
}
