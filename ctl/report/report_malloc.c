/*
 * shimtrace report malloc: the heap of a trace from the malloc family's
 * events (C allocator, aligned allocations, C++ new and delete): blocks
 * never freed grouped by the call site that allocated them, each
 * process's peak heap and when, allocations by call site, a size
 * histogram, and frees of pointers the trace never saw allocated or saw
 * freed already (double frees).
 *
 * A live block is keyed by its process and address. realloc frees its old
 * block and allocates the new one (in place: the same address again);
 * realloc(p, 0) returning NULL frees p; a failed call changes nothing. An
 * address handed out while the trace thinks it live means a free the trace
 * did not see (an untraced allocator's): the old block is dropped, not
 * called a leak. mmap and munmap are not heap blocks and are left out.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/common/escape.h"
#include "ctl/report/duration.h"
#include "ctl/report/grow.h"
#include "ctl/report/heapev.h"
#include "ctl/report/map.h"
#include "ctl/report/pass.h"
#include "ctl/report/report_malloc.h"
#include "ctl/report/site.h"
#include "ctl/report/stacks.h"

#define BAD_SHOWN_MAX 1000


struct asite {
	int32_t pid;
	uint64_t ip;
	uint64_t allocs, bytes;
	uint64_t live_blocks, live_bytes;
};

struct block {
	uint64_t size;
	uint32_t site;
	uint32_t stack; /* its sampled call stack (st_stacks), 0: none */
};

struct mproc {
	int32_t pid;
	uint64_t live, peak, allocs, frees, failed;
	int64_t peak_ns, first_ns;
};

enum bad_kind { BAD_DOUBLE, BAD_UNKNOWN };

struct bad {
	enum bad_kind kind;
	int32_t pid;
	uint64_t ptr, ip, before_ip;
};

struct mstat {
	struct st_heap_cls *cls;
	uint32_t ncls;
	struct asite *sites;
	uint32_t nsites, sites_cap;
	struct map_of_sites {
		struct st_map m;
	} site_ix;
	struct block *blocks;
	uint32_t nblocks, blocks_cap, *free_blocks, nfree_blocks, free_blocks_cap;
	struct st_map live;  /* (pid, ptr) -> blocks[] */
	struct st_map freed; /* (pid, ptr) -> the site of its free, in sites[] */
	struct mproc *procs;
	uint32_t nprocs, procs_cap;
	struct bad *bads;
	uint32_t nbads, bads_cap;
	uint64_t doubles, unknowns, missed_frees;
	uint64_t hist[65];
	uint64_t allocs, frees, bytes;
	bool by_stack; /* --stack: the blocks' call stacks kept */
	struct st_stacks stacks;
};

static const struct st_heap_cls *cls_of(struct mstat *ms, const struct st_event_class *c)
{
	struct st_heap_cls *k = st_class_slot(&ms->cls, &ms->ncls, sizeof(*ms->cls), c->index);

	if (k && !k->known)
		st_heap_cls_init(k, c);
	return k;
}

static struct mproc *proc_of(struct mstat *ms, int32_t pid, int64_t ns)
{
	for (uint32_t i = 0; i < ms->nprocs; i++)
		if (ms->procs[i].pid == pid)
			return &ms->procs[i];
	if (st_grow(&ms->procs, &ms->procs_cap, ms->nprocs, sizeof(*ms->procs)) < 0)
		return NULL;
	ms->procs[ms->nprocs] = (struct mproc){ .pid = pid, .first_ns = ns };
	return &ms->procs[ms->nprocs++];
}

static int64_t site_of(struct mstat *ms, int32_t pid, uint64_t ip)
{
	int64_t i = st_map_get(&ms->site_ix.m, (uint64_t)pid, ip);

	if (i >= 0)
		return i;
	if (st_grow(&ms->sites, &ms->sites_cap, ms->nsites, sizeof(*ms->sites)) < 0 ||
	    st_map_put(&ms->site_ix.m, (uint64_t)pid, ip, ms->nsites) < 0)
		return -1;
	ms->sites[ms->nsites] = (struct asite){ .pid = pid, .ip = ip };
	return ms->nsites++;
}

static int bad(struct mstat *ms, enum bad_kind kind, int32_t pid, uint64_t ptr, uint64_t ip,
	       uint64_t before)
{
	if (kind == BAD_DOUBLE)
		ms->doubles++;
	else
		ms->unknowns++;
	if (ms->nbads == BAD_SHOWN_MAX)
		return 0;
	if (st_grow(&ms->bads, &ms->bads_cap, ms->nbads, sizeof(*ms->bads)) < 0)
		return -1;
	ms->bads[ms->nbads++] = (struct bad){ kind, pid, ptr, ip, before };
	return 0;
}

/* A free of ptr at ip: of a live block, or invalid (a pointer the trace
 * saw freed already and not allocated since: a double free; else one it
 * never saw allocated). Either way the address is now freed. */
static int do_free(struct mstat *ms, struct mproc *p, uint64_t ptr, uint64_t ip)
{
	int64_t b = st_map_del(&ms->live, (uint64_t)p->pid, ptr), before, site;

	if (b < 0) {
		before = st_map_get(&ms->freed, (uint64_t)p->pid, ptr);
		if (bad(ms, before >= 0 ? BAD_DOUBLE : BAD_UNKNOWN, p->pid, ptr, ip,
			before >= 0 ? ms->sites[before].ip : 0) < 0)
			return -1;
	} else {
		ms->sites[ms->blocks[b].site].live_blocks--;
		ms->sites[ms->blocks[b].site].live_bytes -= ms->blocks[b].size;
		p->live -= ms->blocks[b].size;
		p->frees++;
		ms->frees++;
		if (st_grow(&ms->free_blocks, &ms->free_blocks_cap, ms->nfree_blocks,
			    sizeof(*ms->free_blocks)) < 0)
			return -1;
		ms->free_blocks[ms->nfree_blocks++] = (uint32_t)b;
	}
	/* (the free's site: a site of the table, so memory grows with sites,
	 * not with frees) */
	site = site_of(ms, p->pid, ip);
	return site < 0 ? -1 : st_map_put(&ms->freed, (uint64_t)p->pid, ptr, (uint32_t)site);
}

static uint32_t size_bucket(uint64_t size)
{
	return size ? 64 - (uint32_t)__builtin_clzll(size) : 0; /* 0; 1; 2-3; 4-7; ... */
}

/* The sizes bucket b counts: [*lo, *hi]. */
static void bucket_range(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	*lo = b ? (uint64_t)1 << (b - 1) : 0;
	*hi = b == 0 ? 0 : b == 64 ? UINT64_MAX : ((uint64_t)1 << b) - 1;
}

static int do_alloc(struct mstat *ms, struct mproc *p, uint64_t ptr, uint64_t size, uint64_t ip,
		    int64_t ns, const struct st_value *stack_field)
{
	int64_t site = site_of(ms, p->pid, ip), old = st_map_del(&ms->live, (uint64_t)p->pid, ptr);
	int64_t stack = ms->by_stack && stack_field ? st_stacks_of_field(&ms->stacks, ip, stack_field) : 0;
	uint32_t b;

	if (site < 0 || stack < 0)
		return -1;
	if (old >= 0) {
		/* handed out again: its free was not traced */
		ms->missed_frees++;
		ms->sites[ms->blocks[old].site].live_blocks--;
		ms->sites[ms->blocks[old].site].live_bytes -= ms->blocks[old].size;
		p->live -= ms->blocks[old].size;
		b = (uint32_t)old;
	} else if (ms->nfree_blocks) {
		b = ms->free_blocks[--ms->nfree_blocks];
	} else {
		if (st_grow(&ms->blocks, &ms->blocks_cap, ms->nblocks, sizeof(*ms->blocks)) < 0)
			return -1;
		b = ms->nblocks++;
	}
	st_map_del(&ms->freed, (uint64_t)p->pid, ptr);
	ms->blocks[b] = (struct block){ .size = size, .site = (uint32_t)site, .stack = (uint32_t)stack };
	ms->sites[site].allocs++;
	ms->sites[site].bytes += size;
	ms->sites[site].live_blocks++;
	ms->sites[site].live_bytes += size;
	ms->hist[size_bucket(size)]++;
	ms->allocs++;
	ms->bytes += size;
	p->allocs++;
	p->live += size;
	if (p->live > p->peak) {
		p->peak = p->live;
		p->peak_ns = ns;
	}
	return st_map_put(&ms->live, (uint64_t)p->pid, ptr, b);
}

static int on_event(void *arg, const struct st_event *ev)
{
	struct mstat *ms = arg;
	const struct st_heap_cls *k = cls_of(ms, ev->cls);
	struct st_heap_change h;
	struct mproc *p;

	if (!k)
		return -1;
	if (k->op == ST_HEAP_NONE)
		return 0;
	p = proc_of(ms, ev->pid, ev->ns);
	if (!p)
		return -1;
	st_heap_change_of(k, ev, &h);
	if (h.failed) {
		p->failed++;
		return 0;
	}
	switch (h.op) {
	case ST_HEAP_ALLOC:
		return do_alloc(ms, p, h.ptr, h.size, ev->ip, ev->ns, h.stack);
	case ST_HEAP_REALLOC:
		if (h.old && do_free(ms, p, h.old, ev->ip) < 0)
			return -1;
		/* (realloc(p, 0) returning NULL: p freed only) */
		return h.ptr ? do_alloc(ms, p, h.ptr, h.size, ev->ip, ev->ns, h.stack) : 0;
	case ST_HEAP_FREE:
		return h.ptr ? do_free(ms, p, h.ptr, ev->ip) : 0;
	default:
		return 0;
	}
}

static void mstat_fini(struct mstat *ms)
{
	free(ms->cls);
	free(ms->sites);
	st_map_free(&ms->site_ix.m);
	free(ms->blocks);
	free(ms->free_blocks);
	st_map_free(&ms->live);
	st_map_free(&ms->freed);
	free(ms->procs);
	free(ms->bads);
	st_stacks_fini(&ms->stacks);
}

/* ---- output ---- */

struct out {
	const struct st_report_opts *opts;
	struct st_pass *pass;
	struct mstat *ms;
	FILE *o;
};

/* A call site as shown: the sites of one process that print the same
 * (one line of code: several calls of an unrolled loop, say) are one row. */
struct row {
	int32_t pid;
	uint64_t ip; /* the first site's, for the JSON site */
	char text[256];
	uint64_t count, bytes;
};

static bool rows_by_count;

static int row_by_site(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->pid != y->pid ? (x->pid < y->pid ? -1 : 1) : strcmp(x->text, y->text);
}

static int row_by_key(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	uint64_t kx = rows_by_count ? x->count : x->bytes, ky = rows_by_count ? y->count : y->bytes;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	return row_by_site(a, b);
}

/* The rows of the leaking sites (blocks and bytes still live) or of all
 * sites (allocations and bytes), sorted by bytes or by count. */
static struct row *rows_of(const struct mstat *ms, struct st_syms *syms, bool leaks, bool by_count,
			   uint32_t *n)
{
	struct row *v = malloc(((size_t)ms->nsites + 1) * sizeof(*v));
	uint32_t k = 0;

	*n = 0;
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < ms->nsites; i++) {
		const struct asite *s = &ms->sites[i];

		if (leaks ? !s->live_blocks : !s->allocs)
			continue; /* (a site that only freed) */
		v[k].pid = s->pid;
		v[k].ip = s->ip;
		v[k].count = leaks ? s->live_blocks : s->allocs;
		v[k].bytes = leaks ? s->live_bytes : s->bytes;
		st_site_text(syms, s->pid, s->ip, v[k].text, sizeof(v[k].text));
		k++;
	}
	qsort(v, k, sizeof(*v), row_by_site);
	for (uint32_t i = 0; i < k; i++) {
		if (*n && row_by_site(&v[*n - 1], &v[i]) == 0) {
			v[*n - 1].count += v[i].count;
			v[*n - 1].bytes += v[i].bytes;
		} else {
			v[(*n)++] = v[i];
		}
	}
	rows_by_count = by_count;
	qsort(v, *n, sizeof(*v), row_by_key);
	return v;
}

/* The leaked blocks of one call site whose allocation took a (sampled)
 * call stack, by stack (those of the sites and stacks that print the
 * same together: one line of code can be several calls, unrolled). */
struct stack_row {
	uint32_t site, stack;
	uint64_t blocks, bytes;
	char *key; /* the site's and the stack's text */
};

static int stack_row_by_key(const void *a, const void *b)
{
	return strcmp(((const struct stack_row *)a)->key, ((const struct stack_row *)b)->key);
}

static void stack_rows_free(struct stack_row *v, uint32_t n)
{
	for (uint32_t i = 0; v && i < n; i++)
		free(v[i].key);
	free(v);
}

/* Rows v (n) that print the same made one; their number. -1 when out of
 * memory. */
static int64_t stack_rows_merge(const struct mstat *ms, struct st_syms *syms,
				struct stack_row *v, uint32_t n)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct asite *s = &ms->sites[v[i].site];
		char key[4096];
		size_t len;

		len = (size_t)snprintf(key, sizeof(key), "%d ", (int)s->pid);
		st_site_text(syms, s->pid, s->ip, key + len, sizeof(key) - len);
		len = strlen(key);
		key[len++] = '\n';
		st_stacks_key(&ms->stacks, syms, s->pid, v[i].stack, key + len, sizeof(key) - len);
		v[i].key = strdup(key);
		if (!v[i].key)
			return -1;
	}
	qsort(v, n, sizeof(*v), stack_row_by_key);
	for (uint32_t i = 0; i < n; i++) {
		if (k && strcmp(v[k - 1].key, v[i].key) == 0) {
			v[k - 1].blocks += v[i].blocks;
			v[k - 1].bytes += v[i].bytes;
			free(v[i].key);
		} else {
			v[k++] = v[i];
		}
	}
	return k;
}

static int stack_row_by_bytes(const void *a, const void *b)
{
	const struct stack_row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The live blocks with a stack, summed by the site and stack they print
 * as, most bytes first; *n of them (NULL when out of memory). */
static struct stack_row *leak_stacks(const struct mstat *ms, struct st_syms *syms, uint32_t *n)
{
	int64_t merged;
	struct st_map ix = { 0 };
	struct stack_row *v = NULL;
	uint32_t cap = 0;

	*n = 0;
	for (uint32_t i = 0; i < ms->live.size; i++) {
		const struct st_map_slot *m = &ms->live.v[i];
		const struct block *b;
		int64_t k;

		if (!m->used)
			continue;
		b = &ms->blocks[m->value];
		if (!b->stack)
			continue;
		k = st_map_get(&ix, b->site, b->stack);
		if (k < 0) {
			if (st_grow(&v, &cap, *n, sizeof(*v)) < 0 || st_map_put(&ix, b->site, b->stack, *n) < 0)
				goto fail;
			v[*n] = (struct stack_row){ .site = b->site, .stack = b->stack };
			k = (*n)++;
		}
		v[k].blocks++;
		v[k].bytes += b->size;
	}
	st_map_free(&ix);
	merged = stack_rows_merge(ms, syms, v, *n);
	if (merged < 0) {
		stack_rows_free(v, *n);
		*n = 0;
		return NULL;
	}
	*n = (uint32_t)merged;
	qsort(v, *n, sizeof(*v), stack_row_by_bytes);
	return v;
fail:
	st_map_free(&ix);
	free(v);
	*n = 0;
	return NULL;
}

/* Whether stack row r is of leak row `row` (its process, a site that
 * prints as the row's). */
static bool stack_of_row(const struct mstat *ms, struct st_syms *syms, const struct stack_row *r,
			 const struct row *row)
{
	const struct asite *s = &ms->sites[r->site];
	char text[256];

	if (s->pid != row->pid)
		return false;
	st_site_text(syms, s->pid, s->ip, text, sizeof(text));
	return strcmp(text, row->text) == 0;
}

#define STACKS_SHOWN 3

/* Under leak row `row`: its sampled stacks, most bytes first. */
static void leak_stacks_text(struct out *w, const struct stack_row *v, uint32_t n,
			     const struct row *row)
{
	uint32_t shown = 0;

	for (uint32_t i = 0; i < n && shown < STACKS_SHOWN; i++) {
		if (!stack_of_row(w->ms, w->pass->syms, &v[i], row))
			continue;
		shown++;
		fprintf(w->o, "  %12" PRIu64 " %8" PRIu64 "    a stack sampled:\n", v[i].bytes, v[i].blocks);
		st_stacks_text(&w->ms->stacks, w->pass->syms, row->pid, v[i].stack, 30, w->o);
	}
}

/* The same in JSON: `, "stacks": [{"bytes", "blocks", "stack"}...]`. */
static void leak_stacks_json(struct out *w, const struct stack_row *v, uint32_t n,
			     const struct row *row)
{
	uint32_t shown = 0;

	fputs(", \"stacks\": [", w->o);
	for (uint32_t i = 0; i < n; i++) {
		if (!stack_of_row(w->ms, w->pass->syms, &v[i], row))
			continue;
		fprintf(w->o, "%s{\"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64, shown++ ? ", " : "",
			v[i].bytes, v[i].blocks);
		st_stacks_json(&w->ms->stacks, w->pass->syms, row->pid, v[i].stack, w->o);
		fputs("}", w->o);
	}
	fputs("]", w->o);
}

static void site_str(struct out *w, int32_t pid, uint64_t ip, char *buf, size_t n)
{
	st_site_text(w->pass->syms, pid, ip, buf, n);
}

static void site_json(struct out *w, int32_t pid, uint64_t ip)
{
	st_site_json(w->pass->syms, pid, ip, w->o);
}

static void text_report(struct out *w)
{
	struct mstat *ms = w->ms;
	uint32_t n, top = w->opts->top;
	uint64_t leaked = 0, leaked_blocks = 0;
	bool by_count = w->opts->sort && strcmp(w->opts->sort, "count") == 0;
	struct row *v;
	struct stack_row *stacks = NULL;
	uint32_t nstacks = 0;
	char site[512], a[32];
	FILE *o = w->o;

	fprintf(o, "shimtrace report malloc: %s: %" PRIu64 " events, %" PRIu64 " allocations (%" PRIu64
		   " bytes), %" PRIu64 " frees\n",
		w->pass->dir, w->pass->events, ms->allocs, ms->bytes, ms->frees);
	st_pass_warnings(w->pass, o);
	v = rows_of(ms, w->pass->syms, true, false, &n);
	for (uint32_t i = 0; v && i < n; i++) {
		leaked += v[i].bytes;
		leaked_blocks += v[i].count;
	}
	fprintf(o, "\nleaks: %" PRIu64 " block%s never freed, %" PRIu64 " bytes, from %" PRIu32
		   " call site%s\n",
		leaked_blocks, leaked_blocks == 1 ? "" : "s", leaked, n, n == 1 ? "" : "s");
	if (n)
		fprintf(o, "  %12s %8s  %s\n", "bytes", "blocks", "allocated at");
	if (ms->by_stack)
		stacks = leak_stacks(ms, w->pass->syms, &nstacks);
	if (stacks && nstacks)
		fprintf(o, "  (under a site: the stacks its leaked blocks were allocated from, for "
			   "the allocations that took one: a sample, record --stack's)\n");
	for (uint32_t i = 0; v && i < n && (!top || i < top); i++) {
		fprintf(o, "  %12" PRIu64 " %8" PRIu64 "  %s, pid %" PRId32 "\n", v[i].bytes, v[i].count,
			v[i].text, v[i].pid);
		if (stacks)
			leak_stacks_text(w, stacks, nstacks, &v[i]);
	}
	if (top && n > top)
		fprintf(o, "  (%" PRIu32 " more sites: --top 0 shows all)\n", n - top);
	free(v);
	stack_rows_free(stacks, nstacks);

	fprintf(o, "\npeak heap:\n");
	for (uint32_t i = 0; i < ms->nprocs; i++) {
		const struct mproc *p = &ms->procs[i];

		fprintf(o, "  pid %" PRId32 " (%s): %" PRIu64 " bytes, %s after its first allocation; %" PRIu64
			   " allocations, %" PRIu64 " frees, %" PRIu64 " failed\n",
			p->pid, st_pass_name_text(w->pass, p->pid), p->peak,
			st_fmt_ns(st_ns_since(p->first_ns, p->peak_ns), a, sizeof(a)), p->allocs, p->frees,
			p->failed);
	}

	v = rows_of(ms, w->pass->syms, false, by_count, &n);
	fprintf(o, "\nallocations by call site (by %s):\n  %12s %12s  %s\n", by_count ? "count" : "bytes",
		"bytes", "count", "site");
	for (uint32_t i = 0; v && i < n && (!top || i < top); i++)
		fprintf(o, "  %12" PRIu64 " %12" PRIu64 "  %s, pid %" PRId32 "\n", v[i].bytes, v[i].count,
			v[i].text, v[i].pid);
	if (top && n > top)
		fprintf(o, "  (%" PRIu32 " more sites)\n", n - top);
	free(v);

	fprintf(o, "\nsizes:\n");
	for (uint32_t b = 0; b < 65; b++) {
		uint64_t lo, hi;

		bucket_range(b, &lo, &hi);
		if (ms->hist[b])
			fprintf(o, "  %10" PRIu64 " - %-20" PRIu64 " %10" PRIu64 "\n", lo, hi, ms->hist[b]);
	}

	fprintf(o, "\ninvalid frees: %" PRIu64 " double, %" PRIu64 " of pointers never allocated\n",
		ms->doubles, ms->unknowns);
	for (uint32_t i = 0; i < ms->nbads && (!top || i < top); i++) {
		const struct bad *b = &ms->bads[i];
		char before[512];

		site_str(w, b->pid, b->ip, site, sizeof(site));
		if (b->kind == BAD_DOUBLE) {
			site_str(w, b->pid, b->before_ip, before, sizeof(before));
			fprintf(o, "  double free of 0x%" PRIx64 " at %s, pid %" PRId32 "; freed before at %s\n",
				b->ptr, site, b->pid, before);
		} else {
			fprintf(o, "  free of 0x%" PRIx64 ", never allocated, at %s, pid %" PRId32 "\n", b->ptr,
				site, b->pid);
		}
	}
	if (ms->missed_frees)
		fprintf(o, "\n(%" PRIu64 " blocks were handed out again without a traced free: "
			   "an allocator the trace does not see freed them)\n",
			ms->missed_frees);
}

static void json_report(struct out *w)
{
	struct mstat *ms = w->ms;
	uint32_t n, top = w->opts->top;
	bool by_count = w->opts->sort && strcmp(w->opts->sort, "count") == 0;
	struct row *v;
	struct stack_row *stacks = NULL;
	uint32_t nstacks = 0;
	FILE *o = w->o;

	st_pass_json_head(w->pass, o);
	fprintf(o, ", \"allocations\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"frees\": %" PRIu64 ",\n \"leaks\": [",
		ms->allocs, ms->bytes, ms->frees);
	v = rows_of(ms, w->pass->syms, true, false, &n);
	if (ms->by_stack)
		stacks = leak_stacks(ms, w->pass->syms, &nstacks);
	for (uint32_t i = 0; v && i < n && (!top || i < top); i++) {
		fprintf(o, "%s{\"pid\": %" PRId32 ", \"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"site\": ",
			i ? ",\n  " : "\n  ", v[i].pid, v[i].bytes, v[i].count);
		site_json(w, v[i].pid, v[i].ip);
		if (stacks)
			leak_stacks_json(w, stacks, nstacks, &v[i]);
		fputs("}", o);
	}
	free(v);
	stack_rows_free(stacks, nstacks);
	fprintf(o, "],\n \"processes\": [");
	for (uint32_t i = 0; i < ms->nprocs; i++) {
		const struct mproc *p = &ms->procs[i];

		fprintf(o, "%s{\"pid\": %" PRId32 ", \"process\": ", i ? ",\n  " : "\n  ", p->pid);
		st_json_write(o, st_pass_name(w->pass, p->pid));
		fprintf(o, ", \"peak_bytes\": %" PRIu64 ", \"peak_after_ns\": %" PRId64 ", \"allocations\": %" PRIu64
			   ", \"frees\": %" PRIu64 ", \"failed\": %" PRIu64 ", \"live_bytes\": %" PRIu64 "}",
			p->peak, (int64_t)st_ns_since(p->first_ns, p->peak_ns), p->allocs, p->frees, p->failed, p->live);
	}
	v = rows_of(ms, w->pass->syms, false, by_count, &n);
	fprintf(o, "],\n \"sites\": [");
	for (uint32_t i = 0; v && i < n && (!top || i < top); i++) {
		fprintf(o, "%s{\"pid\": %" PRId32 ", \"count\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"site\": ",
			i ? ",\n  " : "\n  ", v[i].pid, v[i].count, v[i].bytes);
		site_json(w, v[i].pid, v[i].ip);
		fputs("}", o);
	}
	free(v);
	fprintf(o, "],\n \"sizes\": [");
	for (uint32_t b = 0, k = 0; b < 65; b++) {
		uint64_t lo, hi;

		bucket_range(b, &lo, &hi);
		if (ms->hist[b])
			fprintf(o, "%s{\"from\": %" PRIu64 ", \"to\": %" PRIu64 ", \"count\": %" PRIu64 "}",
				k++ ? ", " : "", lo, hi, ms->hist[b]);
	}
	fprintf(o, "],\n \"double_frees\": %" PRIu64 ", \"unknown_frees\": %" PRIu64 ", \"invalid_frees\": [",
		ms->doubles, ms->unknowns);
	for (uint32_t i = 0; i < ms->nbads && (!top || i < top); i++) {
		const struct bad *b = &ms->bads[i];

		fprintf(o, "%s{\"kind\": \"%s\", \"pid\": %" PRId32 ", \"ptr\": \"0x%" PRIx64 "\", \"site\": ",
			i ? ",\n  " : "\n  ", b->kind == BAD_DOUBLE ? "double" : "unknown", b->pid, b->ptr);
		site_json(w, b->pid, b->ip);
		if (b->kind == BAD_DOUBLE) {
			fputs(", \"freed_before_at\": ", o);
			site_json(w, b->pid, b->before_ip);
		}
		fputs("}", o);
	}
	fprintf(o, "],\n \"missed_frees\": %" PRIu64 "}\n", ms->missed_frees);
}

int st_report_malloc(const struct st_report_opts *opts, FILE *o, char *err, size_t errlen)
{
	struct mstat ms;
	struct st_pass pass;
	struct out w = { .opts = opts, .pass = &pass, .ms = &ms, .o = o };
	int ret = 0;

	if (opts->sort && strcmp(opts->sort, "bytes") != 0 && strcmp(opts->sort, "count") != 0) {
		snprintf(err, errlen, "--sort: no field '%s' (bytes, count)", opts->sort);
		return 2;
	}
	memset(&ms, 0, sizeof(ms));
	ms.by_stack = opts->stack;
	if (st_report_pass(opts, on_event, NULL, &ms, &pass, err, errlen) < 0)
		ret = 1;
	else
		(opts->json ? json_report : text_report)(&w);
	mstat_fini(&ms);
	st_pass_fini(&pass);
	return ret;
}
