/*
 * Sessions: each with its own rules, buffer geometry, mode (discard,
 * blocking or not, or overwrite) and trace; 32 at most may trace one
 * user's processes (sessbits.c). Starting, stopping and destroying one is
 * lifecycle.c's.
 *
 * Enable state reaches a process as memory: for every registered process
 * the daemon writes, in the process's control page, the configuration of
 * each session that traces it, then in each provider page the bit mask of
 * the sessions recording each tracepoint. The process needs no code to run
 * for a change to take effect.
 *
 * Rules are evaluated in order; the last rule whose glob matches
 * provider:name and whose filters select the process decides (enable or
 * disable). A session of a user other than root only ever traces that
 * user's processes.
 *
 * The sessions are a list, at most 32 tracing one user's processes: not
 * cds_lfht: only the daemon's thread reads and changes it, so an RCU table
 * would add grace periods and a library to the one thread for no reader;
 * cds_lfht is for a table another thread reads while this one changes it.
 *
 * Owns: the sessions: each one's rules, geometry, mode and enable state,
 *       and what it writes in the processes' control and provider pages.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, model, out.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/common/checks.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/limits.h"
#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/model/userpool.h"
#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/out/trace.h"
#include "ctl/daemon/out/tracefile.h"

/*
 * Session generations are unique across daemons: a process that outlived
 * a daemon must not take a new session for the old one whose pool it holds.
 */
static uint32_t next_generation;

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* Whether the rule's filters select process p. */
static bool rule_selects(const struct st_rule *r, const struct st_proc *p)
{
	if (r->npids) {
		bool found = false;

		for (uint32_t i = 0; i < r->npids && !found; i++)
			found = r->pids[i] == p->pid;
		if (!found)
			return false;
	}
	/* Raw bytes against raw bytes, which is right: a name is data, and
	 * escaping is only how it is shown (ctl/common/escape.h). A rule cannot name
	 * a control character (st_procname_check refuses it, on the command
	 * line and here), so a process whose name holds one is selected by
	 * its pid or uid only. */
	if (r->procname[0] && strcmp(r->procname, p->name) != 0 &&
	    strcmp(r->procname, base_name(p->exe)) != 0)
		return false;
	return !r->has_uid || r->uid == p->uid;
}

/*
 * Whether session ses traces process p at all: p is the owner's (or the
 * session takes every user's) and an enable rule selects it. Only then
 * does p get the session's configuration, a buffer pool and a statedump in
 * its trace.
 */
bool st_session_traces(const struct st_session *ses, const struct st_proc *p)
{
	if (!ses || !ses->active || !st_session_covers(ses, p))
		return false;
	for (uint32_t i = 0; i < ses->nrules; i++)
		if (ses->rules[i].enable && rule_selects(&ses->rules[i], p))
			return true;
	return false;
}

bool st_session_records(const struct st_session *ses, const struct st_proc *p, const char *provider,
			const char *name)
{
	char full[2 * ST_ABI_NAME_MAX + 2];
	bool on = false;

	if (!ses || !st_session_covers(ses, p))
		return false;
	snprintf(full, sizeof(full), "%s:%s", provider, name);
	for (uint32_t i = 0; i < ses->nrules; i++)
		if (fnmatch(ses->rules[i].pattern, full, 0) == 0 && rule_selects(&ses->rules[i], p))
			on = ses->rules[i].enable;
	return on;
}

/* Marks the enabling rules that select provider:name in p, so that a
 * pattern that never matched a tracepoint of a traced process (a typo, or
 * a library never loaded) can be reported (record's summary). */
static void note_matches(struct st_session *ses, const struct st_proc *p, const char *provider,
			 const char *name)
{
	char full[2 * ST_ABI_NAME_MAX + 2];

	snprintf(full, sizeof(full), "%s:%s", provider, name);
	for (uint32_t i = 0; i < ses->nrules; i++)
		if (ses->rules[i].enable && !ses->rules[i].matched &&
		    fnmatch(ses->rules[i].pattern, full, 0) == 0 && rule_selects(&ses->rules[i], p))
			ses->rules[i].matched = true;
}

struct st_session *st_session_find(struct st_daemon *d, uid_t owner, const char *name)
{
	for (struct st_session *ses = d->sessions; ses; ses = ses->next)
		if (ses->owner == owner && strcmp(ses->name, name) == 0)
			return ses;
	return NULL;
}

int st_session_create(struct st_daemon *d, const struct st_session_config *cfg,
		      struct st_session **out, char *err, size_t errlen)
{
	struct st_session *ses, **tail;
	struct st_geometry geo;
	struct st_memory_bounds mem;
	struct st_user *u = cfg->owner == d->uid ? NULL : st_user_of(cfg->owner);
	uint64_t buffer_size = cfg->buffer_size;
	int s;

	if (cfg->name && st_session_find(d, cfg->owner, cfg->name)) {
		snprintf(err, errlen, "a session of yours named '%s' exists already", cfg->name);
		return -EEXIST;
	}
	if (u && u->used[ST_Q_SESSIONS] >= st_quota_limit(ST_Q_SESSIONS)) {
		u->refused[ST_Q_SESSIONS]++;
		snprintf(err, errlen, "you have %llu sessions already (the daemon's sessions quota: "
				      "shimtraced --quota sessions=N)",
			 (unsigned long long)u->used[ST_Q_SESSIONS]);
		return -ENOSPC;
	}
	s = st_session_bit(d, cfg->owner, cfg->all_users);
	if (s < 0) {
		if (cfg->owner == d->uid)
			snprintf(err, errlen, "already %d sessions (the most there can be)",
				 ST_ABI_MAX_SESSIONS);
		else
			snprintf(err, errlen, "no session left for you: %d at most may trace one user's "
					      "processes, yours and root's, and %d are kept for root's",
				 ST_ABI_MAX_SESSIONS, ST_SESSION_ROOT_BITS);
		return -ENOSPC;
	}
	if (cfg->buffers != ST_BUFFERS_PER_THREAD && !buffer_size && !cfg->subbuf_size)
		buffer_size = st_per_cpu_buffer_size(cfg->process_memory);
	if (st_geometry(buffer_size, cfg->subbuf_size, &geo, err, errlen) < 0 ||
	    st_memory_bounds(cfg->max_memory, cfg->process_memory, st_default_max_memory(), &geo,
			     &mem, err, errlen) < 0)
		return -EINVAL;
	if (st_blocking_check(cfg->mode, cfg->block_ms, err, errlen) < 0 ||
	    st_buffers_check(cfg->buffers, &mem, err, errlen) < 0)
		return -EINVAL;
	ses = calloc(1, sizeof(*ses));
	if (!ses) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ses->index = (uint32_t)s;
	if (next_generation == 0 && getrandom(&next_generation, sizeof(next_generation), 0) < 0)
		next_generation = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
	if (++next_generation == 0)
		next_generation = 1;
	ses->generation = next_generation;
	snprintf(ses->name, sizeof(ses->name), "%s", cfg->name ? cfg->name : "session");
	ses->owner = cfg->owner;
	ses->owner_gid = cfg->owner_gid;
	ses->all_users = cfg->all_users;
	ses->attach = cfg->attach;
	ses->state = ST_SESSION_CREATED;
	ses->mode = cfg->mode;
	ses->block_ms = cfg->block_ms;
	ses->sb_size = geo.sb_size;
	ses->sb_count = geo.sb_count;
	ses->nslots = mem.nslots;
	ses->buffers = cfg->buffers;
	ses->buffer_size = geo.buffer_size;
	ses->max_memory = ses->mem.bound = mem.session;
	ses->process_memory = mem.process;
	ses->slot_bytes = mem.slot_bytes;
	ses->trace.where.fd = ses->trace.where.parent = -1;
	if (cfg->outdir && st_trace_open(&ses->trace, cfg->outdir, ses->name, cfg->owner,
					 cfg->owner_gid, cfg->umask, &d->reg, err, errlen) < 0) {
		free(ses);
		return -EIO;
	}
	if (cfg->relay) {
		/* (set before the first metadata: the live one starts with it) */
		ses->trace.live = true;
		ses->relay = st_relaylive_start(cfg->relay, cfg->relay_session ? cfg->relay_session
									   : ses->name,
						ses->trace.where.fd, cfg->owner, cfg->owner_gid,
						&d->clock, 0);
		if (!ses->relay) {
			snprintf(err, errlen, "cannot start streaming to the relay daemon: %s",
				 strerror(errno ? errno : ENOMEM));
			st_trace_close(&ses->trace);
			free(ses);
			return -EIO;
		}
	}
	if (u)
		u->used[ST_Q_SESSIONS]++;
	for (tail = &d->sessions; *tail; tail = &(*tail)->next)
		;
	*tail = ses;
	*out = ses;
	return 0;
}

/*
 * RUNDIR/active exists while a session is started: a registering process
 * waits for the daemon's answer (its enable bits) only then; it says
 * "blocking" while one of them is --blocking, and the process then waits
 * for the answer as long as a live daemon may take (core/abi.h). Written
 * beside and renamed, so that a process never reads it half written.
 */
void st_session_mark_active(struct st_daemon *d)
{
	char path[ST_PATH_MAX + 16], tmp[ST_PATH_MAX + 32];
	bool any = false, blocking = false;
	const size_t len = strlen(ST_ABI_ACTIVE_BLOCKING);
	bool written;
	int fd;

	for (const struct st_session *ses = d->sessions; ses; ses = ses->next)
		if (ses->active) {
			any = true;
			blocking |= ses->block_ms != 0;
		}
	snprintf(path, sizeof(path), "%s/" ST_ABI_ACTIVE_NAME, d->rundir);
	if (!any) {
		unlink(path);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	written = !blocking || write(fd, ST_ABI_ACTIVE_BLOCKING, len) == (ssize_t)len;
	close(fd);
	if (!written || rename(tmp, path) < 0)
		unlink(tmp);
}

void st_session_buffers_text(const struct st_session *ses, char *buf, size_t n)
{
	struct st_geometry g = {
		.buffer_size = ses->buffer_size, .sb_size = ses->sb_size, .sb_count = ses->sb_count
	};

	st_buffers_text(ses->buffers, &g, ses->process_memory, ses->nslots, buf, n);
}

/* The rules as the trace's env says them (out/trace.h): readers learn
 * from them what was asked, where the metadata declares only the classes
 * of events that came (report deadlocks: whether the lock order of Java
 * monitors was recorded, or only never written). A rule's process filters
 * are not said: an enabling one is taken as enabling everywhere. The
 * relayed copy keeps the rules of its first metadata (that file only
 * grows): those in force when the session started. */
static void rules_text(struct st_session *ses)
{
	char *out = ses->trace.rules;
	size_t len = 0, room = sizeof(ses->trace.rules);

	out[0] = '\0';
	for (uint32_t i = 0; i < ses->nrules; i++) {
		const struct st_rule *r = &ses->rules[i];
		const char *p = r->pattern;
		int n;

		/* (a disabling rule for some processes only is left out: the
		 * reader then takes the tracepoint for enabled, and says
		 * nothing is missing) */
		if (!r->enable && (r->npids || r->procname[0] || r->has_uid))
			continue;
		if (strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_*?:[]!^-") !=
		    strlen(p))
			goto unknown;
		n = snprintf(out + len, room - len, "%s%s%s", len ? " " : "", r->enable ? "" : "!", p);
		if (n < 0 || (size_t)n >= room - len)
			goto unknown;
		len += (size_t)n;
	}
	return;
unknown:
	out[0] = '\0';
}

int st_session_add_rule(struct st_daemon *d, struct st_session *ses, const struct st_rule *rule)
{
	struct st_rule *r = realloc(ses->rules, (ses->nrules + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	ses->rules = r;
	ses->rules[ses->nrules++] = *rule;
	rules_text(ses);
	if (ses->active)
		for (struct st_proc *p = d->procs; p; p = p->next)
			st_session_apply(d, p);
	return 0;
}

void st_session_apply(struct st_daemon *d, struct st_proc *p)
{
	struct st_abi_control *c = p->control;

	if (!c || p->conn.ended)
		return;
	c->clock = d->clock.kind;
	c->ns_mult = d->clock.ns_mult;
	c->ns_shift = d->clock.ns_shift;
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		struct st_session *ses = st_session_at(d, s, p);
		struct st_abi_session *cs = &c->session[s];
		uint32_t had = p->user_gen[s];

		if (st_session_traces(ses, p)) {
			if (cs->generation != ses->generation) {
				cs->mode = ses->mode;
				cs->sb_size = ses->sb_size;
				cs->sb_count = ses->sb_count;
				cs->nslots = ses->nslots;
				cs->buffers = ses->buffers;
				cs->block_ms = ses->block_ms;
				/* Per-user buffers: the user's pool, sent first (the
				 * process reads it when it reads this); else buffers of
				 * its own, as per-process ones, within its grant. */
				if (ses->buffers == ST_BUFFERS_PER_USER && !st_user_pool_give(d, ses, p))
					cs->buffers = ST_BUFFERS_PER_CPU;
				if (cs->buffers == ST_BUFFERS_PER_USER && had != ses->generation)
					p->statedump_owed |= 1u << s;
				st_memory_grant(d, p, s, cs->buffers == ST_BUFFERS_PER_USER);
				p->traced_since[s] = st_clock_now(&d->clock);
				__atomic_store_n(&cs->generation, ses->generation, __ATOMIC_RELEASE);
			}
		} else if (cs->generation) {
			__atomic_store_n(&cs->generation, 0, __ATOMIC_RELEASE);
		}
	}
	for (uint32_t i = 0; i < p->classes.nprovs; i++) {
		struct st_proc_provider *pr = p->classes.provs[i];

		for (uint32_t k = 0; k < pr->count; k++) {
			const struct st_proc_tp *tp = &pr->tps[k];
			const struct st_evclass *cl = p->classes.cls[tp->local];
			uint32_t mask = 0;

			for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
				struct st_session *ses = st_session_at(d, s, p);

				if (!st_session_traces(ses, p))
					continue;
				note_matches(ses, p, cl->provider, cl->name);
				if (st_session_records(ses, p, cl->provider, cl->name))
					mask |= 1u << s;
			}
			/* The id first: a writer that sees the bit uses it. */
			__atomic_store_n(&pr->map->id[tp->slot], tp->local, __ATOMIC_RELAXED);
			__atomic_store_n(&pr->map->mask[tp->slot], mask, __ATOMIC_RELEASE);
		}
	}
}

struct st_session_stats *st_session_stats_for(struct st_session *ses, struct st_proc *p, bool create)
{
	struct st_session_stats *st;

	for (uint32_t i = 0; i < ses->nstats; i++)
		if (ses->stats[i].instance == p->instance)
			return &ses->stats[i];
	if (!create)
		return NULL;
	if (ses->nstats == ses->stats_cap) {
		uint32_t cap = ses->stats_cap ? ses->stats_cap * 2 : 16;
		struct st_session_stats *n = realloc(ses->stats, cap * sizeof(*n));

		if (!n)
			return NULL;
		ses->stats = n;
		ses->stats_cap = cap;
	}
	st = &ses->stats[ses->nstats++];
	memset(st, 0, sizeof(*st));
	st->instance = p->instance;
	st->pid = p->pid;
	st->ppid = p->ppid;
	memcpy(st->name, p->name, sizeof(st->name));
	return st;
}

const struct st_loss_kind st_loss_kinds[ST_LOSS_KINDS] = {
	[ST_LOSS_FULL] = { "buffer full", "full",
			   "a thread wrote faster than its buffer drained: --blocking keeps them "
			   "(a full buffer waits for the consumer); a larger --buffer-size keeps "
			   "them if a burst fits (or fewer tracepoints)" },
	[ST_LOSS_OVERWRITTEN] = { "overwritten", "overwritten",
				  "--overwrite keeps the newest events: a larger --buffer-size keeps "
				  "more of the past" },
	[ST_LOSS_NO_BUFFER] = { "no thread buffer", "no_buffer",
				"more threads of a process wrote at once than its share of memory "
				"holds buffers for: a larger --process-memory (or a smaller "
				"--buffer-size) keeps them" },
	[ST_LOSS_NO_MEMORY] = { "no memory left in the session", "no_memory",
				"the session's bound (--max-memory), or the daemon's, was granted to "
				"other threads: a larger bound (or a smaller --buffer-size) keeps "
				"them" },
	[ST_LOSS_NESTED] = { "in nested signal handlers", "nested",
			     "a signal handler's events that interrupted an event being written "
			     "are dropped whole: no buffer size keeps them" },
	[ST_LOSS_WRITING] = { "lost writing the trace", "writing",
			      "the trace's file system was full or failed: free space or record "
			      "elsewhere (-o)" },
};

/* What keeps the events a blocking session lost with its buffers full. */
static const char *blocked_hint(const struct st_session *ses)
{
	if (ses->block_ms == ST_ABI_BLOCK_FOREVER)
		return "a full buffer stopped waiting when the daemon was gone (it had exited, or "
		       "had not served the process for 10 seconds)";
	return "a full buffer waited --blocking's TIMEOUT for the consumer in vain: a longer "
	       "TIMEOUT, or --blocking without one, keeps them";
}

void st_session_loss_report(const struct st_session *ses, const char *prefix, char *buf, size_t n)
{
	uint64_t by[ST_LOSS_KINDS];
	char causes[256];
	size_t len = 0, clen = 0;

	st_session_losses(ses, by);
	causes[0] = buf[0] = '\0';
	for (int k = 0; k < ST_LOSS_KINDS; k++)
		if (by[k] && clen < sizeof(causes))
			clen += (size_t)snprintf(causes + clen, sizeof(causes) - clen, "%s%llu %s",
						 clen ? ", " : "", (unsigned long long)by[k],
						 st_loss_kinds[k].name);
	if (!clen)
		return;
	/* "lost: 12 buffer full, 3 no thread buffer", then each cause's hint */
	len = (size_t)snprintf(buf, n, "%slost: %s\n", prefix, causes);
	for (int k = 0; k < ST_LOSS_KINDS; k++)
		if (by[k] && len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s  %s: %s\n", prefix,
						st_loss_kinds[k].name,
						k == ST_LOSS_FULL && ses->block_ms ? blocked_hint(ses)
										   : st_loss_kinds[k].hint);
}

void st_session_memory_text(const struct st_daemon *d, const struct st_session *ses, bool live,
			    char *buf, size_t n)
{
	const struct st_memory_counts *c = &ses->memc;
	char com[32], gr[32], bound[32], pcom[32], pgr[32];
	size_t len;

	st_size_approx(st_memory_committed(d, ses), com, sizeof(com));
	st_size_approx(ses->mem.granted, gr, sizeof(gr));
	st_size_approx(ses->mem.bound, bound, sizeof(bound));
	st_size_approx(ses->mem.committed_peak, pcom, sizeof(pcom));
	st_size_approx(ses->mem.granted_peak, pgr, sizeof(pgr));
	if (live)
		len = (size_t)snprintf(buf, n, "%s committed, %s granted of %s (at most %s committed, "
					       "%s granted at once)",
				       com, gr, bound, pcom, pgr);
	else
		len = (size_t)snprintf(buf, n, "at most %s committed and %s granted at once, of %s",
				       pcom, pgr, bound);
	if ((c->shrunk || c->refused || c->raised) && len < n)
		len += (size_t)snprintf(buf + len, n - len, "; processes: %u shrunk, %u refused, %u raised",
					c->shrunk, c->refused, c->raised);
	if (c->taken_back && len < n)
		snprintf(buf + len, n - len, "; %u unclaimed buffers taken back", c->taken_back);
}

uint64_t st_proc_lost_unbuffered(const struct st_proc *p, uint32_t s)
{
	if (!p->control)
		return 0;
	return __atomic_load_n(&p->control->lost_no_buffer[s], __ATOMIC_RELAXED) +
	       __atomic_load_n(&p->control->lost_no_memory[s], __ATOMIC_RELAXED);
}

void st_session_losses(const struct st_session *ses, uint64_t by[ST_LOSS_KINDS])
{
	memset(by, 0, ST_LOSS_KINDS * sizeof(by[0]));
	for (uint32_t i = 0; i < ses->nstats; i++) {
		/* (what the buffers lost, by cause; then what writing lost) */
		for (int k = 0; k < ST_LOSS_KINDS; k++)
			by[k] += ses->stats[i].lost_by[k];
		by[ST_LOSS_WRITING] += ses->stats[i].write_lost;
	}
}

static void take_lost(void *arg, uint64_t owner, uint64_t events)
{
	struct st_session *ses = arg;

	for (uint32_t i = 0; i < ses->nstats; i++)
		if (ses->stats[i].instance == owner) {
			uint64_t n = events < ses->stats[i].events ? events : ses->stats[i].events;

			ses->stats[i].events -= n;
			ses->stats[i].write_lost += n;
			return;
		}
}

void st_session_take_lost(struct st_session *ses)
{
	st_tracefile_take_lost(&ses->trace.wloss, take_lost, ses);
}

bool st_session_stats_exec(const struct st_session *ses, uint32_t i)
{
	/* (a pid reused by a sibling after the first ended would be taken
	 * for an exec: the parent would have to fork pid_max times) */
	for (uint32_t j = 0; j < i; j++)
		if (ses->stats[j].pid == ses->stats[i].pid && ses->stats[j].ppid == ses->stats[i].ppid)
			return true;
	return false;
}

void st_session_totals(struct st_session *ses, struct st_session_totals *t)
{
	memset(t, 0, sizeof(*t));
	st_session_take_lost(ses);
	for (uint32_t i = 0; i < ses->nstats; i++) {
		t->events += ses->stats[i].events;
		t->lost += ses->stats[i].lost + ses->stats[i].write_lost;
	}
	/* (pid 0: a user's buffers, whose losses it holds: userpool.c) */
	for (uint32_t i = 0; i < ses->nstats; i++)
		t->processes += ses->stats[i].pid != 0 && !st_session_stats_exec(ses, i);
	t->write_lost = st_tracefile_lost_total(&ses->trace.wloss, &t->write_err);
}

