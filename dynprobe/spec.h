/*
 * A probe's specification (spec.c): ADDR, SYM or SYM+OFF, each optionally
 * after LIB:, parsed; and the name a probe takes by default. Pure: the
 * command line checks what it is given with it, the library in the
 * process resolves it (where.h).
 */
#ifndef ST_DYNPROBE_SPEC_H
#define ST_DYNPROBE_SPEC_H

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

/*
 * The tracepoint name of a probe at spec when none is given: SYM, or
 * SYM_0xOFF, as a tracepoint name (letters, digits, '_'); false for an
 * address (the library names it after the function holding it).
 */
bool dp_spec_default_name(const struct dp_spec *spec, char *out, size_t n);

/* s as a tracepoint name: each other character '_', a leading digit
 * prefixed with '_', cut to n - 1 bytes. */
void dp_name_from(const char *s, char *out, size_t n);

#endif /* ST_DYNPROBE_SPEC_H */
