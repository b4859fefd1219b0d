/*
 * shimtrace list-events [PATTERN...]: the tracepoints of the wrapper
 * families, each with its fields' types and names, from the catalog the
 * generator makes of the specs (wrappers/catalog-gen.c). No daemon is
 * asked: this is what `record -e` and `enable` can select before any
 * process runs. An application's own tracepoints are not known here; `list`
 * shows those of running processes, and so does `list-events --pid PID`
 * (the daemon's list of that process: its providers, and its dynamic
 * probes with how they were planted).
 *
 *   io:read            S32 fd, SIZE count, S64 result, S32 err, U64 dur_ns
 */
#include <stdio.h>
#include <string.h>

#include "ctl/common/catalog.h"
#include "ctl/common/checks.h"
#include "ctl/cli/cmd_events.h"
#include "ctl/common/cli.h"
#include "ctl/common/client.h"

static const char *V = "list-events";

static bool selected(const struct st_catalog_entry *e, char **patterns, int n)
{
	if (n == 0)
		return true;
	for (int i = 0; i < n; i++)
		if (st_catalog_match(e, patterns[i]))
			return true;
	return false;
}

/* The catalog's "TYPE name, TYPE name" as JSON objects. */
static void json_fields(const char *fields)
{
	const char *p = fields;
	bool first = true;

	fputs("[", stdout);
	while (*p) {
		size_t tlen = strcspn(p, " "), nlen;

		if (!p[tlen])
			break;
		nlen = strcspn(p + tlen + 1, ",");
		printf("%s{\"name\": \"%.*s\", \"type\": \"%.*s\"}", first ? "" : ", ", (int)nlen,
		       p + tlen + 1, (int)tlen, p);
		first = false;
		p += tlen + 1 + nlen;
		p += strspn(p, ", ");
	}
	fputs("]", stdout);
}

static void print(char **patterns, int n, bool json)
{
	int width = 0;
	bool first = true;

	for (unsigned i = 0; i < st_catalog_count; i++) {
		int w = (int)(strlen(st_catalog[i].provider) + 1 + strlen(st_catalog[i].name));

		if (selected(&st_catalog[i], patterns, n) && w > width)
			width = w;
	}
	if (json)
		fputs("[", stdout);
	for (unsigned i = 0; i < st_catalog_count; i++) {
		const struct st_catalog_entry *e = &st_catalog[i];
		char full[160];

		if (!selected(e, patterns, n))
			continue;
		snprintf(full, sizeof(full), "%s:%s", e->provider, e->name);
		if (json) {
			printf("%s\n  {\"name\": \"%s\", \"family\": \"%s\", "
			       "\"library\": \"libshimtrace-%s.so\", \"fields\": ",
			       first ? "" : ",", full, e->provider, e->provider);
			json_fields(e->fields);
			fputs("}", stdout);
		} else {
			printf("%-*s  %s\n", width, full, e->fields);
		}
		first = false;
	}
	if (json)
		fputs("\n]\n", stdout);
}

int st_cmd_list_events(const struct st_verb *v, int argc, char **argv)
{
	const struct st_opt *o;
	const char *arg;
	bool json = false;
	const char *pid = NULL;
	char **patterns;
	int n;

	while ((o = st_getopt(v, argc, argv, false, &arg)) != NULL) {
		int std = st_opt_standard(v, o);

		if (std >= 0)
			return std;
		if (st_opt_is(o, "json"))
			json = true;
		else if (st_opt_is(o, "pid"))
			pid = arg;
	}
	patterns = argv + st_optind();
	n = argc - st_optind();
	if (pid) {
		char item[64];
		const char *items[2] = { item, "json=1" };
		int32_t p;

		if (n) {
			st_err(V, "--pid lists a process's tracepoints: no PATTERN with it");
			return 2;
		}
		if (st_opt_pid(V, pid, &p) < 0)
			return 2;
		snprintf(item, sizeof(item), "pid=%d", (int)p);
		return st_client_request("list", items, json ? 2 : 1, false);
	}
	for (int i = 0; i < n; i++) {
		char why[256];
		bool any = false;

		if (st_pattern_check(patterns[i], why, sizeof(why)) < 0) {
			st_err(V, "pattern '%s': %s", patterns[i], why);
			return 2;
		}
		for (unsigned k = 0; k < st_catalog_count && !any; k++)
			any = selected(&st_catalog[k], patterns + i, 1);
		if (!any) {
			st_err(V, "pattern '%s' matches no tracepoint of the wrapper families",
			       patterns[i]);
			return 1;
		}
	}
	print(patterns, n, json);
	return fflush(stdout) == 0 ? 0 : 1;
}
