/*
 * --function and --probe, as record and enable take them: [NAME=]SPEC.
 * The specification is checked here with the parser the library uses
 * (dynprobe/spec.c); where it lands is known only in the process.
 */
#include <stdio.h>
#include <string.h>

#include "core/abi.h"
#include "ctl/cli/probeopts.h"
#include "ctl/common/cli.h"

int st_probe_opt_parse(const char *verb, bool function, const char *arg, struct st_probe_opt *out)
{
	const char *eq = strchr(arg, '='), *spec = eq ? eq + 1 : arg;
	const char *opt = function ? "--function" : "--probe";
	struct dp_spec s;
	char why[256];

	memset(out, 0, sizeof(*out));
	out->function = function;
	if (eq) {
		size_t n = (size_t)(eq - arg);

		if (n == 0 || n >= sizeof(out->name)) {
			st_err(verb, "%s %s: NAME=SPEC wants a name of 1 to 63 characters", opt, arg);
			return -1;
		}
		memcpy(out->name, arg, n);
		if (strncmp(out->name, "probe:", 6) == 0)
			memmove(out->name, out->name + 6, strlen(out->name + 6) + 1);
		if (!st_abi_name_valid(out->name)) {
			st_err(verb, "%s %s: '%s' is not a tracepoint name (letters, digits and '_', "
				     "not first)", opt, arg, out->name);
			return -1;
		}
	}
	if (dp_spec_parse(spec, &s, why, sizeof(why)) < 0) {
		st_err(verb, "%s %s: %s (ADDR, SYM, SYM+OFF or LIB:SYM)", opt, arg, why);
		return -1;
	}
	snprintf(out->spec, sizeof(out->spec), "%s", spec);
	if (!out->name[0])
		dp_spec_default_name(&s, out->name, sizeof(out->name));
	return 0;
}

void st_probe_opt_pattern(const struct st_probe_opt *p, char *out, size_t n)
{
	snprintf(out, n, "probe:%s", p->name[0] ? p->name : "*");
}

bool st_probe_opts_env(const struct st_probe_opt *p, int n, char *out, size_t cap)
{
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		int w = snprintf(out + len, cap - len, "%s%s:%s:%s", i ? "," : "",
				 p[i].function ? "function" : "probe", p[i].name, p[i].spec);

		if (w < 0 || (size_t)w >= cap - len)
			return false;
		len += (size_t)w;
	}
	return true;
}

int st_probe_opt_enable(const char *verb, const struct st_probe_opt *p, int nops, char **ops,
			const char *pids, char *pattern, size_t n)
{
	const char *name;

	if (nops != 1 || !pids || strchr(pids, ',')) {
		st_err(verb, "usage: shimtrace %s NAME --pid PID %s SPEC", verb,
		       p->function ? "--function" : "--probe");
		return -1;
	}
	name = strncmp(ops[0], "probe:", 6) == 0 ? ops[0] + 6 : ops[0];
	if (!st_abi_name_valid(name)) {
		st_err(verb, "'%s' is not a probe name (letters, digits and '_', not first)", ops[0]);
		return -1;
	}
	snprintf(pattern, n, "probe:%s", name);
	return 0;
}
