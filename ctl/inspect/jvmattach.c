/*
 * A client of HotSpot's attach mechanism, the one the JDK's jcmd and
 * VirtualMachine.loadAgent use, run in a probe inspector with the
 * credentials of the JVM's owner: a JVMTI agent is loaded into a running
 * JVM and its Agent_OnAttach run.
 *
 * The mechanism (HotSpot's attachListener_linux.cpp):
 *   - the listener, a thread of the JVM, serves a Unix socket bound at
 *     /tmp/.java_pid<PID> (the JVM's /tmp, its pid in its own pid
 *     namespace), mode 0600, owned by its effective uid; it admits a peer
 *     with its effective uid and gid, or root;
 *   - it is started on demand: a file .attach_pid<PID>, owned by the
 *     JVM's effective uid, in its working directory or /tmp, then a
 *     SIGQUIT (without the file, SIGQUIT prints a thread dump);
 *   - a request: "1" (the protocol's version), the command, then three
 *     arguments, each NUL-terminated (an empty one too), each at most
 *     1024 bytes; the answer: the command's status as a decimal line, its
 *     output, then the end of the connection;
 *   - load AGENT true OPTIONS: dlopen of AGENT (an absolute path: true),
 *     then Agent_OnAttach(vm, OPTIONS); status 0 and a line "return code:
 *     N", N what Agent_OnAttach returned (an agent that returns non-zero
 *     is unloaded), or a non-zero status and why it could not be loaded.
 *     (JDK 8: the status is Agent_OnAttach's code, and no line.)
 *
 * Before anything is sent to the process: it must map libjvm.so (a
 * SIGQUIT kills most programs, and prints a thread dump in any other
 * JVM), its attach mechanism must be on (the JVM's performance data says
 * so, as the JDK's client reads it; without them, its command line and
 * environment must not say -XX:+DisableAttachMechanism), and it must
 * catch SIGQUIT. One SIGQUIT is sent, through its pidfd, and the socket
 * waited for LISTEN_MS at most; the trigger file is removed after.
 *
 * Paths: the JVM's files are its own /tmp and working directory, reached
 * through /proc/PID/root and /proc/PID/cwd, with the owner's rights
 * only. /tmp is resolved inside the JVM's root (a symbolic link there
 * leads where it leads for the JVM, never out of its root); the socket
 * and the trigger file are never followed through a symbolic link; the
 * socket must be a socket owned by the JVM's owner, and is connected to
 * through the descriptor that checked it. Nothing waits without a bound:
 * the connection is non-blocking, each step polled until its deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/monotime.h"
#include "ctl/inspect/hsperf.h"
#include "ctl/inspect/jvmattach.h"

#define LISTEN_MS 10000	   /* for the listener to start */
#define ANSWER_MS 15000	   /* for Agent_OnAttach to return */
#define ARG_LEN 1024	   /* an argument's bytes at most (HotSpot's bound) */
#define PERF_MAX (1 << 20) /* performance data read at most */
#define FILE_MAX (1 << 20) /* command line or environment read at most */

/* The milliseconds left until deadline, for poll: 0 past it. */
static int left_ms(uint64_t deadline)
{
	uint64_t now = st_now_ms();

	return now < deadline ? (int)(deadline - now) : 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Its pid in its own namespace (the last of NSpid: none, the same) and
 * whether it catches SIGQUIT, from its status. */
static int status_facts(const struct st_insp_proc *p, pid_t *nspid, bool *catches_quit)
{
	char buf[4096];
	const char *ns, *cgt;

	if (st_insp_read_text(p->dirfd, "status", buf, sizeof(buf)) < 0)
		return -1;
	*nspid = p->pid;
	ns = strstr(buf, "\nNSpid:");
	if (ns) {
		const char *end = ns + strlen("\nNSpid:") + strcspn(ns + strlen("\nNSpid:"), "\n");

		while (end > ns && (end[-1] >= '0' && end[-1] <= '9'))
			end--;
		*nspid = (pid_t)strtol(end, NULL, 10);
	}
	cgt = strstr(buf, "\nSigCgt:");
	*catches_quit = cgt && (strtoull(cgt + strlen("\nSigCgt:"), NULL, 16) >> (SIGQUIT - 1)) & 1;
	return *nspid > 0 ? 0 : -1;
}

/* What its mappings say: a HotSpot JVM, where its performance data is
 * (/tmp/hsperfdata_USER/NSPID), whether the file of agent_st is mapped. */
struct mapped {
	bool hotspot, agent;
	uint64_t perf_start, perf_end;
};

static int mappings(const struct st_jvm *jvm, const struct stat *agent_st, const char *agent,
		    struct mapped *m)
{
	struct st_insp_mapping *maps;
	char perf[32];
	size_t n;

	memset(m, 0, sizeof(*m));
	if (st_insp_read_maps(jvm->p, &maps, &n) < 0)
		return -1;
	snprintf(perf, sizeof(perf), "%d", (int)jvm->nspid);
	for (size_t i = 0; i < n; i++) {
		const char *path = maps[i].path;

		m->hotspot |= strcmp(base_name(path), "libjvm.so") == 0;
		if (!m->perf_start && strstr(path, "/hsperfdata_") &&
		    strcmp(base_name(path), perf) == 0) {
			m->perf_start = maps[i].start;
			m->perf_end = maps[i].end;
		}
		if (agent)
			m->agent |= strcmp(path, agent) == 0 ||
				    (agent_st && maps[i].dev == agent_st->st_dev &&
				     maps[i].ino == agent_st->st_ino);
	}
	st_insp_maps_free(maps, n);
	return 0;
}

/* What its performance data say of its attach mechanism (hsperf.h). */
static int perf_attachable(const struct st_jvm *jvm, const struct mapped *m)
{
	size_t len = m->perf_end - m->perf_start;
	unsigned char *buf;
	int fd, ret = -1;

	if (!m->perf_start)
		return -1;
	len = len > PERF_MAX ? PERF_MAX : len;
	fd = openat(jvm->p->dirfd, "mem", O_RDONLY | O_CLOEXEC);
	buf = fd >= 0 ? malloc(len) : NULL;
	if (buf && pread(fd, buf, len, (off_t)m->perf_start) == (ssize_t)len)
		ret = st_hsperf_attachable(buf, len);
	free(buf);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Whether its file name (cmdline, environ) holds text. */
static bool file_says(const struct st_jvm *jvm, const char *name, const char *text)
{
	char *buf = malloc(FILE_MAX);
	int fd = openat(jvm->p->dirfd, name, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t got = 0;
	bool says = false;

	while (buf && fd >= 0 && len < FILE_MAX &&
	       (got = read(fd, buf + len, FILE_MAX - len)) > 0)
		len += (size_t)got;
	says = buf && memmem(buf, len, text, strlen(text));
	free(buf);
	if (fd >= 0)
		close(fd);
	return says;
}

/* Its /tmp, resolved inside its root; or -1. */
static int open_tmp(const struct st_insp_proc *p)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int root = openat(p->dirfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC), fd;

	if (root < 0)
		return -1;
	fd = (int)syscall(SYS_openat2, root, "tmp", &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) /* (before Linux 5.6) */
		fd = openat(root, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(root);
	return fd;
}

/* The listener's socket (O_PATH), or -1: errno ENOENT when there is
 * none, EPERM when what is there is not a socket of the JVM's owner. */
static int find_socket(const struct st_jvm *jvm)
{
	char name[32];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), ".java_pid%d", (int)jvm->nspid);
	fd = openat(jvm->tmpfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != jvm->uid) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* Whether the process has ended (its pidfd is readable), waiting ms. */
static bool ended(const struct st_jvm *jvm, int ms)
{
	struct pollfd pf = { jvm->p->pidfd, POLLIN, 0 };

	return poll(&pf, 1, ms) > 0;
}

/* Starts the listener: the trigger file in its /tmp, else its working
 * directory, one SIGQUIT, the socket waited for, the file removed. */
static int start_listener(struct st_jvm *jvm, char *why, size_t n)
{
	int cwd = openat(jvm->p->dirfd, "cwd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int where[2] = { jvm->tmpfd, cwd }, dir = -1, fd = -1, err = 0;
	uint64_t deadline;
	char name[32];

	snprintf(name, sizeof(name), ".attach_pid%d", (int)jvm->nspid);
	for (int i = 0; i < 2 && dir < 0; i++) {
		fd = where[i] < 0 ? -1
				  : openat(where[i], name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
								   O_CLOEXEC,
					   0600);
		if (fd >= 0) {
			close(fd);
			dir = where[i];
		} else if (!err) {
			err = errno;
		}
	}
	if (dir < 0) {
		snprintf(why, n, "cannot create %s in the /tmp or the working directory of JVM %d: %s",
			 name, jvm->p->pid, strerror(err));
		if (cwd >= 0)
			close(cwd);
		return -1;
	}
	fd = -1;
	if (syscall(SYS_pidfd_send_signal, jvm->p->pidfd, SIGQUIT, NULL, 0) < 0) {
		snprintf(why, n, "cannot signal JVM %d: %s", jvm->p->pid, strerror(errno));
	} else {
		deadline = st_now_ms() + LISTEN_MS;
		while ((fd = find_socket(jvm)) < 0 && errno == ENOENT && st_now_ms() < deadline &&
		       !ended(jvm, 20))
			;
		if (fd < 0 && errno == EPERM)
			snprintf(why, n, "the attach socket of JVM %d is not a socket of its owner",
				 jvm->p->pid);
		else if (fd < 0)
			snprintf(why, n, "the attach listener of JVM %d did not start within %d s%s",
				 jvm->p->pid, LISTEN_MS / 1000, ended(jvm, 0) ? " (it ended)" : "");
	}
	unlinkat(dir, name, 0);
	if (cwd >= 0)
		close(cwd);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int st_jvm_listener(const struct st_insp_proc *p, uid_t uid, struct st_jvm *jvm, char *why,
		    size_t n)
{
	struct mapped m;
	bool catches_quit;
	int fd, attachable;

	*jvm = (struct st_jvm){ .p = p, .uid = uid, .tmpfd = -1 };
	if (status_facts(p, &jvm->nspid, &catches_quit) < 0 || mappings(jvm, NULL, NULL, &m) < 0) {
		snprintf(why, n, "process %d is gone", p->pid);
		return -1;
	}
	if (!m.hotspot) {
		snprintf(why, n, "process %d is not a HotSpot JVM (it maps no libjvm.so): no JVM agent "
				 "can be loaded into it",
			 p->pid);
		return -1;
	}
	jvm->tmpfd = open_tmp(p);
	if (jvm->tmpfd < 0) {
		snprintf(why, n, "cannot open the /tmp of JVM %d: %s", p->pid, strerror(errno));
		return -1;
	}
	fd = find_socket(jvm);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == EPERM) {
		snprintf(why, n, "the attach socket of JVM %d is not a socket of its owner", p->pid);
		return -1;
	}
	attachable = perf_attachable(jvm, &m);
	if (attachable == 0 ||
	    (attachable < 0 && (file_says(jvm, "cmdline", "-XX:+DisableAttachMechanism") ||
				file_says(jvm, "environ", "-XX:+DisableAttachMechanism")))) {
		snprintf(why, n, "JVM %d was started with -XX:+DisableAttachMechanism: no agent can be "
				 "loaded into it",
			 p->pid);
		return -1;
	}
	if (!catches_quit) {
		snprintf(why, n, "JVM %d does not catch SIGQUIT (started with -Xrs, or not started "
				 "yet): its attach listener cannot be started",
			 p->pid);
		return -1;
	}
	return start_listener(jvm, why, n);
}

/* A connection to the listener, or -1 with why. */
static int connect_listener(const struct st_jvm *jvm, uint64_t deadline, char *why, size_t n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int path = find_socket(jvm), s = -1;

	if (path >= 0)
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0) {
		snprintf(why, n, "the attach socket of JVM %d is gone", jvm->p->pid);
		if (path >= 0)
			close(path);
		return -1;
	}
	/* (the socket checked, not whatever its name names now) */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", path);
	while (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		/* (a full backlog: the listener serves one request at a time) */
		if ((errno == EAGAIN || errno == EINTR) && st_now_ms() < deadline && !ended(jvm, 10))
			continue;
		snprintf(why, n, "cannot connect to the attach listener of JVM %d: %s", jvm->p->pid,
			 strerror(errno));
		close(s);
		s = -1;
		break;
	}
	close(path);
	return s;
}

/* Sends len bytes, or reads up to size - 1 (NUL-terminated) until the
 * listener closes, each before deadline: 0, or -1. */
static int exchange(int s, const char *req, size_t len, char *ans, size_t size, uint64_t deadline)
{
	size_t got = 0;

	while (len) {
		struct pollfd pf = { s, POLLOUT, 0 };
		ssize_t k = send(s, req, len, MSG_NOSIGNAL);

		if (k > 0) {
			req += k;
			len -= (size_t)k;
		} else if ((errno != EAGAIN && errno != EINTR) || st_now_ms() >= deadline) {
			return -1;
		} else {
			poll(&pf, 1, left_ms(deadline));
		}
	}
	for (;;) {
		struct pollfd pf = { s, POLLIN, 0 };
		ssize_t k = got < size - 1 ? read(s, ans + got, size - 1 - got) : 0;

		if (k == 0)
			break;
		if (k > 0) {
			got += (size_t)k;
		} else if ((errno != EAGAIN && errno != EINTR) || st_now_ms() >= deadline) {
			return -1;
		} else {
			poll(&pf, 1, left_ms(deadline));
		}
	}
	ans[got] = '\0';
	return 0;
}

/* The JVM's answer to load, ans (its own text: made one printable line
 * for the message): 0, or -1 with why. */
static int verdict(const struct st_jvm *jvm, char *ans, char *why, size_t n)
{
	char *end, *rest, *code;
	long status = strtol(ans, &end, 10);

	if (end == ans || *end != '\n') {
		snprintf(why, n, "JVM %d answered outside the attach protocol", jvm->p->pid);
		return -1;
	}
	rest = end + 1;
	for (size_t i = strlen(rest); i > 0 && (rest[i - 1] == '\n' || rest[i - 1] == ' '); i--)
		rest[i - 1] = '\0';
	for (char *c = rest; *c; c++)
		if (*c == '\n')
			*c = ' ';
		else if ((unsigned char)*c < ' ' || (unsigned char)*c >= 0x7f)
			*c = '?';
	code = strstr(rest, "return code: ");
	if (status == 0 && code)
		status = strtol(code + strlen("return code: "), NULL, 10); /* Agent_OnAttach's */
	if (status == 0)
		return 0; /* (JDK 8: no line, Agent_OnAttach's code is the status) */
	if (code || !*rest)
		snprintf(why, n, "the agent refused to start in JVM %d (Agent_OnAttach returned %ld)",
			 jvm->p->pid, status);
	else if (status == 101)
		snprintf(why, n, "JVM %d speaks another version of the attach protocol: %s",
			 jvm->p->pid, rest);
	else
		snprintf(why, n, "JVM %d could not load the agent: %s", jvm->p->pid, rest);
	return -1;
}

int st_jvm_load(struct st_jvm *jvm, const char *agent, const char *options, bool *already,
		char *why, size_t n)
{
	size_t alen = strlen(agent), olen = strlen(options), len;
	uint64_t deadline = st_now_ms() + ANSWER_MS;
	char req[2 * ARG_LEN + 32], ans[4096];
	struct stat st;
	struct mapped m;
	int s, ret;

	*already = false;
	if (alen > ARG_LEN || olen > ARG_LEN) {
		snprintf(why, n, "the agent's path or options are longer than %d bytes", ARG_LEN);
		return -1;
	}
	/* (JVMTI agents cannot be unloaded: one loaded by an earlier attach
	 * serves this one, whose registration enables its events) */
	if (mappings(jvm, stat(agent, &st) == 0 ? &st : NULL, agent, &m) == 0 && m.agent) {
		*already = true;
		return 0;
	}
	len = (size_t)snprintf(req, sizeof(req), "1%cload%c%s%ctrue%c%s%c", 0, 0, agent, 0, 0,
			       options, 0);
	s = connect_listener(jvm, deadline, why, n);
	if (s < 0)
		return -1;
	ret = exchange(s, req, len, ans, sizeof(ans), deadline);
	close(s);
	if (ret < 0) {
		snprintf(why, n, "JVM %d did not answer the load of its agent within %d s", jvm->p->pid,
			 ANSWER_MS / 1000);
		return -1;
	}
	return verdict(jvm, ans, why, n);
}

void st_jvm_close(struct st_jvm *jvm)
{
	if (jvm->tmpfd >= 0)
		close(jvm->tmpfd);
	jvm->tmpfd = -1;
}
