/*
 * The dynamic probes of this process (probes.c) and the event a hit
 * writes (hit.c).
 */
#ifndef ST_DYNPROBE_PROBES_H
#define ST_DYNPROBE_PROBES_H

#include <stdbool.h>
#include <stdint.h>

#include <shimtrace/tracepoint.h>

#include "dynprobe/ctl.h"
#include "dynprobe/where.h"

#define DP_PROVIDER "probe"
#define DP_MAX_PROBES ST_PROVIDER_MAX_TRACEPOINTS

enum dp_kind {
	DP_FUNCTION, /* at a function's entry: arg0..arg5, the caller */
	DP_BARE,     /* anywhere: the instruction's address */
};

struct dp_probe {
	struct st_tracepoint tp; /* probe:NAME, slot = its index */
	char name[64];
	uint32_t kind;
	uint32_t state;		 /* enum dp_state; the inspector writes it too */
	uint64_t at;		 /* the patched address */
	uint32_t len;		 /* bytes replaced */
	uint64_t tramp;		 /* its trampoline */
	uint8_t jump[DP_PATCH_MAX], orig[DP_PATCH_MAX];
};

/* The provider's state page (hit.c). */
extern struct st_provider_state dp_state __attribute__((visibility("hidden")));
/* Field lists: a function probe's, and a bare probe's (none). */
extern const struct st_field dp_fields_function[] __attribute__((visibility("hidden")));
extern const struct st_field dp_fields_bare[] __attribute__((visibility("hidden")));
/* Called by a trampoline when its tracepoint is enabled. */
void dp_hit(void *probe, uint64_t *frame) __attribute__((visibility("hidden")));

/*
 * Plans probe NAME (NULL or "-": named after the place) of kind at spec:
 * its trampoline written, its tracepoint registered, the patch in r.
 * Returns r->status. Serialised by the caller.
 */
int dp_add(uint32_t kind, const char *name, const char *spec, struct dp_reply *r)
	__attribute__((visibility("hidden")));
/* Plans the removal of probe NAME: the original bytes in r. */
int dp_remove(const char *name, struct dp_reply *r) __attribute__((visibility("hidden")));

#endif /* ST_DYNPROBE_PROBES_H */
