/*
 * Java sites by name (see javasyms.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/common/escape.h"
#include "ctl/report/grow.h"
#include "ctl/report/javasyms.h"
#include "ctl/report/map.h"
#include "ctl/report/meaning.h"
#include "jvm/jvm-tp.h"

enum { K_OTHER, K_CLASS, K_METHOD, K_LINE, K_THREAD };

/* Field indices of a class, found once per class. */
struct jcls {
	bool known;
	int kind;
	int number, name, cls, file, method, bci, line;
};

struct jline {
	uint32_t bci, line;
};

struct jmethod {
	uint32_t cls;
	char *name, *file; /* file NULL: none */
	/* "Class.method", made at the first lookup after a change (NULL:
	 * to make); made without its class's name, made again once known */
	char *full;
	bool class_missing;
	struct jline *lines;
	uint32_t nlines, lines_cap;
	bool sorted;
};

struct st_jsyms {
	struct jcls *cls; /* by st_event_class.index */
	uint32_t ncls;
	/* names by (pid, number): classes[], threads[]; methods[] */
	struct st_map class_ix, thread_ix, method_ix;
	char **classes, **threads;
	uint32_t nclasses, classes_cap, nthreads, threads_cap;
	struct jmethod *methods;
	uint32_t nmethods, methods_cap;
};

struct st_jsyms *st_jsyms_new(void)
{
	return calloc(1, sizeof(struct st_jsyms));
}

void st_jsyms_free(struct st_jsyms *j)
{
	if (!j)
		return;
	for (uint32_t i = 0; i < j->nclasses; i++)
		free(j->classes[i]);
	for (uint32_t i = 0; i < j->nthreads; i++)
		free(j->threads[i]);
	for (uint32_t i = 0; i < j->nmethods; i++) {
		free(j->methods[i].name);
		free(j->methods[i].file);
		free(j->methods[i].full);
		free(j->methods[i].lines);
	}
	free(j->classes);
	free(j->threads);
	free(j->methods);
	free(j->cls);
	st_map_free(&j->class_ix);
	st_map_free(&j->thread_ix);
	st_map_free(&j->method_ix);
	free(j);
}

static const struct jcls *jcls_of(struct st_jsyms *j, const struct st_event_class *c)
{
	static const struct st_meaning known[] = {
		{ "jvm:class", K_CLASS, 0, NULL },
		{ "jvm:method", K_METHOD, 0, NULL },
		{ "jvm:method_line", K_LINE, 0, NULL },
		{ "jvm:thread_start", K_THREAD, 0, NULL },
	};
	struct jcls *k = st_class_slot(&j->cls, &j->ncls, sizeof(*j->cls), c->index);

	if (!k || k->known)
		return k;
	k->known = true;
	k->kind = st_meaning_of(c->name, known, sizeof(known) / sizeof(known[0]), K_OTHER);
	k->number = st_event_class_field(c, k->kind == K_CLASS ? "class" : "method");
	k->name = st_event_class_field(c, "name");
	k->cls = st_event_class_field(c, "class");
	k->file = st_event_class_field(c, "file");
	k->method = st_event_class_field(c, "method");
	k->bci = st_event_class_field(c, "bci");
	k->line = st_event_class_field(c, "line");
	/* (a class of that name without the fields read is someone else's) */
	if ((k->kind == K_CLASS && (k->number < 0 || k->name < 0)) ||
	    (k->kind == K_METHOD && (k->number < 0 || k->cls < 0 || k->name < 0 || k->file < 0)) ||
	    (k->kind == K_LINE && (k->method < 0 || k->bci < 0 || k->line < 0)) ||
	    (k->kind == K_THREAD && k->name < 0))
		k->kind = K_OTHER;
	return k;
}

bool st_jsyms_reads(struct st_jsyms *j, const struct st_event_class *c)
{
	const struct jcls *k = jcls_of(j, c);

	return !k || k->kind != K_OTHER; /* (out of memory: st_jsyms_event says so) */
}

/* A string field's copy; NULL when out of memory. */
static char *dup_field(const struct st_value *v)
{
	return strndup(v->ptr ? (const char *)v->ptr : "", v->ptr ? v->len : 0);
}

/* Sets the name of (a, b) in names[] found through ix (a newer one
 * replaces it); 0, or -1 when out of memory. */
static int set_name(struct st_map *ix, char ***names, uint32_t *n, uint32_t *cap, uint64_t a,
		    uint64_t b, const struct st_value *v)
{
	char *s = dup_field(v);
	int64_t i = st_map_get(ix, a, b);

	if (!s)
		return -1;
	if (i >= 0) {
		free((*names)[i]);
		(*names)[i] = s;
		return 0;
	}
	if (st_grow(names, cap, *n, sizeof(**names)) < 0 || st_map_put(ix, a, b, *n) < 0) {
		free(s);
		return -1;
	}
	(*names)[(*n)++] = s;
	return 0;
}

static struct jmethod *method_of(const struct st_jsyms *j, int32_t pid, uint32_t method)
{
	int64_t i = st_map_get(&j->method_ix, (uint32_t)pid, method);

	return i >= 0 ? &j->methods[i] : NULL;
}

/* Method number m of pid, made (empty) when new; NULL when out of memory. */
static struct jmethod *method_made(struct st_jsyms *j, int32_t pid, uint32_t m)
{
	struct jmethod *jm = method_of(j, pid, m);

	if (jm)
		return jm;
	if (st_grow(&j->methods, &j->methods_cap, j->nmethods, sizeof(*j->methods)) < 0 ||
	    st_map_put(&j->method_ix, (uint32_t)pid, m, j->nmethods) < 0)
		return NULL;
	jm = &j->methods[j->nmethods++];
	memset(jm, 0, sizeof(*jm));
	return jm;
}

static int note_method(struct st_jsyms *j, const struct jcls *k, const struct st_event *ev)
{
	struct jmethod *m = method_made(j, ev->pid, (uint32_t)ev->fields[k->number].u);
	char *name, *file = NULL;

	if (!m)
		return -1;
	name = dup_field(&ev->fields[k->name]);
	if (ev->fields[k->file].len)
		file = dup_field(&ev->fields[k->file]);
	if (!name || (ev->fields[k->file].len && !file)) {
		free(name);
		free(file);
		return -1;
	}
	free(m->name);
	free(m->file);
	free(m->full);
	m->name = name;
	m->file = file;
	m->full = NULL;
	m->cls = (uint32_t)ev->fields[k->cls].u;
	return 0;
}

static int note_line(struct st_jsyms *j, const struct jcls *k, const struct st_event *ev)
{
	struct jmethod *m = method_made(j, ev->pid, (uint32_t)ev->fields[k->method].u);

	if (!m || st_grow(&m->lines, &m->lines_cap, m->nlines, sizeof(*m->lines)) < 0)
		return -1;
	m->lines[m->nlines++] = (struct jline){ (uint32_t)ev->fields[k->bci].u,
						(uint32_t)ev->fields[k->line].u };
	m->sorted = false;
	return 0;
}

int st_jsyms_event(struct st_jsyms *j, const struct st_event *ev)
{
	const struct jcls *k = jcls_of(j, ev->cls);

	if (!k)
		return -1;
	if (ev->pid < 0)
		return 0;
	switch (k->kind) {
	case K_CLASS:
		return set_name(&j->class_ix, &j->classes, &j->nclasses, &j->classes_cap,
				(uint32_t)ev->pid, ev->fields[k->number].u, &ev->fields[k->name]);
	case K_THREAD:
		return set_name(&j->thread_ix, &j->threads, &j->nthreads, &j->threads_cap,
				(uint32_t)ev->pid, (uint32_t)ev->tid, &ev->fields[k->name]);
	case K_METHOD:
		return note_method(j, k, ev);
	case K_LINE:
		return note_line(j, k, ev);
	default:
		return 0;
	}
}

const char *st_jsyms_class(const struct st_jsyms *j, int32_t pid, uint32_t cls)
{
	int64_t i = st_map_get(&j->class_ix, (uint32_t)pid, cls);

	return i >= 0 ? j->classes[i] : NULL;
}

void st_jsyms_monitor_name(const struct st_jsyms *j, int32_t pid, uint32_t cls, bool text,
			   char *buf, size_t n)
{
	const char *name = st_jsyms_class(j, pid, cls);

	if (!name)
		snprintf(buf, n, "monitor of class %" PRIu32, cls);
	else if (!text)
		snprintf(buf, n, "monitor of %s", name);
	else if (snprintf(buf, n, "monitor of ") < (int)n)
		st_esc_cat(buf, n, name);
}

const char *st_jsyms_thread(const struct st_jsyms *j, int32_t pid, int32_t tid)
{
	int64_t i = st_map_get(&j->thread_ix, (uint32_t)pid, (uint32_t)tid);

	return i >= 0 ? j->threads[i] : NULL;
}

static int by_bci(const void *a, const void *b)
{
	const struct jline *x = a, *y = b;

	return x->bci < y->bci ? -1 : x->bci > y->bci;
}

/* Makes m's name and sorts its lines, once after each change; false when
 * out of memory (its name then unknown). */
static bool made(const struct st_jsyms *j, int32_t pid, struct jmethod *m)
{
	const char *cls;
	char *full;

	if (!m->sorted) {
		/* (no table: qsort is not given a NULL array) */
		if (m->nlines)
			qsort(m->lines, m->nlines, sizeof(*m->lines), by_bci);
		m->sorted = true;
	}
	if (m->full && !m->class_missing)
		return true;
	cls = st_jsyms_class(j, pid, m->cls);
	if (m->full && !cls)
		return true;
	if (asprintf(&full, "%s.%s", cls ? cls : "?", m->name ? m->name : "?") < 0)
		return m->full != NULL;
	free(m->full);
	m->full = full;
	m->class_missing = !cls;
	return true;
}

/* The line of bytecode index bci: that of the entry with the greatest
 * start at or before it; 0 when none. */
static uint32_t line_at(const struct jmethod *m, int32_t bci)
{
	uint32_t lo = 0, hi = m->nlines;

	if (bci < 0)
		return 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->lines[mid].bci <= (uint32_t)bci)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? m->lines[lo - 1].line : 0;
}

void st_jsyms_site(struct st_jsyms *j, int32_t pid, uint64_t ip, struct st_jsite *out)
{
	struct jmethod *m;

	memset(out, 0, sizeof(*out));
	out->method_id = ST_JVM_SITE_METHOD(ip);
	out->bci = ST_JVM_SITE_BCI(ip);
	m = method_of(j, pid, out->method_id);
	if (!m || !m->name || !made(j, pid, m))
		return;
	out->method = m->full;
	out->file = m->file;
	out->line = line_at(m, out->bci);
}
