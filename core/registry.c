/*
 * The tracepoint registry of the process.
 *
 * Objects register the contents of their st_tracepoints section from their
 * constructor (see ST_PROVIDER_DEFINE). Descriptors are grouped by provider
 * state page; each provider gets a page of the status memfd and is announced
 * to the daemon, which answers by assigning event ids and, where a session
 * asks for them, setting enable bits.
 *
 * This file keeps the table and turns providers into PROVIDER messages;
 * registration.c decides where they go. Every function here is called with
 * the connection lock held (transport.c), or single-threaded in a fork
 * child: the table and the message buffer are used by one thread at a
 * time. The event path never reads them: a tracepoint site reads only its
 * own state page.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "sys.h"

#define MAX_PROVIDERS 1024

static struct st__provider *providers[MAX_PROVIDERS];
static uint32_t nproviders;

static bool valid_tracepoint(const struct st_tracepoint *tp)
{
	if (!tp || !tp->state || ((uintptr_t)tp->state & (ST_ABI_PAGE - 1)) ||
	    tp->slot >= ST_PROVIDER_MAX_TRACEPOINTS || !st_abi_name_valid(tp->provider) ||
	    !st_abi_name_valid(tp->name) || tp->nfields > 255)
		return false;
	for (uint32_t i = 0; i < tp->nfields; i++)
		if (!st_abi_name_valid(tp->fields[i].name) || tp->fields[i].type < ST_TYPE_U8 ||
		    tp->fields[i].type > ST_TYPE_LAST)
			return false;
	return true;
}

static struct st__provider *find(const struct st_provider_state *state)
{
	for (uint32_t i = 0; i < nproviders; i++)
		if (providers[i]->state == state)
			return providers[i];
	return NULL;
}

static struct st__provider *provider_add(const struct st_tracepoint *tp, uint64_t acked)
{
	static int warned_pages, warned_gone;
	struct st__provider *p;
	int page;

	if (nproviders >= MAX_PROVIDERS)
		return NULL;
	page = st__status_attach(tp->state, acked);
	if (page == -ENOSPC)
		st__warn_once(&warned_pages, "shimtrace: no status page left for a provider: "
					     "its tracepoints stay off");
	else if (page == -EBADF && st__control)
		st__warn_once(&warned_gone, "shimtrace: the program closed the status memory's "
					    "descriptor: providers loaded from now stay off");
	if (page < 0)
		return NULL;
	p = st__mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!p)
		return NULL;
	p->state = tp->state;
	p->page = (uint32_t)page;
	strcpy(p->name, tp->provider); /* length checked by st_abi_name_valid */
	providers[nproviders++] = p;
	return p;
}

/* Appends s and its NUL at *pos if it fits before end. */
static bool put_str(uint8_t **pos, const uint8_t *end, const char *s)
{
	size_t n = strlen(s) + 1;

	if ((size_t)(end - *pos) < n)
		return false;
	memcpy(*pos, s, n);
	*pos += n;
	return true;
}

static bool put_u32(uint8_t **pos, const uint8_t *end, uint32_t v)
{
	if ((size_t)(end - *pos) < sizeof(v))
		return false;
	memcpy(*pos, &v, sizeof(v));
	*pos += sizeof(v);
	return true;
}

static bool put_tracepoint(uint8_t **pos, const uint8_t *end, const struct st_tracepoint *tp)
{
	if (!put_u32(pos, end, tp->slot) || !put_u32(pos, end, tp->nfields) ||
	    !put_str(pos, end, tp->name))
		return false;
	for (uint32_t f = 0; f < tp->nfields; f++)
		if (!put_u32(pos, end, tp->fields[f].type) || !put_str(pos, end, tp->fields[f].name))
			return false;
	return true;
}

/*
 * Encodes provider p into as many PROVIDER messages as it takes, and hands
 * each to emit.
 */
void st__registry_encode(const struct st__provider *p, st__emit_fn emit, void *arg)
{
	static uint8_t buf[ST_ABI_MSG_MAX];
	struct st_abi_provider *m = (struct st_abi_provider *)buf;
	const uint8_t *end = buf + sizeof(buf);
	uint32_t i = 0;

	while (i < p->ntps) {
		uint8_t *pos = buf + sizeof(*m);

		memset(m, 0, sizeof(*m));
		m->hdr.type = ST_MSG_PROVIDER;
		m->page = p->page;
		strcpy(m->name, p->name);
		for (; i < p->ntps; i++) {
			uint8_t *mark = pos;

			if (!put_tracepoint(&pos, end, p->tps[i])) {
				pos = mark;
				break;
			}
			m->count++;
		}
		if (m->count == 0)
			return; /* one tracepoint larger than a message: cannot happen */
		m->hdr.len = (uint32_t)(pos - buf);
		emit(buf, m->hdr.len, arg);
	}
}

void st__registry_each(st__emit_fn emit, void *arg)
{
	for (uint32_t i = 0; i < nproviders; i++)
		st__registry_encode(providers[i], emit, arg);
}

int st__registry_reattach(void)
{
	for (uint32_t i = 0; i < nproviders; i++) {
		int ret = st__status_reattach(providers[i]->state, providers[i]->page);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * Takes in the tracepoints of [begin, end); the providers they added to
 * go into touched (at most max; *all is set when there were more).
 */
uint32_t st__registry_take(const struct st_tracepoint *const *begin,
			   const struct st_tracepoint *const *end, struct st__provider **touched,
			   uint32_t max, bool *all, uint64_t acked)
{
	static int warned;
	uint32_t ntouched = 0;

	*all = false;
	for (const struct st_tracepoint *const *it = begin; it && it < end; it++) {
		const struct st_tracepoint *tp = *it;
		struct st__provider *p;
		bool dup = false, seen = false;

		if (!valid_tracepoint(tp)) {
			st__warn_once(&warned, "shimtrace: invalid tracepoint descriptor ignored");
			continue;
		}
		p = find(tp->state);
		if (!p)
			p = provider_add(tp, acked);
		if (!p || strcmp(p->name, tp->provider) != 0)
			continue;
		for (uint32_t k = 0; k < p->ntps; k++)
			dup |= p->tps[k] == tp || p->tps[k]->slot == tp->slot;
		if (dup)
			continue;
		p->tps[p->ntps++] = tp;
		for (uint32_t k = 0; k < ntouched; k++)
			seen |= touched[k] == p;
		if (!seen && ntouched < max)
			touched[ntouched++] = p;
		else if (!seen)
			*all = true;
	}
	return ntouched;
}

/*
 * Forgets the providers of [begin, end), each as a whole (all its
 * tracepoints, also those registered from elsewhere: a provider made at
 * run time unregisters all or nothing): for each, gone(page) is called
 * (to announce it) and its status page is parked until stamp is
 * acknowledged.
 */
void st__registry_drop(const struct st_tracepoint *const *begin,
		       const struct st_tracepoint *const *end, void (*gone)(uint32_t page),
		       uint64_t stamp)
{
	for (const struct st_tracepoint *const *it = begin; it && it < end; it++) {
		struct st__provider *p = *it ? find((*it)->state) : NULL;
		uint32_t i;

		if (!p)
			continue;
		gone(p->page);
		st__status_detach(p->state, p->page, stamp);
		for (i = 0; providers[i] != p; i++)
			;
		providers[i] = providers[--nproviders];
		st__munmap(p, sizeof(*p));
	}
}
