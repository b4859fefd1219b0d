/*
 * The options that choose which events view and the reports show (see
 * filteropts.h).
 */
#include "ctl/cli/filteropts.h"

int st_filter_opt(const char *verb, const struct st_opt *o, const char *arg, struct st_filter *f)
{
	char err[512];

	if (st_opt_is(o, "tid"))
		return st_opt_pid(verb, arg, &f->tid) < 0 ? -1 : 1;
	if (st_opt_is(o, "event")) {
		if (st_filter_pattern(f, arg, err, sizeof(err)) < 0) {
			st_err(verb, "%s", err);
			return -1;
		}
		return 1;
	}
	if (st_opt_is(o, "time-range")) {
		if (st_filter_range(f, arg, err, sizeof(err)) < 0) {
			st_err(verb, "%s", err);
			return -1;
		}
		return 1;
	}
	return 0;
}
