/*
 * gen-man: writes a man page from its template, replacing the line
 * "@VERBS@" with every verb's synopsis, description and options taken from
 * the tables --help prints (ctl/cli/verbs.c), and "@EVENTS@" with every
 * tracepoint of the wrapper families and its fields (the catalog
 * generated from the specs, as list-events prints it), so that neither can
 * drift.
 *
 *   gen-man TEMPLATE OUT
 */
#include <stdio.h>
#include <string.h>

#include "ctl/common/catalog.h"
#include "ctl/cli/cmd_control.h"
#include "ctl/cli/cmd_events.h"
#include "ctl/cli/cmd_export.h"
#include "ctl/cli/cmd_record.h"
#include "ctl/cli/cmd_report.h"
#include "ctl/cli/cmd_top.h"
#include "ctl/cli/cmd_view.h"
#include "ctl/cli/verbs.h"
#include "ctl/common/cli.h"
#include "ctl/daemon/base/quota.h"

/* The verbs' run functions are not needed here. */
int st_cmd_record(const struct st_verb *v, int argc, char **argv)
{
	(void)v;
	(void)argc;
	(void)argv;
	return 0;
}

int st_cmd_view(const struct st_verb *v, int argc, char **argv)
{
	(void)v;
	(void)argc;
	(void)argv;
	return 0;
}

int st_cmd_control(const struct st_verb *v, int argc, char **argv)
{
	(void)v;
	(void)argc;
	(void)argv;
	return 0;
}

int st_cmd_list_events(const struct st_verb *v, int argc, char **argv)
{
	(void)v;
	(void)argc;
	(void)argv;
	return 0;
}

int st_cmd_report(const struct st_verb *v, int argc, char **argv)
{
	(void)v;
	(void)argc;
	(void)argv;
	return 0;
}

int st_cmd_export(const struct st_verb *v, int argc, char **argv)
{
	(void)v;
	(void)argc;
	(void)argv;
	return 0;
}

int st_cmd_top(const struct st_verb *v, int argc, char **argv)
{
	(void)v;
	(void)argc;
	(void)argv;
	return 0;
}

/* Text for roff: a leading dot or quote is escaped, backslashes doubled;
 * a newline starts a paragraph. */
static void text(FILE *o, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", o);
	for (; *s; s++) {
		if (*s == '\n') {
			fputs("\n.PP\n", o);
			if (s[1] == '.' || s[1] == '\'')
				fputs("\\&", o);
		} else if (*s == '\\')
			fputs("\\e", o);
		else if (*s == '-')
			fputs("\\-", o);
		else
			fputc(*s, o);
	}
}

static void options(FILE *o, const struct st_verb *v)
{
	for (const struct st_opt *opt = v->opts; opt->name; opt++) {
		fprintf(o, ".TP\n");
		if (opt->short_name)
			fprintf(o, "\\fB\\-%c\\fR, ", opt->short_name);
		fprintf(o, "\\fB\\-\\-");
		text(o, opt->name);
		fprintf(o, "\\fR");
		if (opt->arg) {
			fprintf(o, st_opt_arg_optional(opt) ? "\\fI" : " \\fI");
			text(o, opt->arg);
			fprintf(o, "\\fR");
		}
		fprintf(o, "\n");
		text(o, opt->help);
		fprintf(o, ".\n");
		if (opt->more) {
			fprintf(o, "\n");
			text(o, opt->more);
			fprintf(o, "\n");
		}
	}
}

static void verbs(FILE *o)
{
	for (const struct st_verb *v = st_verbs; v->name; v++) {
		fprintf(o, ".SS \"shimtrace %s\"\n.B shimtrace %s\n", v->name, v->name);
		text(o, v->synopsis);
		fprintf(o, "\n.PP\n");
		text(o, v->description);
		fprintf(o, "\n");
		options(o, v);
	}
}

/* The catalog, one tagged paragraph per tracepoint: its fields. */
static void events(FILE *o)
{
	for (unsigned i = 0; i < st_catalog_count; i++) {
		fprintf(o, ".TP\n.B ");
		text(o, st_catalog[i].provider);
		fprintf(o, ":");
		text(o, st_catalog[i].name);
		fprintf(o, "\n");
		text(o, st_catalog[i].fields);
		fprintf(o, "\n");
	}
}

/* The quotas of shimtraced --quota, with their defaults. */
static void quotas(FILE *o)
{
	for (int k = 0; k < ST_Q_COUNT; k++) {
		const struct st_quota_def *q = &st_quota_defs[k];

		fprintf(o, ".TP\n\\fB");
		text(o, q->name);
		if (q->def)
			fprintf(o, "\\fR (default %llu%s%s)\n", (unsigned long long)q->def,
				*q->unit ? " " : "", q->unit);
		else
			fprintf(o, "\\fR (%s)\n", q->unit);
		text(o, q->what);
		fprintf(o, ".\n");
	}
}

int main(int argc, char **argv)
{
	char line[4096];
	FILE *in, *out;

	if (argc != 3) {
		fprintf(stderr, "usage: gen-man TEMPLATE OUT\n");
		return 2;
	}
	in = fopen(argv[1], "r");
	out = fopen(argv[2], "w");
	if (!in || !out) {
		perror("gen-man");
		return 1;
	}
	while (fgets(line, sizeof(line), in)) {
		if (strcmp(line, "@VERBS@\n") == 0)
			verbs(out);
		else if (strcmp(line, "@DAEMON_OPTIONS@\n") == 0)
			options(out, &st_daemon_verb);
		else if (strcmp(line, "@EVENTS@\n") == 0)
			events(out);
		else if (strcmp(line, "@QUOTAS@\n") == 0)
			quotas(out);
		else
			fputs(line, out);
	}
	fclose(in);
	if (fclose(out) != 0) {
		perror("gen-man");
		remove(argv[2]);
		return 1;
	}
	return 0;
}
