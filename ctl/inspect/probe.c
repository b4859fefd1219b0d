/*
 * load-probe: makes a running process dlopen() a library, by a ptrace'd
 * call at a safe point of one of its threads (ptcall.c says how, and why
 * it is safe). Runs in a probe inspector of the target's owner, so the
 * kernel decides whether it may (a process that ran a setuid program
 * since it registered, or is not dumpable, is refused).
 */
#include <stdio.h>
#include <string.h>

#include "ctl/common/control.h"
#include "ctl/inspect/channel.h"
#include "ctl/inspect/probe.h"
#include "ctl/inspect/ptcall.h"
#include "ctl/inspect/target.h"

/* dlopen(library, RTLD_NOW) on the stopped thread. */
static void load(struct st_ptcall *j, const struct st_ptthread *th, void *arg)
{
	const char *lib = arg;
	char why[512];

	if (st_ptcall_dlopen(j, th, lib, 2 /* RTLD_NOW */, why, sizeof(why))) {
		snprintf(j->msg, sizeof(j->msg), "process %d loaded %s\n", j->pid, lib);
		j->status = ST_EXIT_OK;
	} else if (j->lost) {
		st_ptcall_fail(j, "process %d ended while loading %s", j->pid, lib);
	} else {
		st_ptcall_fail(j, "process %d cannot load %s: %s", j->pid, lib, why);
	}
}

void st_insp_probe(const struct st_insp_target *t, const char *library, int pidfd)
{
	static struct st_ptcall job;
	struct st_ptcall *j = &job;
	struct st_insp_proc p;
	char what[ST_INSP_PATH_MAX + 8];

	snprintf(what, sizeof(what), "load %s", library);
	memset(j, 0, sizeof(*j));
	j->pid = t->pid;
	j->status = ST_EXIT_FAIL;
	if (st_insp_proc_open(t, pidfd, &p, j->msg, sizeof(j->msg)) == 0) {
		if (st_ptcall_prepare(j, &p, true) == 0)
			st_ptcall_run(j, what, load, (void *)library);
		st_insp_proc_close(&p);
	}
	st_ptcall_free(j);
	st_insp_done(t->hdr.id, j->status, 0, "%s", j->msg);
}
