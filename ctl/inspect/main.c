/*
 * An inspector's start and its request loop (see proto.h).
 *
 *   EXE --inspector ROLE UID GID GROUPS CAPS AS_MIB CPU_SECONDS
 *
 * GROUPS is a comma-separated list of supplementary groups, or "-"; CAPS
 * the capabilities to keep (hex, bit n: capability n), which the daemon
 * chose (ctl/daemon/inspect.c): at most st_insp_caps_max(ROLE, UID) --
 * CAP_SYS_PTRACE for root's processes, CAP_CHECKPOINT_RESTORE for the
 * objects role, nothing else -- or the inspector does not start. The
 * daemon starts it with its socket on descriptor 3, for the objects and
 * lines roles the socket joining the pair on descriptor 4, standard input,
 * output and error on /dev/null, nothing else, in a session of its own.
 *
 * Before anything is read from a traced process: credentials switched to
 * UID, GID and GROUPS (when started by root), capabilities cut to CAPS as
 * far as the daemon holds them (a kernel before 5.9 has no
 * CAP_CHECKPOINT_RESTORE: map_files is then refused and objects are opened
 * by path with the checks of st_insp_open_mapped; a daemon that is not
 * root hands none); no-new-privs, not dumpable, and limits: address space,
 * CPU time, no core file, no child process, few descriptors. Then it
 * checks what it holds: its uids (and, started by root, gids and groups)
 * those it was told, no capability but those of CAPS in its effective,
 * permitted or inheritable set, none ambient; or it exits. It dies with
 * the daemon (parent-death signal, but a probe inspector, which must
 * finish a call it started) and when its socket closes.
 *
 * The bounding set stays the daemon's: with no-new-privs, an execve()
 * gains nothing from it (no setuid bit, no file capability), and the
 * daemon may hold no CAP_SETPCAP to shrink it (the unit does not grant it).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctl/fdpass.h"
#include "ctl/inspect/inspector.h"

#define MAX_GROUPS 256

struct args {
	uint32_t role;
	uid_t uid;
	gid_t gid;
	gid_t groups[MAX_GROUPS];
	int ngroups;
	uint64_t caps;
	uint64_t as_mib, cpu_s;
};

static int sock = ST_INSPECTOR_FD, pair = ST_INSPECTOR_PAIR_FD;

/* Lines role: the object files handed over, oldest first. */
static struct {
	struct st_insp_key key;
	int fd;
} handed[ST_INSP_HANDOFF_MAX];
static uint32_t nhanded;

static void die(const char *what)
{
	/* Standard error is the daemon's (or /dev/null): one line, then go. */
	fprintf(stderr, "shimtrace inspector: %s: %s\n", what, strerror(errno));
	_exit(1);
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || end == s || *end ? -1 : 0;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	uint64_t v[5];
	char *groups, *tok, *save = NULL, *end;

	if (argc != 9)
		return -1;
	for (int i = 0; i < 3; i++)
		if (parse_u64(argv[2 + i], &v[i]) < 0 || v[i] > UINT32_MAX)
			return -1;
	if (parse_u64(argv[7], &v[3]) < 0 || parse_u64(argv[8], &v[4]) < 0)
		return -1;
	errno = 0;
	a->caps = strtoull(argv[6], &end, 16);
	if (errno || end == argv[6] || *end)
		return -1;
	a->role = (uint32_t)v[0];
	a->uid = (uid_t)v[1];
	a->gid = (gid_t)v[2];
	a->as_mib = v[3];
	a->cpu_s = v[4];
	a->ngroups = 0;
	if (strcmp(argv[5], "-") == 0)
		return 0;
	groups = argv[5];
	for (tok = strtok_r(groups, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t g;

		if (a->ngroups == MAX_GROUPS || parse_u64(tok, &g) < 0 || g > UINT32_MAX)
			return -1;
		a->groups[a->ngroups++] = (gid_t)g;
	}
	return 0;
}

/* Keeps exactly the capabilities of `keep` (bit n: capability n), in the
 * permitted and effective sets; 0 or -1. */
static int caps_set(uint64_t keep)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	d[0].effective = d[0].permitted = (uint32_t)keep;
	d[1].effective = d[1].permitted = (uint32_t)(keep >> 32);
	return (int)syscall(SYS_capset, &h, d);
}

/* The capabilities of this process now: effective, permitted and
 * inheritable sets; 0 or -1. */
static int caps_get(uint64_t *eff, uint64_t *prm, uint64_t *inh)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	*eff = *prm = *inh = 0;
	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	*eff = (uint64_t)d[0].effective | (uint64_t)d[1].effective << 32;
	*prm = (uint64_t)d[0].permitted | (uint64_t)d[1].permitted << 32;
	*inh = (uint64_t)d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return 0;
}

/* Becomes the owner: see the top of the file. */
static void become(const struct args *a)
{
	uint64_t want = a->caps, eff, prm, inh;

	if (geteuid() == 0) {
		if (setgroups((size_t)a->ngroups, a->groups) < 0)
			die("setgroups");
		if (setresgid(a->gid, a->gid, a->gid) < 0)
			die("setresgid");
		/* keep the permitted set across the uid change, then trim it */
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
			die("PR_SET_KEEPCAPS");
		if (setresuid(a->uid, a->uid, a->uid) < 0)
			die("setresuid");
		prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
		/* A kernel without CAP_CHECKPOINT_RESTORE (before 5.9), or a
		 * bounding set without it, refuses it: go on without, objects
		 * are then opened by path. (What we were told, as far as we
		 * hold it: under a bounding set we may hold less.) */
		caps_get(&eff, &prm, &inh);
		if (caps_set(want & prm) < 0 && caps_set(0) < 0)
			die("capset");
	} else if (geteuid() != a->uid) {
		/* a daemon that is not root serves its own user only */
		errno = EPERM;
		die("not the user to serve");
	} else if (caps_set(0) < 0) {
		die("capset");
	}
	/* (none ambient: they would be cleared with the inheritable set, but
	 * say it) */
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("PR_SET_NO_NEW_PRIVS");
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

static bool in_list(gid_t g, const gid_t *list, int n)
{
	for (int i = 0; i < n; i++)
		if (list[i] == g)
			return true;
	return false;
}

/* Whether this process holds exactly the owner's ids (gids and groups
 * only where it changed them: started by root) and no capability beyond
 * a->caps in any set. */
static bool holds_no_more(const struct args *a, bool by_root)
{
	gid_t groups[MAX_GROUPS + 1];
	uint64_t eff, prm, inh;
	uid_t r, e, s;
	gid_t gr, ge, gs;
	int n;

	if (getresuid(&r, &e, &s) < 0 || r != a->uid || e != a->uid || s != a->uid)
		return false;
	if (by_root) {
		if (getresgid(&gr, &ge, &gs) < 0 || gr != a->gid || ge != a->gid || gs != a->gid)
			return false;
		n = getgroups(MAX_GROUPS + 1, groups);
		if (n != a->ngroups)
			return false;
		for (int i = 0; i < n; i++)
			if (!in_list(groups[i], a->groups, a->ngroups))
				return false;
	}
	if (caps_get(&eff, &prm, &inh) < 0 || (eff | prm | inh) & ~a->caps)
		return false;
	for (int cap = 0; cap < 64; cap++) {
		int set = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);

		if (set < 0)
			break; /* past the kernel's last capability */
		if (set)
			return false;
	}
	return true;
}

static void limit(int resource, uint64_t value)
{
	struct rlimit rl = { value, value };

	if (setrlimit(resource, &rl) < 0)
		die("setrlimit");
}

int st_insp_send(const void *msg, size_t len, int fd)
{
	if (st_send_fd(sock, msg, len, fd, 0) == 0)
		return 0;
	/* the daemon is gone, or no longer wants us */
	_exit(0);
}

void st_insp_handoff(const struct st_insp_key *key, int fd)
{
	struct st_insp_handoff m = { { ST_INSP_HANDOFF, sizeof(m), 0 }, *key };

	st_send_fd(pair, &m, sizeof(m), fd, MSG_DONTWAIT);
}

/* Lines role: takes in what the objects inspector handed over. */
static void take_handoffs(void)
{
	struct st_insp_handoff m;
	int fd, truncated;

	while (st_recv_fd(pair, &m, sizeof(m), &fd, MSG_DONTWAIT, &truncated) > 0) {
		if (fd < 0)
			continue;
		if (truncated || m.hdr.type != ST_INSP_HANDOFF) {
			close(fd);
			continue;
		}
		if (nhanded == ST_INSP_HANDOFF_MAX) {
			close(handed[0].fd);
			memmove(handed, handed + 1, (ST_INSP_HANDOFF_MAX - 1) * sizeof(handed[0]));
			nhanded--;
		}
		handed[nhanded].key = m.key;
		handed[nhanded++].fd = fd;
	}
}

int st_insp_handed(const struct st_insp_key *key)
{
	take_handoffs();
	for (uint32_t i = nhanded; i-- > 0;)
		if (memcmp(&handed[i].key, key, sizeof(*key)) == 0) {
			int fd = handed[i].fd;

			memmove(handed + i, handed + i + 1, (nhanded - i - 1) * sizeof(handed[0]));
			nhanded--;
			return fd;
		}
	return -1;
}

void st_insp_done(uint64_t id, int32_t status, uint32_t count, const char *fmt, ...)
{
	struct {
		struct st_insp_done d;
		char text[ST_INSP_MSG_MAX - sizeof(struct st_insp_done)];
	} m;
	va_list ap;
	int n;

	memset(&m, 0, sizeof(m));
	va_start(ap, fmt);
	n = vsnprintf(m.text, sizeof(m.text), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(m.text))
		n = sizeof(m.text) - 1;
	m.d.hdr.type = ST_INSP_DONE;
	m.d.hdr.id = id;
	m.d.hdr.len = (uint32_t)(sizeof(m.d) + (size_t)n + 1);
	m.d.status = status;
	m.d.count = count;
	st_insp_send(&m, m.d.hdr.len, -1);
}


static void serve(uint32_t role)
{
	static uint8_t buf[ST_INSP_MSG_MAX + 1];

	for (;;) {
		struct st_insp_hdr h;
		int fd, truncated;
		ssize_t n;

		/* the lines role takes in handed files while it waits */
		while (role == ST_INSP_ROLE_LINES) {
			struct pollfd pf[2] = { { sock, POLLIN, 0 }, { pair, POLLIN, 0 } };

			if (poll(pf, 2, -1) < 0 && errno != EINTR)
				_exit(1);
			if (pf[1].revents & POLLIN)
				take_handoffs();
			if (pf[0].revents)
				break;
		}
		n = st_recv_fd(sock, buf, ST_INSP_MSG_MAX, &fd, 0, &truncated);

		if (n < (ssize_t)sizeof(h) || truncated)
			_exit(0);
		memcpy(&h, buf, sizeof(h));
		buf[n] = '\0';
		if (h.len != (size_t)n) {
			st_insp_done(h.id, -EINVAL, 0, "malformed request");
		} else if (role == ST_INSP_ROLE_OBJECTS && h.type == ST_INSP_OBJECTS &&
			   n == sizeof(struct st_insp_target)) {
			st_insp_objects((const struct st_insp_target *)buf, fd);
		} else if (role == ST_INSP_ROLE_OBJECTS && h.type == ST_INSP_DISCOVER &&
			   n == sizeof(struct st_insp_target)) {
			st_insp_discover((const struct st_insp_target *)buf, fd);
		} else if (role == ST_INSP_ROLE_OBJECTS && h.type == ST_INSP_TAKE_POOL &&
			   n == sizeof(struct st_insp_take_pool)) {
			st_insp_take_pool((const struct st_insp_take_pool *)buf, fd);
		} else if (role == ST_INSP_ROLE_LINES && h.type == ST_INSP_LINES &&
			   n == sizeof(struct st_insp_lines_req)) {
			st_insp_lines((const struct st_insp_lines_req *)buf);
		} else if (role == ST_INSP_ROLE_PROBE && h.type == ST_INSP_PROBE &&
			   n > (ssize_t)sizeof(struct st_insp_target) && buf[n - 1] == '\0') {
			st_insp_probe((const struct st_insp_target *)buf,
				      (const char *)buf + sizeof(struct st_insp_target), fd);
		} else {
			st_insp_done(h.id, -EINVAL, 0, "request not for this inspector");
		}
		if (fd >= 0)
			close(fd);
	}
}

void st_inspector_dispatch(int argc, char **argv)
{
	struct args a;
	pid_t parent = getppid();
	bool by_root;

	if (argc < 2 || strcmp(argv[1], ST_INSPECTOR_ARG) != 0)
		return;
	if (parse_args(argc, argv, &a) < 0 || a.role < ST_INSP_ROLE_OBJECTS ||
	    a.role > ST_INSP_ROLE_PROBE) {
		fprintf(stderr, "shimtrace inspector: bad arguments (started by the daemon only)\n");
		_exit(2);
	}
	if (a.caps & ~st_insp_caps_max(a.role, a.uid)) {
		/* more than any inspector may hold: not started by our daemon */
		fprintf(stderr, "shimtrace inspector: capabilities %" PRIx64 " are more than the "
				"role may hold\n", a.caps);
		_exit(2);
	}
	by_root = geteuid() == 0;
	signal(SIGPIPE, SIG_IGN);
	become(&a);
	if (!holds_no_more(&a, by_root)) {
		errno = EPERM;
		die("more credentials or capabilities than told");
	}
	/* after the credential change, which clears it */
	if (a.role != ST_INSP_ROLE_PROBE) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)
			_exit(0);
	}
#ifndef __SANITIZE_ADDRESS__
	limit(RLIMIT_AS, a.as_mib << 20);
#else
	/* (AddressSanitizer reserves terabytes of shadow address space: the
	 * sanitizer build, a test build, goes without this limit) */
	(void)a.as_mib;
#endif
	limit(RLIMIT_CPU, a.cpu_s);
	limit(RLIMIT_CORE, 0);
	limit(RLIMIT_NOFILE, ST_INSP_HANDOFF_MAX + 64);
	limit(RLIMIT_NPROC, 0);
	serve(a.role);
}
