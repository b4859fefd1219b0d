/*
 * Where a probe goes (where.c): its specification parsed (ADDR, SYM,
 * SYM+OFF, each optionally after LIB:), and resolved in the calling
 * process against the symbol tables of its executable and libraries.
 */
#ifndef ST_DYNPROBE_WHERE_H
#define ST_DYNPROBE_WHERE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DP_SPEC_MAX 256

/*
 * A parsed specification. Numbers are octal (0NNN), decimal or
 * hexadecimal (0xNNN), as C writes them. ADDR alone is an address in the
 * process; LIB:ADDR an address of LIB's file (as objdump shows it).
 */
struct dp_spec {
	char lib[DP_SPEC_MAX]; /* "" for any object */
	char sym[DP_SPEC_MAX]; /* "" for an address */
	uint64_t off;	       /* SYM+OFF, or the address */
};

/* Parses s; 0, or -EINVAL with the reason in why. */
int dp_spec_parse(const char *s, struct dp_spec *out, char *why, size_t n);

/* A resolved place: the function holding it, and the object. */
struct dp_where {
	uint64_t fn, fn_size; /* the function (its symbol's address, size) */
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
