/*
 * Following a trace while it is written (see follow.h): the resume point
 * of each stream file, saved when a followed reader closes and found by
 * the next open; what is left to read; and the limit of an open, up to
 * which every stream holds all its events.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl/reader/follow.h"
#include "ctl/reader/reader.h"
#include "ctl/reader/reader_state.h"
#include "ctl/reader/stream.h"

struct st_follow *st_follow_new(void)
{
	struct st_follow *f = calloc(1, sizeof(*f));

	if (f)
		f->limit = INT64_MIN;
	return f;
}

void st_follow_free(struct st_follow *f)
{
	if (!f)
		return;
	for (uint32_t i = 0; i < f->n; i++)
		free(f->v[i].file);
	free(f->v);
	free(f);
}

/* The index of file in f->v, or where it would go (*found false). */
static uint32_t search(const struct st_follow *f, const char *file, bool *found)
{
	uint32_t lo = 0, hi = f->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(f->v[mid].file, file);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

struct st__resume *st__follow_find(struct st_follow *f, const char *file)
{
	bool found;
	uint32_t i = search(f, file, &found);

	return found ? &f->v[i] : NULL;
}

struct st__resume *st__follow_add(struct st_follow *f, const char *file)
{
	bool found;
	uint32_t i = search(f, file, &found);
	char *name;

	if (found)
		return &f->v[i];
	if (f->n == f->cap) {
		uint32_t cap = f->cap ? 2 * f->cap : 16;
		struct st__resume *v = realloc(f->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		f->v = v;
		f->cap = cap;
	}
	name = strdup(file);
	if (!name)
		return NULL;
	memmove(&f->v[i + 1], &f->v[i], (f->n - i) * sizeof(*f->v));
	f->n++;
	f->v[i] = (struct st__resume){ .file = name, .serial = f->serials++ };
	return &f->v[i];
}

void st__follow_save(struct st_follow *f, struct st_reader *r)
{
	/* (the item given last is consumed: its stream goes past it) */
	if (r->pending && r->nheap) {
		r->pending = false;
		if (st__stream_advance(r->heap[0]) <= 0)
			r->heap[0]->head = 0;
	}
	f->behind = 0;
	for (uint32_t i = 0; i < r->nstreams; i++) {
		const struct st__stream *s = &r->streams[i];
		struct st__resume *to = st__follow_find(f, s->file);
		uint64_t at;

		if (!to)
			continue;
		st__stream_pause(s, to);
		at = to->inside ? to->next + to->pos : to->next;
		if (!to->dead && s->size > at)
			f->behind += s->size - at;
	}
	f->late += r->late;
	if (r->given && (!f->given || r->given_max > f->given_max)) {
		f->given = true;
		f->given_max = r->given_max;
	}
	if (r->limited)
		f->limit = r->limit;
}

static int64_t now_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void st_reader_follow_limit(struct st_reader *r, int64_t lag_ns, int64_t quiet_ns)
{
	int64_t limit = now_ns(CLOCK_REALTIME) - lag_ns, mono = now_ns(CLOCK_MONOTONIC);

	if (!r->follow || r->finished)
		return;
	for (uint32_t i = 0; i < r->nstreams; i++) {
		const struct st__stream *s = &r->streams[i];
		const struct st__resume *from = st__follow_find(r->follow, s->file);
		int64_t tail;

		/* (a stream that has not grown for a while has no event the
		 * writer has not written: it bounds nothing) */
		if (!s->info.cls || !from || mono - from->grew_mono >= quiet_ns)
			continue;
		/* (its next packet may begin at its last time, its lost
		 * notice dated there too: before it) */
		tail = st_clock_ns(s->info.cls->clock, s->tail) - 1;
		if (tail < limit)
			limit = tail;
	}
	if (r->follow->limit != INT64_MIN && limit < r->follow->limit)
		limit = r->follow->limit;
	r->limited = true;
	r->limit = limit;
}

uint64_t st_follow_behind(const struct st_follow *f)
{
	return f->behind;
}

uint64_t st_follow_late(const struct st_follow *f)
{
	return f->late;
}

int64_t st_follow_limit(const struct st_follow *f)
{
	return f->limit;
}
