/*
 * Interning, for a Perfetto trace (pfintern.c): a number for each distinct
 * value of a kind, 1, 2, 3... in the order they come, as Perfetto's
 * interned data wants (an iid per kind: event names, frames, call
 * stacks...): a value written once in a packet's InternedData is referred
 * to by its number after. Values are bytes (a string, an array of
 * numbers); each is copied. Memory grows with the distinct values.
 */
#ifndef ST_REPORT_PFINTERN_H
#define ST_REPORT_PFINTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/report/map.h"
#include "ctl/report/pbwrite.h"

#define ST_INTERN_KINDS 16

struct st_intern {
	struct st_map ix; /* (kind, hash + probe) -> v[] */
	struct st_interned {
		uint64_t number;
		size_t len;
		void *bytes;
	} *v;
	uint32_t n, cap;
	uint64_t last[ST_INTERN_KINDS]; /* the number last given, per kind */
};

/* The number of the n bytes at p among the values of kind (less than
 * ST_INTERN_KINDS), *fresh set when it is new: the caller writes it
 * out then. 0 when out of memory. */
uint64_t st_intern(struct st_intern *t, uint32_t kind, const void *p, size_t n, bool *fresh);
/* The number of string s among kind's, written into in (the fields of an
 * InternedData being made) when new, as an entry of its field field
 * shaped {iid = 1, s = 2}: an EventName, EventCategory,
 * DebugAnnotationName or InternedString. 0 when out of memory (then
 * in->failed). */
uint64_t st_intern_string(struct st_intern *t, uint32_t kind, const char *s, uint32_t field,
			  struct st_pb *in);
void st_intern_free(struct st_intern *t);

#endif
