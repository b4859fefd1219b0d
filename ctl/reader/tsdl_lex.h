/*
 * The TSDL tokenizer (tsdl_lex.c).
 */
#ifndef ST_READER_TSDL_LEX_H
#define ST_READER_TSDL_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/reader/arena.h"
#include "ctl/reader/errmsg.h"

enum st__tok_kind {
	ST__TOK_EOF,
	ST__TOK_IDENT,
	ST__TOK_NUM,
	ST__TOK_STR,
	ST__TOK_PUNCT, /* { } [ ] ( ) ; = : := . , < > + - * ... */
};

struct st__tok {
	enum st__tok_kind kind;
	size_t off;	  /* byte offset in the text */
	const char *text; /* IDENT, PUNCT: in the text, not terminated */
	size_t len;
	uint64_t num;	  /* NUM */
	char *str;	  /* STR: unescaped, in the arena */
};

struct st__lexer {
	const char *src;
	size_t len, pos;
	struct st__tok tok; /* the current token */
	struct st__arena *arena;
	struct st__tsdl_err *err;
};

void st__lex_init(struct st__lexer *lx, const char *src, size_t len, struct st__arena *a,
		  struct st__tsdl_err *err);
/* Moves to the next token; false (error set) when the text does not lex. */
bool st__lex_next(struct st__lexer *lx);
bool st__tok_is(const struct st__tok *t, const char *s);

#endif
