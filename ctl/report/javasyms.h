/*
 * Java sites by name (javasyms.c): what the jvm provider's statedump says
 * (jvm/jvm-tp.h: jvm:class, jvm:method, jvm:method_line, and the Java
 * thread names of jvm:thread_start), kept per process (the numbers are a
 * JVM's own), and a Java site (an ip with ST_JVM_IS_SITE) as its class,
 * method and source line.
 *
 * A method's name ("com.acme.Bank.transfer") and its line table (sorted)
 * are made once, at its first lookup after what the trace said of it
 * changed; a site is then a map lookup and a binary search. A site of a
 * method the trace never described is answered with its numbers only.
 */
#ifndef ST_REPORT_JAVASYMS_H
#define ST_REPORT_JAVASYMS_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/common/escape.h"
#include "ctl/reader/reader.h"
#include "shimtrace/tracepoint.h" /* ST_STRING_MAX */

struct st_jsyms;

/* A Java site: method NULL when the trace never described it. The
 * strings live as long as the st_jsyms (and until its next event). */
struct st_jsite {
	uint32_t method_id;
	int32_t bci;	    /* -1: none (a native frame) */
	const char *method; /* "com.acme.Bank.transfer", or NULL */
	const char *file;   /* "Bank.java", or NULL when none */
	uint32_t line;	    /* 0 when unknown */
};

struct st_jsyms *st_jsyms_new(void);
void st_jsyms_free(struct st_jsyms *j);

/* Whether events of class c say something st_jsyms_event keeps. */
bool st_jsyms_reads(struct st_jsyms *j, const struct st_event_class *c);
/* Takes note of a jvm statedump or thread_start event (others are
 * ignored); -1 when out of memory. */
int st_jsyms_event(struct st_jsyms *j, const struct st_event *ev);

/* Java site ip of process pid (ST_JVM_IS_SITE(ip)). */
void st_jsyms_site(struct st_jsyms *j, int32_t pid, uint64_t ip, struct st_jsite *out);
/* The name of class number cls of process pid ("com.acme.Account"), or
 * NULL when the trace did not say it. */
const char *st_jsyms_class(const struct st_jsyms *j, int32_t pid, uint32_t cls);
/* A monitor's name in buf: "monitor of com.acme.Pool", its class cls's,
 * escaped for text (cut at a whole escape when buf is short) or not, for
 * JSON, or "monitor of class N" when the trace did not name the class.
 * ST_JSYMS_MONITOR_NAME_SIZE bytes hold any. */
#define ST_JSYMS_MONITOR_NAME_SIZE (ST_ESC_SIZE(ST_STRING_MAX) + 16)
void st_jsyms_monitor_name(const struct st_jsyms *j, int32_t pid, uint32_t cls, bool text,
			   char *buf, size_t n);
/* The Java name of thread tid of process pid, or NULL when it has none. */
const char *st_jsyms_thread(const struct st_jsyms *j, int32_t pid, int32_t tid);

#endif
