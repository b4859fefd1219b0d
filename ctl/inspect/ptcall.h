/*
 * Calling functions in a running process by ptrace, at a safe point of
 * one of its threads, and stopping every thread of it to write its code
 * (ptcall.c): what load-probe (probe.c), attach (attach.c) and dynamic
 * probes (dynprobe.c) are made of.
 */
#ifndef ST_INSPECT_PTCALL_H
#define ST_INSPECT_PTCALL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "ctl/inspect/proto.h"
#include "ctl/inspect/target.h"

#define ST_PTCALL_XSTATE_MAX (64 * 1024)

struct st_ptrange;

/* A job: the process, what it has loaded, and how the job ended. */
struct st_ptcall {
	pid_t pid;
	const struct st_insp_proc *proc;
	struct st_ptrange *objs;
	uint32_t nobjs;
	/* in its libc (glibc 2.34 and later keeps the loader's API there) */
	uint64_t fn_dlopen, fn_dlerror, fn_dlsym, fn_prctl;
	/* a function to find too (set before st_ptcall_prepare): want_sym in
	 * the object whose file name starts with want_obj; 0 if not loaded */
	const char *want_obj, *want_sym;
	uint64_t fn_want;
	bool dynamic; /* a dynamic loader is mapped: not a static program */
	bool has_core; /* libshimtrace.so is mapped already */
	bool lost;     /* a call failed: the thread or the process is gone (an exec) */
	int status; /* the command's exit status (ctl/common/control.h) */
	char msg[ST_INSP_PATH_MAX + 1024];
	uint8_t xstate[ST_PTCALL_XSTATE_MAX]; /* the stopped thread's extended state */
};

/* The thread a job stopped, and its registers as they were. */
struct st_ptthread {
	pid_t tid;
	struct user_regs_struct saved;
};

/* An argument of a call: the string s (copied onto the thread's stack,
 * its address passed) if not NULL, else the value v. */
struct st_ptarg {
	uint64_t v;
	const char *s;
};

/*
 * Reads p's objects (for the safe point test) and finds the loader's
 * functions in its libc. 0, or -1 with the job failed (why in msg);
 * dlopen not found is a failure only if need_dlopen.
 */
int st_ptcall_prepare(struct st_ptcall *j, const struct st_insp_proc *p, bool need_dlopen);
void st_ptcall_free(struct st_ptcall *j);

/*
 * Stops a thread of the process at a safe point and runs fn on it; the
 * thread's registers and extended state are put back after, and it is
 * let go. what names the work in the message of a job that found no safe
 * point. The job fails when the process cannot be attached to (why said).
 */
void st_ptcall_run(struct st_ptcall *j, const char *what,
		   void (*fn)(struct st_ptcall *j, const struct st_ptthread *th, void *arg), void *arg);

/* Calls fn(args...) (at most 3) on the stopped thread; 0 and the result
 * in *ret, or -1 when the thread or the process is gone (j->lost). */
int st_ptcall_call(struct st_ptcall *j, const struct st_ptthread *th, uint64_t fn,
		   const struct st_ptarg *args, int nargs, uint64_t *ret);

/* dlopen(path, mode) on the thread: the handle, or 0 with dlerror's text
 * (or a reason) in why. */
uint64_t st_ptcall_dlopen(struct st_ptcall *j, const struct st_ptthread *th, const char *path,
			  int mode, char *why, size_t n);

/* dlsym(handle, name) on the thread, or 0. */
uint64_t st_ptcall_dlsym(struct st_ptcall *j, const struct st_ptthread *th, uint64_t handle,
			 const char *name);

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

/* Writes len bytes at addr in the process; 0 or -1. */
int st_ptcall_write(const struct st_ptcall *j, uint64_t addr, const void *buf, size_t len);

/* The job failed: the message, printf-like. */
void st_ptcall_fail(struct st_ptcall *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* ST_INSPECT_PTCALL_H */
