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

#include "ctl/reader/reader.h"
#include "ctl/reader/tsdl.h"

/* ---- metadata ---- */

/* Written by `shimtrace record` (ctl/daemon/trace.c). */
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
	"\t};\n"
	"\tevent.header := struct {\n"
	"\t\tuint16_t id;\n"
	"\t\tuint64_clock_t timestamp;\n"
	"\t};\n"
	"\tevent.context := struct {\n"
	"\t\tint32_t _vpid;\n"
	"\t\tint32_t _vtid;\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _ip;\n"
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
	ck_assert_int_eq(sc->pc_tid, -1);
	ck_assert_int_ge(sc->eh_id, 0);
	ck_assert_int_ge(sc->eh_ts, 0);
	ck_assert(sc->event_header.fixed);
	ck_assert_uint_eq(sc->event_header.size, 10);
	ck_assert_uint_eq(sc->event_context.size, 16);
	ck_assert_int_ge(sc->ec_vtid, 0);
	ck_assert_str_eq(sc->event_context.v[sc->ec_vpid].name, "vpid");
	ck_assert_str_eq(sc->event_context.v[sc->ec_vpid].tsdl_name, "_vpid");
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

/* Edits of the real metadata that must be refused, and what the error
 * must say. */
static const struct reject {
	const char *old, *new, *why;
} rejects[] = {
	{ "uint32_t magic;", "uint33_t magic;", "unknown type 'uint33_t'" },
	{ "size = 8; align = 8; signed = false; }", "size = 8; align = 8; signed = false; byte_order = be; }",
	  "big-endian integers" },
	{ "byte_order = le;", "byte_order = be;", "big-endian traces" },
	{ "string _path;", "variant <_x> { uint8_t a; } _v;", "variants are not supported" },
	{ "string _path;", "enum : uint8_t { A, B } _e;", "enumerations are not supported" },
	{ "string _path;", "floating_point { exp_dig = 8; mant_dig = 24; } _f;",
	  "floating-point types are not supported" },
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

/* ---- traces built by hand ---- */

static const char small_meta[] =
	"/* CTF 1.8 */\n"
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; map = clock.c.value; } := clk_t;\n"
	"trace { major = 1; minor = 8; uuid = \"2a6422d0-6cee-11e0-8c08-cb07d7b3a564\"; byte_order = le;\n"
	"  packet.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id;\n"
	"                            uint64_t stream_instance_id; }; };\n"
	"clock { name = c; freq = 1000000000; offset_s = 1700000000; offset = 500; };\n"
	"stream { id = 0;\n"
	"  packet.context := struct { clk_t timestamp_begin; clk_t timestamp_end;\n"
	"    uint64_t content_size; uint64_t packet_size; uint64_t packet_seq_num;\n"
	"    uint64_t events_discarded; int32_t pid; };\n"
	"  event.header := struct { uint16_t id; clk_t timestamp; };\n"
	"  event.context := struct { int32_t _vpid; int32_t _vtid;\n"
	"    integer { size = 64; align = 8; signed = false; base = 16; } _ip; }; };\n"
	"event { name = \"t:a\"; id = 0; stream_id = 0; fields := struct { uint32_t _x; int32_t _y; }; };\n"
	"event { name = \"t:s\"; id = 1; stream_id = 0; fields := struct { string _s; }; };\n"
	"event { name = \"t:b\"; id = 2; stream_id = 0; fields := struct { uint64_t __b_length;\n"
	"  integer { size = 8; align = 8; signed = false; base = 16; } _b[__b_length]; }; };\n"
	"event { name = \"t:al\"; id = 3; stream_id = 0; fields := struct { uint8_t _a;\n"
	"  integer { size = 32; align = 32; signed = false; } _b; }; };\n";

static const uint8_t small_uuid[16] = { 0x2a, 0x64, 0x22, 0xd0, 0x6c, 0xee, 0x11, 0xe0,
					0x8c, 0x08, 0xcb, 0x07, 0xd7, 0xb3, 0xa5, 0x64 };

#define PKT_HDR 84 /* packet header (32) + context (52) */
#define EV_HDR 26  /* id, timestamp, vpid, vtid, ip */

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (n == 0)
		return;
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
		ck_assert_ptr_nonnull(b->p);
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void put_u8(struct buf *b, uint8_t v) { put(b, &v, 1); }
static void put_u16(struct buf *b, uint16_t v) { put(b, &v, 2); }
static void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(struct buf *b, uint64_t v) { put(b, &v, 8); }

static void set_u64(struct buf *b, size_t off, uint64_t v)
{
	memcpy(b->p + off, &v, 8);
}

static size_t pkt_begin(struct buf *b, uint64_t instance, uint64_t ts_begin, uint64_t ts_end,
			uint64_t discarded, int32_t pid)
{
	size_t start = b->len;

	put_u32(b, 0xC1FC1FC1u);
	put(b, small_uuid, 16);
	put_u32(b, 0);
	put_u64(b, instance);
	put_u64(b, ts_begin);
	put_u64(b, ts_end);
	put_u64(b, 0); /* content_size, set by pkt_end */
	put_u64(b, 0); /* packet_size */
	put_u64(b, 0);
	put_u64(b, discarded);
	put_u32(b, (uint32_t)pid);
	return start;
}

/* Closes the packet, padded with `pad` zero bytes. */
static void pkt_end(struct buf *b, size_t start, size_t pad)
{
	size_t content = b->len - start;

	for (size_t i = 0; i < pad; i++)
		put_u8(b, 0);
	set_u64(b, start + 48, content * 8);
	set_u64(b, start + 56, (content + pad) * 8);
}

static void ev_head(struct buf *b, uint16_t id, uint64_t ts, int32_t tid)
{
	put_u16(b, id);
	put_u64(b, ts);
	put_u32(b, 100);
	put_u32(b, (uint32_t)tid);
	put_u64(b, 0x401000 + ts);
}

static void ev_a(struct buf *b, uint64_t ts, int32_t tid, uint32_t x, int32_t y)
{
	ev_head(b, 0, ts, tid);
	put_u32(b, x);
	put_u32(b, (uint32_t)y);
}

static void ev_s(struct buf *b, uint64_t ts, const char *s)
{
	ev_head(b, 1, ts, 101);
	put(b, s, strlen(s) + 1);
}

static void ev_b(struct buf *b, uint64_t ts, const uint8_t *v, uint64_t n)
{
	ev_head(b, 2, ts, 101);
	put_u64(b, n);
	put(b, v, n);
}

static char *make_dir(void)
{
	char *d = strdup("/tmp/test_reader-XXXXXX");

	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static void write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, p, n), (ssize_t)n);
	close(fd);
}

static void remove_dir(char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(dir);
}

/* A trace of one stream file `s0` holding b. */
static char *trace_of(const struct buf *b)
{
	char *d = make_dir();

	write_file(d, "metadata", small_meta, strlen(small_meta));
	write_file(d, "s0", b->p, b->len);
	return d;
}

/* Reads the whole trace; returns what the reader returned last, with the
 * events and lost notices counted and the error message in err. */
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

	p = pkt_begin(&a, 7, 10, 30, 0, 100);
	ev_a(&a, 10, 1, 1, -1);
	ev_a(&a, 30, 1, 3, -3);
	pkt_end(&a, p, 0);
	p = pkt_begin(&a, 7, 50, 60, 0, 100);
	ev_a(&a, 50, 1, 5, -5);
	ev_a(&a, 60, 1, 6, -6);
	pkt_end(&a, p, 4096 - (a.len - p));
	p = pkt_begin(&b, 3, 20, 40, 0, 100);
	ev_a(&b, 20, 2, 2, -2);
	ev_a(&b, 30, 2, 33, -33);
	ev_a(&b, 40, 2, 4, -4);
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
		ck_assert_int_eq(ev->tid, want_tid[n]);
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
	size_t p = pkt_begin(&b, 0, 5, 9, 0, 100), pad;
	char *d, err[512];
	struct st_reader *r;
	struct st_item it;
	const struct st_event *ev;
	int k;

	ev_s(&b, 5, "hello \"x\"");
	ev_b(&b, 6, bytes, sizeof(bytes));
	ev_b(&b, 7, NULL, 0);
	ev_head(&b, 3, 8, 101);
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

START_TEST(test_lost)
{
	struct buf b = { 0 };
	size_t p;
	char *d, err[512];
	struct st_reader *r;
	struct st_item it;

	p = pkt_begin(&b, 0, 10, 20, 2, 100); /* lost before the first packet */
	ev_a(&b, 10, 1, 0, 0);
	ev_a(&b, 20, 1, 0, 0);
	pkt_end(&b, p, 0);
	p = pkt_begin(&b, 0, 30, 40, 2, 100); /* none more */
	ev_a(&b, 30, 1, 0, 0);
	pkt_end(&b, p, 0);
	p = pkt_begin(&b, 0, 50, 70, 7002, 100); /* 7000 more */
	ev_a(&b, 50, 5, 0, 0);
	pkt_end(&b, p, 100);
	p = pkt_begin(&b, 0, 80, 80, 7003, 100); /* one more, no event */
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
	ck_assert_int_eq(it.lost->tid, -1);
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
static struct buf good_trace(size_t *second)
{
	struct buf b = { 0 };
	size_t p = pkt_begin(&b, 0, 10, 30, 0, 100);

	ev_a(&b, 10, 1, 1, 1);
	ev_a(&b, 20, 1, 2, 2);
	ev_s(&b, 30, "abc");
	pkt_end(&b, p, 10);
	*second = b.len;
	p = pkt_begin(&b, 0, 40, 40, 0, 100);
	ev_a(&b, 40, 1, 4, 4);
	pkt_end(&b, p, 0);
	return b;
}

static const struct corruption {
	const char *what;
	size_t off;   /* in the second packet unless `first` */
	bool first;
	int width;    /* 8, 4, 2, 1: overwrite; 0: truncate the file at off; -1: append bytes */
	uint64_t value;
	const char *why;
} corruptions[] = {
	{ "magic", 0, true, 4, 0x12345678, "bad packet magic 0x12345678" },
	{ "uuid", 4, false, 1, 0x77, "uuid is not the trace uuid" },
	{ "stream id", 20, false, 4, 9, "unknown stream id 9" },
	{ "content > packet", 48, false, 8, 4096 * 8, "exceeds packet_size" },
	{ "content bits", 48, true, 8, 100 * 8 + 3, "is not whole bytes" },
	{ "packet bits", 56, true, 8, 100 * 8 + 3, "is not whole bytes" },
	{ "packet past end", 56, false, 8, 1 << 20, "runs past the end of the file" },
	{ "packet size 0", 56, false, 8, 0, "exceeds packet_size" },
	{ "header beyond content", 48, false, 8, 40 * 8, "exceed content_size" },
	{ "truncated header", 30, false, 0, 0, "does not fit in the packet" },
	{ "truncated packet", PKT_HDR + 5, false, 0, 0, "runs past the end of the file" },
	{ "event cut by content", 48, false, 8, (PKT_HDR + EV_HDR + 3) * 8, "does not fit in the packet" },
	{ "unknown event id", PKT_HDR, false, 2, 77, "unknown event id 77" },
	{ "event ts backwards", PKT_HDR + 2, false, 8, 35, "goes back in time" },
	{ "event ts backwards in packet", PKT_HDR + EV_HDR + 8 + 2, true, 8, 5, "goes back in time" },
	{ "packet begins before previous end", 32, false, 8, 25, "goes back in time" },
	{ "end before begin", 40, false, 8, 39, "is before timestamp_begin" },
	{ "end before last event", 40, true, 8, 25, "before the packet's last event" },
	{ "discarded goes down", 72, true, 8, 50, "events_discarded goes down" },
	/* the string ends the packet's content: nothing after it can stop it */
	{ "string without NUL", PKT_HDR + 2 * (EV_HDR + 8) + EV_HDR + 3, true, 1, 'x', "has no terminator" },
	{ "sequence too long", 0, false, -1, 0, "does not fit in the packet" },
	{ "trailing garbage", 0, false, -2, 0, "does not fit in the packet" },
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
		size_t p = pkt_begin(&b, 0, 50, 50, 0, 100);

		ev_b(&b, 50, (const uint8_t *)"xy", 2);
		set_u64(&b, b.len - 10, 1000);
		pkt_end(&b, p, 0);
	} else {
		put(&b, "\xc1\x1f\xfc\xc1", 4);
	}
	d = trace_of(&b);
	ret = read_all(d, &ev, &lost, err, sizeof(err));
	ck_assert_msg(ret < 0, "%s: accepted (%llu events)", c->what, (unsigned long long)ev);
	ck_assert_msg(strstr(err, c->why) != NULL, "%s: '%s' not in '%s'", c->what, c->why, err);
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

static Suite *reader_suite(void)
{
	Suite *s = suite_create("reader");
	TCase *tc = tcase_create("tsdl");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_parse_real);
	tcase_add_test(tc, test_parse_variations);
	tcase_add_loop_test(tc, test_reject, 0, (int)(sizeof(rejects) / sizeof(rejects[0])));
	tcase_add_test(tc, test_reject_other);
	suite_add_tcase(s, tc);
	tc = tcase_create("reader");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_merge_order);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_lost);
	tcase_add_test(tc, test_empty_and_missing);
	tcase_add_test(tc, test_good_trace);
	tcase_add_loop_test(tc, test_corrupt, 0, (int)(sizeof(corruptions) / sizeof(corruptions[0])));
	tcase_add_test(tc, test_random_damage);
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
