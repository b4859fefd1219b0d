/*
 * Dynamic probes in a running process: `shimtrace enable NAME --pid PID
 * --function|--probe SPEC` and `disable`. Runs in a probe inspector
 * (the owner's credentials: the kernel decides, as for load-probe).
 *
 *  1. libshimtrace-dynprobe.so is loaded into the process if it is not
 *     (dlopen at a safe point, as load-probe: ptcall.c);
 *  2. its st_dynprobe_ctl(command) is called at a safe point, other
 *     threads running (it resolves the place, relocates the instructions
 *     with capstone, writes the trampoline, registers the tracepoint:
 *     locks and memory of the process's own); it answers what to write
 *     where (dynprobe/ctl.h) and writes nothing into the probed code;
 *  3. every thread is stopped (ptcall.c); if one is inside the bytes to
 *     replace -- its instruction pointer there, or a system call there to
 *     be restarted -- all go on and it is tried again a millisecond
 *     later, for three seconds; the bytes there must still be what the
 *     library planned from; then they are written through
 *     /proc/PID/mem, the library's table told, and every thread goes on.
 *
 * Not seen: a signal handler's return address inside the replaced bytes
 * (a thread interrupted there, still in its handler), and jump tables
 * pointing inside them (dynprobe/reloc.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>
#include <unistd.h>

#include "core/monotime.h"
#include "ctl/common/control.h"
#include "ctl/inspect/channel.h"
#include "ctl/inspect/dynprobe.h"
#include "ctl/inspect/ptcall.h"
#include "ctl/inspect/target.h"
#include "dynprobe/ctl.h"

#define WRITE_DEADLINE_MS 3000

struct job {
	const char *lib, *command;
	uint64_t handle;      /* dlopen's: the library was loaded now */
	uint64_t reply_addr;  /* st_dynprobe_ctl's answer */
	bool called;
	char msg[ST_INSP_PATH_MAX + 1024];
};

static void load(struct st_ptcall *j, const struct st_ptthread *th, void *arg)
{
	struct job *b = arg;
	const struct st_ptarg a[2] = { { .s = b->lib }, { .v = 2 /* RTLD_NOW */ } };

	b->called = true;
	if (st_ptcall_call(j, th, j->fn_dlopen, a, 2, &b->handle) < 0)
		snprintf(b->msg, sizeof(b->msg), "process %d ended while loading %s", j->pid, b->lib);
}

static void command(struct st_ptcall *j, const struct st_ptthread *th, void *arg)
{
	struct job *b = arg;
	const struct st_ptarg a[1] = { { .s = b->command } };

	b->called = true;
	if (st_ptcall_call(j, th, j->fn_want, a, 1, &b->reply_addr) < 0)
		snprintf(b->msg, sizeof(b->msg), "process %d ended while planning the probe", j->pid);
}

/* Whether a thread stopped as r runs, or restarts a call, inside (at, at + len). */
static bool inside(const struct user_regs_struct *r, uint64_t at, uint32_t len)
{
	bool in_call = (int64_t)r->orig_rax >= 0;

	return (r->rip > at && r->rip < at + len) ||
	       (in_call && r->rip - 2 > at && r->rip - 2 < at + len);
}

/*
 * Writes what the library planned, every thread stopped outside it: 0,
 * or -1 with b->msg set.
 */
static int write_planned(struct st_ptcall *j, const struct dp_reply *rp, struct job *b)
{
	static struct st_ptstop s;
	uint64_t deadline = st_now_ms() + WRITE_DEADLINE_MS;
	uint8_t now[DP_PATCH_MAX];
	int mem = openat(j->proc->dirfd, "mem", O_RDWR | O_CLOEXEC), ret = -1;

	if (mem < 0) {
		snprintf(b->msg, sizeof(b->msg), "cannot open the memory of process %d: %s", j->pid,
			 strerror(errno));
		return -1;
	}
	for (;;) {
		bool busy = false;

		if (st_ptcall_stop_all(j, &s) < 0) {
			snprintf(b->msg, sizeof(b->msg), "%.4000s", j->msg);
			break;
		}
		for (int i = 0; i < s.n && !busy; i++) {
			struct user_regs_struct r;

			busy = ptrace(PTRACE_GETREGS, s.tids[i], 0, &r) < 0 ||
			       inside(&r, rp->at, rp->len);
		}
		if (!busy) {
			if (pread(mem, now, rp->len, (off_t)rp->at) != (ssize_t)rp->len ||
			    memcmp(now, rp->expect, rp->len) != 0)
				snprintf(b->msg, sizeof(b->msg), "the code at 0x%" PRIx64 " is not what "
					 "the probe was planned from: nothing written", rp->at);
			else if (pwrite(mem, rp->bytes, rp->len, (off_t)rp->at) != (ssize_t)rp->len ||
				 pwrite(mem, &rp->new_state, 4, (off_t)rp->state_addr) != 4)
				snprintf(b->msg, sizeof(b->msg), "cannot write the code of process %d "
					 "at 0x%" PRIx64 ": %s", j->pid, rp->at, strerror(errno));
			else
				ret = 0;
			st_ptcall_resume_all(&s);
			break;
		}
		st_ptcall_resume_all(&s);
		if (st_now_ms() >= deadline) {
			snprintf(b->msg, sizeof(b->msg), "a thread of process %d was always inside the "
				 "%u bytes at 0x%" PRIx64 " for %d ms: nothing written", j->pid,
				 rp->len, rp->at, WRITE_DEADLINE_MS);
			break;
		}
		usleep(1000);
	}
	close(mem);
	return ret;
}

/* Steps 1 and 2; 0 with the library's answer in *rp, or -1 with b->msg. */
static int plan(struct st_ptcall *j, const struct st_insp_proc *p, struct job *b,
		struct dp_reply *rp)
{
	j->want_obj = "libshimtrace-dynprobe";
	j->want_sym = DP_CTL_SYMBOL;
	if (st_ptcall_prepare(j, p, true) < 0)
		goto failed;
	if (!j->fn_want) {
		st_ptcall_run(j, "load the probe library", load, b);
		if (j->status != ST_EXIT_OK)
			goto failed;
		if (!b->handle) {
			snprintf(b->msg, sizeof(b->msg), "process %d cannot load %s", j->pid, b->lib);
			return -1;
		}
		st_ptcall_free(j);
		if (st_ptcall_prepare(j, p, true) < 0)
			goto failed;
		if (!j->fn_want) {
			snprintf(b->msg, sizeof(b->msg), "process %d loaded %s, but has no %s in it",
				 j->pid, b->lib, DP_CTL_SYMBOL);
			return -1;
		}
	}
	b->called = false;
	st_ptcall_run(j, "plant the probe", command, b);
	if (j->status != ST_EXIT_OK)
		goto failed;
	if (!b->reply_addr) {
		if (!b->msg[0])
			snprintf(b->msg, sizeof(b->msg), "the probe library did not answer");
		return -1;
	}
	if (st_ptcall_read(j->pid, b->reply_addr, rp, sizeof(*rp)) < 0) {
		snprintf(b->msg, sizeof(b->msg), "cannot read the probe library's answer");
		return -1;
	}
	rp->msg[sizeof(rp->msg) - 1] = '\0';
	rp->name[sizeof(rp->name) - 1] = '\0';
	return 0;
failed:
	if (!b->msg[0])
		snprintf(b->msg, sizeof(b->msg), "%.4000s", j->msg);
	return -1;
}

void st_insp_dynprobe(const struct st_insp_target *t, const char *library, const char *cmd,
		      int pidfd)
{
	static struct st_ptcall job;
	struct st_ptcall *j = &job;
	struct job b = { library, cmd, 0, 0, false, "" };
	struct dp_reply rp;
	struct st_insp_proc p;
	int status = ST_EXIT_FAIL;

	memset(j, 0, sizeof(*j));
	if (st_insp_proc_open(t, pidfd, &p, b.msg, sizeof(b.msg)) == 0) {
		if (plan(j, &p, &b, &rp) == 0) {
			if (rp.status < 0 || rp.len > DP_PATCH_MAX)
				snprintf(b.msg, sizeof(b.msg), "%s", rp.msg);
			else if (rp.len == 0 || write_planned(j, &rp, &b) == 0) {
				snprintf(b.msg, sizeof(b.msg), "%s%s", rp.msg,
					 b.handle ? DP_LOADED_NOTE : "");
				status = ST_EXIT_OK;
			}
		}
		st_ptcall_free(j);
		st_insp_proc_close(&p);
	}
	st_insp_done(t->hdr.id, status, 0, "%s", b.msg);
}
