/*
 * From the TSDL syntax tree to struct st_tsdl: interprets the blocks
 * (trace, env, clock, stream, event), checks what they must hold, and has
 * each scope planned by tsdl_types.c. Clocks are read first (integer maps
 * refer to them), then trace and streams, then events.
 *
 * Aliases are global here (TSDL scopes them to their block); an alias
 * declared twice is an error rather than a guess.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/reader/arena.h"
#include "ctl/reader/desc.h"
#include "ctl/reader/errmsg.h"
#include "ctl/reader/tsdl_limits.h"
#include "ctl/reader/tsdl_plan.h"
#include "ctl/reader/tsdl_planner.h"
#include "ctl/reader/tsdl_types.h"

/* ---- blocks ---- */

static const struct st__kv *kv_get(const struct st__block *b, const char *key)
{
	const struct st__kv *found = NULL;

	for (const struct st__kv *kv = b->kvs; kv; kv = kv->next)
		if (strcmp(kv->key, key) == 0)
			found = kv;
	return found;
}

static bool kv_uint(struct st__planner *pl, const struct st__kv *kv, uint64_t *out)
{
	if (kv->kind != ST__VAL_NUM || kv->negative) {
		st__tsdl_fail(pl->err, kv->off, "%s: expected a non-negative integer", kv->key);
		return false;
	}
	*out = kv->num;
	return true;
}

static bool kv_text(struct st__planner *pl, const struct st__kv *kv, const char **out)
{
	if (kv->kind != ST__VAL_STR && kv->kind != ST__VAL_IDENT) {
		st__tsdl_fail(pl->err, kv->off, "%s: expected a string", kv->key);
		return false;
	}
	*out = kv->str;
	return true;
}

static bool parse_uuid(const char *s, uint8_t out[16])
{
	static const char hex[] = "0123456789abcdef";
	int n = 0;

	for (; *s && n < 32; s++) {
		const char *d;
		char c = *s;

		if (c == '-')
			continue;
		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		d = c ? strchr(hex, c) : NULL;
		if (!d)
			return false;
		if (n % 2 == 0)
			out[n / 2] = (uint8_t)((d - hex) << 4);
		else
			out[n / 2] |= (uint8_t)(d - hex);
		n++;
	}
	return n == 32 && *s == '\0';
}

static bool scope_keys_ok(struct st__planner *pl, const struct st__block *b, const char *const *ok,
			  const char *blk)
{
	for (const struct st__kv *kv = b->kvs; kv; kv = kv->next) {
		bool known = false;

		if (kv->kind != ST__VAL_TYPE)
			continue;
		for (const char *const *k = ok; *k; k++)
			known |= strcmp(kv->key, *k) == 0;
		if (!known) {
			if (strcmp(blk, "event") == 0 && strcmp(kv->key, "context") == 0)
				st__tsdl_fail(pl->err, kv->off,
					      "event-specific contexts are not supported");
			else
				st__tsdl_fail(pl->err, kv->off, "unknown scope '%s' in a %s block",
					      kv->key, blk);
			return false;
		}
	}
	return true;
}

static bool plan_clock(struct st__planner *pl, const struct st__block *b, struct st_clock_class *c)
{
	uint64_t v;
	int64_t s_ns;

	c->freq = 1000000000u;
	c->name = NULL;
	c->description = "";
	for (const struct st__kv *kv = b->kvs; kv; kv = kv->next) {
		const char *k = kv->key;

		if (!strcmp(k, "name") && !kv_text(pl, kv, &c->name))
			return false;
		if (!strcmp(k, "description") && !kv_text(pl, kv, &c->description))
			return false;
		if (!strcmp(k, "freq") && !kv_uint(pl, kv, &c->freq))
			return false;
		if (!strcmp(k, "precision") && !kv_uint(pl, kv, &c->precision))
			return false;
		if (!strcmp(k, "offset") && !kv_uint(pl, kv, &c->offset))
			return false;
		if (!strcmp(k, "absolute") && kv->kind == ST__VAL_IDENT)
			c->absolute = !strcmp(kv->str, "true") || !strcmp(kv->str, "TRUE");
		if (!strcmp(k, "absolute") && kv->kind == ST__VAL_NUM)
			c->absolute = kv->num != 0;
		if (!strcmp(k, "offset_s")) {
			if (kv->kind != ST__VAL_NUM || kv->num > (uint64_t)INT64_MAX) {
				st__tsdl_fail(pl->err, kv->off, "offset_s: expected an integer");
				return false;
			}
			c->offset_s = kv->negative ? -(int64_t)kv->num : (int64_t)kv->num;
		}
	}
	if (!c->name) {
		st__tsdl_fail(pl->err, b->off, "clock without a name");
		return false;
	}
	if (c->freq == 0) {
		st__tsdl_fail(pl->err, b->off, "clock '%s' has a frequency of 0", c->name);
		return false;
	}
	/* Whole seconds of `offset` go to offset_s. */
	v = c->offset / c->freq;
	if (v > (uint64_t)INT64_MAX || __builtin_add_overflow(c->offset_s, (int64_t)v, &c->offset_s) ||
	    __builtin_mul_overflow(c->offset_s, (int64_t)1000000000, &s_ns) ||
	    __builtin_add_overflow(s_ns, (int64_t)st__cycles_ns(c->freq, c->offset % c->freq),
				   &c->base_ns)) {
		st__tsdl_fail(pl->err, b->off, "clock '%s': offset out of range", c->name);
		return false;
	}
	c->offset %= c->freq;
	return true;
}

static bool plan_trace(struct st__planner *pl, const struct st__block *b)
{
	static const char *const scopes[] = { "packet.header", NULL };
	struct st_tsdl *t = pl->t;
	const struct st__kv *kv;
	const char *s;
	uint64_t v = 0;

	if (!scope_keys_ok(pl, b, scopes, "trace"))
		return false;
	if ((kv = kv_get(b, "major")) && (!kv_uint(pl, kv, &v) || v != 1)) {
		st__tsdl_fail(pl->err, kv->off, "CTF major version %llu is not supported (1.8 only)",
			      (unsigned long long)v);
		return false;
	}
	if ((kv = kv_get(b, "minor")) && (!kv_uint(pl, kv, &v) || v != 8)) {
		st__tsdl_fail(pl->err, kv->off, "CTF 1.%llu is not supported (1.8 only)",
			      (unsigned long long)v);
		return false;
	}
	if ((kv = kv_get(b, "byte_order"))) {
		if (!kv_text(pl, kv, &s))
			return false;
		if (!strcmp(s, "be") || !strcmp(s, "big") || !strcmp(s, "network")) {
			st__tsdl_fail(pl->err, kv->off, "big-endian traces are not supported");
			return false;
		}
		if (strcmp(s, "le") && strcmp(s, "little") && strcmp(s, "native")) {
			st__tsdl_fail(pl->err, kv->off, "unknown byte order '%s'", s);
			return false;
		}
	}
	if ((kv = kv_get(b, "uuid"))) {
		if (kv->kind != ST__VAL_STR || !parse_uuid(kv->str, t->uuid)) {
			st__tsdl_fail(pl->err, kv->off, "malformed trace uuid");
			return false;
		}
		t->has_uuid = true;
	}
	kv = kv_get(b, "packet.header");
	if (!st__plan_scope(pl, kv ? kv->type : NULL, kv ? kv->off : b->off, "packet.header",
			&t->packet_header))
		return false;
	t->ph_magic = st__plan_special(pl, &t->packet_header, "magic", false, true, "packet.header", b->off);
	t->ph_stream_id =
		st__plan_special(pl, &t->packet_header, "stream_id", false, true, "packet.header", b->off);
	t->ph_instance_id = st__plan_special(pl, &t->packet_header, "stream_instance_id", false, true,
				    "packet.header", b->off);
	t->ph_uuid = -1;
	for (uint32_t i = 0; i < t->packet_header.n; i++)
		if (strcmp(t->packet_header.v[i].tsdl_name, "uuid") == 0)
			t->ph_uuid = (int32_t)i;
	if (t->ph_uuid >= 0 && (t->packet_header.v[t->ph_uuid].kind != ST_FIELD_BYTES ||
				t->packet_header.v[t->ph_uuid].len_field >= 0 ||
				t->packet_header.v[t->ph_uuid].count != 16)) {
		st__tsdl_fail(pl->err, b->off, "packet.header field 'uuid' must be 16 bytes");
		return false;
	}
	if (t->ph_magic >= 0 && t->packet_header.v[t->ph_magic].size != 4) {
		st__tsdl_fail(pl->err, b->off, "packet.header field 'magic' must be 32 bits");
		return false;
	}
	return t->ph_magic > -2 && t->ph_stream_id > -2 && t->ph_instance_id > -2;
}

/* The event header fields the reader interprets (desc.h), in plan order,
 * which is decoding order. The clock of the timestamps goes to *clk. */
static bool plan_header_uses(struct st__planner *pl, struct st_stream_class *sc, size_t off,
			     int32_t *clk)
{
	const struct st_plan *p = &sc->event_header;
	struct st_header_use *u = st__arena_alloc(pl->a, (p->n ? p->n : 1) * sizeof(*u));
	bool mapped = false, ts = false;

	if (!u)
		return st__plan_oom(pl, off);
	sc->eh_use = u;
	for (uint32_t i = 0; i < p->n; i++) {
		const struct st_field_desc *f = &p->v[i];
		const char *dot = strrchr(f->tsdl_name, '.'), *last = dot ? dot + 1 : f->tsdl_name;
		bool is_id = strcmp(last, "id") == 0;

		if (!is_id && !f->clock && strcmp(last, "timestamp") != 0)
			continue;
		if ((f->kind != ST_FIELD_UINT && f->kind != ST_FIELD_HEX) || f->is_signed) {
			st__tsdl_fail(pl->err, off, "event.header field '%s' must be an unsigned integer",
				      f->tsdl_name);
			return false;
		}
		if (!is_id && pl->clk[i] >= 0) {
			if (mapped && pl->clk[i] != *clk) {
				st__tsdl_fail(pl->err, off,
					      "event.header timestamps map to different clocks");
				return false;
			}
			mapped = true;
			*clk = pl->clk[i];
		}
		ts |= !is_id;
		u[sc->neh_use++] = (struct st_header_use){ .field = i, .size = f->size, .is_id = is_id,
							   .variant = f->in_variant,
							   .option = f->option };
	}
	if (!ts) {
		st__tsdl_fail(pl->err, off, "stream %llu: event.header has no timestamp field",
			      (unsigned long long)sc->id);
		return false;
	}
	return true;
}

static bool plan_stream(struct st__planner *pl, const struct st__block *b, struct st_stream_class *sc)
{
	static const char *const scopes[] = { "packet.context", "event.header", "event.context",
					      NULL };
	static const char *const pc_names[] = { "timestamp_begin", "timestamp_end", "content_size",
						"packet_size",	   "packet_seq_num", "events_discarded" };
	const struct st__kv *kv;
	int32_t *pc_idx[] = { &sc->pc_ts_begin,	   &sc->pc_ts_end,    &sc->pc_content_size,
			      &sc->pc_packet_size, &sc->pc_seq_num,   &sc->pc_discarded };
	int32_t clk = -1;

	if (!scope_keys_ok(pl, b, scopes, "stream"))
		return false;
	if ((kv = kv_get(b, "id")) && !kv_uint(pl, kv, &sc->id))
		return false;
	kv = kv_get(b, "packet.context");
	if (!st__plan_scope(pl, kv ? kv->type : NULL, kv ? kv->off : b->off, "packet.context",
			&sc->packet_context))
		return false;
	for (size_t i = 0; i < sizeof(pc_idx) / sizeof(pc_idx[0]); i++) {
		*pc_idx[i] = st__plan_special(pl, &sc->packet_context, pc_names[i], false, true,
				     "packet.context", b->off);
		if (*pc_idx[i] == -2)
			return false;
	}
	for (int k = 0; k < 2; k++) {
		int32_t i = k ? sc->pc_ts_end : sc->pc_ts_begin;

		if (i >= 0 && sc->packet_context.v[i].size != 8) {
			st__tsdl_fail(pl->err, b->off, "packet.context field '%s' must be 64 bits",
				      sc->packet_context.v[i].tsdl_name);
			return false;
		}
	}
	if (sc->pc_ts_begin >= 0)
		clk = pl->clk[sc->pc_ts_begin];
	sc->pc_pid = st__plan_special(pl, &sc->packet_context, "pid", true, false, "packet.context", b->off);
	sc->pc_tid = st__plan_special(pl, &sc->packet_context, "tid", true, false, "packet.context", b->off);
	if (sc->pc_pid == -2 || sc->pc_tid == -2)
		return false;

	kv = kv_get(b, "event.header");
	if (!st__plan_scope(pl, kv ? kv->type : NULL, kv ? kv->off : b->off, "event.header",
			&sc->event_header))
		return false;
	if (!plan_header_uses(pl, sc, kv ? kv->off : b->off, &clk))
		return false;

	kv = kv_get(b, "event.context");
	if (!st__plan_scope(pl, kv ? kv->type : NULL, kv ? kv->off : b->off, "event.context",
			&sc->event_context))
		return false;
	sc->ec_vpid = st__plan_special(pl, &sc->event_context, "vpid", true, false, "event.context", b->off);
	sc->ec_vtid = st__plan_special(pl, &sc->event_context, "vtid", true, false, "event.context", b->off);
	sc->ec_ip = st__plan_special(pl, &sc->event_context, "ip", true, false, "event.context", b->off);
	if (sc->ec_vpid == -2 || sc->ec_vtid == -2 || sc->ec_ip == -2)
		return false;

	if (clk < 0 && pl->nclocks > 1) {
		st__tsdl_fail(pl->err, b->off,
			      "stream %llu: its timestamps map to no clock, and there are %u clocks",
			      (unsigned long long)sc->id, pl->nclocks);
		return false;
	}
	if (clk < 0 && pl->nclocks == 1)
		clk = 0;
	sc->clock = clk >= 0 ? &pl->clocks[clk] : NULL;
	return true;
}

static bool plan_event(struct st__planner *pl, const struct st__block *b, struct st_event_class *ec)
{
	static const char *const scopes[] = { "fields", NULL };
	struct st_tsdl *t = pl->t;
	const struct st__kv *kv;
	uint64_t sid = 0;

	ec->loglevel = -1;
	if (!scope_keys_ok(pl, b, scopes, "event"))
		return false;
	kv = kv_get(b, "name");
	if (!kv) {
		st__tsdl_fail(pl->err, b->off, "event without a name");
		return false;
	}
	if (!kv_text(pl, kv, &ec->name))
		return false;
	kv = kv_get(b, "id");
	if (!kv) {
		st__tsdl_fail(pl->err, b->off, "event '%s' has no id", ec->name);
		return false;
	}
	if (!kv_uint(pl, kv, &ec->id))
		return false;
	if (ec->id >= ST__TSDL_MAX_ID) {
		st__tsdl_fail(pl->err, kv->off, "event '%s': id %llu is too large", ec->name,
			      (unsigned long long)ec->id);
		return false;
	}
	if ((kv = kv_get(b, "loglevel")) && kv->kind == ST__VAL_NUM && kv->num <= INT64_MAX)
		ec->loglevel = kv->negative ? -(int64_t)kv->num : (int64_t)kv->num;
	kv = kv_get(b, "stream_id");
	if (kv && !kv_uint(pl, kv, &sid))
		return false;
	if (!kv && t->nstreams > 1) {
		st__tsdl_fail(pl->err, b->off, "event '%s' has no stream_id, and there are %u streams",
			      ec->name, t->nstreams);
		return false;
	}
	if (!kv && t->nstreams == 1)
		sid = t->streams[0].id;
	ec->stream = st_tsdl_stream(t, sid);
	if (!ec->stream) {
		st__tsdl_fail(pl->err, kv ? kv->off : b->off,
			      "event '%s' names stream %llu, which is not declared", ec->name,
			      (unsigned long long)sid);
		return false;
	}
	kv = kv_get(b, "fields");
	return st__plan_scope(pl, kv ? kv->type : NULL, kv ? kv->off : b->off, "fields", &ec->fields);
}

/* Dense id -> class tables, one per stream class. */
static bool index_events(struct st__planner *pl, const struct st__ast *ast)
{
	struct st_tsdl *t = pl->t;
	struct st_stream_class *streams = (struct st_stream_class *)t->streams;
	const struct st__block *b = ast->blocks;

	for (uint32_t i = 0; i < t->nevents; i++) {
		const struct st_event_class *ec = &t->events[i];
		struct st_stream_class *sc = &streams[ec->stream - t->streams];

		if (ec->id >= sc->nids)
			sc->nids = (uint32_t)ec->id + 1;
	}
	for (uint32_t s = 0; s < t->nstreams; s++) {
		streams[s].by_id = st__arena_alloc(pl->a, (streams[s].nids + 1) * sizeof(void *));
		if (!streams[s].by_id)
			return st__plan_oom(pl, 0);
	}
	for (uint32_t i = 0; i < t->nevents; i++) {
		const struct st_event_class *ec = &t->events[i];
		struct st_stream_class *sc = &streams[ec->stream - t->streams];

		while (b && b->kind != ST__BLK_EVENT)
			b = b->next;
		if (sc->by_id[ec->id]) {
			st__tsdl_fail(pl->err, b ? b->off : 0,
				      "event id %llu is declared twice ('%s' and '%s')",
				      (unsigned long long)ec->id, sc->by_id[ec->id]->name, ec->name);
			return false;
		}
		sc->by_id[ec->id] = ec;
		if (b)
			b = b->next;
	}
	return true;
}

static bool plan_env(struct st__planner *pl, const struct st__block *b, struct st_env_entry *e,
		     uint32_t *n)
{
	for (const struct st__kv *kv = b->kvs; kv; kv = kv->next, (*n)++) {
		e[*n].key = kv->key;
		if (kv->kind == ST__VAL_NUM) {
			char buf[32], *s;

			snprintf(buf, sizeof(buf), "%s%llu", kv->negative ? "-" : "",
				 (unsigned long long)kv->num);
			s = st__arena_strndup(pl->a, buf, strlen(buf));
			if (!s)
				return st__plan_oom(pl, kv->off);
			e[*n].value = s;
		} else if (kv->kind == ST__VAL_TYPE) {
			st__tsdl_fail(pl->err, kv->off, "env: '%s' cannot be a type", kv->key);
			return false;
		} else {
			e[*n].value = kv->str;
		}
	}
	return true;
}

static bool count_blocks(struct st__planner *pl, const struct st__ast *ast, uint32_t count[5],
			 uint32_t *nenv)
{
	for (const struct st__block *b = ast->blocks; b; b = b->next) {
		count[b->kind]++;
		if (b->kind == ST__BLK_ENV)
			for (const struct st__kv *kv = b->kvs; kv; kv = kv->next)
				(*nenv)++;
	}
	if (count[ST__BLK_TRACE] == 0) {
		st__tsdl_fail(pl->err, 0, "no trace block");
		return false;
	}
	if (count[ST__BLK_STREAM] == 0) {
		st__tsdl_fail(pl->err, 0, "no stream block");
		return false;
	}
	for (const struct st__block *b = ast->blocks, *seen = NULL; b; b = b->next)
		if (b->kind == ST__BLK_TRACE) {
			if (seen) {
				st__tsdl_fail(pl->err, b->off, "a second trace block");
				return false;
			}
			seen = b;
		}
	return true;
}

bool st__tsdl_plan(const struct st__ast *ast, struct st_tsdl *t, struct st__tsdl_err *err)
{
	struct st__planner *pl = calloc(1, sizeof(*pl));
	uint32_t count[5] = { 0 }, nenv = 0, ns = 0, ne = 0;
	struct st_stream_class *streams;
	struct st_event_class *events;
	struct st_env_entry *env;
	bool ok = false;

	if (!pl) {
		st__tsdl_fail(err, 0, "out of memory");
		return false;
	}
	pl->t = t;
	pl->err = err;
	pl->a = &t->arena;
	if (!st__plan_aliases(pl, ast->aliases) || !count_blocks(pl, ast, count, &nenv))
		goto out;
	pl->clocks = st__arena_alloc(pl->a, (count[ST__BLK_CLOCK] + 1) * sizeof(*pl->clocks));
	streams = st__arena_alloc(pl->a, count[ST__BLK_STREAM] * sizeof(*streams));
	events = st__arena_alloc(pl->a, (count[ST__BLK_EVENT] + 1) * sizeof(*events));
	env = st__arena_alloc(pl->a, (nenv + 1) * sizeof(*env));
	if (!pl->clocks || !streams || !events || !env) {
		st__plan_oom(pl, 0);
		goto out;
	}
	/* Clocks first: integer maps refer to them. */
	for (const struct st__block *b = ast->blocks; b; b = b->next) {
		if (b->kind != ST__BLK_CLOCK)
			continue;
		if (!plan_clock(pl, b, &pl->clocks[pl->nclocks]))
			goto out;
		if (st__plan_clock_index(pl, pl->clocks[pl->nclocks].name) >= 0) {
			st__tsdl_fail(err, b->off, "clock '%s' is declared twice",
				      pl->clocks[pl->nclocks].name);
			goto out;
		}
		pl->nclocks++;
	}
	t->clocks = pl->clocks;
	t->nclocks = pl->nclocks;
	t->env = env;
	for (const struct st__block *b = ast->blocks; b; b = b->next) {
		if (b->kind == ST__BLK_TRACE && !plan_trace(pl, b))
			goto out;
		if (b->kind == ST__BLK_ENV && !plan_env(pl, b, env, &t->nenv))
			goto out;
		if (b->kind == ST__BLK_STREAM) {
			if (!plan_stream(pl, b, &streams[ns]))
				goto out;
			for (uint32_t i = 0; i < ns; i++)
				if (streams[i].id == streams[ns].id) {
					st__tsdl_fail(err, b->off, "stream id %llu is declared twice",
						      (unsigned long long)streams[ns].id);
					goto out;
				}
			ns++;
		}
	}
	t->streams = streams;
	t->nstreams = ns;
	for (const struct st__block *b = ast->blocks; b; b = b->next) {
		if (b->kind != ST__BLK_EVENT)
			continue;
		events[ne].index = ne;
		if (!plan_event(pl, b, &events[ne]))
			goto out;
		ne++;
	}
	t->events = events;
	t->nevents = ne;
	if (t->ph_stream_id < 0 && ns > 1) {
		st__tsdl_fail(err, 0, "%u stream classes but no stream_id in packet.header", ns);
		goto out;
	}
	ok = index_events(pl, ast);
out:
	free(pl);
	return ok && !err->failed;
}
