/*
 * Cycles of the lock-order graph (see lockorder.h).
 *
 * Each elementary cycle is found once, from its lowest-numbered lock: a
 * depth-first walk from each lock s through locks above s only, a lock at
 * most once on the path. The walk has a budget of steps, so that a graph
 * with very many cycles ends (and says some were left out).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/report/lockorder.h"

#define STEP_BUDGET 2000000

struct walk {
	const struct st_lockstat *ls;
	uint32_t *first, *adj; /* out-edges of lock i: adj[first[i] .. first[i+1]) */
	bool *on_path;
	uint32_t path[ST_CYCLE_LEN_MAX];
	uint32_t depth, start;
	uint64_t steps;
	struct st_cycle *out;
	int n;
	bool more;
};

/* Readers do not exclude each other: a cycle of read sides cannot
 * deadlock. */
static bool only_reads(const struct walk *w, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (w->ls->locks[w->ls->edges[w->path[i]].a].kind != ST_LK_RDLOCK)
			return false;
	return true;
}

static void dfs(struct walk *w, uint32_t node)
{
	for (uint32_t k = w->first[node]; k < w->first[node + 1] && !w->more; k++) {
		uint32_t e = w->adj[k], next = w->ls->edges[e].b;

		if (++w->steps > STEP_BUDGET) {
			w->more = true;
			return;
		}
		if (next == w->start) {
			w->path[w->depth] = e;
			if (only_reads(w, w->depth + 1))
				continue;
			if (w->n == ST_CYCLES_MAX) {
				w->more = true;
				return;
			}
			w->out[w->n].n = w->depth + 1;
			memcpy(w->out[w->n].edges, w->path, (w->depth + 1) * sizeof(uint32_t));
			w->n++;
			continue;
		}
		if (next < w->start || w->on_path[next] || w->depth + 1 >= ST_CYCLE_LEN_MAX)
			continue;
		w->path[w->depth++] = e;
		w->on_path[next] = true;
		dfs(w, next);
		w->on_path[next] = false;
		w->depth--;
	}
}

int st_lock_cycles(const struct st_lockstat *ls, struct st_cycle **out, bool *more)
{
	struct walk w = { .ls = ls };
	uint32_t n = ls->nlocks;

	*out = NULL;
	*more = false;
	w.first = calloc((size_t)n + 1, sizeof(*w.first));
	w.adj = malloc(((size_t)ls->nedges + 1) * sizeof(*w.adj));
	w.on_path = calloc((size_t)n + 1, sizeof(*w.on_path));
	w.out = malloc(ST_CYCLES_MAX * sizeof(*w.out));
	if (!w.first || !w.adj || !w.on_path || !w.out) {
		free(w.first);
		free(w.adj);
		free(w.on_path);
		free(w.out);
		return -1;
	}
	/* counting sort of the edges by their first lock */
	for (uint32_t e = 0; e < ls->nedges; e++)
		w.first[ls->edges[e].a + 1]++;
	for (uint32_t i = 0; i < n; i++)
		w.first[i + 1] += w.first[i];
	{
		uint32_t *fill = calloc((size_t)n + 1, sizeof(*fill));

		if (!fill) {
			free(w.first);
			free(w.adj);
			free(w.on_path);
			free(w.out);
			return -1;
		}
		for (uint32_t e = 0; e < ls->nedges; e++) {
			uint32_t a = ls->edges[e].a;

			w.adj[w.first[a] + fill[a]++] = e;
		}
		free(fill);
	}
	for (w.start = 0; w.start < n && !w.more; w.start++) {
		w.depth = 0;
		w.on_path[w.start] = true;
		dfs(&w, w.start);
		w.on_path[w.start] = false;
	}
	free(w.first);
	free(w.adj);
	free(w.on_path);
	*more = w.more;
	*out = w.out;
	return w.n;
}
