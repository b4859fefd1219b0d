/*
 * The verbs the session daemon carries out (create, destroy, start, stop,
 * status, enable, disable, list, snapshot, load-probe): options are parsed
 * and checked here, with the tables of verbs.c, then sent as one request
 * (ctl/common/control.h); the daemon's answer is printed as it comes.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/common/checks.h"
#include "ctl/cli/cmd_control.h"
#include "ctl/common/cli.h"
#include "ctl/common/client.h"
#include "ctl/common/control.h"

#define MAX_ITEMS 512

struct items {
	const char *v[MAX_ITEMS];
	char *own[MAX_ITEMS]; /* what we allocated, to free */
	size_t n, nown;
};

static int add(struct items *it, const char *key, const char *value)
{
	char *s;

	if (it->n == MAX_ITEMS || asprintf(&s, "%s=%s", key, value) < 0)
		return -1;
	it->v[it->n++] = s;
	it->own[it->nown++] = s;
	return 0;
}

static bool has(const struct items *it, const char *key)
{
	size_t kl = strlen(key);

	for (size_t i = 0; i < it->n; i++)
		if (strncmp(it->v[i], key, kl) == 0 && it->v[i][kl] == '=')
			return true;
	return false;
}

static void free_items(struct items *it)
{
	for (size_t i = 0; i < it->nown; i++)
		free(it->own[i]);
}

/* An absolute path for path (relative to the current directory). */
static int absolute(const char *path, char *out, size_t n)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return snprintf(out, n, "%s", path) < (int)n ? 0 : -1;
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	return snprintf(out, n, "%s/%s", cwd, path) < (int)n ? 0 : -1;
}

static int size_item(struct items *it, const char *verb, const char *name, const char *arg,
		     uint64_t *out)
{
	int64_t v = st_parse_size(arg);
	char num[32];

	if (v <= 0) {
		st_err(verb, "--%s: '%s' is not a size (examples: 4096, 64k, 16M, 1G)", name, arg);
		return -1;
	}
	if (out)
		*out = (uint64_t)v;
	snprintf(num, sizeof(num), "%lld", (long long)v);
	return add(it, name, num);
}

static int number_item(struct items *it, const char *verb, const char *key, const char *arg)
{
	char *end;
	long long v = strtoll(arg, &end, 10);

	if (*arg == '\0' || *end || v < 0 || v > 0x7fffffff) {
		st_err(verb, "--%s: '%s' is not a number", key, arg);
		return -1;
	}
	return add(it, key, arg);
}

/* --blocking[=TIMEOUT]: the wait bound in ms, or "forever". */
static int blocking_item(struct items *it, const char *verb, const char *arg)
{
	uint32_t ms;
	char why[256], num[16];

	if (st_blocking_parse(arg, &ms, why, sizeof(why)) < 0) {
		st_err(verb, "%s", why);
		return -1;
	}
	if (ms == ST_ABI_BLOCK_FOREVER)
		return add(it, "blocking", "forever");
	snprintf(num, sizeof(num), "%u", ms);
	return add(it, "blocking", num);
}

/* --pid 12,34,56: one item per pid. */
static int pids_item(struct items *it, const char *verb, const char *arg)
{
	pid_t pids[ST_RULE_MAX_PIDS];
	size_t n;
	char why[256], num[16];

	if (st_pid_list_parse(arg, pids, ST_RULE_MAX_PIDS, &n, why, sizeof(why)) < 0) {
		st_err(verb, "--pid: %s", why);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(num, sizeof(num), "%d", (int)pids[i]);
		if (add(it, "pid", num) < 0)
			return -1;
	}
	return 0;
}

static int pid_item(struct items *it, const char *verb, const char *arg)
{
	pid_t pid;
	char why[256];

	if (st_pid_parse(arg, &pid, why, sizeof(why)) < 0) {
		st_err(verb, "--pid: %s", why);
		return -1;
	}
	return add(it, "pid", arg);
}

/*
 * Where a trace goes without -o: $HOME/shimtrace-traces/NAME-STAMP, else
 * $XDG_STATE_HOME/shimtrace/traces/NAME-STAMP; never a name anyone could
 * guess in a directory others may write (such as /tmp): without either,
 * the user is told to choose with -o.
 */
static int default_output(struct items *it, const char *verb, const char *name)
{
	const char *home = getenv("HOME"), *state = getenv("XDG_STATE_HOME");
	char stamp[32], dir[PATH_MAX];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (!name)
		name = "auto";
	if (home && home[0] == '/')
		snprintf(dir, sizeof(dir), "%s/shimtrace-traces/%s-%s", home, name, stamp);
	else if (state && state[0] == '/')
		snprintf(dir, sizeof(dir), "%s/shimtrace/traces/%s-%s", state, name, stamp);
	else {
		st_err(verb, "neither HOME nor XDG_STATE_HOME is set (to an absolute path), so there "
			     "is no default trace directory: choose one with -o DIR");
		return -1;
	}
	return add(it, "output", dir);
}

int st_cmd_control(const struct st_verb *v, int argc, char **argv)
{
	const char *verb = v->name, *arg, *output = NULL;
	const struct st_opt *o;
	struct items it = { .n = 0 };
	char path[PATH_MAX], why[256];
	uint64_t buffer_size = 0, subbuf_size = 0, max_memory = 0, process_memory = 0;
	struct st_memory_bounds mem;
	struct st_geometry geo;
	int nops, ret = ST_EXIT_USAGE;
	bool create = strcmp(verb, "create") == 0, rules = false, probe = false, named;
	bool blocking_bare = false;
	uint32_t ms;

	rules = strcmp(verb, "enable") == 0 || strcmp(verb, "disable") == 0;
	probe = strcmp(verb, "load-probe") == 0;
	/* Verbs on one session take its name as -s NAME or as an operand. */
	named = strcmp(verb, "destroy") == 0 || strcmp(verb, "start") == 0 ||
		strcmp(verb, "stop") == 0 || strcmp(verb, "status") == 0 ||
		strcmp(verb, "snapshot") == 0;
	while ((o = st_getopt(v, argc, argv, false, &arg)) != NULL) {
		int bad = 0;

		if (o == &st_opt_error)
			goto out;
		if (st_opt_is(o, "help")) {
			st_verb_help(v);
			ret = ST_EXIT_OK;
			goto out;
		} else if (st_opt_is(o, "output")) {
			output = arg;
		} else if (st_opt_is(o, "buffer-size")) {
			bad = size_item(&it, verb, o->name, arg, &buffer_size);
		} else if (st_opt_is(o, "subbuf-size")) {
			bad = size_item(&it, verb, o->name, arg, &subbuf_size);
		} else if (st_opt_is(o, "max-memory")) {
			bad = size_item(&it, verb, o->name, arg, &max_memory);
		} else if (st_opt_is(o, "process-memory")) {
			bad = size_item(&it, verb, o->name, arg, &process_memory);
		} else if (st_opt_is(o, "blocking")) {
			bad = blocking_item(&it, verb, arg);
			blocking_bare = !arg;
		} else if (st_opt_is(o, "pid")) {
			bad = rules ? pids_item(&it, verb, arg) : pid_item(&it, verb, arg);
		} else if (st_opt_is(o, "uid")) {
			bad = number_item(&it, verb, "uid", arg);
		} else if (st_opt_is(o, "procname")) {
			bad = st_procname_check(arg, why, sizeof(why)) < 0;
			if (bad)
				st_err(verb, "--procname: %s", why);
			else
				bad = add(&it, o->name, arg);
		} else if (st_opt_is(o, "session")) {
			bad = add(&it, o->name, arg);
		} else {
			bad = add(&it, o->name, "1"); /* flags: overwrite, all, json */
		}
		if (bad)
			goto out;
	}
	nops = argc - st_optind();
	if (rules && nops == 0) {
		st_err(verb, "missing PATTERN (usage: shimtrace %s %s)", verb, v->synopsis);
		goto out;
	}
	if (probe && (nops != 1 || !has(&it, "pid"))) {
		st_err(verb, "usage: shimtrace load-probe --pid PID LIBRARY.so");
		goto out;
	}
	if (!rules && !probe && nops > (create || named ? 1 : 0)) {
		st_err(verb, "unexpected argument '%s'", argv[st_optind() + (create || named ? 1 : 0)]);
		goto out;
	}
	if (named && nops == 1) {
		if (has(&it, "session")) {
			st_err(verb, "session given twice: '%s' and -s", argv[st_optind()]);
			goto out;
		}
		if (add(&it, "session", argv[st_optind()]) < 0)
			goto out;
	}
	/* "--blocking 2s" would name the session 2s */
	if (blocking_bare && nops && st_blocking_parse(argv[st_optind()], &ms, why, sizeof(why)) == 0) {
		st_err(verb, "--blocking takes its TIMEOUT after an '=': --blocking=%s", argv[st_optind()]);
		goto out;
	}
	for (int i = st_optind(); i < argc; i++) {
		if (rules) {
			if (st_pattern_check(argv[i], why, sizeof(why)) < 0) {
				st_err(verb, "pattern '%s': %s", argv[i], why);
				goto out;
			}
			if (add(&it, "pattern", argv[i]) < 0)
				goto out;
		} else if (create) {
			if (!st_session_name_ok(argv[i])) {
				st_err(verb, "'%s' is not a session name (" ST_SESSION_NAME_RULE ")",
				       argv[i]);
				goto out;
			}
			if (add(&it, "name", argv[i]) < 0)
				goto out;
		} else if (probe) {
			if (absolute(argv[i], path, sizeof(path)) < 0 || access(path, R_OK) < 0) {
				st_err(verb, "cannot read %s", argv[i]);
				goto out;
			}
			if (add(&it, "library", path) < 0)
				goto out;
		}
	}
	if (create) {
		/* before a daemon is started for it (the daemon checks again) */
		if (st_geometry(buffer_size, subbuf_size, &geo, why, sizeof(why)) < 0 ||
		    st_memory_bounds(max_memory, process_memory, st_default_max_memory(), &geo, &mem,
				     why, sizeof(why)) < 0 ||
		    st_blocking_check(has(&it, "overwrite") ? ST_MODE_OVERWRITE : ST_MODE_DISCARD,
				      has(&it, "blocking") ? 1 : 0, why, sizeof(why)) < 0) {
			st_err(verb, "%s", why);
			goto out;
		}
		if (output) {
			if (absolute(output, path, sizeof(path)) < 0 || add(&it, "output", path) < 0) {
				st_err(verb, "bad output directory %s", output);
				goto out;
			}
		} else if (default_output(&it, verb, nops ? argv[st_optind()] : NULL) < 0) {
			goto out;
		}
		snprintf(why, sizeof(why), "%04o", (unsigned)st_user_umask());
		if (add(&it, "umask", why) < 0)
			goto out;
	}
	ret = st_client_request(verb, it.v, it.n, create);
out:
	free_items(&it);
	return ret;
}
