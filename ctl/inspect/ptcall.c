/*
 * Calling functions in a running process, without a thread or a signal
 * handler of ours in it: what load-probe (probe.c: dlopen a library) and
 * attach (attach.c: load the tracer, redirect its calls, and undo) do.
 * Runs in a probe inspector: a process of the target's owner, with no
 * capability (CAP_SYS_PTRACE for root's; owner.c), so the kernel decides
 * whether it may ptrace the target (same credentials, dumpable, and for a
 * process of another user namespace, an owner who owns that namespace;
 * a process that ran a setuid program since is refused).
 *
 * The inspector does what a debugger does to call a function in its
 * inferior: it attaches to one thread of the process with ptrace
 * (PTRACE_SEIZE, then PTRACE_INTERRUPT, which stops only that thread),
 * saves its registers and extended state, sets it up to call a function
 * (dlopen(path, RTLD_NOW), say) on its own stack with a return address of
 * 0, lets it run until the return faults on address 0 (that SIGSEGV is
 * ours and never delivered), and so on for each call of the job; then it
 * restores the registers and detaches. A system call the thread was
 * blocked in is restarted by the kernel exactly as after any ptrace stop:
 * the program sees no EINTR, and its other threads never stop.
 *
 * Why not a signal: a handler of ours would take a signal number from the
 * program, make blocking calls such as sleep() and poll() return early,
 * and need chaining through sigaction(); ptrace needs nothing in the
 * process.
 *
 * The one danger is the point where the thread stops: dlopen takes locks
 * (malloc's, the loader's, stdio's from constructors), and a thread stopped
 * while holding one would deadlock in it. So the thread is taken only at a
 * safe point: blocked in (or just back from) a system call on a list of
 * calls no libc lock is held around (sleeping, waiting for input, poll,
 * epoll, wait), or running code outside libc, the loader and shimtrace
 * (whose own locks, attach's among them, a call of ours may take).
 * Otherwise it is let go and tried again a millisecond later, up to three
 * seconds. The threads are listed from the target's /proc/PID/task: a
 * thread taken must still be one of the target's once it is stopped (its
 * tid may have ended and been reused by another process's thread between
 * the list and the attach); one that is not is let go untouched but for
 * the stop.
 *
 * Once a call runs, the inspector waits for it to return, however long
 * that takes (a register state cannot be restored under a running call):
 * the daemon does not wait for it, and ends without it.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/monotime.h"
#include "ctl/common/control.h"
#include "ctl/inspect/elfinfo.h"
#include "ctl/inspect/ptcall.h"

#define DEADLINE_MS 3000

/* A loaded object, for the safe point test. */
struct st_ptrange {
	uint64_t base, memsz;
	bool unsafe; /* code where a stopped thread may hold a lock dlopen needs */
};

static bool basename_is(const char *path, const char *prefix)
{
	const char *b = strrchr(path, '/');

	return strncmp(b ? b + 1 : path, prefix, strlen(prefix)) == 0;
}

/* Code where a stopped thread may hold a lock dlopen needs. */
static bool unsafe_object(const char *path)
{
	return basename_is(path, "libc.so") || basename_is(path, "ld-linux") ||
	       basename_is(path, "libpthread") || basename_is(path, "libdl.") ||
	       basename_is(path, "libshimtrace");
}

static bool ip_safe(const struct st_ptcall *j, uint64_t ip)
{
	for (uint32_t i = 0; i < j->nobjs; i++)
		if (ip >= j->objs[i].base && ip - j->objs[i].base < j->objs[i].memsz)
			return !j->objs[i].unsafe;
	return false; /* anonymous code (a JIT?), the vdso: not known safe */
}

/* System calls libc makes without holding a lock of its own. */
static bool syscall_safe(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_readv: case SYS_pread64: case SYS_preadv:
	case SYS_recvfrom: case SYS_recvmsg: case SYS_recvmmsg:
	case SYS_accept: case SYS_accept4:
	case SYS_poll: case SYS_ppoll: case SYS_select: case SYS_pselect6:
	case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_epoll_pwait2:
	case SYS_nanosleep: case SYS_clock_nanosleep: case SYS_pause:
	case SYS_wait4: case SYS_waitid:
	case SYS_rt_sigsuspend: case SYS_rt_sigtimedwait:
		return true;
	default:
		return false;
	}
}

/* Whether tid is still a tracee of ours: a thread that another one's
 * exec replaced (the execing thread takes the leader's tid) is not. */
static bool still_ours(const struct st_ptcall *j, pid_t tid)
{
	char path[64], buf[2048], *t;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "task/%d/status", (int)tid);
	fd = openat(j->proc->dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	t = strstr(buf, "\nTracerPid:");
	return t && atoi(t + strlen("\nTracerPid:")) == getpid();
}

/*
 * Waits for the next stop or end of tid; returns the wait status or -1.
 * Never for good: a thread another thread's exec took the place of is
 * neither reported stopped nor ended to us, so the wait looks every
 * 100 ms (or at each SIGCHLD, which st_ptcall_run blocks to wait for it)
 * whether tid is still ours.
 */
static int wait_tid(const struct st_ptcall *j, pid_t tid)
{
	const struct timespec tick = { 0, 100 * 1000 * 1000 };
	sigset_t chld;
	int st;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		pid_t r = waitpid(tid, &st, __WALL | WNOHANG);

		if (r == tid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		if (r == 0 && !still_ours(j, tid))
			return -1;
		sigtimedwait(&chld, NULL, &tick);
	}
}

static bool gone(int st)
{
	return st < 0 || WIFEXITED(st) || WIFSIGNALED(st);
}

/*
 * Stops tid (attached) at a ptrace interrupt. A signal reported meanwhile
 * is delivered on. Returns 0, or -1 when the thread is gone.
 */
static int interrupt(const struct st_ptcall *j, pid_t tid)
{
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
		return -1;
	for (;;) {
		int st = wait_tid(j, tid);

		if (gone(st))
			return -1;
		if (WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_STOP)
			return 0;
		/* a signal-delivery stop: let the program have its signal */
		if (ptrace(PTRACE_CONT, tid, 0, WSTOPSIG(st)) < 0)
			return -1;
		if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
			return -1;
	}
}

int st_ptcall_write(const struct st_ptcall *j, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_writev(j->pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

int st_ptcall_read(pid_t pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

static int call(struct st_ptcall *j, const struct st_ptthread *th, uint64_t fn,
		   const struct st_ptarg *args, int nargs, uint64_t *ret)
{
	struct user_regs_struct r = th->saved;
	uint64_t sp = th->saved.rsp - 128; /* below the red zone */
	uint64_t zero = 0, v[3] = { 0, 0, 0 };

	for (int i = 0; i < nargs && i < 3; i++) {
		size_t len;

		v[i] = args[i].v;
		if (!args[i].s)
			continue;
		len = strlen(args[i].s) + 1;
		sp = (sp - len) & ~(uint64_t)15;
		if (st_ptcall_write(j, sp, args[i].s, len) < 0)
			return -1;
		v[i] = sp;
	}
	sp &= ~(uint64_t)15;
	sp -= 8; /* the return address: at entry, rsp + 8 is 16-byte aligned */
	if (st_ptcall_write(j, sp, &zero, sizeof(zero)) < 0)
		return -1;
	r.rdi = v[0];
	r.rsi = v[1];
	r.rdx = v[2];
	r.rsp = sp;
	r.rip = fn;
	r.rax = 0;
	r.orig_rax = (uint64_t)-1; /* no system call to restart now */
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &r) < 0 || ptrace(PTRACE_CONT, th->tid, 0, 0) < 0)
		return -1;
	for (;;) {
		int st = wait_tid(j, th->tid);
		int sig;

		if (gone(st))
			return -1;
		sig = WSTOPSIG(st);
		if ((st >> 16) == 0 && sig == SIGSEGV && ptrace(PTRACE_GETREGS, th->tid, 0, &r) == 0 &&
		    r.rip == 0) {
			*ret = r.rax;
			return 0;
		}
		/* The program's own signals go on to it; group stops end. */
		if (ptrace(PTRACE_CONT, th->tid, 0, (st >> 16) ? 0 : sig) < 0)
			return -1;
	}
}

int st_ptcall_call(struct st_ptcall *j, const struct st_ptthread *th, uint64_t fn,
		   const struct st_ptarg *args, int nargs, uint64_t *ret)
{
	if (call(j, th, fn, args, nargs, ret) == 0)
		return 0;
	j->lost = true;
	return -1;
}

static void read_string(pid_t pid, uint64_t addr, char *out, size_t n)
{
	struct iovec local = { out, n - 1 }, remote = { (void *)(uintptr_t)addr, n - 1 };
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	out[got > 0 ? got : 0] = '\0';
}

uint64_t st_ptcall_dlopen(struct st_ptcall *j, const struct st_ptthread *th, const char *path,
			  int mode, char *why, size_t n)
{
	struct st_ptarg a[2] = { { 0, path }, { (uint64_t)mode, NULL } };
	uint64_t handle = 0, err;

	why[0] = '\0';
	if (st_ptcall_call(j, th, j->fn_dlopen, a, 2, &handle) < 0) {
		snprintf(why, n, "the process ended");
		return 0;
	}
	if (!handle && j->fn_dlerror && st_ptcall_call(j, th, j->fn_dlerror, NULL, 0, &err) == 0 &&
	    err)
		read_string(j->pid, err, why, n);
	if (!handle && !why[0])
		snprintf(why, n, "dlopen failed");
	return handle;
}

uint64_t st_ptcall_dlsym(struct st_ptcall *j, const struct st_ptthread *th, uint64_t handle,
			 const char *name)
{
	struct st_ptarg a[2] = { { handle, NULL }, { 0, name } };
	uint64_t ret = 0;

	if (!j->fn_dlsym || st_ptcall_call(j, th, j->fn_dlsym, a, 2, &ret) < 0)
		return 0;
	return ret;
}

void st_ptcall_fail(struct st_ptcall *j, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(j->msg, sizeof(j->msg), fmt, ap);
	va_end(ap);
	j->status = ST_EXIT_FAIL;
}

/* Whether tid, stopped, is at a safe point (see the top of the file). */
static bool at_safe_point(const struct st_ptcall *j, pid_t tid)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return false;
	if ((int64_t)r.orig_rax >= 0)
		return syscall_safe((long)r.orig_rax);
	return ip_safe(j, r.rip);
}

/* The threads of the process, at most max. */
static int threads(const struct st_ptcall *j, pid_t *tids, int max)
{
	struct dirent *e;
	DIR *dir;
	int n = 0, fd = openat(j->proc->dirfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((e = readdir(dir)) && n < max)
		if (e->d_name[0] != '.')
			tids[n++] = atoi(e->d_name);
	closedir(dir);
	return n;
}

/* Runs fn on tid, stopped at a safe point, then puts its state back. */
static void run_on(struct st_ptcall *j, pid_t tid,
		   void (*fn)(struct st_ptcall *j, const struct st_ptthread *th, void *arg), void *arg)
{
	struct iovec xs = { j->xstate, sizeof(j->xstate) };
	struct st_ptthread th = { .tid = tid };

	if (ptrace(PTRACE_GETREGS, tid, 0, &th.saved) < 0 ||
	    ptrace(PTRACE_GETREGSET, tid, NT_X86_XSTATE, &xs) < 0) {
		st_ptcall_fail(j, "cannot read the registers of thread %d: %s", tid, strerror(errno));
		return;
	}
	fn(j, &th, arg);
	ptrace(PTRACE_SETREGSET, tid, NT_X86_XSTATE, &xs);
	ptrace(PTRACE_SETREGS, tid, 0, &th.saved);
}

void st_ptcall_run(struct st_ptcall *j, const char *what,
		   void (*fn)(struct st_ptcall *j, const struct st_ptthread *th, void *arg), void *arg)
{
	uint64_t deadline = st_now_ms() + DEADLINE_MS;
	pid_t tids[256];
	int n = threads(j, tids, 256), attach_errno = 0;
	sigset_t chld;

	/* (the stops of a tracee come as SIGCHLD, which wait_tid waits for) */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);

	if (n == 0) {
		st_ptcall_fail(j, "process %d is gone", j->pid);
		return;
	}
	while (st_now_ms() < deadline) {
		for (int i = 0; i < n; i++) {
			pid_t tid = tids[i];
			bool safe;

			if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
				attach_errno = errno;
				continue;
			}
			/* The tid was read from the task list before: it may have
			 * ended and been taken by a thread of another process
			 * since. Stopped, it cannot end (nor its tid be reused)
			 * until we wait for it: now it must be a thread of the
			 * target, which still runs, or it is let go. */
			if (interrupt(j, tid) < 0 || !st_insp_thread_of(j->proc, tid)) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				continue;
			}
			safe = at_safe_point(j, tid);
			if (safe)
				run_on(j, tid, fn, arg);
			ptrace(PTRACE_DETACH, tid, 0, 0);
			if (safe)
				return;
		}
		if (attach_errno && attach_errno != ESRCH) {
			st_ptcall_fail(j, "cannot attach to process %d: %s%s", j->pid,
				       strerror(attach_errno),
				       attach_errno == EPERM ? " (traced by a debugger, not dumpable, or "
							       "kernel.yama.ptrace_scope forbids it)"
							     : "");
			return;
		}
		usleep(1000);
		n = threads(j, tids, 256);
		if (n == 0) {
			st_ptcall_fail(j, "process %d is gone", j->pid);
			return;
		}
	}
	st_ptcall_fail(j, "process %d reached no safe point to %s within %d ms (every thread busy "
			  "in libc or blocked in a call that may hold its locks)",
		       j->pid, what, DEADLINE_MS);
}

static bool stopped(const struct st_ptstop *s, pid_t tid)
{
	for (int i = 0; i < s->n; i++)
		if (s->tids[i] == tid)
			return true;
	return false;
}

int st_ptcall_stop_all(struct st_ptcall *j, struct st_ptstop *s)
{
	static pid_t listed[ST_PTCALL_MAX_THREADS];
	bool more = true;

	s->n = 0;
	while (more) {
		int n = threads(j, listed, ST_PTCALL_MAX_THREADS);

		more = false;
		if (n == ST_PTCALL_MAX_THREADS) {
			st_ptcall_resume_all(s);
			snprintf(j->msg, sizeof(j->msg), "process %d has %d threads or more: too many to "
				 "stop", j->pid, n);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			pid_t tid = listed[i];

			if (stopped(s, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
				if (errno == ESRCH)
					continue; /* ended meanwhile */
				snprintf(j->msg, sizeof(j->msg), "cannot attach to thread %d of process "
					 "%d: %s", tid, j->pid, strerror(errno));
				st_ptcall_resume_all(s);
				return -1;
			}
			if (interrupt(j, tid) < 0 || !st_insp_thread_of(j->proc, tid)) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				continue;
			}
			s->tids[s->n++] = tid;
			more = true; /* (it may have started one before it stopped) */
		}
	}
	if (s->n == 0) {
		snprintf(j->msg, sizeof(j->msg), "process %d is gone", j->pid);
		return -1;
	}
	return 0;
}

void st_ptcall_resume_all(struct st_ptstop *s)
{
	for (int i = 0; i < s->n; i++)
		ptrace(PTRACE_DETACH, s->tids[i], 0, 0);
	s->n = 0;
}

/* The address of symbol name of the object fd (f its facts) at base, if
 * within the object. */
static uint64_t symbol_in(int fd, const struct st_insp_facts *f, const struct st_ptrange *o,
			  const char *name)
{
	uint64_t v = st_insp_elf_symbol(fd, name);

	if (!v || v >= o->memsz + (f->is_pic ? 0 : o->base))
		return 0;
	return (f->is_pic ? o->base : 0) + v;
}

int st_ptcall_prepare(struct st_ptcall *j, const struct st_insp_proc *p, bool need_dlopen)
{
	struct st_insp_mapping *maps;
	dev_t *fuse;
	size_t n, nfuse = st_insp_user_fs(p, &fuse);
	int ret = nfuse == SIZE_MAX ? -EACCES : st_insp_read_maps(p, &maps, &n);

	j->proc = p;
	j->pid = p->pid;
	if (ret < 0) {
		free(fuse);
		st_ptcall_fail(j, "cannot read the mappings of process %d: %s", j->pid, strerror(-ret));
		return -1;
	}
	j->objs = calloc(n ? n : 1, sizeof(*j->objs));
	for (size_t i = 0; j->objs && i < n; i++) {
		const struct st_insp_facts *f;
		struct st_ptrange *o = &j->objs[j->nobjs];
		int fd;

		if (maps[i].offset != 0)
			continue;
		j->dynamic |= basename_is(maps[i].path, "ld-linux") || basename_is(maps[i].path, "ld64");
		j->has_core |= basename_is(maps[i].path, "libshimtrace.so");
		if (st_insp_dev_in(maps[i].dev, fuse, nfuse))
			continue;
		fd = st_insp_open_mapped(p, maps[i].start, maps[i].end, maps[i].dev, maps[i].ino,
					 maps[i].path);
		if (fd < 0)
			continue;
		f = st_insp_facts(fd);
		if (f) {
			o->base = f->is_pic ? maps[i].start - (f->lowest_off0 & ~(uint64_t)4095)
					    : f->lowest;
			o->memsz = f->is_pic ? f->end : f->end - f->lowest;
			o->unsafe = unsafe_object(maps[i].path);
			j->nobjs++;
			if (basename_is(maps[i].path, "libc.so") && !j->fn_dlopen) {
				j->fn_dlopen = symbol_in(fd, f, o, "dlopen");
				j->fn_dlerror = symbol_in(fd, f, o, "dlerror");
				j->fn_dlsym = symbol_in(fd, f, o, "dlsym");
				j->fn_prctl = symbol_in(fd, f, o, "prctl");
			}
			if (j->want_obj && basename_is(maps[i].path, j->want_obj) && !j->fn_want)
				j->fn_want = symbol_in(fd, f, o, j->want_sym);
		}
		close(fd);
	}
	st_insp_maps_free(maps, n);
	free(fuse);
	if (!j->fn_dlopen && need_dlopen) {
		st_ptcall_fail(j, "process %d has no dlopen in its libc", j->pid);
		return -1;
	}
	return 0;
}

void st_ptcall_free(struct st_ptcall *j)
{
	free(j->objs);
	j->objs = NULL;
	j->nobjs = 0;
}
