/*
 * libshimtrace-dynprobe.so: dynamic probes at any function or address
 * (doc: README "Dynamic probes"). Loaded into a traced process by
 * `shimtrace record --function/--probe` (preloaded, with the probes in
 * SHIMTRACE_PROBES) or by an inspector (dlopen by ptrace, as
 * load-probe), which then calls st_dynprobe_ctl, its one export.
 *
 * SHIMTRACE_PROBES: KIND:NAME:SPEC entries separated by ',' (KIND
 * function or probe, NAME empty for the default), planted by the
 * constructor while the process is single-threaded: before main, no
 * other thread can be inside the code patched. With threads already
 * running (a library's constructor started one), a probe is refused: an
 * inspector (`shimtrace enable --pid`) stops them first. A setuid process
 * ignores the variable, as it ignores every variable of ours. A probe
 * that cannot be planted says why on standard error, once per probe;
 * one whose symbol the process does not have (a shell that record runs
 * before the program) is left unsaid: record's summary names a probe
 * that matched nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "core/sys.h"
#include "dynprobe/area.h"
#include "dynprobe/ctl.h"
#include "dynprobe/probes.h"

#define ST_EXPORT __attribute__((visibility("default")))

static int busy;
static struct dp_reply reply;

static void put_err(const char *s)
{
	st__sys3(SYS_write, 2, s, strlen(s));
}

/* Threads of this process (from /proc/self/task); 0 when unknown. */
static int threads(void)
{
	char buf[4096];
	long fd = st__sys3(SYS_open, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0), n;
	int count = 0;

	if (fd < 0)
		return 0;
	while ((n = st__sys3(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			struct dirent64 *e = (struct dirent64 *)(buf + off);

			count += e->d_name[0] != '.';
			off += e->d_reclen;
		}
	st__close((int)fd);
	return count;
}

/* Writes what r planned into this process, the only thread running. */
static int plant_here(const struct dp_reply *r)
{
	int ret;

	if (threads() != 1)
		return -EBUSY;
	if (memcmp((const void *)(uintptr_t)r->at, r->expect, r->len) != 0)
		return -ESTALE;
	ret = dp_write_code(r->at, r->bytes, r->len);
	if (ret == 0)
		*(uint32_t *)(uintptr_t)r->state_addr = r->new_state;
	return ret;
}

static void plant_one(uint32_t kind, const char *name, const char *spec)
{
	char line[DP_MSG_MAX + 64];
	int ret = dp_add(kind, name, spec, &reply);

	if (ret == -ENOENT)
		return; /* not in this program: maybe in the next it runs */
	if (ret == 0)
		ret = plant_here(&reply);
	if (ret == 0)
		return;
	snprintf(line, sizeof(line), "shimtrace: probe %s: %s\n", spec,
		 reply.status ? reply.msg
			      : ret == -EBUSY ? "not planted: threads are running (use shimtrace "
						"enable --pid)"
					      : "not planted: the code changed meanwhile");
	put_err(line);
}

static void __attribute__((constructor)) dynprobe_init(void)
{
	const char *env = getauxval(AT_SECURE) ? NULL : getenv("SHIMTRACE_PROBES");
	char buf[4096], *save = NULL;

	if (!env || !*env || strlen(env) >= sizeof(buf))
		return;
	strcpy(buf, env);
	for (char *e = strtok_r(buf, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		char *name = strchr(e, ':'), *spec = name ? strchr(name + 1, ':') : NULL;

		if (!spec)
			continue;
		*name++ = '\0';
		*spec++ = '\0';
		if (strcmp(e, "function") == 0)
			plant_one(DP_FUNCTION, name, spec);
		else if (strcmp(e, "probe") == 0)
			plant_one(DP_BARE, name, spec);
	}
}

/* The inspector's entry (dynprobe/ctl.h); called by ptrace. */
ST_EXPORT const struct dp_reply *st_dynprobe_ctl(const char *cmd);
const struct dp_reply *st_dynprobe_ctl(const char *cmd)
{
	char buf[DP_CTL_MAX], *save = NULL, *verb, *kind, *name, *spec;

	memset(&reply, 0, sizeof(reply));
	if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE)) {
		reply.status = -EBUSY;
		snprintf(reply.msg, sizeof(reply.msg), "another probe is being planted");
		return &reply;
	}
	snprintf(buf, sizeof(buf), "%s", cmd);
	verb = strtok_r(buf, " ", &save);
	if (verb && strcmp(verb, "add") == 0 && (kind = strtok_r(NULL, " ", &save)) &&
	    (name = strtok_r(NULL, " ", &save)) && (spec = strtok_r(NULL, " ", &save)) &&
	    (strcmp(kind, "function") == 0 || strcmp(kind, "probe") == 0)) {
		dp_add(strcmp(kind, "function") == 0 ? DP_FUNCTION : DP_BARE, name, spec, &reply);
	} else if (verb && strcmp(verb, "remove") == 0 && (name = strtok_r(NULL, " ", &save))) {
		dp_remove(name, &reply);
	} else {
		reply.status = -EINVAL;
		snprintf(reply.msg, sizeof(reply.msg), "unknown command");
	}
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
	return &reply;
}
