/*
 * shimtrace top's refreshes as people and scripts read them (topview.c):
 * the rows of locktop.h ranked, filtered and laid out as lines of text
 * (a title, notes on what could not be shown, column heads, one line a
 * lock: for the batch output and the screen alike), or as one JSON
 * object.
 */
#ifndef ST_REPORT_TOPVIEW_H
#define ST_REPORT_TOPVIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl/report/locktop.h"

enum st_top_sort { ST_TOP_WAIT, ST_TOP_CONTENDED, ST_TOP_ACQUIRED, ST_TOP_HOLD, ST_TOP_SORTS };

/* "wait", "contended", "acquired", "hold"; and back: -1 for none. */
const char *st_top_sort_name(enum st_top_sort s);
int st_top_sort_parse(const char *name);

struct st_top_view {
	bool run;		/* the whole run, not the last interval */
	enum st_top_sort sort;
	const char *filter;	/* only the locks whose line holds it (NULL, "": all) */
	const char *what;	/* what is followed, for the title (escaped) */
	const char *extra;	/* a note of the caller's, or NULL */
};

enum st_top_line { ST_TOP_TITLE, ST_TOP_NOTE, ST_TOP_HEAD, ST_TOP_ROW };

typedef void (*st_top_sink)(void *arg, enum st_top_line kind, const char *text);

/*
 * The refresh t holds in view v, line by line to sink: the title, notes,
 * the column heads and the first max locks ranked (0: all) that the
 * filter keeps (in the interval view, those contended in it or waited
 * for now). Returns how many it kept.
 */
uint32_t st_top_render(struct st_top *t, const struct st_top_view *v, uint32_t max,
		       st_top_sink sink, void *arg);

/* The same as one line of JSON on out (its schema: shimtrace(1), top). */
void st_top_json(struct st_top *t, const struct st_top_view *v, uint32_t max, FILE *out);

#endif
