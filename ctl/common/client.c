/*
 * The command line's side of the control protocol (ctl/common/control.h): find the
 * session daemon, send one request, relay its reply.
 *
 * Which daemon: the one in $SHIMTRACE_RUNDIR if set; else the user's own
 * ($XDG_RUNTIME_DIR/shimtrace) if it runs; else the system daemon
 * (/run/shimtrace). `create` starts the user's daemon when none runs: in
 * $SHIMTRACE_RUNDIR when set (whoever sets it chose that daemon), else in
 * the user's run directory.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl/common/cli.h"
#include "ctl/common/client.h"
#include "ctl/common/control.h"

/* The run directory of the user's own daemon, "" if there is none. */
void st_user_rundir(char *buf, size_t n)
{
	const char *env = getenv("SHIMTRACE_RUNDIR"), *xdg = getenv("XDG_RUNTIME_DIR");

	if (env && *env)
		snprintf(buf, n, "%s", env);
	else if (geteuid() == 0)
		snprintf(buf, n, "%s", ST_SYSTEM_RUNDIR);
	else if (xdg && *xdg)
		snprintf(buf, n, "%s/shimtrace", xdg);
	else
		buf[0] = '\0';
}

static int dial(const char *rundir)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", rundir, ST_CTL_SOCKET) >=
	    sizeof(a.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static int connect_daemon(char *which, size_t n)
{
	char user[PATH_MAX];
	int fd;

	st_user_rundir(user, sizeof(user));
	if (user[0]) {
		fd = dial(user);
		if (fd >= 0 || getenv("SHIMTRACE_RUNDIR")) {
			snprintf(which, n, "%s", user);
			return fd;
		}
	}
	snprintf(which, n, "%s", ST_SYSTEM_RUNDIR);
	return dial(ST_SYSTEM_RUNDIR);
}

/* Starts the user's daemon (shimtraced, next to this program or in PATH),
 * which takes its run directory as we do (st_user_rundir). */
static int start_daemon(void)
{
	char self[PATH_MAX], daemon[PATH_MAX + 16], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;
	int status;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	snprintf(daemon, sizeof(daemon), "%s/shimtraced", self);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl(daemon, "shimtraced", (char *)NULL);
		execlp("shimtraced", "shimtraced", (char *)NULL);
		_exit(127);
	}
	/* shimtraced returns once it listens (it daemonizes) */
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return 0;
}

/* The client's own error: said (st_err) on standard error, else as a
 * line on errout, the caller's to say. */
static __attribute__((format(printf, 3, 4))) void
client_err(FILE *errout, const char *label, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (errout == stderr)
		st_err(label, "%s", msg);
	else
		fprintf(errout, "shimtrace %s: %s\n", label, msg);
}

int st_client_request(const char *verb, const char *const *items, size_t nitems, bool autostart)
{
	return st_client_call(verb, verb, items, nitems, autostart, stdout, stderr);
}

int st_client_call(const char *label, const char *verb, const char *const *items, size_t nitems,
		   bool autostart, FILE *out, FILE *errout)
{
	static uint8_t buf[ST_CTL_MSG_MAX];
	char which[PATH_MAX];
	size_t len = 0;
	int fd, status = ST_EXIT_FAIL;

	for (size_t i = 0; i <= nitems; i++) {
		const char *s = i ? items[i - 1] : verb;
		size_t l = strlen(s) + 1;

		if (len + l > sizeof(buf)) {
			client_err(errout, label, "request too long");
			return ST_EXIT_USAGE;
		}
		memcpy(buf + len, s, l);
		len += l;
	}
	fd = connect_daemon(which, sizeof(which));
	if (fd < 0 && autostart && (fd == -ENOENT || fd == -ECONNREFUSED) && start_daemon() == 0)
		fd = connect_daemon(which, sizeof(which));
	if (fd < 0) {
		if (fd == -ENOENT || fd == -ECONNREFUSED)
			client_err(errout, label, "no session daemon runs in %s (start one: shimtraced)", which);
		else
			client_err(errout, label, "cannot reach the session daemon in %s: %s", which, strerror(-fd));
		return ST_EXIT_FAIL;
	}
	if (send(fd, buf, len, MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET) {
		client_err(errout, label, "cannot send to the session daemon: %s", strerror(errno));
		close(fd);
		return ST_EXIT_FAIL;
	}
	/* (a daemon that refuses us says why before it hangs up: read on) */
	for (;;) {
		struct st_ctl_reply h;
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < (ssize_t)sizeof(h)) {
			client_err(errout, label, "the session daemon closed the connection");
			break;
		}
		memcpy(&h, buf, sizeof(h));
		if (h.kind == ST_CTL_OUT) {
			fwrite(buf + sizeof(h), 1, (size_t)n - sizeof(h), out);
		} else if (h.kind == ST_CTL_ERR) {
			fwrite(buf + sizeof(h), 1, (size_t)n - sizeof(h), errout);
			fputc('\n', errout);
		} else if (h.kind == ST_CTL_END) {
			status = h.status;
			break;
		}
	}
	close(fd);
	fflush(out);
	return status;
}
