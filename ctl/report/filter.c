/*
 * Which events a command shows (see filter.h).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl/common/checks.h"
#include "ctl/report/filter.h"

void st_filter_init(struct st_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->pid = f->tid = -1;
}

void st_filter_fini(struct st_filter *f)
{
	free(f->cls);
	f->cls = NULL;
	f->ncls = 0;
}

bool st_filter_any(const struct st_filter *f)
{
	return f->pid >= 0 || f->tid >= 0 || f->npatterns || f->range;
}

/* Seconds with an optional unit (s, ms, us, ns): ns, or -1. */
static int64_t duration_ns(const char *s)
{
	char *end;
	double v;

	v = strtod(s, &end);
	if (end == s || !(v >= 0 && v < 9e9))
		return -1;
	if (!*end || strcmp(end, "s") == 0)
		return (int64_t)(v * 1e9);
	if (strcmp(end, "ms") == 0)
		return (int64_t)(v * 1e6);
	if (strcmp(end, "us") == 0)
		return (int64_t)(v * 1e3);
	if (strcmp(end, "ns") == 0)
		return (int64_t)v;
	return -1;
}

/* ".123" after seconds: ns, or -1. */
static int64_t fraction_ns(const char *s)
{
	int64_t ns = 0, scale = 100000000;

	if (!*s)
		return 0;
	if (*s++ != '.' || !*s)
		return -1;
	for (; *s; s++, scale /= 10) {
		if (*s < '0' || *s > '9')
			return -1;
		ns += (*s - '0') * scale;
	}
	return ns;
}

/* One end of a range, in e; false when it is none of the forms. */
static bool parse_end(const char *s, struct st_filter_end *e)
{
	struct tm tm;
	const char *rest;
	int64_t frac;

	if (!*s) {
		e->kind = ST_END_NONE;
		return true;
	}
	memset(&tm, 0, sizeof(tm));
	tm.tm_isdst = -1;
	if ((rest = strptime(s, "%Y-%m-%d %H:%M:%S", &tm)) != NULL ||
	    (rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) != NULL) {
		time_t t = mktime(&tm);

		if (t == (time_t)-1 || (frac = fraction_ns(rest)) < 0)
			return false;
		e->kind = ST_END_ABS;
		e->ns = (int64_t)t * 1000000000 + frac;
		return true;
	}
	memset(&tm, 0, sizeof(tm));
	if (strchr(s, ':') && (rest = strptime(s, "%H:%M:%S", &tm)) != NULL) {
		if ((frac = fraction_ns(rest)) < 0)
			return false;
		e->kind = ST_END_DAY;
		e->ns = ((int64_t)tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec) * 1000000000 + frac;
		return true;
	}
	e->ns = duration_ns(s[0] == '+' ? s + 1 : s);
	e->kind = ST_END_REL;
	return e->ns >= 0;
}

int st_filter_range(struct st_filter *f, const char *arg, char *err, size_t errlen)
{
	const char *comma = strchr(arg, ',');
	char from[96];
	size_t n = comma ? (size_t)(comma - arg) : 0;

	if (!comma || n >= sizeof(from) || strchr(comma + 1, ',')) {
		snprintf(err, errlen, "--time-range: '%s' is not FROM,TO", arg);
		return -1;
	}
	memcpy(from, arg, n);
	from[n] = '\0';
	if (!parse_end(from, &f->from) || !parse_end(comma + 1, &f->to)) {
		snprintf(err, errlen,
			 "--time-range: '%s' is not FROM,TO (each +SECONDS after the trace's start, "
			 "YYYY-MM-DD HH:MM:SS[.frac] or HH:MM:SS[.frac], or empty)",
			 arg);
		return -1;
	}
	if (f->from.kind == f->to.kind && f->from.kind != ST_END_NONE && f->to.ns < f->from.ns) {
		snprintf(err, errlen, "--time-range: '%s' ends before it begins", arg);
		return -1;
	}
	f->range = true;
	return 0;
}

int st_filter_pattern(struct st_filter *f, const char *pattern, char *err, size_t errlen)
{
	char why[256];

	if (st_pattern_check(pattern, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "pattern '%s': %s", pattern, why);
		return -1;
	}
	if (f->npatterns == ST_FILTER_PATTERNS) {
		snprintf(err, errlen, "-e: at most %d patterns", ST_FILTER_PATTERNS);
		return -1;
	}
	f->patterns[f->npatterns++] = pattern;
	return 0;
}

/* An end as wall-clock ns, given the first event's time. */
static int64_t end_ns(const struct st_filter_end *e, int64_t first_ns, int64_t none)
{
	time_t t;
	struct tm tm;

	switch (e->kind) {
	case ST_END_REL:
		return first_ns + e->ns;
	case ST_END_ABS:
		return e->ns;
	case ST_END_DAY:
		/* (local midnight of the first event's day) */
		t = (time_t)(first_ns / 1000000000);
		localtime_r(&t, &tm);
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_isdst = -1;
		return (int64_t)mktime(&tm) * 1000000000 + e->ns;
	default:
		return none;
	}
}

bool st_filter_event(struct st_filter *f, const struct st_event *ev, int64_t first_ns)
{
	uint32_t i = ev->cls->index;

	if ((f->pid >= 0 && ev->pid != f->pid) || (f->tid >= 0 && ev->tid != f->tid))
		return false;
	if (f->range) {
		if (!f->resolved) {
			f->lo = end_ns(&f->from, first_ns, INT64_MIN);
			f->hi = end_ns(&f->to, first_ns, INT64_MAX);
			f->resolved = true;
		}
		if (ev->ns < f->lo || ev->ns > f->hi)
			return false;
	}
	if (!f->npatterns)
		return true;
	if (i >= f->ncls) {
		uint32_t n = i + 64;
		uint8_t *v = realloc(f->cls, n);

		if (!v)
			return false;
		memset(v + f->ncls, 0, n - f->ncls);
		f->cls = v;
		f->ncls = n;
	}
	if (!f->cls[i]) {
		f->cls[i] = 1;
		for (uint32_t k = 0; k < f->npatterns; k++)
			if (fnmatch(f->patterns[k], ev->cls->name, 0) == 0)
				f->cls[i] = 2;
	}
	return f->cls[i] == 2;
}
