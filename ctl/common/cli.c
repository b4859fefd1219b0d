/*
 * Helpers shared by the verbs: errors, --help from the option tables,
 * option parsing, sizes, and where the preload libraries are.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "core/abi.h"
#include "ctl/common/checks.h"
#include "ctl/common/cli.h"
#include "ctl/common/escape.h"
#include "install-dirs.h"

const char *st_program = "shimtrace";

void st_err(const char *verb, const char *fmt, ...)
{
	va_list ap;
	bool v = verb && *verb;
	char *msg;
	int n;

	/* One line, whatever the arguments hold (a trace's text, a path):
	 * escaped (ctl/common/escape.h). */
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s%s%s: ", st_program, v ? " " : "", v ? verb : "");
	if (n >= 0) {
		st_esc_write(stderr, msg, (size_t)n, ST_ESC_TEXT);
		free(msg);
	} else {
		fputs("out of memory", stderr);
	}
	fputc('\n', stderr);
}

void st_verb_help(const struct st_verb *v)
{
	printf("usage: %s%s%s %s\n%s\n\noptions:\n", st_program, *v->name ? " " : "", v->name,
	       v->synopsis, v->summary);
	for (const struct st_opt *o = v->opts; o->name; o++) {
		char left[64];

		/* "--name ARG", "--name[=ARG]" */
		const char *sep = o->arg && !st_opt_arg_optional(o) ? " " : "";

		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->name, sep,
				 o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name, sep, o->arg ? o->arg : "");
		printf("  %-28s %s\n", left, o->help);
	}
}

static int opt_index;
const struct st_opt st_opt_error = { "?", '?', NULL, NULL, NULL };

int st_optind(void)
{
	return opt_index;
}

int st_opt_standard(const struct st_verb *v, const struct st_opt *o)
{
	if (o == &st_opt_error)
		return 2;
	if (st_opt_is(o, "help")) {
		st_verb_help(v);
		return 0;
	}
	return -1;
}

int st_opt_pid(const char *verb, const char *arg, int32_t *pid)
{
	char why[256];
	pid_t p;

	if (st_pid_parse(arg, &p, why, sizeof(why)) < 0) {
		st_err(verb, "--pid: %s", why);
		return -1;
	}
	*pid = p;
	return 0;
}

bool st_opt_is(const struct st_opt *o, const char *name)
{
	return o && strcmp(o->name, name) == 0;
}

const struct st_opt *st_getopt(const struct st_verb *v, int argc, char **argv,
			       bool stop_at_operand, const char **optarg_out)
{
	static const struct st_verb *cur;
	static struct option longs[64];
	static char shorts[130];
	int idx = -1, c;

	if (cur != v) {
		size_t n = 0, k = 0;

		cur = v;
		/* '+': stop at the first operand; ':': report missing arguments. */
		if (stop_at_operand)
			shorts[k++] = '+';
		shorts[k++] = ':';
		for (const struct st_opt *o = v->opts; o->name && n < 63; o++, n++) {
			longs[n].name = o->name;
			longs[n].has_arg = st_opt_arg_optional(o) ? optional_argument
					   : o->arg		   ? required_argument
								   : no_argument;
			longs[n].flag = NULL;
			longs[n].val = 256 + (int)n;
			if (o->short_name) {
				shorts[k++] = o->short_name;
				if (o->arg)
					shorts[k++] = ':';
			}
		}
		memset(&longs[n], 0, sizeof(longs[n]));
		shorts[k] = '\0';
		optind = 1;
		opterr = 0;
	}
	c = getopt_long(argc, argv, shorts, longs, &idx);
	opt_index = optind;
	*optarg_out = optarg;
	if (c == -1)
		return NULL;
	if (c >= 256)
		return &v->opts[c - 256];
	if (c == '?') {
		if (optopt && optopt < 256)
			st_err(v->name, "unknown option '-%c' (see --help)", optopt);
		else
			st_err(v->name, "unknown option '%s' (see --help)", argv[optind - 1]);
		return &st_opt_error;
	}
	if (c == ':') {
		st_err(v->name, "option '%s' needs an argument", argv[optind - 1]);
		return &st_opt_error;
	}
	for (const struct st_opt *o = v->opts; o->name; o++)
		if (o->short_name == c)
			return o;
	return &st_opt_error;
}

int st_parse_clock(const char *s, uint32_t *out)
{
	if (strcmp(s, "tsc") == 0)
		*out = ST_CLOCK_TSC;
	else if (strcmp(s, "monotonic") == 0)
		*out = ST_CLOCK_MONOTONIC;
	else
		return -1;
	return 0;
}

int64_t st_parse_size(const char *s)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (*end) {
		switch (*end) {
		case 'k': case 'K':
			shift = 10;
			break;
		case 'm': case 'M':
			shift = 20;
			break;
		case 'g': case 'G':
			shift = 30;
			break;
		default:
			return -1;
		}
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
		if (*end)
			return -1;
	}
	if (v > (unsigned long long)INT64_MAX >> shift)
		return -1;
	return (int64_t)(v << shift);
}

/* True when this executable is one of the build tree's (the CLI, or the
 * daemon, whose sessions may attach). */
static bool in_build_tree(void)
{
	static int cached = -1;
	char exe[PATH_MAX], built[PATH_MAX];

	if (cached >= 0)
		return cached;
	cached = realpath("/proc/self/exe", exe) &&
		 ((realpath(ST_BUILDDIR "/ctl/shimtrace", built) && strcmp(exe, built) == 0) ||
		  (realpath(ST_BUILDDIR "/ctl/shimtraced", built) && strcmp(exe, built) == 0));
	return cached;
}

const char *st_libdir_core(void)
{
	const char *env = getenv("SHIMTRACE_LIBDIR");

	if (env && *env)
		return env;
	return in_build_tree() ? ST_BUILDDIR "/core/.libs" : ST_LIBDIR;
}

const char *st_libdir_wrappers(void)
{
	const char *env = getenv("SHIMTRACE_LIBDIR");

	if (env && *env)
		return env;
	return in_build_tree() ? ST_BUILDDIR "/wrappers/.libs" : ST_LIBDIR;
}

mode_t st_user_umask(void)
{
	mode_t m = umask(022);

	umask(m);
	return m & 0777;
}

int st_absolute_path(const char *path, char *out, size_t n)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return snprintf(out, n, "%s", path) < (int)n ? 0 : -1;
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	return snprintf(out, n, "%s/%s", cwd, path) < (int)n ? 0 : -1;
}
