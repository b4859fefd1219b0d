/*
 * The reactor (reactor.h): epoll, a timerfd per periodic timer, and two
 * lists of calls run at the end of a turn.
 *
 * Owns: the epoll instance, the watches, the timers (and their timerfds),
 *       the deferred calls and the news subscriptions of a loop.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: none.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "ctl/daemon/loop/reactor.h"

#define EVENTS_PER_TURN 64

int st_loop_init(struct st_loop *l)
{
	memset(l, 0, sizeof(*l));
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	return l->epfd < 0 ? -errno : 0;
}

void st_loop_fini(struct st_loop *l)
{
	for (uint32_t i = 0; i < l->ntimers; i++)
		close(l->timers[i].fd);
	if (l->epfd >= 0)
		close(l->epfd);
	free(l->deferred);
	memset(l, 0, sizeof(*l));
	l->epfd = -1;
}

int st_watch_add(struct st_loop *l, struct st_watch *w, int fd, uint32_t events, st_watch_fn fn,
		 void *arg, bool urgent)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	w->fd = fd;
	w->fn = fn;
	w->arg = arg;
	w->urgent = urgent;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		w->fn = NULL;
		return -errno;
	}
	if (urgent) {
		w->next_urgent = l->urgent;
		l->urgent = w;
	}
	return 0;
}

int st_watch_mod(struct st_loop *l, struct st_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0 ? -errno : 0;
}

void st_watch_del(struct st_loop *l, struct st_watch *w)
{
	if (!w->fn)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->fn = NULL;
	if (w->urgent)
		for (struct st_watch **pp = &l->urgent; *pp; pp = &(*pp)->next_urgent)
			if (*pp == w) {
				*pp = w->next_urgent;
				break;
			}
}

/* A timer's descriptor is readable: it ticked (once or more). */
static void timer_fired(struct st_loop *l, void *arg, uint32_t events)
{
	struct st_loop_timer *t = arg;
	uint64_t n, all = 0;

	(void)events;
	while (read(t->fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		all += n;
	if (all)
		t->fn(l, t->arg, all);
}

int st_loop_every(struct st_loop *l, uint32_t ms, st_timer_fn fn, void *arg)
{
	struct itimerspec it = { { ms / 1000, (long)(ms % 1000) * 1000000 },
				 { ms / 1000, (long)(ms % 1000) * 1000000 } };
	struct st_loop_timer *t;
	int ret;

	if (l->ntimers == ST_LOOP_TIMERS)
		return -ENOSPC;
	t = &l->timers[l->ntimers];
	t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->fd < 0)
		return -errno;
	t->fn = fn;
	t->arg = arg;
	if (timerfd_settime(t->fd, 0, &it, NULL) < 0 ||
	    (ret = st_watch_add(l, &t->watch, t->fd, EPOLLIN, timer_fired, t, false)) < 0) {
		ret = -errno;
		close(t->fd);
		return ret;
	}
	l->ntimers++;
	return 0;
}

int st_loop_collector(struct st_loop *l, st_loop_fn fn, void *arg)
{
	if (l->ncollectors == ST_LOOP_COLLECTORS)
		return -ENOSPC;
	l->collectors[l->ncollectors++] = (struct st_loop_call){ fn, arg };
	return 0;
}

int st_loop_defer(struct st_loop *l, st_loop_fn fn, void *arg)
{
	if (l->ndeferred == l->deferred_cap) {
		uint32_t cap = l->deferred_cap ? l->deferred_cap * 2 : 16;
		struct st_loop_call *v = realloc(l->deferred, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->deferred = v;
		l->deferred_cap = cap;
	}
	l->deferred[l->ndeferred++] = (struct st_loop_call){ fn, arg };
	return 0;
}

int st_loop_subscribe(struct st_loop *l, unsigned kind, st_loop_fn fn, void *arg)
{
	if (kind >= ST_LOOP_NEWS)
		return -EINVAL;
	for (int i = 0; i < ST_LOOP_SUBSCRIBERS; i++)
		if (!l->news[kind][i].fn) {
			l->news[kind][i] = (struct st_loop_call){ fn, arg };
			return 0;
		}
	return -ENOSPC;
}

void st_loop_news(struct st_loop *l, unsigned kind)
{
	for (int i = 0; kind < ST_LOOP_NEWS && i < ST_LOOP_SUBSCRIBERS && l->news[kind][i].fn; i++)
		l->news[kind][i].fn(l, l->news[kind][i].arg);
}

/* Runs the deferred calls, those they defer in turn included. */
static void run_deferred(struct st_loop *l)
{
	for (uint32_t i = 0; i < l->ndeferred; i++) {
		struct st_loop_call c = l->deferred[i];

		c.fn(l, c.arg);
	}
	l->ndeferred = 0;
}

static void call(struct st_loop *l, struct epoll_event *ev)
{
	struct st_watch *w = ev->data.ptr;

	/* (removed earlier in this turn: its memory is still there) */
	if (w->fn)
		w->fn(l, w->arg, ev->events);
}

int st_loop_turn(struct st_loop *l, int timeout, bool until_stop)
{
	struct epoll_event ev[EVENTS_PER_TURN];
	int n;

	/* (news deferred outside a turn goes first) */
	run_deferred(l);
	n = epoll_wait(l->epfd, ev, EVENTS_PER_TURN, timeout);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		struct st_watch *w = ev[i].data.ptr;

		if (w->urgent) {
			call(l, &ev[i]);
			ev[i].events = 0;
		}
	}
	for (int i = 0; i < n && !(until_stop && l->stop); i++)
		if (ev[i].events)
			call(l, &ev[i]);
	run_deferred(l);
	for (uint32_t i = 0; i < l->ncollectors; i++)
		l->collectors[i].fn(l, l->collectors[i].arg);
	return 0;
}

int st_loop_run(struct st_loop *l)
{
	while (!l->stop) {
		int ret = st_loop_turn(l, -1, true);

		if (ret < 0)
			return ret;
	}
	return 0;
}

void st_loop_stop(struct st_loop *l)
{
	l->stop = true;
}

bool st_loop_urgent(const struct st_loop *l)
{
	for (const struct st_watch *w = l->urgent; w; w = w->next_urgent) {
		struct pollfd p = { w->fd, POLLIN, 0 };

		if (poll(&p, 1, 0) == 1)
			return true;
	}
	return false;
}
