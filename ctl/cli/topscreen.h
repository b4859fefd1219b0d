/*
 * shimtrace top on a terminal (topscreen.c, with ncurses): each refresh
 * drawn over the last, cut to the screen, and the keys read between
 * refreshes.
 */
#ifndef ST_CLI_TOPSCREEN_H
#define ST_CLI_TOPSCREEN_H

#include <stddef.h>

#include "ctl/report/topview.h"

/* Takes the terminal: 0, or -1 after a one-line message (none there). */
int st_topscreen_open(void);
/* Gives it back as it was. */
void st_topscreen_close(void);

/* Draws the refresh t holds in view v, and the keys' line. */
void st_topscreen_draw(struct st_top *t, const struct st_top_view *v);

/* The next key, waiting at most ms; 0 when none came (or a signal). */
int st_topscreen_key(int ms);

/* Reads a line the user types after prompt into buf (n bytes, holding
 * the line to begin with), shown at the bottom; "" when they give up
 * (Escape). */
void st_topscreen_prompt(const char *prompt, char *buf, size_t n);

#endif
