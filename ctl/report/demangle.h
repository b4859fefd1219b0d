/*
 * C++ names as people read them (demangle.c): tc_acquire_table(THD*,
 * TDC_element*) for _Z16tc_acquire_tableP3THDP11TDC_element, in every
 * report, summary and export; --no-demangle keeps them raw.
 */
#ifndef ST_REPORT_DEMANGLE_H
#define ST_REPORT_DEMANGLE_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/report/map.h"

/* Whether names are demangled (the commands' --no-demangle clears it). */
extern bool st_demangle_names;

/* The demangled names found so far, by the address of the raw one (the
 * objects' string tables stay mapped while the reader runs). */
struct st_demangler {
	struct st_map ix;
	char **names;
	uint32_t n, cap;
};

/* name demangled, when it is a mangled C++ name and st_demangle_names is
 * on; else name itself. The result lives as long as d. */
const char *st_demangle(struct st_demangler *d, const char *name);
void st_demangler_free(struct st_demangler *d);

#endif
