/*
 * Tracepoints defined at run time.
 *
 * A provider here is a name and a state page of its own, mapped anonymous
 * and page-aligned as the registry requires of any provider (mmap gives
 * both). A tracepoint is a descriptor, its fields and their names in one
 * allocation, given the provider's next slot, and registered on its own:
 * the registry finds its provider by the state page (the first tracepoint
 * of a provider brings the provider in: a page of the status memory is
 * mapped over ours), adds the tracepoint and announces the provider again
 * with all its tracepoints; when a daemon is there, it answers by giving
 * the new one an event id and setting its enable bits where a session's
 * rule matches, before st_tracepoints_register returns. So a tracepoint is
 * recorded from its definition on, as a static one is from the start.
 *
 * Nothing is ever unregistered or freed: the program may fire a tracepoint
 * until it ends (Java holds the descriptor's address, and reads the state
 * page through a ByteBuffer), and the registry drops a provider as a whole
 * whenever any of its tracepoints goes.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "java/native/dynamic.h"

struct provider {
	struct provider *next;
	struct st_provider_state *state;
	/* its tracepoints, newest first: held here, where a leak checker
	 * sees them (the registry's note of them is in memory it does not
	 * scan, and Java's is a number) */
	struct dyn_tp *tps;
	uint32_t ntps; /* slots given */
	char name[];
};

/* A tracepoint and what its descriptor points to, in one block. */
struct dyn_tp {
	struct st_tracepoint tp;
	const struct st_tracepoint *self; /* the one-entry "section" registered */
	struct dyn_tp *next;		  /* its provider's one before */
	struct st_field fields[];
	/* then the names: provider, tracepoint, fields */
};

static struct provider *providers;

static struct provider *provider_of(const char *name)
{
	struct provider *p;

	for (p = providers; p; p = p->next)
		if (strcmp(p->name, name) == 0)
			return p;
	p = malloc(sizeof(*p) + strlen(name) + 1);
	if (!p)
		return NULL;
	p->state = mmap(NULL, sizeof(*p->state), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	if (p->state == MAP_FAILED) {
		free(p);
		return NULL;
	}
	p->tps = NULL;
	p->ntps = 0;
	strcpy(p->name, name);
	p->next = providers;
	providers = p;
	return p;
}

/* Copies s at *at, returns the copy and moves *at past it. */
static const char *put_name(char **at, const char *s)
{
	size_t n = strlen(s) + 1;
	char *copy = memcpy(*at, s, n);

	*at += n;
	return copy;
}

const struct st_tracepoint *st_dyn_define(const char *provider, const char *name, uint32_t nfields,
					  const char *const *names, const uint32_t *types)
{
	struct provider *p = provider_of(provider);
	size_t size = sizeof(struct dyn_tp) + (nfields + 1) * sizeof(struct st_field) +
		      strlen(provider) + strlen(name) + 2;
	struct dyn_tp *d;
	char *at;

	if (!p || p->ntps >= ST_PROVIDER_MAX_TRACEPOINTS)
		return NULL;
	for (uint32_t i = 0; i < nfields; i++)
		size += strlen(names[i]) + 1;
	d = calloc(1, size);
	if (!d)
		return NULL;
	at = (char *)&d->fields[nfields + 1];
	d->tp.provider = put_name(&at, provider);
	d->tp.name = put_name(&at, name);
	for (uint32_t i = 0; i < nfields; i++) {
		d->fields[i].name = put_name(&at, names[i]);
		d->fields[i].type = types[i];
	}
	d->tp.fields = d->fields;
	d->tp.nfields = nfields;
	d->tp.slot = p->ntps++;
	d->tp.state = p->state;
	d->self = &d->tp;
	d->next = p->tps;
	p->tps = d;
	st_tracepoints_register(&d->self, &d->self + 1);
	return &d->tp;
}
