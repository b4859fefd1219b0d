/*
 * shimtrace report locks / report deadlocks: the lock statistics of a
 * trace (lockstat.c) and its lock-order cycles (lockorder.c), as text for
 * an 80-column terminal or as JSON (schema in shimtrace-report(1)).
 *
 * Locks are ranked by --sort (default: the total time threads waited for
 * them); under each, the call sites that waited longest. Futex words
 * (the futex family) rank among them, by their waits that a wake-up
 * ended. Java monitors (the jvm provider) rank among them by their
 * contended enters, the only ones JVMTI tells: their holds are unknown,
 * shown as such ('-', null). Condition variables and Object.wait are
 * listed apart (a wait on one is a thread idling, not a lock that hurts),
 * as are threads, by their time waiting for locks, and the threads still
 * waiting when the trace ends.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/common/escape.h"
#include "ctl/report/duration.h"
#include "ctl/report/grow.h"
#include "ctl/report/heapblocks.h"
#include "ctl/report/javasyms.h"
#include "ctl/report/lockorder.h"
#include "ctl/report/lockstat.h"
#include "ctl/report/pass.h"
#include "ctl/report/report_locks.h"
#include "ctl/report/site.h"
#include "ctl/report/symbols.h"

#define SITES_SHOWN 3

/* The heap block a lock lay in when it was first seen (a trace with the
 * malloc family's events). */
struct lock_block {
	bool found;
	uint64_t size, offset, ip;
};

struct ctx {
	const struct st_report_opts *opts;
	struct st_pass pass;
	struct st_lockstat ls;
	struct st_heapblocks heap;
	struct lock_block *blocks; /* by lock, as lockstat numbers them */
	uint32_t nblocks, blocks_cap;
	struct st_cycle *cycles;
	int ncycles;
	bool more_cycles;
};

static const char *sorts[] = { "wait", "contended", "acquired", "hold", "max", NULL };

static uint64_t sort_key(const struct st_lock *l, const char *by)
{
	if (strcmp(by, "contended") == 0)
		return l->contended;
	if (strcmp(by, "acquired") == 0)
		return l->acquired;
	if (strcmp(by, "hold") == 0)
		return l->hold_total;
	if (strcmp(by, "max") == 0)
		return l->wait_max;
	/* (a condition variable by its waits that were woken for work: an
	 * idle thread's wait is no cost) */
	if (st_lock_kind_idles(l->kind))
		return l->woken_total;
	return l->wait_total;
}

static const char *sort_by;
static const struct st_lockstat *sorting;

static int by_key(const void *a, const void *b)
{
	const struct st_lock *x = &sorting->locks[*(const uint32_t *)a];
	const struct st_lock *y = &sorting->locks[*(const uint32_t *)b];
	uint64_t kx = sort_key(x, sort_by), ky = sort_key(y, sort_by);

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->acquired != y->acquired)
		return x->acquired > y->acquired ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int site_by_wait(const void *a, const void *b)
{
	const struct st_lock_site *x = *(const struct st_lock_site *const *)a;
	const struct st_lock_site *y = *(const struct st_lock_site *const *)b;

	if (x->wait_total != y->wait_total)
		return x->wait_total > y->wait_total ? -1 : 1;
	return x->waits > y->waits ? -1 : x->waits < y->waits;
}

static int thread_by_wait(const void *a, const void *b)
{
	const struct st_lock_thread *x = *(const struct st_lock_thread *const *)a;
	const struct st_lock_thread *y = *(const struct st_lock_thread *const *)b;

	if (x->wait_total != y->wait_total)
		return x->wait_total > y->wait_total ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The locks of the kinds wanted (conds or not), sorted; *n of them. */
static uint32_t *ranked(const struct ctx *c, bool conds, uint32_t *n)
{
	uint32_t *v = malloc(((size_t)c->ls.nlocks + 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < c->ls.nlocks; i++) {
		const struct st_lock *l = &c->ls.locks[i];

		if (st_lock_kind_idles(l->kind) == conds &&
		    (l->acquired || l->waits || l->failed || l->idle_waits || l->wakes ||
		     l->busy_tries))
			v[(*n)++] = i;
	}
	sort_by = c->opts->sort ? c->opts->sort : "wait";
	sorting = &c->ls;
	qsort(v, *n, sizeof(*v), by_key);
	return v;
}

/* The sites that waited for lock li, longest first; *n of them. */
static const struct st_lock_site **sites_of(const struct ctx *c, uint32_t li, uint32_t *n)
{
	const struct st_lock_site **v = malloc(((size_t)c->ls.nsites + 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < c->ls.nsites; i++)
		if (c->ls.sites[i].lock == li)
			v[(*n)++] = &c->ls.sites[i];
	qsort(v, *n, sizeof(*v), site_by_wait);
	return v;
}

static void site_text(struct ctx *c, int32_t pid, uint64_t ip, char *buf, size_t n)
{
	st_site_text(c->pass.syms, pid, ip, buf, n);
}

static void site_json(struct ctx *c, FILE *o, int32_t pid, uint64_t ip)
{
	st_site_json(c->pass.syms, pid, ip, o);
}

/* A monitor's name: "monitor of com.acme.Pool" (javasyms.h). */
static void monitor_name(struct ctx *c, const struct st_lock *l, bool text, char *buf, size_t n)
{
	st_jsyms_monitor_name(st_syms_java(c->pass.syms), l->pid, l->jclass, text, buf, n);
}

static bool is_monitor(const struct st_lock *l)
{
	return l->kind == ST_LK_MONITOR || l->kind == ST_LK_MONITOR_WAIT;
}

/* " (name)" of lock l when a variable of its process holds it (a static
 * or global lock), escaped: the objects' names are the process's; else
 * " (in a N-byte block from SITE, +OFFSET)" for a lock in a heap block;
 * else "". */
static void lock_name_text(struct ctx *c, const struct st_lock *l, char *buf, size_t n)
{
	const char *name = st_syms_data_name(c->pass.syms, l->pid, l->addr);
	const struct lock_block *b = &c->blocks[l - c->ls.locks];
	char esc[ST_ESC_SIZE(160)], site[512];

	buf[0] = '\0';
	if (name) {
		snprintf(buf, n, " (%s)", st_esc(esc, sizeof(esc), name));
	} else if (b->found) {
		site_text(c, l->pid, b->ip, site, sizeof(site));
		snprintf(buf, n, " (in a %" PRIu64 "-byte block from %s, +%" PRIu64 ")", b->size, site,
			 b->offset);
	}
}

/* What lock l is, for text: "mutex 0xADDR (name)", "monitor of
 * com.acme.Pool (tag 3)", "Object.wait on monitor of com.acme.Pool (tag
 * 3)". */
static void lock_what(struct ctx *c, const struct st_lock *l, char *buf, size_t n)
{
	char name[ST_ESC_SIZE(160) + 600];

	if (is_monitor(l)) {
		monitor_name(c, l, true, name, sizeof(name));
		snprintf(buf, n, "%s%s (tag %" PRIu64 ")",
			 l->kind == ST_LK_MONITOR_WAIT ? "Object.wait on " : "", name, l->addr);
		return;
	}
	lock_name_text(c, l, name, sizeof(name));
	snprintf(buf, n, "%s 0x%" PRIx64 "%s", st_lock_kind_name(l->kind), l->addr, name);
}

/* "name" of lock l: the variable that holds it, a monitor's "monitor of
 * CLASS", or null. */
static void lock_name_json(struct ctx *c, const struct st_lock *l, FILE *o)
{
	const char *name;
	char buf[ST_JSYMS_MONITOR_NAME_SIZE];

	if (is_monitor(l)) {
		monitor_name(c, l, false, buf, sizeof(buf));
		st_json_write(o, buf);
		return;
	}
	name = st_syms_data_name(c->pass.syms, l->pid, l->addr);
	st_json_write_or_null(o, name);
}

/* Lock l in a line that says more of it: "mutex 0xADDR", or a monitor
 * as lock_what says it. */
static void lock_short(struct ctx *c, const struct st_lock *l, char *buf, size_t n)
{
	if (is_monitor(l))
		lock_what(c, l, buf, n);
	else
		snprintf(buf, n, "%s 0x%" PRIx64, st_lock_kind_name(l->kind), l->addr);
}

/* "block": the heap block lock l lay in, or null. */
static void lock_block_json(struct ctx *c, const struct st_lock *l, FILE *o)
{
	const struct lock_block *b = &c->blocks[l - c->ls.locks];

	fputs(", \"block\": ", o);
	if (!b->found) {
		fputs("null", o);
		return;
	}
	fprintf(o, "{\"size\": %" PRIu64 ", \"offset\": %" PRIu64 ", \"allocated_at\": ", b->size,
		b->offset);
	site_json(c, o, l->pid, b->ip);
	fputs("}", o);
}


static uint64_t mean(uint64_t total, uint64_t n)
{
	return n ? total / n : 0;
}

/* ---- text ---- */

/* A condition variable's waits: woken for work, and idle (timed out, or
 * still waiting at the end), each with its time. */
static void cond_text(const struct st_lock *l, FILE *o)
{
	char a[32], b[32];

	fprintf(o,
		"    waits %" PRIu64 ": %" PRIu64 " woken for work, %s in all; %" PRIu64
		" idle (timed out, or still waiting at the end), %s; %" PRIu32 " thread%s\n",
		l->woken_waits + l->idle_waits, l->woken_waits,
		st_fmt_ns(l->woken_total, a, sizeof(a)), l->idle_waits,
		st_fmt_ns(l->idle_total, b, sizeof(b)), l->ntids, l->ntids == 1 ? "" : "s");
}

/* A futex word's waits: woken, timed out, failed, and those that did not
 * sleep; its wake calls and the threads they woke. */
static void futex_text(const struct st_lock *l, FILE *o)
{
	char a[32];

	fprintf(o, "    waits %" PRIu64 ": %" PRIu64 " woken, %" PRIu64 " timed out (%s)",
		l->acquired, l->contended, l->idle_waits, st_fmt_ns(l->idle_total, a, sizeof(a)));
	if (l->failed)
		fprintf(o, ", %" PRIu64 " failed", l->failed);
	if (l->busy_tries)
		fprintf(o, "; %" PRIu64 " returned at once (the word had changed)", l->busy_tries);
	fprintf(o, "\n    wakes %" PRIu64 " (%" PRIu64 " thread%s woken); %" PRIu32 " thread%s\n",
		l->wakes, l->woken, l->woken == 1 ? "" : "s", l->ntids, l->ntids == 1 ? "" : "s");
}

static void lock_text(struct ctx *c, FILE *o, uint32_t rank, uint32_t li)
{
	const struct st_lock *l = &c->ls.locks[li];
	char site[512], what[ST_ESC_SIZE(160) + 800], a[32], b[32], d[32], e[32], f[32];
	const struct st_lock_site **sites;
	uint32_t nsites;

	site_text(c, l->pid, l->first_ip, site, sizeof(site));
	lock_what(c, l, what, sizeof(what));
	fprintf(o, "%2" PRIu32 ". %s, pid %" PRId32 " (%s)\n", rank, what, l->pid,
		st_pass_name_text(&c->pass, l->pid));
	fprintf(o, "    %s at %s\n", l->from_init ? "initialised" : "first used", site);
	if (st_lock_kind_idles(l->kind)) {
		cond_text(l, o);
	} else if (!st_lock_kind_holds_known(l->kind)) {
		fprintf(o, "    acquired -, contended %" PRIu64 ", %" PRIu32 " thread%s\n", l->contended,
			l->ntids, l->ntids == 1 ? "" : "s");
	} else if (l->kind == ST_LK_FUTEX) {
		futex_text(l, o);
	} else {
		fprintf(o, "    acquired %" PRIu64 ", contended %" PRIu64 " (%.1f%%)", l->acquired,
			l->contended,
			l->acquired ? 100.0 * (double)l->contended / (double)l->acquired : 0.0);
		if (l->failed)
			fprintf(o, ", %" PRIu64 " failed", l->failed);
		if (l->busy_tries)
			fprintf(o, ", %" PRIu64 " busy tries", l->busy_tries);
		fprintf(o, ", %" PRIu32 " thread%s\n", l->ntids, l->ntids == 1 ? "" : "s");
	}
	if (l->waits && !st_lock_kind_idles(l->kind))
		fprintf(o, "    wait  total %s  mean %s  p50 %s  p99 %s  max %s\n",
			st_fmt_ns(l->wait_total, a, sizeof(a)),
			st_fmt_ns(mean(l->wait_total, l->waits), b, sizeof(b)),
			st_fmt_ns(st_lock_percentile(l, 0.5), d, sizeof(d)),
			st_fmt_ns(st_lock_percentile(l, 0.99), e, sizeof(e)),
			st_fmt_ns(l->wait_max, f, sizeof(f)));
	if (l->holds)
		fprintf(o, "    hold  total %s  mean %s  max %s\n", st_fmt_ns(l->hold_total, a, sizeof(a)),
			st_fmt_ns(mean(l->hold_total, l->holds), b, sizeof(b)),
			st_fmt_ns(l->hold_max, d, sizeof(d)));
	else if (!st_lock_kind_holds_known(l->kind))
		fprintf(o, "    hold  total -  mean -  max -  (unknown: JVMTI tells no uncontended enter "
			   "and no exit)\n");
	sites = sites_of(c, li, &nsites);
	for (uint32_t i = 0; sites && i < nsites && i < SITES_SHOWN; i++) {
		site_text(c, l->pid, sites[i]->ip, site, sizeof(site));
		fprintf(o, "    %s %8s %6" PRIu64 "x  %s\n", i ? "        " : "waited:",
			st_fmt_ns(sites[i]->wait_total, a, sizeof(a)), sites[i]->waits, site);
		st_stacks_text(&c->ls.stacks, c->pass.syms, l->pid, sites[i]->stack, 32, o);
	}
	free(sites);
}

static void threads_text(struct ctx *c, FILE *o, uint32_t top)
{
	const struct st_lock_thread **v = malloc(((size_t)c->ls.nthreads + 1) * sizeof(*v));
	uint32_t n = 0;
	char a[32];

	if (!v)
		return;
	for (uint32_t i = 0; i < c->ls.nthreads; i++)
		if (c->ls.threads[i].acquired || c->ls.threads[i].contended)
			v[n++] = &c->ls.threads[i];
	qsort(v, n, sizeof(*v), thread_by_wait);
	fprintf(o, "\nthreads, by time waiting for locks:\n");
	fprintf(o, "  %8s %8s  %-16s %10s %12s %10s\n", "pid", "tid", "process", "waited", "acquired",
		"contended");
	for (uint32_t i = 0; i < n && (!top || i < top); i++) {
		const char *java = st_jsyms_thread(st_syms_java(c->pass.syms), v[i]->pid, v[i]->tid);
		char esc[ST_ESC_SIZE(64)];

		fprintf(o, "  %8" PRId32 " %8" PRId32 "  %-16.16s %10s %12" PRIu64 " %10" PRIu64 "%s%s\n",
			v[i]->pid, v[i]->tid, st_pass_name_text(&c->pass, v[i]->pid),
			st_fmt_ns(v[i]->wait_total, a, sizeof(a)), v[i]->acquired, v[i]->contended,
			java ? "  " : "", java ? st_esc(esc, sizeof(esc), java) : "");
	}
	if (top && n > top)
		fprintf(o, "  (%" PRIu32 " more)\n", n - top);
	free(v);
}

/* What a thread still waiting at the end waits in: a lock (a monitor's
 * contended enter too), a condition wait (not a lock wait: an idle worker
 * parks in one), a futex wait (either: a futex does not say), or
 * Object.wait (a condition wait of Java). */
enum waiting_in { IN_LOCK, IN_COND, IN_FUTEX, IN_OBJECT_WAIT, IN_KINDS };

static enum waiting_in waiting_in(enum st_lock_kind k)
{
	return k == ST_LK_COND		? IN_COND
	       : k == ST_LK_FUTEX	? IN_FUTEX
	       : k == ST_LK_MONITOR_WAIT ? IN_OBJECT_WAIT
					 : IN_LOCK;
}

/* Whether thread t was still waiting when the trace ended, in what. */
static bool still_waiting(const struct ctx *c, const struct st_lock_thread *t, enum waiting_in in)
{
	return t->waiting && waiting_in(c->ls.locks[t->wait_lock].kind) == in;
}

/* The threads still waiting at the end, in what. */
static void waiting_text(struct ctx *c, FILE *o, enum waiting_in in)
{
	static const char *heads[IN_KINDS] = {
		"\nstill waiting for a lock when the trace ends (a deadlock, or a process killed):\n",
		"\nin a condition wait when the trace ends (idle, or a wake-up that never came; not a "
		"lock wait):\n",
		"\nin a futex wait when the trace ends (a lock, or an idle thread: a futex does not "
		"say which):\n",
		"\nin Object.wait when the trace ends (idle, or a notify that never came; not a lock "
		"wait):\n",
	};
	bool any = false;
	char site[512], a[32], what[ST_ESC_SIZE(160) + 800];

	for (uint32_t i = 0; i < c->ls.nthreads; i++) {
		const struct st_lock_thread *t = &c->ls.threads[i];
		const struct st_lock *l = &c->ls.locks[t->wait_lock];

		if (!still_waiting(c, t, in))
			continue;
		if (!any)
			fputs(heads[in], o);
		any = true;
		site_text(c, t->pid, t->wait_ip, site, sizeof(site));
		lock_short(c, l, what, sizeof(what));
		fprintf(o, "  pid %" PRId32 " (%s) tid %" PRId32 ": %s for at least %s, at %s\n", t->pid,
			st_pass_name_text(&c->pass, t->pid), t->tid, what,
			st_fmt_ns(st_ns_since(t->wait_since, c->ls.end_ns), a, sizeof(a)), site);
	}
}

/* Holds measured, over all locks. */
static uint64_t holds_measured(const struct ctx *c)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < c->ls.nlocks; i++)
		n += c->ls.locks[i].holds;
	return n;
}

/* The gaps in the trace, and what they cut. */
static void gaps_text(struct ctx *c, FILE *o, const char *prefix)
{
	const struct st_lockstat *ls = &c->ls;

	if (ls->gaps)
		fprintf(o, "%slost events: at each of the %" PRIu64 " gap%s the threads whose buffer lost "
			   "events started over (%" PRIu64 " hold%s and %" PRIu64 " wait%s cut; no hold "
			   "or lock order spans a gap)\n",
			prefix, ls->gaps, ls->gaps == 1 ? "" : "s", ls->holds_cut,
			ls->holds_cut == 1 ? "" : "s", ls->waits_cut, ls->waits_cut == 1 ? "" : "s");
}

/* What the hold times cover: the holds measured, and those that were not
 * (cut at gaps, open at the end, begun before the trace). */
static void coverage_text(struct ctx *c, FILE *o)
{
	const struct st_lockstat *ls = &c->ls;
	uint64_t holds = holds_measured(c);

	gaps_text(c, o, "");
	if (ls->gaps || ls->unpaired || st_lockstat_open_holds(ls))
		fprintf(o, "hold times cover %" PRIu64 " hold%s: %" PRIu64 " more cut at gaps, %" PRIu64
			   " still held at the end, %" PRIu64 " unlock%s of a lock not taken in the "
			   "trace\n",
			holds, holds == 1 ? "" : "s", ls->holds_cut,
			st_lockstat_open_holds(ls), ls->unpaired, ls->unpaired == 1 ? "" : "s");
}

/* Whether the trace has Java monitors but not their lock order (record
 * leaves jvm:monitor_held out unless asked): no cycle through a monitor
 * can be found, which the reports say. */
static bool monitor_order_missing(const struct ctx *c)
{
	if (c->pass.cls.monitor_order)
		return false;
	for (uint32_t i = 0; i < c->ls.nlocks; i++)
		if (c->ls.locks[i].kind == ST_LK_MONITOR)
			return true;
	return false;
}

#define MONITOR_ORDER_MISSING                                                              \
	"the lock order of Java monitors was not recorded: no cycle through a monitor can be " \
	"found (record --lock-order records it, of a JVM that record starts)\n"

static void locks_text(struct ctx *c, FILE *o)
{
	uint32_t n, nc, contended = 0, top = c->opts->top;
	uint32_t *v = ranked(c, false, &n), *conds = ranked(c, true, &nc);
	bool java_waits = false;

	for (uint32_t i = 0; v && i < n; i++)
		contended += c->ls.locks[v[i]].contended > 0;
	fprintf(o, "shimtrace report locks: %s: %" PRIu64 " events, %" PRIu32 " process%s, %" PRIu32
		   " lock%s (%" PRIu32 " contended)\n",
		c->pass.dir, c->pass.events, c->pass.processes, c->pass.processes == 1 ? "" : "es", n,
		n == 1 ? "" : "s", contended);
	st_pass_warnings(&c->pass, o);
	coverage_text(c, o);
	if (n)
		fprintf(o, "\nlocks, by %s:\n",
			strcmp(sort_by, "wait") == 0 ? "total wait" : sort_by);
	for (uint32_t i = 0; v && i < n && (!top || i < top); i++)
		lock_text(c, o, i + 1, v[i]);
	if (top && n > top)
		fprintf(o, "    (%" PRIu32 " more locks: --top 0 shows all)\n", n - top);
	for (uint32_t i = 0; conds && i < nc; i++)
		java_waits |= c->ls.locks[conds[i]].kind == ST_LK_MONITOR_WAIT;
	if (nc)
		fprintf(o, "\ncondition variables%s, by %s:\n", java_waits ? " and Object.wait" : "",
			strcmp(sort_by, "wait") == 0
				? "time waited for work (a wait woken by a signal; idle waits, timed "
				  "out or still going at the end, are shown apart)"
				: sort_by);
	for (uint32_t i = 0; conds && i < nc && (!top || i < top); i++)
		lock_text(c, o, i + 1, conds[i]);
	if (top && nc > top)
		fprintf(o, "    (%" PRIu32 " more)\n", nc - top);
	if (c->ls.nthreads)
		threads_text(c, o, top);
	for (int in = 0; in < IN_KINDS; in++)
		waiting_text(c, o, (enum waiting_in)in);
	fprintf(o, "\npotential deadlocks: ");
	if (c->ncycles)
		fprintf(o, "%d lock-order cycle%s%s (shimtrace report deadlocks shows them)\n", c->ncycles,
			c->ncycles == 1 ? "" : "s", c->more_cycles ? " and more" : "");
	else
		fprintf(o, "none (no two locks taken in opposite orders)\n");
	if (monitor_order_missing(c))
		fputs(MONITOR_ORDER_MISSING, o);
	free(v);
	free(conds);
}

/* ---- JSON ---- */

static void lock_json(struct ctx *c, FILE *o, uint32_t li)
{
	const struct st_lock *l = &c->ls.locks[li];
	const struct st_lock_site **sites;
	const char *name;
	uint32_t nsites;

	fprintf(o, "{\"pid\": %" PRId32 ", \"process\": ", l->pid);
	st_json_write(o, st_pass_name(&c->pass, l->pid));
	fprintf(o, ", \"kind\": \"%s\", \"address\": \"0x%" PRIx64 "\", \"name\": ",
		st_lock_kind_name(l->kind), l->addr);
	lock_name_json(c, l, o);
	if (is_monitor(l)) {
		name = st_jsyms_class(st_syms_java(c->pass.syms), l->pid, l->jclass);
		fprintf(o, ", \"monitor\": %" PRIu64 ", \"class\": ", l->addr);
		st_json_write_or_null(o, name);
	}
	lock_block_json(c, l, o);
	fprintf(o, ", \"%s\": ", l->from_init ? "initialised_at" : "first_used_at");
	site_json(c, o, l->pid, l->first_ip);
	if (!st_lock_kind_holds_known(l->kind))
		fputs(", \"acquired\": null", o);
	else
		fprintf(o, ", \"acquired\": %" PRIu64, l->acquired);
	fprintf(o,
		", \"contended\": %" PRIu64 ", \"failed\": %" PRIu64 ", \"busy_tries\": %" PRIu64
		", \"threads\": %" PRIu32,
		l->contended, l->failed, l->busy_tries, l->ntids);
	fprintf(o,
		", \"wait_ns\": {\"count\": %" PRIu64 ", \"total\": %" PRIu64 ", \"mean\": %" PRIu64
		", \"p50\": %" PRIu64 ", \"p99\": %" PRIu64 ", \"max\": %" PRIu64 "}",
		l->waits, l->wait_total, mean(l->wait_total, l->waits), st_lock_percentile(l, 0.5),
		st_lock_percentile(l, 0.99), l->wait_max);
	if (st_lock_kind_idles(l->kind))
		fprintf(o,
			", \"woken\": {\"count\": %" PRIu64 ", \"total_ns\": %" PRIu64
			"}, \"idle\": {\"count\": %" PRIu64 ", \"total_ns\": %" PRIu64 "}",
			l->woken_waits, l->woken_total, l->idle_waits, l->idle_total);
	if (l->kind == ST_LK_FUTEX)
		fprintf(o,
			", \"timed_out\": {\"count\": %" PRIu64 ", \"total_ns\": %" PRIu64
			"}, \"wakes\": %" PRIu64 ", \"threads_woken\": %" PRIu64,
			l->idle_waits, l->idle_total, l->wakes, l->woken);
	if (!st_lock_kind_holds_known(l->kind))
		fputs(", \"hold_ns\": null", o);
	else
		fprintf(o,
			", \"hold_ns\": {\"count\": %" PRIu64 ", \"total\": %" PRIu64 ", \"mean\": %" PRIu64
			", \"max\": %" PRIu64 "}",
			l->holds, l->hold_total, mean(l->hold_total, l->holds), l->hold_max);
	fputs(", \"waited_at\": [", o);
	sites = sites_of(c, li, &nsites);
	for (uint32_t i = 0; sites && i < nsites; i++) {
		fprintf(o, "%s{\"waits\": %" PRIu64 ", \"wait_ns\": %" PRIu64 ", \"site\": ", i ? ", " : "",
			sites[i]->waits, sites[i]->wait_total);
		site_json(c, o, l->pid, sites[i]->ip);
		if (sites[i]->stack)
			st_stacks_json(&c->ls.stacks, c->pass.syms, l->pid, sites[i]->stack, o);
		fputs("}", o);
	}
	free(sites);
	fputs("]}", o);
}

static void locks_json(struct ctx *c, FILE *o)
{
	const char *java;
	uint32_t n, nc, top = c->opts->top, k = 0;
	uint32_t *v = ranked(c, false, &n), *conds = ranked(c, true, &nc);

	st_pass_json_head(&c->pass, o);
	fprintf(o, ", \"coverage\": {\"gaps\": %" PRIu64 ", \"holds\": %" PRIu64
		   ", \"holds_cut\": %" PRIu64 ", \"waits_cut\": %" PRIu64 ", \"open_holds\": %" PRIu64
		   ", \"unpaired_unlocks\": %" PRIu64 "}",
		c->ls.gaps, holds_measured(c), c->ls.holds_cut, c->ls.waits_cut,
		st_lockstat_open_holds(&c->ls), c->ls.unpaired);
	fprintf(o, ", \"sort\": \"%s\",\n \"locks\": [", sort_by);
	for (uint32_t i = 0; v && i < n && (!top || i < top); i++) {
		fputs(i ? ",\n  " : "\n  ", o);
		lock_json(c, o, v[i]);
	}
	fprintf(o, "],\n \"conds\": [");
	for (uint32_t i = 0; conds && i < nc && (!top || i < top); i++) {
		fputs(i ? ",\n  " : "\n  ", o);
		lock_json(c, o, conds[i]);
	}
	fprintf(o, "],\n \"threads\": [");
	for (uint32_t i = 0; i < c->ls.nthreads; i++) {
		const struct st_lock_thread *t = &c->ls.threads[i];

		if (!t->acquired && !t->contended)
			continue;
		fprintf(o, "%s{\"pid\": %" PRId32 ", \"tid\": %" PRId32 ", \"process\": ", k++ ? ",\n  " : "\n  ",
			t->pid, t->tid);
		st_json_write(o, st_pass_name(&c->pass, t->pid));
		fprintf(o, ", \"acquired\": %" PRIu64 ", \"contended\": %" PRIu64 ", \"wait_ns\": %" PRIu64
			   ", \"java_name\": ",
			t->acquired, t->contended, t->wait_total);
		java = st_jsyms_thread(st_syms_java(c->pass.syms), t->pid, t->tid);
		st_json_write_or_null(o, java);
		fputs("}", o);
	}
	for (int in = 0; in < IN_KINDS; in++) {
		static const char *keys[IN_KINDS] = { "waiting", "cond_waiting", "futex_waiting",
						      "object_waiting" };

		fprintf(o, "],\n \"%s\": [", keys[in]);
		k = 0;
		for (uint32_t i = 0; i < c->ls.nthreads; i++) {
			const struct st_lock_thread *t = &c->ls.threads[i];
			const struct st_lock *l = &c->ls.locks[t->wait_lock];

			if (!still_waiting(c, t, (enum waiting_in)in))
				continue;
			fprintf(o, "%s{\"pid\": %" PRId32 ", \"tid\": %" PRId32 ", \"kind\": \"%s\", \"address\": \"0x%" PRIx64
				   "\", \"for_ns\": %" PRId64,
				k++ ? ",\n  " : "\n  ", t->pid, t->tid, st_lock_kind_name(l->kind), l->addr,
				(int64_t)st_ns_since(t->wait_since, c->ls.end_ns));
			fputs(", \"name\": ", o);
			lock_name_json(c, l, o);
			fputs(", \"site\": ", o);
			site_json(c, o, t->pid, t->wait_ip);
			fputs("}", o);
		}
	}
	fprintf(o, "],\n \"deadlock_cycles\": %d, \"monitor_order_missing\": %s}\n", c->ncycles,
		monitor_order_missing(c) ? "true" : "false");
	free(v);
	free(conds);
}

/* ---- deadlocks ---- */

static void cycle_text(struct ctx *c, FILE *o, int k)
{
	const struct st_cycle *cy = &c->cycles[k];
	const struct st_lock *first = &c->ls.locks[c->ls.edges[cy->edges[0]].a];
	char held[512], took[512], aw[ST_ESC_SIZE(160) + 800], bw[ST_ESC_SIZE(160) + 800];

	fprintf(o, "\n%d. %" PRIu32 " locks in pid %" PRId32 " (%s):\n", k + 1, cy->n, first->pid,
		st_pass_name_text(&c->pass, first->pid));
	for (uint32_t i = 0; i < cy->n; i++) {
		const struct st_lock_edge *e = &c->ls.edges[cy->edges[i]];
		const struct st_lock *a = &c->ls.locks[e->a], *b = &c->ls.locks[e->b];

		site_text(c, a->pid, e->a_ip, held, sizeof(held));
		site_text(c, b->pid, e->b_ip, took, sizeof(took));
		lock_short(c, a, aw, sizeof(aw));
		lock_short(c, b, bw, sizeof(bw));
		fprintf(o, "   tid %" PRId32 " holding %s (taken at %s)\n", e->tid, aw, held);
		fprintf(o, "     took %s at %s\n", bw, took);
	}
}

static void deadlocks_text(struct ctx *c, FILE *o)
{
	fprintf(o, "shimtrace report deadlocks: %s: %d lock-order cycle%s%s\n", c->pass.dir, c->ncycles,
		c->ncycles == 1 ? "" : "s", c->more_cycles ? " (and more, not listed)" : "");
	st_pass_warnings(&c->pass, o);
	if (monitor_order_missing(c))
		fputs(MONITOR_ORDER_MISSING, o);
	for (int k = 0; k < c->ncycles; k++)
		cycle_text(c, o, k);
}

static void deadlocks_json(struct ctx *c, FILE *o)
{
	st_pass_json_head(&c->pass, o);
	fprintf(o, ", \"more\": %s, \"monitor_order_missing\": %s, \"cycles\": [",
		c->more_cycles ? "true" : "false", monitor_order_missing(c) ? "true" : "false");
	for (int k = 0; k < c->ncycles; k++) {
		const struct st_cycle *cy = &c->cycles[k];

		fprintf(o, "%s\n  {\"pid\": %" PRId32 ", \"edges\": [", k ? "," : "",
			c->ls.locks[c->ls.edges[cy->edges[0]].a].pid);
		for (uint32_t i = 0; i < cy->n; i++) {
			const struct st_lock_edge *e = &c->ls.edges[cy->edges[i]];
			const struct st_lock *a = &c->ls.locks[e->a], *b = &c->ls.locks[e->b];

			fprintf(o, "%s{\"tid\": %" PRId32 ", \"held\": \"0x%" PRIx64 "\", \"held_kind\": \"%s\", "
				   "\"held_name\": ",
				i ? ", " : "", e->tid, a->addr, st_lock_kind_name(a->kind));
			lock_name_json(c, a, o);
			fputs(", \"held_at\": ", o);
			site_json(c, o, a->pid, e->a_ip);
			fprintf(o, ", \"took\": \"0x%" PRIx64 "\", \"took_kind\": \"%s\", \"took_name\": ",
				b->addr, st_lock_kind_name(b->kind));
			lock_name_json(c, b, o);
			fputs(", \"took_at\": ", o);
			site_json(c, o, b->pid, e->b_ip);
			fprintf(o, ", \"times\": %" PRIu64 "}", e->count);
		}
		fputs("]}", o);
	}
	fputs("]}\n", o);
}

/* ---- the verbs ---- */

/* An event: to the heap's blocks and the lock statistics; each lock seen
 * for the first time is looked for in the heap as it is then. */
static int on_event(void *arg, const struct st_event *ev)
{
	struct ctx *c = arg;
	uint32_t before = c->ls.nlocks;

	if (st_heapblocks_event(&c->heap, ev) < 0 || st_lockstat_event(&c->ls, ev) < 0)
		return -1;
	for (uint32_t i = before; i < c->ls.nlocks; i++) {
		const struct st_lock *l = &c->ls.locks[i];
		const struct st_heapblock *b = st_heapblocks_find(&c->heap, l->pid, l->addr);

		if (st_grow(&c->blocks, &c->blocks_cap, c->nblocks, sizeof(*c->blocks)) < 0)
			return -1;
		c->blocks[c->nblocks++] = b ? (struct lock_block){ true, b->size, l->addr - b->start, b->ip }
					    : (struct lock_block){ 0 };
	}
	return 0;
}

static int on_gap(void *arg, const struct st_lost *gap, int32_t pid)
{
	struct ctx *c = arg;

	return st_lockstat_gap(&c->ls, gap, pid);
}

/* One pass over the trace and the lock-order cycles into c: 0, or -1 with
 * the reason in err (release c either way). */
static int collect(struct ctx *c, char *err, size_t errlen)
{
	st_lockstat_init(&c->ls);
	st_heapblocks_init(&c->heap);
	c->ls.by_stack = c->opts->stack;
	if (st_report_pass(c->opts, on_event, on_gap, c, &c->pass, err, errlen) < 0)
		return -1;
	st_lockstat_finish(&c->ls);
	c->ncycles = st_lock_cycles(&c->ls, &c->cycles, &c->more_cycles);
	if (c->ncycles < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

static void release_ctx(struct ctx *c)
{
	free(c->blocks);
	st_heapblocks_fini(&c->heap);
	free(c->cycles);
	st_lockstat_fini(&c->ls);
	st_pass_fini(&c->pass);
}

static int run(const struct st_report_opts *opts, bool deadlocks, FILE *o, char *err, size_t errlen)
{
	struct ctx c = { .opts = opts };
	int ret = 0;

	if (opts->sort) {
		bool ok = false;

		for (int i = 0; sorts[i]; i++)
			ok |= strcmp(sorts[i], opts->sort) == 0;
		if (!ok) {
			snprintf(err, errlen, "--sort: no field '%s' (wait, contended, acquired, hold, max)",
				 opts->sort);
			return 2;
		}
	}
	if (collect(&c, err, errlen) < 0)
		ret = 1;
	else if (deadlocks)
		(opts->json ? deadlocks_json : deadlocks_text)(&c, o);
	else
		(opts->json ? locks_json : locks_text)(&c, o);
	release_ctx(&c);
	return ret;
}

int st_report_locks(const struct st_report_opts *opts, FILE *o, char *err, size_t errlen)
{
	return run(opts, false, o, err, errlen);
}

static void top_text(struct ctx *c, FILE *o, uint32_t top, const char *prefix)
{
	uint32_t n, shown = 0, waiting = 0;
	uint32_t *v = ranked(c, false, &n);
	char site[512], what[ST_ESC_SIZE(160) + 800], a[32], count[64];

	st_pass_end_warnings(&c->pass, prefix, o);
	gaps_text(c, o, prefix);
	for (uint32_t i = 0; i < c->ls.nthreads; i++)
		waiting += still_waiting(c, &c->ls.threads[i], IN_LOCK);
	for (uint32_t i = 0; v && i < n && shown < top; i++) {
		const struct st_lock *l = &c->ls.locks[v[i]];

		if (!l->waits)
			break;
		if (shown++ == 0)
			fprintf(o, "%slocks threads waited for (shimtrace report locks %s):\n", prefix,
				c->pass.dir);
		site_text(c, l->pid, l->first_ip, site, sizeof(site));
		lock_what(c, l, what, sizeof(what));
		if (l->kind == ST_LK_FUTEX)
			snprintf(count, sizeof(count), "%" PRIu64 " waits woken", l->contended);
		else if (l->kind == ST_LK_MONITOR)
			snprintf(count, sizeof(count), "%" PRIu64 " contended enter%s", l->contended,
				 l->contended == 1 ? "" : "s");
		else
			snprintf(count, sizeof(count), "%" PRIu64 " of %" PRIu64 " waited", l->contended,
				 l->acquired);
		fprintf(o, "%s  %8s  %s  %s (%s)\n", prefix, st_fmt_ns(l->wait_total, a, sizeof(a)),
			count, what, site);
	}
	if (waiting)
		fprintf(o, "%s%" PRIu32 " thread%s still waiting for a lock when the trace ends "
			   "(shimtrace report locks %s lists them)\n",
			prefix, waiting, waiting == 1 ? " was" : "s were", c->pass.dir);
	else if (!shown && n)
		fprintf(o, "%sno thread waited for a lock (%" PRIu32 " lock%s taken)\n", prefix, n,
			n == 1 ? "" : "s");
	if (c->ncycles)
		fprintf(o, "%spotential deadlocks: %d lock-order cycle%s (shimtrace report deadlocks %s)\n",
			prefix, c->ncycles, c->ncycles == 1 ? "" : "s", c->pass.dir);
	free(v);
}

int st_report_locks_top(const char *dir, uint32_t n, const char *prefix, FILE *o, char *err,
			size_t errlen)
{
	struct st_report_opts opts = { .dir = dir, .pid = -1 };
	struct ctx c = { .opts = &opts };
	int ret = collect(&c, err, errlen) < 0;

	if (!ret)
		top_text(&c, o, n, prefix);
	release_ctx(&c);
	return ret;
}

int st_report_deadlocks(const struct st_report_opts *opts, FILE *o, char *err, size_t errlen)
{
	return run(opts, true, o, err, errlen);
}
