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
 * The line tables come from the owner's lines inspector (linecache.c),
 * asked for the first time an event's caller falls in the object: the
 * daemon never opens or parses an object file itself. A per-process
 * direct-mapped cache keeps the cost per event to a lookup; it is emptied
 * when the process's objects change (dlopen, dlclose), and an answer is
 * cached only once the object's table is here (or known to be none).
 *
 * Owns: each process's call-site cache.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: objects.
 */
#include <stdlib.h>

#include "core/abi.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/callsite.h"
#include "ctl/daemon/objects/linecache.h"
#include "ctl/daemon/objects/maps.h"
#include "jvm/jvm-tp.h"

#define CACHE 1024 /* entries per process */

struct entry {
	uint64_t in, out;
};

struct st_callsites {
	uint64_t version; /* of the objects it was filled for (maps.c) */
	struct entry e[CACHE];
};

/* The start of the row holding the call that returns to ip, or ip;
 * *final: the answer holds for good; *unsettled: the table is on its way. */
static uint64_t refine(struct st_daemon *d, struct st_proc *p, uint64_t ip, bool *final,
		       bool *unsettled)
{
	*final = true;
	for (uint32_t i = 0; i < p->objects.nobjs; i++) {
		const struct st_object *o = &p->objects.objs[i];
		uint64_t at, row;

		if (ip <= o->base || ip - o->base > o->memsz)
			continue;
		if (st_lines_need(d, o->lines))
			st_objects_want_refresh(p); /* (done between two drains) */
		*final = !o->lines || st_lines_state(o->lines) == ST_LINES_READY ||
			 st_lines_state(o->lines) == ST_LINES_NONE;
		*unsettled |= !st_lines_settled(o->lines);
		at = (o->is_pic ? ip - o->base : ip) - 1;
		row = st_lines_find(o->lines, at);
		/* a row far before the call is not the call's (a gap in the
		 * line table): keep the return address */
		if (row == UINT64_MAX || row > at || at - row > 65536)
			return ip;
		return o->is_pic ? o->base + row : row;
	}
	return ip;
}

uint64_t st_callsite(struct st_daemon *d, struct st_proc *p, uint64_t ip, bool *unsettled)
{
	struct entry *e;

	if (!ip)
		return ip;
	/* a Java site: no code address, the method and the bytecode index
	 * as the agent wrote them (core/abi.h) */
	_Static_assert(ST_ABI_IP_JAVA == ST_JVM_RECORD_BIT &&
			       1ull << ST_ABI_IP_JAVA_FROM == ST_JVM_SITE_BIT,
		       "the agent's Java sites and the ring's agree");
	if (ip & ST_ABI_IP_JAVA)
		return (ip & ~ST_ABI_IP_JAVA) | 1ull << ST_ABI_IP_JAVA_FROM;
	/* (the cache holds the answers for the objects as they were) */
	if (p->callsites && p->callsites->version != p->objects.version)
		st_callsites_reset(p);
	if (!p->callsites) {
		p->callsites = calloc(1, sizeof(*p->callsites));
		if (!p->callsites)
			return ip;
		p->callsites->version = p->objects.version;
	}
	e = &p->callsites->e[(ip ^ (ip >> 10)) % CACHE];
	if (e->in != ip) {
		bool final;
		uint64_t out = refine(d, p, ip, &final, unsettled);

		if (!final)
			return out;
		e->in = ip;
		e->out = out;
	}
	return e->out;
}

void st_callsites_reset(struct st_proc *p)
{
	free(p->callsites);
	p->callsites = NULL;
}
