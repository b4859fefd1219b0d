/*
 * The entry points of the metadata reader (see tsdl.h): the text checked
 * for what is not TSDL, parsed, planned, and errors placed at a line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl/reader/arena.h"
#include "ctl/reader/errmsg.h"
#include "ctl/reader/tsdl.h"
#include "ctl/reader/tsdl_plan.h"
#include "ctl/reader/tsdl_syntax.h"

static unsigned line_of(const char *text, size_t len, size_t off)
{
	unsigned line = 1;

	for (size_t i = 0; i < off && i < len; i++)
		line += text[i] == '\n';
	return line;
}

int st_tsdl_parse(struct st_tsdl *t, const char *text, size_t len, char *err, size_t errlen)
{
	static const char sig[] = "/* CTF 1.";
	struct st__tsdl_err e = { 0 };
	struct st__ast ast;
	size_t start = 0;

	memset(t, 0, sizeof(*t));
	if (len >= 4 && (unsigned char)text[0] == 0x57 && (unsigned char)text[1] == 0x1d &&
	    (unsigned char)text[2] == 0xd1 && (unsigned char)text[3] == 0x75) {
		snprintf(err, errlen, "packetized metadata is not supported (at offset 0)");
		return -ENOTSUP;
	}
	if (len >= 4 && (unsigned char)text[0] == 0x75 && (unsigned char)text[1] == 0xd1 &&
	    (unsigned char)text[2] == 0x1d && (unsigned char)text[3] == 0x57) {
		snprintf(err, errlen, "packetized big-endian metadata is not supported (at offset 0)");
		return -ENOTSUP;
	}
	{
		const char *nul = memchr(text, '\0', len);

		if (nul) {
			snprintf(err, errlen, "line %u: NUL byte in the metadata text (at offset %zu)",
				 line_of(text, len, (size_t)(nul - text)), (size_t)(nul - text));
			return -EINVAL;
		}
	}
	while (start < len && (text[start] == ' ' || text[start] == '\t' || text[start] == '\n' ||
			       text[start] == '\r'))
		start++;
	if (len - start < sizeof(sig) - 1 || memcmp(text + start, sig, sizeof(sig) - 1) != 0) {
		snprintf(err, errlen,
			 "not CTF metadata: the text does not start with /* CTF 1.8 */ (at offset %zu)",
			 start);
		return -EINVAL;
	}
	if (!st__tsdl_syntax(text, len, &t->arena, &ast, &e) || !st__tsdl_plan(&ast, t, &e)) {
		if (!e.failed)
			st__tsdl_fail(&e, 0, "invalid metadata");
		st__one_line(e.msg);
		snprintf(err, errlen, "line %u: %s (at offset %zu)", line_of(text, len, e.off), e.msg,
			 e.off);
		st__arena_free(&t->arena);
		memset(t, 0, sizeof(*t));
		return -EINVAL;
	}
	return 0;
}

void st_tsdl_free(struct st_tsdl *t)
{
	st__arena_free(&t->arena);
	memset(t, 0, sizeof(*t));
}
