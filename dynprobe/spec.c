/*
 * Parsing a probe's specification, as the RFC "Dynamic instrumentation
 * support in UST" writes it (addresses and offsets in octal, decimal or
 * hexadecimal), with LIB: to choose the object. Shared by the command
 * line (checked before anything runs) and the library in the process.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynprobe/spec.h"

/* A number as C writes it, the whole of s. */
static int number(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

int dp_spec_parse(const char *s, struct dp_spec *out, char *why, size_t n)
{
	const char *colon = strrchr(s, ':'), *rest = colon ? colon + 1 : s, *plus;
	size_t len;

	memset(out, 0, sizeof(out[0]));
	if (strlen(s) >= DP_SPEC_MAX) {
		snprintf(why, n, "too long");
		return -EINVAL;
	}
	if (colon) {
		if (colon == s) {
			snprintf(why, n, "nothing before ':' (LIB:SYM)");
			return -EINVAL;
		}
		memcpy(out->lib, s, (size_t)(colon - s));
	}
	if (!*rest) {
		snprintf(why, n, "nothing to probe: ADDR, SYM or SYM+OFF");
		return -EINVAL;
	}
	if (*rest >= '0' && *rest <= '9') {
		if (number(rest, &out->off) < 0) {
			snprintf(why, n, "'%s' is not an address (octal 0NNN, decimal or "
				 "hexadecimal 0xNNN)", rest);
			return -EINVAL;
		}
		return 0;
	}
	plus = strchr(rest, '+');
	len = plus ? (size_t)(plus - rest) : strlen(rest);
	for (size_t i = 0; i < len; i++) {
		char c = rest[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' ||
		      c == '$' || c == '@' || (i && c >= '0' && c <= '9'))) {
			snprintf(why, n, "'%.*s' is not a symbol name", (int)len, rest);
			return -EINVAL;
		}
	}
	if (!len) {
		snprintf(why, n, "no symbol before '+'");
		return -EINVAL;
	}
	memcpy(out->sym, rest, len);
	if (plus && number(plus + 1, &out->off) < 0) {
		snprintf(why, n, "'%s' is not an offset (octal 0NNN, decimal or hexadecimal 0xNNN)",
			 plus + 1);
		return -EINVAL;
	}
	return 0;
}

void dp_name_from(const char *s, char *out, size_t n)
{
	size_t k = 0;

	if (*s >= '0' && *s <= '9' && k + 1 < n)
		out[k++] = '_';
	for (; *s && k + 1 < n; s++) {
		char c = *s;

		out[k++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9')) ? c : '_';
	}
	out[k] = '\0';
}

bool dp_spec_default_name(const struct dp_spec *spec, char *out, size_t n)
{
	char tmp[DP_SPEC_MAX + 32];

	if (!spec->sym[0])
		return false;
	if (spec->off)
		snprintf(tmp, sizeof(tmp), "%s_0x%" PRIx64, spec->sym, spec->off);
	else
		snprintf(tmp, sizeof(tmp), "%s", spec->sym);
	dp_name_from(tmp, out, n);
	return true;
}
