/*
 * Process start, fork and exit.
 *
 * The constructor sets up the status memory and registers with the session
 * daemon before main() runs. A fork child gets its own status memory and
 * registers as a new process from the pthread_atfork child handler; until
 * then st__live->pid is 0 (its page is wiped on fork) and events are not
 * written. At exit (our destructor, or the proc family's _exit) the
 * calling thread's buffers are flushed and the control page says so (the
 * destructor also sends EXIT); buffers of
 * threads still running are salvaged by the daemon from their commit
 * counters.
 *
 * SHIMTRACE_DISABLE=1 in the environment leaves the process untouched
 * (not in a setuid or setgid program, which trusts none of its
 * environment: secure_getenv; nor when the tracer is loaded by an attach,
 * attach.c).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "rseq.h"
#include "sys.h"

static int initialised;

/*
 * Fork child, one thread, possibly inside a signal handler that interrupted
 * an event write (busy == 1): that write finishes when the handler returns,
 * into memory that is private by then (st__pools_forget).
 */
static void atfork_child(void)
{
	uint32_t busy = st__tls.busy;

	st__tls.busy = 2;
	st__live->pid = 0; /* in case the kernel could not wipe the page */
	st__reg_forget();
	st__attach_fork_child();
	st__thread_forget();
	st__pools_forget();
	if (st__status_reinit_child() == 0 && st__reg_restore_child() == 0) {
		st__live->pid = st__getpid();
		st__reg_register();
	}
	st__tls.busy = busy;
}


void st__init(void)
{
	const char *off = secure_getenv("SHIMTRACE_DISABLE");
	struct st__live *live;

	if (initialised)
		return;
	initialised = 1;
	/* (an attach asked for by someone who may ptrace us overrides it) */
	if (off && strcmp(off, "1") == 0 && !st__reg_attach_rundir())
		return;
	st__tls.busy = 2;
	live = st__mmap(NULL, ST_ABI_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!live || st__status_init() < 0)
		goto out;
	st__sys3(SYS_madvise, live, ST_ABI_PAGE, MADV_WIPEONFORK);
	live->pid = st__getpid();
	st__live = live;
	st__writer_init();
	st__stack_init();
	st__rseq_init();
	st__reg_setup();
	pthread_atfork(NULL, NULL, atfork_child);
	/* the registration's statedump describes every object loaded now (a
	 * fork child has its parent's counters, and its statedump too) */
	st__dl_baseline();
	st__reg_register();
out:
	st__tls.busy = 0;
}

/* The public registration entry points: a provider's constructor may run
 * before ours (preload order), so the process is set up first. */
ST_API void st_tracepoints_register(const struct st_tracepoint *const *begin,
				    const struct st_tracepoint *const *end)
{
	st__init();
	st__reg_tracepoints(begin, end);
}

ST_API void st_tracepoints_unregister(const struct st_tracepoint *const *begin,
				      const struct st_tracepoint *const *end)
{
	st__reg_untracepoints(begin, end);
}

static void __attribute__((constructor(101))) init(void)
{
	st__init();
}

/*
 * The process's exit path runs: said in its control page, which the daemon
 * reads whether the connection is still there or not (how the process
 * ended goes into its traces, ctl/daemon/drain/procend.c). False, and nothing
 * said, in a vfork child, which shares our memory (st__live has its
 * parent's pid) and a copy of our connection: it must not speak for its
 * parent.
 */
static bool mark_exit(void)
{
	if (st__live->pid == 0 || st__live->pid != st__getpid())
		return false;
	if (st__control)
		st_store_release(&st__control->exited, 1);
	return true;
}

static void __attribute__((destructor(101))) fini(void)
{
	if (!mark_exit())
		return;
	st__thread_flush();
	st__reg_exit();
}

/*
 * _exit and _Exit (the proc family's wrappers, before the real call): the
 * same, but they may run in a signal handler that interrupted this thread
 * anywhere in the tracer: the buffers are left alone unless the thread was
 * outside it (busy 0), and no message is sent (the connection's holder may
 * be the thread interrupted; the control page says enough).
 */
ST_API void st__process_exit(void)
{
	if (mark_exit() && st__tls.busy == 0)
		st__thread_flush();
}
