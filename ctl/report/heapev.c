/*
 * What a malloc-family event does to the heap (see heapev.h).
 */
#include <stddef.h>

#include "ctl/report/heapev.h"
#include "ctl/report/meaning.h"
#include "ctl/report/stacks.h"
#include "wrappers/meanings-gen.h"

/* What the malloc family's events mean (its spec's means=; no kind). */
enum { A_NONE = ST_HEAP_NONE, A_ALLOC = ST_HEAP_ALLOC, A_REALLOC = ST_HEAP_REALLOC,
       A_FREE = ST_HEAP_FREE, K_NONE = 0 };
#define MEANING(name, what, kind, field) { name, A_##what, K_##kind, field },
static const struct st_meaning meanings[] = { ST_MALLOC_MEANINGS(MEANING) };
#undef MEANING

void st_heap_cls_init(struct st_heap_cls *k, const struct st_event_class *c)
{
	k->known = true;
	k->op = (enum st_heap_op)st_meaning_of(c->name, meanings,
					       sizeof(meanings) / sizeof(meanings[0]), A_NONE);
	if (k->op == ST_HEAP_NONE)
		return;
	k->size = st_event_class_field(c, "size");
	k->nmemb = st_event_class_field(c, "nmemb");
	k->ptr = st_event_class_field(c, "ptr");
	k->old = st_event_class_field(c, "old");
	k->result = st_event_class_field(c, "result");
	k->stack = st_stack_field(c);
	/* the fields each action reads, or the class is not ours */
	if (k->ptr < 0 || (k->op != ST_HEAP_FREE && k->size < 0) ||
	    (k->op == ST_HEAP_REALLOC && k->old < 0))
		k->op = ST_HEAP_NONE;
}

void st_heap_change_of(const struct st_heap_cls *k, const struct st_event *ev,
		       struct st_heap_change *out)
{
	const struct st_value *f = ev->fields;

	out->op = k->op;
	out->ptr = f[k->ptr].u;
	out->size = 0;
	out->old = k->op == ST_HEAP_REALLOC ? f[k->old].u : 0;
	out->stack = k->stack >= 0 ? &f[k->stack] : NULL;
	if (k->size >= 0) {
		out->size = f[k->size].u;
		if (k->nmemb >= 0 && __builtin_mul_overflow(out->size, f[k->nmemb].u, &out->size))
			out->size = UINT64_MAX;
	}
	out->failed = (k->op == ST_HEAP_ALLOC && (!out->ptr || (k->result >= 0 && f[k->result].i != 0))) ||
		      (k->op == ST_HEAP_REALLOC && !out->ptr && !(out->size == 0 && out->old));
}
