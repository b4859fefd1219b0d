/*
 * --function and --probe (probeopts.c): the dynamic probes record plants
 * in the command and enable plants in a running process, as given on
 * the command line ([NAME=]SPEC), checked before anything runs.
 */
#ifndef ST_CLI_PROBEOPTS_H
#define ST_CLI_PROBEOPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "dynprobe/spec.h"

#define ST_PROBES_MAX 64

struct st_probe_opt {
	bool function;	/* --function: arg0..arg5 and the caller; else a bare probe */
	char name[64];	/* the tracepoint's name, "" when it is the library's to choose */
	char spec[DP_SPEC_MAX];
};

/*
 * Parses --function (function) or --probe's argument, [NAME=]SPEC, into
 * out; -1 after a one-line error naming verb.
 */
int st_probe_opt_parse(const char *verb, bool function, const char *arg, struct st_probe_opt *out);

/* The pattern that records probe p: probe:NAME, or probe:* when its name
 * is the library's to choose. */
void st_probe_opt_pattern(const struct st_probe_opt *p, char *out, size_t n);

/* SHIMTRACE_PROBES's value for the n probes (KIND:NAME:SPEC,...);
 * false when it does not fit. */
bool st_probe_opts_env(const struct st_probe_opt *p, int n, char *out, size_t cap);

/*
 * enable NAME --pid PID --function|--probe SPEC: checks NAME (or
 * probe:NAME) and that one pid was given (pids: the --pid argument, or
 * NULL), and writes the rule's pattern, probe:NAME, to pattern. 0, or -1
 * after a one-line error.
 */
int st_probe_opt_enable(const char *verb, const struct st_probe_opt *p, int nops, char **ops,
			const char *pids, char *pattern, size_t n);

#endif /* ST_CLI_PROBEOPTS_H */
