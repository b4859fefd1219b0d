/*
 * The trace description, as read from CTF 1.8 TSDL metadata (tsdl.h):
 * clocks, stream classes, event classes, and for each scope (packet
 * header, packet context, event header, event context, event payload) a
 * flat list of the fields to decode, in order; and the look-ups in it
 * (desc.c).
 *
 * Only what shimtrace writes, and reasonable variations of it, is
 * accepted: little-endian, byte-aligned integers of 8 to 64 bits (whole
 * bytes) in base 10 or 16, enumerations of those, little-endian,
 * byte-aligned IEEE 754 binary64 and binary32 floating point (exp_dig 11
 * and mant_dig 53, 8 and 24), strings, arrays and sequences of 8-bit
 * integers, structures (nested structures are flattened, their fields
 * named "outer.inner"), and variants tagged by an earlier enumeration of
 * the same scope (not in event payloads). Other floating-point formats,
 * big-endian or bit-packed numbers are refused with an error naming them,
 * as are packetized metadata and anything that does not parse.
 *
 * A variant is flattened like a structure: the variant itself is a field
 * (ST_FIELD_VARIANT) whose value is the index of the option its tag
 * selected, followed by the fields of every option, "variant.option..."
 * in declaration order. A record holds only the fields of the selected
 * options: st_field_present says which values were decoded.
 */
#ifndef ST_READER_DESC_H
#define ST_READER_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ctl/reader/arena.h"

enum st_field_kind {
	ST_FIELD_UINT,	 /* unsigned, base 10 */
	ST_FIELD_SINT,	 /* signed, base 10 */
	ST_FIELD_HEX,	 /* base 16 (value zero-extended, even if declared signed) */
	ST_FIELD_FLOAT,	 /* IEEE 754 binary64 (size 8) or binary32 (4): st_value_double */
	ST_FIELD_STRING, /* NUL-terminated */
	ST_FIELD_BYTES,	 /* array or sequence of 8-bit integers */
	ST_FIELD_VARIANT, /* value: the index of the selected option */
};

/* An enumeration's labels: a label maps the values lo .. hi (bits of an
 * int64_t when the enumeration is signed). Labels may repeat and overlap. */
struct st_enum_mapping {
	const char *label;
	uint64_t lo, hi;
};

struct st_enumeration {
	const struct st_enum_mapping *v;
	uint32_t n;
	bool is_signed;
};

/* The fields of one variant option: plan indices [first, end). */
struct st_variant_option {
	const char *name;
	uint32_t first, end;
};

/* Tag values lo .. hi select `option` (-1: their label has no option of
 * the variant). Searched in order: the first range holding the value. */
struct st_variant_range {
	uint64_t lo, hi;
	int32_t option;
	const char *label;
};

struct st_variant {
	uint32_t tag; /* plan index of the tag, an earlier enumeration */
	bool is_signed; /* the tag's: how ranges compare */
	const struct st_variant_option *opt;
	uint32_t nopt;
	const struct st_variant_range *range;
	uint32_t nrange;
	uint32_t end; /* plan index after the last field of the last option */
};

struct st_field_desc {
	const char *name;      /* as shown: the TSDL name minus one leading '_' */
	const char *tsdl_name; /* as declared; nested: "outer.inner" */
	enum st_field_kind kind;
	uint8_t size;	       /* integers: bytes (1 to 8); floats: 4 or 8 */
	uint8_t align;	       /* bytes, counted from the packet start */
	bool is_signed;
	bool clock;	       /* integer mapped to a clock: cycles */
	int32_t len_field;     /* sequence: index of its length field; -1 for an array */
	uint64_t count;	       /* array: number of bytes */
	const struct st_enumeration *enumeration; /* integer with labels, else NULL */
	const struct st_variant *variant;	  /* ST_FIELD_VARIANT */
	/* In a variant option: the plan index of the variant, and which of its
	 * options holds this field; in_variant is -1 outside any variant. */
	int32_t in_variant;
	uint32_t option;
	/* Decoding order: the field decoded after this one (the plan's n at
	 * the end); after a variant, its options' fields, then this. */
	uint32_t next;
};

/* The value of one field in one event. */
struct st_value {
	union {
		uint64_t u; /* UINT, HEX, VARIANT; FLOAT: its bits (zero-extended) */
		int64_t i;  /* SINT */
	};
	const void *ptr; /* STRING: NUL-terminated; BYTES: the bytes */
	uint64_t len;	 /* STRING: bytes before the NUL; BYTES: count */
};

/* The fields of one scope, flattened in decoding order. */
struct st_plan {
	const struct st_field_desc *v;
	uint32_t n;
	/* True when every field has a fixed size and byte alignment, and
	 * there is no variant: the scope then takes exactly `size` bytes. */
	bool fixed;
	uint64_t size;
	/* The most bytes the scope can take (its largest variant options),
	 * UINT64_MAX when that depends on the record (strings, sequences,
	 * alignment); a record with that much room is checked once. */
	uint64_t max_size;
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

/* An event header field the reader interprets: an unsigned integer named
 * "id" (at any depth) gives the event id; one named "timestamp" or mapped
 * to a clock gives the low `size` bytes of the clock. */
struct st_header_use {
	uint32_t field; /* plan index */
	uint8_t size;	/* bytes */
	bool is_id;
	/* The variant option holding the field (variant -1: none), which a
	 * record holds if it selected it and holds the variant. */
	int32_t variant;
	uint32_t option;
};

struct st_stream_class {
	uint64_t id;
	struct st_plan packet_context, event_header, event_context;
	/* Indices of the fields the reader interprets, -1 when absent: named
	 * so at the top of their scope, so never in a variant. */
	int32_t pc_ts_begin, pc_ts_end, pc_content_size, pc_packet_size;
	int32_t pc_seq_num, pc_discarded, pc_pid, pc_tid;
	int32_t ec_vpid, ec_vtid, ec_ip;
	/* The event header fields the reader interprets, in decoding order:
	 * of those a record holds, the last id gives the event id (0 when
	 * none), and each timestamp in turn updates the stream's clock. At
	 * least one is a timestamp. */
	const struct st_header_use *eh_use;
	uint32_t neh_use;
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

/* Whether values[i], of a record decoded with p, was decoded: true unless
 * the field is in a variant option that the record did not select. */
static inline bool st_field_present(const struct st_plan *p, const struct st_value *values,
				    uint32_t i)
{
	for (const struct st_field_desc *f = &p->v[i]; f->in_variant >= 0; f = &p->v[f->in_variant])
		if (values[f->in_variant].u != f->option)
			return false;
	return true;
}

/* The number a FLOAT field holds. A float is kept as its bits, as an
 * integer is, so that decoding reads every fixed-size field the same way
 * (decode.h, fast.h); this gives it as a double, which every float is
 * exactly. */
static inline double st_value_double(const struct st_field_desc *f, const struct st_value *v)
{
	double d;
	float s;
	uint32_t bits = (uint32_t)v->u;

	if (f->size == 4) {
		memcpy(&s, &bits, 4);
		return s;
	}
	memcpy(&d, &v->u, 8);
	return d;
}

/* The stream class with this id, or NULL. */
const struct st_stream_class *st_tsdl_stream(const struct st_tsdl *t, uint64_t id);
/* Index of the field shown as `name` in a plan, or -1. */
int st_plan_find(const struct st_plan *p, const char *name);

/* Clock cycles to nanoseconds since the epoch (the way babeltrace2 does it,
 * so both print the same nanosecond). */
int64_t st_clock_ns(const struct st_clock_class *c, uint64_t cycles);
/* cycles at freq in nanoseconds, as babeltrace2 computes it (double
 * precision). */
uint64_t st__cycles_ns(uint64_t freq, uint64_t cycles);

#endif
