/*
 * Calling a function inside a running process by ptrace, at a safe point
 * (ptcall.c), and stopping every thread of it (for writing its code):
 * what load-probe (probe.c) and dynamic probes (dynprobe.c) share.
 */
#ifndef ST_INSPECT_PTCALL_H
#define ST_INSPECT_PTCALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "ctl/inspect/target.h"

#define ST_PTCALL_XSTATE_MAX (64 * 1024)

/* A loaded object, for the safe point test. */
struct st_ptrange {
	uint64_t base, memsz;
	bool unsafe; /* code where a stopped thread may hold a lock a call needs */
};

struct st_ptcall {
	pid_t pid;
	const struct st_insp_proc *proc; /* its /proc/PID and pidfd */
	uint64_t fn_dlopen, fn_dlerror;	 /* in its libc */
	/* a function to find too (set before st_ptcall_prepare): want_sym in
	 * the object whose file name starts with want_obj; 0 if not loaded */
	const char *want_obj, *want_sym;
	uint64_t fn_want;
	struct st_ptrange *objs;
	uint32_t nobjs;
	char msg[ST_INSP_PATH_MAX + 1024]; /* why it failed */
	uint8_t xstate[ST_PTCALL_XSTATE_MAX]; /* the stopped thread's extended state */
};

/* Reads the process's objects and its libc's dlopen and dlerror: 0, or
 * -1 with j->msg set. */
int st_ptcall_prepare(struct st_ptcall *j, const struct st_insp_proc *p);
void st_ptcall_release(struct st_ptcall *j);

/* Work done on tid, stopped at a safe point, whose registers are saved
 * (and restored after). */
typedef void (*st_ptcall_work)(struct st_ptcall *j, pid_t tid, const struct user_regs_struct *saved,
			       void *arg);

/*
 * Finds a thread at a safe point (see ptcall.c) within three seconds and
 * runs work on it: 0, or -1 with j->msg naming the problem (what: what
 * the call was for, in "no safe point to WHAT").
 */
int st_ptcall_at_safe_point(struct st_ptcall *j, const char *what, st_ptcall_work work, void *arg);

/*
 * Calls fn(a0, a1) on tid, stopped, whose registers are `saved`; the
 * string arg (if any) is copied onto its stack and passed as a0. Returns
 * 0 and the result in *ret, or -1 (the thread or process is gone).
 */
int st_ptcall_call(struct st_ptcall *j, pid_t tid, const struct user_regs_struct *saved,
		   uint64_t fn, const char *arg, uint64_t a1, uint64_t *ret);

/* Reads n bytes at addr of the process: 0 or -1. */
int st_ptcall_read(pid_t pid, uint64_t addr, void *buf, size_t n);

/* Every thread of a process, stopped (st_ptcall_stop_all). */
#define ST_PTCALL_MAX_THREADS 4096
struct st_ptstop {
	pid_t tids[ST_PTCALL_MAX_THREADS];
	int n;
};

/*
 * Stops every thread of j's process, those it starts meanwhile too,
 * until none is left running: 0, or -1 with j->msg set (then none stays
 * stopped).
 */
int st_ptcall_stop_all(struct st_ptcall *j, struct st_ptstop *s);
/* Lets them all go. */
void st_ptcall_resume_all(struct st_ptstop *s);

#endif /* ST_INSPECT_PTCALL_H */
