/*
 * shimtraced: the session daemon.
 *
 * Run by a user, it serves that user's processes (run directory
 * $XDG_RUNTIME_DIR/shimtrace, everything private to the user); run as root
 * it is the system daemon (/run/shimtrace) that takes processes of every
 * user. Unless --foreground, it detaches once its sockets listen, so the
 * command (or systemd's Type=forking) returns only when the daemon is ready
 * to take processes, or fails with the reason.
 *
 * SIGTERM, SIGINT, SIGHUP and SIGQUIT stop it after every session has been
 * drained and its trace closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "ctl/common/cli.h"
#include "ctl/common/client.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/daemon.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/inspect.h"
#include "ctl/inspect/inspector.h"

struct options {
	const char *rundir;
	const char *pidfile;
	const char *group;
	bool foreground;
	bool syslog;
	int level;
	uint32_t clock;
	uint64_t max_memory; /* 0: the default */
};

static int parse_level(const char *s)
{
	static const char *names[] = { "error", "warning", "info", "debug" };

	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

static int parse_args(struct options *o, int argc, char **argv)
{
	const struct st_opt *opt;
	const char *arg;

	while ((opt = st_getopt(&st_daemon_verb, argc, argv, false, &arg))) {
		if (opt == &st_opt_error)
			return -1;
		if (st_opt_is(opt, "help")) {
			st_verb_help(&st_daemon_verb);
			printf("\nquotas (per user; --quota NAME=VALUE):\n");
			for (int k = 0; k < ST_Q_COUNT; k++) {
				char def[24] = "(see right)";

				if (st_quota_defs[k].def)
					snprintf(def, sizeof(def), "%llu",
						 (unsigned long long)st_quota_defs[k].def);
				printf("  %-12s %-12s %s\n", st_quota_defs[k].name, def,
				       st_quota_defs[k].what);
			}
			exit(0);
		} else if (st_opt_is(opt, "foreground")) {
			o->foreground = true;
		} else if (st_opt_is(opt, "rundir")) {
			o->rundir = arg;
		} else if (st_opt_is(opt, "pidfile")) {
			o->pidfile = arg;
		} else if (st_opt_is(opt, "syslog")) {
			o->syslog = true;
		} else if (st_opt_is(opt, "log-level")) {
			o->level = parse_level(arg);
			if (o->level < 0) {
				st_err(NULL, "--log-level: '%s' is not error, warning, info or debug",
				       arg);
				return -1;
			}
		} else if (st_opt_is(opt, "group")) {
			o->group = arg;
		} else if (st_opt_is(opt, "quota")) {
			char err[256];

			if (st_quota_set(arg, err, sizeof(err)) < 0) {
				st_err(NULL, "%s", err);
				return -1;
			}
		} else if (st_opt_is(opt, "inspector-memory")) {
			int64_t v = st_parse_size(arg);

			if (v < (16 << 20)) {
				st_err(NULL, "--inspector-memory: '%s' is not a size of 16M or more", arg);
				return -1;
			}
			st_insp_limits.memory = (uint64_t)v;
		} else if (st_opt_is(opt, "max-memory")) {
			int64_t v = st_parse_size(arg);

			if (v <= 0) {
				st_err(NULL, "--max-memory: '%s' is not a size (examples: 512M, 8G)", arg);
				return -1;
			}
			o->max_memory = (uint64_t)v;
		} else if (st_opt_is(opt, "inspector-timeout")) {
			char *end;
			unsigned long v = strtoul(arg, &end, 10);

			if (*end || end == arg || v < 100 || v > 600000) {
				st_err(NULL, "--inspector-timeout: '%s' is not 100 to 600000 ms", arg);
				return -1;
			}
			st_insp_limits.timeout_ms = (uint32_t)v;
		} else if (st_opt_is(opt, "clock")) {
			if (st_parse_clock(arg, &o->clock) < 0) {
				st_err(NULL, "--clock: '%s' is neither tsc nor monotonic", arg);
				return -1;
			}
		}
	}
	if (st_optind() < argc) {
		st_err(NULL, "unexpected argument '%s' (see --help)", argv[st_optind()]);
		return -1;
	}
	return 0;
}

/*
 * Opens and locks the pid file; the lock lives as long as the descriptor,
 * which the detached daemon keeps. Returns the descriptor or -1.
 */
static int pidfile_lock(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0) {
		st_err(NULL, "cannot open the pid file %s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		char buf[32] = "";
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		st_err(NULL, "another shimtraced runs (pid %s, pid file %s)", buf[0] ? buf : "?",
		       path);
		close(fd);
		return -1;
	}
	return fd;
}

static void pidfile_write(int fd)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		st_log(ST_LOG_WARN, "cannot write the pid file: %s", strerror(errno));
}

/*
 * Detaches: the parent waits on a pipe for the child's verdict (one byte:
 * 0 ready, else the exit status) so that it exits only once the daemon
 * listens. Returns the write end in the child; does not return in the
 * parent.
 */
static int detach(void)
{
	int p[2];
	pid_t pid;
	char c = 1;

	if (pipe2(p, O_CLOEXEC) < 0) {
		st_err(NULL, "pipe: %s", strerror(errno));
		exit(1);
	}
	pid = fork();
	if (pid < 0) {
		st_err(NULL, "fork: %s", strerror(errno));
		exit(1);
	}
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			c = 1;
		_exit(c);
	}
	close(p[0]);
	setsid();
	/* A second fork: the daemon is no session leader and can never get a
	 * controlling terminal back. */
	pid = fork();
	if (pid < 0)
		_exit(1);
	if (pid > 0)
		_exit(0);
	if (chdir("/") < 0)
		_exit(1);
	/* (for its own files: traces take their owner's, ctl/daemon/out/tracedir.c) */
	umask(022);
	return p[1];
}

static void quiet_stdio(void)
{
	int fd = open("/dev/null", O_RDWR);

	if (fd < 0)
		return;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

static void report(int fd, char status)
{
	if (fd < 0)
		return;
	if (write(fd, &status, 1) != 1) {
		/* the parent is gone: nobody to tell */
	}
	close(fd);
}

int main(int argc, char **argv)
{
	struct options o = { .level = ST_LOG_INFO };
	struct st_daemon_config cfg = { 0 };
	char rundir[PATH_MAX], pidfile[PATH_MAX + 32], err[512];
	struct st_daemon d;
	int notify = -1, pidfd, ret;

	st_inspector_dispatch(argc, argv);
	st_program = "shimtraced";
	/* A daemon keeps no descriptor it inherited: holding the write end of
	 * someone's pipe would keep its reader waiting forever. */
	syscall(SYS_close_range, 3, ~0u, 0);
	if (parse_args(&o, argc, argv) < 0)
		return 2;
	if (o.rundir)
		snprintf(rundir, sizeof(rundir), "%s", o.rundir);
	else
		st_user_rundir(rundir, sizeof(rundir));
	if (!rundir[0]) {
		st_err(NULL, "no run directory: XDG_RUNTIME_DIR is not set (use --rundir)");
		return 2;
	}
	if (rundir[0] != '/') {
		st_err(NULL, "--rundir: '%s' is not an absolute path", rundir);
		return 2;
	}
	snprintf(pidfile, sizeof(pidfile), "%s", o.pidfile ? o.pidfile : "");
	if (!o.pidfile)
		snprintf(pidfile, sizeof(pidfile), "%s/shimtraced.pid", rundir);
	/* A daemon that is refused creates nothing: the pid file is locked
	 * first, unless it is to go in a run directory that is not there yet
	 * (then no daemon holds it). The lock is kept across detach (the
	 * same open file). */
	pidfd = -1;
	if (o.pidfile || access(rundir, F_OK) == 0) {
		pidfd = pidfile_lock(pidfile);
		if (pidfd < 0)
			return 1;
	}
	/* Daemon code must not trace itself, whatever the environment says. */
	setenv("SHIMTRACE_DISABLE", "1", 1);
	if (!o.foreground)
		notify = detach();
	st_log_setup("shimtraced", o.level, o.syslog || !o.foreground);
	cfg.rundir = rundir;
	cfg.clock = o.clock;
	cfg.foreground = o.foreground;
	cfg.log_level = o.level;
	cfg.group = o.group;
	cfg.max_memory = o.max_memory;
	cfg.libdir_core = st_libdir_core();
	cfg.libdir_wrappers = st_libdir_wrappers();
	ret = st_daemon_init(&d, &cfg, err, sizeof(err));
	if (ret < 0) {
		st_err(NULL, "%s", err);
		if (!o.foreground)
			st_log(ST_LOG_ERR, "%s", err);
		st_daemon_fini(&d);
		report(notify, 1);
		return 1;
	}
	if (pidfd < 0)
		pidfd = pidfile_lock(pidfile);
	if (pidfd < 0) {
		st_daemon_fini(&d);
		report(notify, 1);
		return 1;
	}
	pidfile_write(pidfd);
	/* Processes found running register as their owners' inspectors
	 * answer: ready once they have (or after a few seconds). */
	st_daemon_settle(&d, 3000);
	st_log(ST_LOG_INFO, "listening in %s (%s daemon)", rundir,
	       d.uid == 0 ? "system" : "user");
	if (!o.foreground)
		quiet_stdio();
	report(notify, 0);
	ret = st_daemon_run(&d);
	st_daemon_fini(&d);
	st_log(ST_LOG_INFO, "stopped");
	unlink(pidfile);
	close(pidfd);
	return ret < 0 ? 1 : 0;
}
