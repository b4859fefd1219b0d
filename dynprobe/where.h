/*
 * Where a probe goes (where.c): its specification (spec.h) resolved in the
 * calling process against the symbol tables of its executable and
 * libraries.
 */
#ifndef ST_DYNPROBE_WHERE_H
#define ST_DYNPROBE_WHERE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dynprobe/spec.h"

#define DP_MAX_PARTS 8

/* A resolved place: the function holding it, and the object. */
struct dp_where {
	uint64_t fn, fn_size; /* the function (its symbol's address, size) */
	/* the parts of it the compiler placed apart, SYM.cold, SYM.part.N...
	 * (functions of the same object named SYM.*): their branches may
	 * come back anywhere into it */
	uint64_t part[DP_MAX_PARTS], part_size[DP_MAX_PARTS];
	uint32_t nparts;
	uint64_t at;	      /* the address */
	char sym[DP_SPEC_MAX];
	char obj[DP_SPEC_MAX]; /* the object's file name */
};

/*
 * Resolves spec in this process: a symbol of the executable first, then
 * of the libraries in load order (of LIB only when given: the object
 * whose file name is LIB or starts with LIB then '.' or '-'); an address
 * must lie in a function of some object's symbol table. 0, or -ENOENT /
 * -EINVAL with the reason in why.
 */
int dp_where(const struct dp_spec *spec, struct dp_where *w, char *why, size_t n);

#endif /* ST_DYNPROBE_WHERE_H */
