/*
 * Text that others wrote, shown to people: what a traced process says of
 * itself (its comm, its executable's path), what a trace holds (the
 * strings of its events, the names in its metadata and statedump, the
 * symbols of the objects it names), what another user named (a trace
 * directory). A process that names itself ESC]2;...BEL must not set the
 * terminal's title of the root who runs `shimtrace list`, nor hide text,
 * nor make a line that looks like another process's.
 *
 * The rule, for text (ST_ESC_TEXT): a character of valid UTF-8 that is not
 * a control character is shown as it is; a control character -- C0 (below
 * 0x20), DEL (0x7f) and C1 (U+0080 to U+009F, which a terminal may read
 * as ESC [ and the like) -- is shown as \xHH for each of its bytes, and so
 * is each byte that does not begin a valid UTF-8 sequence (cut short,
 * overlong, a surrogate, beyond U+10FFFF: a lone 0x9b is CSI to an 8-bit
 * terminal); a backslash is shown as \\, so that what is shown reads back
 * unambiguously. ST_ESC_QUOTE escapes '"' as \" too, for strings shown
 * between double quotes.
 *
 * For JSON (ST_ESC_JSON) the same characters are escaped as JSON wants:
 * '"' and '\' with a backslash, control characters as \u00HH, and a byte
 * that is not UTF-8 as \ufffd (JSON is UTF-8: a raw byte would make the
 * whole document invalid). Everything else is copied.
 *
 * The escaping is for display; the bytes stay data where they are data
 * (the trace's shimtrace:process event, --procname rules, which compare
 * them raw).
 */
#ifndef ST_CTL_ESCAPE_H
#define ST_CTL_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
	ST_ESC_TEXT = 0,
	ST_ESC_QUOTE = 1, /* text between double quotes: '"' as \" */
	ST_ESC_JSON = 2,  /* the inside of a JSON string */
};

/* The buffer that holds n bytes escaped as text, with the NUL: a byte
 * becomes at most 4 ("\xHH"). */
#define ST_ESC_SIZE(n) (4 * (n) + 1)
/* The most one character becomes (a C1 control as text: 2 bytes, 8); the
 * room with which st_esc_part always makes progress. */
#define ST_ESC_UNIT_MAX 8

/*
 * The character at s (n > 0 bytes): returns its length in bytes (1 to 4)
 * and sets *cp to its code point, or returns 1 with *cp = -1 for a byte
 * that does not begin a valid UTF-8 sequence.
 */
uint32_t st_utf8_char(const unsigned char *s, size_t n, int32_t *cp);

/* Whether code point cp is a control character: C0, DEL or C1. */
static inline bool st_is_control(int32_t cp)
{
	return cp >= 0 && (cp < 0x20 || (cp >= 0x7f && cp < 0xa0));
}

/*
 * Escapes (flags: ST_ESC_*) what fits of the n bytes at s into dst (cap
 * bytes, not terminated): whole characters, so that a cut never splits an
 * escape. Returns the bytes written; *used is the bytes of s taken (0 only
 * when cap < ST_ESC_UNIT_MAX and the next character's escape does not fit).
 */
size_t st_esc_part(char *dst, size_t cap, const void *s, size_t n, unsigned flags, size_t *used);

/* Appends s escaped as text to the string in dst (cap bytes with its NUL),
 * as much as fits; returns the new length. */
size_t st_esc_cat(char *dst, size_t cap, const char *s);
/* s escaped as text into dst (cap bytes, NUL-terminated, cut at a whole
 * escape when too small: ST_ESC_SIZE(strlen(s)) always holds it); returns
 * dst, for printf arguments. */
const char *st_esc(char *dst, size_t cap, const char *s);

/* The n bytes at s escaped (flags) on f. */
void st_esc_write(FILE *f, const void *s, size_t n, unsigned flags);
/* s as a JSON string, quotes included, on f. */
void st_json_write(FILE *f, const char *s);
/* The same, or null when s is NULL. */
void st_json_write_or_null(FILE *f, const char *s);

#endif
