/*
 * Call sites: the `ip` of an event, as written by the process, is the
 * return address of the traced call, which belongs to the instruction after
 * the call and often to the next source line. Before events reach the
 * trace, the daemon replaces it with the start address of the line-table
 * row holding the call (the row containing ip - 1), when the object has
 * DWARF line information (in the file, or in a separate debug file found
 * by build-id). A reader mapping ip to a line then shows the line that
 * made the call; babeltrace2's debug-info filter, which only names a line
 * for an exact row start, shows it at all. Without line information the
 * return address is kept.
 *
 * A per-process direct-mapped cache keeps the cost per event to a lookup;
 * it is emptied when the process's objects change (dlopen, dlclose).
 * Debug information is opened once per file and kept.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/daemon/daemon.h"

#define CACHE 1024 /* entries per process */

struct entry {
	uint64_t in, out;
};

struct st_callsites {
	struct entry e[CACHE];
};

struct dbg {
	char *path;
	uint8_t build_id[64];
	uint32_t build_id_len;
	int fd;
	Dwarf *dw; /* NULL: no line information */
	struct dbg *next;
};

static struct dbg *dbgs;

static Dwarf *open_dwarf(const char *path, int *fdp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwarf *dw;

	if (fd < 0)
		return NULL;
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw) {
		close(fd);
		return NULL;
	}
	*fdp = fd;
	return dw;
}

/* The line information of object o: its own, or its separate debug file. */
static Dwarf *dwarf_of(const struct st_object *o)
{
	struct dbg *g;
	char path[ST_PATH_MAX];
	size_t n;

	for (g = dbgs; g; g = g->next)
		if (strcmp(g->path, o->path) == 0 && g->build_id_len == o->build_id_len &&
		    memcmp(g->build_id, o->build_id, o->build_id_len) == 0)
			return g->dw;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->path = strdup(o->path);
	memcpy(g->build_id, o->build_id, sizeof(g->build_id));
	g->build_id_len = o->build_id_len;
	g->fd = -1;
	g->dw = open_dwarf(o->path, &g->fd);
	if (!g->dw && o->build_id_len > 1) {
		n = (size_t)snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/",
				     o->build_id[0]);
		for (uint32_t i = 1; i < o->build_id_len && n + 3 < sizeof(path); i++)
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%02x", o->build_id[i]);
		snprintf(path + n, sizeof(path) - n, ".debug");
		g->dw = open_dwarf(path, &g->fd);
	}
	g->next = dbgs;
	dbgs = g;
	return g->dw;
}

/* The start of the row holding the call that returns to ip, or ip. */
static uint64_t refine(const struct st_proc *p, uint64_t ip)
{
	for (uint32_t i = 0; i < p->nobjs; i++) {
		const struct st_object *o = &p->objs[i];
		Dwarf_Addr row, at;
		Dwarf_Line *line;
		Dwarf_Die cu;
		Dwarf *dw;

		if (ip <= o->base || ip - o->base > o->memsz)
			continue;
		dw = dwarf_of(o);
		if (!dw)
			return ip;
		at = (o->is_pic ? ip - o->base : ip) - 1;
		if (!dwarf_addrdie(dw, at, &cu))
			return ip;
		line = dwarf_getsrc_die(&cu, at);
		/* a row far before the call is not the call's (a gap in the
		 * line table): keep the return address */
		if (!line || dwarf_lineaddr(line, &row) != 0 || row > at || at - row > 65536)
			return ip;
		return o->is_pic ? o->base + row : row;
	}
	return ip;
}

uint64_t st_callsite(struct st_proc *p, uint64_t ip)
{
	struct entry *e;

	if (!ip)
		return ip;
	if (!p->callsites) {
		p->callsites = calloc(1, sizeof(*p->callsites));
		if (!p->callsites)
			return ip;
	}
	e = &p->callsites->e[(ip ^ (ip >> 10)) % CACHE];
	if (e->in != ip) {
		e->in = ip;
		e->out = refine(p, ip);
	}
	return e->out;
}

void st_callsites_reset(struct st_proc *p)
{
	free(p->callsites);
	p->callsites = NULL;
}
