/*
 * The tracepoints of the wrapper families, generated from their specs
 * (gen-wrappers catalog), and of the agents (ST_CATALOG_AGENTS): what
 * `record -e` patterns are checked against and which libraries a pattern
 * needs.
 */
#ifndef ST_CTL_CATALOG_H
#define ST_CTL_CATALOG_H

#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>

struct st_catalog_entry {
	const char *provider; /* also the family: libshimtrace-PROVIDER.so */
	const char *name;
	const char *fields;   /* "TYPE name, ..." for listings */
	bool agent;	      /* the library is an agent a runtime loads (the
			       * JVM's -agentpath), not preloaded */
};

/*
 * The providers of the agents, after the families' entries in the
 * generated catalog: each tracepoint list expanded into entries, so that
 * the catalog knows them as it knows the specs'.
 */
#include "jvm/jvm-tp.h"
#define ST__CATALOG_F(T, n) ", " #T " " #n
#define ST__CATALOG_TP(prov, name, fields) { #prov, #name, &(fields)[2], true },
#define ST_CATALOG_AGENTS ST_JVM_TRACEPOINTS(ST__CATALOG_TP, ST__CATALOG_F)

extern const struct st_catalog_entry st_catalog[];
extern const unsigned st_catalog_count;

/* Whether the glob pattern (over provider:name) matches e. */
static inline bool st_catalog_match(const struct st_catalog_entry *e, const char *pattern)
{
	char full[160];

	snprintf(full, sizeof(full), "%s:%s", e->provider, e->name);
	return fnmatch(pattern, full, 0) == 0;
}

/*
 * The full names of family's tracepoints recorded only on request, which
 * record's default disables after FAMILY:* (catalog_defaults.c says which,
 * and why), into out (room of them): their number, or -1 when there is no
 * room. The names are static.
 */
int st_catalog_on_request(const char *family, const char **out, int room);

/* The most st_catalog_on_request gives for all the families together. */
#define ST_CATALOG_ON_REQUEST_MAX 8

/* What record --lock-order asks for: the lock order of Java monitors, the
 * only lock order that does not come with its family's other events, and
 * (with -e) the event whose monitor it precedes. */
#define ST_CATALOG_LOCK_ORDER "jvm:monitor_held"
#define ST_CATALOG_LOCK_ORDER_ENTER "jvm:monitor_contended_enter"

/* The most st_catalog_names adds. */
#define ST_CATALOG_NAMES_MAX 3

/*
 * The tracepoints that give the names of what other tracepoints number
 * (the JVM agent's statedump, catalog_names.c) that patterns[0..n) leave
 * out although they select one of those: their full names into add (room
 * for ST_CATALOG_NAMES_MAX), their number returned.
 */
int st_catalog_names(const char *const *patterns, int n, const char **add);

/*
 * Whether pattern names a family's provider exactly (pthread:...,
 * malloc:...) but none of its tracepoints: a typo (the family's
 * tracepoints are all known; another provider's may come with the
 * program). Then 1, with a one-line message in msg naming the nearest
 * tracepoint; else 0.
 */
int st_catalog_typo(const char *pattern, char *msg, size_t n);

#endif
