/*
 * The CLI's own calls to the session daemon, and the JSON values it reads
 * in their replies (see daemoncall.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/cli/daemoncall.h"
#include "ctl/common/cli.h"
#include "ctl/common/client.h"
#include "ctl/common/control.h"

/* Each error line of the daemon's in errs, as label's (its "shimtrace
 * VERB: " left out). */
static void say_errors(const char *label, char *errs)
{
	for (char *line = errs, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, "shimtrace ", 10) == 0 && strstr(line, ": "))
			line = strstr(line, ": ") + 2;
		st_err(label, "%s", line);
	}
}

int st_daemon_call(const char *label, const char *verb, const char *const *items, size_t n,
		   bool autostart, char **text, bool quiet)
{
	char *out = NULL, *errs = NULL;
	size_t outlen = 0, errlen = 0;
	FILE *o = open_memstream(&out, &outlen), *e = open_memstream(&errs, &errlen);
	int status = ST_EXIT_FAIL;

	if (o && e)
		status = st_client_call(label, verb, items, n, autostart, o, e);
	if (o)
		fclose(o);
	if (e)
		fclose(e);
	if (!quiet)
		say_errors(label, errs);
	free(errs);
	if (text)
		*text = out;
	else
		free(out);
	return status;
}

int st_json_string_at(const char *json, const char *key, char *out, size_t n)
{
	char pat[64];
	const char *p;
	size_t k = 0;

	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	p = strstr(json, pat);
	if (!p)
		return -1;
	for (p += strlen(pat); *p && *p != '"'; p++) {
		unsigned c = (unsigned char)*p;

		if (c == '\\') {
			unsigned v;

			p++;
			if (*p == 'u' && sscanf(p + 1, "%4x", &v) == 1 && v < 0x80) {
				c = v;
				p += 4;
			} else if (*p == '"' || *p == '\\' || *p == '/') {
				c = (unsigned char)*p;
			} else {
				return -1;
			}
		}
		if (k + 1 >= n)
			return -1;
		out[k++] = (char)c;
	}
	if (*p != '"')
		return -1;
	out[k] = '\0';
	return 0;
}

uint64_t st_json_number_at(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(json, pat);
	return p ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

bool st_json_true_at(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(json, pat);
	return p && strncmp(p + strlen(pat), "true", 4) == 0;
}
