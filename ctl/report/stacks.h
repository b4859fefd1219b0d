/*
 * The call stacks of a trace's events (stacks.c), for the reports: the
 * stack an event's `stack` field carries (return addresses, 8 bytes
 * each: record --stack), under the event's call site, interned (the same
 * frames are one stack, known by a number from 1), and printed as the
 * callers of the site, a return address resolved one byte back (in its
 * call). Frames in shimtrace's own libraries are left out.
 */
#ifndef ST_REPORT_STACKS_H
#define ST_REPORT_STACKS_H

#include <stdint.h>
#include <stdio.h>

#include "ctl/reader/reader.h"
#include "ctl/report/map.h"
#include "ctl/report/symbols.h"

/* frames[first, first + n) of its table: the call site's ip first. */
struct st_stack {
	uint32_t first, n;
};

struct st_stacks {
	struct st_stack *v;
	uint32_t n, cap;
	uint64_t *frames;
	uint32_t nframes, frames_cap;
	struct st_map ix; /* (hash of the frames + probe, count) -> v[] */
};

void st_stacks_fini(struct st_stacks *t);

/* The index of class c's call stack field (a byte sequence named
 * `stack`), or -1 when it has none. */
int st_stack_field(const struct st_event_class *c);
/* The return addresses field f holds (8 bytes each), at most max of them,
 * into pcs: how many. */
uint32_t st_stack_frames(const struct st_value *f, uint64_t *pcs, uint32_t max);

/* The stack field f (a byte sequence) of an event at call site ip,
 * interned: its number; 0 when it has no frame; -1 when out of memory. */
int64_t st_stacks_of_field(struct st_stacks *t, uint64_t ip, const struct st_value *f);

/* Stack number id's callers as lines "<- function (file:line)" indented
 * by indent, in process pid; nothing for 0. */
void st_stacks_text(const struct st_stacks *t, struct st_syms *syms, int32_t pid, uint32_t id,
		    int indent, FILE *o);
/* Stack number id's callers as one string, the lines above joined by
 * '\n' (cut at n - 1 bytes): stacks that print the same are equal. */
void st_stacks_key(const struct st_stacks *t, struct st_syms *syms, int32_t pid, uint32_t id,
		   char *buf, size_t n);
/* The same as `, "stack": [SITE...]` (sites as st_site_json writes them). */
void st_stacks_json(const struct st_stacks *t, struct st_syms *syms, int32_t pid, uint32_t id,
		    FILE *o);

#endif
