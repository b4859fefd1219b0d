/*
 * record --pid: record's private daemon attached to processes that were
 * started without the preload, until they exit or record is interrupted,
 * then detached from those still running.
 *
 * The daemon's attach (ctl/daemon/cmd/attach.c) loads the tracer into
 * each process through an inspector of its owner and redirects its calls;
 * the process registers with this daemon as it loads, and record's
 * session traces it from then on. Every process must attach, or none
 * stays attached: record then says why (one line), detaches those that
 * did, and fails. At the end each process still running is detached: its
 * calls are sent back where they went before (a call in flight in a
 * wrapper finishes there; the tracer's code stays loaded), and it runs on
 * untraced. record's exit status is 0 then: the processes are not its
 * children and their own exit statuses are not its to give.
 *
 * The daemon stays record's own: run by a user, it attaches that user's
 * processes only (the daemon refuses others: it could not act as their
 * owner); run by root, other users' processes reach it (admit_owners).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctl/cli/record_attach.h"
#include "ctl/common/cli.h"
#include "ctl/common/control.h"
#include "ctl/daemon/cmd/attach.h"
#include "ctl/daemon/daemon.h"
#include "ctl/daemon/loop/reactor.h"

static const char *V = "record";

/* A process attached to: its state in the run. */
struct target {
	pid_t pid;
	int pidfd;
	struct st_watch watch; /* its exit */
	bool attached, gone;
	struct st_record_targets *all;
};

struct st_record_targets {
	struct st_daemon *d;
	struct target *t;
	int n;
	uint32_t pending; /* answers awaited */
	uint32_t running; /* attached and not gone */
	bool quiet;
};

/* An attach or a detach answered: the process's line, or why not. */
static void on_answer(struct st_daemon *d, void *ctx, pid_t pid, int status, uint32_t count,
		      const char *text)
{
	struct target *t = ctx;

	(void)d;
	(void)pid;
	(void)count;
	t->all->pending--;
	if (status != ST_EXIT_OK) {
		st_err(V, "%s", text);
		return;
	}
	t->attached = !t->attached;
	if (!t->all->quiet)
		fprintf(stderr, "shimtrace record: %s\n", text);
}

/* Sends every request of one kind (attach, or detach those attached),
 * then turns the loop until all are answered. */
static int ask_all(struct st_daemon *d, struct st_record_targets *all, bool detach,
		   const char *rundir, const struct st_attach_what *w)
{
	struct st_attach_what core = { .libs = &w->libs[1], .nlibs = 1 };
	int failed = 0;

	for (int i = 0; i < all->n; i++) {
		struct target *t = &all->t[i];
		char why[512];

		if (detach && (!t->attached || t->gone))
			continue;
		if (st_attach_start(d, d->uid, t->pid, detach, rundir, detach ? &core : w, on_answer,
				    t, why, sizeof(why)) < 0) {
			st_err(V, "cannot %s process %d: %s", detach ? "detach from" : "attach to",
			       t->pid, why);
			failed++;
			continue;
		}
		all->pending++;
	}
	while (all->pending && st_loop_turn(&d->loop, 100, false) >= 0)
		;
	for (int i = 0; i < all->n; i++)
		if (!all->t[i].attached && !detach)
			failed++;
	return failed ? -1 : 0;
}

static void on_exit_of(struct st_loop *l, void *arg, uint32_t events)
{
	struct target *t = arg;

	(void)events;
	st_watch_del(l, &t->watch);
	t->gone = true;
	if (t->attached && --t->all->running == 0)
		st_daemon_quit(t->all->d);
}

/*
 * The processes register with this daemon as they are attached: those of
 * other users (record runs as root) must reach its socket, in record's
 * private directory (0700). The directory is then opened to be searched
 * (its name is random and cannot be listed), the socket to be connected
 * to, and the daemon admits the processes of those users only, besides
 * root's (procconn.c).
 */
static void admit_owners(struct st_daemon *d, const char *rundir, const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		char path[64];
		struct stat st;
		uint32_t k = 0;

		snprintf(path, sizeof(path), "/proc/%d", pids[i]);
		if (stat(path, &st) < 0 || st.st_uid == d->uid)
			continue;
		while (k < d->nadmit && d->admit[k] != st.st_uid)
			k++;
		if (k == d->nadmit && k < ST_ADMIT_MAX)
			d->admit[d->nadmit++] = st.st_uid;
	}
	if (d->nadmit) {
		chmod(rundir, 0711);
		chmod(d->sock_path, 0666);
	}
}

int st_record_attach(struct st_daemon *d, const char *rundir, const struct st_attach_what *w,
		     const pid_t *pids, int n, bool quiet)
{
	struct st_record_targets all = { d, calloc((size_t)n, sizeof(struct target)), n, 0, 0, quiet };
	int ret = 0;

	if (!all.t) {
		st_err(V, "out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++)
		all.t[i] = (struct target){ .pid = pids[i], .pidfd = -1, .all = &all };
	/* a signal (Ctrl-C) ends the recording, as the last process's exit
	 * does; one that comes while attaching, once the attaches are done */
	d->end_on_signal = true;
	if (d->uid == 0)
		admit_owners(d, rundir, pids, n);
	if (ask_all(d, &all, false, rundir, w) < 0) {
		ret = -1;
		goto detach;
	}
	for (int i = 0; i < n; i++) {
		struct target *t = &all.t[i];

		t->pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0);
		if (t->pidfd < 0 ||
		    st_watch_add(&d->loop, &t->watch, t->pidfd, EPOLLIN, on_exit_of, t, false) < 0) {
			t->gone = true; /* (gone already) */
			continue;
		}
		all.running++;
	}
	if (all.running)
		st_daemon_run(d);
detach:
	ask_all(d, &all, true, rundir, w);
	for (int i = 0; i < n; i++) {
		if (all.t[i].pidfd < 0)
			continue;
		if (!all.t[i].gone)
			st_watch_del(&d->loop, &all.t[i].watch);
		close(all.t[i].pidfd);
	}
	free(all.t);
	return ret;
}
