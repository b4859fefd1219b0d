/*
 * A span's call stack as a Perfetto callstack (pfstack.c), interned: each
 * address of a process a Frame (its function as the reports show the
 * site, "path_a (stacks.c:35)"; its object as a Mapping, and its offset
 * there as rel_pc; its source file and line), each distinct list of
 * frames a Callstack, bottom (outermost) frame first; each entry written
 * into the packet's InternedData the first time a span uses it, and
 * referred to by its iid after.
 */
#ifndef ST_REPORT_PFSTACK_H
#define ST_REPORT_PFSTACK_H

#include <stdint.h>

#include "ctl/report/pfintern.h"
#include "ctl/report/map.h"
#include "ctl/report/pbwrite.h"
#include "ctl/report/timeline.h"

struct st_pfstack {
	struct st_intern in;  /* names, paths, mappings, callstacks */
	struct st_map frames; /* (pid, address) -> frame iid */
	uint32_t nframes;
	uint64_t *ids; /* a callstack's frame iids, being made */
	uint32_t ids_cap;
};

/* The callstack iid of span s: its callers (s->stack) under its call
 * site (s->ev->ip), the entries it adds written into interned (the
 * fields of an InternedData); 0 when the span has no stack, or when out
 * of memory (interned->failed then). */
uint64_t st_pfstack_of(struct st_pfstack *p, struct st_tl *tl, const struct st_tl_span *s,
		       struct st_pb *interned);
void st_pfstack_free(struct st_pfstack *p);

#endif
