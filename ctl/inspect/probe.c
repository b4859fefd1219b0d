/*
 * load-probe: makes a running process dlopen() a library, without a thread
 * or a signal handler of ours in it. Runs in a probe inspector: a process
 * of the target's owner, with no capability (CAP_SYS_PTRACE for root's;
 * owner.c), so the kernel decides whether it may ptrace the target (same
 * credentials, dumpable, and for a process of another user namespace, an
 * owner who owns that namespace; a process that ran a setuid program
 * since it registered is refused).
 *
 * The inspector calls dlopen(path, RTLD_NOW) on one thread of the
 * process stopped at a safe point, as a debugger calls a function in its
 * inferior (ptcall.c says how, and what a safe point is), and dlerror()
 * when it fails.
 *
 * Why not a signal: a handler of ours would take a signal number from the
 * program, make blocking calls such as sleep() and poll() return early,
 * and need chaining through sigaction(); ptrace needs nothing in the
 * process.
 *
 * Once the call runs, the inspector waits for it to return, however long
 * that takes: the daemon does not wait for it, and ends without it.
 */
#include <stdio.h>
#include <string.h>

#include "ctl/common/control.h"
#include "ctl/inspect/channel.h"
#include "ctl/inspect/probe.h"
#include "ctl/inspect/ptcall.h"
#include "ctl/inspect/target.h"

struct load {
	const char *lib;
	int status;
	char msg[ST_INSP_PATH_MAX + 1024];
};

static void read_string(pid_t pid, uint64_t addr, char *out, size_t n)
{
	size_t got = 0;

	/* (byte-wise at the end of what can be read) */
	while (got + 1 < n && st_ptcall_read(pid, addr + got, out + got, 1) == 0 && out[got])
		got++;
	out[got] = '\0';
}

/* Runs dlopen on tid, stopped at a safe point. */
static void inject(struct st_ptcall *j, pid_t tid, const struct user_regs_struct *saved, void *arg)
{
	struct load *l = arg;
	uint64_t handle = 0, err;
	char why[512];

	if (st_ptcall_call(j, tid, saved, j->fn_dlopen, l->lib, 2 /* RTLD_NOW */, &handle) < 0) {
		snprintf(l->msg, sizeof(l->msg), "process %d ended while loading %s", j->pid, l->lib);
		return;
	}
	if (!handle) {
		why[0] = '\0';
		if (j->fn_dlerror && st_ptcall_call(j, tid, saved, j->fn_dlerror, NULL, 0, &err) == 0 &&
		    err)
			read_string(j->pid, err, why, sizeof(why));
		snprintf(l->msg, sizeof(l->msg), "process %d cannot load %s: %s", j->pid, l->lib,
			 why[0] ? why : "dlopen failed");
	} else {
		snprintf(l->msg, sizeof(l->msg), "process %d loaded %s\n", j->pid, l->lib);
		l->status = ST_EXIT_OK;
	}
}

void st_insp_probe(const struct st_insp_target *t, const char *library, int pidfd)
{
	static struct st_ptcall job;
	struct st_ptcall *j = &job;
	struct load l = { library, ST_EXIT_FAIL, "" };
	struct st_insp_proc p;
	char what[ST_INSP_PATH_MAX + 8];

	memset(j, 0, sizeof(*j));
	snprintf(what, sizeof(what), "load %s", library);
	if (st_insp_proc_open(t, pidfd, &p, l.msg, sizeof(l.msg)) == 0) {
		if (st_ptcall_prepare(j, &p) < 0 ||
		    st_ptcall_at_safe_point(j, what, inject, &l) < 0)
			snprintf(l.msg, sizeof(l.msg), "%.4000s", j->msg);
		else if (!l.msg[0])
			snprintf(l.msg, sizeof(l.msg), "%.4000s", j->msg);
		st_ptcall_release(j);
		st_insp_proc_close(&p);
	}
	st_insp_done(t->hdr.id, l.status, 0, "%s", l.msg);
}
