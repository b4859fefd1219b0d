/*
 * The pass over a trace that every report makes (see pass.h).
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/common/catalog.h"
#include "ctl/common/escape.h"
#include "ctl/common/tracevalues.h"
#include "ctl/report/filter.h"
#include "ctl/report/gapscope.h"
#include "ctl/report/grow.h"
#include "ctl/report/pass.h"
#include "ctl/report/symbols.h"

static int note_name(struct st_pass *p, const struct st_event *ev, int name_field)
{
	const struct st_value *v = &ev->fields[name_field];
	struct st_proc_name *n = NULL;

	for (uint32_t i = 0; i < p->nnames; i++)
		if (p->names[i].pid == ev->pid)
			n = &p->names[i];
	if (!n) {
		if (p->nnames == p->names_cap) {
			uint32_t cap = p->names_cap ? p->names_cap * 2 : 64;
			struct st_proc_name *nv = realloc(p->names, cap * sizeof(*nv));

			if (!nv)
				return -1;
			p->names = nv;
			p->names_cap = cap;
		}
		n = &p->names[p->nnames++];
		n->pid = ev->pid;
		p->processes++;
	}
	/* (the newest: a process that exec'd is named by its new image) */
	snprintf(n->name, sizeof(n->name), "%.*s", (int)(v->len < 31 ? v->len : 31),
		 v->ptr ? (const char *)v->ptr : "?");
	st_esc(n->text, sizeof(n->text), n->name);
	return 0;
}


/* Whether event class name ("provider:event") is of one of families
 * ("pthread", or a list: "pthread,futex"). */
static bool of_families(const char *name, const char *families)
{
	for (const char *f = families; *f;) {
		size_t n = strcspn(f, ",");

		if (strncmp(name, f, n) == 0 && name[n] == ':')
			return true;
		f += n + (f[n] == ',');
	}
	return false;
}
/* A process_end event (procend.c in the daemon): kept if it did not exit. */
static int note_end(struct st_pass *p, const struct st_event *ev, int exited_field,
		    int threads_field)
{
	if (ev->fields[exited_field].u != 0)
		return 0;
	if (st_grow(&p->unexited, &p->unexited_cap, p->nunexited, sizeof(*p->unexited)) < 0)
		return -1;
	p->unexited[p->nunexited++] = (struct st_proc_unexited){
		ev->pid, (uint32_t)ev->fields[threads_field].u
	};
	return 0;
}

/* What the pass knows of each event class, found once from the metadata:
 * not a name compared per event. C_FAMILY: of opts->family; C_SYMS: the
 * symboliser reads its events. */
enum { C_FAMILY = 1, C_SYMS = 2 };

/*
 * Whether the rules the trace's env gives (shimtrace_rules: patterns in
 * order, a disabling one after a '!'; the last that matches decides)
 * enable the class called name; true when the env says nothing (a trace
 * of an older shimtrace, or of another writer): nothing is known missing.
 */
static bool rules_enable(const struct st_tsdl *meta, const char *name)
{
	const char *rules = NULL;
	bool on = false;

	for (uint32_t i = 0; i < meta->nenv; i++)
		if (strcmp(meta->env[i].key, "shimtrace_rules") == 0)
			rules = meta->env[i].value;
	if (!rules || !*rules)
		return true;
	for (const char *p = rules; *p;) {
		size_t n = strcspn(p, " ");
		bool enable = *p != '!';
		char pattern[160];

		if (n - !enable < sizeof(pattern)) {
			snprintf(pattern, sizeof(pattern), "%.*s", (int)(n - !enable), p + !enable);
			if (fnmatch(pattern, name, 0) == 0)
				on = enable;
		}
		p += n + (p[n] == ' ');
	}
	return on;
}

static int classes_of(struct st_pass_classes *k, const struct st_tsdl *meta, const char *families,
		      struct st_syms *syms)
{
	free(k->of);
	*k = (struct st_pass_classes){ .process = UINT32_MAX, .end = UINT32_MAX, .name_field = -1,
				       .exited_field = -1, .threads_field = -1, .n = meta->nevents };
	k->of = calloc(meta->nevents + 1, sizeof(*k->of));
	if (!k->of)
		return -1;
	/* (declared: one came; asked for: none had to) */
	k->monitor_order = rules_enable(meta, ST_CATALOG_LOCK_ORDER);
	for (uint32_t i = 0; i < meta->nevents; i++) {
		const struct st_event_class *c = &meta->events[i];
		int a, b;

		if (c->index < meta->nevents)
			k->of[c->index] = (families && of_families(c->name, families) ? C_FAMILY : 0) |
					  (st_syms_reads(syms, c) ? C_SYMS : 0);
		k->monitor_order |= strcmp(c->name, ST_CATALOG_LOCK_ORDER) == 0;
		if (strcmp(c->name, "shimtrace:process") == 0 &&
		    (a = st_event_class_field(c, "name")) >= 0) {
			k->process = c->index;
			k->name_field = a;
		} else if (strcmp(c->name, "shimtrace:process_end") == 0 &&
			   (a = st_event_class_field(c, "exited")) >= 0 &&
			   (b = st_event_class_field(c, "threads")) >= 0) {
			k->end = c->index;
			k->exited_field = a;
			k->threads_field = b;
		}
	}
	return 0;
}

int st_pass_begin(struct st_pass *pass, const struct st_report_opts *opts, char *err,
		  size_t errlen)
{
	memset(pass, 0, sizeof(*pass));
	pass->dir = opts->dir;
	pass->opts = opts;
	pass->saw_family = !opts->family;
	pass->saw_pid = opts->pid < 0;
	pass->saw_filtered = !opts->filter || !st_filter_any(opts->filter);
	/* (NULL when it would pass every event: no call per event) */
	pass->filter = pass->saw_filtered ? NULL : opts->filter;
	pass->syms = st_syms_new();
	if (!pass->syms) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int st_pass_reader(struct st_pass *pass, const struct st_reader *r)
{
	pass->stream_bytes = st_reader_stream_bytes(r);
	return classes_of(&pass->cls, st_reader_metadata(r), pass->opts->family, pass->syms);
}

int st_pass_item(struct st_pass *pass, const struct st_item *it, st_report_fn fn,
		 st_report_gap_fn gap, void *ctx)
{
	const struct st_report_opts *opts = pass->opts;
	const struct st_pass_classes *k = &pass->cls;
	const struct st_event *ev = it->event;
	uint8_t of;

	if (it->kind == ST_ITEM_LOST) {
		if (opts->pid < 0 || it->lost->pid == opts->pid)
			pass->lost += it->lost->count;
		return gap ? gap(ctx, it->lost, st_gapscope_pid(&pass->scope, it->lost)) : 0;
	}
	of = ev->cls->index < k->n ? k->of[ev->cls->index] : C_SYMS;
	if (pass->events++ == 0)
		pass->first_ns = ev->ns;
	pass->last_ns = ev->ns;
	if (ev->cls->index == k->process && note_name(pass, ev, k->name_field) < 0)
		return -1;
	if ((gap && st_gapscope_event(&pass->scope, ev) < 0) ||
	    ((of & C_SYMS) && st_syms_event(pass->syms, ev) < 0))
		return -1;
	if (opts->pid >= 0 && ev->pid != opts->pid)
		return 0;
	pass->saw_pid = true;
	/* (how a process ended is said whatever the filter shows) */
	if (ev->cls->index == k->end && note_end(pass, ev, k->exited_field, k->threads_field) < 0)
		return -1;
	if (pass->filter && !st_filter_event(pass->filter, ev, pass->first_ns))
		return 0;
	pass->saw_filtered = true;
	pass->saw_family |= of & C_FAMILY;
	return fn(ctx, ev);
}

/* A list of families for people: "pthread,futex,jvm" as "pthread, futex
 * or jvm". */
static void family_names(const char *families, char *out, size_t n)
{
	size_t len = 0;

	out[0] = '\0';
	for (const char *p = families; *p && len < n;) {
		size_t w = strcspn(p, ",");
		const char *sep = !len ? "" : strchr(p, ',') ? ", " : " or ";

		len += (size_t)snprintf(out + len, n - len, "%s%.*s", sep, (int)w, p);
		p += w + (p[w] == ',');
	}
}

/* What the pass over r ending with ret (0, or a negative errno) says:
 * 0, or -1 with the message in err. */
static int pass_end(struct st_pass *pass, struct st_reader *r, int ret, char *err, size_t errlen)
{
	const struct st_report_opts *opts = pass->opts;

	if (ret == -ENOMEM) {
		snprintf(err, errlen, "out of memory");
	} else if (ret < 0) {
		snprintf(err, errlen, "%s", st_reader_error(r));
	} else if (!pass->saw_pid) {
		snprintf(err, errlen, "--pid %" PRId32 ": no event of that process in %s", opts->pid,
			 opts->dir);
		ret = -1;
	} else if (!pass->saw_filtered) {
		snprintf(err, errlen, "no event of %s passes --tid, -e and --time-range (the trace "
			 "spans %.9g s)", opts->dir,
			 (double)(pass->last_ns - pass->first_ns) / 1e9);
		ret = -1;
	} else if (!pass->saw_family && st_reader_damaged(r)) {
		/* (none could be read: the damage is the answer) */
		snprintf(err, errlen, "no %s events could be read; damaged: %s%s", opts->family,
			 st_reader_damage(r, 0), st_reader_damaged(r) > 1 ? " (and more)" : "");
		ret = -1;
	} else if (!pass->saw_family) {
		char names[128];

		family_names(opts->family, names, sizeof(names));
		snprintf(err, errlen, "%s: no %s events in the trace%s (%s)", opts->dir, names,
			 opts->pid >= 0 ? " of that process" : "", opts->family_how);
		ret = -1;
	} else if (st_reader_incomplete(r)) {
		pass->incomplete = strdup(st_reader_incomplete(r));
	}
	if (ret >= 0 && opts->damaged)
		*opts->damaged = st_reader_damaged(r);
	if (ret >= 0 && (pass->damaged = st_reader_damaged(r))) {
		pass->damage = calloc(pass->damaged, sizeof(*pass->damage));
		for (uint32_t i = 0; pass->damage && i < pass->damaged && st_reader_damage(r, i); i++)
			pass->damage[pass->ndamage++] = strdup(st_reader_damage(r, i));
	}
	return ret < 0 ? -1 : 0;
}

int st_report_pass(const struct st_report_opts *opts, st_report_fn fn, st_report_gap_fn gap,
		   void *ctx, struct st_pass *pass, char *err, size_t errlen)
{
	struct st_progress progress;
	struct st_reader *r;
	struct st_item it;
	int ret;

	if (st_pass_begin(pass, opts, err, errlen) < 0)
		return -1;
	if (st_reader_open(&r, opts->dir, err, errlen) < 0)
		return -1;
	if (st_pass_reader(pass, r) < 0) {
		st_reader_close(r);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	st_progress_begin(&progress, opts->progress, opts->progress_what, r);
	while ((ret = st_reader_next(r, &it)) > 0) {
		if (st_pass_item(pass, &it, fn, gap, ctx) < 0) {
			ret = -ENOMEM;
			break;
		}
		if (it.kind == ST_ITEM_EVENT)
			st_progress_event(&progress, pass->events, r);
	}
	/* (cleared before any message: the caller's, the report's) */
	st_progress_end(&progress, pass->events, r, ret == 0);
	ret = pass_end(pass, r, ret, err, errlen);
	st_reader_close(r);
	return ret;
}

void st_pass_fini(struct st_pass *pass)
{
	free(pass->cls.of);
	st_gapscope_free(&pass->scope);
	st_syms_free(pass->syms);
	free(pass->names);
	free(pass->unexited);
	free((char *)pass->incomplete);
	for (uint32_t i = 0; i < pass->ndamage; i++)
		free(pass->damage[i]);
	free(pass->damage);
	memset(pass, 0, sizeof(*pass));
}

static const struct st_proc_name *pass_name(const struct st_pass *pass, int32_t pid)
{
	for (uint32_t i = 0; i < pass->nnames; i++)
		if (pass->names[i].pid == pid)
			return &pass->names[i];
	return NULL;
}

const char *st_pass_name(const struct st_pass *pass, int32_t pid)
{
	const struct st_proc_name *n = pass_name(pass, pid);

	return n ? n->name : "?";
}

const char *st_pass_name_text(const struct st_pass *pass, int32_t pid)
{
	const struct st_proc_name *n = pass_name(pass, pid);

	return n ? n->text : "?";
}

void st_pass_warnings(const struct st_pass *pass, FILE *out)
{
	if (pass->lost)
		fprintf(out,
			"warning: %" PRIu64 " events were lost while recording (%.1f%% of %" PRIu64
			"): the numbers below may miss that many calls\n",
			pass->lost, 100.0 * (double)pass->lost / (double)(pass->lost + pass->events),
			pass->lost + pass->events);
	if (pass->incomplete) {
		fputs("warning: the trace is incomplete (", out);
		st_esc_write(out, pass->incomplete, strlen(pass->incomplete), ST_ESC_TEXT);
		fputs("): the numbers below stop there\n", out);
	}
	for (uint32_t i = 0; i < pass->ndamage; i++) {
		fputs("warning: damaged, not read: ", out);
		st_esc_write(out, pass->damage[i] ? pass->damage[i] : "?",
			     pass->damage[i] ? strlen(pass->damage[i]) : 1, ST_ESC_TEXT);
		fputs("\n", out);
	}
	if (pass->damaged > pass->ndamage)
		fprintf(out, "warning: damaged, not read: %u more parts\n",
			pass->damaged - pass->ndamage);
	st_pass_end_warnings(pass, "", out);
}

void st_pass_end_warnings(const struct st_pass *pass, const char *prefix, FILE *out)
{
	for (uint32_t i = 0; i < pass->nunexited; i++) {
		const struct st_proc_unexited *u = &pass->unexited[i];
		char missing[128];

		/* (a thread writes one record at a time: one each at most;
		 * per-CPU buffers have no owner to count: ST_THREADS_UNKNOWN) */
		if (u->threads == ST_THREADS_UNKNOWN)
			snprintf(missing, sizeof(missing),
				 "events its threads were writing may be missing (per-CPU buffers: "
				 "how many is not known)");
		else if (u->threads)
			snprintf(missing, sizeof(missing),
				 "up to %" PRIu32 " event%s its threads were writing may be missing",
				 u->threads, u->threads == 1 ? "" : "s");
		else
			snprintf(missing, sizeof(missing),
				 "no event was being written (none of its threads held a buffer)");
		fprintf(out,
			"%swarning: process %" PRId32 " (%s) ended without exiting (killed, crashed or "
			"_exit): %s, and what it held or waited for at the end shows as still held or "
			"waiting\n",
			prefix, u->pid, st_pass_name_text(pass, u->pid), missing);
	}
}

void st_pass_json_head(const struct st_pass *pass, FILE *o)
{
	fprintf(o, "{\"trace\": ");
	st_json_write(o, pass->dir);
	fprintf(o, ", \"events\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"incomplete\": ", pass->events,
		pass->lost);
	st_json_write_or_null(o, pass->incomplete);
	fprintf(o, ", \"damaged\": %u, \"damage\": [", pass->damaged);
	for (uint32_t i = 0; i < pass->ndamage; i++) {
		fputs(i ? ", " : "", o);
		st_json_write(o, pass->damage[i] ? pass->damage[i] : "?");
	}
	fputs("], \"ended_without_exit\": [", o);
	for (uint32_t i = 0; i < pass->nunexited; i++) {
		const struct st_proc_unexited *u = &pass->unexited[i];

		fprintf(o, "%s{\"pid\": %" PRId32 ", \"name\": ", i ? ", " : "", u->pid);
		st_json_write(o, st_pass_name(pass, u->pid));
		if (u->threads == ST_THREADS_UNKNOWN)
			fputs(", \"threads\": null}", o);
		else
			fprintf(o, ", \"threads\": %" PRIu32 "}", u->threads);
	}
	fputc(']', o);
}
