/*
 * shimtrace top's figures (see locktop.h): the followed trace read one
 * refresh at a time into one pass and one lock statistics, and the rows
 * of each refresh from them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ctl/report/grow.h"
#include "ctl/report/locktop.h"

/* ---- the waits by site and thread ---- */

static int waits_one(struct st_top_waits *w, bool site, uint32_t lock, uint64_t key,
		     uint64_t wait)
{
	struct st_map *ix = site ? &w->site_ix : &w->thread_ix;
	int64_t i = st_map_get(ix, lock, key);

	if (i < 0) {
		if (st_grow(&w->v, &w->cap, w->n, sizeof(*w->v)) < 0 ||
		    st_map_put(ix, lock, key, w->n) < 0)
			return -1;
		w->v[w->n] = (struct st_top_wait){ .lock = lock, .site = site, .key = key };
		i = w->n++;
	}
	w->v[i].waits++;
	w->v[i].wait += wait;
	return 0;
}

static void waits_clear(struct st_top_waits *w)
{
	st_map_free(&w->site_ix);
	st_map_free(&w->thread_ix);
	w->n = 0;
}

static void waits_fini(struct st_top_waits *w)
{
	waits_clear(w);
	free(w->v);
	memset(w, 0, sizeof(*w));
}

/* lockstat's hook: a contended wait, to the interval's and the run's. */
static int on_wait(void *arg, uint32_t lock, const struct st_lock_thread *th, uint64_t ip,
		   uint64_t wait)
{
	struct st_top *t = arg;
	uint64_t tid = (uint32_t)th->tid;

	if (waits_one(&t->iv, true, lock, ip, wait) < 0 ||
	    waits_one(&t->iv, false, lock, tid, wait) < 0 ||
	    waits_one(&t->run, true, lock, ip, wait) < 0 ||
	    waits_one(&t->run, false, lock, tid, wait) < 0)
		return -1;
	return 0;
}

/* Into the figures f of each row (by row_of[lock]), the site and thread
 * that waited longest in w, and how many did. */
static void waits_to_rows(struct st_top *t, const struct st_top_waits *w, const uint32_t *row_of,
			  bool iv)
{
	for (uint32_t i = 0; i < w->n; i++) {
		const struct st_top_wait *e = &w->v[i];
		struct st_top_figs *f;

		if (row_of[e->lock] == UINT32_MAX)
			continue;
		f = iv ? &t->rows[row_of[e->lock]].iv : &t->rows[row_of[e->lock]].run;
		if (e->site) {
			f->sites++;
			if (e->wait > f->site_wait || (e->wait == f->site_wait && e->key < f->site_ip)) {
				f->site_wait = e->wait;
				f->site_ip = e->key;
			}
		} else {
			f->threads++;
			if (e->wait > f->tid_wait ||
			    (e->wait == f->tid_wait && (int32_t)e->key < f->tid)) {
				f->tid_wait = e->wait;
				f->tid = (int32_t)e->key;
			}
		}
	}
}

/* ---- rows ---- */

static int make_rows(struct st_top *t)
{
	const struct st_lockstat *ls = &t->ls;
	uint32_t *row_of = malloc(((size_t)ls->nlocks + 1) * sizeof(*row_of));
	uint32_t *waiting = calloc((size_t)ls->nlocks + 1, sizeof(*waiting));

	if (!row_of || !waiting) {
		free(row_of);
		free(waiting);
		return -1;
	}
	for (uint32_t k = 0; k < ls->nthreads; k++) {
		const struct st_lock_thread *th = &ls->threads[k];

		if (th->waiting && th->wait_lock < ls->nlocks)
			waiting[th->wait_lock]++;
	}
	t->nrows = 0;
	for (uint32_t li = 0; li < ls->nlocks; li++) {
		const struct st_lock *l = &ls->locks[li];
		const struct st_top_snap *s = li < t->nsnap ? &t->snap[li] : &(struct st_top_snap){ 0 };
		struct st_top_row *r;

		row_of[li] = UINT32_MAX;
		if (st_lock_kind_idles(l->kind) || (!l->contended && !waiting[li]))
			continue;
		if (st_grow(&t->rows, &t->rows_cap, t->nrows, sizeof(*t->rows)) < 0) {
			free(row_of);
			free(waiting);
			return -1;
		}
		r = &t->rows[t->nrows];
		*r = (struct st_top_row){ .lock = li, .waiting = waiting[li] };
		r->run = (struct st_top_figs){ .wait = l->wait_total, .contended = l->contended,
					       .acquired = l->acquired, .hold = l->hold_total };
		r->iv = (struct st_top_figs){ .wait = l->wait_total - s->wait_total,
					      .contended = l->contended - s->contended,
					      .acquired = l->acquired - s->acquired,
					      .hold = l->hold_total - s->hold_total };
		row_of[li] = t->nrows++;
	}
	for (uint32_t k = 0; k < ls->nthreads; k++) {
		const struct st_lock_thread *th = &ls->threads[k];

		for (uint32_t h = 0; h < th->nheld; h++) {
			uint32_t li = th->held[h].lock;

			if (li < ls->nlocks && row_of[li] != UINT32_MAX) {
				t->rows[row_of[li]].holders++;
				t->rows[row_of[li]].holder = th->tid;
			}
		}
	}
	waits_to_rows(t, &t->iv, row_of, true);
	waits_to_rows(t, &t->run, row_of, false);
	free(row_of);
	free(waiting);
	return 0;
}

int st_top_next(struct st_top *t)
{
	const struct st_lockstat *ls = &t->ls;

	while (t->snap_cap < ls->nlocks)
		if (st_grow(&t->snap, &t->snap_cap, t->snap_cap, sizeof(*t->snap)) < 0)
			return -1;
	for (uint32_t li = 0; li < ls->nlocks; li++) {
		const struct st_lock *l = &ls->locks[li];

		t->snap[li] = (struct st_top_snap){ l->contended, l->wait_total, l->acquired,
						    l->hold_total };
	}
	t->nsnap = ls->nlocks;
	waits_clear(&t->iv);
	t->state.from_ns = t->state.to_ns;
	return 0;
}

/* ---- reading ---- */

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* What the reader r, closed next, says of the trace. */
static void note_reader(struct st_top *t, struct st_reader *r, bool to_end)
{
	struct st_top_state *s = &t->state;

	if (st_reader_damaged(r) && !s->damaged)
		snprintf(s->damage, sizeof(s->damage), "%s", st_reader_damage(r, 0));
	s->damaged += st_reader_damaged(r);
	s->finished = to_end && st_reader_finished(r);
	if (s->finished && st_reader_incomplete(r))
		snprintf(s->incomplete, sizeof(s->incomplete), "%s", st_reader_incomplete(r));
}

int st_top_read(struct st_top *t, const struct st_top_how *how, char *err, size_t errlen)
{
	struct st_top_state *s = &t->state;
	struct st_reader *r;
	struct st_item it;
	struct timespec t0;
	struct stat st;
	uint64_t n = 0;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	s->cut = false;
	ret = st_reader_follow(&r, t->opts.dir, t->follow, err, errlen);
	if (ret == -ENOENT && stat(t->opts.dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		/* (no metadata yet: a session not started) */
		s->waiting = true;
		return make_rows(t);
	}
	if (ret < 0)
		return -1;
	s->waiting = false;
	if (st_pass_reader(&t->pass, r) < 0) {
		st_reader_close(r);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	st_reader_follow_limit(r, how->lag_ns, how->quiet_ns);
	while ((ret = st_reader_next(r, &it)) > 0) {
		if (st_pass_item(&t->pass, &it, st_lockstat_event, st_lockstat_gap, &t->ls) < 0) {
			ret = -ENOMEM;
			break;
		}
		if (how->budget_s > 0 && ++n % 4096 == 0 && since(&t0) > how->budget_s) {
			s->cut = true;
			break;
		}
	}
	if (ret < 0) {
		snprintf(err, errlen, "%s", ret == -ENOMEM ? "out of memory" : st_reader_error(r));
		st_reader_close(r);
		return -1;
	}
	note_reader(t, r, !s->cut);
	st_reader_close(r);
	s->events = t->pass.events;
	s->lost = t->pass.lost;
	s->late = st_follow_late(t->follow);
	s->behind = st_follow_behind(t->follow);
	if (s->cut || s->finished || st_follow_limit(t->follow) == INT64_MIN)
		s->to_ns = t->pass.last_ns > s->to_ns ? t->pass.last_ns : s->to_ns;
	else
		s->to_ns = st_follow_limit(t->follow);
	if (make_rows(t) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int st_top_init(struct st_top *t, const char *dir, int32_t pid, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->opts = (struct st_report_opts){ .dir = dir, .pid = pid, .family = "pthread,futex,jvm" };
	st_lockstat_init(&t->ls);
	t->ls.on_wait = on_wait;
	t->ls.on_wait_arg = t;
	t->follow = st_follow_new();
	if (!t->follow) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return st_pass_begin(&t->pass, &t->opts, err, errlen);
}

void st_top_fini(struct st_top *t)
{
	st_pass_fini(&t->pass);
	st_lockstat_fini(&t->ls);
	st_follow_free(t->follow);
	waits_fini(&t->iv);
	waits_fini(&t->run);
	free(t->snap);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
