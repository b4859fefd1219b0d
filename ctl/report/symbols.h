/*
 * Call sites of a trace as `function (file:line)`: the objects each
 * process had loaded, from the trace's statedump and library events
 * (lttng_ust_statedump:bin_info and build_id, lttng_ust_lib:load, build_id
 * and unload), and each object's symbol table and DWARF line table, read
 * with elfutils' libdwfl (a separate debug file is found by build-id under
 * /usr/lib/debug/.build-id/ or by debug link, or, when the user set
 * DEBUGINFOD_URLS, from those debuginfod servers by build-id: elfutils'
 * own lookup, never made otherwise). An address no object holds,
 * or in an object that cannot be read or is no longer the file that was
 * traced (another build-id), shows as `object+0xoffset` or `0xaddress`.
 *
 * A Java site (an ip with ST_JVM_IS_SITE: jvm/jvm-tp.h) is no address:
 * it is named from the jvm provider's statedump (javasyms.h), as
 * `Class.method (File.java:line)`.
 *
 * Feed every event to st_syms_event in trace order (it keeps only the
 * statedump's), then resolve (pid, ip) pairs: one libdwfl handle per
 * object, opened at its first lookup and kept, and each answer cached. The
 * paths come from the trace: an object is read only when it is a regular
 * file, opened without blocking, as the user running the report.
 */
#ifndef ST_REPORT_SYMBOLS_H
#define ST_REPORT_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/reader/reader.h"

struct st_syms;
struct st_jsyms;

struct st_site {
	const char *function; /* NULL when unknown */
	const char *file;     /* source file (base name), NULL when unknown */
	uint32_t line;	      /* 0 when unknown */
	const char *object;   /* base name of the object, NULL when none holds ip */
	uint64_t offset;      /* ip in the object's file addresses */
	uint64_t ip;
	/* a Java site (jvm/jvm-tp.h): function "Class.method" (NULL when
	 * the trace never described its method), file and line from the
	 * jvm provider's statedump (javasyms.h); no object */
	bool java;
	uint32_t method;
	int32_t bci;
};

struct st_syms *st_syms_new(void);
void st_syms_free(struct st_syms *s);

/* Takes note of what a statedump or library event says; ignores others.
 * Returns -1 when out of memory. */
int st_syms_event(struct st_syms *s, const struct st_event *ev);
/* Whether st_syms_event takes note of events of class c: the others' need
 * not be given to it. */
bool st_syms_reads(struct st_syms *s, const struct st_event_class *c);

/* What holds ip in process pid, as of the events fed so far. The strings
 * live as long as s. */
void st_syms_resolve(struct st_syms *s, int32_t pid, uint64_t ip, struct st_site *out);

/* The variable at addr in process pid, from the symbol table of the
 * object that holds it (a lock defined static or global: "shared_lock");
 * NULL when none does (a lock in the heap, or on a stack). */
const char *st_syms_data_name(struct st_syms *s, int32_t pid, uint64_t addr);

/* The Java names the trace gave (javasyms.h): classes, threads. */
struct st_jsyms *st_syms_java(struct st_syms *s);

/* "function (file:line)", "function (object)", "object+0xoffset" or
 * "0xip" into buf, names escaped (ctl/common/escape.h); a Java site:
 * "Class.method (File.java:LINE)", "Class.method (bci N)" without a
 * line, "java method N (bci N)" when the trace never named it. */
void st_site_format(const struct st_site *site, char *buf, size_t n);

#endif
