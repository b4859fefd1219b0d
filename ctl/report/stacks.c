/*
 * Call stacks of a trace's events, interned and printed (see stacks.h).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/report/grow.h"
#include "ctl/report/site.h"
#include "ctl/report/stacks.h"
#include "shimtrace/tracepoint.h"

void st_stacks_fini(struct st_stacks *t)
{
	free(t->v);
	free(t->frames);
	st_map_free(&t->ix);
	memset(t, 0, sizeof(*t));
}

int st_stack_field(const struct st_event_class *c)
{
	int k = st_event_class_field(c, "stack");

	return k >= 0 && c->fields.v[k].kind == ST_FIELD_BYTES ? k : -1;
}

uint32_t st_stack_frames(const struct st_value *f, uint64_t *pcs, uint32_t max)
{
	uint32_t n = 0;

	for (uint64_t b = 0; b + 8 <= f->len && n < max; b += 8)
		memcpy(&pcs[n++], (const uint8_t *)f->ptr + b, 8);
	return n;
}

static uint64_t frames_hash(const uint64_t *f, uint32_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ f[i]) * 1099511628211ull;
	return h;
}

/* Frames f (n), interned: 1 + their index; -1 when out of memory. */
static int64_t intern(struct st_stacks *t, const uint64_t *f, uint32_t n)
{
	uint64_t h = frames_hash(f, n);

	for (uint64_t probe = 0;; probe++) {
		int64_t i = st_map_get(&t->ix, h + probe, n);

		if (i >= 0 && memcmp(&t->frames[t->v[i].first], f, n * sizeof(*f)) == 0)
			return i + 1;
		if (i >= 0)
			continue; /* (another stack with that hash) */
		if (st_grow(&t->v, &t->cap, t->n, sizeof(*t->v)) < 0 ||
		    st_map_put(&t->ix, h + probe, n, t->n) < 0)
			return -1;
		for (uint32_t k = 0; k < n; k++) {
			if (st_grow(&t->frames, &t->frames_cap, t->nframes, sizeof(*t->frames)) < 0)
				return -1;
			t->frames[t->nframes++] = f[k];
		}
		t->v[t->n] = (struct st_stack){ .first = t->nframes - n, .n = n };
		return ++t->n;
	}
}

int64_t st_stacks_of_field(struct st_stacks *t, uint64_t ip, const struct st_value *f)
{
	uint64_t frames[1 + ST_STACK_MAX];
	uint32_t n = 1 + st_stack_frames(f, frames + 1, ST_STACK_MAX);

	frames[0] = ip;
	return n > 1 ? intern(t, frames, n) : 0;
}

/* Whether a frame's site is in our own libraries (the wrappers' start
 * trampoline, in a stack recorded before they were left out). */
static bool ours(const struct st_site *s)
{
	return s->object && strncmp(s->object, "libshimtrace", 12) == 0;
}

/* Calls fn for each caller of stack id that is the program's: its
 * resolved site and its address (one byte back). */
static void each_caller(const struct st_stacks *t, struct st_syms *syms, int32_t pid, uint32_t id,
			void (*fn)(const struct st_site *, uint64_t, void *), void *arg)
{
	const struct st_stack *s;

	if (!id || id > t->n)
		return;
	s = &t->v[id - 1];
	for (uint32_t i = 1; i < s->n; i++) {
		uint64_t pc = t->frames[s->first + i] - 1;
		struct st_site site;

		st_syms_resolve(syms, pid, pc, &site);
		if (!ours(&site))
			fn(&site, pc, arg);
	}
}

struct text_arg {
	int indent;
	FILE *o;
};

static void caller_text(const struct st_site *site, uint64_t pc, void *arg)
{
	struct text_arg *a = arg;
	char text[512];

	(void)pc;
	st_site_format(site, text, sizeof(text));
	fprintf(a->o, "%*s<- %s\n", a->indent, "", text);
}

void st_stacks_text(const struct st_stacks *t, struct st_syms *syms, int32_t pid, uint32_t id,
		    int indent, FILE *o)
{
	struct text_arg a = { indent, o };

	each_caller(t, syms, pid, id, caller_text, &a);
}

struct key_arg {
	char *buf;
	size_t n, len;
};

static void caller_key(const struct st_site *site, uint64_t pc, void *arg)
{
	struct key_arg *a = arg;
	char text[512];
	int k;

	(void)pc;
	st_site_format(site, text, sizeof(text));
	k = snprintf(a->buf + a->len, a->n - a->len, "%s%s", a->len ? "\n" : "", text);
	if (k > 0)
		a->len += (size_t)k < a->n - a->len ? (size_t)k : a->n - a->len - 1;
}

void st_stacks_key(const struct st_stacks *t, struct st_syms *syms, int32_t pid, uint32_t id,
		   char *buf, size_t n)
{
	struct key_arg a = { buf, n, 0 };

	buf[0] = '\0';
	each_caller(t, syms, pid, id, caller_key, &a);
}

struct json_arg {
	struct st_syms *syms;
	int32_t pid;
	bool first;
	FILE *o;
};

static void caller_json(const struct st_site *site, uint64_t pc, void *arg)
{
	struct json_arg *a = arg;

	(void)site;
	fputs(a->first ? "" : ", ", a->o);
	a->first = false;
	st_site_json(a->syms, a->pid, pc, a->o);
}

void st_stacks_json(const struct st_stacks *t, struct st_syms *syms, int32_t pid, uint32_t id,
		    FILE *o)
{
	struct json_arg a = { syms, pid, true, o };

	fputs(", \"stack\": [", o);
	each_caller(t, syms, pid, id, caller_json, &a);
	fputs("]", o);
}
