/*
 * TSDL tokenizer: identifiers, integer literals (decimal, 0x hex, 0 octal,
 * C suffixes ignored), string literals with C escapes, punctuation.
 * Comments (C and C++ style) and whitespace separate tokens. Each token
 * knows its byte offset, for error messages.
 */
#include <stdio.h>
#include <string.h>

#include "ctl/reader/arena.h"
#include "ctl/reader/errmsg.h"
#include "ctl/reader/tsdl_lex.h"

void st__lex_init(struct st__lexer *lx, const char *src, size_t len, struct st__arena *a,
		  struct st__tsdl_err *err)
{
	memset(lx, 0, sizeof(*lx));
	lx->src = src;
	lx->len = len;
	lx->arena = a;
	lx->err = err;
}

bool st__tok_is(const struct st__tok *t, const char *s)
{
	size_t n = strlen(s);

	return (t->kind == ST__TOK_IDENT || t->kind == ST__TOK_PUNCT) && t->len == n &&
	       memcmp(t->text, s, n) == 0;
}

static bool is_ident_start(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_ident(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static int digit(char c, unsigned base)
{
	int d;

	if (c >= '0' && c <= '9')
		d = c - '0';
	else if (c >= 'a' && c <= 'f')
		d = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		d = c - 'A' + 10;
	else
		return -1;
	return (unsigned)d < base ? d : -1;
}

/* Skips whitespace and comments; false on an unterminated comment. */
static bool skip_space(struct st__lexer *lx)
{
	const char *s = lx->src;

	while (lx->pos < lx->len) {
		char c = s[lx->pos];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			lx->pos++;
		} else if (c == '/' && lx->pos + 1 < lx->len && s[lx->pos + 1] == '*') {
			size_t p = lx->pos + 2;

			while (p + 1 < lx->len && !(s[p] == '*' && s[p + 1] == '/'))
				p++;
			if (p + 1 >= lx->len) {
				st__tsdl_fail(lx->err, lx->pos, "unterminated comment");
				return false;
			}
			lx->pos = p + 2;
		} else if (c == '/' && lx->pos + 1 < lx->len && s[lx->pos + 1] == '/') {
			const char *nl = memchr(s + lx->pos, '\n', lx->len - lx->pos);

			lx->pos = nl ? (size_t)(nl - s) + 1 : lx->len;
		} else {
			break;
		}
	}
	return true;
}

static bool lex_number(struct st__lexer *lx)
{
	const char *s = lx->src;
	size_t p = lx->pos;
	unsigned base = 10;
	uint64_t v = 0;
	bool any = false;

	if (s[p] == '0' && p + 1 < lx->len && (s[p + 1] == 'x' || s[p + 1] == 'X')) {
		base = 16;
		p += 2;
	} else if (s[p] == '0') {
		base = 8;
		p++;
		any = true; /* "0" alone */
	}
	for (int d; p < lx->len && (d = digit(s[p], base)) >= 0; p++) {
		if (v > (UINT64_MAX - (uint64_t)d) / base) {
			st__tsdl_fail(lx->err, lx->pos, "number too large");
			return false;
		}
		v = v * base + (uint64_t)d;
		any = true;
	}
	while (p < lx->len && (s[p] == 'u' || s[p] == 'U' || s[p] == 'l' || s[p] == 'L'))
		p++;
	if (!any || (p < lx->len && is_ident(s[p]))) {
		st__tsdl_fail(lx->err, lx->pos, "malformed number");
		return false;
	}
	lx->tok.kind = ST__TOK_NUM;
	lx->tok.num = v;
	lx->tok.text = s + lx->pos;
	lx->tok.len = p - lx->pos;
	lx->pos = p;
	return true;
}

/* One escape after the backslash at s[*p]; the byte it stands for. */
static bool lex_escape(struct st__lexer *lx, size_t *p, char *out)
{
	const char *s = lx->src;
	size_t q = *p + 1;
	unsigned v = 0, n = 0;

	if (q >= lx->len)
		return false;
	switch (s[q]) {
	case 'n': *out = '\n'; break;
	case 't': *out = '\t'; break;
	case 'r': *out = '\r'; break;
	case 'a': *out = '\a'; break;
	case 'b': *out = '\b'; break;
	case 'f': *out = '\f'; break;
	case 'v': *out = '\v'; break;
	case '\\': case '"': case '\'': case '?': *out = s[q]; break;
	case 'x':
		for (q++; q < lx->len && n < 2 && digit(s[q], 16) >= 0; q++, n++)
			v = v * 16 + (unsigned)digit(s[q], 16);
		if (n == 0)
			return false;
		*out = (char)v;
		*p = q;
		return true;
	default:
		for (; q < lx->len && n < 3 && digit(s[q], 8) >= 0; q++, n++)
			v = v * 8 + (unsigned)digit(s[q], 8);
		if (n == 0 || v > 255)
			return false;
		*out = (char)v;
		*p = q;
		return true;
	}
	*p = q + 1;
	return true;
}

static bool lex_string(struct st__lexer *lx)
{
	const char *s = lx->src;
	size_t p = lx->pos + 1, n = 0;
	char *buf;

	/* The unescaped text is never longer than the literal. */
	const char *end = NULL;
	for (size_t q = p; q < lx->len; q++) {
		if (s[q] == '\\') {
			q++;
		} else if (s[q] == '"') {
			end = s + q;
			break;
		}
	}
	if (!end) {
		st__tsdl_fail(lx->err, lx->pos, "unterminated string");
		return false;
	}
	buf = st__arena_alloc(lx->arena, (size_t)(end - s) - p + 1);
	if (!buf) {
		st__tsdl_fail(lx->err, lx->pos, "out of memory");
		return false;
	}
	while (s + p < end) {
		if (s[p] == '\\') {
			if (!lex_escape(lx, &p, &buf[n])) {
				st__tsdl_fail(lx->err, p, "bad escape sequence in string");
				return false;
			}
			n++;
		} else {
			buf[n++] = s[p++];
		}
	}
	buf[n] = '\0';
	lx->tok.kind = ST__TOK_STR;
	lx->tok.str = buf;
	lx->tok.text = s + lx->pos;
	lx->tok.len = (size_t)(end - s) + 1 - lx->pos;
	lx->pos = (size_t)(end - s) + 1;
	return true;
}

bool st__lex_next(struct st__lexer *lx)
{
	const char *s = lx->src;
	char c;

	memset(&lx->tok, 0, sizeof(lx->tok));
	if (lx->err->failed || !skip_space(lx))
		return false;
	lx->tok.off = lx->pos;
	if (lx->pos >= lx->len) {
		lx->tok.kind = ST__TOK_EOF;
		return true;
	}
	c = s[lx->pos];
	if (is_ident_start(c)) {
		size_t p = lx->pos;

		while (p < lx->len && is_ident(s[p]))
			p++;
		lx->tok.kind = ST__TOK_IDENT;
		lx->tok.text = s + lx->pos;
		lx->tok.len = p - lx->pos;
		lx->pos = p;
		return true;
	}
	if (c >= '0' && c <= '9')
		return lex_number(lx);
	if (c == '"')
		return lex_string(lx);
	lx->tok.kind = ST__TOK_PUNCT;
	lx->tok.text = s + lx->pos;
	lx->tok.len = 1;
	if (c == ':' && lx->pos + 1 < lx->len && s[lx->pos + 1] == '=')
		lx->tok.len = 2;
	else if (c == '.' && lx->pos + 2 < lx->len && s[lx->pos + 1] == '.' && s[lx->pos + 2] == '.')
		lx->tok.len = 3;
	else if (!strchr("{}[]();=:.,<>+-*", c) || c == '\0') {
		if (c > 0x20 && c < 0x7f)
			st__tsdl_fail(lx->err, lx->pos, "unexpected character '%c'", c);
		else
			st__tsdl_fail(lx->err, lx->pos, "unexpected byte 0x%02x", (unsigned char)c);
		return false;
	}
	lx->pos += lx->tok.len;
	return true;
}
