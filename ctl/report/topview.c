/*
 * shimtrace top's refreshes as lines of text and as JSON (see topview.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl/common/escape.h"
#include "ctl/report/duration.h"
#include "ctl/report/javasyms.h"
#include "ctl/report/site.h"
#include "ctl/report/symbols.h"
#include "ctl/report/topview.h"

static const char *sorts[ST_TOP_SORTS] = { "wait", "contended", "acquired", "hold" };

const char *st_top_sort_name(enum st_top_sort s)
{
	return s < ST_TOP_SORTS ? sorts[s] : "?";
}

int st_top_sort_parse(const char *name)
{
	for (int i = 0; i < ST_TOP_SORTS; i++)
		if (strcmp(name, sorts[i]) == 0)
			return i;
	return -1;
}

static const struct st_top_figs *figs(const struct st_top_row *r, const struct st_top_view *v)
{
	return v->run ? &r->run : &r->iv;
}

static uint64_t key(const struct st_top_figs *f, enum st_top_sort s)
{
	switch (s) {
	case ST_TOP_CONTENDED:
		return f->contended;
	case ST_TOP_ACQUIRED:
		return f->acquired;
	case ST_TOP_HOLD:
		return f->hold;
	default:
		return f->wait;
	}
}

struct ranking {
	const struct st_top *t;
	const struct st_top_view *v;
};

static int by_key(const void *a, const void *b, void *arg)
{
	const struct ranking *k = arg;
	const struct st_top_row *x = &k->t->rows[*(const uint32_t *)a];
	const struct st_top_row *y = &k->t->rows[*(const uint32_t *)b];
	const struct st_top_figs *fx = figs(x, k->v), *fy = figs(y, k->v);
	uint64_t kx = key(fx, k->v->sort), ky = key(fy, k->v->sort);
	const struct st_lock *lx = &k->t->ls.locks[x->lock], *ly = &k->t->ls.locks[y->lock];

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (fx->contended != fy->contended)
		return fx->contended > fy->contended ? -1 : 1;
	if (lx->pid != ly->pid)
		return lx->pid < ly->pid ? -1 : 1;
	return lx->addr < ly->addr ? -1 : lx->addr > ly->addr;
}

/* A monitor's name, "monitor of CLASS" (javasyms.h), as report locks
 * says it. */
static void monitor_name(struct st_top *t, const struct st_lock *l, bool text, char *buf, size_t n)
{
	st_jsyms_monitor_name(st_syms_java(t->pass.syms), l->pid, l->jclass, text, buf, n);
}

/* "mutex 0xADDR (name)" of row r's lock; "monitor of CLASS (tag N)". */
static void lock_text(struct st_top *t, const struct st_lock *l, char *buf, size_t n)
{
	const char *name;
	char esc[ST_ESC_SIZE(64)];

	if (l->kind == ST_LK_MONITOR) {
		char tag[32];
		size_t len = (size_t)snprintf(tag, sizeof(tag), " (tag %" PRIu64 ")", l->addr);

		/* (a name longer than the column is cut, at a whole escape, and
		 * its tag kept) */
		if (n <= len) {
			snprintf(buf, n, "%s", tag + 1);
			return;
		}
		monitor_name(t, l, true, buf, n - len);
		strcat(buf, tag);
		return;
	}
	/* (a monitor's "address" is its tag: no variable's) */
	name = st_syms_data_name(t->pass.syms, l->pid, l->addr);
	snprintf(buf, n, "%s 0x%" PRIx64 "%s%s%s", st_lock_kind_name(l->kind), l->addr,
		 name ? " (" : "", name ? st_esc(esc, sizeof(esc), name) : "", name ? ")" : "");
}

static void row_text(struct st_top *t, const struct st_top_view *v, const struct st_top_row *r,
		     char *buf, size_t n)
{
	const struct st_top_figs *f = figs(r, v);
	const struct st_lock *l = &t->ls.locks[r->lock];
	char wait[32], hold[32], lock[128], proc[64], held[24], thread[96], site[512], more[32];
	char acquired[24], esc[ST_ESC_SIZE(40)];
	const char *java;

	lock_text(t, l, lock, sizeof(lock));
	if (!st_lock_kind_holds_known(l->kind)) {
		snprintf(acquired, sizeof(acquired), "-");
		snprintf(hold, sizeof(hold), "-");
	} else {
		snprintf(acquired, sizeof(acquired), "%" PRIu64, f->acquired);
		st_fmt_ns(f->hold, hold, sizeof(hold));
	}
	snprintf(proc, sizeof(proc), "%" PRId32 " (%s)", l->pid, st_pass_name_text(&t->pass, l->pid));
	if (r->holders > 1)
		snprintf(held, sizeof(held), "%" PRIu32 " thr", r->holders);
	else if (r->holders)
		snprintf(held, sizeof(held), "%" PRId32, r->holder);
	else
		snprintf(held, sizeof(held), "-");
	/* (a Java thread: its name, jvm:thread_start's) */
	java = f->threads ? st_jsyms_thread(st_syms_java(t->pass.syms), l->pid, f->tid) : NULL;
	if (f->threads)
		snprintf(thread, sizeof(thread), "%" PRId32 "%s%s%s", f->tid, java ? " " : "",
			 java ? st_esc(esc, sizeof(esc), java) : "", f->threads > 1 ? " +" : "");
	else
		snprintf(thread, sizeof(thread), "-");
	if (f->sites)
		st_site_text(t->pass.syms, l->pid, f->site_ip, site, sizeof(site));
	else
		snprintf(site, sizeof(site), "-");
	more[0] = '\0';
	if (f->sites > 1)
		snprintf(more, sizeof(more), " (+%" PRIu32 " site%s)", f->sites - 1,
			 f->sites > 2 ? "s" : "");
	snprintf(buf, n, "%8s %9" PRIu64 " %9s %8s %8s %7" PRIu32 "  %-32s %-20s %-10s %s%s",
		 st_fmt_ns(f->wait, wait, sizeof(wait)), f->contended, acquired, hold, held, r->waiting,
		 lock, proc, thread, site, more);
}

/* The rows view v shows, ranked; *n of them (NULL: out of memory). */
static uint32_t *ranked(struct st_top *t, const struct st_top_view *v, uint32_t *n)
{
	uint32_t *ix = malloc(((size_t)t->nrows + 1) * sizeof(*ix));
	struct ranking k = { t, v };
	char line[1024];

	*n = 0;
	if (!ix)
		return NULL;
	for (uint32_t i = 0; i < t->nrows; i++) {
		const struct st_top_row *r = &t->rows[i];

		if (!v->run && !r->iv.contended && !r->waiting)
			continue;
		if (v->filter && *v->filter) {
			row_text(t, v, r, line, sizeof(line));
			if (!strstr(line, v->filter))
				continue;
		}
		ix[(*n)++] = i;
	}
	qsort_r(ix, *n, sizeof(*ix), by_key, &k);
	return ix;
}

/* "HH:MM:SS.mmm" of a time of the trace, local. */
static const char *clock_text(int64_t ns, char *buf, size_t n)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;
	char hms[16];

	if (ns <= 0 || !localtime_r(&s, &tm)) {
		snprintf(buf, n, "the start");
		return buf;
	}
	strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
	snprintf(buf, n, "%s.%03d", hms, (int)(ns / 1000000 % 1000));
	return buf;
}

static void notes(struct st_top *t, const struct st_top_view *v, st_top_sink sink, void *arg)
{
	const struct st_top_state *s = &t->state;
	char line[1024], esc[ST_ESC_SIZE(511)];

	snprintf(line, sizeof(line),
		 "%" PRIu64 " events read in all; lost by the tracer: %" PRIu64 "; late (came after later "
		 "events were shown): %" PRIu64 "; behind (written, not read yet): %" PRIu64 " bytes%s%s",
		 s->events, s->lost, s->late, s->behind,
		 s->cut ? "; reading stopped at the refresh's time budget" : "",
		 s->finished ? "; the trace is complete" : "");
	sink(arg, ST_TOP_NOTE, line);
	if (s->damaged) {
		snprintf(line, sizeof(line), "damaged, not read (%" PRIu32 " part%s): %s", s->damaged,
			 s->damaged == 1 ? "" : "s", st_esc(esc, sizeof(esc), s->damage));
		sink(arg, ST_TOP_NOTE, line);
	}
	if (s->incomplete[0]) {
		snprintf(line, sizeof(line), "the trace is incomplete: %s",
			 st_esc(esc, sizeof(esc), s->incomplete));
		sink(arg, ST_TOP_NOTE, line);
	}
	if (v->extra)
		sink(arg, ST_TOP_NOTE, v->extra);
}

uint32_t st_top_render(struct st_top *t, const struct st_top_view *v, uint32_t max,
		       st_top_sink sink, void *arg)
{
	const struct st_top_state *s = &t->state;
	uint32_t n, *ix = ranked(t, v, &n);
	char line[1024], from[32], to[32];

	if (s->waiting)
		snprintf(line, sizeof(line), "shimtrace top: %s: waiting for the trace to begin (no "
			 "metadata yet)", v->what);
	else if (v->run)
		snprintf(line, sizeof(line), "shimtrace top: %s: the whole run to %s, %" PRIu32
			 " lock%s contended, by %s", v->what, clock_text(s->to_ns, to, sizeof(to)), n,
			 n == 1 ? "" : "s", st_top_sort_name(v->sort));
	else
		snprintf(line, sizeof(line), "shimtrace top: %s: %s to %s, %" PRIu32 " lock%s "
			 "contended, by %s", v->what, clock_text(s->from_ns, from, sizeof(from)),
			 clock_text(s->to_ns, to, sizeof(to)), n, n == 1 ? "" : "s",
			 st_top_sort_name(v->sort));
	sink(arg, ST_TOP_TITLE, line);
	notes(t, v, sink, arg);
	snprintf(line, sizeof(line), "%8s %9s %9s %8s %8s %7s  %-32s %-20s %-10s %s", "WAIT",
		 "CONTENDED", "ACQUIRED", "HOLD", "HELD BY", "WAITING", "LOCK", "PROCESS", "THREAD",
		 "WAITED AT");
	sink(arg, ST_TOP_HEAD, line);
	for (uint32_t i = 0; ix && i < n && (!max || i < max); i++) {
		row_text(t, v, &t->rows[ix[i]], line, sizeof(line));
		sink(arg, ST_TOP_ROW, line);
	}
	free(ix);
	return n;
}

/* ---- JSON ---- */

static void figs_json(struct st_top *t, const struct st_lock *l, const struct st_top_figs *f,
		      FILE *o)
{
	fprintf(o, "\"contended\": %" PRIu64 ", \"wait_ns\": %" PRIu64, f->contended, f->wait);
	if (!st_lock_kind_holds_known(l->kind))
		fputs(", \"acquired\": null, \"hold_ns\": null", o);
	else
		fprintf(o, ", \"acquired\": %" PRIu64 ", \"hold_ns\": %" PRIu64, f->acquired, f->hold);
	fprintf(o, ", \"threads\": %" PRIu32 ", \"thread\": ", f->threads);
	if (f->threads) {
		const char *java = st_jsyms_thread(st_syms_java(t->pass.syms), l->pid, f->tid);

		fprintf(o, "{\"tid\": %" PRId32 ", \"wait_ns\": %" PRIu64 ", \"java_name\": ", f->tid,
			f->tid_wait);
		st_json_write_or_null(o, java);
		fputs("}", o);
	} else
		fputs("null", o);
	fprintf(o, ", \"sites\": %" PRIu32 ", \"site\": ", f->sites);
	if (f->sites) {
		fprintf(o, "{\"wait_ns\": %" PRIu64 ", \"at\": ", f->site_wait);
		st_site_json(t->pass.syms, l->pid, f->site_ip, o);
		fputs("}", o);
	} else {
		fputs("null", o);
	}
}

void st_top_json(struct st_top *t, const struct st_top_view *v, uint32_t max, FILE *o)
{
	const struct st_top_state *s = &t->state;
	uint32_t n, *ix = ranked(t, v, &n);

	fputs("{\"trace\": ", o);
	st_json_write(o, t->opts.dir);
	fprintf(o, ", \"view\": \"%s\", \"sort\": \"%s\", \"from_ns\": %" PRId64 ", \"to_ns\": %" PRId64
		   ", \"waiting\": %s, \"finished\": %s, \"events\": %" PRIu64 ", \"lost\": %" PRIu64
		   ", \"late\": %" PRIu64 ", \"behind_bytes\": %" PRIu64 ", \"damaged\": %" PRIu32
		   ", \"incomplete\": ",
		v->run ? "run" : "interval", st_top_sort_name(v->sort), v->run ? 0 : s->from_ns,
		s->to_ns, s->waiting ? "true" : "false", s->finished ? "true" : "false", s->events,
		s->lost, s->late, s->behind, s->damaged);
	if (s->incomplete[0])
		st_json_write(o, s->incomplete);
	else
		fputs("null", o);
	fputs(", \"locks\": [", o);
	for (uint32_t i = 0; ix && i < n && (!max || i < max); i++) {
		const struct st_top_row *r = &t->rows[ix[i]];
		const struct st_lock *l = &t->ls.locks[r->lock];
		char monitor[ST_JSYMS_MONITOR_NAME_SIZE];
		const char *name = monitor;

		/* (a monitor's "address" is its tag: no variable's) */
		if (l->kind == ST_LK_MONITOR)
			monitor_name(t, l, false, monitor, sizeof(monitor));
		else
			name = st_syms_data_name(t->pass.syms, l->pid, l->addr);
		fprintf(o, "%s{\"pid\": %" PRId32 ", \"process\": ", i ? ", " : "", l->pid);
		st_json_write(o, st_pass_name(&t->pass, l->pid));
		fprintf(o, ", \"kind\": \"%s\", \"address\": \"0x%" PRIx64 "\", \"name\": ",
			st_lock_kind_name(l->kind), l->addr);
		st_json_write_or_null(o, name);
		fprintf(o, ", \"holders\": %" PRIu32 ", \"holder\": ", r->holders);
		if (r->holders)
			fprintf(o, "%" PRId32, r->holder);
		else
			fputs("null", o);
		fprintf(o, ", \"waiting\": %" PRIu32 ", ", r->waiting);
		figs_json(t, l, figs(r, v), o);
		fputs("}", o);
	}
	fputs("]}\n", o);
	free(ix);
}
