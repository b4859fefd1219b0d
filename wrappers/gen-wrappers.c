/*
 * gen-wrappers: turns a wrapper spec into C.
 *
 *   gen-wrappers family FAMILY.spec OUT.h OUT.c
 *       the provider declaration (an X-macro list for <shimtrace/tracepoint.h>)
 *       and the interposers of one preload library
 *   gen-wrappers catalog OUT.c FAMILY.spec...
 *       the table of every wrapper tracepoint, for the CLI
 *   gen-wrappers meanings OUT.h FAMILY.spec...
 *       what the tracepoints mean to the reports (means= below): for each
 *       family an X-macro ST_FAMILY_MEANINGS(M) of M("provider:tp", WHAT,
 *       KIND, FIELD) rows, WHAT and KIND in capitals (NONE when no kind
 *       is given), FIELD a string or NULL
 *
 * Spec grammar (one statement per line, '#' starts a comment):
 *
 *   provider NAME                 the tracepoint provider (first statement)
 *   include <HEADER>              a header the prototypes need
 *   fail EXPR [errno=E]           what a wrapper returns (and sets errno
 *                                 to, if given) when the real function
 *                                 cannot be found; before the first entry,
 *                                 the default of the file, within an entry,
 *                                 that wrapper's
 *   tracepoint TP [means=...] TYPE:NAME...
 *                                 a tracepoint that hand-written code of the
 *                                 family writes (no wrapper writes it)
 *   call RET NAME(PARAMS)         wrap NAME: the clock is read before the real
 *                                 call, the event written after it
 *   lock RET NAME(PARAMS)         wrap a blocking lock function (see below)
 *   statements of an entry (call and lock):
 *     event TP FIELD...           the event written after the real call
 *     unresolved abort            abort instead of failing when the real
 *                                 function cannot be found, as lock
 *                                 wrappers always do: a lock or unlock that
 *                                 returns without doing it lets callers
 *                                 that ignore the result race
 *     noreturn                    the real function does not return
 *     via FUNCTION                the real function is called through
 *                                 FUNCTION(real, PARAMS), traced or not
 *                                 (a hand-written helper of the family)
 *     callable                    also define st__call_NAME(ip, PARAMS),
 *                                 hidden: the wrapper for hand-written code
 *                                 of the family, which passes its own
 *                                 caller's address (execl calls execv's)
 *     bootstrap FUNCTION          while the real function is being looked
 *                                 up on this thread (dlsym calling back into
 *                                 the family), FUNCTION(PARAMS) serves calls
 *     quiet                       the family's functions the real function
 *                                 calls are not traced (they are its
 *                                 implementation: malloc in operator new),
 *                                 until one of them fails (returns its
 *                                 fail value): what follows handles the
 *                                 failure (C++: the exception's object,
 *                                 whose free comes later, outside) and is
 *                                 traced; kept right across a C++
 *                                 exception (the family is built with
 *                                 -fexceptions)
 *     vararg TYPE NAME when=COND  a variadic function (PARAMS end in ...):
 *                                 its optional argument, read only when
 *                                 COND holds over the parameters (else 0),
 *                                 passed on to the real function and
 *                                 usable in fields as NAME
 *   of an event, an entry or a wait, before its fields:
 *     means=WHAT[.KIND][@FIELD]   what the event means to the reports
 *                                 (report locks, malloc, io; export): an
 *                                 action (acquire, release, alloc, read...),
 *                                 what it acts on (a kind of lock; items:
 *                                 fread's result counts items of `size`)
 *                                 and the field naming the object (the
 *                                 lock's address); every use of a
 *                                 tracepoint says the same, or none does
 *   of a call entry:
 *     keep TYPE NAME=EXPR         NAME, usable in the event's fields, holds
 *                                 EXPR as it was before the real call (what
 *                                 the call destroys: fclose's descriptor)
 *     entry TP [when=COND] [means=...] FIELD...
 *                                 an event written before the real call: a
 *                                 call that blocks, or that a thread can be
 *                                 cancelled in, shows that it began even
 *                                 if it never returns (a call may have an
 *                                 entry, an event, or both); with when=,
 *                                 only when COND holds over the parameters
 *                                 (fcntl: only the commands that wait)
 *   of a lock entry:
 *     wait TP FIELD...            the event written before blocking
 *     try CALL [OPTION...]        the non-blocking attempt; options, in any
 *                                 order:
 *       when=COND                 the attempt is made only when COND holds
 *                                 (else the real call, timed, is made
 *                                 directly)
 *       uncontended=COND          when COND holds, nothing can hold the lock:
 *                                 the real call is made directly, wait 0
 *       busy=COND                 the attempt found the lock held (COND over
 *                                 `ret` and errno; default ret==EBUSY)
 *
 *   FIELD is TYPE:NAME=EXPR, TYPE one of the <shimtrace/tracepoint.h> field
 *   types, EXPR a C expression without spaces over the parameters and, in
 *   an event, `ret` (the return value), errno as the real call left it,
 *   and `dur_ns` (call: the time the call took) or `wait_ns` (lock: the
 *   time it waited).
 *
 * A lock wrapper tries first. Success (or any result that is not busy): one
 * `event` with wait_ns 0. Busy: the `wait` event, errno as it was before
 * the attempt, the real blocking call, then `event` with the time waited.
 * Tracepoints may be shared by several wrappers if their fields agree.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXF 16
#define MAXP 16
#define MAXEV 256
#define MAXW 256

struct field {
	char type[16];
	char name[64];
	char expr[256];
};

struct event {
	char name[64];
	struct field f[MAXF];
	int nf;
	char means[128]; /* as given (means=), "" when none */
	char what[32], kind[32], on[64]; /* its parts: KIND "" when none, on "" */
	int line; /* of its first use */
};

struct param {
	char decl[256];
	char name[64];
};

enum kind { CALL, LOCK };

struct wrap {
	enum kind kind;
	char ret[64];
	char name[64];
	struct param p[MAXP];
	int np;
	char try_fn[64];
	char try_args[256];
	char try_when[256];
	char uncontended[256];
	char busy[256];
	char fail[128], fail_errno[64]; /* "" : the file's */
	char via[64], bootstrap[64];
	int quiet, variadic, callable;
	char va_type[64], va_name[64], va_when[256];
	char keep_type[64], keep_name[64], keep_expr[256];
	char entry_when[256]; /* "": always */
	int ev, wait, entry; /* event indices; -1 when absent */
	struct field ev_f[MAXF], wait_f[MAXF], entry_f[MAXF];
	int ev_nf, wait_nf, entry_nf;
	int abort_unresolved, noreturn;
	int line;
};

struct spec {
	const char *path;
	char provider[64];
	char includes[32][128];
	int nincludes;
	char fail[128], fail_errno[64];
	struct event ev[MAXEV];
	int nev;
	struct wrap w[MAXW];
	int nw;
	int quiet; /* some wrapper is quiet */
};

static const char *types[] = { "U8",  "U16",   "U32",    "U64",  "S8",    "S16",    "S32",
			       "S64", "HEX64", "STRING", "SIZE", "STACK", "DOUBLE", NULL };

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static void die(const struct spec *s, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gen-wrappers: %s:%d: ", s ? s->path : "-", line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void copy(const struct spec *s, int line, char *dst, size_t n, const char *src, size_t len)
{
	if (len >= n)
		die(s, line, "'%.*s' is too long", (int)len, src);
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static int is_ident(const char *p, size_t n)
{
	if (n == 0 || !(isalpha((unsigned char)p[0]) || p[0] == '_'))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)p[i]) || p[i] == '_'))
			return 0;
	return 1;
}

static int is_type(const char *t)
{
	for (int i = 0; types[i]; i++)
		if (strcmp(types[i], t) == 0)
			return 1;
	return 0;
}

/* Splits "TYPE:NAME=EXPR" tokens following the event name. */
static int parse_fields(struct spec *s, int line, char *rest, struct field *f)
{
	int n = 0;

	for (char *tok = strtok(rest, " \t"); tok; tok = strtok(NULL, " \t")) {
		char *colon = strchr(tok, ':'), *eq = colon ? strchr(colon, '=') : NULL;

		if (!colon || !eq || eq[1] == '\0')
			die(s, line, "field '%s' is not TYPE:NAME=EXPR", tok);
		if (n == MAXF)
			die(s, line, "more than %d fields", MAXF);
		copy(s, line, f[n].type, sizeof(f[n].type), tok, (size_t)(colon - tok));
		copy(s, line, f[n].name, sizeof(f[n].name), colon + 1, (size_t)(eq - colon - 1));
		copy(s, line, f[n].expr, sizeof(f[n].expr), eq + 1, strlen(eq + 1));
		if (!is_type(f[n].type))
			die(s, line, "unknown field type '%s'", f[n].type);
		if (!is_ident(f[n].name, strlen(f[n].name)))
			die(s, line, "field name '%s' is not an identifier", f[n].name);
		n++;
	}
	return n;
}

/* Splits means "WHAT[.KIND][@FIELD]" into e's parts, FIELD one of its
 * fields. */
static void split_means(struct spec *s, int line, struct event *e)
{
	char *at = strchr(e->means, '@'), *dot = strchr(e->means, '.');
	size_t wl = strcspn(e->means, ".@");

	if (at && dot > at)
		dot = NULL;
	copy(s, line, e->what, sizeof(e->what), e->means, wl);
	if (dot)
		copy(s, line, e->kind, sizeof(e->kind), dot + 1,
		     at ? (size_t)(at - dot - 1) : strlen(dot + 1));
	if (at)
		copy(s, line, e->on, sizeof(e->on), at + 1, strlen(at + 1));
	if (!is_ident(e->what, strlen(e->what)) || (dot && !is_ident(e->kind, strlen(e->kind))) ||
	    (at && !is_ident(e->on, strlen(e->on))))
		die(s, line, "means=%s is not WHAT[.KIND][@FIELD]", e->means);
	for (int k = 0; at && k < e->nf; k++)
		if (strcmp(e->f[k].name, e->on) == 0)
			return;
	if (at)
		die(s, line, "means=%s: %s has no field %s", e->means, e->name, e->on);
}

/* Declares event `name` with fields f and meaning means ("" for none), or
 * checks it matches its twin. */
static int event_use(struct spec *s, int line, const char *name, const struct field *f, int nf,
		     const char *means)
{
	struct event *e;

	if (!is_ident(name, strlen(name)))
		die(s, line, "event name '%s' is not an identifier", name);
	for (int i = 0; i < s->nev; i++) {
		e = &s->ev[i];
		if (strcmp(e->name, name) != 0)
			continue;
		if (e->nf != nf)
			die(s, line, "event %s redeclared with other fields", name);
		for (int k = 0; k < nf; k++)
			if (strcmp(e->f[k].type, f[k].type) || strcmp(e->f[k].name, f[k].name))
				die(s, line, "event %s redeclared with other fields", name);
		if (strcmp(e->means, means) != 0)
			die(s, line, "event %s means '%s' here, '%s' at line %d", name, means, e->means,
			    e->line);
		return i;
	}
	if (s->nev == MAXEV)
		die(s, line, "too many events");
	e = &s->ev[s->nev];
	copy(s, line, e->name, sizeof(e->name), name, strlen(name));
	memcpy(e->f, f, sizeof(*f) * (size_t)nf);
	e->nf = nf;
	e->line = line;
	copy(s, line, e->means, sizeof(e->means), means, strlen(means));
	if (means[0])
		split_means(s, line, e);
	return s->nev++;
}

/* Sets dst from an option "KEY=VALUE" (VALUE not empty), once. */
static void option(struct spec *s, int line, const char *tok, const char *key, char *dst,
		   size_t n)
{
	const char *v = tok + strlen(key) + 1;

	if (dst[0])
		die(s, line, "option %s given twice", key);
	if (!*v)
		die(s, line, "option %s needs a value", key);
	copy(s, line, dst, n, v, strlen(v));
}

/* True when tok is "KEY=..." */
static int is_option(const char *tok, const char *key)
{
	size_t k = strlen(key);

	return strncmp(tok, key, k) == 0 && tok[k] == '=';
}

/* "try CALL [when=COND] [uncontended=COND] [busy=COND]", options in any
 * order. */
static void parse_try(struct spec *s, int line, struct wrap *w, char *rest)
{
	char *call = strtok(rest, " \t"), *open, *close;

	if (!w || w->kind != LOCK)
		die(s, line, "'try' belongs to a lock wrapper");
	if (w->try_fn[0])
		die(s, line, "%s has two 'try' statements", w->name);
	if (!call)
		die(s, line, "expected try FUNCTION(ARGS)");
	open = strchr(call, '(');
	close = strrchr(call, ')');
	if (!open || !close || close < open || close[1] != '\0')
		die(s, line, "expected try FUNCTION(ARGS)");
	copy(s, line, w->try_fn, sizeof(w->try_fn), call, (size_t)(open - call));
	copy(s, line, w->try_args, sizeof(w->try_args), open + 1, (size_t)(close - open - 1));
	if (!is_ident(w->try_fn, strlen(w->try_fn)))
		die(s, line, "try needs a function name");
	for (char *tok = strtok(NULL, " \t"); tok; tok = strtok(NULL, " \t")) {
		if (is_option(tok, "when"))
			option(s, line, tok, "when", w->try_when, sizeof(w->try_when));
		else if (is_option(tok, "uncontended"))
			option(s, line, tok, "uncontended", w->uncontended, sizeof(w->uncontended));
		else if (is_option(tok, "busy"))
			option(s, line, tok, "busy", w->busy, sizeof(w->busy));
		else
			die(s, line, "unknown option '%s' of try (when=, uncontended=, busy=)", tok);
	}
}

/* Splits [text, end), "TYPE NAME", at its last identifier: NAME into name,
 * what is before it (spaces trimmed) into type unless NULL. False when
 * there is no identifier at the end, or nothing before it. */
static int split_decl(struct spec *s, int line, const char *text, const char *end, char *type,
		      size_t ntype, char *name, size_t nname)
{
	const char *n;

	while (end > text && isspace((unsigned char)end[-1]))
		end--;
	n = end;
	while (n > text && (isalnum((unsigned char)n[-1]) || n[-1] == '_'))
		n--;
	if (!is_ident(n, (size_t)(end - n)))
		return 0;
	copy(s, line, name, nname, n, (size_t)(end - n));
	while (n > text && isspace((unsigned char)n[-1]))
		n--;
	if (n == text)
		return 0;
	if (type)
		copy(s, line, type, ntype, text, (size_t)(n - text));
	return 1;
}

/* "vararg TYPE NAME when=COND" */
static void parse_vararg(struct spec *s, int line, struct wrap *w, char *rest)
{
	char *when = strstr(rest, " when=");

	if (!w || w->va_name[0])
		die(s, line, "'vararg' belongs to a wrapper, once");
	if (!when || !when[6])
		die(s, line, "expected vararg TYPE NAME when=COND");
	copy(s, line, w->va_when, sizeof(w->va_when), when + 6, strlen(when + 6));
	if (strchr(w->va_when, ' ') || strchr(w->va_when, '\t'))
		die(s, line, "vararg's when= takes an expression without spaces");
	if (!split_decl(s, line, rest, when, w->va_type, sizeof(w->va_type), w->va_name,
			sizeof(w->va_name)))
		die(s, line, "expected vararg TYPE NAME when=COND");
}

/* "KW FUNCTION" of a wrapper, once, into dst (n bytes). */
static void function_of(struct spec *s, int line, const struct wrap *w, const char *kw,
			const char *rest, char *dst, size_t n)
{
	if (!w || dst[0] || !is_ident(rest, strlen(rest)))
		die(s, line, "'%s FUNCTION' belongs to a wrapper, once", kw);
	copy(s, line, dst, n, rest, strlen(rest));
}

/* "KW" alone, of a wrapper. */
static void flag_of(struct spec *s, int line, const struct wrap *w, const char *kw,
		    const char *rest)
{
	if (!w || *rest)
		die(s, line, "'%s' belongs to a wrapper and takes nothing", kw);
}

/* "fail EXPR [errno=E]" into fail and fail_errno. */
static void parse_fail(struct spec *s, int line, char *rest, char *fail, size_t nf, char *err,
		       size_t ne)
{
	char *expr = strtok(rest, " \t"), *tok;

	if (!expr)
		die(s, line, "expected fail EXPR [errno=E]");
	copy(s, line, fail, nf, expr, strlen(expr));
	err[0] = '\0';
	while ((tok = strtok(NULL, " \t"))) {
		if (!is_option(tok, "errno"))
			die(s, line, "unknown option '%s' of fail (errno=)", tok);
		option(s, line, tok, "errno", err, ne);
	}
}

/* Parses "RET NAME(PARAMS)". */
static void parse_proto(struct spec *s, int line, char *text, struct wrap *w)
{
	char *open = strchr(text, '('), *close = strrchr(text, ')');
	char *params;

	if (!open || !close || close < open ||
	    !split_decl(s, line, text, open, w->ret, sizeof(w->ret), w->name, sizeof(w->name)))
		die(s, line, "expected RET NAME(PARAMS)");
	*close = '\0';
	params = open + 1;
	if (strcmp(params, "void") == 0 || *params == '\0')
		return;
	for (char *p = strtok(params, ","); p; p = strtok(NULL, ",")) {
		struct param *pa = &w->p[w->np];
		char *end;

		if (w->np == MAXP)
			die(s, line, "too many parameters");
		while (isspace((unsigned char)*p))
			p++;
		if (w->variadic)
			die(s, line, "'...' must be the last parameter");
		if (strncmp(p, "...", 3) == 0) {
			if (w->np == 0)
				die(s, line, "'...' needs a parameter before it");
			w->variadic = 1;
			continue;
		}
		end = p + strlen(p);
		while (end > p && isspace((unsigned char)end[-1]))
			end--;
		copy(s, line, pa->decl, sizeof(pa->decl), p, (size_t)(end - p));
		/* (an array, "int fds[2]": the name is before the brackets) */
		if (end > p && end[-1] == ']' && memchr(p, '[', (size_t)(end - p)))
			end = memchr(p, '[', (size_t)(end - p));
		if (!split_decl(s, line, p, end, NULL, 0, pa->name, sizeof(pa->name)))
			die(s, line, "parameter '%s' needs a type and a name", pa->decl);
		w->np++;
	}
}

/* Whether identifier id appears in expression e. */
static int mentions(const char *e, const char *id)
{
	size_t n = strlen(id);

	for (const char *p = strstr(e, id); p; p = strstr(p + 1, id)) {
		int before = p > e && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[n]) || p[n] == '_';

		if (!before && !after)
			return 1;
	}
	return 0;
}

/* Whether identifier id appears in a field expression of f. */
static int uses(const struct field *f, int nf, const char *id)
{
	for (int i = 0; i < nf; i++)
		if (mentions(f[i].expr, id))
			return 1;
	return 0;
}

static void check_wrap(struct spec *s, const struct wrap *w)
{
	if (w->ev < 0 && w->entry < 0)
		die(s, w->line, "%s has no event", w->name);
	if (w->kind == LOCK && (w->wait < 0 || !w->try_fn[0] || w->ev < 0))
		die(s, w->line, "lock %s needs try, wait and event", w->name);
	if (w->kind == CALL && (w->wait >= 0 || w->try_fn[0]))
		die(s, w->line, "call %s cannot have try or wait", w->name);
	if (w->noreturn && (w->ev >= 0 || strcmp(w->ret, "void") != 0))
		die(s, w->line, "noreturn %s returns void and has an entry event only", w->name);
	if (uses(w->entry_f, w->entry_nf, "ret") || uses(w->entry_f, w->entry_nf, "dur_ns") ||
	    mentions(w->entry_when, "ret") || mentions(w->entry_when, "dur_ns"))
		die(s, w->line, "the entry event of %s cannot use ret or dur_ns", w->name);
	if (w->kind == LOCK && uses(w->ev_f, w->ev_nf, "dur_ns"))
		die(s, w->line, "lock %s has wait_ns, not dur_ns", w->name);
	if (w->kind == CALL && uses(w->ev_f, w->ev_nf, "wait_ns"))
		die(s, w->line, "call %s has dur_ns, not wait_ns", w->name);
	if (w->variadic != !!w->va_name[0])
		die(s, w->line, "%s: a variadic function (PARAMS ending in ...) and a vararg go together",
		    w->name);
}

static void parse(struct spec *s, const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[1024];
	int line = 0;
	struct wrap *w = NULL;

	memset(s, 0, sizeof(*s));
	s->path = path;
	strcpy(s->fail, "0");
	if (!f)
		die(s, 0, "cannot open: %s", strerror(errno));
	while (fgets(buf, sizeof(buf), f)) {
		char *p = buf, *kw, *rest;

		line++;
		if (!strchr(buf, '\n') && !feof(f))
			die(s, line, "line too long");
		buf[strcspn(buf, "#\n")] = '\0';
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			continue;
		kw = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
		while (isspace((unsigned char)*p))
			p++;
		rest = p;
		if (!s->provider[0] && strcmp(kw, "provider") != 0)
			die(s, line, "the first statement must be 'provider NAME'");
		if (strcmp(kw, "provider") == 0) {
			if (!is_ident(rest, strlen(rest)))
				die(s, line, "provider name '%s' is not an identifier", rest);
			copy(s, line, s->provider, sizeof(s->provider), rest, strlen(rest));
		} else if (strcmp(kw, "include") == 0) {
			if (s->nincludes == 32)
				die(s, line, "too many includes");
			copy(s, line, s->includes[s->nincludes++], 128, rest, strlen(rest));
		} else if (strcmp(kw, "fail") == 0) {
			if (w)
				parse_fail(s, line, rest, w->fail, sizeof(w->fail), w->fail_errno,
					   sizeof(w->fail_errno));
			else
				parse_fail(s, line, rest, s->fail, sizeof(s->fail), s->fail_errno,
					   sizeof(s->fail_errno));
		} else if (strcmp(kw, "call") == 0 || strcmp(kw, "lock") == 0) {
			if (w)
				check_wrap(s, w);
			if (s->nw == MAXW)
				die(s, line, "too many wrappers");
			w = &s->w[s->nw++];
			w->kind = kw[0] == 'c' ? CALL : LOCK;
			w->abort_unresolved = w->kind == LOCK;
			w->ev = w->wait = w->entry = -1;
			w->line = line;
			parse_proto(s, line, rest, w);
			for (int i = 0; i < s->nw - 1; i++)
				if (strcmp(s->w[i].name, w->name) == 0)
					die(s, line, "%s is wrapped twice", w->name);
		} else if (strcmp(kw, "event") == 0 || strcmp(kw, "wait") == 0 ||
			   strcmp(kw, "entry") == 0) {
			char *name = strtok(rest, " \t"), *fields = strtok(NULL, "");
			char means[128] = "";
			struct field *fl;
			int *nf, *ev;

			if (!w || !name)
				die(s, line, "'%s' must follow call/lock and name an event", kw);
			if (kw[1] == 'v') {
				fl = w->ev_f, nf = &w->ev_nf, ev = &w->ev;
			} else if (kw[0] == 'w') {
				fl = w->wait_f, nf = &w->wait_nf, ev = &w->wait;
			} else {
				if (w->kind != CALL)
					die(s, line, "'entry' belongs to a call wrapper");
				fl = w->entry_f, nf = &w->entry_nf, ev = &w->entry;
			}
			if (*ev >= 0)
				die(s, line, "%s has two '%s' statements", w->name, kw);
			/* options, in any order, before the fields */
			while (fields && (is_option(fields, "when") || is_option(fields, "means"))) {
				size_t len = strcspn(fields, " \t");

				if (fields[0] == 'w') {
					if (ev != &w->entry || len == 5 || w->entry_when[0])
						die(s, line, "when=COND belongs to an entry, before its fields");
					copy(s, line, w->entry_when, sizeof(w->entry_when), fields + 5, len - 5);
				} else {
					if (len == 6 || means[0])
						die(s, line, "means= takes WHAT[.KIND][@FIELD], once");
					copy(s, line, means, sizeof(means), fields + 6, len - 6);
				}
				fields = fields[len] ? fields + len + 1 : NULL;
			}
			*nf = fields ? parse_fields(s, line, fields, fl) : 0;
			*ev = event_use(s, line, name, fl, *nf, means);
		} else if (strcmp(kw, "tracepoint") == 0) {
			char *name = strtok(rest, " \t"), *fields = strtok(NULL, "");
			struct field fl[MAXF];
			char means[128] = "";
			int nf = 0;

			if (!name)
				die(s, line, "expected tracepoint NAME [means=...] TYPE:FIELD...");
			for (char *tok = fields ? strtok(fields, " \t") : NULL; tok;
			     tok = strtok(NULL, " \t")) {
				char *colon = strchr(tok, ':');

				if (nf == 0 && strncmp(tok, "means=", 6) == 0) {
					option(s, line, tok, "means", means, sizeof(means));
					continue;
				}
				if (!colon || strchr(tok, '='))
					die(s, line, "field '%s' of a tracepoint is not TYPE:NAME", tok);
				if (nf == MAXF)
					die(s, line, "more than %d fields", MAXF);
				copy(s, line, fl[nf].type, sizeof(fl[nf].type), tok, (size_t)(colon - tok));
				copy(s, line, fl[nf].name, sizeof(fl[nf].name), colon + 1, strlen(colon + 1));
				fl[nf].expr[0] = '\0';
				if (!is_type(fl[nf].type))
					die(s, line, "unknown field type '%s'", fl[nf].type);
				if (!is_ident(fl[nf].name, strlen(fl[nf].name)))
					die(s, line, "field name '%s' is not an identifier", fl[nf].name);
				nf++;
			}
			event_use(s, line, name, fl, nf, means);
		} else if (strcmp(kw, "bootstrap") == 0) {
			function_of(s, line, w, kw, rest, w ? w->bootstrap : NULL, sizeof(w->bootstrap));
		} else if (strcmp(kw, "via") == 0) {
			function_of(s, line, w, kw, rest, w ? w->via : NULL, sizeof(w->via));
		} else if (strcmp(kw, "quiet") == 0) {
			flag_of(s, line, w, kw, rest);
			w->quiet = s->quiet = 1;
		} else if (strcmp(kw, "noreturn") == 0) {
			flag_of(s, line, w, kw, rest);
			w->noreturn = 1;
		} else if (strcmp(kw, "callable") == 0) {
			flag_of(s, line, w, kw, rest);
			w->callable = 1;
		} else if (strcmp(kw, "vararg") == 0) {
			parse_vararg(s, line, w, rest);
		} else if (strcmp(kw, "keep") == 0) {
			char *eq = strchr(rest, '=');

			if (!w || w->kind != CALL || w->keep_name[0])
				die(s, line, "'keep' belongs to a call wrapper, once");
			if (!eq || !eq[1] || strchr(eq, ' ') ||
			    !split_decl(s, line, rest, eq, w->keep_type, sizeof(w->keep_type),
					w->keep_name, sizeof(w->keep_name)))
				die(s, line, "expected keep TYPE NAME=EXPR (EXPR without spaces)");
			copy(s, line, w->keep_expr, sizeof(w->keep_expr), eq + 1, strlen(eq + 1));
		} else if (strcmp(kw, "unresolved") == 0) {
			if (!w || strcmp(rest, "abort") != 0)
				die(s, line, "'unresolved abort' belongs to a call or lock wrapper");
			w->abort_unresolved = 1;
		} else if (strcmp(kw, "try") == 0) {
			parse_try(s, line, w, rest);
		} else {
			die(s, line, "unknown statement '%s'", kw);
		}
	}
	fclose(f);
	if (w)
		check_wrap(s, w);
	if (s->nw == 0 && s->nev == 0)
		die(s, line, "no wrappers and no tracepoints");
	for (int i = 0; i < s->nw; i++) {
		int found = !s->w[i].try_fn[0];

		for (int k = 0; k < s->nw && !found; k++)
			found = strcmp(s->w[k].name, s->w[i].try_fn) == 0;
		if (!found)
			die(s, s->w[i].line, "try function %s must be wrapped too", s->w[i].try_fn);
	}
}

static int is_void(const struct wrap *w)
{
	return strcmp(w->ret, "void") == 0;
}

/* The parameters as the function declares them (a variadic one's end in
 * ...). */
static void params(FILE *o, const struct wrap *w, int leading_comma)
{
	for (int i = 0; i < w->np; i++)
		fprintf(o, "%s%s", i || leading_comma ? ", " : "", w->p[i].decl);
	if (w->variadic)
		fprintf(o, ", ...");
	if (!w->np && !leading_comma)
		fprintf(o, "void");
}

/* The parameters of our internal functions: a variadic function's optional
 * argument is one of them. */
static void params_in(FILE *o, const struct wrap *w, int leading_comma)
{
	for (int i = 0; i < w->np; i++)
		fprintf(o, "%s%s", i || leading_comma ? ", " : "", w->p[i].decl);
	if (w->variadic)
		fprintf(o, ", %s %s", w->va_type, w->va_name);
	if (!w->np && !w->variadic && !leading_comma)
		fprintf(o, "void");
}

/* The arguments of a call, the optional one included. */
static void args(FILE *o, const struct wrap *w, int leading_comma)
{
	for (int i = 0; i < w->np; i++)
		fprintf(o, "%s%s", i || leading_comma ? ", " : "", w->p[i].name);
	if (w->variadic)
		fprintf(o, ", %s", w->va_name);
}

/* Reads the optional argument of a variadic function (in a function whose
 * parameters end in ...): always (the resolver, which our calls always
 * give it) or when the wrapper's COND holds. */
static void read_vararg(FILE *o, const struct wrap *w, int always)
{
	fprintf(o, "\t%s %s = 0;\n\n", w->va_type, w->va_name);
	fprintf(o, "\tif (%s) {\n\t\tva_list st__ap;\n\n", always ? "1" : w->va_when);
	fprintf(o, "\t\tva_start(st__ap, %s);\n\t\t%s = va_arg(st__ap, %s);\n", w->p[w->np - 1].name,
		w->va_name, w->va_type);
	fprintf(o, "\t\tva_end(st__ap);\n\t}\n");
}

static void emit_call(FILE *o, const struct spec *s, int ev, const struct field *f, int nf,
		      const char *mask, const char *ts)
{
	fprintf(o, "st__emit_%s_%s(%s, %s, st__ip", s->provider, s->ev[ev].name, mask, ts);
	for (int i = 0; i < nf; i++) {
		if (strcmp(f[i].type, "HEX64") == 0)
			fprintf(o, ", (uint64_t)(uintptr_t)(%s)", f[i].expr);
		else
			fprintf(o, ", (st__ctype_%s)(%s)", f[i].type, f[i].expr);
	}
	fprintf(o, ")");
}

/* An identifier of at most 31 characters in capitals. */
static void caps(const char *id, char out[32])
{
	size_t i;

	for (i = 0; id[i] && i < 31; i++)
		out[i] = (char)toupper((unsigned char)id[i]);
	out[i] = '\0';
}

/* The provider name in capitals (for macro names). */
static void upper(const struct spec *s, char up[64])
{
	size_t i;

	for (i = 0; s->provider[i]; i++)
		up[i] = (char)toupper((unsigned char)s->provider[i]);
	up[i] = '\0';
}

static void gen_header(const struct spec *s, FILE *o)
{
	char up[64];

	upper(s, up);
	fprintf(o, "/* Generated by gen-wrappers from %s: do not edit. */\n", base_name(s->path));
	fprintf(o, "#ifndef ST_GEN_%s_H\n#define ST_GEN_%s_H\n\n", up, up);
	fprintf(o, "#include <shimtrace/tracepoint.h>\n\n");
	fprintf(o, "#define ST_%s_TRACEPOINTS(TP, F)", up);
	for (int e = 0; e < s->nev; e++) {
		fprintf(o, " \\\n\tTP(%s, %s,", s->provider, s->ev[e].name);
		for (int k = 0; k < s->ev[e].nf; k++)
			fprintf(o, " F(%s, %s)", s->ev[e].f[k].type, s->ev[e].f[k].name);
		fprintf(o, ")");
	}
	fprintf(o, "\n\nST_PROVIDER_DECLARE(%s, ST_%s_TRACEPOINTS)\n\n#endif\n", s->provider, up);
}

static void gen_resolver(const struct spec *s, const struct wrap *w, FILE *o)
{
	fprintf(o, "typedef %s (*st__fn_%s)(", w->ret, w->name);
	params(o, w, 0);
	fprintf(o, ");\nstatic %s st__resolve_%s(", w->ret, w->name);
	params(o, w, 0);
	fprintf(o, ");\nstatic st__fn_%s real_%s = st__resolve_%s;\n\n", w->name, w->name, w->name);
	fprintf(o, "/* First call: find the real function, then call it. */\n");
	fprintf(o, "static %s st__resolve_%s(", w->ret, w->name);
	params(o, w, 0);
	fprintf(o, ")\n{\n");
	if (w->variadic)
		read_vararg(o, w, 1);
	if (w->bootstrap[0]) {
		/* (dlsym, looking the function up, called back into the family) */
		fprintf(o, "\tif (st__resolving)\n\t\treturn %s(", w->bootstrap);
		args(o, w, 0);
		fprintf(o, ");\n");
	}
	fprintf(o, "\tst__fn_%s f = (st__fn_%s)st__wrap_resolve(\"%s\");\n\n", w->name, w->name,
		w->name);
	if (w->abort_unresolved || w->noreturn) {
		fprintf(o, "\tif (!f)\n\t\tst__wrap_unresolved(\"%s\");\n", w->name);
	} else {
		const char *fail = w->fail[0] ? w->fail : s->fail;
		const char *err = w->fail[0] ? w->fail_errno : s->fail_errno;

		fprintf(o, "\tif (!f) {\n");
		if (err[0])
			fprintf(o, "\t\terrno = %s;\n", err);
		fprintf(o, "\t\treturn%s%s;\n\t}\n", is_void(w) ? "" : " ", is_void(w) ? "" : fail);
	}
	fprintf(o, "\tst_store_relaxed(&real_%s, f);\n", w->name);
	fprintf(o, "\t%sf(", is_void(w) ? "" : "return ");
	args(o, w, 0);
	fprintf(o, ");\n%s}\n\n", w->noreturn ? "\t__builtin_unreachable();\n" : "");
}

static void gen_real_call(const struct wrap *w, FILE *o, const char *fn, const char *a)
{
	/* (via: the wrapper's own function only, never its try) */
	if (w->via[0] && strcmp(fn, w->name) == 0) {
		fprintf(o, "%s(st_load_relaxed(&real_%s)", w->via, fn);
		args(o, w, 1);
		fprintf(o, ")");
		return;
	}
	fprintf(o, "st_load_relaxed(&real_%s)(", fn);
	if (a)
		fprintf(o, "%s", a);
	else
		args(o, w, 0);
	fprintf(o, ")");
}

/* The event written first (lock: wait; call: entry) and last, -1 if none. */
static int first_ev(const struct wrap *w)
{
	return w->kind == LOCK ? w->wait : w->entry;
}

/* Whether the wrapper has two tracepoints, whose masks travel together. */
static int two_masks(const struct wrap *w)
{
	return first_ev(w) >= 0 && w->ev >= 0;
}

/* The mask test: one load; two adjacent slots are read at once. For two
 * tracepoints, the first's mask is the low half, the last's the high. */
static void gen_mask(const struct spec *s, const struct wrap *w, FILE *o)
{
	const char *p = s->provider;
	int a = first_ev(w), b = w->ev;

	if (two_masks(w) && b == a + 1) {
		fprintf(o, "\tuint64_t st__m;\n\n");
		fprintf(o, "\tmemcpy(&st__m, &st__state_%s.mask[st__slot_%s_%s], sizeof(st__m));\n", p,
			p, s->ev[a].name);
	} else if (two_masks(w)) {
		fprintf(o, "\tuint64_t st__m = st__state_%s.mask[st__slot_%s_%s] |\n", p, p,
			s->ev[a].name);
		fprintf(o, "\t\t\t  (uint64_t)st__state_%s.mask[st__slot_%s_%s] << 32;\n\n", p, p,
			s->ev[b].name);
	} else {
		fprintf(o, "\tuint32_t st__m = st__state_%s.mask[st__slot_%s_%s];\n\n", p, p,
			s->ev[b >= 0 ? b : a].name);
	}
}

static void gen_traced_call(const struct spec *s, const struct wrap *w, FILE *o)
{
	int two = two_masks(w), dur = uses(w->ev_f, w->ev_nf, "dur_ns");
	const char *me = two ? "st__me" : "st__m", *mx = two ? "st__mx" : "st__m";

	fprintf(o, "static __attribute__((noinline%s)) %s\nst__traced_%s(%s st__m, const void *st__ip",
		w->noreturn ? ", noreturn" : "", w->ret, w->name, two ? "uint64_t" : "uint32_t");
	params_in(o, w, 1);
	fprintf(o, ")\n{\n");
	if (two)
		fprintf(o, "\tuint32_t st__me = (uint32_t)st__m, st__mx = (uint32_t)(st__m >> 32);\n");
	if (w->keep_name[0])
		fprintf(o, "\t%s %s = %s;\n", w->keep_type, w->keep_name, w->keep_expr);
	fprintf(o, "\tuint64_t st__ts = st_clock_read();\n");
	if (w->entry >= 0) {
		fprintf(o, "\tint st__in = %s != 0", me);
		if (w->entry_when[0])
			fprintf(o, " && (%s)", w->entry_when);
		fprintf(o, ";\n\n\tif (st__in)\n\t\t");
		emit_call(o, s, w->entry, w->entry_f, w->entry_nf, me, "st__ts");
		fprintf(o, ";\n");
		/* (the time in the call: not the entry's writing, which may be a
		 * thread's first, claiming its buffer) */
		if (dur)
			fprintf(o, "\tuint64_t st__t0 = st__in ? st_clock_read() : st__ts;\n");
	}
	if (!is_void(w))
		fprintf(o, "\t%s ret;\n", w->ret);
	if (w->quiet)
		fprintf(o, "\t{\n\t\tint st__q __attribute__((cleanup(st__quiet_end))) = ++st__quiet;\n\n\t");
	fprintf(o, "\t%s", is_void(w) ? "" : "ret = ");
	gen_real_call(w, o, w->name, NULL);
	fprintf(o, ";\n");
	if (w->quiet)
		fprintf(o, "\t\t(void)st__q;\n\t}\n");
	if (w->noreturn) {
		fprintf(o, "\t__builtin_unreachable();\n}\n\n");
		return;
	}
	if (dur)
		fprintf(o, "\tuint64_t dur_ns = st_clock_delta_ns(st_clock_read() - %s);\n",
			w->entry >= 0 ? "st__t0" : "st__ts");
	if (w->ev >= 0) {
		fprintf(o, "\n\t%s", two ? "if (st__mx)\n\t\t" : "");
		emit_call(o, s, w->ev, w->ev_f, w->ev_nf, mx, "st__ts");
		fprintf(o, ";\n");
	}
	fprintf(o, "%s}\n\n", is_void(w) ? "" : "\treturn ret;\n");
}

static void gen_traced_lock(const struct spec *s, const struct wrap *w, FILE *o)
{
	int errno_try = mentions(w->busy, "errno");

	fprintf(o, "static __attribute__((noinline)) %s\nst__traced_%s(uint64_t st__masks, const void *st__ip",
		w->ret, w->name);
	params_in(o, w, 1);
	fprintf(o, ")\n{\n");
	/* gen_mask puts the wait mask in the low half, the event's in the high. */
	fprintf(o, "\tuint32_t st__mw = (uint32_t)st__masks, st__ml = (uint32_t)(st__masks >> 32);\n");
	fprintf(o, "\tuint64_t st__t0, st__t1, wait_ns = 0;\n\t%s ret;\n", w->ret);
	/* A try that reports busy in errno changed it: the blocking call must
	 * find it as the caller left it (errno is read only then, it costs a
	 * call) */
	if (errno_try)
		fprintf(o, "\tint st__errno = errno;\n");
	fprintf(o, "\n");
	if (w->try_when[0]) {
		fprintf(o, "\tif (!(%s)) {\n\t\tst__t0 = st_clock_read();\n\t\tret = ", w->try_when);
		gen_real_call(w, o, w->name, NULL);
		fprintf(o, ";\n\t\tst__t1 = st_clock_read();\n");
		fprintf(o, "\t\twait_ns = st_clock_delta_ns(st__t1 - st__t0);\n\t\tif (st__ml)\n\t\t\t");
		emit_call(o, s, w->ev, w->ev_f, w->ev_nf, "st__ml", "st__t1");
		fprintf(o, ";\n\t\treturn ret;\n\t}\n");
	}
	if (w->uncontended[0]) {
		fprintf(o, "\tif (%s) {\n\t\tret = ", w->uncontended);
		gen_real_call(w, o, w->name, NULL);
		fprintf(o, ";\n\t\tif (st__ml)\n\t\t\t");
		emit_call(o, s, w->ev, w->ev_f, w->ev_nf, "st__ml", "st_clock_read()");
		fprintf(o, ";\n\t\treturn ret;\n\t}\n");
	}
	fprintf(o, "\tret = ");
	gen_real_call(w, o, w->try_fn, w->try_args);
	/* the runtime's hook first (st_lock_wait_hook): what it writes comes
	 * before the wait, and its time is not the wait's */
	fprintf(o, ";\n\tif (%s) {\n\t\tif (st__mw)\n\t\t\tst__lock_wait_hook_run(st__ip);\n"
		   "\t\tst__t0 = st_clock_read();\n\t\tif (st__mw)\n\t\t\t",
		w->busy[0] ? w->busy : "ret==EBUSY");
	emit_call(o, s, w->wait, w->wait_f, w->wait_nf, "st__mw", "st__t0");
	fprintf(o, ";\n\t\t%sret = ", errno_try ? "errno = st__errno;\n\t\t" : "");
	gen_real_call(w, o, w->name, NULL);
	fprintf(o, ";\n\t\tst__t1 = st_clock_read();\n");
	fprintf(o, "\t\twait_ns = st_clock_delta_ns(st__t1 - st__t0);\n");
	fprintf(o, "\t} else {\n\t\tst__t1 = st_clock_read();\n\t}\n\tif (st__ml)\n\t\t");
	emit_call(o, s, w->ev, w->ev_f, w->ev_nf, "st__ml", "st__t1");
	fprintf(o, ";\n\treturn ret;\n}\n\n");
}

/* st__call_NAME: the wrapper with the caller's address given. */
static void gen_callable(const struct spec *s, const struct wrap *w, FILE *o)
{
	for (int def = 0; def < 2; def++) {
		fprintf(o, "__attribute__((visibility(\"hidden\"))) %s st__call_%s(const void *st__ip",
			w->ret, w->name);
		params_in(o, w, 1);
		fprintf(o, ")%s", def ? "\n{\n" : ";\n");
	}
	gen_mask(s, w, o);
	fprintf(o, "\tif (__builtin_expect(st__m == 0, 1))\n\t\t%s", is_void(w) ? "" : "return ");
	gen_real_call(w, o, w->name, NULL);
	fprintf(o, ";\n%s\t%sst__traced_%s(st__m, st__ip", is_void(w) ? "\telse\n" : "",
		is_void(w) ? "\t" : "return ", w->name);
	args(o, w, 1);
	fprintf(o, ");\n}\n\n");
}

/* The family's table for attach (core/attach.h), offered from a
 * constructor: each wrapper through a local alias (loaded late, the
 * library's exported names resolve to the real functions). */
static void gen_attach_table(const struct spec *s, FILE *o)
{
	fprintf(o, "/* ---- for attach (core/attach.h) ---- */\n\n");
	for (int k = 0; k < s->nw; k++)
		fprintf(o, "extern __typeof__(%s) st__wrapper_%s\n\t__attribute__((alias(\"%s\"), "
			   "copy(%s), visibility(\"hidden\")));\n",
			s->w[k].name, s->w[k].name, s->w[k].name, s->w[k].name);
	fprintf(o, "\nstatic struct st__wrap st__attach_table[] = {\n");
	for (int k = 0; k < s->nw; k++)
		fprintf(o, "\t{ \"%s\", (void *)st__wrapper_%s, (void **)&real_%s, NULL },\n",
			s->w[k].name, s->w[k].name, s->w[k].name);
	fprintf(o, "};\n\nstatic void __attribute__((constructor)) st__attach_table_offer(void)\n{\n"
		   "\tst__attach_offer(st__attach_table, sizeof(st__attach_table) / "
		   "sizeof(st__attach_table[0]));\n}\n");
}

static void gen_source(const struct spec *s, const char *header, FILE *o)
{
	char up[64];

	upper(s, up);
	fprintf(o, "/* Generated by gen-wrappers from %s: do not edit. */\n", base_name(s->path));
	for (int k = 0; k < s->nincludes; k++)
		fprintf(o, "#include %s\n", s->includes[k]);
	fprintf(o, "#include <stdarg.h>\n#include <stdint.h>\n#include <string.h>\n\n");
	fprintf(o, "#include \"core/attach.h\"\n#include \"wrappers/resolve.h\"\n#include \"%s\"\n\n",
		header);
	fprintf(o, "ST_PROVIDER_DEFINE(%s, ST_%s_TRACEPOINTS)\n\n", s->provider, up);
	if (s->quiet) {
		fprintf(o, "/* Nonzero while a quiet wrapper's real function runs on this thread:\n"
			   " * the family's calls it makes are its own, not the program's; until\n"
			   " * one fails (st__loud): the failure's handling is traced. */\n");
		fprintf(o, "static __thread int st__quiet __attribute__((tls_model(\"initial-exec\")));\n");
		fprintf(o, "static __thread int st__loud __attribute__((tls_model(\"initial-exec\")));\n\n");
		fprintf(o, "static inline void st__quiet_end(int *q)\n{\n\t(void)q;\n"
			   "\tif (--st__quiet == 0)\n\t\tst__loud = 0;\n}\n\n");
	}
	for (int k = 0; k < s->nw; k++)
		gen_resolver(s, &s->w[k], o);
	for (int k = 0; k < s->nw; k++) {
		const struct wrap *w = &s->w[k];

		fprintf(o, "/* ---- %s ---- */\n\n", w->name);
		if (w->kind == LOCK)
			gen_traced_lock(s, w, o);
		else
			gen_traced_call(s, w, o);
		/* (declared: a function no header declares, C++'s operators) */
		for (int def = 0; def < 2; def++) {
			fprintf(o, "ST_API %s%s %s(", w->noreturn ? "__attribute__((noreturn)) " : "",
				w->ret, w->name);
			params(o, w, 0);
			fprintf(o, ")%s", def ? "\n{\n" : ";\n");
		}
		if (w->variadic)
			read_vararg(o, w, 0);
		gen_mask(s, w, o);
		if (is_void(w)) {
			fprintf(o, "\tif (__builtin_expect(st__m == 0, 1)) {\n\t\t");
			gen_real_call(w, o, w->name, NULL);
			fprintf(o, ";\n\t\t%s;\n\t}\n", w->noreturn ? "__builtin_unreachable()" : "return");
		} else {
			fprintf(o, "\tif (__builtin_expect(st__m == 0, 1))\n\t\treturn ");
			gen_real_call(w, o, w->name, NULL);
			fprintf(o, ";\n");
		}
		if (s->quiet) {
			/* (a TLS load only when enabled) */
			fprintf(o, "\tif (st__quiet && !st__loud) {\n\t\t%s%s", is_void(w) ? "" : w->ret,
				is_void(w) ? "" : " ret = ");
			gen_real_call(w, o, w->name, NULL);
			if (is_void(w))
				fprintf(o, ";\n\t\t%s;\n\t}\n",
					w->noreturn ? "__builtin_unreachable()" : "return");
			else
				fprintf(o, ";\n\n\t\tif (ret == (%s))\n\t\t\tst__loud = 1;\n\t\treturn ret;\n\t}\n",
					w->fail[0] ? w->fail : s->fail);
		}
		fprintf(o, "\t%sst__traced_%s(st__m, __builtin_return_address(0)", is_void(w) ? "" : "return ",
			w->name);
		args(o, w, 1);
		fprintf(o, ");\n%s}\n\n", w->noreturn ? "\t__builtin_unreachable();\n" : "");
		if (w->callable)
			gen_callable(s, w, o);
	}
	if (s->nw)
		gen_attach_table(s, o);
}

static void gen_catalog(struct spec *specs, int n, FILE *o)
{
	fprintf(o, "/* Generated by gen-wrappers: do not edit. */\n#include \"ctl/common/catalog.h\"\n\n");
	fprintf(o, "const struct st_catalog_entry st_catalog[] = {\n");
	for (int i = 0; i < n; i++)
		for (int e = 0; e < specs[i].nev; e++) {
			const struct event *ev = &specs[i].ev[e];

			fprintf(o, "\t{ \"%s\", \"%s\", \"", specs[i].provider, ev->name);
			for (int k = 0; k < ev->nf; k++)
				fprintf(o, "%s%s %s", k ? ", " : "", ev->f[k].type, ev->f[k].name);
			fprintf(o, "\", false },\n");
		}
	fprintf(o, "\tST_CATALOG_AGENTS\n};\n\nconst unsigned st_catalog_count = sizeof(st_catalog) / "
		   "sizeof(st_catalog[0]);\n");
}

/* The meanings of every family's tracepoints, one X-macro per family. */
static void gen_meanings(struct spec *specs, int n, FILE *o)
{
	fprintf(o, "/* Generated by gen-wrappers from");
	for (int i = 0; i < n; i++)
		fprintf(o, " %s", base_name(specs[i].path));
	fprintf(o, ": do not edit. */\n#ifndef ST_GEN_MEANINGS_H\n#define ST_GEN_MEANINGS_H\n\n");
	fprintf(o, "#include <stddef.h>\n\n");
	fprintf(o, "/* M(NAME, WHAT, KIND, FIELD) for each tracepoint that means something\n"
		   " * to the reports (the specs' means=WHAT[.KIND][@FIELD]). */\n");
	for (int i = 0; i < n; i++) {
		char up[64];

		upper(&specs[i], up);
		fprintf(o, "#define ST_%s_MEANINGS(M)", up);
		for (int e = 0; e < specs[i].nev; e++) {
			const struct event *ev = &specs[i].ev[e];
			char what[32], kind[32];

			if (!ev->means[0])
				continue;
			caps(ev->what, what);
			caps(ev->kind[0] ? ev->kind : "none", kind);
			fprintf(o, " \\\n\tM(\"%s:%s\", %s, %s, ", specs[i].provider, ev->name, what, kind);
			if (ev->on[0])
				fprintf(o, "\"%s\")", ev->on);
			else
				fprintf(o, "NULL)");
		}
		fprintf(o, "\n");
	}
	fprintf(o, "\n#endif\n");
}

static FILE *create(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "gen-wrappers: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return f;
}

static void finish(FILE *f, const char *path)
{
	if (ferror(f) || fclose(f) != 0) {
		fprintf(stderr, "gen-wrappers: %s: write error\n", path);
		remove(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static struct spec specs[8];

	if (argc == 5 && strcmp(argv[1], "family") == 0) {
		FILE *h, *c;

		parse(&specs[0], argv[2]);
		h = create(argv[3]);
		gen_header(&specs[0], h);
		finish(h, argv[3]);
		c = create(argv[4]);
		gen_source(&specs[0], base_name(argv[3]), c);
		finish(c, argv[4]);
		return 0;
	}
	if (argc >= 4 && argc - 3 <= 8 &&
	    (strcmp(argv[1], "catalog") == 0 || strcmp(argv[1], "meanings") == 0)) {
		FILE *o;

		for (int i = 3; i < argc; i++)
			parse(&specs[i - 3], argv[i]);
		o = create(argv[2]);
		if (argv[1][0] == 'c')
			gen_catalog(specs, argc - 3, o);
		else
			gen_meanings(specs, argc - 3, o);
		finish(o, argv[2]);
		return 0;
	}
	fprintf(stderr, "usage: gen-wrappers family SPEC OUT.h OUT.c\n"
			"       gen-wrappers catalog OUT.c SPEC...\n"
			"       gen-wrappers meanings OUT.h SPEC...\n");
	return 2;
}
