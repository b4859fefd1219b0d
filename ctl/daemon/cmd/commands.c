/*
 * The verbs the daemon takes from the shimtrace command: create, destroy,
 * start, stop, enable, disable, snapshot, load-probe, and the dispatch of
 * every verb (status and list: status.c).
 *
 * The command line parses and checks the options (ctl/cli/cmd_control.c); the
 * daemon checks again what concerns it, and what a user may do (what a
 * requester sees and names: requester.c). A session created by a user
 * other than root traces only that user's processes.
 *
 * Owns: the requests waiting for a drain (stops), and the sessions'
 *       creation order.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: cmd, drain, model, objects, out.
 */
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/abi.h"
#include "core/monotime.h"
#include "ctl/common/catalog.h"
#include "ctl/common/checks.h"
#include "ctl/common/control.h"
#include "ctl/common/escape.h"
#include "ctl/common/relayurl.h"
#include "ctl/daemon/cmd/commands.h"
#include "ctl/daemon/cmd/control.h"
#include "ctl/daemon/cmd/dynprobe.h"
#include "ctl/daemon/cmd/probe.h"
#include "ctl/daemon/cmd/sessattach.h"
#include "ctl/daemon/cmd/requester.h"
#include "ctl/daemon/cmd/snapshot.h"
#include "ctl/daemon/cmd/status.h"
#include "ctl/daemon/drain/consumer.h"
#include "ctl/daemon/drain/lifecycle.h"
#include "ctl/daemon/drain/pickup.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/maps.h"
#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/wire/request.h"

static uint64_t created_seq;

/* Reads an unsigned number item; def when absent, -1 when malformed. */
static int64_t num(const struct st_request *r, const char *key, int64_t def)
{
	const char *v = st_req_get(r, key);
	char *end;
	long long n;

	if (!v)
		return def;
	errno = 0;
	n = strtoll(v, &end, 10);
	return errno || *end || end == v || n < 0 ? -1 : n;
}

/* The umask item, octal (the requester's: the modes of its trace); 022
 * when absent (an older client), -1 when malformed. */
static int umask_of(const struct st_request *r)
{
	const char *v = st_req_get(r, "umask");
	char *end;
	long m;

	if (!v)
		return 022;
	errno = 0;
	m = strtol(v, &end, 8);
	return errno || *end || end == v || m < 0 || m > 0777 ? -1 : (int)m;
}

static int cmd_create(struct st_daemon *d, struct st_request *r)
{
	struct st_session_config cfg = { .buffers = st_buffers_default() };
	struct st_relay_url relay;
	const char *name = st_req_get(r, "name"), *outdir = st_req_get(r, "output");
	char auto_name[64], err[512];
	int64_t bs = num(r, "buffer-size", 0), sb = num(r, "subbuf-size", 0),
		mm = num(r, "max-memory", 0), pm = num(r, "process-memory", 0), bl;
	int mask = umask_of(r);
	const char *blocking = st_req_get(r, "blocking");
	struct st_session *ses;
	char geotext[192], bound[32], mode[64];
	int ret;

	if (!outdir || outdir[0] != '/')
		return st_reply_error(r, ST_EXIT_USAGE, "shimtrace create: the output directory must "
							"be an absolute path");
	if (bs < 0 || sb < 0 || mm < 0 || pm < 0)
		return st_reply_error(r, ST_EXIT_USAGE, "shimtrace create: malformed size");
	if (mask < 0)
		return st_reply_error(r, ST_EXIT_USAGE, "shimtrace create: malformed umask");
	if (name && !st_session_name_ok(name))
		return st_reply_error(r, ST_EXIT_USAGE,
				      "shimtrace create: '%s' is not a session name (" ST_SESSION_NAME_RULE
				      ")",
				      name);
	if (!name) {
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		size_t len = strftime(auto_name, sizeof(auto_name), "auto_%Y%m%d_%H%M%S", &tm);

		for (int i = 2; st_session_find(d, r->uid, auto_name) && i < 100; i++)
			snprintf(auto_name + len, sizeof(auto_name) - len, "_%d", i);
		name = auto_name;
	}
	cfg.name = name;
	cfg.outdir = outdir;
	cfg.mode = st_req_get(r, "overwrite") ? ST_MODE_OVERWRITE : ST_MODE_DISCARD;
	if (blocking && strcmp(blocking, "forever") == 0)
		cfg.block_ms = ST_ABI_BLOCK_FOREVER;
	else if (blocking && (bl = num(r, "blocking", 0)) >= 1 && bl <= ST_BLOCK_MAX_MS)
		cfg.block_ms = (uint32_t)bl;
	else if (blocking)
		return st_reply_error(r, ST_EXIT_USAGE, "shimtrace create: malformed --blocking");
	if (st_req_get(r, "buffers") &&
	    st_buffers_parse(st_req_get(r, "buffers"), &cfg.buffers, err, sizeof(err)) < 0)
		return st_reply_error(r, ST_EXIT_USAGE, "shimtrace create: %s", err);
	cfg.buffer_size = (uint64_t)bs;
	cfg.subbuf_size = (uint64_t)sb;
	cfg.max_memory = (uint64_t)mm;
	cfg.process_memory = (uint64_t)pm;
	cfg.owner = r->uid;
	cfg.owner_gid = r->gid;
	cfg.umask = (mode_t)mask;
	cfg.all_users = r->root;
	cfg.attach = st_req_get(r, "attach") != NULL;
	if (st_req_get(r, "relay-ctrl") || st_req_get(r, "relay-data")) {
		/* (the requester's words: parsed here again) */
		if (!st_req_get(r, "relay-ctrl") || !st_req_get(r, "relay-data") ||
		    st_relay_urls_parse(st_req_get(r, "relay-ctrl"), st_req_get(r, "relay-data"),
					&relay, err, sizeof(err)) < 0)
			return st_reply_error(r, ST_EXIT_USAGE, "shimtrace create: bad relay URL");
		cfg.relay = &relay;
	}
	ret = st_session_create(d, &cfg, &ses, err, sizeof(err));
	if (ret < 0)
		return st_reply_error(r, ret == -EEXIST || ret == -ENOSPC ? ST_EXIT_FAIL : ST_EXIT_USAGE,
				      "shimtrace create: %s", err);
	ses->created = ++created_seq;
	st_session_buffers_text(ses, geotext, sizeof(geotext));
	st_mode_text(cfg.mode, cfg.block_ms, mode, sizeof(mode));
	st_size_text(ses->max_memory, bound, sizeof(bound));
	st_reply(r, "session %s created (%s mode; buffers of %s, %s in all), trace in %s\n", name,
		 mode, geotext, bound, ses->trace.dir);
	if (cfg.relay)
		st_reply(r, "streamed live to the relay daemon at %s, as session %s\n", relay.host,
			 name);
	if (cfg.attach)
		st_reply(r, "it attaches the processes its --pid rules name that run without the "
			    "preload\n");
	return ST_EXIT_OK;
}

static void destroy_one(struct st_daemon *d, struct st_request *r, struct st_session *ses)
{
	char name[sizeof(ses->name)], dir[ST_ESC_SIZE(sizeof(ses->trace.dir))];

	memcpy(name, ses->name, sizeof(name));
	st_esc(dir, sizeof(dir), ses->trace.dir);
	st_sessattach_stopped(d, ses);
	if (st_session_destroy(d, ses))
		st_reply(r, "session %s destroyed; never started, its empty directory %s is removed\n",
			 name, dir);
	else
		st_reply(r, "session %s destroyed, trace in %s\n", name, dir);
}

static int cmd_destroy(struct st_daemon *d, struct st_request *r)
{
	struct st_session *ses;
	int n = 0;

	if (!st_req_get(r, "all")) {
		ses = st_requester_session(d, r);
		if (!ses)
			return ST_EXIT_FAIL;
		destroy_one(d, r, ses);
		return ST_EXIT_OK;
	}
	ses = d->sessions;
	/* (all of the requester's own: root's too, not every user's) */
	for (struct st_session *next; ses; ses = next) {
		next = ses->next;
		if (ses->owner != r->uid)
			continue;
		destroy_one(d, r, ses);
		n++;
	}
	if (!n)
		st_reply(r, "no session to destroy\n");
	return ST_EXIT_OK;
}

static int cmd_start(struct st_daemon *d, struct st_request *r)
{
	struct st_session *ses = st_requester_session(d, r);
	const char *patterns[ST_REQ_MAX_ITEMS];
	pid_t pids[ST_REQ_MAX_ITEMS];
	uint32_t np = 0, n = 0;
	char err[512];

	if (!ses)
		return ST_EXIT_FAIL;
	if (st_session_start(d, ses, err, sizeof(err)) < 0)
		return st_reply_error(r, ST_EXIT_FAIL, "shimtrace start: %s", err);
	st_reply(r, "session %s started\n", ses->name);
	if (!st_req_get(r, "attach"))
		return ST_EXIT_OK;
	/* --attach: the processes its rules name, and of later rules */
	ses->attach = true;
	for (uint32_t i = 0; i < ses->nrules; i++) {
		const struct st_rule *rule = &ses->rules[i];

		if (!rule->enable)
			continue;
		if (np < ST_REQ_MAX_ITEMS)
			patterns[np++] = rule->pattern;
		for (uint32_t k = 0; k < rule->npids && n < ST_REQ_MAX_ITEMS; k++) {
			uint32_t j = 0;

			while (j < n && pids[j] != rule->pids[k])
				j++;
			if (j == n)
				pids[n++] = rule->pids[k];
		}
	}
	return st_sessattach(d, r, ses, pids, n, patterns, np, st_req_get(r, "wrap"), ST_EXIT_OK);
}

/*
 * A stop waits, without holding the loop, for what is on its way for the
 * session's processes (their objects and line tables, from inspectors that
 * have deadlines of their own), so that its trace has their statedumps and
 * refined call sites: it is answered when nothing is, or once nothing has
 * arrived for STOP_WAIT_MS (a machine busy with other work builds line
 * tables slowly, not never), and after STOP_WAIT_MAX_MS in any case.
 */
#define STOP_WAIT_MS 5000
#define STOP_WAIT_MAX_MS 60000

struct pending_stop {
	struct pending_stop *next;
	struct st_request req;
	uint32_t generation; /* of the session (unique) */
	uint64_t deadline, hard_deadline;
};

static struct pending_stop *stops;
static uint64_t last_progress; /* ms: when objects or a line table last came */

void st_commands_progress(void)
{
	last_progress = st_now_ms();
}

/* Whether pending stop ps may wait on. */
static bool may_wait(const struct pending_stop *ps)
{
	uint64_t now = st_now_ms();

	return now < ps->deadline || (now < ps->hard_deadline && now - last_progress < STOP_WAIT_MS);
}

static bool session_waiting(struct st_daemon *d, const struct st_session *ses)
{
	for (struct st_proc *p = d->procs; p; p = p->next)
		if (!p->conn.ended && p->control && st_session_covers(ses, p) &&
		    p->control->session[ses->index].generation == ses->generation &&
		    (p->conn.end_deferred || st_proc_waiting(p) || st_pickup_due(d, p, ses->index)))
			return true;
	return false;
}

/*
 * What the buffers hold asks for the line tables it needs: a drain that
 * finds callers whose table is on its way leaves them, and its process
 * waits (st_proc_waiting) a few seconds. A pending stop drains again at
 * each look, so that a process whose tables are still coming (hundreds of
 * libraries on a busy machine) is waited for as long as they come, not
 * only those first seconds.
 */
static void flush_asking(struct st_daemon *d, const struct st_session *ses)
{
	for (struct st_proc *p = d->procs; p; p = p->next)
		if (!p->conn.ended && p->control && st_session_covers(ses, p) &&
		    p->control->session[ses->index].generation == ses->generation &&
		    !st_proc_waiting(p))
			st_consume_all(d, p, ST_DRAIN_FLUSH);
	st_consume_user_pools(d, ST_DRAIN_FLUSH);
}

static int stop_now(struct st_daemon *d, struct st_request *r, struct st_session *ses)
{
	char dir[ST_ESC_SIZE(sizeof(ses->trace.dir))];

	if (st_session_stop(d, ses) < 0)
		return st_reply_error(r, ST_EXIT_FAIL, "shimtrace stop: session '%s' is not started",
				      ses->name);
	st_sessattach_stopped(d, ses);
	st_reply(r, "session %s stopped: ", ses->name);
	st_reply_totals(r, ses, "events recorded");
	st_reply(r, "; trace in %s\n", st_esc(dir, sizeof(dir), ses->trace.dir));
	st_reply_losses(r, ses);
	return ST_EXIT_OK;
}

static int cmd_stop(struct st_daemon *d, struct st_request *r)
{
	struct st_session *ses = st_requester_session(d, r);
	struct pending_stop *ps;

	if (!ses)
		return ST_EXIT_FAIL;
	/* (pools a process without a connection offers: take them now, not
	 * at the next tick; the stop waits for them) */
	for (struct st_proc *p = d->procs; ses->active && p; p = p->next)
		if (st_session_covers(ses, p))
			st_pickup(d, p);
	if (ses->active)
		flush_asking(d, ses);
	if (!ses->active || !session_waiting(d, ses) || !(ps = calloc(1, sizeof(*ps))))
		return stop_now(d, r, ses);
	/* the request outlives this call: keep its descriptor and peer only */
	ps->req = *r;
	ps->req.nitems = 0;
	ps->req.verb = NULL;
	ps->generation = ses->generation;
	ps->deadline = st_now_ms() + STOP_WAIT_MS;
	ps->hard_deadline = st_now_ms() + STOP_WAIT_MAX_MS;
	ps->next = stops;
	stops = ps;
	return ST_CTL_DEFERRED;
}

void st_commands_poll(struct st_daemon *d, bool now)
{
	for (struct pending_stop **pp = &stops; *pp;) {
		struct pending_stop *ps = *pp;
		struct st_session *ses = d->sessions;
		bool waits;

		while (ses && ses->generation != ps->generation)
			ses = ses->next;
		waits = ses && !now && may_wait(ps);
		int status;

		if (waits)
			flush_asking(d, ses);
		if (waits && session_waiting(d, ses)) {
			pp = &ps->next;
			continue;
		}
		*pp = ps->next;
		if (!ses)
			status = st_reply_error(&ps->req, ST_EXIT_FAIL,
						"shimtrace stop: the session was destroyed meanwhile");
		else
			status = stop_now(d, &ps->req, ses);
		st_request_finish(&ps->req, status);
		free(ps);
	}
}

/* Whether pattern matches a tracepoint known to the requester (registered
 * by a process it may see, or in the wrapper families). */
static bool known_pattern(const struct st_daemon *d, const struct st_request *r,
			  const char *pattern)
{
	char full[2 * ST_ABI_NAME_MAX + 2];

	for (uint32_t i = ST_EV_BUILTIN_COUNT; i < d->reg.n; i++) {
		const struct st_evclass *c = d->reg.v[i];

		if (!c || (!r->root && !st_evclass_used_by(c, r->uid)))
			continue;
		snprintf(full, sizeof(full), "%s:%s", c->provider, c->name);
		if (fnmatch(pattern, full, 0) == 0)
			return true;
	}
	for (unsigned i = 0; i < st_catalog_count; i++)
		if (st_catalog_match(&st_catalog[i], pattern))
			return true;
	return false;
}

/*
 * A rule's pid that names no registered process is kept (a process that
 * registers with that pid is selected), but the user hears of it: a typo
 * or a process that ended is the likelier story.
 */
static void warn_unregistered(struct st_daemon *d, struct st_request *r, pid_t pid)
{
	if (st_requester_proc(d, r, pid))
		return;
	if (kill(pid, 0) < 0 && errno == ESRCH)
		st_reply_error(r, 0, "shimtrace %s: warning: no process %d runs (the rule applies to "
				     "a process that registers with that pid)",
			       r->verb, (int)pid);
	else
		st_reply_error(r, 0, "shimtrace %s: warning: process %d is not registered with this "
				     "daemon (not started with the shimtrace preload: a session "
				     "started with --attach attaches it; or not yours)",
			       r->verb, (int)pid);
}

/*
 * enable --function/--probe: one NAME (probe:NAME), one --pid of a
 * registered process; 0, or an exit status after saying why.
 */
static int dynprobe_check(struct st_daemon *d, struct st_request *r, uint32_t np,
			  const char *pattern, const struct st_rule *rule)
{
	const char *kind = st_req_get(r, "probe-kind"), *spec = st_req_get(r, "probe-spec");

	if (np != 1 || strncmp(pattern, "probe:", 6) != 0 || !st_abi_name_valid(pattern + 6) ||
	    rule->npids != 1 || !spec || !st_req_get(r, "library") ||
	    (strcmp(kind, "function") != 0 && strcmp(kind, "probe") != 0) || strpbrk(spec, " \n"))
		return st_reply_error(r, ST_EXIT_USAGE, "shimtrace enable: --function/--probe needs "
							"one NAME, one --pid and a SPEC");
	if (!st_requester_proc(d, r, rule->pids[0]))
		return st_reply_error(r, ST_EXIT_FAIL, "shimtrace enable: no registered process %d: "
						       "a dynamic probe is planted in a running process "
						       "started with the shimtrace preload",
				      (int)rule->pids[0]);
	return 0;
}

/*
 * After the rule: enable --function/--probe plants the dynamic probe in
 * the one process of its --pid (checked before); disable probe:NAME
 * --pid PID removes the probe NAME planted there (dynprobe.c).
 */
static int rule_dynprobe(struct st_daemon *d, struct st_request *r, bool enable,
			 const char *pattern, const struct st_rule *rule)
{
	const char *kind = st_req_get(r, "probe-kind"), *lib = st_req_get(r, "library");
	const char *name = pattern && strncmp(pattern, "probe:", 6) == 0 ? pattern + 6 : NULL;
	struct st_proc *p;

	if ((enable && !kind) || !name || rule->npids != 1 || !st_abi_name_valid(name))
		return ST_EXIT_OK;
	p = st_requester_proc(d, r, rule->pids[0]);
	if (!p || (!enable && !st_dynprobe_planted(p, name)))
		return ST_EXIT_OK;
	return st_cmd_dynprobe(d, r, p, name, enable ? kind : NULL, st_req_get(r, "probe-spec"),
			       lib ? lib : "/" /* (a removal loads nothing) */);
}

static int cmd_rule(struct st_daemon *d, struct st_request *r, bool enable)
{
	const char *patterns[ST_REQ_MAX_ITEMS], *pids[ST_RULE_MAX_PIDS + 1];
	uint32_t np = st_req_all(r, "pattern", patterns, ST_REQ_MAX_ITEMS),
		 npids = st_req_all(r, "pid", pids, ST_RULE_MAX_PIDS + 1);
	const char *procname = st_req_get(r, "procname");
	int64_t uid = num(r, "uid", -2);
	struct st_session *ses;
	struct st_rule rule;
	char why[256];

	if (np == 0)
		return st_reply_error(r, ST_EXIT_USAGE, "shimtrace %s: no PATTERN", r->verb);
	if (npids > ST_RULE_MAX_PIDS)
		return st_reply_error(r, ST_EXIT_USAGE, "shimtrace %s: more than %d pids", r->verb,
				      ST_RULE_MAX_PIDS);
	if (uid == -1 || uid > UINT32_MAX)
		return st_reply_error(r, ST_EXIT_USAGE, "shimtrace %s: malformed uid", r->verb);
	if (procname && st_procname_check(procname, why, sizeof(why)) < 0)
		return st_reply_error(r, ST_EXIT_USAGE, "shimtrace %s: --procname: %s", r->verb, why);
	ses = st_requester_session(d, r);
	if (!ses)
		return ST_EXIT_FAIL;
	if (uid >= 0 && !ses->all_users && (uid_t)uid != ses->owner)
		return st_reply_error(r, ST_EXIT_FAIL,
				      "shimtrace %s: session '%s' traces only uid %u's processes",
				      r->verb, ses->name, (unsigned)ses->owner);
	memset(&rule, 0, sizeof(rule));
	rule.enable = enable;
	for (uint32_t i = 0; i < npids; i++)
		if (st_pid_parse(pids[i], &rule.pids[rule.npids++], why, sizeof(why)) < 0)
			return st_reply_error(r, ST_EXIT_USAGE, "shimtrace %s: --pid: %s", r->verb, why);
	for (uint32_t i = 0; i < np; i++)
		if (st_pattern_check(patterns[i], why, sizeof(why)) < 0)
			return st_reply_error(r, ST_EXIT_USAGE, "shimtrace %s: pattern '%s': %s",
					      r->verb, patterns[i], why);
	if (enable && st_req_get(r, "probe-kind")) {
		int bad = dynprobe_check(d, r, np, patterns[0], &rule);

		if (bad)
			return bad;
	}
	if (procname)
		snprintf(rule.procname, sizeof(rule.procname), "%s", procname);
	rule.has_uid = uid >= 0;
	rule.uid = uid >= 0 ? (uid_t)uid : 0;
	for (uint32_t i = 0; i < np; i++) {
		snprintf(rule.pattern, sizeof(rule.pattern), "%s", patterns[i]);
		if (st_session_add_rule(d, ses, &rule) < 0)
			return st_reply_error(r, ST_EXIT_FAIL, "shimtrace %s: out of memory", r->verb);
		st_reply(r, "%s %s in session %s%s\n", patterns[i], enable ? "enabled" : "disabled",
			 ses->name,
			 known_pattern(d, r, patterns[i]) ? "" : " (it matches no tracepoint known yet)");
	}
	if (enable && ses->attach)
		return st_sessattach(d, r, ses, rule.pids, rule.npids, patterns, np,
				     st_req_get(r, "wrap"), ST_EXIT_OK);
	for (uint32_t i = 0; i < rule.npids; i++)
		warn_unregistered(d, r, rule.pids[i]);
	return rule_dynprobe(d, r, enable, np == 1 ? patterns[0] : NULL, &rule);
}

static int cmd_snapshot(struct st_daemon *d, struct st_request *r)
{
	struct st_session *ses = st_requester_session(d, r);

	return ses ? st_cmd_snapshot(d, r, ses) : ST_EXIT_FAIL;
}

static int cmd_load_probe(struct st_daemon *d, struct st_request *r)
{
	int64_t pid = num(r, "pid", 0);
	const char *lib = st_req_get(r, "library");
	struct st_proc *p;

	if (pid <= 0 || !lib || lib[0] != '/')
		return st_reply_error(r, ST_EXIT_USAGE,
				      "shimtrace load-probe: needs --pid PID and an absolute LIBRARY path");
	p = st_requester_proc(d, r, (pid_t)pid);
	if (p)
		return st_cmd_load_probe(d, r, p, lib);
	return st_reply_error(r, ST_EXIT_FAIL, "shimtrace load-probe: no registered process %lld",
			      (long long)pid);
}

int st_command(struct st_daemon *d, struct st_request *r)
{
	static const struct {
		const char *verb;
		int (*run)(struct st_daemon *, struct st_request *);
	} verbs[] = {
		{ "create", cmd_create },     { "destroy", cmd_destroy },   { "start", cmd_start },
		{ "stop", cmd_stop },	      { "status", st_cmd_status },	    { "list", st_cmd_list },
		{ "snapshot", cmd_snapshot }, { "load-probe", cmd_load_probe },
	};

	if (strcmp(r->verb, "enable") == 0 || strcmp(r->verb, "disable") == 0)
		return cmd_rule(d, r, r->verb[0] == 'e');
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(r->verb, verbs[i].verb) == 0)
			return verbs[i].run(d, r);
	return st_reply_error(r, ST_EXIT_USAGE, "shimtrace: the daemon does not know '%s'", r->verb);
}
