/*
 * Which processes a gap in the trace touches (see gapscope.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ctl/report/gapscope.h"

int st_gapscope_event(struct st_gapscope *g, const struct st_event *ev)
{
	uint32_t i;

	if (!ev->stream)
		return 0;
	i = ev->stream->serial;
	if (i >= g->n) {
		uint32_t n = i + 16;
		int32_t *v = realloc(g->pid, n * sizeof(*v));

		if (!v)
			return -1;
		memset(v + g->n, 0, (n - g->n) * sizeof(*v));
		g->pid = v;
		g->n = n;
	}
	if (g->pid[i] == 0)
		g->pid[i] = ev->pid > 0 ? ev->pid : -1;
	else if (g->pid[i] != ev->pid)
		g->pid[i] = -1;
	return 0;
}

int32_t st_gapscope_pid(const struct st_gapscope *g, const struct st_lost *gap)
{
	uint32_t i = gap->stream ? gap->stream->serial : UINT32_MAX;
	int32_t seen = i < g->n ? g->pid[i] : 0;

	if (gap->stream && strncmp(gap->stream->file, "uid", 3) == 0)
		return -1; /* a per-user buffer */
	if (seen < 0 || (seen > 0 && gap->pid > 0 && gap->pid != seen))
		return -1;
	if (seen > 0)
		return seen;
	return gap->pid > 0 ? gap->pid : -1;
}

void st_gapscope_free(struct st_gapscope *g)
{
	free(g->pid);
	g->pid = NULL;
	g->n = 0;
}
