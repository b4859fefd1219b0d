/*
 * shimtrace report io: per file, socket or pipe of each process (named by
 * the path it was opened with, "socket", "pipe", or "fd N" for one opened
 * before the trace or by an untraced call), the calls, the bytes read and
 * written, and the time in the calls (total, p50, p99, max); then the
 * slowest calls with their call sites. From the io family's events.
 *
 * A descriptor's name follows it: open, fopen, socket, accept and pipe
 * name it, dup copies the name, close forgets it. Bytes are what the calls
 * returned (fread and fwrite: items times size).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/common/escape.h"
#include "ctl/report/duration.h"
#include "ctl/report/grow.h"
#include "ctl/report/hist.h"
#include "ctl/report/map.h"
#include "ctl/report/meaning.h"
#include "ctl/report/pass.h"
#include "ctl/report/report_io.h"
#include "ctl/report/site.h"
#include "ctl/report/stacks.h"
#include "wrappers/meanings-gen.h"

#define SLOWEST 10
#define NAME_MAX_LEN 200

enum action { A_NONE, A_OPEN, A_SOCKET, A_ACCEPT, A_PIPE, A_DUP, A_CLOSE, A_READ, A_WRITE, A_CALL };

struct icls {
	bool known;
	enum action action;
	bool items; /* fread/fwrite: result counts items of `size` */
	int fd, path, result, dur, size, newfd, rfd, wfd, oldfd, stack;
};

struct row {
	int32_t pid;
	char name[NAME_MAX_LEN];
	uint64_t calls, reads, writes, bytes_read, bytes_written, errors;
	uint64_t time, max, timed;
	uint32_t *hist;
};

struct slow {
	uint64_t dur, bytes, ip;
	uint32_t stack; /* its call stack (st_stacks), 0: none */
	int32_t pid, fd;
	char call[32]; /* (a copy: the classes go with the reader) */
	char name[NAME_MAX_LEN];
};

struct istat {
	struct icls *cls;
	uint32_t ncls;
	struct row *rows;
	uint32_t nrows, rows_cap;
	struct st_map row_ix;  /* (pid, name hash) -> rows[] */
	struct st_map fd_rows; /* (pid, fd) -> rows[] */
	struct slow slow[SLOWEST];
	uint32_t nslow;
	bool by_stack; /* --stack: the slow calls' stacks kept */
	struct st_stacks stacks;
};

/* What the io family's events mean (its spec's means=): K_ITEMS, a
 * result that counts items of `size` (fread, fwrite). */
enum { K_NONE, K_ITEMS };
#define MEANING(name, what, kind, field) { name, A_##what, K_##kind, field },
static const struct st_meaning meanings[] = { ST_IO_MEANINGS(MEANING) };
#undef MEANING

static const struct icls *cls_of(struct istat *is, const struct st_event_class *c)
{
	struct icls *k = st_class_slot(&is->cls, &is->ncls, sizeof(*is->cls), c->index);
	const struct st_meaning *m;

	if (!k || k->known)
		return k;
	k->known = true;
	m = st_meaning_find(c->name, meanings, sizeof(meanings) / sizeof(meanings[0]));
	if (!m)
		return k;
	k->action = m->what;
	k->items = m->kind == K_ITEMS;
	k->fd = st_event_class_field(c, "fd");
	k->path = st_event_class_field(c, "path");
	k->result = st_event_class_field(c, "result");
	k->dur = st_event_class_field(c, "dur_ns");
	k->size = st_event_class_field(c, "size");
	k->newfd = st_event_class_field(c, "newfd");
	k->rfd = st_event_class_field(c, "rfd");
	k->wfd = st_event_class_field(c, "wfd");
	k->oldfd = st_event_class_field(c, "oldfd");
	k->stack = st_stack_field(c);
	/* the fields each action reads, or the class is not ours */
	if ((k->action != A_PIPE && k->fd < 0) || (k->action == A_ACCEPT && k->newfd < 0) ||
	    (k->action == A_PIPE && (k->rfd < 0 || k->wfd < 0)) ||
	    (k->action == A_DUP && k->oldfd < 0) || (k->items && k->size < 0) ||
	    ((k->action == A_READ || k->action == A_WRITE) && k->result < 0))
		k->action = A_NONE;
	return k;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The row of (pid, name): names that hash alike are told apart by probing
 * the next hash value. */
static int64_t row_of(struct istat *is, int32_t pid, const char *name)
{
	uint64_t h = name_hash(name);
	int64_t r;

	while ((r = st_map_get(&is->row_ix, (uint64_t)pid, h)) >= 0) {
		if (strcmp(is->rows[r].name, name) == 0)
			return r;
		h++;
	}
	if (st_grow(&is->rows, &is->rows_cap, is->nrows, sizeof(*is->rows)) < 0 ||
	    st_map_put(&is->row_ix, (uint64_t)pid, h, is->nrows) < 0)
		return -1;
	memset(&is->rows[is->nrows], 0, sizeof(*is->rows));
	is->rows[is->nrows].pid = pid;
	snprintf(is->rows[is->nrows].name, NAME_MAX_LEN, "%s", name);
	return is->nrows++;
}

static int name_fd(struct istat *is, int32_t pid, int64_t fd, const char *name)
{
	int64_t r;

	if (fd < 0)
		return 0;
	r = row_of(is, pid, name);
	return r < 0 ? -1 : st_map_put(&is->fd_rows, (uint64_t)pid, (uint64_t)fd, (uint32_t)r);
}

/* The row fd stands for now: its name, or "fd N" (0, 1, 2: stdin...). */
static int64_t row_of_fd(struct istat *is, int32_t pid, int64_t fd)
{
	static const char *std[] = { "stdin", "stdout", "stderr" };
	int64_t r = st_map_get(&is->fd_rows, (uint64_t)pid, (uint64_t)fd);
	char name[32];

	if (r >= 0)
		return r;
	if (fd >= 0 && fd < 3)
		snprintf(name, sizeof(name), "%s", std[fd]);
	else
		snprintf(name, sizeof(name), "fd %" PRId64, fd);
	r = row_of(is, pid, name);
	if (r >= 0 && fd >= 0 && st_map_put(&is->fd_rows, (uint64_t)pid, (uint64_t)fd, (uint32_t)r) < 0)
		return -1;
	return r;
}

static int note_slow(struct istat *is, const struct st_event *ev, const struct icls *k,
		     const struct row *row, int32_t fd, uint64_t dur, uint64_t bytes)
{
	int64_t stack = 0;
	uint32_t at;

	if (is->nslow == SLOWEST && dur <= is->slow[SLOWEST - 1].dur)
		return 0;
	if (is->by_stack && k->stack >= 0)
		stack = st_stacks_of_field(&is->stacks, ev->ip, &ev->fields[k->stack]);
	if (stack < 0)
		return -1;
	at = is->nslow < SLOWEST ? is->nslow++ : SLOWEST - 1;
	while (at > 0 && is->slow[at - 1].dur < dur) {
		is->slow[at] = is->slow[at - 1];
		at--;
	}
	is->slow[at] = (struct slow){
		.dur = dur, .bytes = bytes, .ip = ev->ip, .stack = (uint32_t)stack, .pid = ev->pid, .fd = fd
	};
	snprintf(is->slow[at].call, sizeof(is->slow[at].call), "%s", ev->cls->name + 3 /* "io:" */);
	snprintf(is->slow[at].name, NAME_MAX_LEN, "%s", row->name);
	return 0;
}

static int on_event(void *arg, const struct st_event *ev)
{
	struct istat *is = arg;
	const struct icls *k = cls_of(is, ev->cls);
	const struct st_value *f = ev->fields;
	int64_t fd, r, res = 0;
	uint64_t dur = 0, bytes = 0;
	struct row *row;
	char path[NAME_MAX_LEN];

	if (!k)
		return -1;
	if (k->action == A_NONE)
		return 0;
	fd = k->fd >= 0 ? f[k->fd].i : -1;
	switch (k->action) {
	case A_OPEN:
		snprintf(path, sizeof(path), "%.*s", (int)f[k->path].len,
			 f[k->path].ptr ? (const char *)f[k->path].ptr : "");
		return name_fd(is, ev->pid, fd, path[0] ? path : "(unreadable path)");
	case A_SOCKET:
		return name_fd(is, ev->pid, fd, "socket");
	case A_ACCEPT:
		if (name_fd(is, ev->pid, f[k->newfd].i, "socket (accepted)") < 0)
			return -1;
		break;
	case A_PIPE:
		return name_fd(is, ev->pid, f[k->rfd].i, "pipe") < 0 ? -1 :
		       name_fd(is, ev->pid, f[k->wfd].i, "pipe");
	case A_DUP:
		if (fd < 0)
			return 0;
		r = row_of_fd(is, ev->pid, f[k->oldfd].i);
		return r < 0 ? -1 : st_map_put(&is->fd_rows, (uint64_t)ev->pid, (uint64_t)fd, (uint32_t)r);
	case A_CLOSE:
		r = row_of_fd(is, ev->pid, fd);
		if (r < 0)
			return -1;
		is->rows[r].calls++;
		st_map_del(&is->fd_rows, (uint64_t)ev->pid, (uint64_t)fd);
		return 0;
	default:
		break;
	}
	r = row_of_fd(is, ev->pid, fd);
	if (r < 0)
		return -1;
	row = &is->rows[r];
	row->calls++;
	if (k->result >= 0)
		res = f[k->result].i;
	if (k->action == A_READ || k->action == A_WRITE) {
		if (k->items)
			bytes = (uint64_t)res * f[k->size].u;
		else if (res > 0)
			bytes = (uint64_t)res;
		else if (res < 0)
			row->errors++;
		if (k->action == A_READ) {
			row->reads++;
			row->bytes_read += bytes;
		} else {
			row->writes++;
			row->bytes_written += bytes;
		}
	}
	if (k->dur < 0)
		return 0;
	dur = f[k->dur].u;
	if (!row->hist && !(row->hist = calloc(ST_HIST_BUCKETS, sizeof(*row->hist))))
		return -1;
	row->hist[st_hist_bucket(dur)]++;
	row->timed++;
	row->time += dur;
	if (dur > row->max)
		row->max = dur;
	return note_slow(is, ev, k, row, (int32_t)fd, dur, bytes);
}

/* ---- output ---- */

static bool by_bytes;

static int row_order(const void *a, const void *b)
{
	const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;
	uint64_t kx = by_bytes ? x->bytes_read + x->bytes_written : x->time;
	uint64_t ky = by_bytes ? y->bytes_read + y->bytes_written : y->time;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const struct row **rows_sorted(const struct istat *is, uint32_t *n)
{
	const struct row **v = malloc(((size_t)is->nrows + 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < is->nrows; i++)
		if (is->rows[i].calls)
			v[(*n)++] = &is->rows[i];
	qsort(v, *n, sizeof(*v), row_order);
	return v;
}

static uint64_t pct(const struct row *r, double q)
{
	return st_hist_percentile(r->hist, r->timed, r->max, q);
}

static void text_report(const struct st_report_opts *opts, struct st_pass *pass, struct istat *is,
			FILE *o)
{
	uint32_t n, top = opts->top;
	const struct row **v = rows_sorted(is, &n);
	char a[32], b[32], c[32], d[32], site[512], name[ST_ESC_SIZE(NAME_MAX_LEN)];

	fprintf(o, "shimtrace report io: %s: %" PRIu64 " events, %" PRIu32 " files, sockets and pipes\n",
		pass->dir, pass->events, n);
	st_pass_warnings(pass, o);
	if (n)
		fprintf(o, "\nby %s:\n", by_bytes ? "bytes moved" : "time in calls");
	for (uint32_t i = 0; v && i < n && (!top || i < top); i++) {
		const struct row *r = v[i];

		fprintf(o, "%2" PRIu32 ". %s, pid %" PRId32 " (%s)\n", i + 1,
			st_esc(name, sizeof(name), r->name), r->pid, st_pass_name_text(pass, r->pid));
		fprintf(o, "    %" PRIu64 " calls: %" PRIu64 " reads %" PRIu64 " bytes, %" PRIu64
			   " writes %" PRIu64 " bytes%s",
			r->calls, r->reads, r->bytes_read, r->writes, r->bytes_written,
			r->errors ? "," : "\n");
		if (r->errors)
			fprintf(o, " %" PRIu64 " failed\n", r->errors);
		if (r->timed)
			fprintf(o, "    time %s  p50 %s  p99 %s  max %s\n", st_fmt_ns(r->time, a, sizeof(a)),
				st_fmt_ns(pct(r, 0.5), b, sizeof(b)), st_fmt_ns(pct(r, 0.99), c, sizeof(c)),
				st_fmt_ns(r->max, d, sizeof(d)));
	}
	if (top && n > top)
		fprintf(o, "    (%" PRIu32 " more: --top 0 shows all)\n", n - top);
	if (is->nslow)
		fprintf(o, "\nslowest calls:\n");
	for (uint32_t i = 0; i < is->nslow; i++) {
		const struct slow *s = &is->slow[i];
		char call[ST_ESC_SIZE(sizeof(s->call))];

		st_site_text(pass->syms, s->pid, s->ip, site, sizeof(site));
		fprintf(o, "  %8s  %s fd %" PRId32 " (%s), %" PRIu64 " bytes, at %s, pid %" PRId32 "\n",
			st_fmt_ns(s->dur, a, sizeof(a)), st_esc(call, sizeof(call), s->call), s->fd,
			st_esc(name, sizeof(name), s->name), s->bytes, site, s->pid);
		st_stacks_text(&is->stacks, pass->syms, s->pid, s->stack, 12, o);
	}
	free(v);
}

static void json_report(const struct st_report_opts *opts, struct st_pass *pass, struct istat *is,
			FILE *o)
{
	uint32_t n, top = opts->top;
	const struct row **v = rows_sorted(is, &n);

	st_pass_json_head(pass, o);
	fprintf(o, ",\n \"files\": [");
	for (uint32_t i = 0; v && i < n && (!top || i < top); i++) {
		const struct row *r = v[i];

		fprintf(o, "%s{\"pid\": %" PRId32 ", \"name\": ", i ? ",\n  " : "\n  ", r->pid);
		st_json_write(o, r->name);
		fprintf(o,
			", \"calls\": %" PRIu64 ", \"reads\": %" PRIu64 ", \"bytes_read\": %" PRIu64
			", \"writes\": %" PRIu64 ", \"bytes_written\": %" PRIu64 ", \"failed\": %" PRIu64
			", \"time_ns\": {\"count\": %" PRIu64 ", \"total\": %" PRIu64 ", \"p50\": %" PRIu64
			", \"p99\": %" PRIu64 ", \"max\": %" PRIu64 "}}",
			r->calls, r->reads, r->bytes_read, r->writes, r->bytes_written, r->errors, r->timed,
			r->time, pct(r, 0.5), pct(r, 0.99), r->max);
	}
	fprintf(o, "],\n \"slowest\": [");
	for (uint32_t i = 0; i < is->nslow; i++) {
		const struct slow *s = &is->slow[i];

		fprintf(o, "%s{\"call\": ", i ? ",\n  " : "\n  ");
		st_json_write(o, s->call);
		fprintf(o, ", \"pid\": %" PRId32 ", \"fd\": %" PRId32 ", \"name\": ", s->pid, s->fd);
		st_json_write(o, s->name);
		fprintf(o, ", \"bytes\": %" PRIu64 ", \"dur_ns\": %" PRIu64 ", \"site\": ", s->bytes, s->dur);
		st_site_json(pass->syms, s->pid, s->ip, o);
		if (s->stack)
			st_stacks_json(&is->stacks, pass->syms, s->pid, s->stack, o);
		fputs("}", o);
	}
	fputs("]}\n", o);
	free(v);
}

int st_report_io(const struct st_report_opts *opts, FILE *o, char *err, size_t errlen)
{
	struct istat is;
	struct st_pass pass;
	int ret = 0;

	if (opts->sort && strcmp(opts->sort, "time") != 0 && strcmp(opts->sort, "bytes") != 0) {
		snprintf(err, errlen, "--sort: no field '%s' (time, bytes)", opts->sort);
		return 2;
	}
	by_bytes = opts->sort && strcmp(opts->sort, "bytes") == 0;
	memset(&is, 0, sizeof(is));
	is.by_stack = opts->stack;
	if (st_report_pass(opts, on_event, NULL, &is, &pass, err, errlen) < 0)
		ret = 1;
	else
		(opts->json ? json_report : text_report)(opts, &pass, &is, o);
	for (uint32_t i = 0; i < is.nrows; i++)
		free(is.rows[i].hist);
	free(is.rows);
	free(is.cls);
	st_stacks_fini(&is.stacks);
	st_map_free(&is.row_ix);
	st_map_free(&is.fd_rows);
	st_pass_fini(&pass);
	return ret;
}
