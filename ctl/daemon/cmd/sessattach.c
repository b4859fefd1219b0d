/*
 * Sessions that attach (create or start --attach): the processes their
 * --pid rules name that were started without the preload, and so never
 * registered, are attached (cmd/attach.c: the tracer loaded into them by
 * an inspector of their owner, their bound calls sent to the wrappers),
 * when the rule is made (enable) or when the session starts with
 * --attach; they then register with this daemon, whose sessions' rules
 * apply to them as to any other process. A process is detached when the
 * last started session that attached it stops or is destroyed, and when
 * the daemon ends: its calls go back where they went, and it runs on
 * untraced.
 *
 * The families loaded: those --wrap names, else those whose tracepoints
 * the session's patterns match (pthread:* loads the pthread family). The
 * JVM's (ctl/common/attachlibs.h), an agent loaded through the JVM's
 * attach mechanism after the rest, when --wrap names it or a pattern
 * names its provider (jvm:...), never for all nor for a pattern such as
 * '*': a process that is not a JVM is refused it.
 * For whom: the requester (root, or the process's owner: cmd/attach.c
 * refuses another user's process, a setuid program, one that is not
 * dumpable). The command is answered once every process has been, a line
 * each (stdout: attached; stderr: why not, exit status 1).
 *
 * Owns: the processes attached (pid, pidfd, the sessions that attached
 *       them) and the commands waiting for their attaches.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, cmd, loop.
 */
#include <errno.h>
#include <fnmatch.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctl/common/attachlibs.h"
#include "ctl/common/catalog.h"
#include "ctl/common/control.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/cmd/attach.h"
#include "ctl/daemon/cmd/control.h"
#include "ctl/daemon/cmd/sessattach.h"
#include "ctl/daemon/loop/reactor.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/session.h"

#define MAX_FAMILIES 16
#define FINI_WAIT_MS 5000

/* A process attached, and the sessions (by generation) that attached it;
 * none: detached since (it stays registered), kept while it runs, so that
 * a session naming it again attaches it again. */
struct attached {
	struct attached *next;
	pid_t pid;
	int pidfd;
	uint32_t gens[ST_ABI_MAX_SESSIONS];
	uint32_t ngens;
};

/* A command waiting for its attaches. */
struct waiting {
	struct st_request req;
	char verb[16];
	uint32_t gen; /* of the session */
	uint32_t left;
	int status;
};

/* One attach of a command. */
struct one {
	struct waiting *w;
	pid_t pid;
};

static struct attached *list;
static uint32_t detaching; /* detaches not answered yet */

static struct attached *find(pid_t pid)
{
	for (struct attached *a = list; a; a = a->next)
		if (a->pid == pid)
			return a;
	return NULL;
}

static bool gone(const struct attached *a)
{
	struct pollfd pf = { a->pidfd, POLLIN, 0 };

	return a->pidfd < 0 || poll(&pf, 1, 0) != 0;
}

/* The process with that pid registered with the daemon (its tracer
 * connected, or found running), or NULL. */
static const struct st_proc *registered(const struct st_daemon *d, pid_t pid)
{
	for (const struct st_proc *p = d->procs; p; p = p->next)
		if (p->pid == pid && !p->conn.ended)
			return p;
	return NULL;
}

/* What a registered process says of its tracer (its word only: at worst
 * it gets attached, or not, as its owner could have it anyway); not known
 * yet (its status memory not mapped yet: found running a moment ago),
 * detached: an attach costs nothing where the preload interposes already. */
static uint32_t attach_state(const struct st_proc *p)
{
	return p->control ? __atomic_load_n(&p->control->attach_state, __ATOMIC_ACQUIRE)
			  : ST_ABI_DETACHED;
}

/* Remembers that session gen attached pid. */
static void remember(pid_t pid, uint32_t gen)
{
	struct attached *a = find(pid);

	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return; /* (not detached at the end then: logged by no one) */
		a->pid = pid;
		a->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		a->next = list;
		list = a;
	}
	for (uint32_t i = 0; i < a->ngens; i++)
		if (a->gens[i] == gen)
			return;
	if (a->ngens < ST_ABI_MAX_SESSIONS)
		a->gens[a->ngens++] = gen;
}

/* One attach of w answered (or not sent): w is answered after the last. */
static void one_done(struct waiting *w)
{
	if (--w->left)
		return;
	st_request_finish(&w->req, w->status);
	free(w);
}

static void on_attached(struct st_daemon *d, void *ctx, pid_t pid, int status, uint32_t count,
			const char *text)
{
	struct one *o = ctx;
	struct waiting *w = o->w;

	(void)d;
	(void)count;
	if (status == ST_EXIT_OK) {
		remember(pid, w->gen);
		st_reply(&w->req, "%s\n", text);
	} else {
		w->status = st_reply_error(&w->req, ST_EXIT_FAIL, "shimtrace %s: %s", w->verb, text);
	}
	free(o);
	one_done(w);
}

/* Whether the comma-separated list wrap names name. */
static bool listed(const char *wrap, const char *name)
{
	size_t len = strlen(name);
	const char *p = strstr(wrap, name);

	return p && (p == wrap || p[-1] == ',') && (p[len] == ',' || !p[len]);
}

/* The families of wrap ("all", or a comma-separated list), or of the
 * patterns, and whether the JVM's is one; -1 with why for a family the
 * catalog does not know. */
static int families_of(const char *wrap, const char *const *patterns, uint32_t np,
		       const char **fam, uint32_t *n, bool *jvm, char *why, size_t whylen)
{
	*n = 0;
	*jvm = wrap && listed(wrap, ST_JVM_FAMILY);
	for (uint32_t j = 0; !wrap && j < np; j++)
		*jvm |= strncmp(patterns[j], ST_JVM_FAMILY ":", strlen(ST_JVM_FAMILY ":")) == 0;
	for (unsigned k = 0; k < st_catalog_count; k++) {
		const char *prov = st_catalog[k].provider;
		bool want = false;
		uint32_t i = 0;

		/* (an agent is loaded by its runtime at start: not attached) */
		if (st_catalog[k].agent)
			continue;
		while (i < *n && strcmp(fam[i], prov) != 0)
			i++;
		if (i < *n)
			continue;
		if (wrap)
			want = strcmp(wrap, "all") == 0 || listed(wrap, prov);
		for (uint32_t j = 0; !wrap && j < np && !want; j++)
			want = st_catalog_match(&st_catalog[k], patterns[j]);
		if (want && *n < MAX_FAMILIES)
			fam[(*n)++] = prov;
	}
	if (wrap && strcmp(wrap, "all") != 0) {
		/* every name of the list is a family */
		for (const char *p = wrap; *p;) {
			size_t len = strcspn(p, ",");
			uint32_t i = 0;

			while (i < *n && (strlen(fam[i]) != len || strncmp(fam[i], p, len) != 0))
				i++;
			if (i == *n && (len != strlen(ST_JVM_FAMILY) || strncmp(p, ST_JVM_FAMILY, len))) {
				snprintf(why, whylen, "--wrap: no family '%.*s'", (int)len, p);
				return -1;
			}
			p += len + (p[len] == ',');
		}
	}
	if (*n == 0 && !*jvm) {
		snprintf(why, whylen, "no family to load: the patterns match no wrapper's tracepoint "
				      "(--wrap names them)");
		return -1;
	}
	return 0;
}

int st_sessattach(struct st_daemon *d, struct st_request *r, struct st_session *ses,
		  const pid_t *pids, uint32_t n, const char *const *patterns, uint32_t np,
		  const char *wrap, int status)
{
	static struct st_attach_libs libs;
	struct st_attach_what what;
	const char *fam[MAX_FAMILIES];
	struct waiting *w;
	uint32_t nfam;
	bool jvm;
	char why[PATH_MAX + 128], agent[PATH_MAX];

	pid_t todo[ST_REQ_MAX_ITEMS];
	uint32_t k = 0;

	/* attached already (by this daemon, or by one before it that did
	 * not detach it): by this session too, now; never registered, or
	 * its tracer loaded by an attach that was undone: attached;
	 * registered with its own preload: nothing to do */
	for (uint32_t i = 0; i < n && k < ST_REQ_MAX_ITEMS; i++) {
		const struct attached *a = find(pids[i]);
		const struct st_proc *p = registered(d, pids[i]);

		if ((a && a->ngens) || (p && attach_state(p) == ST_ABI_ATTACHED))
			remember(pids[i], ses->generation);
		else if (!p || attach_state(p) == ST_ABI_DETACHED)
			todo[k++] = pids[i];
	}
	pids = todo;
	n = k;
	if (!n)
		return status;
	if (!d->libdir_core[0])
		return st_reply_error(r, ST_EXIT_FAIL, "shimtrace %s: this daemon cannot attach (it "
						       "does not know where its libraries are)",
				      r->verb);
	if (families_of(wrap, patterns, np, fam, &nfam, &jvm, why, sizeof(why)) < 0)
		return st_reply_error(r, ST_EXIT_USAGE, "shimtrace %s: %s", r->verb, why);
	if (st_attach_libs(d->libdir_core, d->libdir_wrappers, fam, nfam, &libs, why,
			   sizeof(why)) < 0 ||
	    (jvm && st_jvm_agent(d->libdir_wrappers, agent, why, sizeof(why)) < 0))
		return st_reply_error(r, ST_EXIT_FAIL, "shimtrace %s: %s", r->verb, why);
	w = calloc(1, sizeof(*w));
	if (!w)
		return st_reply_error(r, ST_EXIT_FAIL, "shimtrace %s: out of memory", r->verb);
	/* the request outlives this call: its descriptor, peer and output */
	w->req = *r;
	w->req.nitems = 0;
	w->req.verb = NULL;
	r->out = NULL;
	r->out_len = r->out_cap = 0;
	snprintf(w->verb, sizeof(w->verb), "%s", r->verb);
	w->gen = ses->generation;
	w->status = status;
	w->left = 1; /* (until every one is sent) */
	what = (struct st_attach_what){ .libs = libs.p,
					.nlibs = libs.n,
					.jvm_agent = jvm ? agent : NULL,
					.jvm_options = "" };
	for (uint32_t i = 0; i < n; i++) {
		struct one *o = malloc(sizeof(*o));

		if (o)
			*o = (struct one){ w, pids[i] };
		if (!o || st_attach_start(d, r->uid, pids[i], false, d->rundir, &what, on_attached,
					  o, why, sizeof(why)) < 0) {
			w->status = st_reply_error(&w->req, ST_EXIT_FAIL, "shimtrace %s: %s", w->verb,
						   o ? why : "out of memory");
			free(o);
			continue;
		}
		w->left++;
	}
	one_done(w);
	return ST_CTL_DEFERRED;
}

static void on_detached(struct st_daemon *d, void *ctx, pid_t pid, int status, uint32_t count,
			const char *text)
{
	(void)d;
	(void)ctx;
	(void)count;
	detaching--;
	if (status == ST_EXIT_OK)
		st_log(ST_LOG_INFO, "%s", text);
	else
		st_log(ST_LOG_WARN, "cannot detach from process %d: %s", (int)pid, text);
}

/* Detaches a (unless it is gone). */
static void detach(struct st_daemon *d, struct attached *a)
{
	char core[ST_PATH_MAX + 32], why[512];
	const char *lib = core;
	struct st_attach_what what = { .libs = &lib, .nlibs = 1 };

	snprintf(core, sizeof(core), "%s/libshimtrace.so", d->libdir_core);
	if (!gone(a)) {
		/* (as root: the process's owner may have changed since, which
		 * the inspector's checks see) */
		if (st_attach_start(d, 0, a->pid, true, d->rundir, &what, on_detached, NULL, why,
				    sizeof(why)) == 0)
			detaching++;
		else
			st_log(ST_LOG_WARN, "cannot detach from process %d: %s", (int)a->pid, why);
	}
}

static void forget(struct attached *a)
{
	if (a->pidfd >= 0)
		close(a->pidfd);
	free(a);
}

void st_sessattach_stopped(struct st_daemon *d, const struct st_session *ses)
{
	for (struct attached **pa = &list; *pa;) {
		struct attached *a = *pa;
		uint32_t had = a->ngens;

		for (uint32_t i = 0; i < a->ngens; i++)
			if (a->gens[i] == ses->generation)
				a->gens[i--] = a->gens[--a->ngens];
		if (had && !a->ngens)
			detach(d, a);
		if (gone(a)) {
			*pa = a->next;
			forget(a);
			continue;
		}
		pa = &a->next;
	}
}

void st_sessattach_fini(struct st_daemon *d)
{
	uint64_t end = st_now_ms() + FINI_WAIT_MS;

	while (list) {
		struct attached *a = list;

		list = a->next;
		if (a->ngens)
			detach(d, a);
		forget(a);
	}
	while (detaching && st_now_ms() < end && st_loop_turn(&d->loop, 100, false) >= 0)
		;
}
