/*
 * SHIMTRACE_TEST_LOSE=PROVIDER:NAME/K in the daemon's environment (or
 * record's, whose daemon is in-process): about one record in K of that
 * event class, of fixed size, is dropped by the consumer as if the buffer
 * had lost it. The packet ends before it, and the stream's next packet
 * counts it in events_discarded (the stream's losses, as one lost writing
 * is counted: trace.c), so readers see a gap exactly there.
 *
 * Which records: those whose ring time hashes to 0 modulo K. That depends
 * on the record alone, so a run read twice (a line table awaited) loses
 * the same ones, and the events a trace holds plus those it says were
 * lost are all that were written. For tests only: the environment is the
 * daemon's own, set by whoever starts it, never a traced process's.
 *
 * Owns: the rule, read once.
 * Thread: the consumer's (the daemon's reactor thread).
 * Calls: none.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/daemon/drain/testlose.h"
#include "ctl/daemon/out/evclass.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct {
	bool on;
	char provider[ST_ABI_NAME_MAX], name[ST_ABI_NAME_MAX];
	uint64_t every;
} rule;

static void read_rule(void)
{
	const char *v = getenv("SHIMTRACE_TEST_LOSE");
	unsigned long long k;
	int n = 0;

	if (!v)
		return;
	if (sscanf(v, "%63[^:]:%63[^/]/%llu%n", rule.provider, rule.name, &k, &n) != 3 ||
	    v[n] != '\0' || k == 0) {
		fprintf(stderr, "SHIMTRACE_TEST_LOSE: '%s' is not PROVIDER:NAME/K (ignored)\n", v);
		return;
	}
	rule.every = k;
	rule.on = true;
}

bool st_test_lose_class(const struct st_evclass *c)
{
	pthread_once(&once, read_rule);
	return rule.on && c && c->fixed_size >= 0 && strcmp(c->provider, rule.provider) == 0 &&
	       strcmp(c->name, rule.name) == 0;
}

bool st_test_lose(const struct st_evclass *c, uint64_t ts)
{
	return st_test_lose_class(c) && (ts * 0x9E3779B97F4A7C15ull >> 32) % rule.every == 0;
}
