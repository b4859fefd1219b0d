/*
 * The tracepoint registry of the process.
 *
 * Objects register the contents of their st_tracepoints section from their
 * constructor (see ST_PROVIDER_DEFINE). Descriptors are grouped by provider
 * state page; each provider gets a page of the status memfd and is announced
 * to the daemon, which answers by assigning event ids and, where a session
 * asks for them, setting enable bits.
 *
 * Registration runs in constructors and destructors, which the dynamic
 * loader serialises, or single-threaded in a fork child: the provider table
 * needs no lock. Event writers never read it.
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
		    tp->fields[i].type > ST_TYPE_STRING)
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

static struct st__provider *provider_add(const struct st_tracepoint *tp)
{
	struct st__provider *p;
	int page;

	if (nproviders >= MAX_PROVIDERS)
		return NULL;
	page = st__status_attach(tp->state);
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

enum { TO_DAEMON = 1, TO_LOG = 2 };

/*
 * Announces provider p, in as many messages as it takes, to the daemon
 * and/or the registration log.
 */
static void provider_send(const struct st__provider *p, int to)
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
		if (to & TO_LOG)
			st__status_log(buf, m->hdr.len);
		if ((to & TO_DAEMON) && st__control_send(buf, m->hdr.len, -1) < 0)
			to &= ~TO_DAEMON;
	}
}

uint32_t st__registry_send_all(void)
{
	for (uint32_t i = 0; i < nproviders; i++)
		provider_send(providers[i], TO_DAEMON);
	return nproviders;
}

void st__registry_log_all(void)
{
	for (uint32_t i = 0; i < nproviders; i++)
		provider_send(providers[i], TO_LOG);
}

int st__registry_reattach(void)
{
	for (uint32_t i = 0; i < nproviders; i++) {
		int ret = st__status_reattach(providers[i]->state, providers[i]->page);

		if (ret < 0)
			return ret;
	}
	st__registry_log_all();
	return 0;
}

ST_API void st_tracepoints_register(const struct st_tracepoint *const *begin,
				    const struct st_tracepoint *const *end)
{
	static int warned;
	struct st__provider *touched[16];
	uint32_t ntouched = 0, busy;
	bool overflow = false;

	st__init();
	busy = st__tls.busy;
	st__tls.busy = 2;
	for (const struct st_tracepoint *const *it = begin; it && it < end; it++) {
		const struct st_tracepoint *tp = *it;
		struct st__provider *p;
		bool dup = false;

		if (!valid_tracepoint(tp)) {
			st__warn_once(&warned, "shimtrace: invalid tracepoint descriptor ignored");
			continue;
		}
		p = find(tp->state);
		if (!p)
			p = provider_add(tp);
		if (!p || strcmp(p->name, tp->provider) != 0)
			continue;
		for (uint32_t k = 0; k < p->ntps; k++)
			dup |= p->tps[k] == tp || p->tps[k]->slot == tp->slot;
		if (dup)
			continue;
		p->tps[p->ntps++] = tp;
		bool seen = false;

		for (uint32_t k = 0; k < ntouched; k++)
			seen |= touched[k] == p;
		if (!seen && ntouched < 16)
			touched[ntouched++] = p;
		else if (!seen)
			overflow = true;
	}
	/* Announce what this object brought (the daemon takes repeats). The
	 * log gets whole providers: its reader starts from nothing. */
	if (overflow) {
		for (uint32_t i = 0; i < nproviders; i++)
			provider_send(providers[i], TO_LOG | (st__ctl_fd >= 0 ? TO_DAEMON : 0));
	} else {
		for (uint32_t k = 0; k < ntouched; k++)
			provider_send(touched[k], TO_LOG | (st__ctl_fd >= 0 ? TO_DAEMON : 0));
	}
	if (st__ctl_fd >= 0 && ntouched)
		st__control_synced();
	st__tls.busy = busy;
}

ST_API void st_tracepoints_unregister(const struct st_tracepoint *const *begin,
				      const struct st_tracepoint *const *end)
{
	uint32_t busy = st__tls.busy;

	st__tls.busy = 2;
	for (const struct st_tracepoint *const *it = begin; it && it < end; it++) {
		struct st__provider *p = *it ? find((*it)->state) : NULL;
		struct st_abi_provider_gone m = { { ST_MSG_PROVIDER_GONE, sizeof(m) }, 0, 0 };
		uint32_t i;

		if (!p)
			continue;
		m.page = p->page;
		st__status_log(&m, sizeof(m));
		st__control_send(&m, sizeof(m), -1);
		st__status_detach(p->state, p->page);
		for (i = 0; providers[i] != p; i++)
			;
		providers[i] = providers[--nproviders];
		st__munmap(p, sizeof(*p));
	}
	st__tls.busy = busy;
}
