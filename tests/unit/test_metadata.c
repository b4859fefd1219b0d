/*
 * Unit tests of the CTF writer (ctl/daemon/out/trace.c, evclass.c): the
 * metadata generated for event classes of every field type, and packets
 * written with it, read back by the reader (ctl/reader) with every value
 * checked: what the daemon writes is what a reader gets. A trace declares
 * only the classes it records, under ids of its own; classes are counted
 * and freed with their last holder.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/out/trace.h"
#include "ctl/daemon/out/tracefile.h"
#include "ctl/daemon/wire/msg.h"
#include "ctl/daemon/wire/record.h"
#include "ctl/reader/reader.h"
#include "tests/unit/run.h"

static const struct st_evfield all_types[] = {
	{ "a", ST_TYPE_U8 },   { "b", ST_TYPE_U16 },   { "c", ST_TYPE_U32 },
	{ "d", ST_TYPE_U64 },  { "e", ST_TYPE_S8 },    { "f", ST_TYPE_S16 },
	{ "g", ST_TYPE_S32 },  { "h", ST_TYPE_S64 },   { "x", ST_TYPE_HEX64 },
	{ "s", ST_TYPE_STRING }, { "align", ST_TYPE_U32 }, /* a TSDL keyword as a name */
	{ "z", ST_TYPE_SIZE }, { "r", ST_TYPE_DOUBLE },
};

struct fixture {
	char dir[64];
	struct st_evreg reg;
	struct st_clock clk;
	struct st_trace t;
	int all, bytes;
};

static void setup(struct fixture *f)
{
	char err[256];

	strcpy(f->dir, "/tmp/st-meta-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	strcat(f->dir, "/trace");
	ck_assert_int_eq(st_evreg_init(&f->reg), 0);
	ck_assert_int_eq(st_clock_init(&f->clk, ST_CLOCK_MONOTONIC, err, sizeof(err)), 0);
	ck_assert_int_eq(st_trace_open(&f->t, f->dir, "unit \"test\"", getuid(), getgid(), 022,
				       &f->reg, err, sizeof(err)),
			 0);
	/* the builtins first, under their own ids; then what it records */
	ck_assert_uint_eq(f->t.nclasses, ST_EV_BUILTIN_COUNT);
	f->all = st_trace_class_id(&f->t,
				   st_evreg_intern(&f->reg, "ut", "all", all_types,
						   sizeof(all_types) / sizeof(all_types[0])),
				   1000);
	ck_assert_int_eq(f->all, ST_EV_BUILTIN_COUNT);
	f->bytes = ST_EV_STATEDUMP_BUILD_ID;
	ck_assert_int_eq(st_trace_metadata(&f->t, &f->clk, true), 0);
}

static void teardown(struct fixture *f)
{
	char cmd[128];

	st_trace_close(&f->t);
	st_evreg_free(&f->reg);
	*strrchr(f->dir, '/') = '\0';
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	ck_assert_int_eq(system(cmd), 0);
}

static size_t put(uint8_t *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return n;
}

/* One record of class ut:all; *prev: the packet's time before it (NULL:
 * an extended header). */
static size_t record_all(uint8_t *p, uint32_t id, uint64_t ts, uint64_t *prev, int k)
{
	uint8_t a = 200;
	uint16_t b = 60000;
	uint32_t c = 4000000000u, al = 7;
	uint64_t d = 18000000000000000000ull, x = 0xdeadbeefcafe, z = 1ull << 40;
	double r = k ? -0.0 : 3.141592653589793;
	int8_t e = -100;
	int16_t f = -30000;
	int32_t g = -2000000000 + k;
	int64_t h64 = -9000000000000000000ll;
	size_t n = st_trace_rec_header(p, id, ts, prev, 4242, 0x1234 + (uint64_t)k);

	n += put(p + n, &a, 1);
	n += put(p + n, &b, 2);
	n += put(p + n, &c, 4);
	n += put(p + n, &d, 8);
	n += put(p + n, &e, 1);
	n += put(p + n, &f, 2);
	n += put(p + n, &g, 4);
	n += put(p + n, &h64, 8);
	n += put(p + n, &x, 8);
	n += put(p + n, "say \"hi\"\n", 10);
	n += put(p + n, &al, 4);
	n += put(p + n, &z, 8);
	n += put(p + n, &r, 8);
	return n;
}

static size_t record_bytes(uint8_t *p, uint32_t id, uint64_t ts, uint64_t *prev)
{
	uint64_t base = 0x400000, len = 3;
	size_t n = st_trace_rec_header(p, id, ts, prev, 4242, 0);

	n += put(p + n, &base, 8);
	n += put(p + n, &len, 8);
	n += put(p + n, "\x01\xab\xff", 3);
	return n;
}

static void write_packet(struct fixture *f, struct st_stream *s, const uint8_t *recs, size_t len,
			 uint64_t b, uint64_t e, uint64_t lost)
{
	uint8_t *buf = st_packet_buf(len);

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, recs, len);
	ck_assert_int_eq(st_stream_packet(&f->t, s, buf, len, 0, b, e, lost), 0);
}

/* A packet header's fields, from the file (the layout of the metadata's
 * packet header and context: 4 + 16 + 4 bytes, seven u64s, two s32s). */
static uint64_t header_u64(const uint8_t *p, int k)
{
	uint64_t v;

	memcpy(&v, p + 24 + 8 * k, sizeof(v));
	return v;
}

enum { H_TS_BEGIN = 1, H_PACKET_SIZE = 4, H_SEQ = 5, H_DISCARDED = 6 };

/*
 * babeltrace2 counts a packet's discarded events from the packet before
 * it, so a first packet that declares losses would go uncounted ("may
 * have discarded"): the stream opens with an empty packet declaring none,
 * at the first packet's start.
 */
static void opened_with_no_loss(const char *dir)
{
	char path[128];
	uint8_t p[4096];
	FILE *in;
	size_t n;

	snprintf(path, sizeof(path), "%s/s0", dir);
	in = fopen(path, "rb");
	ck_assert_ptr_nonnull(in);
	n = fread(p, 1, sizeof(p), in);
	fclose(in);
	ck_assert_uint_ge(n, 2 * 88);
	ck_assert_uint_eq(header_u64(p, H_PACKET_SIZE), 88 * 8);
	ck_assert_uint_eq(header_u64(p, H_SEQ), 0);
	ck_assert_uint_eq(header_u64(p, H_DISCARDED), 0);
	ck_assert_uint_eq(header_u64(p, H_TS_BEGIN), 1000);
	ck_assert_uint_eq(header_u64(p + 88, H_SEQ), 1);
	ck_assert_uint_eq(header_u64(p + 88, H_DISCARDED), 5);
	ck_assert_uint_eq(header_u64(p + 88, H_TS_BEGIN), 1000);
}

START_TEST(round_trip)
{
	struct fixture f;
	struct st_stream s;
	struct st_reader *r;
	struct st_item it;
	uint8_t recs[1024];
	char err[512];
	size_t n = 0;
	uint64_t prev = 1000;
	int events = 0, losts = 0, ret;

	setup(&f);
	ck_assert_int_eq(st_stream_open(&f.t, &s, "s0", 4242, 1), 0);
	/* compact headers in the first packet, an extended one in the second;
	 * each packet names its thread */
	n += record_all(recs + n, f.all, 1000, &prev, 0);
	n += record_bytes(recs + n, f.bytes, 1500, &prev);
	s.tid = 4243;
	write_packet(&f, &s, recs, n, 1000, 1500, 5);
	n = record_all(recs, f.all, 2000, NULL, 1);
	s.tid = 4244;
	write_packet(&f, &s, recs, n, 2000, 2000, 7);
	st_stream_close(&s);
	st_tracefile_sync();

	ck_assert_int_eq(st_reader_open(&r, f.dir, err, sizeof(err)), 0);
	ck_assert_uint_eq(st_reader_nstreams(r), 1);
	while ((ret = st_reader_next(r, &it)) > 0) {
		if (it.kind == ST_ITEM_LOST) {
			/* 5 before the first packet's end, 2 more by the second's */
			ck_assert_uint_eq(it.lost->count, losts ? 2 : 5);
			ck_assert_int_eq(it.lost->pid, 4242);
			losts++;
			continue;
		}
		const struct st_event *ev = it.event;

		ck_assert_int_eq(ev->pid, 4242);
		ck_assert_int_eq(ev->vpid, 4242);
		if (events == 1) {
			int i = st_event_class_field(ev->cls, "build_id");

			ck_assert_str_eq(ev->cls->name, "lttng_ust_statedump:build_id");
			ck_assert_int_ge(i, 0);
			ck_assert_uint_eq(ev->fields[i].len, 3);
			ck_assert_mem_eq(ev->fields[i].ptr, "\x01\xab\xff", 3);
			ck_assert_uint_eq(ev->fields[st_event_class_field(ev->cls, "baddr")].u, 0x400000);
		} else {
			int k = events ? 1 : 0;

			ck_assert_str_eq(ev->cls->name, "ut:all");
			ck_assert_uint_eq(ev->cycles, events ? 2000 : 1000);
			ck_assert_int_eq(ev->tid, 4243 + k);
			ck_assert_uint_eq(ev->ip, 0x1234 + (uint64_t)k);
#define FIELD(name) ev->fields[st_event_class_field(ev->cls, name)]
			ck_assert_uint_eq(FIELD("a").u, 200);
			ck_assert_uint_eq(FIELD("b").u, 60000);
			ck_assert_uint_eq(FIELD("c").u, 4000000000u);
			ck_assert_uint_eq(FIELD("d").u, 18000000000000000000ull);
			ck_assert_int_eq(FIELD("e").i, -100);
			ck_assert_int_eq(FIELD("f").i, -30000);
			ck_assert_int_eq(FIELD("g").i, -2000000000 + k);
			ck_assert_int_eq(FIELD("h").i, -9000000000000000000ll);
			ck_assert_uint_eq(FIELD("x").u, 0xdeadbeefcafe);
			ck_assert_str_eq(FIELD("s").ptr, "say \"hi\"\n");
			ck_assert_uint_eq(FIELD("align").u, 7);
			ck_assert_uint_eq(FIELD("z").u, 1ull << 40);
			/* a double, bit for bit */
			ck_assert_uint_eq(FIELD("r").u, k ? 0x8000000000000000ull : 0x400921fb54442d18ull);
			ck_assert_int_eq(ev->cls->fields.v[st_event_class_field(ev->cls, "r")].kind,
					 ST_FIELD_FLOAT);
#undef FIELD
		}
		events++;
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_int_eq(events, 3);
	ck_assert_int_eq(losts, 2);
	ck_assert_uint_eq(st_reader_lost(r), 7);
	st_reader_close(r);
	opened_with_no_loss(f.dir);
	teardown(&f);
}
END_TEST

START_TEST(classes_and_clock_declared)
{
	struct fixture f;
	const struct st_tsdl *m;
	struct st_reader *r;
	char err[512];
	uint32_t found = 0;

	setup(&f);
	/* a class the trace does not record is not declared */
	ck_assert_ptr_nonnull(st_evreg_intern(&f.reg, "ut", "elsewhere", all_types, 2));
	ck_assert_int_eq(st_trace_metadata(&f.t, &f.clk, true), 0);
	ck_assert_int_eq(st_reader_open(&r, f.dir, err, sizeof(err)), 0);
	m = st_reader_metadata(r);
	/* every class of the trace, with the trace's id */
	for (uint32_t i = 0; i < f.t.nclasses; i++) {
		const struct st_evclass *c = f.t.classes[i];
		char full[160];

		uint32_t shown = c->nfields;

		/* a byte sequence is declared as its length, then its bytes */
		for (uint32_t j = 0; j < c->nfields; j++)
			shown += c->fields[j].type == ST_TYPE_BYTES;
		snprintf(full, sizeof(full), "%s:%s", c->provider, c->name);
		for (uint32_t k = 0; k < m->nevents; k++)
			if (m->events[k].id == i && strcmp(m->events[k].name, full) == 0) {
				ck_assert_uint_eq(m->events[k].fields.n, shown);
				found++;
			}
	}
	ck_assert_uint_eq(found, f.t.nclasses);
	ck_assert_uint_eq(m->nevents, ST_EV_BUILTIN_COUNT + 1);
	ck_assert_uint_eq(m->nclocks, 1);
	ck_assert_uint_eq(m->clocks[0].freq, 1000000000u);
	st_reader_close(r);
	/* classes declared later appear once the metadata is rewritten */
	ck_assert_int_eq(st_trace_class_id(&f.t, st_evreg_intern(&f.reg, "ut", "later", all_types, 1),
					   1000),
			 ST_EV_BUILTIN_COUNT + 1);
	ck_assert_int_eq(st_trace_metadata(&f.t, &f.clk, false), 0);
	ck_assert_int_eq(st_reader_open(&r, f.dir, err, sizeof(err)), 0);
	ck_assert_uint_eq(st_reader_metadata(r)->nevents, ST_EV_BUILTIN_COUNT + 2);
	st_reader_close(r);
	teardown(&f);
}
END_TEST

START_TEST(classes_interned_once)
{
	struct st_evreg reg;
	struct st_evclass *a, *b, *c;

	ck_assert_int_eq(st_evreg_init(&reg), 0);
	a = st_evreg_intern(&reg, "p", "ev", all_types, 2);
	b = st_evreg_intern(&reg, "p", "ev", all_types, 2);
	c = st_evreg_intern(&reg, "p", "ev", all_types, 3); /* other fields: another class */
	ck_assert_ptr_eq(a, b);
	ck_assert_ptr_ne(a, c);
	ck_assert_int_eq(a->fixed_size, 3);
	ck_assert_int_eq(st_evreg_get(&reg, ST_EV_STATEDUMP_BIN_INFO)->fixed_size, -1);
	/* the declaration it is charged for is the one written */
	ck_assert_uint_ge(a->decl_bytes, st_class_decl(NULL, 0, a, ST_EV_BUILTIN_COUNT));
	st_evreg_free(&reg);
}
END_TEST

/* A DOUBLE is 8 bytes in records, a CTF binary64 in the metadata under
 * the name the metadata's top declares. */
START_TEST(double_declared)
{
	static const struct st_evfield f[] = { { "n", ST_TYPE_U32 }, { "ratio", ST_TYPE_DOUBLE } };
	struct st_evreg reg;
	struct st_evclass *c;
	char decl[512], path[128], meta[8192];
	struct fixture fx;
	FILE *in;
	size_t n;

	ck_assert_int_eq(st_evreg_init(&reg), 0);
	c = st_evreg_intern(&reg, "p", "d", f, 2);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->fixed_size, 12);
	st_class_decl(decl, sizeof(decl), c, 50);
	ck_assert_ptr_nonnull(strstr(decl, "\t\tdouble _ratio;\n"));
	st_evreg_free(&reg);

	setup(&fx);
	snprintf(path, sizeof(path), "%s/metadata", fx.dir);
	in = fopen(path, "r");
	ck_assert_ptr_nonnull(in);
	n = fread(meta, 1, sizeof(meta) - 1, in);
	fclose(in);
	meta[n] = '\0';
	ck_assert_ptr_nonnull(strstr(meta, "typealias floating_point { exp_dig = 11; mant_dig = 53; "
					   "byte_order = le; align = 8; } := double;\n"));
	ck_assert_ptr_nonnull(strstr(meta, "\t\tdouble _r;\n"));
	teardown(&fx);
}
END_TEST

/* A call stack a process sends is checked before it is written: a
 * length of whole frames, within ST_STACK_MAX and the bytes there are
 * (a forged one spoils that record only). */
START_TEST(stack_fields_checked)
{
	static const struct st_evfield f[] = { { "x", ST_TYPE_HEX64 }, { "stack", ST_TYPE_STACK } };
	struct st_evreg reg;
	struct st_evclass *c;
	uint8_t src[8 + 2 + 8 * (ST_STACK_MAX + 1)] = { 0 }, dst[sizeof(src)];
	uint16_t len;

	ck_assert_int_eq(st_evreg_init(&reg), 0);
	c = st_evreg_intern(&reg, "p", "w", f, 2);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->fixed_size, -1);
	for (int i = 0; i < 8 * 3; i++)
		src[10 + i] = (uint8_t)i;
	/* 3 frames: copied whole */
	len = 24;
	memcpy(src + 8, &len, 2);
	ck_assert_int_eq(st_evclass_payload_copy(c, src, sizeof(src), dst), 8 + 2 + 24);
	ck_assert_int_eq(memcmp(dst, src, 8 + 2 + 24), 0);
	/* none */
	len = 0;
	memcpy(src + 8, &len, 2);
	ck_assert_int_eq(st_evclass_payload_copy(c, src, sizeof(src), dst), 8 + 2);
	/* not whole frames, too many, or past the bytes there are */
	len = 23;
	memcpy(src + 8, &len, 2);
	ck_assert_int_eq(st_evclass_payload_copy(c, src, sizeof(src), dst), -1);
	len = 8 * (ST_STACK_MAX + 1);
	memcpy(src + 8, &len, 2);
	ck_assert_int_eq(st_evclass_payload_copy(c, src, sizeof(src), dst), -1);
	len = 24;
	memcpy(src + 8, &len, 2);
	ck_assert_int_eq(st_evclass_payload_copy(c, src, 8 + 2 + 16, dst), -1);
	ck_assert_int_eq(st_evclass_payload_copy(c, src, 9, dst), -1);
	st_evreg_free(&reg);
}
END_TEST

/* A class lives as long as a process or a trace holds it; its registry id
 * is then reused; per uid, it counts once however many processes hold it. */
START_TEST(classes_counted_and_freed)
{
	struct st_evreg reg;
	struct st_evclass *a, *b;
	uint32_t id, many = 5000;

	ck_assert_int_eq(st_evreg_init(&reg), 0);
	a = st_evreg_intern(&reg, "p", "ev", all_types, 2);
	id = a->id;
	st_evclass_ref(a);
	st_evclass_ref(a);
	ck_assert(st_evclass_user_add(a, 1000));  /* new to uid 1000 */
	ck_assert(!st_evclass_user_add(a, 1000)); /* a second process */
	ck_assert(st_evclass_user_add(a, 0));
	ck_assert(st_evclass_used_by(a, 1000));
	ck_assert(!st_evclass_used_by(a, 1001));
	ck_assert(!st_evclass_user_del(a, 1000));
	ck_assert(st_evclass_user_del(a, 1000)); /* gone from uid 1000 */
	ck_assert(!st_evclass_used_by(a, 1000));
	st_evclass_unref(&reg, a);
	ck_assert_ptr_eq(st_evreg_find(&reg, "p", "ev", all_types, 2), a);
	st_evclass_unref(&reg, a); /* the last holder */
	ck_assert_ptr_null(st_evreg_find(&reg, "p", "ev", all_types, 2));
	b = st_evreg_intern(&reg, "p", "other", all_types, 1);
	ck_assert_uint_eq(b->id, id);
	/* many classes: found again through the growing hash table */
	for (uint32_t i = 0; i < many; i++) {
		char name[32];

		snprintf(name, sizeof(name), "ev%u", i);
		st_evclass_ref(st_evreg_intern(&reg, "flood", name, all_types, 1));
	}
	for (uint32_t i = 0; i < many; i++) {
		char name[32];
		struct st_evclass *c;

		snprintf(name, sizeof(name), "ev%u", i);
		c = st_evreg_find(&reg, "flood", name, all_types, 1);
		ck_assert_ptr_nonnull(c);
		st_evclass_unref(&reg, c);
	}
	ck_assert_uint_eq(reg.live, ST_EV_BUILTIN_COUNT + 1);
	st_evreg_free(&reg);
}
END_TEST

/* A trace declares for one uid's processes at most that uid's classes
 * quota: a user whose processes come and go cannot fill another's trace. */
START_TEST(trace_classes_per_uid)
{
	struct fixture f;
	char err[128];
	int32_t first;

	setup(&f); /* declares ut:all for uid 1000 */
	ck_assert_int_eq(st_quota_set("classes=3", err, sizeof(err)), 0);
	first = st_trace_class_id(&f.t, st_evreg_intern(&f.reg, "u", "a", all_types, 1), 1000);
	ck_assert_int_ge(first, 0);
	ck_assert_int_ge(st_trace_class_id(&f.t, st_evreg_intern(&f.reg, "u", "b", all_types, 1), 1000),
			 0);
	/* a fourth class for uid 1000: refused; one it has: its id */
	ck_assert_int_eq(st_trace_class_id(&f.t, st_evreg_intern(&f.reg, "u", "c", all_types, 1), 1000),
			 -1);
	ck_assert_int_eq(st_trace_class_id(&f.t, st_evreg_find(&f.reg, "u", "a", all_types, 1), 1000),
			 first);
	/* another user is not affected */
	ck_assert_int_ge(st_trace_class_id(&f.t, st_evreg_intern(&f.reg, "u", "c", all_types, 1), 1001),
			 0);
	ck_assert_int_eq(st_quota_set("classes=16384", err, sizeof(err)), 0);
	teardown(&f);
}
END_TEST

void st_log(int level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
}

void st_log_user(uid_t uid, int level, const char *fmt, ...)
{
	(void)uid;
	(void)level;
	(void)fmt;
}

int main(void)
{
	return st_run_tests("metadata", ST_TESTS(round_trip, classes_and_clock_declared, stack_fields_checked,
						 classes_interned_once, classes_counted_and_freed,
						 trace_classes_per_uid, double_declared));
}
