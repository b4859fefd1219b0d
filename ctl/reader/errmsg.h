/*
 * The reader's error messages (errmsg.c): they quote trace text, so they
 * are kept on one line; a metadata parse keeps its first error.
 */
#ifndef ST_READER_ERRMSG_H
#define ST_READER_ERRMSG_H

#include <stdbool.h>
#include <stddef.h>

/* The first error wins; later ones are consequences. */
struct st__tsdl_err {
	bool failed;
	size_t off;
	char msg[256];
};

/* Sets e's error to fmt at byte offset off, unless it holds one. */
void st__tsdl_fail(struct st__tsdl_err *e, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Error messages quote trace text: keep them on one line. */
static inline void st__one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

#endif
