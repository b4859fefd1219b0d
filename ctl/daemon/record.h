/*
 * Event records: reading the ring buffers' encoding (core/abi.h) and
 * writing the trace's (doc/internals.md). The two differ in what the daemon
 * adds (the process id), in the ids (the trace's, not the process's) and in
 * the compact header: the ring's carries 24 bits of time in 4 bytes (fewer
 * extended headers for the writer to write), the trace's 16 bits in 3 (the
 * trace is what is stored; its event context, s32 vpid and u64 ip, is what
 * babeltrace2's debug-info requires, so the header is where bytes can go).
 * Both fall back to a 13-byte header when the id or the time since the
 * previous record does not fit.
 *
 * Inline: the consumer runs these for every event. Depends on core/abi.h
 * only.
 */
#ifndef ST_DAEMON_RECORD_H
#define ST_DAEMON_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/abi.h"

/* Trace records: header, then s32 vpid and u64 ip, then the fields. */
#define ST_TRACE_TS_BITS 16u
#define ST_TRACE_HDR_COMPACT 3u
#define ST_TRACE_CTX_BYTES (4u + 8u)
#define ST_TRACE_REC_MAX_HDR (ST_ABI_HDR_EXTENDED + ST_TRACE_CTX_BYTES)

#define ST_RING_TS_MASK ((1ull << ST_ABI_TS_BITS) - 1)

/* A ring record's header, decoded. */
struct st_ring_rec {
	uint32_t id;	 /* the process's id, or ST_ABI_ID_THREAD */
	uint64_t ts;	 /* whole */
	uint64_t ip;	 /* events */
	int32_t tid;	 /* thread records */
	uint32_t hdr;	 /* bytes before the fields (header and ip, or the
			  * whole thread record) */
};

/*
 * Decodes the header of the ring record at src (avail bytes): *prev_ts is
 * the time of the record before it, a compact timestamp's base, and becomes
 * this one's. Returns false when the header does not fit in avail.
 */
static inline bool st_ring_rec_decode(const uint8_t *src, uint64_t avail, uint64_t *prev_ts,
				      struct st_ring_rec *r)
{
	uint8_t b[ST_ABI_RECORD_MAX_HDR];
	uint64_t low;

	/* (one read of each byte: src may be memory the process writes) */
	if (avail < ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES)
		return false;
	b[0] = src[0];
	if (b[0] != ST_ABI_ID_EXTENDED) {
		memcpy(b + 1, src + 1, ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES - 1);
		r->id = b[0];
		low = b[1] | (uint64_t)b[2] << 8 | (uint64_t)b[3] << 16;
		/* the first time after the previous record with these low bits */
		r->ts = *prev_ts + ((low - *prev_ts) & ST_RING_TS_MASK);
		r->ip = 0;
		memcpy(&r->ip, b + ST_ABI_HDR_COMPACT, ST_ABI_IP_BYTES);
		r->hdr = ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES;
		r->tid = 0;
		*prev_ts = r->ts;
		return true;
	}
	if (avail < ST_ABI_HDR_EXTENDED + 4)
		return false;
	memcpy(b + 1, src + 1, ST_ABI_HDR_EXTENDED + 4 - 1);
	memcpy(&r->id, b + 1, 4);
	memcpy(&r->ts, b + 5, 8);
	r->ip = 0;
	r->tid = 0;
	if (r->id == ST_ABI_ID_THREAD) {
		memcpy(&r->tid, b + ST_ABI_HDR_EXTENDED, 4);
		r->hdr = ST_ABI_THREAD_REC;
	} else {
		if (avail < ST_ABI_HDR_EXTENDED + ST_ABI_IP_BYTES)
			return false;
		memcpy(b + ST_ABI_HDR_EXTENDED + 4, src + ST_ABI_HDR_EXTENDED + 4,
		       ST_ABI_IP_BYTES - 4);
		memcpy(&r->ip, b + ST_ABI_HDR_EXTENDED, ST_ABI_IP_BYTES);
		r->hdr = ST_ABI_HDR_EXTENDED + ST_ABI_IP_BYTES;
	}
	*prev_ts = r->ts;
	return true;
}


/*
 * Writes a trace record's header and event context at dst: compact when
 * id < 255 and ts - *prev_ts < 2^16 (*prev_ts: the record before it in the
 * packet, or the packet's timestamp_begin), extended otherwise; *prev_ts
 * becomes ts (ts must not be before it). prev_ts NULL: extended, for a
 * record whose packet's time the caller does not know. Returns the bytes
 * written, at most ST_TRACE_REC_MAX_HDR.
 */
static inline uint32_t st_trace_rec_header(uint8_t *dst, uint32_t id, uint64_t ts,
					   uint64_t *prev_ts, int32_t vpid, uint64_t ip)
{
	uint32_t n;

	if (prev_ts && id < ST_ABI_ID_EXTENDED && ts - *prev_ts < (1u << ST_TRACE_TS_BITS)) {
		uint32_t h = id | (uint32_t)(ts & 0xffff) << 8;

		memcpy(dst, &h, 4); /* (3 bytes are the header) */
		n = ST_TRACE_HDR_COMPACT;
	} else {
		dst[0] = ST_ABI_ID_EXTENDED;
		memcpy(dst + 1, &id, 4);
		memcpy(dst + 5, &ts, 8);
		n = ST_ABI_HDR_EXTENDED;
	}
	if (prev_ts)
		*prev_ts = ts;
	memcpy(dst + n, &vpid, 4);
	memcpy(dst + n + 4, &ip, 8);
	return n + ST_TRACE_CTX_BYTES;
}


#endif
