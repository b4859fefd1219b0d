/*
 * status and list, as text or JSON: the daemon, its users' quotas, the
 * sessions and the processes the requester may see (requester.c), and the
 * totals and losses a stop reports. What processes and users named (a
 * comm, an executable, a directory) is escaped.
 *
 * Owns: nothing kept.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, cmd, model, out.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/common/catalog.h"
#include "ctl/common/checks.h"
#include "ctl/common/control.h"
#include "ctl/common/escape.h"
#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/cmd/control.h"
#include "ctl/daemon/cmd/dynprobe.h"
#include "ctl/daemon/cmd/requester.h"
#include "ctl/daemon/cmd/status.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/model/userpool.h"
#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/wire/request.h"

static const char *state_name(const struct st_session *ses)
{
	switch (ses->state) {
	case ST_SESSION_CREATED:
		return "created";
	case ST_SESSION_STARTED:
		return "started";
	default:
		return "stopped";
	}
}

/* "N events[ recorded], M lost[ (K writing the trace: why)], from P processes" */
void st_reply_totals(struct st_request *r, struct st_session *ses, const char *events)
{
	struct st_session_totals t;

	st_session_totals(ses, &t);
	st_reply(r, "%llu %s, %llu lost", (unsigned long long)t.events, events,
		 (unsigned long long)t.lost);
	if (t.write_lost)
		st_reply(r, " (%llu writing the trace: %s)", (unsigned long long)t.write_lost,
			 strerror(t.write_err));
	st_reply(r, ", from %u processes", t.processes);
}

/* The session's losses by cause, each with what would have kept them. */
void st_reply_losses(struct st_request *r, const struct st_session *ses)
{
	char text[1024];

	st_session_loss_report(ses, "  ", text, sizeof(text));
	st_reply(r, "%s", text);
}

static void json_str(struct st_request *r, const char *s)
{
	size_t n = strlen(s);

	st_reply(r, "\"");
	while (n) {
		char buf[256];
		size_t used, k = st_esc_part(buf, sizeof(buf), s, n, ST_ESC_JSON, &used);

		st_reply(r, "%.*s", (int)k, buf);
		s += used;
		n -= used;
	}
	st_reply(r, "\"");
}

static void rule_text(struct st_request *r, const struct st_rule *ru, bool json)
{
	if (json) {
		st_reply(r, "{\"enable\": %s, \"pattern\": ", ru->enable ? "true" : "false");
		json_str(r, ru->pattern);
		st_reply(r, ", \"pids\": [");
		for (uint32_t k = 0; k < ru->npids; k++)
			st_reply(r, "%s%d", k ? ", " : "", ru->pids[k]);
		st_reply(r, "], \"procname\": ");
		if (ru->procname[0])
			json_str(r, ru->procname);
		else
			st_reply(r, "null");
		if (ru->has_uid)
			st_reply(r, ", \"uid\": %u}", (unsigned)ru->uid);
		else
			st_reply(r, ", \"uid\": null}");
		return;
	}
	st_reply(r, "    %s %s", ru->enable ? "enable " : "disable", ru->pattern);
	if (ru->npids) {
		st_reply(r, " --pid ");
		for (uint32_t k = 0; k < ru->npids; k++)
			st_reply(r, "%s%d", k ? "," : "", ru->pids[k]);
	}
	if (ru->procname[0]) {
		char name[ST_ESC_SIZE(sizeof(ru->procname))];

		st_reply(r, " --procname %s", st_esc(name, sizeof(name), ru->procname));
	}
	if (ru->has_uid)
		st_reply(r, " --uid %u", (unsigned)ru->uid);
	st_reply(r, "\n");
}

/* The per-user buffers of ses (--buffers per-user): for each user, the
 * memory its pool commits (all its CPUs' buffers) and the processes that
 * write it now. */
static void user_buffers(struct st_request *r, const struct st_daemon *d,
			 const struct st_session *ses, bool json)
{
	uint32_t n = 0;

	if (json)
		st_reply(r, ", \"users\": [");
	for (const struct st_user_pool *up = d->user_pools; up; up = up->next) {
		uint32_t writers = 0;
		char size[32];

		if (!st_user_pool_serves(up, ses))
			continue;
		for (uint32_t k = 0; k < up->nwriters; k++)
			writers += up->writers[k] != NULL;
		if (json) {
			st_reply(r, "%s{\"uid\": %u, \"committed\": %llu, \"cpus\": %u, \"processes\": %u}",
				 n ? ", " : "", (unsigned)up->uid, (unsigned long long)up->bytes,
				 ses->nslots, writers);
		} else {
			st_size_text(up->bytes, size, sizeof(size));
			st_reply(r, "  buffers of uid %u: %s committed (%u CPUs), written by %u process%s\n",
				 (unsigned)up->uid, size, ses->nslots, writers, writers == 1 ? "" : "es");
		}
		n++;
	}
	if (json)
		st_reply(r, "]");
}

/* A session's buffer memory (ses), or the daemon's (NULL), as JSON. */
static void memory_json(struct st_request *r, const struct st_daemon *d, const struct st_session *ses)
{
	const struct st_membound *m = ses ? &ses->mem : &d->mem;

	st_reply(r,
		 "{\"bound\": %llu, \"committed\": %llu, \"granted\": %llu, "
		 "\"committed_peak\": %llu, \"granted_peak\": %llu",
		 (unsigned long long)m->bound, (unsigned long long)st_memory_committed(d, ses),
		 (unsigned long long)m->granted, (unsigned long long)m->committed_peak,
		 (unsigned long long)m->granted_peak);
	if (ses) {
		st_reply(r, ", \"shrunk\": %u, \"refused\": %u, \"raised\": %u, \"taken_back\": %u",
			 ses->memc.shrunk, ses->memc.refused, ses->memc.raised, ses->memc.taken_back);
		user_buffers(r, d, ses, true);
	}
	st_reply(r, "}");
}

/* Where a streamed session's trace goes, and what it sent and lost. */
static void relay_text(struct st_request *r, struct st_session *ses, bool json)
{
	struct st_relaylive_stats st;
	char path[ST_ESC_SIZE(sizeof(st.path))], err[ST_ESC_SIZE(sizeof(st.err))];

	if (!ses->relay) {
		if (json)
			st_reply(r, ", \"relay\": null");
		return;
	}
	st_relaylive_stats(ses->relay, &st);
	if (json) {
		st_reply(r, ", \"relay\": {\"connected\": %s, \"path\": ",
			 st.connected ? "true" : "false");
		json_str(r, st.path);
		st_reply(r, ", \"sessions\": %u, \"packets\": %llu, \"bytes\": %llu, "
			    "\"pending_bytes\": %llu, \"lost_packets\": %llu, \"error\": ",
			 st.sessions, (unsigned long long)st.packets, (unsigned long long)st.bytes,
			 (unsigned long long)st.pending, (unsigned long long)st.lost);
		if (st.err[0])
			json_str(r, st.err);
		else
			st_reply(r, "null");
		st_reply(r, "}");
		return;
	}
	/* (the relay's words: escaped) */
	st_esc(path, sizeof(path), st.path);
	st_esc(err, sizeof(err), st.err);
	st_reply(r, "  relay: %s %s: %llu packets said written (%llu bytes), %llu bytes to send",
		 st.connected ? "streaming to" : "lost, was", st.sessions ? path : "(none yet)",
		 (unsigned long long)st.packets, (unsigned long long)st.bytes,
		 (unsigned long long)st.pending);
	if (st.sessions > 1)
		st_reply(r, ", reconnected %u times", st.sessions - 1);
	if (st.lost)
		st_reply(r, ", %llu packets lost sending to the relay daemon", (unsigned long long)st.lost);
	if (!st.connected && err[0])
		st_reply(r, " (%s)", err);
	st_reply(r, "\n");
}

static void session_text(struct st_request *r, const struct st_daemon *d, struct st_session *ses,
			 bool json)
{
	struct st_session_totals t;
	uint64_t by[ST_LOSS_KINDS];
	char geotext[192], memory[512], mode[64], lab[96];
	char dir[ST_ESC_SIZE(sizeof(ses->trace.dir))];

	st_session_totals(ses, &t);
	if (json) {
		st_reply(r, "{\"name\": ");
		json_str(r, ses->name);
		st_reply(r, ", \"state\": \"%s\", \"mode\": \"%s\", \"blocking\": %s", state_name(ses),
			 ses->mode == ST_MODE_OVERWRITE ? "overwrite" : "discard",
			 ses->block_ms ? "true" : "false");
		if (ses->block_ms && ses->block_ms != ST_ABI_BLOCK_FOREVER)
			st_reply(r, ", \"blocking_timeout_ms\": %u", ses->block_ms);
		else
			st_reply(r, ", \"blocking_timeout_ms\": null");
		st_reply(r, ", \"buffers\": \"%s\", \"output\": ", st_buffers_name(ses->buffers));
		json_str(r, ses->trace.dir);
		st_reply(r,
			 ", \"owner\": %u, \"buffer_size\": %llu, \"subbuf_size\": %u, "
			 "\"max_memory\": %llu, \"process_memory\": %llu, \"thread_buffers\": %u, "
			 "\"processes\": %u, \"events\": %llu, \"lost\": %llu, "
			 "\"lost_writing\": %llu, \"write_error\": ",
			 (unsigned)ses->owner, (unsigned long long)ses->buffer_size, ses->sb_size,
			 (unsigned long long)ses->max_memory, (unsigned long long)ses->process_memory,
			 ses->nslots, t.processes, (unsigned long long)t.events,
			 (unsigned long long)t.lost, (unsigned long long)t.write_lost);
		if (t.write_lost)
			json_str(r, strerror(t.write_err));
		else
			st_reply(r, "null");
		st_reply(r, ", \"rules\": [");
		for (uint32_t i = 0; i < ses->nrules; i++) {
			st_reply(r, "%s", i ? ", " : "");
			rule_text(r, &ses->rules[i], true);
		}
		st_session_losses(ses, by);
		st_reply(r, "], \"lost_by\": {");
		for (int k = 0; k < ST_LOSS_KINDS; k++)
			st_reply(r, "%s\"%s\": %llu", k ? ", " : "", st_loss_kinds[k].key,
				 (unsigned long long)by[k]);
		st_reply(r, "}, \"memory\": ");
		memory_json(r, d, ses);
		relay_text(r, ses, true);
		st_reply(r, "}");
		return;
	}
	st_mode_text(ses->mode, ses->block_ms, mode, sizeof(mode));
	/* (a directory another user named: escaped) */
	st_reply(r, "session %s: %s, %s mode, trace in %s\n", st_requester_label(r, ses, lab, sizeof(lab)),
		 state_name(ses), mode, st_esc(dir, sizeof(dir), ses->trace.dir));
	st_session_buffers_text(ses, geotext, sizeof(geotext));
	st_reply(r, "  buffers: %s\n", geotext);
	relay_text(r, ses, false);
	st_session_memory_text(d, ses, true, memory, sizeof(memory));
	st_reply(r, "  memory: %s\n", memory);
	user_buffers(r, d, ses, false);
	st_reply(r, "  recorded: ");
	st_reply_totals(r, ses, "events");
	st_reply(r, "\n");
	st_reply_losses(r, ses);
	st_reply(r, "  rules (the last that applies decides):%s\n", ses->nrules ? "" : " none");
	for (uint32_t i = 0; i < ses->nrules; i++)
		rule_text(r, &ses->rules[i], false);
}

/* What each user the requester may see uses of its quotas, and what it
 * was refused (quota.h). */
static void users_text(struct st_request *r, bool json)
{
	uint32_t n = 0;

	if (json)
		st_reply(r, ", \"users\": [");
	for (const struct st_user *u = st_users(); u; u = u->next) {
		bool refused = false;

		if (!r->root && u->uid != r->uid)
			continue;
		if (json) {
			st_reply(r, "%s{\"uid\": %u", n ? ", " : "", (unsigned)u->uid);
			for (int k = 0; k < ST_Q_COUNT; k++)
				st_reply(r, ", \"%s\": {\"used\": %llu, \"limit\": %llu, \"refused\": %llu}",
					 st_quota_defs[k].name, (unsigned long long)u->used[k],
					 (unsigned long long)st_quota_limit(k),
					 (unsigned long long)u->refused[k]);
			st_reply(r, "}");
		} else {
			st_reply(r, "uid %u:", (unsigned)u->uid);
			for (int k = 0; k < ST_Q_COUNT; k++)
				if (k != ST_Q_FIELDS)
					st_reply(r, "%s %llu %s%s", k ? "," : "",
						 (unsigned long long)u->used[k], st_quota_defs[k].name,
						 *st_quota_defs[k].unit ? " bytes" : "");
			st_reply(r, "\n");
			for (int k = 0; k < ST_Q_COUNT; k++)
				if (u->refused[k]) {
					st_reply(r, "%s %llu over the %s quota (%llu)",
						 refused ? "," : "  refused:",
						 (unsigned long long)u->refused[k], st_quota_defs[k].name,
						 (unsigned long long)st_quota_limit(k));
					refused = true;
				}
			if (refused)
				st_reply(r, "\n");
		}
		n++;
	}
	if (json)
		st_reply(r, "]");
}

int st_cmd_status(struct st_daemon *d, struct st_request *r)
{
	bool json = st_req_get(r, "json") != NULL;
	const char *name = st_req_get(r, "session");
	uint32_t nprocs = 0, n = 0;

	struct st_session *named = NULL;

	/* a session that is not there is an error, and only that */
	if (name && !(named = st_requester_session(d, r)))
		return ST_EXIT_FAIL;
	for (struct st_proc *p = d->procs; p; p = p->next)
		nprocs += !p->conn.ended && st_requester_sees_proc(r, p);
	if (json) {
		st_reply(r, "{\"daemon\": {\"pid\": %d, \"uid\": %u, \"rundir\": ", (int)getpid(),
			 (unsigned)d->uid);
		json_str(r, d->rundir);
		st_reply(r, ", \"clock\": \"%s\", \"memory\": ",
			 d->clock.kind == ST_CLOCK_TSC ? "tsc" : "monotonic");
		memory_json(r, d, NULL);
		st_reply(r, ", \"processes\": %u}", nprocs);
		users_text(r, true);
		st_reply(r, ", \"sessions\": [");
	} else {
		char com[32], gr[32], bound[32];

		st_size_approx(st_memory_committed(d, NULL), com, sizeof(com));
		st_size_approx(d->mem.granted, gr, sizeof(gr));
		st_size_approx(d->mem.bound, bound, sizeof(bound));
		st_reply(r, "daemon %d (uid %u) in %s: %u registered processes, %s clock; buffer "
			    "memory of all sessions: %s committed, %s granted of %s\n",
			 (int)getpid(), (unsigned)d->uid, d->rundir, nprocs,
			 d->clock.kind == ST_CLOCK_TSC ? "tsc" : "monotonic", com, gr, bound);
		users_text(r, false);
	}
	for (struct st_session *ses = d->sessions; ses; ses = ses->next) {
		if (!st_requester_sees(r, ses) || (name && ses != named))
			continue;
		if (json)
			st_reply(r, "%s", n ? ", " : "");
		session_text(r, d, ses, json);
		n++;
	}
	if (json)
		st_reply(r, "]}\n");
	else if (!n)
		st_reply(r, "no session\n");
	if (!json)
		st_dynprobe_status(d, r);
	return ST_EXIT_OK;
}

int st_cmd_list(struct st_daemon *d, struct st_request *r)
{
	bool json = st_req_get(r, "json") != NULL;
	const char *pidarg = st_req_get(r, "pid");
	pid_t pid = 0;
	uint32_t n = 0;
	char why[256];

	if (pidarg && st_pid_parse(pidarg, &pid, why, sizeof(why)) < 0)
		return st_reply_error(r, ST_EXIT_USAGE, "shimtrace list: --pid: %s", why);
	if (pid && !st_requester_proc(d, r, pid))
		return st_reply_error(r, ST_EXIT_FAIL, "shimtrace list: no registered process %d",
				      (int)pid);
	if (json)
		st_reply(r, "{\"processes\": [");
	for (struct st_proc *p = d->procs; p; p = p->next) {
		uint32_t k = 0;

		if (p->conn.ended || !st_requester_sees_proc(r, p) || (pid && p->pid != pid))
			continue;
		if (json) {
			st_reply(r, "%s{\"pid\": %d, \"ppid\": %d, \"uid\": %u, \"name\": ", n ? ", " : "",
				 p->pid, p->ppid, (unsigned)p->uid);
			json_str(r, p->name);
			st_reply(r, ", \"exe\": ");
			json_str(r, p->exe);
			st_reply(r, ", \"tracepoints\": [");
		} else {
			/* (what the process says of itself: escaped) */
			char name[ST_ESC_SIZE(sizeof(p->name))], exe[ST_ESC_SIZE(sizeof(p->exe))];

			st_reply(r, "pid %d (%s) uid %u ppid %d %s\n", p->pid,
				 st_esc(name, sizeof(name), p->name), (unsigned)p->uid, p->ppid,
				 st_esc(exe, sizeof(exe), p->exe));
		}
		for (uint32_t i = 0; i < p->classes.nprovs; i++) {
			const struct st_proc_provider *pr = p->classes.provs[i];

			for (uint32_t t = 0; t < pr->count; t++) {
				const struct st_evclass *c = p->classes.cls[pr->tps[t].local];
				uint32_t on = 0;

				if (json) {
					st_reply(r, "%s{\"name\": \"%s:%s\", \"sessions\": [", k ? ", " : "",
						 c->provider, c->name);
				} else {
					st_reply(r, "  %s:%s", c->provider, c->name);
				}
				for (const struct st_session *ses = d->sessions; ses; ses = ses->next) {
					if (!st_requester_sees(r, ses) || !ses->active ||
					    !st_session_records(ses, p, c->provider, c->name))
						continue;
					if (json) {
						st_reply(r, "%s", on ? ", " : "");
						json_str(r, ses->name);
					} else {
						char lab[96];

						st_reply(r, "%s%s", on ? ", " : " enabled in ",
							 st_requester_label(r, ses, lab, sizeof(lab)));
					}
					on++;
				}
				st_reply(r, json ? "]}" : "\n");
				if (!json && strcmp(c->provider, "probe") == 0 &&
				    st_dynprobe_how(p, c->name)) {
					char how[ST_ESC_SIZE(512)];

					st_reply(r, "    %s\n",
						 st_esc(how, sizeof(how), st_dynprobe_how(p, c->name)));
				}
				k++;
			}
		}
		if (json)
			st_reply(r, "]}");
		n++;
	}
	if (json)
		st_reply(r, "]}\n");
	else if (!n)
		st_reply(r, "no registered process\n");
	return ST_EXIT_OK;
}
