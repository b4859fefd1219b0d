/*
 * Look-ups in a trace description, and the time of its clocks (see
 * desc.h).
 */
#include <string.h>

#include "ctl/reader/desc.h"

const struct st_stream_class *st_tsdl_stream(const struct st_tsdl *t, uint64_t id)
{
	for (uint32_t i = 0; i < t->nstreams; i++)
		if (t->streams[i].id == id)
			return &t->streams[i];
	return NULL;
}

int st_plan_find(const struct st_plan *p, const char *name)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].name, name) == 0)
			return (int)i;
	return -1;
}

uint64_t st__cycles_ns(uint64_t freq, uint64_t cycles)
{
	double ns;

	if (freq == 1000000000u)
		return cycles;
	ns = 1e9 * (double)cycles / (double)freq;
	return ns >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)ns;
}

int64_t st_clock_ns(const struct st_clock_class *c, uint64_t cycles)
{
	uint64_t ns = c ? st__cycles_ns(c->freq, cycles) : cycles;
	int64_t base = c ? c->base_ns : 0, r;

	if (ns > INT64_MAX || __builtin_add_overflow(base, (int64_t)ns, &r))
		return INT64_MAX;
	return r;
}
