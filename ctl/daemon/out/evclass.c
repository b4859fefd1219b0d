/*
 * Event classes: what the CTF metadata declares.
 *
 * A class is a provider:name and a typed field list. Classes are interned
 * daemon-wide (the same tracepoint registered by many processes is one
 * class) and counted: each process that registered a class, and each trace
 * that declared it, holds a reference, and the last one gone frees it.
 * Processes refer to their classes by ids of their own (proc.c), traces by
 * ids of their own (trace.c): a trace declares only the classes it
 * records, so what one user's processes register never reaches another
 * user's traces, and the 16-bit ids of records run out per process and per
 * trace, never daemon-wide. Two processes registering one name with
 * different fields (two versions of a program) get two classes.
 *
 * Each class also counts, per uid, the processes of that uid holding it:
 * the distinct classes of a user and the metadata they declare are held to
 * the user's quota (quota.h).
 *
 * The first classes are the ones the daemon writes itself: the loaded-object
 * statedump, shaped like LTTng-UST's lttng_ust_statedump and lttng_ust_lib
 * events so that babeltrace2's debug-info filter symbolises callers, and
 * shimtrace:process and process_end, a process's name and how it ended.
 * They are never freed, and every trace declares them first, under the
 * same ids.
 *
 * The registry is a hash of its own: not cds_lfht: only the daemon's
 * thread reads and changes it, so an RCU table would add grace periods and
 * a library to the one thread for no reader; cds_lfht is for a table
 * another thread reads while this one changes it.
 *
 * Owns: the registry of event classes: each class, interned, and its
 *       references.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: none.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/wire/msg.h"

/* ---- the metadata declaration of a class ---- */

/* The declaration of a field of a fixed-size type. */
static const char *scalar_decl(uint32_t type)
{
	switch (type) {
	case ST_TYPE_U8:
		return "integer { size = 8; align = 8; signed = false; }";
	case ST_TYPE_U16:
		return "integer { size = 16; align = 8; signed = false; }";
	case ST_TYPE_U32:
		return "integer { size = 32; align = 8; signed = false; }";
	case ST_TYPE_U64:
		return "integer { size = 64; align = 8; signed = false; }";
	case ST_TYPE_S8:
		return "integer { size = 8; align = 8; signed = true; }";
	case ST_TYPE_S16:
		return "integer { size = 16; align = 8; signed = true; }";
	case ST_TYPE_S32:
		return "integer { size = 32; align = 8; signed = true; }";
	case ST_TYPE_S64:
		return "integer { size = 64; align = 8; signed = true; }";
	case ST_TYPE_HEX64:
		return "integer { size = 64; align = 8; signed = false; base = 16; }";
	case ST_TYPE_SIZE:
		return "size_t"; /* declared at the top: byte counts are told by its name */
	case ST_TYPE_DOUBLE:
		return "double"; /* declared at the top: an IEEE 754 binary64 */
	default:
		return NULL;
	}
}

/* Appends to buf what snprintf would; returns the new length either way. */
static size_t append(char *buf, size_t cap, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static size_t append(char *buf, size_t cap, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf && len < cap ? buf + len : NULL, buf && len < cap ? cap - len : 0, fmt, ap);
	va_end(ap);
	return len + (n > 0 ? (size_t)n : 0);
}

/* Field names get a leading underscore, as in LTTng traces: readers strip
 * it, and it keeps names like `align` or `event` clear of TSDL keywords. */
size_t st_class_decl(char *buf, size_t cap, const struct st_evclass *c, uint32_t id)
{
	size_t n = append(buf, cap, 0, "event {\n\tname = \"%s:%s\";\n\tid = %u;\n\tstream_id = 0;\n"
					  "\tfields := struct {\n",
			  c->provider, c->name, id);

	for (uint32_t k = 0; k < c->nfields; k++) {
		const struct st_evfield *fld = &c->fields[k];

		if (fld->type == ST_TYPE_STRING)
			n = append(buf, cap, n, "\t\tstring _%s;\n", fld->name);
		else if (fld->type == ST_TYPE_STACK || fld->type == ST_TYPE_BYTES)
			/* (a byte sequence: a stack's length is 16 bits, its
			 * return addresses 8 bytes each) */
			n = append(buf, cap, n,
				   "\t\tinteger { size = %d; align = 8; signed = false; } __%s_length;\n"
				   "\t\tinteger { size = 8; align = 8; signed = false; base = 16; } "
				   "_%s[__%s_length];\n",
				   fld->type == ST_TYPE_STACK ? 16 : 64, fld->name, fld->name, fld->name);
		else
			n = append(buf, cap, n, "\t\t%s _%s;\n", scalar_decl(fld->type), fld->name);
	}
	return append(buf, cap, n, "\t};\n};\n\n");
}


struct builtin {
	const char *provider, *name;
	struct st_evfield f[6];
	uint32_t n;
};

#define F(n, t) { n, ST_TYPE_##t }
#define B(n, t) { n, ST_TYPE_BYTES }

static const struct builtin builtins[ST_EV_BUILTIN_COUNT] = {
	[ST_EV_STATEDUMP_START] = { "lttng_ust_statedump", "start", { { "", 0 } }, 0 },
	[ST_EV_STATEDUMP_BIN_INFO] = { "lttng_ust_statedump",
				       "bin_info",
				       { F("baddr", HEX64), F("memsz", U64), F("path", STRING),
					 F("is_pic", U8), F("has_build_id", U8),
					 F("has_debug_link", U8) },
				       6 },
	[ST_EV_STATEDUMP_BUILD_ID] = { "lttng_ust_statedump",
				       "build_id",
				       { F("baddr", HEX64), B("build_id", BYTES) },
				       2 },
	[ST_EV_STATEDUMP_DEBUG_LINK] = { "lttng_ust_statedump",
					 "debug_link",
					 { F("baddr", HEX64), F("crc", U32), F("filename", STRING) },
					 3 },
	[ST_EV_STATEDUMP_END] = { "lttng_ust_statedump", "end", { { "", 0 } }, 0 },
	[ST_EV_LIB_LOAD] = { "lttng_ust_lib",
			     "load",
			     { F("baddr", HEX64), F("memsz", U64), F("path", STRING),
			       F("has_build_id", U8), F("has_debug_link", U8) },
			     5 },
	[ST_EV_LIB_BUILD_ID] = { "lttng_ust_lib",
				 "build_id",
				 { F("baddr", HEX64), B("build_id", BYTES) },
				 2 },
	[ST_EV_LIB_DEBUG_LINK] = { "lttng_ust_lib",
				   "debug_link",
				   { F("baddr", HEX64), F("crc", U32), F("filename", STRING) },
				   3 },
	[ST_EV_LIB_UNLOAD] = { "lttng_ust_lib", "unload", { F("baddr", HEX64) }, 1 },
	[ST_EV_PROCESS] = { "shimtrace",
			    "process",
			    { F("ppid", S32), F("uid", U32), F("name", STRING), F("exe", STRING) },
			    4 },
	/* (procend.c says what the fields mean) */
	[ST_EV_PROCESS_END] = { "shimtrace",
				"process_end",
				{ F("exited", U8), F("threads", U32) },
				2 },
};

#undef F
#undef B

static uint32_t hash_of(const char *provider, const char *name)
{
	uint32_t h = 2166136261u;

	for (const char *s = provider; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	h = (h ^ ':') * 16777619u;
	for (const char *s = name; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

int st_evreg_init(struct st_evreg *r)
{
	memset(r, 0, sizeof(*r));
	r->hsize = 1024;
	r->hash = calloc(r->hsize, sizeof(*r->hash));
	if (!r->hash)
		return -ENOMEM;
	for (uint32_t i = 0; i < ST_EV_BUILTIN_COUNT; i++) {
		const struct builtin *b = &builtins[i];
		struct st_evclass *c = st_evreg_intern(r, b->provider, b->name, b->f, b->n);

		if (!c || c->id != i)
			return -ENOMEM;
		c->refs = 1; /* for good */
	}
	return 0;
}

static void class_free(struct st_evclass *c)
{
	free(c->fields);
	free(c->users);
	free(c);
}

void st_evreg_free(struct st_evreg *r)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (r->v[i])
			class_free(r->v[i]);
	free(r->v);
	free(r->hash);
	free(r->free_ids);
	memset(r, 0, sizeof(*r));
}

static int64_t field_size(uint32_t type);

static bool same_fields(const struct st_evclass *c, const struct st_evfield *f, uint32_t n)
{
	if (c->nfields != n)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (c->fields[i].type != f[i].type || strcmp(c->fields[i].name, f[i].name) != 0)
			return false;
	return true;
}

struct st_evclass *st_evreg_find(const struct st_evreg *r, const char *provider, const char *name,
				 const struct st_evfield *fields, uint32_t nfields)
{
	for (struct st_evclass *c = r->hash[hash_of(provider, name) & (r->hsize - 1)]; c;
	     c = c->hnext)
		if (strcmp(c->provider, provider) == 0 && strcmp(c->name, name) == 0 &&
		    same_fields(c, fields, nfields))
			return c;
	return NULL;
}

/* Doubles the hash table when it holds as many classes as buckets. */
static void grow_hash(struct st_evreg *r)
{
	uint32_t size = r->hsize * 2;
	struct st_evclass **h = calloc(size, sizeof(*h));

	if (!h)
		return; /* chains just get longer */
	for (uint32_t i = 0; i < r->n; i++) {
		struct st_evclass *c = r->v[i];

		if (!c)
			continue;
		c->hnext = h[c->hash & (size - 1)];
		h[c->hash & (size - 1)] = c;
	}
	free(r->hash);
	r->hash = h;
	r->hsize = size;
}

struct st_evclass *st_evreg_intern(struct st_evreg *r, const char *provider, const char *name,
				   const struct st_evfield *fields, uint32_t nfields)
{
	struct st_evclass *c = st_evreg_find(r, provider, name, fields, nfields);
	uint32_t id;

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->fields = calloc(nfields ? nfields : 1, sizeof(*c->fields));
	if (!c->fields) {
		free(c);
		return NULL;
	}
	if (r->nfree) {
		id = r->free_ids[--r->nfree];
	} else {
		if (r->n == r->cap) {
			uint32_t cap = r->cap ? r->cap * 2 : 64;
			struct st_evclass **v = realloc(r->v, cap * sizeof(*v));

			if (!v) {
				class_free(c);
				return NULL;
			}
			r->v = v;
			r->cap = cap;
		}
		id = r->n++;
	}
	c->id = id;
	snprintf(c->provider, sizeof(c->provider), "%s", provider);
	snprintf(c->name, sizeof(c->name), "%s", name);
	memcpy(c->fields, fields, nfields * sizeof(*fields));
	c->nfields = nfields;
	c->fixed_size = 0;
	for (uint32_t i = 0; i < nfields; i++) {
		int64_t n = field_size(fields[i].type);

		if (n < 0) {
			c->fixed_size = -1;
			break;
		}
		c->fixed_size += (int32_t)n;
	}
	c->decl_bytes = (uint32_t)st_class_decl(NULL, 0, c, UINT16_MAX);
	c->hash = hash_of(provider, name);
	c->hnext = r->hash[c->hash & (r->hsize - 1)];
	r->hash[c->hash & (r->hsize - 1)] = c;
	r->v[id] = c;
	if (++r->live > r->hsize)
		grow_hash(r);
	return c;
}

void st_evclass_ref(struct st_evclass *c)
{
	c->refs++;
}

void st_evclass_unref(struct st_evreg *r, struct st_evclass *c)
{
	struct st_evclass **pp;

	if (--c->refs > 0)
		return;
	for (pp = &r->hash[c->hash & (r->hsize - 1)]; *pp; pp = &(*pp)->hnext)
		if (*pp == c) {
			*pp = c->hnext;
			break;
		}
	r->v[c->id] = NULL;
	r->live--;
	if (r->nfree == r->free_cap) {
		uint32_t cap = r->free_cap ? r->free_cap * 2 : 64;
		uint32_t *f = realloc(r->free_ids, cap * sizeof(*f));

		if (f) {
			r->free_ids = f;
			r->free_cap = cap;
		}
	}
	if (r->nfree < r->free_cap)
		r->free_ids[r->nfree++] = c->id;
	class_free(c);
}

static struct st_evclass_user *uid_find(struct st_evclass_user *v, uint32_t n, uid_t uid)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i].uid == uid)
			return &v[i];
	return NULL;
}

struct st_evclass_user *st_uid_count(struct st_evclass_user **v, uint32_t *n, uid_t uid)
{
	struct st_evclass_user *u = uid_find(*v, *n, uid);

	if (u)
		return u;
	u = realloc(*v, (*n + 1) * sizeof(*u));
	if (!u)
		return NULL;
	*v = u;
	u[*n] = (struct st_evclass_user){ uid, 0 };
	return &u[(*n)++];
}

bool st_evclass_user_add(struct st_evclass *c, uid_t uid)
{
	struct st_evclass_user *u = st_uid_count(&c->users, &c->nusers, uid);

	return u && u->n++ == 0;
}

bool st_evclass_user_del(struct st_evclass *c, uid_t uid)
{
	struct st_evclass_user *u = uid_find(c->users, c->nusers, uid);

	if (!u || --u->n)
		return false;
	*u = c->users[--c->nusers];
	return true;
}

bool st_evclass_used_by(const struct st_evclass *c, uid_t uid)
{
	return uid_find(c->users, c->nusers, uid) != NULL;
}

/* Bytes of a fixed-size field type; -1 for strings and byte sequences. */
static int64_t field_size(uint32_t type)
{
	switch (type) {
	case ST_TYPE_U8:
	case ST_TYPE_S8:
		return 1;
	case ST_TYPE_U16:
	case ST_TYPE_S16:
		return 2;
	case ST_TYPE_U32:
	case ST_TYPE_S32:
		return 4;
	case ST_TYPE_U64:
	case ST_TYPE_S64:
	case ST_TYPE_HEX64:
	case ST_TYPE_SIZE:
	case ST_TYPE_DOUBLE:
		return 8;
	default:
		return -1;
	}
}

const struct st_evclass *st_evreg_get(const struct st_evreg *r, uint32_t id)
{
	return id < r->n ? r->v[id] : NULL;
}

/* Longest string a record may hold: process emitters stop at
 * ST_STRING_MAX, the daemon's own paths at a page. */
#define STRING_LIMIT 4096u

/*
 * Copies the fields of a record of class c from src (avail bytes) to dst
 * and checks the copy: src may be memory the process writes meanwhile, so
 * what is checked is what was copied, each byte read once. Returns the
 * fields' bytes, or -1 when they do not fit or do not parse.
 */
int64_t st_evclass_payload_copy(const struct st_evclass *c, const uint8_t *src, uint64_t avail,
				uint8_t *dst)
{
	uint64_t off = 0;

	if (c->fixed_size >= 0) {
		if ((uint64_t)c->fixed_size > avail)
			return -1;
		memcpy(dst, src, (size_t)c->fixed_size);
		return c->fixed_size;
	}
	for (uint32_t i = 0; i < c->nfields; i++) {
		int64_t fixed = field_size(c->fields[i].type);
		uint64_t n, left = avail - off;

		if (fixed >= 0) {
			n = (uint64_t)fixed;
			if (n > left)
				return -1;
			memcpy(dst + off, src + off, n);
		} else if (c->fields[i].type == ST_TYPE_STRING) {
			uint64_t lim = left < STRING_LIMIT ? left : STRING_LIMIT;
			const uint8_t *end = memccpy(dst + off, src + off, 0, lim);

			/* (the copy must end at its first NUL) */
			if (!end)
				return -1;
			n = (uint64_t)(end - (dst + off));
			if (memchr(dst + off, 0, n) != end - 1)
				return -1;
		} else if (c->fields[i].type == ST_TYPE_STACK) {
			uint16_t len;

			if (left < 2)
				return -1;
			memcpy(&len, src + off, 2);
			if (len % 8 || len > 8 * ST_STACK_MAX || len > left - 2)
				return -1;
			memcpy(dst + off, &len, 2);
			memcpy(dst + off + 2, src + off + 2, len);
			n = 2 + (uint64_t)len;
		} else if (c->fields[i].type == ST_TYPE_BYTES) {
			uint64_t len;

			if (left < 8)
				return -1;
			memcpy(&len, src + off, 8);
			if (len > STRING_LIMIT || len > left - 8)
				return -1;
			memcpy(dst + off, &len, 8);
			memcpy(dst + off + 8, src + off + 8, len);
			n = 8 + len;
		} else {
			return -1;
		}
		off += n;
	}
	return (int64_t)off;
}
