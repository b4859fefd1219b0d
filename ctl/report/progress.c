/*
 * The progress line of a long pass over a trace (progress.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl/common/checks.h"
#include "ctl/reader/reader.h"
#include "ctl/report/progress.h"

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void st_progress_begin(struct st_progress *p, enum st_progress_mode mode, const char *what,
		       const struct st_reader *r)
{
	/* Test hook: SHIMTRACE_TEST_PROGRESS=N looks every N events, and
	 * shows from the start with no pause between updates, so that a
	 * small trace gives a known sequence of lines whatever the machine's
	 * speed (tests/integration/progress.test). */
	const char *test = getenv("SHIMTRACE_TEST_PROGRESS");
	long long every = test ? atoll(test) : 0;

	memset(p, 0, sizeof(*p));
	p->next = UINT64_MAX;
	p->percent = -1;
	p->tty = isatty(STDERR_FILENO);
	if (mode == ST_PROGRESS_OFF || (mode == ST_PROGRESS_AUTO && !p->tty))
		return;
	p->what = what;
	p->total = st_reader_stream_bytes(r);
	p->every = ST_PROGRESS_EVERY;
	p->after_ns = 1000000000;	/* (a pass shorter than that needs none) */
	p->interval_ns = 250000000;	/* (a few a second: a line people can read) */
	if (every > 0) {
		p->every = (uint64_t)every;
		p->after_ns = p->interval_ns = 0;
	}
	p->next = p->every;
	p->start_ns = now_ns();
}

/* The line, at events read and bytes read. */
static void show(struct st_progress *p, int percent, uint64_t events, uint64_t bytes)
{
	static const char *const unit[] = { "", "k", "M", "G" };
	char line[160], n[32], read[32], total[32];
	double e = (double)events;
	int u = 0, len;

	while (e >= 999.95 && u < 3) {
		e /= 1000;
		u++;
	}
	snprintf(n, sizeof(n), u ? "%.1f%s" : "%.0f%s", e, unit[u]);
	st_size_approx(bytes, read, sizeof(read));
	st_size_approx(p->total, total, sizeof(total));
	len = snprintf(line, sizeof(line), "shimtrace %s: %d%% (%s events, %s of %s read)", p->what,
		       percent, n, read, total);
	if (len >= (int)sizeof(line))
		len = (int)sizeof(line) - 1;
	if (p->tty) {
		/* (spaces over what a longer line left) */
		fprintf(stderr, "\r%s%*s", line, p->shown > len ? p->shown - len : 0, "");
		if (len > p->shown)
			p->shown = len;
	} else {
		fprintf(stderr, "%s\n", line);
	}
	fflush(stderr);
	p->percent = percent;
}

/* Percent of total in bytes, rounded down: 100 only once all is read. */
static int percent_of(uint64_t bytes, uint64_t total)
{
	return total ? (int)(bytes * 100 / total) : 100;
}

void st__progress_look(struct st_progress *p, uint64_t events, const struct st_reader *r)
{
	int64_t now = now_ns();
	uint64_t bytes;
	int percent;

	p->next += p->every;
	if (now - p->start_ns < p->after_ns ||
	    (p->percent >= 0 && now - p->last_ns < p->interval_ns))
		return;
	bytes = st_reader_bytes_read(r);
	/* (the reader reads ahead of the events it gives: every byte may be
	 * read with events still to come; 100 is said at the end only) */
	percent = percent_of(bytes, p->total);
	if (percent > 99)
		percent = 99;
	/* (a line each: only when it says something new; a log of a long
	 * pass gets 100 lines at most) */
	if (!p->tty && percent <= p->percent)
		return;
	p->last_ns = now;
	show(p, percent, events, bytes);
}

void st_progress_end(struct st_progress *p, uint64_t events, const struct st_reader *r,
		     bool whole)
{
	uint64_t bytes;

	if (p->percent < 0)
		return; /* (nothing shown) */
	if (p->tty) {
		fprintf(stderr, "\r%*s\r", p->shown, "");
		fflush(stderr);
	} else if (whole && p->percent < 100) {
		bytes = st_reader_bytes_read(r);
		show(p, percent_of(bytes, p->total), events, bytes);
	}
	p->next = UINT64_MAX;
	p->percent = -1;
}
