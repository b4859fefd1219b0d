/*
 * The daemon's event loop: a reactor of descriptor watches, periodic
 * timers and deferred calls, with callbacks. It knows no subsystem: each
 * module watches its own descriptors, and the wiring (daemon.c) registers
 * the timers.
 *
 * One thread runs it (the daemon's main thread); nothing here is called
 * from another. A turn waits for what is ready, calls the callbacks of the
 * urgent watches first (control requests: a busy process must not delay
 * `stop`), then the others, then the deferred calls, then the collectors
 * (what frees objects whose watches may still have had events in the turn).
 *
 * A watch is memory of its owner's (struct st_watch inside the object it
 * watches for): removed with st_watch_del, its callback is not called again,
 * but the memory must stay valid until the end of the turn, when events of
 * it may still be in the turn's list. Owners free such objects from a
 * collector.
 */
#ifndef ST_DAEMON_REACTOR_H
#define ST_DAEMON_REACTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct st_loop;

/* Called with the epoll events that came (EPOLLIN, EPOLLOUT, EPOLLHUP...). */
typedef void (*st_watch_fn)(struct st_loop *l, void *arg, uint32_t events);
typedef void (*st_loop_fn)(struct st_loop *l, void *arg);
/* n: the periods elapsed since the last call (more than 1 when late). */
typedef void (*st_timer_fn)(struct st_loop *l, void *arg, uint64_t n);

struct st_watch {
	struct st_watch *next_urgent; /* the loop's list of urgent watches */
	st_watch_fn fn;		      /* NULL: not watched (any more) */
	void *arg;
	int fd;
	bool urgent;
};

#define ST_LOOP_TIMERS 8
#define ST_LOOP_COLLECTORS 8
#define ST_LOOP_NEWS 8	     /* kinds of news (the daemon names them) */
#define ST_LOOP_SUBSCRIBERS 4 /* of one kind */

struct st_loop_timer {
	int fd;
	st_timer_fn fn;
	void *arg;
	struct st_watch watch;
};

struct st_loop_call {
	st_loop_fn fn;
	void *arg;
};

struct st_loop {
	int epfd;
	bool stop;		       /* st_loop_stop: st_loop_run returns */
	struct st_watch *urgent;       /* urgent watches, for st_loop_urgent */
	struct st_loop_timer timers[ST_LOOP_TIMERS];
	uint32_t ntimers;
	struct st_loop_call collectors[ST_LOOP_COLLECTORS];
	uint32_t ncollectors;
	struct st_loop_call *deferred; /* run at the end of the turn */
	uint32_t ndeferred, deferred_cap;
	struct st_loop_call news[ST_LOOP_NEWS][ST_LOOP_SUBSCRIBERS];
};

/* 0, or a negative errno. */
int st_loop_init(struct st_loop *l);
void st_loop_fini(struct st_loop *l);

/* Watches fd for events (EPOLLIN, EPOLLOUT): fn(l, arg, events) when
 * ready. An urgent watch is served first in each turn. 0 or -errno. */
int st_watch_add(struct st_loop *l, struct st_watch *w, int fd, uint32_t events, st_watch_fn fn,
		 void *arg, bool urgent);
/* Changes what w is watched for. */
int st_watch_mod(struct st_loop *l, struct st_watch *w, uint32_t events);
/* Stops watching (see the top about its memory). Harmless if not watched. */
void st_watch_del(struct st_loop *l, struct st_watch *w);
/* Whether w is watched. */
static inline bool st_watch_on(const struct st_watch *w)
{
	return w->fn != NULL;
}

/* Calls fn(l, arg, n) every ms milliseconds (a timer of its own; late
 * periods are not caught up: one call says how many). 0 or -errno. */
int st_loop_every(struct st_loop *l, uint32_t ms, st_timer_fn fn, void *arg);
/* Calls fn(l, arg) at the end of each turn (freeing what a turn may still
 * have had events of). 0 or -errno. */
int st_loop_collector(struct st_loop *l, st_loop_fn fn, void *arg);
/* Calls fn(l, arg) once, at the end of this turn (or of the next, if no
 * turn runs): news for a module above the caller's. 0 or -ENOMEM. */
int st_loop_defer(struct st_loop *l, st_loop_fn fn, void *arg);

/*
 * News: a module tells what happened (kind: a number below ST_LOOP_NEWS,
 * which the daemon names) to whoever subscribed, without knowing them: a
 * module below tells the modules above. Subscribers are called at once,
 * in the order they subscribed.
 */
int st_loop_subscribe(struct st_loop *l, unsigned kind, st_loop_fn fn, void *arg);
void st_loop_news(struct st_loop *l, unsigned kind);

/* One turn: waits up to timeout ms (-1: for ever) for what is ready and
 * handles it; with until_stop, what is left once st_loop_stop was called
 * waits. 0 or -errno. */
int st_loop_turn(struct st_loop *l, int timeout, bool until_stop);
/* Turns until st_loop_stop. 0 or -errno. */
int st_loop_run(struct st_loop *l);
void st_loop_stop(struct st_loop *l);
/* Whether an urgent watch is ready now (without waiting): a long piece of
 * work yields to it. */
bool st_loop_urgent(const struct st_loop *l);

#endif
