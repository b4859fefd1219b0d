/*
 * An inspector's start and its request loop (see proto.h): on top of the
 * request handlers (objects.c, discover.c, lines.c, probe.c, dynprobe.c,
 * attach.c), which answer through the channel (channel.c).
 *
 *   EXE --inspector ROLE UID GID GROUPS CAPS AS_MIB CPU_SECONDS
 *
 * GROUPS is a comma-separated list of supplementary groups, or "-"; CAPS
 * the capabilities to keep (hex, bit n: capability n), which the daemon
 * chose (ctl/daemon/objects/inspect.c): at most st_insp_caps_max(ROLE, UID) --
 * CAP_SYS_PTRACE for root's processes, CAP_CHECKPOINT_RESTORE for the
 * objects role, nothing else -- or the inspector does not start. The
 * daemon starts it with its socket on descriptor 3, for the objects and
 * lines roles the socket joining the pair on descriptor 4, standard input,
 * output and error on /dev/null, nothing else, in a session of its own.
 *
 * Before anything is read from a traced process it becomes the owner
 * (owner.c) and checks that it holds no more than it was told, or exits;
 * then limits: address space, CPU time, no core file, no child process,
 * few descriptors. It dies with the daemon (parent-death signal, but a
 * probe inspector, which must finish a call it started) and when its
 * socket closes.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ctl/inspect/attach.h"
#include "ctl/inspect/channel.h"
#include "ctl/inspect/discover.h"
#include "ctl/inspect/dynprobe.h"
#include "ctl/inspect/inspector.h"
#include "ctl/inspect/lines.h"
#include "ctl/inspect/objects.h"
#include "ctl/inspect/owner.h"
#include "ctl/inspect/probe.h"

struct args {
	uint32_t role;
	struct st_insp_owner owner;
	uint64_t as_mib, cpu_s;
};

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
	struct st_insp_owner *o = &a->owner;
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
	o->caps = strtoull(argv[6], &end, 16);
	if (errno || end == argv[6] || *end)
		return -1;
	a->role = (uint32_t)v[0];
	o->uid = (uid_t)v[1];
	o->gid = (gid_t)v[2];
	a->as_mib = v[3];
	a->cpu_s = v[4];
	o->ngroups = 0;
	if (strcmp(argv[5], "-") == 0)
		return 0;
	groups = argv[5];
	for (tok = strtok_r(groups, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t g;

		if (o->ngroups == ST_INSP_MAX_GROUPS || parse_u64(tok, &g) < 0 || g > UINT32_MAX)
			return -1;
		o->groups[o->ngroups++] = (gid_t)g;
	}
	return 0;
}

static void limit(int resource, uint64_t value)
{
	struct rlimit rl = { value, value };

	if (setrlimit(resource, &rl) < 0)
		die("setrlimit");
}

static void serve(uint32_t role)
{
	static uint8_t buf[ST_INSP_MSG_MAX + 1];

	for (;;) {
		struct st_insp_hdr h;
		int fd, truncated;
		ssize_t n;

		n = st_insp_next(role == ST_INSP_ROLE_LINES, buf, ST_INSP_MSG_MAX, &fd, &truncated);
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
		} else if (role == ST_INSP_ROLE_PROBE && h.type == ST_INSP_ATTACH &&
			   n >= (ssize_t)sizeof(struct st_insp_attach)) {
			st_insp_attach((const struct st_insp_attach *)buf,
				       (const char *)buf + sizeof(struct st_insp_attach),
				       (size_t)n - sizeof(struct st_insp_attach), fd);
		} else if (role == ST_INSP_ROLE_PROBE && h.type == ST_INSP_PROBE &&
			   n > (ssize_t)sizeof(struct st_insp_target) && buf[n - 1] == '\0') {
			st_insp_probe((const struct st_insp_target *)buf,
				      (const char *)buf + sizeof(struct st_insp_target), fd);
		} else if (role == ST_INSP_ROLE_PROBE && h.type == ST_INSP_DYNPROBE &&
			   n > (ssize_t)sizeof(struct st_insp_target) && buf[n - 1] == '\0' &&
			   memchr(buf + sizeof(struct st_insp_target), '\0',
				  (size_t)n - sizeof(struct st_insp_target) - 1)) {
			const char *lib = (const char *)buf + sizeof(struct st_insp_target);

			st_insp_dynprobe((const struct st_insp_target *)buf, lib, lib + strlen(lib) + 1,
					 fd);
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
	const char *what;
	bool by_root;

	if (argc < 2 || strcmp(argv[1], ST_INSPECTOR_ARG) != 0)
		return;
	if (parse_args(argc, argv, &a) < 0 || a.role < ST_INSP_ROLE_OBJECTS ||
	    a.role > ST_INSP_ROLE_PROBE) {
		fprintf(stderr, "shimtrace inspector: bad arguments (started by the daemon only)\n");
		_exit(2);
	}
	if (a.owner.caps & ~st_insp_caps_max(a.role, a.owner.uid)) {
		/* more than any inspector may hold: not started by our daemon */
		fprintf(stderr, "shimtrace inspector: capabilities %" PRIx64 " are more than the "
				"role may hold\n", a.owner.caps);
		_exit(2);
	}
	by_root = geteuid() == 0;
	signal(SIGPIPE, SIG_IGN);
	if (st_insp_become(&a.owner, &what) < 0)
		die(what);
	if (!st_insp_holds_no_more(&a.owner, by_root)) {
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
