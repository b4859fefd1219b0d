/*
 * shimtrace export --format chrome|perfetto [-o FILE] [--pid PID]
 * [--time-range FROM,TO] DIR: the trace as a timeline other tools open
 * (ctl/report/export_chrome.c, export_perfetto.c). FROM and TO are
 * seconds from the trace's first event (decimals allowed; TO may be left
 * empty: the end).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/common/checks.h"
#include "ctl/cli/cmd_export.h"
#include "ctl/cli/progressopts.h"
#include "ctl/common/cli.h"
#include "ctl/report/export_chrome.h"
#include "ctl/report/export_perfetto.h"

static const char *V = "export";

/* The formats, as --format names them. */
static const struct format {
	const char *name;
	int (*write)(const struct st_export_opts *opts, FILE *out, char *err, size_t errlen);
	bool binary; /* not for a terminal */
} formats[] = {
	{ "chrome", st_export_chrome, false },
	{ "perfetto", st_export_perfetto, true },
};

/* "1.5,3" or "2," into ns; -1 on a malformed range. */
static int parse_range(const char *s, int64_t *from, int64_t *to)
{
	char *end;
	double a, b = -1; /* (no TO: to the end) */

	errno = 0;
	a = strtod(s, &end);
	/* (beyond 9e9 s, nanoseconds overflow 64 bits) */
	if (end == s || *end != ',' || errno || !(a >= 0 && a < 9e9))
		return -1;
	s = end + 1;
	if (*s) {
		b = strtod(s, &end);
		if (end == s || *end || errno || !(b >= a && b < 9e9))
			return -1;
	}
	*from = (int64_t)(a * 1e9);
	*to = b < 0 ? INT64_MAX : (int64_t)(b * 1e9);
	return 0;
}

int st_cmd_export(const struct st_verb *v, int argc, char **argv)
{
	struct st_export_opts eo = { .pid = -1, .from_ns = -1, .progress = ST_PROGRESS_AUTO };
	const char *arg, *format = NULL, *out = NULL;
	const struct format *fmt = NULL;
	const struct st_opt *o;
	char err[1024] = "";
	FILE *f = stdout;
	bool failed;
	int n, ret;

	while ((o = st_getopt(v, argc, argv, false, &arg)) != NULL) {
		int std = st_opt_standard(v, o);

		if (std >= 0)
			return std;
		if (st_progress_opt(o, &eo.progress)) {
			continue;
		} else if (st_opt_is(o, "format")) {
			format = arg;
		} else if (st_opt_is(o, "output")) {
			out = arg;
		} else if (st_opt_is(o, "pid")) {
			if (st_opt_pid(V, arg, &eo.pid) < 0)
				return 2;
		} else if (st_opt_is(o, "time-range")) {
			if (parse_range(arg, &eo.from_ns, &eo.to_ns) < 0) {
				st_err(V, "--time-range: '%s' is not FROM,TO in seconds (TO may be empty)", arg);
				return 2;
			}
		}
	}
	for (size_t i = 0; format && i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(format, formats[i].name) == 0)
			fmt = &formats[i];
	if (!fmt) {
		st_err(V, format ? "--format: no format '%s' (chrome, perfetto)"
				 : "--format%s chrome or perfetto is needed",
		       format ? format : "");
		return 2;
	}
	n = argc - st_optind();
	if (n != 1) {
		st_err(V, n ? "one trace directory only: unexpected '%s'" : "missing DIR%s",
		       n ? argv[st_optind() + 1] : "");
		return 2;
	}
	eo.dir = argv[st_optind()];
	if (fmt->binary && !out && isatty(STDOUT_FILENO)) {
		st_err(V, "--format %s writes binary: -o FILE, or a pipe", fmt->name);
		return 2;
	}
	if (out && !(f = fopen(out, "w"))) {
		st_err(V, "cannot write %s: %s", out, strerror(errno));
		return 1;
	}
	ret = fmt->write(&eo, f, err, sizeof(err));
	if (ret == 1)
		st_err(V, "%s", err);
	/* (a write that failed before the last: the stream's error flag) */
	failed = ferror(f);
	if (((f != stdout ? fclose(f) : fflush(f)) != 0 || failed) && ret != 1) {
		st_err(V, "cannot write %s: %s", out ? out : "the standard output", strerror(errno));
		ret = 1;
	}
	/* (3: written, parts of the trace skipped: the file stays) */
	if (ret == 1 && out)
		remove(out);
	return ret;
}
