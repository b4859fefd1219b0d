/*
 * The trace description read from CTF 1.8 TSDL metadata: clocks, stream
 * classes, event classes, and for each scope (packet header, packet
 * context, event header, event context, event payload) a flat list of the
 * fields to decode, in order.
 *
 * Only what shimtrace writes, and reasonable variations of it, is
 * accepted: little-endian, byte-aligned integers of 8, 16, 32 or 64 bits
 * in base 10 or 16, strings, arrays and sequences of 8-bit integers, and
 * structures of those (nested structures are flattened, their fields named
 * "outer.inner"). Variants, enumerations, floating point, big-endian or
 * bit-packed integers are refused with an error naming them, as are
 * packetized metadata and anything that does not parse.
 */
#ifndef ST_READER_TSDL_H
#define ST_READER_TSDL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/reader/arena.h"

enum st_field_kind {
	ST_FIELD_UINT,	 /* unsigned, base 10 */
	ST_FIELD_SINT,	 /* signed, base 10 */
	ST_FIELD_HEX,	 /* base 16 (value zero-extended, even if declared signed) */
	ST_FIELD_STRING, /* NUL-terminated */
	ST_FIELD_BYTES,	 /* array or sequence of 8-bit integers */
};

struct st_field_desc {
	const char *name;      /* as shown: the TSDL name minus one leading '_' */
	const char *tsdl_name; /* as declared; nested: "outer.inner" */
	enum st_field_kind kind;
	uint8_t size;	       /* integers: bytes (1, 2, 4 or 8) */
	uint8_t align;	       /* bytes, counted from the packet start */
	bool is_signed;
	bool clock;	       /* integer mapped to a clock: cycles */
	int32_t len_field;     /* sequence: index of its length field; -1 for an array */
	uint64_t count;	       /* array: number of bytes */
};

/* The value of one field in one event. */
struct st_value {
	union {
		uint64_t u; /* UINT, HEX */
		int64_t i;  /* SINT */
	};
	const void *ptr; /* STRING: NUL-terminated; BYTES: the bytes */
	uint64_t len;	 /* STRING: bytes before the NUL; BYTES: count */
};

/* The fields of one scope, flattened in decoding order. */
struct st_plan {
	const struct st_field_desc *v;
	uint32_t n;
	/* True when every field has a fixed size and byte alignment: the
	 * scope then takes exactly `size` bytes, checked once. */
	bool fixed;
	uint64_t size;
};

struct st_clock_class {
	const char *name, *description;
	uint64_t freq; /* Hz */
	int64_t offset_s;
	uint64_t offset; /* cycles, below freq */
	uint64_t precision;
	bool absolute;
	int64_t base_ns; /* offset_s and offset in ns since the epoch */
};

struct st_event_class;

struct st_stream_class {
	uint64_t id;
	struct st_plan packet_context, event_header, event_context;
	/* Indices of the fields the reader interprets, -1 when absent. */
	int32_t pc_ts_begin, pc_ts_end, pc_content_size, pc_packet_size;
	int32_t pc_seq_num, pc_discarded, pc_pid, pc_tid;
	int32_t eh_id, eh_ts;
	int32_t ec_vpid, ec_vtid, ec_ip;
	const struct st_clock_class *clock; /* NULL: timestamps are nanoseconds */
	const struct st_event_class **by_id; /* nids entries, NULL where unused */
	uint32_t nids;
};

struct st_event_class {
	const char *name; /* "provider:name" */
	uint64_t id;
	uint32_t index; /* position in st_tsdl.events: for per-class tables */
	int64_t loglevel; /* -1 when not given */
	const struct st_stream_class *stream;
	struct st_plan fields;
};

struct st_env_entry {
	const char *key, *value; /* integers are given as decimal text */
};

struct st_tsdl {
	uint8_t uuid[16];
	bool has_uuid;
	struct st_plan packet_header;
	int32_t ph_magic, ph_uuid, ph_stream_id, ph_instance_id;
	const struct st_clock_class *clocks;
	uint32_t nclocks;
	const struct st_stream_class *streams;
	uint32_t nstreams;
	const struct st_event_class *events;
	uint32_t nevents;
	const struct st_env_entry *env;
	uint32_t nenv;
	uint32_t max_fields; /* most fields in any one scope */
	struct st__arena arena;
};

/*
 * Parses `len` bytes of metadata text into t. Returns 0, or a negative
 * errno with a one-line description in err: "line L: what (at offset N)".
 * On error t holds nothing to free.
 */
int st_tsdl_parse(struct st_tsdl *t, const char *text, size_t len, char *err, size_t errlen);
void st_tsdl_free(struct st_tsdl *t);

/* The stream class with this id, or NULL. */
const struct st_stream_class *st_tsdl_stream(const struct st_tsdl *t, uint64_t id);
/* Index of the field shown as `name` in a plan, or -1. */
int st_plan_find(const struct st_plan *p, const char *name);

/* Error messages quote trace text: keep them on one line. */
static inline void st__one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* Clock cycles to nanoseconds since the epoch (the way babeltrace2 does it,
 * so both print the same nanosecond). */
int64_t st_clock_ns(const struct st_clock_class *c, uint64_t cycles);

#endif
