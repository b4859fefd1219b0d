/*
 * Attach, in a probe inspector of the target's owner: the tracer is
 * loaded into a process that was started without it, and its calls sent
 * to the wrappers; or, to detach, sent back. Every step is a ptrace'd
 * call on one thread stopped at a safe point (ptcall.c), all on the same
 * stop, so the kernel's checks of the owner's rights decide (same
 * credentials, dumpable, Yama's ptrace_scope), and nothing of ours runs
 * in the process but the calls.
 *
 * Attach:
 *   1. dlopen(libshimtrace-attach.so, RTLD_GLOBAL) and dlsym its
 *      st_attach_args, into which the daemon's directory is written
 *      (core/abi.h): the core, loaded next, registers with that daemon
 *      from its constructor, as a process started with the preload does
 *      with its own, and the daemon applies its sessions' enable bits;
 *   2. dlopen of the core, then of each family: their constructors
 *      register their providers; every library with RTLD_NODELETE (a
 *      call in a wrapper at detach must find its code);
 *   3. st_attach(rundir) in the core: the GOT rewrite (core/attach.c);
 *   4. with a JVM agent (--wrap jvm): the agent loaded through the JVM's
 *      attach mechanism (jvmattach.c), once the process runs again; its
 *      Agent_OnAttach finds the core loaded and registered. The JVM is
 *      looked at, and its attach listener started, before step 1: a
 *      process that is not a JVM, or whose listener cannot start, is
 *      refused with nothing loaded. An agent the JVM refuses (its
 *      Agent_OnAttach's code) undoes step 3.
 * Detach: st_attach_undo() in the core, found with RTLD_NOLOAD. A JVM
 * agent stays (JVMTI has no unload): its events are off once no session
 * enables them, and a later attach finds it loaded and loads it no more.
 *
 * A program with no dynamic loader (static) is refused before anything
 * is done; so is a process whose credentials are not those the daemon
 * named (st_insp_proc_open: it ran a setuid program, or changed identity
 * since the daemon looked), or which is not dumpable.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "core/abi.h"
#include "ctl/common/control.h"
#include "ctl/inspect/attach.h"
#include "ctl/inspect/channel.h"
#include "ctl/inspect/jvmattach.h"
#include "ctl/inspect/ptcall.h"
#include "ctl/inspect/target.h"

#define MAX_LIBS 16
/* How long the process waits for each of the daemon's answers as it
 * registers (and at its later registrations: a dlopen): while attaching,
 * longer than its own default, so that what it registers is enabled
 * before st_attach returns even on a busy machine. */
#define SYNC_MS 5000

struct job {
	const struct st_insp_attach *a;
	const char *lib[MAX_LIBS];
	uint32_t nlibs;
	const char *agent, *options; /* a JVM agent, or NULL */
	uint32_t count;		     /* slots redirected, or put back */
};

/* What st_attach's error means, for the message. */
static const char *attach_error(int err)
{
	switch (err) {
	case -EBUSY:
		return "it is served by another shimtrace daemon already";
	case -ECONNREFUSED:
	case -ENOENT:
		return "it cannot connect to the daemon";
	case -ENOTCONN:
		return "its tracer is disabled";
	default:
		return strerror(-err);
	}
}

/* A step of the job failed: why, or that the process went meanwhile. */
static void failed(struct st_ptcall *j, const char *step, const char *lib, const char *why)
{
	if (j->lost)
		st_ptcall_fail(j, "process %d ended, or ran another program, while being %s", j->pid,
			       step);
	else if (lib)
		st_ptcall_fail(j, "process %d cannot load %s: %s", j->pid, lib, why);
	else
		st_ptcall_fail(j, "process %d %s", j->pid, why);
}

static void attach(struct st_ptcall *j, const struct st_ptthread *th, void *arg)
{
	const char *A = "attached";
	struct job *jb = arg;
	struct st_abi_attach args;
	struct st_ptarg rundir = { 0, jb->a->rundir }, get = { PR_GET_DUMPABLE, NULL };
	uint64_t marker, where, core = 0, fn, ret;
	char why[512];

	/* (what the kernel decides for a process of another user, asked
	 * here for one of root's, which an inspector holding CAP_SYS_PTRACE
	 * could stop anyway: a process that said it refuses ptrace is left) */
	if (st_ptcall_call(j, th, j->fn_prctl, &get, 1, &ret) < 0 || ret == 0) {
		failed(j, A, NULL, "is not dumpable (PR_SET_DUMPABLE 0): it refuses ptrace");
		return;
	}
	marker = st_ptcall_dlopen(j, th, jb->lib[0], RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE, why,
				  sizeof(why));
	where = marker ? st_ptcall_dlsym(j, th, marker, "st_attach_args") : 0;
	if (!where) {
		failed(j, A, jb->lib[0], marker ? "no st_attach_args in it" : why);
		return;
	}
	memset(&args, 0, sizeof(args));
	args.version = ST_ABI_VERSION;
	args.timeout_ms = SYNC_MS;
	args.stack_depth = jb->a->stack_depth;
	args.stack_sample = jb->a->stack_sample;
	memcpy(args.rundir, jb->a->rundir, sizeof(args.rundir));
	if (st_ptcall_write(j, where, &args, sizeof(args)) < 0) {
		failed(j, A, NULL, "cannot be written to");
		return;
	}
	args.magic = ST_ABI_ATTACH_MAGIC; /* last: the arguments are whole */
	st_ptcall_write(j, where, &args.magic, sizeof(args.magic));
	for (uint32_t i = 1; i < jb->nlibs; i++) {
		uint64_t h = st_ptcall_dlopen(j, th, jb->lib[i], RTLD_NOW | RTLD_NODELETE, why,
					      sizeof(why));

		if (!h) {
			failed(j, A, jb->lib[i], why);
			return;
		}
		core = core ? core : h;
	}
	fn = st_ptcall_dlsym(j, th, core, "st_attach");
	if (!fn || st_ptcall_call(j, th, fn, &rundir, 1, &ret) < 0) {
		failed(j, A, NULL, "has no st_attach in its libshimtrace.so");
		return;
	}
	if ((int32_t)ret < 0) {
		st_ptcall_fail(j, "process %d cannot be attached: %s", j->pid,
			       attach_error((int32_t)ret));
		return;
	}
	jb->count = (uint32_t)ret;
	snprintf(j->msg, sizeof(j->msg), "process %d attached: %u calls redirected", j->pid,
		 jb->count);
	j->status = ST_EXIT_OK;
}

static void detach(struct st_ptcall *j, const struct st_ptthread *th, void *arg)
{
	struct job *jb = arg;
	uint64_t core, fn, ret;
	char why[512];

	core = st_ptcall_dlopen(j, th, jb->lib[0], RTLD_NOW | RTLD_NOLOAD, why, sizeof(why));
	fn = core ? st_ptcall_dlsym(j, th, core, "st_attach_undo") : 0;
	if (!fn || st_ptcall_call(j, th, fn, NULL, 0, &ret) < 0) {
		failed(j, "detached", NULL, "has no shimtrace loaded");
		return;
	}
	jb->count = (uint32_t)ret;
	snprintf(j->msg, sizeof(j->msg), "process %d detached: %u calls restored", j->pid,
		 jb->count);
	j->status = ST_EXIT_OK;
}

/* The libraries after the request, each NUL-terminated, then a JVM
 * agent's path and options. */
static int libraries(struct job *jb, const char *p, size_t len)
{
	const char *end = p + len, *jvm[2] = { NULL, NULL };

	for (jb->nlibs = 0; jb->nlibs < jb->a->nlibs; jb->nlibs++) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));

		if (jb->nlibs == MAX_LIBS || !nul || p[0] != '/')
			return -1;
		jb->lib[jb->nlibs] = p;
		p = nul + 1;
	}
	for (int i = 0; i < 2 && jb->a->jvm && !jb->a->detach; i++) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));

		if (!nul)
			return -1;
		jvm[i] = p;
		p = nul + 1;
	}
	if (jvm[0] && jvm[0][0] != '/')
		return -1;
	jb->agent = jvm[0];
	jb->options = jvm[1];
	return p == end && jb->nlibs >= (jb->a->detach ? 1u : 2u) &&
			       memchr(jb->a->rundir, '\0', sizeof(jb->a->rundir))
		       ? 0
		       : -1;
}

/*
 * Step 4, the process attached and running again: the JVM agent loaded.
 * Refused, the attach is undone (the calls put back; what was loaded
 * stays, as after any detach), and the job fails saying why.
 */
static void load_agent(struct st_ptcall *j, struct job *jb, struct st_jvm *jvm)
{
	struct job undo = { .a = jb->a, .lib = { jb->lib[1] }, .nlibs = 1 };
	char why[1024];
	bool already;
	size_t len = strlen(j->msg);

	if (st_jvm_load(jvm, jb->agent, jb->options, &already, why, sizeof(why)) == 0) {
		const char *done = already ? "loaded already" : "loaded";

		/* (the core alone: no call to redirect) */
		if (jb->nlibs == 2)
			snprintf(j->msg, sizeof(j->msg), "process %d attached: JVM agent %s", j->pid,
				 done);
		else
			snprintf(j->msg + len, sizeof(j->msg) - len, ", JVM agent %s", done);
		return;
	}
	st_ptcall_run(j, "detach", detach, &undo);
	st_ptcall_fail(j, "%s%s", why,
		       j->status == ST_EXIT_OK ? "" : " (and its calls could not be put back)");
}

/* Whether the job can go on; else it failed, saying why. */
static bool possible(struct st_ptcall *j, const struct st_insp_attach *a)
{
	if (!j->dynamic)
		st_ptcall_fail(j, "process %d is statically linked: no library can be loaded into it",
			       j->pid);
	else if (!j->fn_dlopen || !j->fn_dlsym || !j->fn_prctl)
		st_ptcall_fail(j, "process %d has no dlopen in its libc (glibc 2.34 or later is "
				  "needed)",
			       j->pid);
	else if (a->detach && !j->has_core)
		st_ptcall_fail(j, "process %d has no shimtrace loaded", j->pid);
	else
		return true;
	return false;
}

void st_insp_attach(const struct st_insp_attach *a, const char *libs, size_t len, int pidfd)
{
	static struct st_ptcall job;
	struct st_ptcall *j = &job;
	struct job jb = { .a = a };
	struct st_insp_proc p;

	memset(j, 0, sizeof(*j));
	j->pid = a->t.pid;
	j->status = ST_EXIT_FAIL;
	if (libraries(&jb, libs, len) < 0) {
		st_insp_done(a->t.hdr.id, -EINVAL, 0, "malformed request");
		return;
	}
	if (st_insp_proc_open(&a->t, pidfd, &p, j->msg, sizeof(j->msg)) == 0) {
		struct st_jvm jvm = { .tmpfd = -1 };

		if (st_ptcall_prepare(j, &p, false) == 0 && possible(j, a) &&
		    (!jb.agent || st_jvm_listener(&p, a->t.uid, &jvm, j->msg, sizeof(j->msg)) == 0))
			st_ptcall_run(j, a->detach ? "detach" : "attach", a->detach ? detach : attach,
				      &jb);
		if (jb.agent && j->status == ST_EXIT_OK)
			load_agent(j, &jb, &jvm);
		st_jvm_close(&jvm);
		st_insp_proc_close(&p);
	}
	st_ptcall_free(j);
	st_insp_done(a->t.hdr.id, j->status, jb.count, "%s", j->msg);
}
