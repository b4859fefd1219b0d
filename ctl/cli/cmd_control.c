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
#include "core/monotime.h"
#include "ctl/common/checks.h"
#include "ctl/cli/cmd_control.h"
#include "ctl/cli/daemoncall.h"
#include "ctl/cli/probeopts.h"
#include "ctl/cli/relayopts.h"
#include "ctl/common/catalog.h"
#include "ctl/common/cli.h"
#include "ctl/common/client.h"
#include "ctl/common/control.h"
#include "ctl/common/relayurl.h"

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

/* What the options and operands of a control verb gathered. */
struct control {
	const struct st_verb *v;
	const char *verb, *output;
	const char *set_url, *ctrl_url, *data_url; /* create: a relay daemon */
	struct items it;
	uint64_t buffer_size, subbuf_size, max_memory, process_memory;
	bool create, rules, probe, named, blocking_bare;
	const char *pids;	     /* --pid's argument */
	struct st_probe_opt dyn;     /* enable --function/--probe */
	bool has_dyn;
};

/* The options, as request items: 0, 1 after --help, -1 after an error
 * message. */
static int options_items(struct control *c, int argc, char **argv)
{
	const char *verb = c->verb, *arg;
	const struct st_opt *o;
	char why[512];

	while ((o = st_getopt(c->v, argc, argv, false, &arg)) != NULL) {
		int bad = 0;

		if (o == &st_opt_error)
			return -1;
		if (st_opt_is(o, "help")) {
			st_verb_help(c->v);
			return 1;
		} else if (st_opt_is(o, "output")) {
			c->output = arg;
		} else if (st_opt_is(o, "set-url")) {
			c->set_url = arg;
		} else if (st_opt_is(o, "ctrl-url")) {
			c->ctrl_url = arg;
		} else if (st_opt_is(o, "data-url")) {
			c->data_url = arg;
		} else if (st_opt_is(o, "buffer-size")) {
			bad = size_item(&c->it, verb, o->name, arg, &c->buffer_size);
		} else if (st_opt_is(o, "subbuf-size")) {
			bad = size_item(&c->it, verb, o->name, arg, &c->subbuf_size);
		} else if (st_opt_is(o, "max-memory")) {
			bad = size_item(&c->it, verb, o->name, arg, &c->max_memory);
		} else if (st_opt_is(o, "process-memory")) {
			bad = size_item(&c->it, verb, o->name, arg, &c->process_memory);
		} else if (st_opt_is(o, "buffers")) {
			uint32_t kind;

			bad = st_buffers_parse(arg, &kind, why, sizeof(why)) < 0;
			if (bad)
				st_err(verb, "%s", why);
			else
				bad = add(&c->it, o->name, arg);
		} else if (st_opt_is(o, "blocking")) {
			bad = blocking_item(&c->it, verb, arg);
			c->blocking_bare = !arg;
		} else if (st_opt_is(o, "pid")) {
			c->pids = arg;
			bad = c->rules ? pids_item(&c->it, verb, arg) : pid_item(&c->it, verb, arg);
		} else if (st_opt_is(o, "function") || st_opt_is(o, "probe")) {
			if (c->has_dyn) {
				st_err(verb, "one --function or --probe at a time");
				return -1;
			}
			c->has_dyn = true;
			bad = st_probe_opt_parse(verb, st_opt_is(o, "function"), arg, &c->dyn) < 0;
		} else if (st_opt_is(o, "uid")) {
			bad = number_item(&c->it, verb, "uid", arg);
		} else if (st_opt_is(o, "procname")) {
			bad = st_procname_check(arg, why, sizeof(why)) < 0;
			if (bad)
				st_err(verb, "--procname: %s", why);
			else
				bad = add(&c->it, o->name, arg);
		} else if (st_opt_is(o, "session") || st_opt_is(o, "wrap")) {
			bad = add(&c->it, o->name, arg);
		} else {
			bad = add(&c->it, o->name, "1"); /* flags: overwrite, all, json */
		}
		if (bad)
			return -1;
	}
	return 0;
}

/* The operands (nops of them, from argv[first]), as request items: 0, or
 * -1 after an error message. */
static int operand_items(struct control *c, int nops, char **argv, int first)
{
	const char *verb = c->verb;
	char path[PATH_MAX], why[256];
	uint32_t ms;

	if (c->rules && nops == 0) {
		st_err(verb, "missing PATTERN (usage: shimtrace %s %s)", verb, c->v->synopsis);
		return -1;
	}
	if (c->probe && (nops != 1 || !has(&c->it, "pid"))) {
		st_err(verb, "usage: shimtrace load-probe --pid PID LIBRARY.so");
		return -1;
	}
	if (!c->rules && !c->probe && nops > (c->create || c->named ? 1 : 0)) {
		st_err(verb, "unexpected argument '%s'", argv[first + (c->create || c->named ? 1 : 0)]);
		return -1;
	}
	if (c->named && nops == 1) {
		if (has(&c->it, "session")) {
			st_err(verb, "session given twice: '%s' and -s", argv[first]);
			return -1;
		}
		if (add(&c->it, "session", argv[first]) < 0)
			return -1;
	}
	/* "--blocking 2s" would name the session 2s */
	if (c->blocking_bare && nops && st_blocking_parse(argv[first], &ms, why, sizeof(why)) == 0) {
		st_err(verb, "--blocking takes its TIMEOUT after an '=': --blocking=%s", argv[first]);
		return -1;
	}
	for (int i = first; i < first + nops; i++) {
		if (c->rules) {
			if (st_pattern_check(argv[i], why, sizeof(why)) < 0) {
				st_err(verb, "pattern '%s': %s", argv[i], why);
				return -1;
			}
			if (st_catalog_typo(argv[i], why, sizeof(why))) {
				st_err(verb, "%s", why);
				return -1;
			}
			if (add(&c->it, "pattern", argv[i]) < 0)
				return -1;
		} else if (c->create) {
			if (!st_session_name_ok(argv[i])) {
				st_err(verb, "'%s' is not a session name (" ST_SESSION_NAME_RULE ")",
				       argv[i]);
				return -1;
			}
			if (add(&c->it, "name", argv[i]) < 0)
				return -1;
		} else if (c->probe) {
			if (st_absolute_path(argv[i], path, sizeof(path)) < 0 || access(path, R_OK) < 0) {
				st_err(verb, "cannot read %s", argv[i]);
				return -1;
			}
			if (add(&c->it, "library", path) < 0)
				return -1;
		}
	}
	/* (the names of what the jvm events number: an enable's patterns
	 * that select those events get them) */
	if (c->rules && strcmp(verb, "enable") == 0) {
		const char *names[ST_CATALOG_NAMES_MAX];
		int k = st_catalog_names((const char *const *)argv + first, nops, names);

		for (int i = 0; i < k; i++)
			if (add(&c->it, "pattern", names[i]) < 0)
				return -1;
	}
	return 0;
}

/* --set-url, or --ctrl-url and --data-url: the relay, asked now, as the
 * items relay-ctrl and relay-data (tcp:// URLs, which the daemon parses
 * again): 0, or -1 after an error message. */
static int relay_items(struct control *c)
{
	struct st_relay_url u;
	char url[300];
	int ret = st_relay_opts(c->verb, c->set_url, c->ctrl_url, c->data_url, c->output != NULL, &u);

	if (ret <= 0)
		return ret;
	st_relay_tcp_url(&u, false, url, sizeof(url));
	if (add(&c->it, "relay-ctrl", url) < 0)
		return -1;
	st_relay_tcp_url(&u, true, url, sizeof(url));
	return add(&c->it, "relay-data", url);
}

/* create's checks, before a daemon is started for it (the daemon checks
 * again), and its output directory and umask: 0, or -1 after an error
 * message. name: the session's, or NULL. */
static int create_items(struct control *c, const char *name)
{
	const char *verb = c->verb;
	char path[PATH_MAX], why[256];
	struct st_memory_bounds mem;
	struct st_geometry geo;

	if (st_geometry(c->buffer_size, c->subbuf_size, &geo, why, sizeof(why)) < 0 ||
	    st_memory_bounds(c->max_memory, c->process_memory, st_default_max_memory(), &geo, &mem,
			     why, sizeof(why)) < 0 ||
	    st_blocking_check(has(&c->it, "overwrite") ? ST_MODE_OVERWRITE : ST_MODE_DISCARD,
			      has(&c->it, "blocking") ? 1 : 0, why, sizeof(why)) < 0) {
		st_err(verb, "%s", why);
		return -1;
	}
	if (relay_items(c) < 0)
		return -1;
	if (c->output) {
		if (st_absolute_path(c->output, path, sizeof(path)) < 0 || add(&c->it, "output", path) < 0) {
			st_err(verb, "bad output directory %s", c->output);
			return -1;
		}
	} else if (default_output(&c->it, verb, name) < 0) {
		return -1;
	}
	snprintf(why, sizeof(why), "%04o", (unsigned)st_user_umask());
	return add(&c->it, "umask", why) < 0 ? -1 : 0;
}

/* How long create waits for the daemon to reach the relay it was given:
 * its connection's time limit (relaylive.c), and a second more. */
#define RELAY_CONFIRM_MS 4000

/* Whether the relay of session item's status (json) is connected: 1, 0
 * not yet, -1 with its reason in why (or no word of it). */
static int relay_state(const char *verb, const char *item, char *why, size_t n)
{
	const char *items[] = { item, "json=1" }, *relay, *err;
	char *text = NULL;
	int ret = 0;

	if (st_daemon_call(verb, "status", items, 2, false, &text, true) != ST_EXIT_OK || !text ||
	    !(relay = strstr(text, "\"relay\": {"))) {
		snprintf(why, n, "the session daemon does not say");
		ret = -1;
	} else if (st_json_true_at(relay, "connected")) {
		ret = 1;
	} else if ((err = strstr(relay, "\"error\": ")) && strncmp(err + 9, "null", 4) != 0) {
		/* (its last key: a null error is not the next session's) */
		if (st_json_string_at(err, "error", why, n) < 0)
			snprintf(why, n, "a reason that cannot be shown");
		ret = -1;
	}
	free(text);
	return ret;
}

/*
 * create with a relay. The command asked the relay before (relayopts.c),
 * but the daemon connects from where it runs, which may not reach it (the
 * system daemon's unit has no network): once created, the session is
 * followed until its relay is connected, or says why not; then it is
 * destroyed, and create fails with that reason.
 */
static int create_streamed(struct control *c)
{
	char *text = NULL, name[64], item[96], why[300];
	const char *items[] = { item };
	uint64_t until;
	int ret = st_daemon_call(c->verb, "create", c->it.v, c->it.n, true, &text, false), state;

	if (ret != ST_EXIT_OK || !text || sscanf(text, "session %63s created", name) != 1) {
		if (text)
			fputs(text, stdout);
		free(text);
		return ret;
	}
	snprintf(item, sizeof(item), "session=%s", name);
	until = st_now_ms() + RELAY_CONFIRM_MS;
	while ((state = relay_state(c->verb, item, why, sizeof(why))) == 0 && st_now_ms() < until)
		usleep(20000);
	if (state == 1) {
		/* (what create says, once it holds) */
		fputs(text, stdout);
		free(text);
		return ST_EXIT_OK;
	}
	free(text);
	if (state == 0)
		snprintf(why, sizeof(why), "no connection to the relay daemon in %d s",
			 RELAY_CONFIRM_MS / 1000);
	st_daemon_call(c->verb, "destroy", items, 1, false, NULL, true);
	st_err(c->verb, "from the session daemon: %s: session %s destroyed", why, name);
	return ST_EXIT_FAIL;
}

/* enable NAME --pid PID --function|--probe SPEC: the probe's items, and
 * probe:NAME for NAME among the operands. 0, or -1 after an error. */
static int dynprobe_items(struct control *c, int nops, char **ops)
{
	static char pattern[80];
	char rel[PATH_MAX], lib[PATH_MAX];

	if (st_probe_opt_enable(c->verb, &c->dyn, nops, ops, c->pids, pattern, sizeof(pattern)) < 0)
		return -1;
	ops[0] = pattern;
	snprintf(rel, sizeof(rel), "%s/libshimtrace-dynprobe.so", st_libdir_wrappers());
	if (st_absolute_path(rel, lib, sizeof(lib)) < 0 || access(lib, R_OK) < 0) {
		st_err(c->verb, "cannot find %s", rel);
		return -1;
	}
	return add(&c->it, "probe-kind", c->dyn.function ? "function" : "probe") < 0 ||
			       add(&c->it, "probe-spec", c->dyn.spec) < 0 ||
			       add(&c->it, "library", lib) < 0
		       ? -1
		       : 0;
}

int st_cmd_control(const struct st_verb *v, int argc, char **argv)
{
	const char *verb = v->name;
	struct control c = {
		.v = v,
		.verb = verb,
		.it = { .n = 0 },
		.create = strcmp(verb, "create") == 0,
		.rules = strcmp(verb, "enable") == 0 || strcmp(verb, "disable") == 0,
		.probe = strcmp(verb, "load-probe") == 0,
		/* Verbs on one session take its name as -s NAME or as an operand. */
		.named = strcmp(verb, "destroy") == 0 || strcmp(verb, "start") == 0 ||
			 strcmp(verb, "stop") == 0 || strcmp(verb, "status") == 0 ||
			 strcmp(verb, "snapshot") == 0,
	};
	int nops, ret = ST_EXIT_USAGE, got;

	got = options_items(&c, argc, argv);
	if (got > 0)
		ret = ST_EXIT_OK;
	if (got)
		goto out;
	nops = argc - st_optind();
	if (c.has_dyn && dynprobe_items(&c, nops, argv + st_optind()) < 0)
		goto out;
	if (operand_items(&c, nops, argv, st_optind()) < 0)
		goto out;
	if (c.create && create_items(&c, nops ? argv[st_optind()] : NULL) < 0)
		goto out;
	if (c.create && has(&c.it, "relay-ctrl"))
		ret = create_streamed(&c);
	else
		ret = st_client_request(verb, c.it.v, c.it.n, c.create);
out:
	free_items(&c.it);
	return ret;
}
