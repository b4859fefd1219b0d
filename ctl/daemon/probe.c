/*
 * load-probe: makes a running process dlopen() a library, without a thread
 * or a signal handler of ours in it.
 *
 * The daemon does what a debugger does to call a function in its inferior:
 * it attaches to one thread of the process with ptrace (PTRACE_SEIZE, then
 * PTRACE_INTERRUPT, which stops only that thread), saves its registers and
 * extended state, sets it up to call dlopen(path, RTLD_NOW) on its own
 * stack with a return address of 0, lets it run until the return faults
 * on address 0 (that SIGSEGV is ours and never delivered), restores the
 * registers and detaches. A system call the thread was blocked in is
 * restarted by the kernel exactly as after any ptrace stop: the program
 * sees no EINTR, and its other threads never stop.
 *
 * Why not a signal: a handler of ours would take a signal number from the
 * program, make blocking calls such as sleep() and poll() return early,
 * and need chaining through sigaction(); ptrace needs nothing in the
 * process and the daemon already has the rights it needs (same user, or
 * root).
 *
 * The one danger is the point where the thread stops: dlopen takes locks
 * (malloc's, the loader's, stdio's from constructors), and a thread stopped
 * while holding one would deadlock in it. So the thread is taken only at a
 * safe point: blocked in (or just back from) a system call on a list of
 * calls no libc lock is held around (sleeping, waiting for input, poll,
 * epoll, wait), or running code outside libc, the loader and shimtrace.
 * Otherwise it is let go and tried again a millisecond later, up to three
 * seconds.
 *
 * The work runs on a short-lived thread of the daemon (ptrace requests come
 * from the thread that attached, and the daemon's loop must go on serving
 * the process: the library's providers register while dlopen runs). It
 * shares nothing with the loop but its job, handed back through an
 * eventfd.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl/control.h"
#include "ctl/daemon/commands.h"
#include "ctl/daemon/loop.h"

#define DEADLINE_MS 3000
#define XSTATE_MAX (64 * 1024)

struct probe_job {
	struct probe_job *next;
	struct st_request req; /* its fd and peer; items are gone */
	pid_t pid;
	char lib[ST_PATH_MAX];
	uint64_t fn_dlopen, fn_dlerror;
	struct st_object *objs; /* the process's objects, for the safe point test */
	uint32_t nobjs;
	pthread_t thread;
	bool done;
	int status;
	char msg[ST_PATH_MAX + 1024];
	uint8_t xstate[XSTATE_MAX]; /* the stopped thread's extended state */
};

static struct probe_job *jobs;
static int done_fd = -1;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The value of the dynamic symbol name in the ELF file path, or 0. */
static uint64_t elf_symbol(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t value = 0;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !value && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0) {
				value = sym.st_value;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return value;
}

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

static bool ip_safe(const struct probe_job *j, uint64_t ip)
{
	for (uint32_t i = 0; i < j->nobjs; i++)
		if (ip >= j->objs[i].base && ip - j->objs[i].base < j->objs[i].memsz)
			return !unsafe_object(j->objs[i].path);
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

/* Waits for the next stop or end of tid; returns the wait status or -1. */
static int wait_tid(pid_t tid)
{
	int st;

	for (;;) {
		pid_t r = waitpid(tid, &st, __WALL);

		if (r == tid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
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
static int interrupt(pid_t tid)
{
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
		return -1;
	for (;;) {
		int st = wait_tid(tid);

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

static int write_mem(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/*
 * Calls fn(a0, a1) on tid, stopped, whose registers are `saved`; the string
 * arg (if any) is copied onto its stack and passed as a0. Returns 0 and the
 * result in *ret, or -1 (the thread or process is gone).
 */
static int call(struct probe_job *j, pid_t tid, const struct user_regs_struct *saved, uint64_t fn,
		const char *arg, uint64_t a1, uint64_t *ret)
{
	struct user_regs_struct r = *saved;
	uint64_t sp = saved->rsp - 128; /* below the red zone */
	uint64_t zero = 0;

	if (arg) {
		size_t len = strlen(arg) + 1;

		sp = (sp - len) & ~(uint64_t)15;
		if (write_mem(j->pid, sp, arg, len) < 0)
			return -1;
		r.rdi = sp;
	}
	sp &= ~(uint64_t)15;
	sp -= 8; /* the return address: at entry, rsp + 8 is 16-byte aligned */
	if (write_mem(j->pid, sp, &zero, sizeof(zero)) < 0)
		return -1;
	r.rsi = a1;
	r.rsp = sp;
	r.rip = fn;
	r.rax = 0;
	r.orig_rax = (uint64_t)-1; /* no system call to restart now */
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0 || ptrace(PTRACE_CONT, tid, 0, 0) < 0)
		return -1;
	for (;;) {
		int st = wait_tid(tid);
		int sig;

		if (gone(st))
			return -1;
		sig = WSTOPSIG(st);
		if ((st >> 16) == 0 && sig == SIGSEGV && ptrace(PTRACE_GETREGS, tid, 0, &r) == 0 &&
		    r.rip == 0) {
			*ret = r.rax;
			return 0;
		}
		/* The program's own signals go on to it; group stops end. */
		if (ptrace(PTRACE_CONT, tid, 0, (st >> 16) ? 0 : sig) < 0)
			return -1;
	}
}

static void read_string(pid_t pid, uint64_t addr, char *out, size_t n)
{
	struct iovec local = { out, n - 1 }, remote = { (void *)(uintptr_t)addr, n - 1 };
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	out[got > 0 ? got : 0] = '\0';
}

static void fail(struct probe_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct probe_job *j, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(j->msg, sizeof(j->msg), fmt, ap);
	va_end(ap);
	j->status = ST_EXIT_FAIL;
}

/* Runs dlopen on tid, stopped at a safe point. */
static void inject(struct probe_job *j, pid_t tid)
{
	struct iovec xs = { j->xstate, sizeof(j->xstate) };
	struct user_regs_struct saved;
	uint64_t handle = 0, err;
	char why[512];

	if (ptrace(PTRACE_GETREGS, tid, 0, &saved) < 0 ||
	    ptrace(PTRACE_GETREGSET, tid, NT_X86_XSTATE, &xs) < 0) {
		fail(j, "cannot read the registers of thread %d: %s", tid, strerror(errno));
		return;
	}
	if (call(j, tid, &saved, j->fn_dlopen, j->lib, 2 /* RTLD_NOW */, &handle) < 0) {
		fail(j, "process %d ended while loading %s", j->pid, j->lib);
		return;
	}
	if (!handle) {
		why[0] = '\0';
		if (j->fn_dlerror && call(j, tid, &saved, j->fn_dlerror, NULL, 0, &err) == 0 && err)
			read_string(j->pid, err, why, sizeof(why));
		fail(j, "process %d cannot load %s: %s", j->pid, j->lib, why[0] ? why : "dlopen failed");
	} else {
		snprintf(j->msg, sizeof(j->msg), "process %d loaded %s\n", j->pid, j->lib);
		j->status = ST_EXIT_OK;
	}
	ptrace(PTRACE_SETREGSET, tid, NT_X86_XSTATE, &xs);
	ptrace(PTRACE_SETREGS, tid, 0, &saved);
}

/* Whether tid, stopped, is at a safe point (see the top of the file). */
static bool at_safe_point(const struct probe_job *j, pid_t tid)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return false;
	if ((int64_t)r.orig_rax >= 0)
		return syscall_safe((long)r.orig_rax);
	return ip_safe(j, r.rip);
}

/* The threads of the process, at most max. */
static int threads(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *e;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((e = readdir(dir)) && n < max)
		if (e->d_name[0] != '.')
			tids[n++] = atoi(e->d_name);
	closedir(dir);
	return n;
}

static void run(struct probe_job *j)
{
	uint64_t deadline = now_ms() + DEADLINE_MS;
	pid_t tids[256];
	int n = threads(j->pid, tids, 256), attach_errno = 0;

	if (n == 0) {
		fail(j, "process %d is gone", j->pid);
		return;
	}
	while (now_ms() < deadline) {
		for (int i = 0; i < n; i++) {
			pid_t tid = tids[i];
			bool safe;

			if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
				attach_errno = errno;
				continue;
			}
			if (interrupt(tid) < 0) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				continue;
			}
			safe = at_safe_point(j, tid);
			if (safe)
				inject(j, tid);
			ptrace(PTRACE_DETACH, tid, 0, 0);
			if (safe)
				return;
		}
		if (attach_errno && attach_errno != ESRCH) {
			fail(j, "cannot attach to process %d: %s%s", j->pid, strerror(attach_errno),
			     attach_errno == EPERM ? " (traced by a debugger, or not dumpable?)" : "");
			return;
		}
		usleep(1000);
		n = threads(j->pid, tids, 256);
		if (n == 0) {
			fail(j, "process %d is gone", j->pid);
			return;
		}
	}
	fail(j, "process %d reached no safe point to load %s within %d ms (every thread busy "
		"in libc or blocked in a call that may hold its locks)", j->pid, j->lib, DEADLINE_MS);
}

static void *probe_thread(void *arg)
{
	struct probe_job *j = arg;
	uint64_t one = 1;

	run(j);
	__atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
	if (write(done_fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow here */
	}
	return NULL;
}

int st_cmd_load_probe(struct st_daemon *d, struct st_request *r, struct st_proc *p,
		      const char *library)
{
	const char *V = "shimtrace load-probe";
	struct probe_job *j;
	sigset_t all, old;
	int ret;

	if (strlen(library) >= sizeof(j->lib))
		return st_reply_error(r, ST_EXIT_USAGE, "%s: library path too long", V);
	if (done_fd < 0) {
		done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (done_fd < 0 || st_loop_watch(d, done_fd, ST_TAG_PROBE, NULL) < 0)
			return st_reply_error(r, ST_EXIT_FAIL, "%s: eventfd: %s", V, strerror(errno));
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return st_reply_error(r, ST_EXIT_FAIL, "%s: out of memory", V);
	j->pid = p->pid;
	snprintf(j->lib, sizeof(j->lib), "%s", library);
	if (st_maps_read(p->pid, &j->objs, &j->nobjs) < 0) {
		free(j);
		return st_reply_error(r, ST_EXIT_FAIL, "%s: cannot read the mappings of process %d",
				      V, p->pid);
	}
	for (uint32_t i = 0; i < j->nobjs; i++) {
		if (!basename_is(j->objs[i].path, "libc.so"))
			continue;
		j->fn_dlopen = elf_symbol(j->objs[i].path, "dlopen");
		j->fn_dlerror = elf_symbol(j->objs[i].path, "dlerror");
		if (j->fn_dlopen)
			j->fn_dlopen += j->objs[i].base;
		if (j->fn_dlerror)
			j->fn_dlerror += j->objs[i].base;
	}
	if (!j->fn_dlopen) {
		st_objects_free(j->objs, j->nobjs);
		free(j);
		return st_reply_error(r, ST_EXIT_FAIL, "%s: process %d has no dlopen in its libc", V,
				      p->pid);
	}
	j->req = *r;
	j->req.nitems = 0;
	j->req.verb = NULL;
	j->req.out = NULL;
	j->req.out_len = j->req.out_cap = 0;
	/* The worker takes no signal: the loop's signalfd must get them all. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&j->thread, NULL, probe_thread, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret != 0) {
		st_objects_free(j->objs, j->nobjs);
		free(j);
		return st_reply_error(r, ST_EXIT_FAIL, "%s: cannot start a thread: %s", V,
				      strerror(ret));
	}
	j->next = jobs;
	jobs = j;
	return ST_CTL_DEFERRED;
}

/* The loop: a worker finished. Replies to its request. */
void st_probe_done(struct st_daemon *d)
{
	uint64_t n;

	(void)d;
	if (read(done_fd, &n, sizeof(n)) < 0) {
		/* nothing new */
	}
	for (struct probe_job **pp = &jobs; *pp;) {
		struct probe_job *j = *pp;

		if (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE)) {
			pp = &j->next;
			continue;
		}
		pthread_join(j->thread, NULL);
		*pp = j->next;
		if (j->status == ST_EXIT_OK)
			st_reply(&j->req, "%s", j->msg);
		else
			st_reply_error(&j->req, j->status, "shimtrace load-probe: %.900s", j->msg);
		st_request_finish(&j->req, j->status);
		st_objects_free(j->objs, j->nobjs);
		free(j);
	}
}

/* Daemon exit: waits for the workers (each ends within its deadline). */
void st_probe_fini(struct st_daemon *d)
{
	while (jobs) {
		uint64_t one;

		while (!__atomic_load_n(&jobs->done, __ATOMIC_ACQUIRE))
			usleep(1000);
		if (read(done_fd, &one, sizeof(one)) < 0) {
			/* nothing */
		}
		st_probe_done(d);
	}
	if (done_fd >= 0)
		close(done_fd);
	done_fd = -1;
}
