/*
 * Unit tests of the CTF reader (ctl/reader): the TSDL parser on a real
 * metadata file, on variations it must accept and on inputs it must refuse;
 * the reader on small traces built here byte by byte: time-ordered merge of
 * streams, lost-event notices, field values and times, and every kind of
 * corruption, each of which must give one error line and no crash.
 *
 * Build: gcc -std=gnu11 -I. -I$(builddir) $(pkg-config --cflags check)
 *        tests/unit/test_reader.c ctl/reader/\*.c $(pkg-config --libs check)
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/reader/decode.h"
#include "ctl/reader/fast.h"
#include "ctl/reader/reader.h"
#include "ctl/reader/tsdl.h"
#include "tests/unit/ctfbuild.h"

/* ---- metadata ---- */

/* Written by `shimtrace record` (ctl/daemon/out/trace.c). */
static const char real_meta[] =
	"/* CTF 1.8 */\n"
	"\n"
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
	"\n"
	"trace {\n"
	"\tmajor = 1;\n"
	"\tminor = 8;\n"
	"\tuuid = \"e3260102-e98c-4773-9552-f79f6b14e417\";\n"
	"\tbyte_order = le;\n"
	"\tpacket.header := struct {\n"
	"\t\tuint32_t magic;\n"
	"\t\tuint8_t uuid[16];\n"
	"\t\tuint32_t stream_id;\n"
	"\t\tuint64_t stream_instance_id;\n"
	"\t};\n"
	"};\n"
	"\n"
	"env {\n"
	"\thostname = \"vm\";\n"
	"\tdomain = \"ust\";\n"
	"\ttracer_name = \"shimtrace\";\n"
	"\ttracer_major = 0;\n"
	"\ttracer_minor = 1;\n"
	"\ttrace_name = \"record\";\n"
	"\ttrace_creation_datetime = \"20261122T045314+0000\";\n"
	"\tclock_source = \"tsc\";\n"
	"};\n"
	"\n"
	"clock {\n"
	"\tname = \"shimtrace\";\n"
	"\tdescription = \"TSC (constant, non-stop), calibrated\";\n"
	"\tfreq = 2299999944;\n"
	"\toffset_s = 1795319440;\n"
	"\toffset = 655077876;\n"
	"\tprecision = 0;\n"
	"\tabsolute = true;\n"
	"};\n"
	"\n"
	"typealias integer { size = 64; align = 8; signed = false; map = clock.shimtrace.value; } := uint64_clock_t;\n"
	"typealias integer { size = 24; align = 8; signed = false; map = clock.shimtrace.value; } := uint24_clock_t;\n"
	"\n"
	"stream {\n"
	"\tid = 0;\n"
	"\tpacket.context := struct {\n"
	"\t\tuint64_clock_t timestamp_begin;\n"
	"\t\tuint64_clock_t timestamp_end;\n"
	"\t\tuint64_t content_size;\n"
	"\t\tuint64_t packet_size;\n"
	"\t\tuint64_t packet_seq_num;\n"
	"\t\tuint64_t events_discarded;\n"
	"\t\tint32_t pid;\n"
	"\t\tint32_t tid;\n"
	"\t};\n"
	"\tevent.header := struct {\n"
	"\t\tenum : uint8_t { compact = 0 ... 254, extended = 255 } id;\n"
	"\t\tvariant <id> {\n"
	"\t\t\tstruct { uint24_clock_t timestamp; } compact;\n"
	"\t\t\tstruct { uint32_t id; uint64_clock_t timestamp; } extended;\n"
	"\t\t} v;\n"
	"\t};\n"
	"\tevent.context := struct {\n"
	"\t\tinteger { size = 24; align = 8; signed = true; } _vpid;\n"
	"\t\tinteger { size = 48; align = 8; signed = false; base = 16; } _ip;\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"lttng_ust_statedump:start\";\n"
	"\tid = 0;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"lttng_ust_statedump:bin_info\";\n"
	"\tid = 1;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _baddr;\n"
	"\t\tinteger { size = 64; align = 8; signed = false; } _memsz;\n"
	"\t\tstring _path;\n"
	"\t\tinteger { size = 8; align = 8; signed = false; } _is_pic;\n"
	"\t\tinteger { size = 8; align = 8; signed = false; } _has_build_id;\n"
	"\t\tinteger { size = 8; align = 8; signed = false; } _has_debug_link;\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"lttng_ust_statedump:build_id\";\n"
	"\tid = 2;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _baddr;\n"
	"\t\tinteger { size = 64; align = 8; signed = false; } __build_id_length;\n"
	"\t\tinteger { size = 8; align = 8; signed = false; base = 16; } _build_id[__build_id_length];\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"lttng_ust_statedump:debug_link\";\n"
	"\tid = 3;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _baddr;\n"
	"\t\tinteger { size = 32; align = 8; signed = false; } _crc;\n"
	"\t\tstring _filename;\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"lttng_ust_statedump:end\";\n"
	"\tid = 4;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"lttng_ust_lib:load\";\n"
	"\tid = 5;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _baddr;\n"
	"\t\tinteger { size = 64; align = 8; signed = false; } _memsz;\n"
	"\t\tstring _path;\n"
	"\t\tinteger { size = 8; align = 8; signed = false; } _has_build_id;\n"
	"\t\tinteger { size = 8; align = 8; signed = false; } _has_debug_link;\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"lttng_ust_lib:build_id\";\n"
	"\tid = 6;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _baddr;\n"
	"\t\tinteger { size = 64; align = 8; signed = false; } __build_id_length;\n"
	"\t\tinteger { size = 8; align = 8; signed = false; base = 16; } _build_id[__build_id_length];\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"lttng_ust_lib:debug_link\";\n"
	"\tid = 7;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _baddr;\n"
	"\t\tinteger { size = 32; align = 8; signed = false; } _crc;\n"
	"\t\tstring _filename;\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"lttng_ust_lib:unload\";\n"
	"\tid = 8;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _baddr;\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"shimtrace:process\";\n"
	"\tid = 9;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 32; align = 8; signed = true; } _ppid;\n"
	"\t\tinteger { size = 32; align = 8; signed = false; } _uid;\n"
	"\t\tstring _name;\n"
	"\t\tstring _exe;\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"pthread:mutex_unlock\";\n"
	"\tid = 10;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _mutex;\n"
	"\t\tinteger { size = 32; align = 8; signed = true; } _result;\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"pthread:mutex_trylock\";\n"
	"\tid = 11;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _mutex;\n"
	"\t\tinteger { size = 32; align = 8; signed = true; } _result;\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"pthread:mutex_lock\";\n"
	"\tid = 12;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _mutex;\n"
	"\t\tinteger { size = 32; align = 8; signed = true; } _result;\n"
	"\t\tinteger { size = 64; align = 8; signed = false; } _wait_ns;\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"pthread:mutex_wait\";\n"
	"\tid = 13;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _mutex;\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"pthread:mutex_destroy\";\n"
	"\tid = 14;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _mutex;\n"
	"\t\tinteger { size = 32; align = 8; signed = true; } _result;\n"
	"\t};\n"
	"};\n"
	"\n"
	"event {\n"
	"\tname = \"pthread:mutex_init\";\n"
	"\tid = 15;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _mutex;\n"
	"\t\tinteger { size = 32; align = 8; signed = true; } _result;\n"
	"\t};\n"
	"};\n"
	"\n";

static char *replace_first(const char *src, const char *old, const char *new)
{
	const char *at = strstr(src, old);
	size_t a, o = strlen(old), n = strlen(new);
	char *s;

	ck_assert_msg(at != NULL, "'%s' not in the metadata", old);
	a = (size_t)(at - src);
	s = malloc(strlen(src) - o + n + 1);
	ck_assert_ptr_nonnull(s);
	memcpy(s, src, a);
	memcpy(s + a, new, n);
	strcpy(s + a + n, at + o);
	return s;
}

static int parse(const char *text, size_t len, struct st_tsdl *t, char *err, size_t errlen)
{
	err[0] = '\0';
	return st_tsdl_parse(t, text, len, err, errlen);
}

static const struct st_event_class *find_class(const struct st_tsdl *t, const char *name)
{
	for (uint32_t i = 0; i < t->nevents; i++)
		if (strcmp(t->events[i].name, name) == 0)
			return &t->events[i];
	return NULL;
}

/* The compact/extended event header of the real metadata, planned. */
static void check_compact_header(const struct st_plan *eh)
{
	static const char *const names[] = { "id", "v", "v.compact.timestamp", "v.extended.id",
					     "v.extended.timestamp" };
	const struct st_enumeration *en;
	const struct st_variant *vr;

	ck_assert(!eh->fixed);
	ck_assert_uint_eq(eh->n, 5);
	for (uint32_t i = 0; i < eh->n; i++)
		ck_assert_str_eq(eh->v[i].tsdl_name, names[i]);
	en = eh->v[0].enumeration;
	ck_assert_ptr_nonnull(en);
	ck_assert(!en->is_signed);
	ck_assert_uint_eq(en->n, 2);
	ck_assert_str_eq(en->v[0].label, "compact");
	ck_assert_uint_eq(en->v[0].lo, 0);
	ck_assert_uint_eq(en->v[0].hi, 254);
	ck_assert_str_eq(en->v[1].label, "extended");
	ck_assert_uint_eq(en->v[1].lo, 255);
	ck_assert_uint_eq(en->v[1].hi, 255);
	ck_assert_int_eq(eh->v[1].kind, ST_FIELD_VARIANT);
	vr = eh->v[1].variant;
	ck_assert_uint_eq(vr->tag, 0);
	ck_assert_uint_eq(vr->nopt, 2);
	ck_assert_uint_eq(vr->end, 5);
	ck_assert_str_eq(vr->opt[0].name, "compact");
	ck_assert_uint_eq(vr->opt[0].first, 2);
	ck_assert_uint_eq(vr->opt[0].end, 3);
	ck_assert_uint_eq(vr->opt[1].first, 3);
	ck_assert_uint_eq(vr->opt[1].end, 5);
	ck_assert_uint_eq(vr->nrange, 2);
	ck_assert_int_eq(vr->range[1].option, 1);
	ck_assert_uint_eq(vr->range[1].lo, 255);
	ck_assert_int_eq(eh->v[0].in_variant, -1);
	ck_assert_int_eq(eh->v[2].in_variant, 1);
	ck_assert_uint_eq(eh->v[2].option, 0);
	ck_assert_uint_eq(eh->v[4].option, 1);
	ck_assert_uint_eq(eh->v[2].size, 3);
	ck_assert(eh->v[2].clock);
	ck_assert(eh->v[4].clock);
	ck_assert(!eh->v[3].clock);
}

START_TEST(test_parse_real)
{
	struct st_tsdl t;
	char err[512];
	const struct st_stream_class *sc;
	const struct st_event_class *c;
	int k;

	ck_assert_msg(parse(real_meta, strlen(real_meta), &t, err, sizeof(err)) == 0, "%s", err);
	ck_assert(t.has_uuid);
	ck_assert_int_eq(t.uuid[0], 0xe3);
	ck_assert_int_eq(t.uuid[15], 0x17);
	ck_assert_int_eq(t.nclocks, 1);
	ck_assert_str_eq(t.clocks[0].name, "shimtrace");
	ck_assert_uint_eq(t.clocks[0].freq, 2299999944ull);
	ck_assert_int_eq(t.clocks[0].offset_s, 1795319440);
	ck_assert_int_ge(t.ph_magic, 0);
	ck_assert_int_ge(t.ph_uuid, 0);
	ck_assert_int_ge(t.ph_stream_id, 0);
	ck_assert_int_ge(t.ph_instance_id, 0);
	ck_assert_int_eq(t.nstreams, 1);
	sc = &t.streams[0];
	ck_assert_ptr_eq(sc->clock, &t.clocks[0]);
	ck_assert_int_ge(sc->pc_content_size, 0);
	ck_assert_int_ge(sc->pc_packet_size, 0);
	ck_assert_int_ge(sc->pc_discarded, 0);
	ck_assert_int_ge(sc->pc_pid, 0);
	ck_assert_int_ge(sc->pc_tid, 0);
	check_compact_header(&sc->event_header);
	/* id, v.compact.timestamp, v.extended.id, v.extended.timestamp */
	ck_assert_uint_eq(sc->neh_use, 4);
	ck_assert(sc->eh_use[0].is_id && sc->eh_use[0].variant == -1);
	ck_assert(!sc->eh_use[1].is_id && sc->eh_use[1].variant == 1);
	ck_assert_uint_eq(sc->eh_use[1].option, 0);
	ck_assert_uint_eq(sc->eh_use[1].size, 3);
	ck_assert(sc->eh_use[2].is_id && sc->eh_use[2].variant == 1);
	ck_assert_uint_eq(sc->eh_use[2].option, 1);
	ck_assert_uint_eq(sc->eh_use[2].field, 3);
	ck_assert(!sc->eh_use[3].is_id);
	ck_assert_uint_eq(sc->eh_use[3].size, 8);
	/* 24-bit vpid, 48-bit ip: fixed, 9 bytes */
	ck_assert(sc->event_context.fixed);
	ck_assert_uint_eq(sc->event_context.size, 9);
	ck_assert_int_eq(sc->ec_vtid, -1);
	ck_assert_str_eq(sc->event_context.v[sc->ec_vpid].name, "vpid");
	ck_assert_str_eq(sc->event_context.v[sc->ec_vpid].tsdl_name, "_vpid");
	ck_assert_int_eq(sc->event_context.v[sc->ec_vpid].kind, ST_FIELD_SINT);
	ck_assert_int_eq(sc->event_context.v[sc->ec_vpid].size, 3);
	ck_assert_int_eq(sc->event_context.v[sc->ec_ip].kind, ST_FIELD_HEX);
	ck_assert_int_eq(sc->event_context.v[sc->ec_ip].size, 6);
	ck_assert_int_eq(t.nevents, 16);

	c = find_class(&t, "pthread:mutex_lock");
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->id, 12);
	ck_assert_ptr_eq(sc->by_id[12], c);
	ck_assert_int_eq(c->fields.n, 3);
	ck_assert_str_eq(c->fields.v[0].name, "mutex");
	ck_assert_int_eq(c->fields.v[0].kind, ST_FIELD_HEX);
	ck_assert_int_eq(c->fields.v[1].kind, ST_FIELD_SINT);
	ck_assert_int_eq(c->fields.v[1].size, 4);
	ck_assert_int_eq(c->fields.v[2].kind, ST_FIELD_UINT);
	ck_assert(c->fields.fixed);
	ck_assert_uint_eq(c->fields.size, 20);

	c = find_class(&t, "lttng_ust_statedump:build_id");
	ck_assert_ptr_nonnull(c);
	k = st_plan_find(&c->fields, "build_id");
	ck_assert_int_eq(k, 2);
	ck_assert_int_eq(c->fields.v[k].kind, ST_FIELD_BYTES);
	ck_assert_int_eq(c->fields.v[k].len_field, 1);
	ck_assert_str_eq(c->fields.v[1].name, "_build_id_length");
	ck_assert(!c->fields.fixed);

	c = find_class(&t, "shimtrace:process");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->fields.v[st_plan_find(&c->fields, "name")].kind, ST_FIELD_STRING);
	ck_assert_int_eq(t.nenv, 8);
	st_tsdl_free(&t);
}
END_TEST

/* Comments, blocks in any order, aliases used before they are declared,
 * typedef, named and nested structures, alignment, hex and octal literals. */
static const char variant_meta[] =
	"/* CTF 1.8 */ // a line comment\n"
	"event { name = \"p:e\"; id = 0x1; fields := struct { my_u8 _a; struct point _p;\n"
	"        integer { size = 32; align = 32; signed = true; } _al; string { encoding = UTF8; } _s; }; };\n"
	"stream { event.header := struct { my_u16 id; my_clk timestamp; };\n"
	"         packet.context := struct { my_u64 content_size; my_u64 packet_size; }; };\n"
	"struct point { my_u8 x; /* inline */ my_u16 y; } align(16);\n"
	"typedef integer { size = 8; align = 8; signed = false; } my_u8;\n"
	"typealias integer { size = 16; signed = false; } := my_u16;\n"
	"typealias integer { size = 64; align = 010; map = clock.mono.value; } := my_clk;\n"
	"typealias my_clk := my_u64;\n"
	"clock { name = mono; freq = 1000000000; offset_s = -5; offset = 2500000000; };\n"
	"trace { major = 1; minor = 8; byte_order = native; };\n"
	"event { name = \"p:f\"; id = 0; };\n";

START_TEST(test_parse_variations)
{
	struct st_tsdl t;
	char err[512];
	const struct st_event_class *c;

	ck_assert_msg(parse(variant_meta, strlen(variant_meta), &t, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_int_eq(t.nstreams, 1);
	ck_assert_int_eq(t.ph_magic, -1);
	/* offset normalised: 2.5 s of offset go to offset_s */
	ck_assert_int_eq(t.clocks[0].offset_s, -3);
	ck_assert_uint_eq(t.clocks[0].offset, 500000000);
	ck_assert_int_eq(t.clocks[0].base_ns, -2500000000ll);
	c = find_class(&t, "p:e");
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->id, 1);
	ck_assert_int_eq(c->fields.n, 5);
	ck_assert_str_eq(c->fields.v[1].name, "p.x");
	ck_assert_str_eq(c->fields.v[1].tsdl_name, "_p.x");
	ck_assert_int_eq(c->fields.v[1].align, 2); /* the structure's alignment */
	ck_assert_int_eq(c->fields.v[2].align, 1);
	ck_assert_int_eq(c->fields.v[3].align, 4);
	ck_assert_int_eq(c->fields.v[4].kind, ST_FIELD_STRING);
	ck_assert(!c->fields.fixed);
	c = find_class(&t, "p:f");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->fields.n, 0);
	ck_assert(t.streams[0].event_header.v[1].clock);
	st_tsdl_free(&t);
}
END_TEST

/* Enumerations and variants written every way TSDL allows: named and
 * referred to, labels quoted, with values, ranges or none (the previous
 * value + 1), signed, a container-less enumeration (of type "int"), the
 * tag given where the variant is used, options of every kind (integer,
 * structure, empty structure), a variant in a structure tagged by its
 * sibling, labels that name no option. */
static const char choice_meta[] =
	"/* CTF 1.8 */\n"
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 8; align = 8; signed = true; } := int;\n"
	"typealias integer { size = 64; align = 8; signed = false; map = clock.c.value; } := clk;\n"
	"typealias integer { size = 16; align = 8; signed = false; map = clock.c.value; } := clk16;\n"
	"clock { name = c; };\n"
	"trace { major = 1; minor = 8; byte_order = le; };\n"
	"enum kind : uint8_t { SMALL, \"big one\" = 7, RANGE = 10 ... 12, AFTER, };\n"
	"enum sign { NEG = -3 ... -1, ZERO, POS = 1 ... 5 };\n"
	"variant opts { clk16 SMALL; struct { uint32_t id; clk timestamp; } RANGE; };\n"
	"stream { event.header := struct {\n"
	"  enum kind id;\n"
	"  variant opts <id> v;\n"
	"  struct { enum sign s; variant <s> { uint8_t NEG; struct { } ZERO; uint32_t POS; } w; } in;\n"
	"}; };\n"
	"event { name = \"e\"; id = 0; };\n";

static const char *const choice_fields[] = {
	"id",	"v", "v.SMALL", "v.RANGE.id", "v.RANGE.timestamp", "in.s", "in.w", "in.w.NEG",
	"in.w.POS",
};

START_TEST(test_parse_choices)
{
	struct st_tsdl t;
	char err[512];
	const struct st_plan *eh;
	const struct st_enumeration *en;
	const struct st_variant *vr;

	ck_assert_msg(parse(choice_meta, strlen(choice_meta), &t, err, sizeof(err)) == 0, "%s", err);
	eh = &t.streams[0].event_header;
	ck_assert_uint_eq(eh->n, sizeof(choice_fields) / sizeof(choice_fields[0]));
	for (uint32_t i = 0; i < eh->n; i++)
		ck_assert_str_eq(eh->v[i].tsdl_name, choice_fields[i]);
	en = eh->v[0].enumeration;
	ck_assert_uint_eq(en->n, 4);
	ck_assert_str_eq(en->v[1].label, "big one");
	ck_assert_uint_eq(en->v[0].lo, 0);
	ck_assert_uint_eq(en->v[2].hi, 12);
	ck_assert_uint_eq(en->v[3].lo, 13); /* after RANGE */
	/* options in order, then the labels without one */
	vr = eh->v[1].variant;
	ck_assert_uint_eq(vr->nrange, 4);
	ck_assert_int_eq(vr->range[0].option, 0);
	ck_assert_int_eq(vr->range[1].option, 1);
	ck_assert_uint_eq(vr->range[1].lo, 10);
	ck_assert_int_eq(vr->range[2].option, -1);
	ck_assert_str_eq(vr->range[2].label, "big one");
	ck_assert_str_eq(vr->range[3].label, "AFTER");
	/* the signed one, of the type "int", and its variant */
	en = eh->v[5].enumeration;
	ck_assert(en->is_signed);
	ck_assert_int_eq(eh->v[5].kind, ST_FIELD_SINT);
	ck_assert_int_eq((int64_t)en->v[0].lo, -3);
	ck_assert_int_eq((int64_t)en->v[1].lo, 0);
	vr = eh->v[6].variant;
	ck_assert_uint_eq(vr->tag, 5);
	ck_assert(vr->is_signed);
	ck_assert_uint_eq(vr->nopt, 3);
	ck_assert_uint_eq(vr->opt[1].first, vr->opt[1].end); /* ZERO: empty */
	ck_assert_int_eq(eh->v[8].in_variant, 6);
	ck_assert_uint_eq(eh->v[8].option, 2);
	/* id, v.SMALL, v.RANGE.id, v.RANGE.timestamp */
	ck_assert_uint_eq(t.streams[0].neh_use, 4);
	ck_assert_uint_eq(t.streams[0].eh_use[1].size, 2);
	st_tsdl_free(&t);
}
END_TEST

/* Records of choice_meta's header decoded: the selected options' fields
 * present, the others not, and tags that select nothing refused. */
START_TEST(test_decode_choices)
{
	static const struct {
		uint8_t bytes[20];
		uint64_t len;
		const char *present; /* one letter per field: p present, - not */
		const char *why;     /* NULL: decodes */
	} recs[] = {
		{ { 0, 0x34, 0x12, 0xfe, 0x42 }, 5, "ppp--ppp-", NULL },
		{ { 11, 1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 3, 7, 0, 0, 0 }, 18, "pp-pppp-p", NULL },
		{ { 0, 1, 0, 0 }, 4, "ppp--pp--", NULL },
		{ { 7 }, 1, NULL, "variant 'v': its tag 'id' is 7 ('big one'), which names no option" },
		{ { 9 }, 1, NULL, "variant 'v': its tag 'id' is 9, which has no label" },
		{ { 0, 1, 0, 0x80 }, 4, NULL, "variant 'in.w': its tag 'in.s' is -128, which has no label" },
		{ { 10, 1, 0 }, 3, NULL, "field 'v.RANGE.id' does not fit in the packet" },
		{ { 0, 1, 0, 3, 1 }, 5, NULL, "field 'in.w.POS' does not fit in the packet" },
	};
	struct st_tsdl t;
	struct st_value v[16];
	char err[512], why[256];

	ck_assert_msg(parse(choice_meta, strlen(choice_meta), &t, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(t.streams[0].event_header.max_size, 18);
	/* each record twice: just long enough (checked field by field), and in
	 * room for the longest header (checked once) */
	for (size_t r = 0; r < 2 * sizeof(recs) / sizeof(recs[0]); r++) {
		const struct st_plan *eh = &t.streams[0].event_header;
		size_t k = r / 2;
		uint64_t pos = 0, end = r % 2 ? sizeof(recs[k].bytes) : recs[k].len;
		int ret;

		if (end != recs[k].len && recs[k].why && !strstr(recs[k].why, "variant"))
			continue; /* too short only when cut */
		memset(v, 0xa5, sizeof(v));
		why[0] = '\0';
		ret = st__decode(eh, recs[k].bytes, end, &pos, v, why, sizeof(why));
		if (recs[k].why) {
			ck_assert_int_eq(ret, -EBADMSG);
			ck_assert_msg(strcmp(why, recs[k].why) == 0, "record %zu: %s", k, why);
			continue;
		}
		ck_assert_msg(ret == 0, "record %zu: %s", k, why);
		ck_assert_uint_eq(pos, recs[k].len);
		for (uint32_t i = 0; i < eh->n; i++)
			ck_assert_msg(st_field_present(eh, v, i) == (recs[k].present[i] == 'p'),
				      "record %zu field %s", k, eh->v[i].tsdl_name);
	}
	/* the values of the second record */
	{
		const struct st_plan *eh = &t.streams[0].event_header;
		uint64_t pos = 0;

		ck_assert_int_eq(st__decode(eh, recs[1].bytes, recs[1].len, &pos, v, why, sizeof(why)), 0);
		ck_assert_uint_eq(v[1].u, 1); /* RANGE */
		ck_assert_uint_eq(v[3].u, 1);
		ck_assert_uint_eq(v[4].u, 9);
		ck_assert_int_eq(v[5].i, 3);
		ck_assert_uint_eq(v[6].u, 2); /* POS */
		ck_assert_uint_eq(v[8].u, 7);
		pos = 0;
		ck_assert_int_eq(st__decode(eh, recs[0].bytes, recs[0].len, &pos, v, why, sizeof(why)), 0);
		ck_assert_uint_eq(v[2].u, 0x1234);
		ck_assert_int_eq(v[5].i, -2);
		ck_assert_uint_eq(v[6].u, 0); /* NEG */
		ck_assert_uint_eq(v[7].u, 0x42);
	}
	st_tsdl_free(&t);
}
END_TEST

/* Edits of the real metadata that must be refused, and what the error
 * must say (NULL: edits that must be accepted). */
static const struct reject {
	const char *old, *new, *why;
} rejects[] = {
	{ "uint32_t magic;", "uint33_t magic;", "unknown type 'uint33_t'" },
	{ "size = 8; align = 8; signed = false; }", "size = 8; align = 8; signed = false; byte_order = be; }",
	  "big-endian integers" },
	{ "byte_order = le;", "byte_order = be;", "big-endian traces" },
	{ "string _path;", "enum : uint8_t { A, B } _e; variant <_e> { uint8_t A; } _v;",
	  "variants are not supported in event payloads" },
	/* enumerations and variants */
	{ "variant <id> {", "variant {", "variant 'v' has no tag" },
	{ "variant <id> {", "variant <nope> {", "its tag 'nope' is not an earlier field" },
	{ "variant <id> {", "variant <stream.event.header.nope> {", "is not an earlier field" },
	{ "variant <id> {", "variant <stream.event.context.id> {", "is not an earlier field" },
	{ "enum : uint8_t { compact = 0 ... 254, extended = 255 } id;", "uint8_t id;",
	  "its tag 'id' is not an enumeration" },
	{ "} id;\n\t\tvariant <id> {\n\t\t\tstruct { uint24_clock_t timestamp; } compact;\n"
	  "\t\t\tstruct { uint32_t id; uint64_clock_t timestamp; } extended;\n\t\t} v;",
	  "} id;\n\t\tvariant <later> { struct { uint24_clock_t timestamp; } compact; } v;\n"
	  "\t\tenum : uint8_t { compact } later;",
	  "its tag 'later' is not an earlier field" },
	{ "extended = 255 }", "extended = 256 }", "256 is out of the range of its 8-bit unsigned" },
	{ "compact = 0 ...", "compact = -1 ...", "-1 is out of the range" },
	{ "compact = 0 ... 254", "compact = 254 ... 3", "'compact': its range is empty" },
	{ "extended = 255 }", "extended = 255, after }", "'after': no value follows" },
	{ "enum : uint8_t {", "enum {", "unknown type 'int'" },
	{ "enum : uint8_t {", "enum : struct { uint8_t a; } {", "type of an enumeration must be an integer" },
	{ "enum : uint8_t {", "enum : int32_t {", "event.header field 'id' must be an unsigned integer" },
	{ "extended = 255 }", "extended = 255, }", NULL }, /* a trailing comma is fine */
	{ "extended = 255 }", "extended = 255 x }", "expected ',' or '}' after an enumerator" },
	{ "enum : uint8_t { compact = 0 ... 254, extended = 255 }", "enum : uint8_t { }",
	  "enumeration without labels" },
	{ "struct { uint24_clock_t timestamp; } compact;", "struct { } compact; struct { } compact;",
	  "option 'compact' is declared twice" },
	{ "struct { uint24_clock_t timestamp; } compact;",
	  "struct { uint24_clock_t timestamp; } compact; uint8_t compact;", "declared twice" },
	{ "} v;", "} v[2];", "arrays of variants are not supported" },
	{ "variant <id> {\n\t\t\tstruct { uint24_clock_t timestamp; } compact;\n"
	  "\t\t\tstruct { uint32_t id; uint64_clock_t timestamp; } extended;\n\t\t} v;",
	  "variant <id> { };", "variant without options" },
	{ "variant <id> {", "variant <id> { variant <id> { variant <id> { variant <id> { variant <id> { "
	  "variant <id> { variant <id> { variant <id> { variant <id> { variant <id> { variant <id> { "
	  "variant <id> { variant <id> { variant <id> { variant <id> { variant <id> { variant <id> {",
	  "nested too deep" },
	{ "typealias integer { size = 8;", "variant loop <id> { variant loop x; }; typealias integer { size = 8;",
	  NULL }, /* declared, never used: fine */
	{ "} v;", "} v; variant loop <id> { variant loop x; uint8_t compact; } v3;",
	  "nested too deep" },
	/* a sequence's length: in its own option, or around it; not in another */
	{ "uint24_clock_t timestamp; } compact;", "uint24_clock_t timestamp; uint8_t _l; "
	  "uint8_t _s[stream.event.header.v.compact._l]; uint8_t _t[id]; } compact;", NULL },
	{ "uint32_t id; uint64_clock_t", "uint32_t id; uint8_t _s[stream.event.header.v.compact.timestamp]; "
	  "uint64_clock_t", "is not an earlier unsigned" },
	{ "integer { size = 24; align = 8; signed = false; map", "integer { size = 20; align = 8; signed = false; map",
	  "20-bit integers are not supported" },
	{ "integer { size = 48; align = 8;", "integer { size = 72; align = 8;", "72-bit integers" },
	/* floating point: IEEE 754 binary64 and binary32, little-endian, whole bytes */
	{ "string _path;", "floating_point { exp_dig = 8; mant_dig = 24; } _f;", NULL },
	{ "string _path;", "floating_point { mant_dig = 53; exp_dig = 11; align = 64; byte_order = native; } _f;",
	  NULL },
	{ "uint64_t;\n", "uint64_t;\ntypealias floating_point { exp_dig = 11; mant_dig = 53; } := double;\n",
	  NULL },
	{ "string _path;", "floating_point { exp_dig = 15; mant_dig = 113; } _f;",
	  "floating_point with exp_dig = 15 and mant_dig = 113 is not supported (11 and 53: double, "
	  "8 and 24: float)" },
	{ "string _path;", "floating_point { exp_dig = 11; mant_dig = 52; } _f;", "mant_dig = 52 is not" },
	{ "string _path;", "floating_point { exp_dig = 11; } _f;",
	  "floating_point without exp_dig and mant_dig" },
	{ "string _path;", "floating_point { exp_dig = 11; mant_dig = 53; byte_order = be; } _f;",
	  "big-endian floating-point numbers are not supported" },
	{ "string _path;", "floating_point { exp_dig = 11; mant_dig = 53; align = 4; } _f;",
	  "floating-point numbers not aligned on a byte boundary" },
	{ "string _path;", "floating_point { exp_dig = 11; mant_dig = 53; size = 64; } _f;",
	  "unknown floating_point attribute 'size'" },
	{ "string _path;", "floating_point { exp_dig = 11; mant_dig = -53; } _f;",
	  "bad value for floating_point attribute 'mant_dig'" },
	{ "string _path;", "floating_point { exp_dig = 11; mant_dig = 53; align = x; } _f;",
	  "bad value for floating_point attribute 'align'" },
	{ "string _path;", "floating_point { exp_dig = 11; mant_dig = 53; } _f[2];",
	  "only arrays and sequences of 8-bit integers" },
	{ "enum : uint8_t {", "enum : floating_point { exp_dig = 11; mant_dig = 53; } {",
	  "type of an enumeration must be an integer" },
	{ "uint64_t events_discarded;",
	  "floating_point { exp_dig = 11; mant_dig = 53; } events_discarded;",
	  "field 'events_discarded' must be an unsigned integer" },
	{ "id = 13;", "id = 12;", "event id 12 is declared twice" },
	{ "integer { size = 32; align = 8; signed = false; } _crc;",
	  "integer { size = 32; align = 1; signed = false; } _crc;", "not aligned on a byte" },
	{ "integer { size = 32; align = 8; signed = true; } _result;",
	  "integer { size = 12; align = 8; signed = true; } _result;", "12-bit integers" },
	{ "base = 16; } _ip;", "base = 8; } _ip;", "base 8 integers" },
	{ "stream_id = 0;\n\tfields", "stream_id = 3;\n\tfields", "names stream 3, which is not declared" },
	{ "minor = 8;", "minor = 9;", "CTF 1.9 is not supported" },
	{ "map = clock.shimtrace.value;", "map = clock.other.value;", "unknown clock 'other'" },
	{ "_build_id[__build_id_length];", "_build_id[__nope];", "is not an earlier unsigned integer" },
	{ "string _path;", "string _path[4];", "only arrays and sequences of 8-bit integers" },
	{ "string _filename;", "string _crc;", "field '_crc' is declared twice" },
	{ "\tfields := struct {\n\t};", "\tcontext := struct { uint8_t a; };", "event-specific contexts" },
	/* "typealias T := NAME": NAME is a new name for T */
	{ "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;",
	  "typealias loop_a := uint8_t; typealias loop_b := loop_a; typealias uint8_t := loop_b;",
	  "type alias loop" },
	{ "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;",
	  "typealias integer { size = 8; align = 8; signed = false; } := uint8_t; typealias uint8_t := uint16_t;",
	  "type 'uint16_t' is declared twice" },
	{ "stream {\n\tid = 0;", "trace { };\nstream {\n\tid = 0;", "a second trace block" },
	{ "uuid = \"", "uuid = \"zz", "malformed trace uuid" },
	{ "name = \"shimtrace:process\";\n\tid = 9;", "name = \"shimtrace:process\";", "has no id" },
	{ "/* CTF 1.8 */", "/* CTF 2.0 */", "does not start with /* CTF 1.8 */" },
	{ "env {", "callsite {", "unknown block 'callsite'" },
	{ "freq = ", "freq = 0; //", "frequency of 0" },
	{ "stream {\n\tid = 0;",
	  "stream { id = 0; event.header := struct { uint64_clock_t timestamp; }; }; stream {\n\tid = 0;",
	  "stream id 0 is declared twice" },
	{ "\tmajor = 1;", "\tmajor = 1; /* unterminated", "unterminated comment" },
	{ "uint64_t events_discarded;", "uint64_t events_discarded; uint8_t pid[x];", "is not an earlier" },
	{ "uint64_t events_discarded;", "uint64_t events_discarded; int32_t pid[2];",
	  "only arrays and sequences of 8-bit integers" },
};

START_TEST(test_reject)
{
	const struct reject *r = &rejects[_i];
	char *text = replace_first(real_meta, r->old, r->new), err[512];
	struct st_tsdl t;

	if (!r->why) {
		ck_assert_msg(parse(text, strlen(text), &t, err, sizeof(err)) == 0, "%s: %s", r->new,
			      err);
		st_tsdl_free(&t);
		free(text);
		return;
	}
	ck_assert_msg(parse(text, strlen(text), &t, err, sizeof(err)) < 0, "accepted: %s", r->new);
	ck_assert_msg(strstr(err, r->why) != NULL, "'%s': got '%s'", r->why, err);
	ck_assert_msg(strstr(err, "(at offset ") != NULL, "no offset in '%s'", err);
	ck_assert_ptr_null(strchr(err, '\n'));
	free(text);
}
END_TEST

START_TEST(test_reject_other)
{
	static const char packetized[] = "\x57\x1d\xd1\x75 packet";
	const char *stream_start = strstr(real_meta, "stream {"), *first_event = strstr(real_meta, "event {");
	struct st_tsdl t;
	char err[512], *text;
	size_t len = strlen(real_meta);

	ck_assert(parse(packetized, sizeof(packetized) - 1, &t, err, sizeof(err)) < 0);
	ck_assert_ptr_nonnull(strstr(err, "packetized metadata"));
	/* a truncation inside a block is an error naming the end of the
	 * metadata; one between blocks is valid TSDL (fewer events) */
	for (size_t cut = 0; cut < len; cut++) {
		size_t k = cut;
		bool between;

		while (k > 0 && (real_meta[k - 1] == '\n' || real_meta[k - 1] == ' '))
			k--;
		between = k >= 2 && real_meta[k - 2] == '}' && real_meta[k - 1] == ';';

		if (parse(real_meta, cut, &t, err, sizeof(err)) == 0) {
			st_tsdl_free(&t);
			ck_assert_msg(between, "metadata cut at %zu accepted", cut);
			continue;
		}
		ck_assert_ptr_null(strchr(err, '\n'));
		ck_assert_ptr_nonnull(strstr(err, "(at offset "));
	}
	ck_assert(parse(real_meta, len / 2, &t, err, sizeof(err)) < 0);
	ck_assert_msg(strstr(err, "truncated") != NULL, "%s", err);
	ck_assert(parse("/* CTF 1.8 */ env { a = \"abc", 27, &t, err, sizeof(err)) < 0);
	ck_assert_msg(strstr(err, "unterminated string") != NULL, "%s", err);
	/* no stream block */
	text = malloc(len + 1);
	ck_assert_ptr_nonnull(text);
	memcpy(text, real_meta, (size_t)(stream_start - real_meta));
	strcpy(text + (stream_start - real_meta), first_event);
	ck_assert(parse(text, strlen(text), &t, err, sizeof(err)) < 0);
	ck_assert_msg(strstr(err, "no stream block") != NULL, "%s", err);
	/* a NUL inside */
	strcpy(text, real_meta);
	text[100] = '\0';
	ck_assert(parse(text, len, &t, err, sizeof(err)) < 0);
	ck_assert_msg(strstr(err, "NUL byte") != NULL, "%s", err);
	free(text);
	/* nesting bombs stop at the depth limit */
	{
		char deep[4096] = "/* CTF 1.8 */ trace { packet.header := ";

		for (int i = 0; i < 200; i++)
			strcat(deep, "struct { ");
		ck_assert(parse(deep, strlen(deep), &t, err, sizeof(err)) < 0);
		ck_assert_msg(strstr(err, "nested too deep") != NULL, "%s", err);
	}
}
END_TEST

/* ---- traces built by hand: tests/unit/ctfbuild.h ---- */

/* read_all's result for a trace read but for parts skipped as damaged */
#define READ_DAMAGED 1

/* Reads the whole trace; returns what the reader returned last (or
 * READ_DAMAGED), with the events and lost notices counted and the error
 * message (or the first damage) in err. */
static int read_all(const char *dir, uint64_t *events, uint64_t *lost, char *err, size_t errlen)
{
	struct st_reader *r;
	struct st_item it;
	int ret;

	*events = *lost = 0;
	err[0] = '\0';
	ret = st_reader_open(&r, dir, err, errlen);
	if (ret < 0)
		return ret;
	while ((ret = st_reader_next(r, &it)) > 0) {
		if (it.kind == ST_ITEM_EVENT)
			(*events)++;
		else
			*lost += it.lost->count;
	}
	if (ret < 0)
		snprintf(err, errlen, "%s", st_reader_error(r));
	else if (st_reader_damaged(r)) {
		/* (the first damage said, in err) */
		snprintf(err, errlen, "%s", st_reader_damage(r, 0));
		ret = READ_DAMAGED;
	}
	st_reader_close(r);
	return ret;
}

START_TEST(test_merge_order)
{
	struct buf a = { 0 }, b = { 0 };
	size_t p;
	char *d = make_dir(), err[512];
	struct st_reader *r;
	struct st_item it;
	/* (ts, tid) expected: ties at 30 go to the lower stream_instance_id,
	 * which is stream "zz" though its file name sorts last */
	static const uint64_t want_ts[] = { 10, 20, 30, 30, 40, 50, 60 };
	static const int32_t want_tid[] = { 1, 2, 2, 1, 2, 1, 1 };
	int n = 0;

	p = pkt_begin(&a, 7, 10, 30, 0, 100, 1);
	ev_a(&a, 10, 1, -1);
	ev_a(&a, 30, 3, -3);
	pkt_end(&a, p, 0);
	p = pkt_begin(&a, 7, 50, 60, 0, 100, 1);
	ev_a(&a, 50, 5, -5);
	ev_a(&a, 60, 6, -6);
	pkt_end(&a, p, 4096 - (a.len - p));
	p = pkt_begin(&b, 3, 20, 40, 0, 100, 2);
	ev_a(&b, 20, 2, -2);
	ev_a(&b, 30, 33, -33);
	ev_a(&b, 40, 4, -4);
	pkt_end(&b, p, 13);
	write_file(d, "metadata", small_meta, strlen(small_meta));
	write_file(d, "aa", a.p, a.len);
	write_file(d, "zz", b.p, b.len);
	write_file(d, ".hidden", "junk", 4);
	ck_assert_int_eq(mkdir(strcat(strcpy(err, d), "/index"), 0755), 0);

	ck_assert_msg(st_reader_open(&r, d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(st_reader_nstreams(r), 2);
	ck_assert_str_eq(st_reader_stream(r, 0)->file, "zz");
	ck_assert_uint_eq(st_reader_stream(r, 0)->instance_id, 3);
	while (st_reader_next(r, &it) > 0) {
		const struct st_event *ev = it.event;

		ck_assert_int_eq(it.kind, ST_ITEM_EVENT);
		ck_assert_int_lt(n, 7);
		ck_assert_uint_eq(ev->cycles, want_ts[n]);
		ck_assert_int_eq(ev->tid, want_tid[n]); /* the packet's */
		ck_assert_int_eq(ev->vtid, -1);
		ck_assert_int_eq(ev->pid, 100);
		ck_assert_int_eq(ev->vpid, 100);
		ck_assert_uint_eq(ev->ip, 0x401000 + want_ts[n]);
		ck_assert_str_eq(ev->cls->name, "t:a");
		ck_assert_int_eq(ev->fields[1].i, -(int64_t)ev->fields[0].u);
		/* 1700000000 s + 500 ns offset, 1 GHz clock */
		ck_assert_int_eq(ev->ns, 1700000000000000500ll + (int64_t)want_ts[n]);
		n++;
	}
	ck_assert_int_eq(n, 7);
	ck_assert_int_eq(st_reader_next(r, &it), 0);
	ck_assert_uint_eq(st_reader_lost(r), 0);
	st_reader_close(r);
	remove_dir(d);
	free(a.p);
	free(b.p);
}
END_TEST

START_TEST(test_fields)
{
	static const uint8_t bytes[] = { 0xa5, 0xf0, 0x00, 0x01 };
	struct buf b = { 0 };
	size_t p = pkt_begin(&b, 0, 5, 9, 0, 100, 101), pad;
	char *d, err[512];
	struct st_reader *r;
	struct st_item it;
	const struct st_event *ev;
	int k;

	ev_s(&b, 5, "hello \"x\"");
	ev_b(&b, 6, bytes, sizeof(bytes));
	ev_b(&b, 7, NULL, 0);
	ev_head(&b, 3, 8);
	/* The payload is a structure aligned as its widest field (4 bytes,
	 * from the packet start), and so is _b. */
	pad = (4 - (b.len - p) % 4) % 4;
	for (size_t i = 0; i < pad; i++)
		put_u8(&b, 0xee);
	put_u8(&b, 0x7f);
	pad = (4 - (b.len - p) % 4) % 4;
	for (size_t i = 0; i < pad; i++)
		put_u8(&b, 0xee);
	put_u32(&b, 0xdeadbeef);
	ev_s(&b, 9, "");
	pkt_end(&b, p, 0);
	d = trace_of(&b);

	ck_assert_msg(st_reader_open(&r, d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(st_reader_next(r, &it), 1);
	ev = it.event;
	ck_assert_str_eq(ev->cls->name, "t:s");
	ck_assert_str_eq(ev->fields[0].ptr, "hello \"x\"");
	ck_assert_uint_eq(ev->fields[0].len, 9);
	ck_assert_int_eq(ev->pid, 100);
	ck_assert_int_eq(ev->tid, 101);
	ck_assert_int_eq(st_reader_next(r, &it), 1);
	ev = it.event;
	k = st_event_class_field(ev->cls, "b");
	ck_assert_int_eq(k, 1);
	ck_assert_int_eq(st_event_class_field(ev->cls, "_b_length"), 0);
	ck_assert_int_eq(st_event_class_field(ev->cls, "nope"), -1);
	ck_assert_uint_eq(ev->fields[k].len, 4);
	ck_assert_mem_eq(ev->fields[k].ptr, bytes, 4);
	ck_assert_int_eq(st_reader_next(r, &it), 1);
	ck_assert_uint_eq(it.event->fields[1].len, 0);
	ck_assert_int_eq(st_reader_next(r, &it), 1);
	ev = it.event;
	ck_assert_str_eq(ev->cls->name, "t:al");
	ck_assert_uint_eq(ev->fields[0].u, 0x7f);
	ck_assert_uint_eq(ev->fields[1].u, 0xdeadbeef);
	ck_assert_int_eq(st_reader_next(r, &it), 1);
	ck_assert_uint_eq(it.event->fields[0].len, 0);
	ck_assert_int_eq(st_reader_next(r, &it), 0);
	st_reader_close(r);
	remove_dir(d);
	free(b.p);
}
END_TEST

/* Floating point: small_meta and two classes, t:d (a binary64 and an
 * integer, fixed: the fast decoder's) and t:f (a string, then a binary32
 * aligned on 4 bytes and a binary64 on 8, from the packet start: field by
 * field). */
static const char float_classes[] =
	"typealias floating_point { exp_dig = 11; mant_dig = 53; byte_order = le; align = 8; } := double;\n"
	"event { name = \"t:d\"; id = 5; stream_id = 0; fields := struct { double _d; int32_t _y; }; };\n"
	"event { name = \"t:f\"; id = 6; stream_id = 0; fields := struct { string _s;\n"
	"  floating_point { exp_dig = 8; mant_dig = 24; align = 32; } _f;\n"
	"  floating_point { exp_dig = 11; mant_dig = 53; align = 64; } _g; }; };\n";

static uint64_t bits_of(double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	return u;
}

static void pad_to(struct buf *b, size_t start, size_t align)
{
	while ((b->len - start) % align)
		put_u8(b, 0xee);
}

/* Every kind of double, read bit for bit (NaN with its payload and sign,
 * the infinities, -0, subnormals), by both decoders; floats widened
 * exactly. */
START_TEST(test_floats)
{
	static const uint64_t d[] = {
		0x3fe0000000000000ull, /* 0.5 */
		0xfe37e43c8800759cull, /* -1e300 */
		0x400921fb54442d18ull, /* pi */
		0x7ff8000000000000ull, /* NaN */
		0xfff8000000000123ull, /* -NaN, a payload */
		0x7ff0000000000000ull, /* inf */
		0xfff0000000000000ull, /* -inf */
		0x8000000000000000ull, /* -0 */
		0x0000000000000001ull, /* the least subnormal */
		0x000fffffffffffffull, /* the greatest subnormal */
		0x7fefffffffffffffull, /* the greatest double */
	};
	static const float f[] = { 1.5f, -0.0f, 1e-45f, 3.4028235e38f };
	enum { ND = sizeof(d) / sizeof(d[0]), NF = sizeof(f) / sizeof(f[0]) };
	char *meta = malloc(strlen(small_meta) + sizeof(float_classes)), *dir = make_dir(), err[512];
	struct buf b = { 0 };
	size_t p = pkt_begin(&b, 0, 10, 100, 0, 7, 7);
	uint64_t ts = 10;

	ck_assert_ptr_nonnull(meta);
	strcat(strcpy(meta, small_meta), float_classes);
	write_file(dir, "metadata", meta, strlen(meta));
	for (int i = 0; i < ND; i++) {
		ev_head(&b, 5, ts++);
		put_u64(&b, d[i]);
		put_u32(&b, (uint32_t)-i);
	}
	for (int i = 0; i < NF; i++) {
		uint32_t fb;

		memcpy(&fb, &f[i], 4);
		ev_head(&b, 6, ts++);
		pad_to(&b, p, 8); /* (a structure is aligned as its widest field) */
		put(&b, "x", 2);
		pad_to(&b, p, 4);
		put_u32(&b, fb);
		pad_to(&b, p, 8);
		put_u64(&b, d[i]);
	}
	pkt_end(&b, p, 0);
	write_file(dir, "s0", b.p, b.len);

	for (int fast = 1; fast >= 0; fast--) {
		uint64_t before = st__fast_decoded;
		struct st_reader *r;
		struct st_item it;

		st__fast_enabled = fast;
		ck_assert_msg(st_reader_open(&r, dir, err, sizeof(err)) == 0, "%s", err);
		for (int i = 0; i < ND; i++) {
			const struct st_event *ev;
			double v;

			ck_assert_int_eq(st_reader_next(r, &it), 1);
			ev = it.event;
			ck_assert_str_eq(ev->cls->name, "t:d");
			ck_assert_int_eq(ev->cls->fields.v[0].kind, ST_FIELD_FLOAT);
			ck_assert_uint_eq(ev->cls->fields.v[0].size, 8);
			ck_assert(ev->cls->fields.fixed);
			ck_assert_uint_eq(ev->fields[0].u, d[i]);
			v = st_value_double(&ev->cls->fields.v[0], &ev->fields[0]);
			ck_assert_uint_eq(bits_of(v), d[i]);
			ck_assert_int_eq(ev->fields[1].i, -i);
		}
		for (int i = 0; i < NF; i++) {
			const struct st_event *ev;
			double v;

			ck_assert_int_eq(st_reader_next(r, &it), 1);
			ev = it.event;
			ck_assert_str_eq(ev->cls->name, "t:f");
			ck_assert_str_eq(ev->fields[0].ptr, "x");
			ck_assert_int_eq(ev->cls->fields.v[1].kind, ST_FIELD_FLOAT);
			ck_assert_uint_eq(ev->cls->fields.v[1].size, 4);
			v = st_value_double(&ev->cls->fields.v[1], &ev->fields[1]);
			ck_assert_uint_eq(bits_of(v), bits_of((double)f[i]));
			v = st_value_double(&ev->cls->fields.v[2], &ev->fields[2]);
			ck_assert_uint_eq(bits_of(v), d[i]);
		}
		ck_assert_int_eq(st_reader_next(r, &it), 0);
		st_reader_close(r);
		/* the fixed class went by the fast decoder when it was on */
		if (fast)
			ck_assert_uint_ge(st__fast_decoded - before, ND);
		else
			ck_assert_uint_eq(st__fast_decoded, before);
	}
	st__fast_enabled = true;
	remove_dir(dir);
	free(meta);
	free(b.p);
}
END_TEST

/* Compact timestamps: relative to the packet's timestamp_begin for its
 * first record, to the previous record's time after; their 24 bits wrap.
 * Extended headers: for ids above 254 and for gaps compact ones cannot
 * say. The thread is the packet's; the vpid is 24 bits, signed. */
START_TEST(test_compact_times)
{
	static const struct {
		uint32_t id;
		uint64_t ts;
		size_t size; /* of the record: says which header it has */
	} want[] = {
		{ 0, (5ull << 24) + 200, EV_C + 8 },	 /* relative to timestamp_begin */
		{ 0, (5ull << 24) + MASK24 - 1, EV_C + 8 },
		{ 0, (6ull << 24) + 3, EV_C + 8 },	 /* the low bits wrapped */
		{ 0, (8ull << 24) + 4, EV_X + 8 },	 /* too far for 24 bits */
		{ 300, (8ull << 24) + 10, EV_X + 4 },	 /* an id above 254 */
		{ 0, (8ull << 24) + 20, EV_C + 8 },	 /* after an extended one */
		{ 0, (10ull << 24) + 0x10, EV_C + 8 },	 /* first of its packet, wrapped */
		{ 0, (10ull << 24) + 0x11, EV_X + 8 },	 /* extended though compact would do */
	};
	struct buf b = { 0 };
	size_t p, n = 0;
	char *d, err[512];
	struct st_reader *r;
	struct st_item it;
	uint64_t prev_off = 0;

	p = pkt_begin(&b, 0, (5ull << 24) + 100, (9ull << 24), 0, 100, 7);
	b.vpid = -5;
	for (size_t i = 0; i < 6; i++) {
		ev_head(&b, want[i].id, want[i].ts);
		put_u32(&b, (uint32_t)i);
		if (want[i].id == 0)
			put_u32(&b, (uint32_t)-(int32_t)i);
	}
	pkt_end(&b, p, 0);
	p = pkt_begin(&b, 0, (9ull << 24) + 0xffff00, (11ull << 24), 0, 100, 8);
	b.vpid = 0x7fffff;
	ev_a(&b, want[6].ts, 6, -6);
	ev_head_as(&b, 0, want[7].ts, true);
	put_u32(&b, 7);
	put_u32(&b, (uint32_t)-7);
	pkt_end(&b, p, 0);
	d = trace_of(&b);

	ck_assert_msg(st_reader_open(&r, d, err, sizeof(err)) == 0, "%s", err);
	while (st_reader_next(r, &it) > 0) {
		const struct st_event *ev = it.event;

		ck_assert_int_eq(it.kind, ST_ITEM_EVENT);
		ck_assert_uint_lt(n, sizeof(want) / sizeof(want[0]));
		ck_assert_uint_eq(ev->cls->id, want[n].id);
		ck_assert_uint_eq(ev->cycles, want[n].ts);
		ck_assert_int_eq(ev->ns, 1700000000000000500ll + (int64_t)want[n].ts);
		ck_assert_uint_eq(ev->fields[0].u, n);
		ck_assert_int_eq(ev->pid, 100);
		ck_assert_int_eq(ev->tid, n < 6 ? 7 : 8);
		ck_assert_int_eq(ev->vpid, n < 6 ? -5 : 0x7fffff);
		ck_assert_int_eq(ev->vtid, -1);
		ck_assert_uint_eq(ev->ip, 0x401000 + want[n].ts);
		if (n == 0)
			ck_assert_uint_eq(ev->offset, PKT_HDR);
		else if (n != 6)
			ck_assert_uint_eq(ev->offset - prev_off, want[n - 1].size);
		prev_off = ev->offset;
		n++;
	}
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	ck_assert_str_eq(st_reader_error(r), "");
	st_reader_close(r);
	remove_dir(d);
	free(b.p);
}
END_TEST

/* Tag values that select no option of the header's variant: one record
 * makes the stream unreadable, with a message naming the value. */
START_TEST(test_bad_tag)
{
	static const struct {
		uint8_t tag;
		const char *why;
	} cases[] = {
		{ 251, "event header: variant 'v': its tag 'id' is 251 ('spare'), which names no option "
		       "(at offset 89)" },
		{ 252, "event header: variant 'v': its tag 'id' is 252, which has no label (at offset 89)" },
		{ 250, NULL },
	};
	char *meta = replace_first(small_meta, "compact = 0 ... 254,", "compact = 0 ... 250, spare = 251,");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf b = { 0 };
		size_t p = pkt_begin(&b, 0, 10, 20, 0, 100, 1);
		char *d = make_dir(), err[512];
		uint64_t ev, lost;
		int ret;

		put_u8(&b, cases[i].tag);
		put_le(&b, 20, 3);
		put_le(&b, 100, 3);
		put_le(&b, 0x401000, 6);
		pkt_end(&b, p, 0);
		write_file(d, "metadata", meta, strlen(meta));
		write_file(d, "s0", b.p, b.len);
		ret = read_all(d, &ev, &lost, err, sizeof(err));
		if (!cases[i].why) {
			/* a compact header of an id the metadata does not declare */
			ck_assert_msg(strstr(err, "unknown event id 250") != NULL, "%s", err);
		} else {
			/* (said, and the rest of the packet skipped) */
			ck_assert_int_eq(ret, READ_DAMAGED);
			ck_assert_msg(strstr(err, "/s0: ") && strstr(err, cases[i].why), "%s", err);
		}
		ck_assert_uint_eq(ev, 0);
		remove_dir(d);
		free(b.p);
	}
	free(meta);
}
END_TEST

/* The layout before compact headers (a 16-bit id, a 64-bit timestamp, the
 * thread in the event context) reads as well. */
START_TEST(test_previous_layout)
{
	char *m1 = replace_first(small_meta, "int32_t pid; int32_t tid; };", "int32_t pid; };");
	char *m2 = replace_first(m1, "enum : uint8_t { compact = 0 ... 254, extended = 255 } id;\n"
			     "    variant <id> { struct { clk24_t timestamp; } compact;\n"
			     "                   struct { uint32_t id; clk_t timestamp; } extended; } v; };\n"
			     "  event.context := struct { integer { size = 24; align = 8; signed = true; } _vpid;\n"
			     "    integer { size = 48;",
			     "uint16_t id; clk_t timestamp; };\n"
			     "  event.context := struct { int32_t _vpid; int32_t _vtid;\n"
			     "    integer { size = 64;");
	struct buf b = { 0 };
	size_t p;
	char *d = make_dir(), err[512];
	struct st_reader *r;
	struct st_item it;

	p = pkt_begin(&b, 0, 10, 20, 3, 100, 0);
	b.len -= 4; /* no tid in the packet context */
	for (uint64_t ts = 10; ts <= 20; ts += 10) {
		put_le(&b, 300, 2);
		put_u64(&b, ts);
		put_u32(&b, 100);
		put_u32(&b, 42);
		put_u64(&b, 0x401000);
		put_u32(&b, (uint32_t)ts);
	}
	pkt_end(&b, p, 0);
	write_file(d, "metadata", m2, strlen(m2));
	write_file(d, "s0", b.p, b.len);
	ck_assert_msg(st_reader_open(&r, d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(st_reader_next(r, &it), 1);
	ck_assert_int_eq(it.kind, ST_ITEM_LOST);
	ck_assert_int_eq(it.lost->tid, 42); /* the packet's first record's */
	for (uint64_t ts = 10; ts <= 20; ts += 10) {
		ck_assert_int_eq(st_reader_next(r, &it), 1);
		ck_assert_int_eq(it.kind, ST_ITEM_EVENT);
		ck_assert_str_eq(it.event->cls->name, "t:big");
		ck_assert_uint_eq(it.event->cycles, ts);
		ck_assert_uint_eq(it.event->fields[0].u, ts);
		ck_assert_int_eq(it.event->tid, 42);
		ck_assert_int_eq(it.event->vtid, 42);
		ck_assert_int_eq(it.event->vpid, 100);
	}
	ck_assert_int_eq(st_reader_next(r, &it), 0);
	st_reader_close(r);
	remove_dir(d);
	free(b.p);
	free(m1);
	free(m2);
}
END_TEST

START_TEST(test_lost)
{
	struct buf b = { 0 };
	size_t p;
	char *d, err[512];
	struct st_reader *r;
	struct st_item it;

	p = pkt_begin(&b, 0, 10, 20, 2, 100, 1); /* lost before the first packet */
	ev_a(&b, 10, 0, 0);
	ev_a(&b, 20, 0, 0);
	pkt_end(&b, p, 0);
	p = pkt_begin(&b, 0, 30, 40, 2, 100, 1); /* none more */
	ev_a(&b, 30, 0, 0);
	pkt_end(&b, p, 0);
	p = pkt_begin(&b, 0, 50, 70, 7002, 100, 5); /* 7000 more */
	ev_a(&b, 50, 0, 0);
	pkt_end(&b, p, 100);
	p = pkt_begin(&b, 0, 80, 80, 7003, 100, 6); /* one more, no event */
	pkt_end(&b, p, 0);
	d = trace_of(&b);

	ck_assert_msg(st_reader_open(&r, d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(st_reader_next(r, &it), 1);
	ck_assert_int_eq(it.kind, ST_ITEM_LOST);
	ck_assert_uint_eq(it.lost->count, 2);
	ck_assert_uint_eq(it.lost->begin_cycles, 10);
	ck_assert_uint_eq(it.lost->end_cycles, 20);
	ck_assert_int_eq(it.lost->pid, 100);
	ck_assert_int_eq(it.lost->tid, 1);
	ck_assert_str_eq(it.lost->stream->file, "s0");
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(st_reader_next(r, &it), 1);
		ck_assert_int_eq(it.kind, ST_ITEM_EVENT);
	}
	ck_assert_int_eq(st_reader_next(r, &it), 1);
	ck_assert_int_eq(it.kind, ST_ITEM_LOST);
	ck_assert_uint_eq(it.lost->count, 7000);
	ck_assert_uint_eq(it.lost->begin_cycles, 40); /* the previous packet's end */
	ck_assert_uint_eq(it.lost->end_cycles, 70);
	ck_assert_int_eq(it.lost->begin_ns, 1700000000000000540ll);
	ck_assert_int_eq(it.lost->tid, 5);
	ck_assert_int_eq(st_reader_next(r, &it), 1);
	ck_assert_int_eq(it.kind, ST_ITEM_EVENT);
	ck_assert_uint_eq(it.event->cycles, 50);
	ck_assert_int_eq(st_reader_next(r, &it), 1);
	ck_assert_int_eq(it.kind, ST_ITEM_LOST);
	ck_assert_uint_eq(it.lost->count, 1);
	ck_assert_int_eq(it.lost->tid, 6);
	ck_assert_int_eq(st_reader_next(r, &it), 0);
	ck_assert_uint_eq(st_reader_lost(r), 7003);
	st_reader_close(r);
	remove_dir(d);
	free(b.p);
}
END_TEST

START_TEST(test_empty_and_missing)
{
	char *d = make_dir(), err[512];
	uint64_t ev, lost;

	ck_assert_int_lt(read_all(d, &ev, &lost, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "no metadata file") != NULL, "%s", err);
	write_file(d, "metadata", small_meta, strlen(small_meta));
	write_file(d, "empty", "", 0);
	ck_assert_msg(read_all(d, &ev, &lost, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(ev, 0);
	remove_dir(d);
	ck_assert_int_lt(read_all("/nonexistent/trace", &ev, &lost, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "/nonexistent/trace: ") == err, "%s", err);
	ck_assert_int_lt(read_all("/etc/hostname", &ev, &lost, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "not a directory") != NULL, "%s", err);
}
END_TEST

/* ---- corruptions of a valid one-stream trace ---- */

/* Two packets (at 0 and `second`), four events. */
/* Two packets (at 0 and `second`), four events: compact, extended,
 * compact; extended. */
static struct buf good_trace(size_t *second)
{
	struct buf b = { 0 };
	size_t p = pkt_begin(&b, 0, 10, 30, 0, 100, 1);

	ev_a(&b, 10, 1, 1);
	ev_head_as(&b, 0, 20, true);
	put_u32(&b, 2);
	put_u32(&b, 2);
	ev_s(&b, 30, "abc");
	pkt_end(&b, p, 10);
	*second = b.len;
	p = pkt_begin(&b, 0, 40, 40, 0, 100, 1);
	ev_head_as(&b, 0, 40, true);
	put_u32(&b, 4);
	put_u32(&b, 4);
	pkt_end(&b, p, 0);
	return b;
}

/* Offsets in good_trace's first packet: its records */
#define REC2 (PKT_HDR + EV_C + 8)
#define REC3 (REC2 + EV_X + 8)

static const struct corruption {
	const char *what;
	size_t off;   /* in the second packet unless `first` */
	bool first;
	int width;    /* 8, 4, 2, 1: overwrite; 0: truncate the file at off; -1: append bytes */
	uint64_t value;
	const char *why;
	uint64_t events; /* read all the same: every whole packet's, and the
			  * records of a packet before a bad one */
} corruptions[] = {
	{ "magic", 0, true, 4, 0x12345678, "bad packet magic 0x12345678", 0 },
	{ "uuid", 4, false, 1, 0x77, "uuid is not the trace uuid", 3 },
	{ "stream id", 20, false, 4, 9, "unknown stream id 9", 3 },
	{ "content > packet", 48, false, 8, 4096 * 8, "exceeds packet_size", 3 },
	{ "content bits", 48, true, 8, 100 * 8 + 3, "is not whole bytes", 0 },
	{ "packet bits", 56, true, 8, 100 * 8 + 3, "is not whole bytes", 0 },
	{ "packet past end", 56, false, 8, 1 << 20, "runs past the end of the file", 3 },
	{ "packet size 0", 56, false, 8, 0, "exceeds packet_size", 3 },
	{ "header beyond content", 48, false, 8, 40 * 8, "exceed content_size", 3 },
	{ "truncated header", 30, false, 0, 0, "does not fit in the packet", 3 },
	{ "truncated packet", PKT_HDR + 5, false, 0, 0, "runs past the end of the file", 3 },
	{ "extended header cut", 48, false, 8, (PKT_HDR + 3) * 8,
	  "event header: field 'v.extended.id' does not fit in the packet", 3 },
	{ "extended timestamp cut", 48, false, 8, (PKT_HDR + 9) * 8,
	  "event header: field 'v.extended.timestamp' does not fit in the packet", 3 },
	{ "compact header cut", 48, true, 8, (REC3 + 2) * 8,
	  "event header: field 'v.compact.timestamp' does not fit in the packet", 3 },
	{ "context cut", 48, false, 8, (PKT_HDR + EV_X - 2) * 8,
	  "event t:a: field 'ip' does not fit in the packet", 3 },
	{ "unknown event id", PKT_HDR + 1, false, 4, 77, "unknown event id 77", 3 },
	{ "unknown compact event id", PKT_HDR, true, 1, 77, "unknown event id 77", 1 },
	{ "event ts backwards", PKT_HDR + 5, false, 8, 35, "goes back in time", 3 },
	{ "event ts backwards in packet", REC2 + 5, true, 8, 5, "goes back in time", 2 },
	/* a compact timestamp below the clock's low bits: they wrapped */
	{ "compact ts after the packet's end", REC3 + 1, true, 1, 5,
	  "timestamp_end 30 is before the packet's last event (16777221)", 3 },
	{ "compact ts after the next", PKT_HDR + 1, true, 1, 5, "goes back in time", 1 },
	{ "packet begins before previous end", 32, false, 8, 25, "goes back in time", 3 },
	{ "end before begin", 40, false, 8, 39, "is before timestamp_begin", 3 },
	{ "end before last event", 40, true, 8, 25, "before the packet's last event", 3 },
	{ "discarded goes down", 72, true, 8, 50, "events_discarded goes down", 3 },
	/* the string ends the packet's content: nothing after it can stop it */
	{ "string without NUL", REC3 + EV_C + 3, true, 1, 'x', "has no terminator", 3 },
	{ "sequence too long", 0, false, -1, 0, "does not fit in the packet", 4 },
	{ "trailing garbage", 0, false, -2, 0, "does not fit in the packet", 4 },
};

START_TEST(test_corrupt)
{
	const struct corruption *c = &corruptions[_i];
	size_t second, off;
	struct buf b = good_trace(&second);
	char *d, err[512];
	uint64_t ev, lost;
	int ret;

	off = (c->first ? 0 : second) + c->off;
	if (c->width > 0) {
		ck_assert_uint_le(off + (size_t)c->width, b.len);
		memcpy(b.p + off, &c->value, (size_t)c->width);
	} else if (c->width == 0) {
		b.len = off;
	} else if (c->width == -1) {
		/* a packet whose sequence length runs past its content */
		size_t p = pkt_begin(&b, 0, 50, 50, 0, 100, 1);

		ev_b(&b, 50, (const uint8_t *)"xy", 2);
		set_u64(&b, b.len - 10, 1000);
		pkt_end(&b, p, 0);
	} else {
		put(&b, "\xc1\x1f\xfc\xc1", 4);
	}
	d = trace_of(&b);
	ret = read_all(d, &ev, &lost, err, sizeof(err));
	/* (the damage is said, and what is whole read) */
	ck_assert_msg(ret == READ_DAMAGED, "%s: %d, not damaged (%llu events)", c->what, ret,
		      (unsigned long long)ev);
	ck_assert_msg(strstr(err, c->why) != NULL, "%s: '%s' not in '%s'", c->what, c->why, err);
	ck_assert_msg(ev == c->events, "%s: %llu events read, not %llu", c->what,
		      (unsigned long long)ev, (unsigned long long)c->events);
	ck_assert_msg(strstr(err, ": skipped the rest of ") != NULL, "%s: what was skipped? '%s'",
		      c->what, err);
	ck_assert_msg(strstr(err, "/s0: ") != NULL, "%s: no file in '%s'", c->what, err);
	ck_assert_msg(strstr(err, "(at offset ") != NULL, "%s: no offset in '%s'", c->what, err);
	ck_assert_ptr_null(strchr(err, '\n'));
	remove_dir(d);
	free(b.p);
}
END_TEST

/* The good trace reads whole: the corruptions above are what fails. */
START_TEST(test_good_trace)
{
	size_t second;
	struct buf b = good_trace(&second);
	char *d = trace_of(&b), err[512];
	uint64_t ev, lost;

	ck_assert_msg(read_all(d, &ev, &lost, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(ev, 4);
	ck_assert_uint_eq(lost, 0);
	remove_dir(d);
	free(b.p);
}
END_TEST

/* Random damage: any result but a crash or a hang, and errors on one line. */
START_TEST(test_random_damage)
{
	size_t second;
	struct buf good = good_trace(&second), b = { 0 };
	char *d = make_dir(), err[512];
	uint64_t ev, lost;
	unsigned seed = 12345;

	write_file(d, "metadata", small_meta, strlen(small_meta));
	for (int round = 0; round < 3000; round++) {
		int n = 1 + (int)(rand_r(&seed) % 4);

		b.len = 0;
		put(&b, good.p, good.len);
		for (int k = 0; k < n; k++) {
			size_t at = (size_t)rand_r(&seed) % b.len;

			switch (rand_r(&seed) % 4) {
			case 0:
				b.p[at] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
				break;
			case 1:
				b.p[at] = (uint8_t)rand_r(&seed);
				break;
			case 2:
				b.len = at;
				break;
			default:
				if (at + 8 <= b.len)
					memset(b.p + at, 0xff, 8);
			}
			if (b.len == 0)
				break;
		}
		write_file(d, "s0", b.p, b.len);
		if (read_all(d, &ev, &lost, err, sizeof(err)) < 0) {
			ck_assert_ptr_nonnull(strstr(err, "(at offset "));
			ck_assert_ptr_null(strchr(err, '\n'));
		}
	}
	remove_dir(d);
	free(good.p);
	free(b.p);
}
END_TEST

/* Clock cycles to ns as babeltrace2 converts them, whatever the frequency:
 * on random values and on those whose ns fall on or next to an integer,
 * where the conversion without a division must give way to it. */
START_TEST(test_clock_ns)
{
	static const uint64_t freqs[] = { 2096007000u, 1000000001u, 999999999u, 3, 33333333,
					  4294967291u, 2500000000u, 1000000000u };
	unsigned seed = 99;

	for (size_t k = 0; k < sizeof(freqs) / sizeof(freqs[0]); k++) {
		char freq[64], *meta, err[512];
		struct st_tsdl t;
		uint64_t f = freqs[k], step = f % 1000000000u && f >= 1000 ? f / 1000 : 1;

		snprintf(freq, sizeof(freq), "freq = %llu;", (unsigned long long)f);
		meta = replace_first(small_meta, "freq = 1000000000;", freq);
		ck_assert_msg(parse(meta, strlen(meta), &t, err, sizeof(err)) == 0, "%s", err);
		for (int i = 0; i < 400000; i++) {
			uint64_t c, want;
			int64_t got;
			double ns, top;

			switch (i % 4) {
			case 0: /* anywhere below 2^50 ns, and a few up to 2^62 ns */
				top = (double)f / 1e9 * (i % 100 ? 0x1p50 : 0x1p62);
				c = ((uint64_t)rand_r(&seed) << 31 | (uint64_t)rand_r(&seed)) %
				    (uint64_t)(top < 0x1p62 ? top : 0x1p62);
				break;
			case 1: /* ns on an integer, or a cycle either side */
			case 2:
			case 3:
				c = step * (1 + (uint64_t)(rand_r(&seed) % 100000000)) + (uint64_t)(i % 4) - 2;
				break;
			}
			ns = 1e9 * (double)c / (double)f;
			want = f == 1000000000u ? c : (uint64_t)ns;
			/* (less the clock's offset: ns at 0 cycles) */
			got = st_clock_ns(&t.clocks[0], c) - st_clock_ns(&t.clocks[0], 0);
			ck_assert_msg(got == (int64_t)want, "freq %llu, cycles %llu: %lld ns, not %llu",
				      (unsigned long long)f, (unsigned long long)c, (long long)got,
				      (unsigned long long)want);
		}
		st_tsdl_free(&t);
		free(meta);
	}
}
END_TEST

/* Everything read from the trace in dir, as text: each item with all its
 * values, then how reading ended. */
static char *digest(const char *dir)
{
	char *text = NULL, err[512];
	size_t size = 0;
	FILE *o = open_memstream(&text, &size);
	struct st_reader *r;
	struct st_item it;
	int ret;

	ck_assert_ptr_nonnull(o);
	ret = st_reader_open(&r, dir, err, sizeof(err));
	if (ret < 0) {
		fprintf(o, "open: %d %s\n", ret, err);
		fclose(o);
		return text;
	}
	while ((ret = st_reader_next(r, &it)) > 0) {
		const struct st_event *e = it.event;

		if (it.kind == ST_ITEM_LOST) {
			fprintf(o, "lost %llu\n", (unsigned long long)it.lost->count);
			continue;
		}
		fprintf(o, "%s %llu %lld %d %d %d %d %llx %llu:", e->cls->name,
			(unsigned long long)e->cycles, (long long)e->ns, e->pid, e->tid, e->vpid,
			e->vtid, (unsigned long long)e->ip, (unsigned long long)e->offset);
		for (uint32_t i = 0; i < e->cls->stream->event_context.n; i++)
			fprintf(o, " c%llx", (unsigned long long)e->context[i].u);
		for (uint32_t i = 0; i < e->cls->fields.n; i++) {
			const struct st_value *v = &e->fields[i];

			switch (e->cls->fields.v[i].kind) {
			case ST_FIELD_STRING:
				fprintf(o, " '%s'", (const char *)v->ptr);
				break;
			case ST_FIELD_BYTES:
				fprintf(o, " [");
				for (uint64_t k = 0; k < v->len; k++)
					fprintf(o, "%02x", ((const uint8_t *)v->ptr)[k]);
				fprintf(o, "]");
				break;
			default:
				fprintf(o, " %llx", (unsigned long long)v->u);
			}
		}
		fprintf(o, "\n");
	}
	fprintf(o, "end: %d %s\n", ret, st_reader_error(r));
	for (uint32_t i = 0; i < st_reader_damaged(r); i++)
		fprintf(o, "damage: %s\n", st_reader_damage(r, i) ? st_reader_damage(r, i) : "?");
	st_reader_close(r);
	fclose(o);
	return text;
}

/* A trace of many records of every kind in a few packets, so most are
 * far from their packet's end, where the fast decoder (fast.h) reads. */
static struct buf busy_trace(unsigned *seed)
{
	static const uint8_t bytes[] = { 1, 2, 3, 4, 5, 6, 7 };
	struct buf b = { 0 };
	uint64_t ts = 1000;

	for (int pk = 0; pk < 3; pk++) {
		size_t p = pkt_begin(&b, 0, ts, 0, 0, 100 + pk, 7);

		b.vpid = pk == 1 ? -3 : 0x123456;
		for (int i = 0; i < 300; i++) {
			uint32_t x = (uint32_t)rand_r(seed);

			ts += rand_r(seed) % 5 == 0 ? (1ull << 25) : (uint64_t)(rand_r(seed) % 5000);
			switch (rand_r(seed) % 6) {
			case 0:
			case 1:
				ev_a(&b, ts, x, -(int32_t)(x >> 1));
				break;
			case 2:
				ev_head_as(&b, 0, ts, true);
				put_u32(&b, x);
				put_u32(&b, x ^ 0x80000000u);
				break;
			case 3:
				ev_head(&b, 300, ts);
				put_u32(&b, x);
				break;
			case 4:
				ev_s(&b, ts, x & 1 ? "string" : "");
				break;
			default:
				ev_b(&b, ts, bytes, x % 8);
			}
		}
		set_u64(&b, p + 40, ts); /* timestamp_end: the last record's */
		pkt_end(&b, p, rand_r(seed) % 64);
	}
	return b;
}

/* The fast decoder and the plan decoder give the same items, values and
 * errors, on a whole trace and on damaged ones. */
START_TEST(test_fast_same)
{
	unsigned seed = 777;
	struct buf good = busy_trace(&seed), b = { 0 };
	char *d = make_dir();
	int rounds = 0, failed = 0;

	write_file(d, "metadata", small_meta, strlen(small_meta));
	for (int round = 0; round < 400; round++) {
		char *fast, *slow;

		b.len = 0;
		put(&b, good.p, good.len);
		for (int k = 0; round && k < 1 + rand_r(&seed) % 3; k++) {
			size_t at = (size_t)rand_r(&seed) % b.len;

			if (rand_r(&seed) % 3)
				b.p[at] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
			else
				b.p[at] = (uint8_t)rand_r(&seed);
		}
		write_file(d, "s0", b.p, b.len);
		uint64_t before = st__fast_decoded;

		st__fast_enabled = true;
		fast = digest(d);
		if (round == 0)
			ck_assert_uint_gt(st__fast_decoded - before, 300);
		before = st__fast_decoded;
		st__fast_enabled = false;
		slow = digest(d);
		ck_assert_uint_eq(st__fast_decoded, before);
		st__fast_enabled = true;
		ck_assert_msg(strcmp(fast, slow) == 0, "round %d: the two decoders differ", round);
		if (round == 0)
			ck_assert_msg(strstr(fast, "end: 0 \n") && !strstr(fast, "damage: ") &&
					      strlen(fast) > 900 * 40,
				      "the busy trace does not read whole: %.300s", fast);
		rounds++;
		failed += strstr(fast, "end: 0 \n") == NULL || strstr(fast, "damage: ") != NULL;
		free(fast);
		free(slow);
	}
	/* damage must have been met: not every round read whole */
	ck_assert_int_gt(failed, 50);
	ck_assert_int_eq(rounds, 400);
	remove_dir(d);
	free(good.p);
	free(b.p);
}
END_TEST

static Suite *reader_suite(void)
{
	Suite *s = suite_create("reader");
	TCase *tc = tcase_create("tsdl");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_parse_real);
	tcase_add_test(tc, test_parse_variations);
	tcase_add_test(tc, test_parse_choices);
	tcase_add_test(tc, test_decode_choices);
	tcase_add_loop_test(tc, test_reject, 0, (int)(sizeof(rejects) / sizeof(rejects[0])));
	tcase_add_test(tc, test_reject_other);
	suite_add_tcase(s, tc);
	tc = tcase_create("reader");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_merge_order);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_floats);
	tcase_add_test(tc, test_lost);
	tcase_add_test(tc, test_compact_times);
	tcase_add_test(tc, test_bad_tag);
	tcase_add_test(tc, test_previous_layout);
	tcase_add_test(tc, test_empty_and_missing);
	tcase_add_test(tc, test_good_trace);
	tcase_add_loop_test(tc, test_corrupt, 0, (int)(sizeof(corruptions) / sizeof(corruptions[0])));
	tcase_add_test(tc, test_random_damage);
	tcase_add_test(tc, test_fast_same);
	tcase_add_test(tc, test_clock_ns);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(reader_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
