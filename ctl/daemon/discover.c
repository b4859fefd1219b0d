/*
 * Processes that were running before the daemon: found through their
 * status memory.
 *
 * A process carrying the preload keeps, whatever happens, a memfd named
 * "shimtrace-status": its enable state and, from ST_ABI_REGLOG_OFF, the log
 * of its registrations (abi.h). At start the daemon looks through
 * /proc/PID/fd for that memfd in every process it may trace (its user's, or
 * all for root), opens it through /proc (the same rights as ptrace), reads
 * the process's tracepoints from the log and registers the process as if
 * it had connected; it writes its socket path into the control page. The
 * process's enable bits then switch on like those of any other, and its
 * first enabled event connects to the daemon to hand over its buffers
 * (core/control.c, st__control_ensure). Until then the daemon reads the log
 * again every tick, for the providers a dlopen() adds.
 *
 * A process another live daemon controls (the control page names it) is
 * left to it. Everything read is validated as a message from the process
 * would be: a process can spoil only its own registration.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctl/daemon/daemon.h"
#include "ctl/daemon/loop.h"

#define STATUS_LINK "/memfd:shimtrace-status (deleted)"

/* Whether pid runs (a zombie does not: a killed daemon may stay one). */
static bool alive(pid_t pid)
{
	char path[64], buf[512], *paren, state = 0;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	paren = strrchr(buf, ')');
	if (paren && paren[1] == ' ')
		state = paren[2];
	return state && state != 'Z' && state != 'X';
}

/* The descriptor number of the status memfd of pid, or -1. */
static int status_fd_of(pid_t pid)
{
	char path[64], link[sizeof(STATUS_LINK) + 1];
	struct dirent *e;
	DIR *dir;
	int found = -1;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while (found < 0 && (e = readdir(dir))) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(dir), e->d_name, link, sizeof(link) - 1);
		if (n == (ssize_t)sizeof(STATUS_LINK) - 1 && memcmp(link, STATUS_LINK, (size_t)n) == 0)
			found = atoi(e->d_name);
	}
	closedir(dir);
	return found;
}

/* Name, parent and executable from /proc. */
static int proc_facts(struct st_proc *p)
{
	char path[64], buf[512], *close_paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold anything, even ")" */
	close_paren = strrchr(buf, ')');
	if (!close_paren || sscanf(close_paren + 1, " %*c %d", &p->ppid) != 1)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/comm", p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, p->name, sizeof(p->name) - 1);
		close(fd);
		p->name[n > 0 ? n : 0] = '\0';
		p->name[strcspn(p->name, "\n")] = '\0';
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", p->pid);
	n = readlink(path, p->exe, sizeof(p->exe) - 1);
	p->exe[n > 0 ? n : 0] = '\0';
	return 0;
}

/* Takes in the log records the process appended since the last call. */
void st_reglog_catch_up(struct st_daemon *d, struct st_proc *p)
{
	static uint8_t buf[ST_ABI_MSG_MAX];
	uint64_t end;

	if (!p->control || p->ended)
		return;
	end = __atomic_load_n(&p->control->reglog_len, __ATOMIC_ACQUIRE);
	if (end > ST_ABI_REGLOG_MAX || end < p->reglog_pos) {
		if (!p->warned[7]) {
			st_log(ST_LOG_WARN, "process %d (%s): bad registration log length", p->pid,
			       p->name);
			p->warned[7] = 1;
		}
		return;
	}
	while (p->reglog_pos + sizeof(struct st_abi_msg) <= end) {
		struct st_abi_msg h;
		uint64_t at = ST_ABI_REGLOG_OFF + p->reglog_pos;

		if (pread(p->status_fd, &h, sizeof(h), (off_t)at) != (ssize_t)sizeof(h) ||
		    h.len < sizeof(h) || h.len > sizeof(buf) || p->reglog_pos + h.len > end ||
		    (h.type != ST_MSG_PROVIDER && h.type != ST_MSG_PROVIDER_GONE) ||
		    pread(p->status_fd, buf, h.len, (off_t)at) != (ssize_t)h.len ||
		    st_proc_message(d, p, buf, h.len) < 0) {
			st_log(ST_LOG_WARN, "process %d (%s): bad registration log: ignored from byte %llu",
			       p->pid, p->name, (unsigned long long)p->reglog_pos);
			p->reglog_pos = ST_ABI_REGLOG_MAX; /* read no more of it */
			return;
		}
		p->reglog_pos += (h.len + 7) & ~7u;
	}
}

static bool registered(const struct st_daemon *d, pid_t pid)
{
	for (const struct st_proc *p = d->procs; p; p = p->next)
		if (!p->ended && p->pid == pid)
			return true;
	return false;
}

/* Takes process pid in if it carries the preload and nobody controls it. */
static void adopt(struct st_daemon *d, pid_t pid)
{
	char path[96];
	struct st_abi_control *c;
	struct st_proc *p;
	struct stat st;
	int nfd, fd, seals;

	if (stat((snprintf(path, sizeof(path), "/proc/%d", pid), path), &st) < 0 ||
	    (d->uid != 0 && st.st_uid != d->uid))
		return;
	nfd = status_fd_of(pid);
	if (nfd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, nfd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) < 0 ||
	    (uint64_t)st.st_size < ST_ABI_REGLOG_OFF + ST_ABI_REGLOG_MAX) {
		close(fd);
		return;
	}
	c = mmap(NULL, ST_ABI_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED) {
		close(fd);
		return;
	}
	if (c->magic != ST_ABI_CONTROL_MAGIC || c->version != ST_ABI_VERSION ||
	    (c->daemon_pid != getpid() && alive(c->daemon_pid)) || !(p = calloc(1, sizeof(*p)))) {
		munmap(c, ST_ABI_PAGE);
		close(fd);
		return;
	}
	p->fd = -1;
	p->pid = pid;
	p->uid = st.st_uid;
	p->gid = st.st_gid;
	if (stat((snprintf(path, sizeof(path), "/proc/%d", pid), path), &st) == 0) {
		p->uid = st.st_uid;
		p->gid = st.st_gid;
	}
	p->status_fd = fd;
	p->status_size = ST_ABI_REGLOG_OFF;
	p->control = c;
	p->instance = d->next_instance++;
	p->hello = true;
	p->discovered = true;
	if (proc_facts(p) < 0) {
		munmap(c, ST_ABI_PAGE);
		close(fd);
		free(p);
		return;
	}
	p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	p->next = d->procs;
	d->procs = p;
	if (p->pidfd >= 0)
		st_loop_watch(d, p->pidfd, ST_TAG_PROC_EXIT, p);
	st_proc_claim(d, p);
	st_reglog_catch_up(d, p);
	st_session_apply(d, p);
	st_log(ST_LOG_INFO, "process %d (%s) found running: registered", p->pid, p->name);
}

void st_discover(struct st_daemon *d)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid();

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self || registered(d, (pid_t)pid))
			continue;
		adopt(d, (pid_t)pid);
	}
	closedir(dir);
}
