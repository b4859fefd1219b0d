/*
 * Interning, for a Perfetto trace (see pfintern.h). A value is found by its kind and a 64-bit hash
 * of its bytes; values whose hashes meet take the next hash values (hash
 * + 1, + 2...), each compared byte for byte, so that a collision costs a
 * probe, never a wrong number.
 */
#include <stdlib.h>
#include <string.h>

#include "ctl/report/grow.h"
#include "ctl/report/pfintern.h"
#include "ctl/report/pfproto.h"

/* FNV-1a, 64 bits. */
static uint64_t hash(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

uint64_t st_intern(struct st_intern *t, uint32_t kind, const void *p, size_t n, bool *fresh)
{
	uint64_t h = hash(p, n);
	struct st_interned *e;
	int64_t i;

	*fresh = false;
	for (; (i = st_map_get(&t->ix, kind, h)) >= 0; h++) {
		e = &t->v[i];
		if (e->len == n && memcmp(e->bytes, p, n) == 0)
			return e->number;
	}
	if (st_grow(&t->v, &t->cap, t->n, sizeof(*t->v)) < 0)
		return 0;
	e = &t->v[t->n];
	e->bytes = malloc(n ? n : 1);
	if (!e->bytes)
		return 0;
	if (n)
		memcpy(e->bytes, p, n);
	e->len = n;
	if (st_map_put(&t->ix, kind, h, t->n) < 0) {
		free(e->bytes);
		return 0;
	}
	t->n++;
	e->number = ++t->last[kind];
	*fresh = true;
	return e->number;
}

uint64_t st_intern_string(struct st_intern *t, uint32_t kind, const char *s, uint32_t field,
			  struct st_pb *in)
{
	bool fresh;
	uint64_t iid = st_intern(t, kind, s, strlen(s), &fresh);
	size_t m;

	if (!iid) {
		in->failed = true;
	} else if (fresh) {
		m = st_pb_begin(in, field);
		st_pb_varint(in, ST_PF_ENTRY_IID, iid);
		st_pb_string(in, ST_PF_ENTRY_NAME, s);
		st_pb_end(in, m);
	}
	return iid;
}

void st_intern_free(struct st_intern *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->v[i].bytes);
	free(t->v);
	st_map_free(&t->ix);
	memset(t, 0, sizeof(*t));
}
