/*
 * load-probe, the daemon's part: the request goes to a probe inspector of
 * the target's owner (ctl/inspect/probe.c does the ptrace work), and its
 * answer goes back to the command. The daemon's loop goes on serving
 * meanwhile: the library's providers register while its dlopen runs.
 *
 * Who may: the requester must be able to ptrace the target itself (root,
 * or the target's own user: commands.c shows a user only their processes),
 * and the inspector, with the owner's credentials and no capability
 * (CAP_SYS_PTRACE for root's processes; none at all for a process of
 * another user namespace: st_owner_of()), is refused by the kernel if the
 * target changed credentials since it registered (a setuid program it
 * ran) or is not dumpable.
 *
 * The library is opened by the inspector's call into the loader, not
 * through the process's dlopen (whose wrapper would say its mappings
 * changed): once the load succeeded, the daemon reads the process's
 * objects as for a dlopen, and the library's load event is dated when the
 * request was made, before its constructors ran and wrote their events.
 *
 * Owns: nothing kept: a load-probe request is its inspector's and its
 *       client's.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, cmd, objects.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/common/control.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/fdsafe.h"
#include "ctl/daemon/cmd/control.h"
#include "ctl/daemon/cmd/probe.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/inspect.h"
#include "ctl/daemon/objects/maps.h"
#include "ctl/daemon/wire/inspect_msg.h"
#include "ctl/daemon/wire/request.h"

/* More than the inspector's own three seconds to find a safe point. */
#define PROBE_DEADLINE_MS 10000

/* A load under way: the command's request, and for whom. */
struct probe_load {
	struct st_request req;
	uint64_t instance; /* the process's */
	uint64_t ts;	   /* when it was asked, in the trace's clock */
};

/* The process the load was for, if it is still there. */
static struct st_proc *target(struct st_daemon *d, const struct probe_load *pl)
{
	for (struct st_proc *p = d->procs; p; p = p->next)
		if (p->instance == pl->instance && !p->conn.ended)
			return p;
	return NULL;
}

static void on_reply(struct st_daemon *d, void *ctx, const struct st_insp_reply *r, int fd)
{
	struct probe_load *pl = ctx;
	struct st_request *req = &pl->req;
	struct st_proc *p;
	int status;

	st_fd_drop(fd, req->uid);
	if (r && r->type != ST_INSP_DONE)
		return;
	if (r && r->done.status == ST_EXIT_OK && (p = target(d, pl)))
		st_statedump(d, p, ST_MAPS_DLOPEN, pl->ts);
	if (!r)
		status = st_reply_error(req, ST_EXIT_FAIL, "shimtrace load-probe: no answer from the "
							   "inspector (it failed, or the load goes on)");
	else if (r->done.status == ST_EXIT_OK)
		status = (st_reply(req, "%s", r->done.text), ST_EXIT_OK);
	else
		status = st_reply_error(req, ST_EXIT_FAIL, "shimtrace load-probe: %.900s",
					r->done.text);
	st_request_finish(req, status);
	free(pl);
}

int st_cmd_load_probe(struct st_daemon *d, struct st_request *r, struct st_proc *p,
		      const char *library)
{
	const char *V = "shimtrace load-probe";
	size_t n = strlen(library) + 1;
	struct {
		struct st_insp_target t;
		char lib[ST_INSP_PATH_MAX];
	} m;
	struct probe_load *pl;
	struct st_request *req;
	struct st_owner owner;
	int ret;

	if (n > sizeof(m.lib) || sizeof(m.t) + n > ST_INSP_MSG_MAX)
		return st_reply_error(r, ST_EXIT_USAGE, "%s: library path too long", V);
	if (p->pidfd < 0)
		return st_reply_error(r, ST_EXIT_FAIL, "%s: process %d is gone", V, p->pid);
	pl = malloc(sizeof(*pl));
	if (!pl)
		return st_reply_error(r, ST_EXIT_FAIL, "%s: out of memory", V);
	pl->instance = p->instance;
	pl->ts = st_clock_now(&d->clock);
	req = &pl->req;
	/* the request outlives this call: keep its descriptor and peer only */
	*req = *r;
	req->nitems = 0;
	req->verb = NULL;
	req->out = NULL;
	req->out_len = req->out_cap = 0;
	memset(&m.t, 0, sizeof(m.t));
	m.t.hdr.type = ST_INSP_PROBE;
	m.t.hdr.len = (uint32_t)(sizeof(m.t) + n);
	m.t.pid = p->pid;
	m.t.uid = p->uid;
	m.t.gid = p->gid;
	memcpy(m.lib, library, n);
	st_owner_of(&m.t, p->pidfd, &owner);
	ret = st_insp_request(d, &owner, ST_INSP_ROLE_PROBE, &m, m.t.hdr.len, p->pidfd,
			      PROBE_DEADLINE_MS, on_reply, pl);
	if (ret < 0) {
		free(pl);
		return st_reply_error(r, ST_EXIT_FAIL, "%s: cannot start an inspector: %s", V,
				      strerror(-ret));
	}
	return ST_CTL_DEFERRED;
}
