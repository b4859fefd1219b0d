/*
 * shimtrace top [OPTIONS] [DIR|SESSION]: a live top of contended locks.
 * It follows a trace while it is written (a directory, a session's, or a
 * session of its own that -e starts and the end destroys), and shows,
 * every --delay seconds, the locks threads waited for in the last
 * interval (ctl/report/locktop.h), on the terminal (topscreen.c: keys sort
 * and filter, q leaves) or, with --batch N, as N refreshes of text or
 * JSON for scripts.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl/cli/cmd_top.h"
#include "ctl/cli/topscreen.h"
#include "ctl/cli/topsession.h"
#include "ctl/common/catalog.h"
#include "ctl/common/checks.h"
#include "ctl/common/cli.h"
#include "ctl/common/escape.h"
#include "ctl/report/locktop.h"
#include "ctl/report/topview.h"

static const char *V = "top";

/* The shown interval ends this far behind now: the daemon writes every
 * buffer once a second (st_reader_follow_limit). */
#define LAG_NS 2000000000ll
#define QUIET_NS 3000000000ll
#define MAX_PATTERNS 64

struct topopts {
	const char *target, *output, *uid, *pid_arg;
	const char *patterns[MAX_PATTERNS];
	uint32_t npatterns, batch, top;
	int32_t pid;
	double delay;
	bool json;
	struct st_top_view view;
	char filter[128];
};

static volatile sig_atomic_t stopped;

static void on_signal(int sig)
{
	(void)sig;
	stopped = 1;
}

static int number(const char *opt, const char *arg, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || arg[0] == '-' || v < lo || v > hi) {
		st_err(V, "--%s: '%s' is not a number from %u to %u", opt, arg, lo, hi);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int pattern(struct topopts *o, const char *arg)
{
	char why[256];

	if (o->npatterns == MAX_PATTERNS) {
		st_err(V, "-e: at most %d patterns", MAX_PATTERNS);
		return -1;
	}
	if (st_pattern_check(arg, why, sizeof(why)) < 0) {
		st_err(V, "pattern '%s': %s", arg, why);
		return -1;
	}
	if (st_catalog_typo(arg, why, sizeof(why))) {
		st_err(V, "%s", why);
		return -1;
	}
	o->patterns[o->npatterns++] = arg;
	return 0;
}

/* One option: 0, or -1 after a message. */
static int option(struct topopts *o, const struct st_opt *opt, const char *arg)
{
	char *end;
	int s;

	if (st_opt_is(opt, "delay")) {
		o->delay = strtod(arg, &end);
		if (!*arg || *end || !(o->delay >= 0.1 && o->delay <= 3600)) {
			st_err(V, "--delay: '%s' is not a number of seconds from 0.1 to 3600", arg);
			return -1;
		}
	} else if (st_opt_is(opt, "batch")) {
		return number("batch", arg, 1, 1000000, &o->batch);
	} else if (st_opt_is(opt, "top")) {
		return number("top", arg, 0, 1000000, &o->top);
	} else if (st_opt_is(opt, "sort")) {
		s = st_top_sort_parse(arg);
		if (s < 0) {
			st_err(V, "--sort: no field '%s' (wait, contended, acquired, hold)", arg);
			return -1;
		}
		o->view.sort = (enum st_top_sort)s;
	} else if (st_opt_is(opt, "cumulative")) {
		o->view.run = true;
	} else if (st_opt_is(opt, "json")) {
		o->json = true;
	} else if (st_opt_is(opt, "filter")) {
		snprintf(o->filter, sizeof(o->filter), "%s", arg);
	} else if (st_opt_is(opt, "pid")) {
		o->pid_arg = arg;
		return st_opt_pid(V, arg, &o->pid);
	} else if (st_opt_is(opt, "uid")) {
		uint32_t uid;

		o->uid = arg;
		return number("uid", arg, 0, 0xfffffffe, &uid);
	} else if (st_opt_is(opt, "event")) {
		return pattern(o, arg);
	} else if (st_opt_is(opt, "output")) {
		o->output = arg;
	}
	return 0;
}

/* The options and the operand: 0, or the exit status. */
static int parse(const struct st_verb *v, int argc, char **argv, struct topopts *o)
{
	const struct st_opt *opt;
	const char *arg;
	int n;

	while ((opt = st_getopt(v, argc, argv, false, &arg)) != NULL) {
		int std = st_opt_standard(v, opt);

		if (std >= 0)
			return std ? std : -1;
		if (option(o, opt, arg) < 0)
			return 2;
	}
	n = argc - st_optind();
	if (n > 1) {
		st_err(V, "one trace directory or session only: unexpected '%s'",
		       argv[st_optind() + 1]);
		return 2;
	}
	o->target = n ? argv[st_optind()] : NULL;
	if (o->npatterns && o->target) {
		st_err(V, "-e starts a session of its own: no DIR or SESSION with it ('%s')", o->target);
		return 2;
	}
	if (!o->npatterns && !o->target) {
		st_err(V, "what to follow: a trace directory, a session, or -e PATTERN for a session "
			  "of top's own");
		return 2;
	}
	if (!o->npatterns && (o->uid || o->output)) {
		st_err(V, "--%s goes with -e (a session of top's own)", o->uid ? "uid" : "output");
		return 2;
	}
	if (o->json && !o->batch) {
		st_err(V, "--json goes with --batch N");
		return 2;
	}
	return 0;
}

/* Where the trace is: in s->dir for a session (its own with -e), or the
 * directory given. 0, or the exit status after a message. */
static int target(struct topopts *o, struct st_topsession *s, const char **dir)
{
	struct st_topsession_rules rules = { o->patterns, o->npatterns, o->pid_arg, o->uid,
					     o->output };
	struct stat st;
	int ret;

	memset(s, 0, sizeof(*s));
	if (o->npatterns) {
		if (st_topsession_start(s, &rules) < 0)
			return 1;
		*dir = s->dir;
		return 0;
	}
	/* (a session before a directory of its name: what was named is a
	 * session's, unless it is a path) */
	ret = strchr(o->target, '/') ? 1 : st_topsession_find(s, o->target);
	if (ret < 0)
		return 1;
	if (ret == 0) {
		*dir = s->dir;
		return 0;
	}
	memset(s, 0, sizeof(*s));
	if (stat(o->target, &st) == 0 && S_ISDIR(st.st_mode)) {
		*dir = o->target;
		return 0;
	}
	st_err(V, "%s: no trace directory, and no session of that name", o->target);
	return 1;
}

/* The session's line among the notes, into buf. */
static const char *session_note(struct st_topsession *s, char *buf, size_t n)
{
	char dir[ST_ESC_SIZE(256)];

	if (!s->name[0])
		return NULL;
	st_topsession_poll(s);
	if (s->gone)
		snprintf(buf, n, "session %s is gone (its trace: %s)", s->name,
			 st_esc(dir, sizeof(dir), s->dir));
	else
		snprintf(buf, n, "session %s: %s; the session lost %llu events so far%s", s->name,
			 s->state, (unsigned long long)s->lost,
			 s->own ? " (top's own: destroyed at the end)" : "");
	return buf;
}

static void print_line(void *arg, enum st_top_line kind, const char *text)
{
	(void)kind;
	fprintf(arg, "%s\n", text);
}

static int sleep_s(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (!stopped && nanosleep(&t, &t) < 0 && errno == EINTR)
		;
	return stopped ? -1 : 0;
}

/* --batch N: N refreshes on standard output, fewer if the trace ends. */
static int batch(struct topopts *o, struct st_top *t, struct st_topsession *s)
{
	struct st_top_how how = { LAG_NS, QUIET_NS, 0 };
	char err[1024], note[512];

	for (uint32_t i = 0; i < o->batch && !stopped; i++) {
		if (i && sleep_s(o->delay) < 0)
			break;
		if (st_top_read(t, &how, err, sizeof(err)) < 0) {
			st_err(V, "%s", err);
			return 1;
		}
		o->view.extra = session_note(s, note, sizeof(note));
		if (o->json) {
			st_top_json(t, &o->view, o->top, stdout);
		} else {
			if (i)
				putchar('\n');
			st_top_render(t, &o->view, o->top, print_line, stdout);
		}
		if (fflush(stdout) != 0)
			return 1;
		if (st_top_next(t) < 0) {
			st_err(V, "out of memory");
			return 1;
		}
		if (t->state.finished)
			break;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A key: the view changes; false for q. */
static bool key(struct topopts *o, int c, double *next)
{
	switch (c) {
	case 'q':
	case 'Q':
		return false;
	case 't':
		o->view.run = !o->view.run;
		break;
	case 'w':
		o->view.sort = ST_TOP_WAIT;
		break;
	case 'c':
		o->view.sort = ST_TOP_CONTENDED;
		break;
	case 'a':
		o->view.sort = ST_TOP_ACQUIRED;
		break;
	case 'h':
		o->view.sort = ST_TOP_HOLD;
		break;
	case '/':
		st_topscreen_prompt("filter (locks whose line holds it; Enter: apply, empty: all): ",
				    o->filter, sizeof(o->filter));
		break;
	case ' ':
		*next = 0;
		break;
	default:
		break;
	}
	return true;
}

/* On the terminal until q, a signal, or an error. */
static int screen(struct topopts *o, struct st_top *t, struct st_topsession *s)
{
	struct st_top_how how = { LAG_NS, QUIET_NS, o->delay * 0.8 };
	char err[1024] = "", note[512];
	double next = 0;
	int ret = 0;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		st_err(V, "not on a terminal: --batch N prints refreshes as text");
		return 1;
	}
	if (st_topscreen_open() < 0)
		return 1;
	while (!stopped) {
		int c;

		if (now_s() >= next) {
			if (st_top_read(t, &how, err, sizeof(err)) < 0) {
				ret = 1;
				break;
			}
			o->view.extra = session_note(s, note, sizeof(note));
			st_topscreen_draw(t, &o->view);
			if (st_top_next(t) < 0) {
				snprintf(err, sizeof(err), "out of memory");
				ret = 1;
				break;
			}
			next = now_s() + o->delay;
		}
		c = st_topscreen_key((int)((next - now_s()) * 1000) + 1);
		if (!c)
			continue;
		if (!key(o, c, &next))
			break;
		st_topscreen_draw(t, &o->view);
	}
	st_topscreen_close();
	if (ret)
		st_err(V, "%s", err);
	return ret;
}

int st_cmd_top(const struct st_verb *v, int argc, char **argv)
{
	struct topopts o = { .pid = -1, .delay = 1.0 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct st_topsession s;
	struct st_top t;
	const char *dir = NULL;
	char err[1024], what[ST_ESC_SIZE(256) + 80], esc[ST_ESC_SIZE(256)];
	int ret = parse(v, argc, argv, &o);

	if (ret)
		return ret < 0 ? 0 : ret;
	o.view.filter = o.filter;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* (a reader gone, as head -n: an error to end on, its session ended) */
	signal(SIGPIPE, SIG_IGN);
	ret = target(&o, &s, &dir);
	if (ret)
		return ret;
	if (s.name[0])
		snprintf(what, sizeof(what), "session %s (%s)", s.name, st_esc(esc, sizeof(esc), dir));
	else
		st_esc(what, sizeof(what), dir);
	o.view.what = what;
	if (st_top_init(&t, dir, o.pid, err, sizeof(err)) < 0) {
		st_err(V, "%s", err);
		ret = 1;
	} else {
		ret = o.batch ? batch(&o, &t, &s) : screen(&o, &t, &s);
		if (!ret && t.state.damaged)
			ret = 3;
	}
	st_top_fini(&t);
	if (s.own && o.output)
		st_err(V, "the trace is kept in %s", s.dir);
	st_topsession_end(&s);
	return ret;
}
