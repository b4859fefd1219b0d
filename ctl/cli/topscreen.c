/*
 * shimtrace top on a terminal (see topscreen.h). ncurses, not escape
 * sequences of our own: it knows each terminal's (terminfo), redraws only
 * what changed, and follows the window's size. The lines come from
 * topview.c, as the batch output has them, cut at the screen's width;
 * the locks shown are as many as the screen has rows for.
 */
#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/cli/topscreen.h"
#include "ctl/common/cli.h"

static SCREEN *screen;

int st_topscreen_open(void)
{
	screen = newterm(NULL, stdout, stdin);
	if (!screen) {
		st_err("top", "cannot use the terminal (TERM=%s): use --batch N",
		       getenv("TERM") ? getenv("TERM") : "");
		return -1;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	return 0;
}

void st_topscreen_close(void)
{
	if (!screen)
		return;
	endwin();
	delscreen(screen);
	screen = NULL;
}

struct drawing {
	int y, rows;
};

static void draw_line(void *arg, enum st_top_line kind, const char *text)
{
	struct drawing *d = arg;

	if (d->y >= d->rows)
		return;
	if (kind == ST_TOP_HEAD)
		attron(A_REVERSE);
	else if (kind == ST_TOP_TITLE)
		attron(A_BOLD);
	mvaddnstr(d->y++, 0, text, COLS);
	if (kind == ST_TOP_HEAD) {
		/* (the heads' bar across the screen) */
		for (int x = (int)strlen(text); x < COLS; x++)
			addch(' ');
		attroff(A_REVERSE);
	}
	attroff(A_BOLD);
}

void st_topscreen_draw(struct st_top *t, const struct st_top_view *v)
{
	/* (the last line: the keys) */
	struct drawing d = { 0, LINES - 1 };
	char keys[256];
	int notes = 2 + (v->extra != NULL) + (t->state.damaged != 0) +
		    (t->state.incomplete[0] != 0);

	erase();
	st_top_render(t, v, LINES - 1 - notes > 0 ? (uint32_t)(LINES - 1 - notes) : 1, draw_line,
		      &d);
	snprintf(keys, sizeof(keys),
		 "q quit  t %s  sort: w wait  c contended  a acquired  h hold  / filter%s%s  "
		 "space refresh",
		 v->run ? "last interval" : "whole run", v->filter && *v->filter ? ": " : "",
		 v->filter && *v->filter ? v->filter : "");
	attron(A_REVERSE);
	mvaddnstr(LINES - 1, 0, keys, COLS);
	attroff(A_REVERSE);
	refresh();
}

int st_topscreen_key(int ms)
{
	int c;

	timeout(ms);
	c = getch();
	return c == ERR ? 0 : c;
}

void st_topscreen_prompt(const char *prompt, char *buf, size_t n)
{
	size_t len = strnlen(buf, n - 1);
	int c;

	timeout(-1);
	curs_set(1);
	for (;;) {
		move(LINES - 1, 0);
		clrtoeol();
		mvaddnstr(LINES - 1, 0, prompt, COLS);
		addnstr(buf, (int)len);
		refresh();
		c = getch();
		if (c == '\n' || c == KEY_ENTER)
			break;
		if (c == 27) { /* Escape */
			len = 0;
			break;
		}
		if ((c == KEY_BACKSPACE || c == 127 || c == 8) && len)
			len--;
		else if (c >= 0x20 && c < 0x7f && len + 1 < n)
			buf[len++] = (char)c;
	}
	buf[len] = '\0';
	curs_set(0);
}
