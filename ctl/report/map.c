/*
 * Pair-keyed hash map (see map.h). Grown twice as big at 3/4 full.
 */
#include <stdlib.h>

#include "ctl/report/map.h"

static uint32_t hash(uint64_t a, uint64_t b)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xbf58476d1ce4e5b9ull);

	h ^= h >> 29;
	h *= 0x94d049bb133111ebull;
	return (uint32_t)(h ^ (h >> 32));
}

int64_t st_map_get(const struct st_map *m, uint64_t a, uint64_t b)
{
	if (!m->size)
		return -1;
	for (uint32_t i = hash(a, b) & (m->size - 1);; i = (i + 1) & (m->size - 1)) {
		const struct st_map_slot *s = &m->v[i];

		if (!s->used)
			return -1;
		if (s->a == a && s->b == b)
			return s->value;
	}
}

static void place(struct st_map_slot *v, uint32_t size, const struct st_map_slot *s)
{
	uint32_t i = hash(s->a, s->b) & (size - 1);

	while (v[i].used)
		i = (i + 1) & (size - 1);
	v[i] = *s;
}

int st_map_put(struct st_map *m, uint64_t a, uint64_t b, uint32_t value)
{
	struct st_map_slot s = { .a = a, .b = b, .value = value, .used = true };

	if (m->size) {
		for (uint32_t i = hash(a, b) & (m->size - 1); m->v[i].used; i = (i + 1) & (m->size - 1))
			if (m->v[i].a == a && m->v[i].b == b) {
				m->v[i].value = value;
				return 0;
			}
	}
	if ((uint64_t)(m->n + 1) * 4 > (uint64_t)m->size * 3) {
		uint32_t size = m->size ? m->size * 2 : 1024;
		struct st_map_slot *v = calloc(size, sizeof(*v));

		if (!v)
			return -1;
		for (uint32_t i = 0; i < m->size; i++)
			if (m->v[i].used)
				place(v, size, &m->v[i]);
		free(m->v);
		m->v = v;
		m->size = size;
	}
	place(m->v, m->size, &s);
	m->n++;
	return 0;
}

int64_t st_map_del(struct st_map *m, uint64_t a, uint64_t b)
{
	uint32_t mask = m->size - 1, i, j;
	int64_t value;

	if (!m->size)
		return -1;
	for (i = hash(a, b) & mask;; i = (i + 1) & mask) {
		if (!m->v[i].used)
			return -1;
		if (m->v[i].a == a && m->v[i].b == b)
			break;
	}
	value = m->v[i].value;
	/* backward shift: pull later entries of the run into the hole when
	 * their home is at or before it */
	for (j = (i + 1) & mask; m->v[j].used; j = (j + 1) & mask) {
		uint32_t home = hash(m->v[j].a, m->v[j].b) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->v[i] = m->v[j];
			i = j;
		}
	}
	m->v[i].used = false;
	m->n--;
	return value;
}

void st_map_free(struct st_map *m)
{
	free(m->v);
	m->v = NULL;
	m->size = m->n = 0;
}
