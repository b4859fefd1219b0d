/*
 * shimtrace report KIND [OPTIONS] [DIR]: answers from a trace (ctl/report/):
 * locks (contention, call sites, threads, waits at the end, a line on
 * potential deadlocks) and deadlocks (the lock-order cycles). DIR defaults
 * to the newest trace `record` left in the working directory.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/common/checks.h"
#include "ctl/cli/cmd_report.h"
#include "ctl/cli/filteropts.h"
#include "ctl/cli/progressopts.h"
#include "ctl/common/cli.h"
#include "ctl/report/demangle.h"
#include "ctl/report/latest.h"
#include "ctl/report/pass.h"
#include "ctl/report/report_io.h"
#include "ctl/report/report_locks.h"
#include "ctl/report/report_malloc.h"

static const char *V = "report";

/* Each report, and the events it reads: a trace without any is an error
 * that says how to get them. */
static const struct {
	const char *name;
	int (*run)(const struct st_report_opts *, FILE *, char *, size_t);
	const char *family, *how;
} kinds[] = {
	{ "locks", st_report_locks, "pthread,futex,jvm",
	  "record with --wrap pthread, the default, or --wrap jvm for Java monitors" },
	{ "deadlocks", st_report_deadlocks, "pthread,jvm",
	  "record with --wrap pthread, the default, or --wrap jvm for Java monitors" },
	{ "malloc", st_report_malloc, "malloc", "record with --wrap malloc" },
	{ "io", st_report_io, "io", "record with --wrap io" },
};

static int parse_top(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v > 1000000 || s[0] == '-')
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int st_cmd_report(const struct st_verb *v, int argc, char **argv)
{
	struct st_report_opts opts = { .top = 10, .pid = -1, .progress = ST_PROGRESS_AUTO };
	struct st_filter filter;
	const struct st_opt *o;
	const char *arg, *kind;
	char latest[PATH_MAX], err[1024] = "", what[32];
	uint32_t damaged = 0;
	int n, ret;

	st_filter_init(&filter);
	while ((o = st_getopt(v, argc, argv, false, &arg)) != NULL) {
		int std = st_opt_standard(v, o);

		if (std >= 0)
			return std;
		if (st_opt_is(o, "json")) {
			opts.json = true;
		} else if (st_opt_is(o, "sort")) {
			opts.sort = arg;
		} else if (st_opt_is(o, "top")) {
			if (parse_top(arg, &opts.top) < 0) {
				st_err(V, "--top: '%s' is not a number of rows (0 for all)", arg);
				return 2;
			}
		} else if (st_opt_is(o, "pid")) {
			if (st_opt_pid(V, arg, &opts.pid) < 0)
				return 2;
		} else if (st_opt_is(o, "stack")) {
			opts.stack = true;
		} else if (st_opt_is(o, "no-demangle")) {
			st_demangle_names = false;
		} else if (st_progress_opt(o, &opts.progress)) {
			continue;
		} else if (st_filter_opt(V, o, arg, &filter) < 0) {
			return 2;
		}
	}
	opts.filter = &filter;
	n = argc - st_optind();
	if (n < 1) {
		st_err(V, "missing KIND (locks, deadlocks, malloc or io)");
		return 2;
	}
	if (n > 2) {
		st_err(V, "one trace directory only: unexpected '%s'", argv[st_optind() + 2]);
		return 2;
	}
	kind = argv[st_optind()];
	if (n == 2) {
		opts.dir = argv[st_optind() + 1];
	} else if (st_report_latest(latest, sizeof(latest)) == 0) {
		opts.dir = latest;
	} else {
		st_err(V, "no DIR given and no trace (shimtrace-*) in the working directory");
		return 2;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(kind, kinds[i].name) != 0)
			continue;
		opts.family = kinds[i].family;
		opts.family_how = kinds[i].how;
		snprintf(what, sizeof(what), "report %s", kinds[i].name);
		opts.progress_what = what;
		opts.damaged = &damaged;
		ret = kinds[i].run(&opts, stdout, err, sizeof(err));
		if (ret)
			st_err(V, "%s", err);
		else if (fflush(stdout) != 0)
			ret = 1;
		st_filter_fini(&filter);
		/* (3: the report was made, but parts of the trace were skipped) */
		return ret == 0 && damaged ? 3 : ret;
	}
	st_err(V, "no report '%s' (locks, deadlocks, malloc or io)", kind);
	return 2;
}
