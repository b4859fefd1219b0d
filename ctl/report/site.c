/*
 * A call site as a report prints it (see site.h).
 */
#include <inttypes.h>

#include "ctl/common/escape.h"
#include "ctl/report/site.h"
#include "ctl/report/symbols.h"

void st_site_text(struct st_syms *syms, int32_t pid, uint64_t ip, char *buf, size_t n)
{
	struct st_site s;

	st_syms_resolve(syms, pid, ip, &s);
	st_site_format(&s, buf, n);
}

/* (a string or null) */
static void json_opt(FILE *o, const char *key, const char *s)
{
	fprintf(o, ", \"%s\": ", key);
	st_json_write_or_null(o, s);
}

void st_site_json(struct st_syms *syms, int32_t pid, uint64_t ip, FILE *o)
{
	struct st_site s;
	char text[512];

	st_syms_resolve(syms, pid, ip, &s);
	st_site_format(&s, text, sizeof(text));
	fprintf(o, "{\"text\": ");
	st_json_write(o, text);
	json_opt(o, "function", s.function);
	json_opt(o, "file", s.file);
	fprintf(o, ", \"line\": %" PRIu32, s.line);
	json_opt(o, "object", s.object);
	fprintf(o, ", \"offset\": %" PRIu64 ", \"ip\": %" PRIu64, s.offset, s.ip);
	if (s.java)
		fprintf(o, ", \"java\": {\"method\": %" PRIu32 ", \"bci\": %" PRId32 "}", s.method,
			s.bci);
	fputs("}", o);
}
