/*
 * A span's call stack as a Perfetto callstack (see pfstack.h).
 *
 * Every frame has a mapping: Perfetto's trace processor drops a frame
 * whose mapping_id names no interned Mapping. A mapping is known
 * by its object's name only (the reports' sites give no more), one for
 * every process: its frames' rel_pc are file offsets, the same in each.
 */
#include <stdlib.h>
#include <string.h>

#include "ctl/report/grow.h"
#include "ctl/report/pass.h"
#include "ctl/report/pfstack.h"
#include "ctl/report/pfproto.h"
#include "ctl/report/symbols.h"

/* The kinds of values interned, each numbered from 1. */
enum { K_FUNCTION, K_MAPPING_PATH, K_MAPPING, K_SOURCE, K_CALLSTACK };

/* The mapping of object (its base name). */
static uint64_t mapping_iid(struct st_pfstack *p, const char *object, struct st_pb *in)
{
	uint64_t path = st_intern_string(&p->in, K_MAPPING_PATH, object, ST_PF_IN_MAPPING_PATHS, in);
	bool fresh;
	uint64_t iid = st_intern(&p->in, K_MAPPING, object, strlen(object), &fresh);
	size_t m;

	if (fresh) {
		m = st_pb_begin(in, ST_PF_IN_MAPPINGS);
		st_pb_varint(in, ST_PF_MAPPING_IID, iid);
		st_pb_varint(in, ST_PF_MAPPING_PATHS, path);
		st_pb_end(in, m);
	}
	return path && iid ? iid : 0;
}

/* The frame of address ip (the call itself) of process pid. */
static uint64_t frame_iid(struct st_pfstack *p, struct st_tl *tl, int32_t pid, uint64_t ip,
			  struct st_pb *in)
{
	int64_t have = st_map_get(&p->frames, (uint64_t)(uint32_t)pid, ip);
	const char *text = st_tl_site(tl, pid, ip);
	uint64_t function, mapping, source = 0;
	struct st_site site;
	size_t m;

	if (have >= 0)
		return (uint64_t)have;
	st_syms_resolve(st_tl_pass(tl)->syms, pid, ip, &site);
	function = text ? st_intern_string(&p->in, K_FUNCTION, text, ST_PF_IN_FUNCTION_NAMES, in) : 0;
	/* (an address no object holds: an object of its own, at 0) */
	mapping = mapping_iid(p, site.object ? site.object : "[unknown]", in);
	if (site.file)
		source = st_intern_string(&p->in, K_SOURCE, site.file, ST_PF_IN_SOURCE_PATHS, in);
	if (!function || !mapping || (site.file && !source) ||
	    st_map_put(&p->frames, (uint64_t)(uint32_t)pid, ip, p->nframes + 1) < 0) {
		in->failed = true;
		return 0;
	}
	m = st_pb_begin(in, ST_PF_IN_FRAMES);
	st_pb_varint(in, ST_PF_FRAME_IID, ++p->nframes);
	st_pb_varint(in, ST_PF_FRAME_FUNCTION, function);
	st_pb_varint(in, ST_PF_FRAME_MAPPING, mapping);
	st_pb_varint(in, ST_PF_FRAME_REL_PC, site.object ? site.offset : ip);
	if (source) {
		st_pb_varint(in, ST_PF_FRAME_SOURCE, source);
		st_pb_varint(in, ST_PF_FRAME_LINE, site.line);
	}
	st_pb_end(in, m);
	return p->nframes;
}

uint64_t st_pfstack_of(struct st_pfstack *p, struct st_tl *tl, const struct st_tl_span *s,
		       struct st_pb *in)
{
	uint32_t n = 0;
	bool fresh;
	uint64_t iid;
	size_t m;

	if (!s->nstack || in->failed)
		return 0;
	if (st_grow(&p->ids, &p->ids_cap, s->nstack, sizeof(*p->ids)) < 0) {
		in->failed = true;
		return 0;
	}
	/* outermost first; a return address is in its call one byte back;
	 * the call site itself last, as the reports show it */
	for (uint32_t f = s->nstack; f-- > 0;)
		p->ids[n++] = frame_iid(p, tl, s->ev->pid, s->stack[f] - 1, in);
	if (s->ev->ip)
		p->ids[n++] = frame_iid(p, tl, s->ev->pid, s->ev->ip, in);
	iid = st_intern(&p->in, K_CALLSTACK, p->ids, n * sizeof(*p->ids), &fresh);
	if (!iid || in->failed) {
		in->failed = true;
		return 0;
	}
	if (fresh) {
		m = st_pb_begin(in, ST_PF_IN_CALLSTACKS);
		st_pb_varint(in, ST_PF_CALLSTACK_IID, iid);
		for (uint32_t f = 0; f < n; f++)
			st_pb_varint(in, ST_PF_CALLSTACK_FRAMES, p->ids[f]);
		st_pb_end(in, m);
	}
	return iid;
}

void st_pfstack_free(struct st_pfstack *p)
{
	st_intern_free(&p->in);
	st_map_free(&p->frames);
	free(p->ids);
}
