/*
 * Dynamic probes in running processes, the daemon's part: the request
 * goes to a probe inspector of the target's owner (ctl/inspect/dynprobe.c
 * does the ptrace work, the library in the process the planning), and
 * its answer goes back to the command. The loop goes on serving
 * meanwhile: the probe's tracepoint registers while it is planted, and
 * the session's rule (added first by enable) switches it on.
 *
 * Who may: as load-probe (probe.c): the requester sees only processes it
 * may ptrace, and the inspector has the owner's credentials.
 *
 * What is remembered: the last answer for each probe of each process
 * (planted, how; removed; refused, why), for status and list, as long as
 * the process lives (a table of MAX_KNOWN, the oldest of ended processes
 * forgotten first).
 *
 * Owns: the table of probe answers.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, cmd, objects.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/abi.h"
#include "ctl/common/control.h"
#include "ctl/common/escape.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/fdsafe.h"
#include "ctl/daemon/cmd/control.h"
#include "ctl/daemon/cmd/dynprobe.h"
#include "ctl/daemon/cmd/requester.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/inspect.h"
#include "ctl/daemon/objects/maps.h"
#include "dynprobe/ctl.h"
#include "ctl/daemon/wire/inspect_msg.h"
#include "ctl/daemon/wire/request.h"

/* More than the inspector's own three seconds for each of its steps. */
#define DYNPROBE_DEADLINE_MS 15000
#define MAX_KNOWN 1024
#define HOW_MAX 480

struct known {
	bool used;
	uint64_t instance; /* the process's */
	pid_t pid;
	char name[ST_ABI_NAME_MAX];
	bool planted;
	char how[HOW_MAX];
};

static struct known known[MAX_KNOWN];
static uint32_t next_victim;

/* A probe request under way. */
struct pending {
	struct st_request req;
	uint64_t instance;
	pid_t pid;
	bool add;
	uint64_t ts; /* when it was asked, in the trace's clock */
	char name[ST_ABI_NAME_MAX];
};

static struct st_proc *proc_of(struct st_daemon *d, uint64_t instance)
{
	for (struct st_proc *p = d->procs; p; p = p->next)
		if (p->instance == instance && !p->conn.ended)
			return p;
	return NULL;
}

static struct known *find(uint64_t instance, const char *name)
{
	for (uint32_t i = 0; i < MAX_KNOWN; i++)
		if (known[i].used && known[i].instance == instance && strcmp(known[i].name, name) == 0)
			return &known[i];
	return NULL;
}

/* The entry for (instance, name): found, free, or an ended process's. */
static struct known *slot_for(struct st_daemon *d, uint64_t instance, const char *name)
{
	struct known *k = find(instance, name);

	for (uint32_t i = 0; !k && i < MAX_KNOWN; i++)
		if (!known[i].used || !proc_of(d, known[i].instance))
			k = &known[i];
	if (!k) /* every entry a live process's: the oldest goes */
		k = &known[next_victim++ % MAX_KNOWN];
	return k;
}

static void remember(struct st_daemon *d, const struct pending *pp, bool ok, const char *text)
{
	struct known *k = find(pp->instance, pp->name);

	if (!ok && !pp->add && k)
		return; /* a removal refused leaves the probe as it was */
	k = k ? k : slot_for(d, pp->instance, pp->name);
	k->used = true;
	k->instance = pp->instance;
	k->pid = pp->pid;
	snprintf(k->name, sizeof(k->name), "%s", pp->name);
	k->planted = ok && pp->add;
	if (ok && !pp->add)
		snprintf(k->how, sizeof(k->how), "removed: the original bytes are back");
	else
		snprintf(k->how, sizeof(k->how), "%s%.400s", ok ? "" : "refused: ", text);
}

static void on_reply(struct st_daemon *d, void *ctx, const struct st_insp_reply *r, int fd)
{
	struct pending *pp = ctx;
	struct st_request *req = &pp->req;
	const char *V = pp->add ? "shimtrace enable" : "shimtrace disable";
	int status;

	st_fd_drop(fd, req->uid);
	if (r && r->type != ST_INSP_DONE)
		return;
	if (!r) {
		status = st_reply_error(req, ST_EXIT_FAIL, "%s: no answer from the inspector (it "
							   "failed, or the probe is still being planted)", V);
	} else if (r->done.status == ST_EXIT_OK) {
		size_t n = strlen(r->done.text), k = strlen(DP_LOADED_NOTE);
		struct st_proc *p = proc_of(d, pp->instance);

		/* the library came by the inspector's dlopen, not the process's:
		 * its objects are read again, as after load-probe */
		if (p && n >= k && strcmp(r->done.text + n - k, DP_LOADED_NOTE) == 0)
			st_statedump(d, p, ST_MAPS_DLOPEN, pp->ts);
		remember(d, pp, true, r->done.text);
		st_reply(req, "%s\n", pp->add ? r->done.text : "probe removed: the original bytes are back");
		status = ST_EXIT_OK;
	} else {
		remember(d, pp, false, r->done.text);
		status = st_reply_error(req, ST_EXIT_FAIL, "%s: process %d: %.900s", V, (int)pp->pid,
					r->done.text);
	}
	st_request_finish(req, status);
	free(pp);
}

int st_cmd_dynprobe(struct st_daemon *d, struct st_request *r, struct st_proc *p,
		    const char *name, const char *kind, const char *spec, const char *library)
{
	const char *V = kind ? "shimtrace enable" : "shimtrace disable";
	struct {
		struct st_insp_target t;
		char text[ST_INSP_PATH_MAX + 600];
	} m;
	struct pending *pp;
	struct st_owner owner;
	size_t lib_len = strlen(library) + 1;
	int cmd_len, ret;

	if (lib_len > ST_INSP_PATH_MAX || library[0] != '/')
		return st_reply_error(r, ST_EXIT_USAGE, "%s: bad probe library path", V);
	if (p->pidfd < 0)
		return st_reply_error(r, ST_EXIT_FAIL, "%s: process %d is gone", V, p->pid);
	memcpy(m.text, library, lib_len);
	cmd_len = kind ? snprintf(m.text + lib_len, sizeof(m.text) - lib_len, "add %s %s %s", kind,
				  name, spec)
		       : snprintf(m.text + lib_len, sizeof(m.text) - lib_len, "remove %s", name);
	if (cmd_len < 0 || (size_t)cmd_len + 1 > sizeof(m.text) - lib_len || cmd_len >= 500)
		return st_reply_error(r, ST_EXIT_USAGE, "%s: probe specification too long", V);
	pp = calloc(1, sizeof(*pp));
	if (!pp)
		return st_reply_error(r, ST_EXIT_FAIL, "%s: out of memory", V);
	pp->instance = p->instance;
	pp->pid = p->pid;
	pp->add = kind != NULL;
	pp->ts = st_clock_now(&d->clock);
	snprintf(pp->name, sizeof(pp->name), "%s", name);
	/* the request outlives this call: its descriptor, peer and output so
	 * far go with it */
	pp->req = *r;
	pp->req.nitems = 0;
	pp->req.verb = NULL;
	r->out = NULL;
	r->out_len = r->out_cap = 0;
	memset(&m.t, 0, sizeof(m.t));
	m.t.hdr.type = ST_INSP_DYNPROBE;
	m.t.hdr.len = (uint32_t)(sizeof(m.t) + lib_len + (size_t)cmd_len + 1);
	m.t.pid = p->pid;
	m.t.uid = p->uid;
	m.t.gid = p->gid;
	st_owner_of(&m.t, p->pidfd, &owner);
	ret = st_insp_request(d, &owner, ST_INSP_ROLE_PROBE, &m, m.t.hdr.len, p->pidfd,
			      DYNPROBE_DEADLINE_MS, on_reply, pp);
	if (ret < 0) {
		*r = pp->req; /* (its output back) */
		r->verb = V + 10;
		free(pp);
		return st_reply_error(r, ST_EXIT_FAIL, "%s: cannot start an inspector: %s", V,
				      strerror(-ret));
	}
	return ST_CTL_DEFERRED;
}

bool st_dynprobe_planted(const struct st_proc *p, const char *name)
{
	const struct known *k = find(p->instance, name);

	return k && k->planted;
}

const char *st_dynprobe_how(const struct st_proc *p, const char *name)
{
	const struct known *k = find(p->instance, name);

	return k ? k->how : NULL;
}

void st_dynprobe_status(struct st_daemon *d, struct st_request *r)
{
	bool any = false;

	for (uint32_t i = 0; i < MAX_KNOWN; i++) {
		const struct known *k = &known[i];
		struct st_proc *p = k->used ? proc_of(d, k->instance) : NULL;
		char how[ST_ESC_SIZE(HOW_MAX)];

		if (!p || !st_requester_sees_proc(r, p))
			continue;
		if (!any)
			st_reply(r, "dynamic probes:\n");
		any = true;
		st_reply(r, "  pid %d probe:%s %s\n", (int)k->pid, k->name,
			 st_esc(how, sizeof(how), k->how));
	}
}
