/*
 * Small CTF traces built byte by byte, for the unit tests of the reader
 * (test_reader.c) and of following a trace (test_follow.c): the layout
 * `shimtrace record` writes, packets and records of a few event classes,
 * and trace directories made and removed.
 */
#ifndef ST_TESTS_UNIT_CTFBUILD_H
#define ST_TESTS_UNIT_CTFBUILD_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/run.h"

/* The layout `shimtrace record` writes: a compact event header (a 1-byte
 * id and the clock's low 24 bits) or an extended one (255, a 32-bit id,
 * the whole clock); the thread in the packet context. */
static const char small_meta[] =
	"/* CTF 1.8 */\n"
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; map = clock.c.value; } := clk_t;\n"
	"typealias integer { size = 24; align = 8; signed = false; map = clock.c.value; } := clk24_t;\n"
	"trace { major = 1; minor = 8; uuid = \"2a6422d0-6cee-11e0-8c08-cb07d7b3a564\"; byte_order = le;\n"
	"  packet.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id;\n"
	"                            uint64_t stream_instance_id; }; };\n"
	"clock { name = c; freq = 1000000000; offset_s = 1700000000; offset = 500; };\n"
	"stream { id = 0;\n"
	"  packet.context := struct { clk_t timestamp_begin; clk_t timestamp_end;\n"
	"    uint64_t content_size; uint64_t packet_size; uint64_t packet_seq_num;\n"
	"    uint64_t events_discarded; int32_t pid; int32_t tid; };\n"
	"  event.header := struct { enum : uint8_t { compact = 0 ... 254, extended = 255 } id;\n"
	"    variant <id> { struct { clk24_t timestamp; } compact;\n"
	"                   struct { uint32_t id; clk_t timestamp; } extended; } v; };\n"
	"  event.context := struct { integer { size = 24; align = 8; signed = true; } _vpid;\n"
	"    integer { size = 48; align = 8; signed = false; base = 16; } _ip; }; };\n"
	"event { name = \"t:a\"; id = 0; stream_id = 0; fields := struct { uint32_t _x; int32_t _y; }; };\n"
	"event { name = \"t:s\"; id = 1; stream_id = 0; fields := struct { string _s; }; };\n"
	"event { name = \"t:b\"; id = 2; stream_id = 0; fields := struct { uint64_t __b_length;\n"
	"  integer { size = 8; align = 8; signed = false; base = 16; } _b[__b_length]; }; };\n"
	"event { name = \"t:al\"; id = 3; stream_id = 0; fields := struct { uint8_t _a;\n"
	"  integer { size = 32; align = 32; signed = false; } _b; }; };\n"
	"event { name = \"t:big\"; id = 300; stream_id = 0; fields := struct { uint32_t _x; }; };\n";

static const uint8_t small_uuid[16] = { 0x2a, 0x64, 0x22, 0xd0, 0x6c, 0xee, 0x11, 0xe0,
					0x8c, 0x08, 0xcb, 0x07, 0xd7, 0xb3, 0xa5, 0x64 };

#define PKT_HDR 88 /* packet header (32) + context (56) */
#define EV_CTX 9   /* vpid (3), ip (6) */
#define EV_C (4 + EV_CTX)	   /* compact: id, timestamp (3) */
#define EV_X (1 + 4 + 8 + EV_CTX) /* extended: 255, id, timestamp */
#define MASK24 ((1ull << 24) - 1)

struct buf {
	uint8_t *p;
	size_t len, cap;
	uint64_t clock; /* as the reader will have it: for compact timestamps */
	int32_t vpid;	/* of the next records */
};

static inline void put(struct buf *b, const void *d, size_t n)
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

/* Little-endian, whatever the host: the trace's byte order. */
static inline void put_le(struct buf *b, uint64_t v, unsigned bytes)
{
	uint8_t q[8];

	for (unsigned i = 0; i < bytes; i++)
		q[i] = (uint8_t)(v >> (8 * i));
	put(b, q, bytes);
}

static inline void put_u8(struct buf *b, uint8_t v) { put_le(b, v, 1); }
static inline void put_u32(struct buf *b, uint32_t v) { put_le(b, v, 4); }
static inline void put_u64(struct buf *b, uint64_t v) { put_le(b, v, 8); }

static inline void set_u64(struct buf *b, size_t off, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		b->p[off + i] = (uint8_t)(v >> (8 * i));
}

static inline size_t pkt_begin(struct buf *b, uint64_t instance, uint64_t ts_begin,
			       uint64_t ts_end, uint64_t discarded, int32_t pid, int32_t tid)
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
	put_u32(b, (uint32_t)tid);
	b->clock = ts_begin;
	b->vpid = pid;
	return start;
}

/* Closes the packet, padded with `pad` zero bytes. */
static inline void pkt_end(struct buf *b, size_t start, size_t pad)
{
	size_t content = b->len - start;

	for (size_t i = 0; i < pad; i++)
		put_u8(b, 0);
	set_u64(b, start + 48, content * 8);
	set_u64(b, start + 56, (content + pad) * 8);
}

/* The clock after a compact timestamp of `low` (CTF: the low bits of the
 * clock, which wrapped if they went down). */
static inline uint64_t after_compact(uint64_t clock, uint64_t low)
{
	uint64_t next = (clock & ~MASK24) | low;

	return low < (clock & MASK24) ? next + MASK24 + 1 : next;
}

/* An event header (compact when it can be, unless `extended`) and
 * context. */
static inline void ev_head_as(struct buf *b, uint32_t id, uint64_t ts, bool extended)
{
	if (id >= 255 || after_compact(b->clock, ts & MASK24) != ts)
		extended = true;
	if (extended) {
		put_u8(b, 255);
		put_u32(b, id);
		put_u64(b, ts);
	} else {
		put_u8(b, (uint8_t)id);
		put_le(b, ts & MASK24, 3);
	}
	b->clock = ts;
	put_le(b, (uint32_t)b->vpid & 0xffffff, 3);
	put_le(b, 0x401000 + ts, 6);
}

static inline void ev_head(struct buf *b, uint32_t id, uint64_t ts)
{
	ev_head_as(b, id, ts, false);
}

static inline void ev_a(struct buf *b, uint64_t ts, uint32_t x, int32_t y)
{
	ev_head(b, 0, ts);
	put_u32(b, x);
	put_u32(b, (uint32_t)y);
}

static inline void ev_s(struct buf *b, uint64_t ts, const char *s)
{
	ev_head(b, 1, ts);
	put(b, s, strlen(s) + 1);
}

static inline void ev_b(struct buf *b, uint64_t ts, const uint8_t *v, uint64_t n)
{
	ev_head(b, 2, ts);
	put_u64(b, n);
	put(b, v, n);
}

static inline char *make_dir(void)
{
	char *d = strdup("/tmp/test_reader-XXXXXX");

	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static inline void write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, p, n), (ssize_t)n);
	close(fd);
}

static inline void remove_dir(char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(dir);
}

/* A trace of one stream file `s0` holding b. */
static inline char *trace_of(const struct buf *b)
{
	char *d = make_dir();

	write_file(d, "metadata", small_meta, strlen(small_meta));
	write_file(d, "s0", b->p, b->len);
	return d;
}

#endif
