/*
 * The pass over a trace that every report makes (see report.h).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/report/report.h"

static int note_name(struct st_pass *p, const struct st_event *ev, int name_field)
{
	const struct st_value *v = &ev->fields[name_field];
	struct st_proc_name *n = NULL;

	for (uint32_t i = 0; i < p->nnames; i++)
		if (p->names[i].pid == ev->pid)
			n = &p->names[i];
	if (!n) {
		if (p->nnames == p->names_cap) {
			uint32_t cap = p->names_cap ? p->names_cap * 2 : 64;
			struct st_proc_name *nv = realloc(p->names, cap * sizeof(*nv));

			if (!nv)
				return -1;
			p->names = nv;
			p->names_cap = cap;
		}
		n = &p->names[p->nnames++];
		n->pid = ev->pid;
		p->processes++;
	}
	/* (the newest: a process that exec'd is named by its new image) */
	snprintf(n->name, sizeof(n->name), "%.*s", (int)(v->len < 31 ? v->len : 31),
		 v->ptr ? (const char *)v->ptr : "?");
	st_esc(n->text, sizeof(n->text), n->name);
	return 0;
}

/* A process_end event (procend.c in the daemon): kept if it did not exit. */
static int note_end(struct st_pass *p, const struct st_event *ev, int exited_field,
		    int threads_field)
{
	if (ev->fields[exited_field].u != 0)
		return 0;
	if (st_grow(&p->unexited, &p->unexited_cap, p->nunexited, sizeof(*p->unexited)) < 0)
		return -1;
	p->unexited[p->nunexited++] = (struct st_proc_unexited){
		ev->pid, (uint32_t)ev->fields[threads_field].u
	};
	return 0;
}

int st_report_pass(const struct st_report_opts *opts, st_report_fn fn, void *ctx,
		   struct st_pass *pass, char *err, size_t errlen)
{
	const struct st_tsdl *meta;
	uint32_t process_index = UINT32_MAX, end_index = UINT32_MAX;
	int name_field = -1, exited_field = -1, threads_field = -1;
	struct st_reader *r;
	struct st_item it;
	int ret;

	memset(pass, 0, sizeof(*pass));
	pass->dir = opts->dir;
	pass->syms = st_syms_new();
	if (!pass->syms) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (st_reader_open(&r, opts->dir, err, errlen) < 0)
		return -1;
	/* (the classes of process names and ends, found once: not a name
	 * compared per event; one without the fields read is not ours) */
	meta = st_reader_metadata(r);
	for (uint32_t i = 0; i < meta->nevents; i++) {
		const struct st_event_class *c = &meta->events[i];
		int a, b;

		if (strcmp(c->name, "shimtrace:process") == 0 &&
		    (a = st_event_class_field(c, "name")) >= 0) {
			process_index = c->index;
			name_field = a;
		} else if (strcmp(c->name, "shimtrace:process_end") == 0 &&
			   (a = st_event_class_field(c, "exited")) >= 0 &&
			   (b = st_event_class_field(c, "threads")) >= 0) {
			end_index = c->index;
			exited_field = a;
			threads_field = b;
		}
	}
	while ((ret = st_reader_next(r, &it)) > 0) {
		const struct st_event *ev = it.event;

		if (it.kind == ST_ITEM_LOST) {
			if (opts->pid < 0 || it.lost->pid == opts->pid)
				pass->lost += it.lost->count;
			continue;
		}
		if (pass->events++ == 0)
			pass->first_ns = ev->ns;
		if (ev->cls->index == process_index && note_name(pass, ev, name_field) < 0) {
			ret = -ENOMEM;
			break;
		}
		if (st_syms_event(pass->syms, ev) < 0) {
			ret = -ENOMEM;
			break;
		}
		if (opts->pid >= 0 && ev->pid != opts->pid)
			continue;
		if (ev->cls->index == end_index && note_end(pass, ev, exited_field, threads_field) < 0) {
			ret = -ENOMEM;
			break;
		}
		if (fn(ctx, ev) < 0) {
			ret = -ENOMEM;
			break;
		}
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (ret < 0)
		snprintf(err, errlen, "%s", st_reader_error(r));
	else if (st_reader_incomplete(r))
		pass->incomplete = strdup(st_reader_incomplete(r));
	st_reader_close(r);
	return ret < 0 ? -1 : 0;
}

void st_pass_fini(struct st_pass *pass)
{
	st_syms_free(pass->syms);
	free(pass->names);
	free(pass->unexited);
	free((char *)pass->incomplete);
	memset(pass, 0, sizeof(*pass));
}

static const struct st_proc_name *pass_name(const struct st_pass *pass, int32_t pid)
{
	for (uint32_t i = 0; i < pass->nnames; i++)
		if (pass->names[i].pid == pid)
			return &pass->names[i];
	return NULL;
}

const char *st_pass_name(const struct st_pass *pass, int32_t pid)
{
	const struct st_proc_name *n = pass_name(pass, pid);

	return n ? n->name : "?";
}

const char *st_pass_name_text(const struct st_pass *pass, int32_t pid)
{
	const struct st_proc_name *n = pass_name(pass, pid);

	return n ? n->text : "?";
}

void st_pass_warnings(const struct st_pass *pass, FILE *out)
{
	if (pass->lost)
		fprintf(out,
			"warning: %" PRIu64 " events were lost while recording (%.1f%% of %" PRIu64
			"): the numbers below may miss that many calls\n",
			pass->lost, 100.0 * (double)pass->lost / (double)(pass->lost + pass->events),
			pass->lost + pass->events);
	if (pass->incomplete) {
		fputs("warning: the trace is incomplete (", out);
		st_esc_write(out, pass->incomplete, strlen(pass->incomplete), ST_ESC_TEXT);
		fputs("): the numbers below stop there\n", out);
	}
	st_pass_end_warnings(pass, "", out);
}

void st_pass_end_warnings(const struct st_pass *pass, const char *prefix, FILE *out)
{
	for (uint32_t i = 0; i < pass->nunexited; i++) {
		const struct st_proc_unexited *u = &pass->unexited[i];
		char missing[128];

		/* (a thread writes one record at a time: one each at most) */
		if (u->threads)
			snprintf(missing, sizeof(missing),
				 "up to %" PRIu32 " event%s its threads were writing may be missing",
				 u->threads, u->threads == 1 ? "" : "s");
		else
			snprintf(missing, sizeof(missing),
				 "no event was being written (none of its threads held a buffer)");
		fprintf(out,
			"%swarning: process %" PRId32 " (%s) ended without exiting (killed, crashed or "
			"_exit): %s, and what it held or waited for at the end shows as still held or "
			"waiting\n",
			prefix, u->pid, st_pass_name_text(pass, u->pid), missing);
	}
}

/* A trace directory record made: shimtrace-YYYYMMDD-HHMMSS[-N], with its
 * metadata. Their names sort by time; ties (-N) by modification time. */
int st_report_latest(char *buf, size_t n)
{
	DIR *d = opendir(".");
	struct dirent *e;
	struct timespec best_t = { 0, 0 };
	char best[256] = "";

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char meta[300];
		struct stat st;

		if (strncmp(e->d_name, "shimtrace-", 10) != 0 || strlen(e->d_name) >= sizeof(best))
			continue;
		snprintf(meta, sizeof(meta), "%s/metadata", e->d_name);
		if (stat(meta, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (stat(e->d_name, &st) < 0)
			continue;
		if (!best[0] || strncmp(e->d_name, best, 25) > 0 ||
		    (strncmp(e->d_name, best, 25) == 0 &&
		     (st.st_mtim.tv_sec > best_t.tv_sec ||
		      (st.st_mtim.tv_sec == best_t.tv_sec && st.st_mtim.tv_nsec > best_t.tv_nsec)))) {
			snprintf(best, sizeof(best), "%s", e->d_name);
			best_t = st.st_mtim;
		}
	}
	closedir(d);
	if (!best[0])
		return -1;
	snprintf(buf, n, "%s", best);
	return 0;
}

int st_grow(void *v, uint32_t *cap, uint32_t n, size_t sz)
{
	void **p = v;
	uint32_t c;
	void *nv;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	nv = realloc(*p, (size_t)c * sz);
	if (!nv)
		return -1;
	*p = nv;
	*cap = c;
	return 0;
}

int st_meaning_of(const char *name, const struct st_meaning *table, size_t n, int dflt)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, table[i].name) == 0)
			return table[i].what;
	return dflt;
}

uint32_t st_hist_bucket(uint64_t v)
{
	uint32_t e;

	if (v < 16)
		return (uint32_t)v;
	e = 63 - (uint32_t)__builtin_clzll(v);
	return 16 + (e - 4) * 8 + (uint32_t)((v >> (e - 3)) & 7);
}

static uint64_t bucket_top(uint32_t b)
{
	uint32_t e, sub;

	if (b < 16)
		return b;
	e = (b - 16) / 8 + 4;
	sub = (b - 16) % 8;
	return ((8ull + sub) << (e - 3)) + (1ull << (e - 3)) - 1;
}

uint64_t st_hist_percentile(const uint32_t *hist, uint64_t n, uint64_t max, double q)
{
	uint64_t rank, seen = 0;

	if (!hist || n == 0)
		return 0;
	rank = (uint64_t)(q * (double)n + 0.999999);
	if (rank == 0)
		rank = 1;
	for (uint32_t b = 0; b < ST_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= rank)
			return bucket_top(b) < max ? bucket_top(b) : max;
	}
	return max;
}

void *st_class_slot(void *v, uint32_t *n, size_t sz, uint32_t index)
{
	char **p = v;

	if (index >= *n) {
		uint32_t nn = index + 64;
		char *nv = realloc(*p, (size_t)nn * sz);

		if (!nv)
			return NULL;
		memset(nv + (size_t)*n * sz, 0, (size_t)(nn - *n) * sz);
		*p = nv;
		*n = nn;
	}
	return *p + (size_t)index * sz;
}

const char *st_fmt_ns(uint64_t ns, char *buf, size_t n)
{
	if (ns == 0)
		snprintf(buf, n, "0");
	else if (ns < 1000)
		snprintf(buf, n, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, n, "%.3gus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.3gms", (double)ns / 1e6);
	else if (ns < 1000000000000ull)
		snprintf(buf, n, "%.3gs", (double)ns / 1e9);
	else
		snprintf(buf, n, "%.0fs", (double)ns / 1e9);
	return buf;
}

void st_pass_json_head(const struct st_pass *pass, FILE *o)
{
	fprintf(o, "{\"trace\": ");
	st_json_write(o, pass->dir);
	fprintf(o, ", \"events\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"incomplete\": ", pass->events,
		pass->lost);
	if (pass->incomplete)
		st_json_write(o, pass->incomplete);
	else
		fputs("null", o);
	fputs(", \"ended_without_exit\": [", o);
	for (uint32_t i = 0; i < pass->nunexited; i++) {
		const struct st_proc_unexited *u = &pass->unexited[i];

		fprintf(o, "%s{\"pid\": %" PRId32 ", \"name\": ", i ? ", " : "", u->pid);
		st_json_write(o, st_pass_name(pass, u->pid));
		fprintf(o, ", \"threads\": %" PRIu32 "}", u->threads);
	}
	fputc(']', o);
}

void st_site_text(struct st_syms *syms, int32_t pid, uint64_t ip, char *buf, size_t n)
{
	struct st_site s;

	st_syms_resolve(syms, pid, ip, &s);
	st_site_format(&s, buf, n);
}

/* (a string or null) */
static void json_opt(FILE *o, const char *key, const char *s)
{
	fprintf(o, ", \"%s\": ", key);
	if (s)
		st_json_write(o, s);
	else
		fputs("null", o);
}

void st_site_json(struct st_syms *syms, int32_t pid, uint64_t ip, FILE *o)
{
	struct st_site s;
	char text[512];

	st_syms_resolve(syms, pid, ip, &s);
	st_site_format(&s, text, sizeof(text));
	fprintf(o, "{\"text\": ");
	st_json_write(o, text);
	json_opt(o, "function", s.function);
	json_opt(o, "file", s.file);
	fprintf(o, ", \"line\": %" PRIu32, s.line);
	json_opt(o, "object", s.object);
	fprintf(o, ", \"offset\": %" PRIu64 ", \"ip\": %" PRIu64 "}", s.offset, s.ip);
}
