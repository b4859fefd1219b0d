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
	uint32_t writer; /* thread records of a per-user pool: the process's
			  * writer number (core/abi.h); 0 otherwise */
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
	uint64_t w0, low;
	uint32_t w32;
	uint16_t w16;

	/* Whole words, one read of each byte (src may be memory the process
	 * writes), and no byte copies to read back: the consumer runs this
	 * for every event. */
	if (avail < ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES)
		return false;
	memcpy(&w0, src, 8);
	memcpy(&w16, src + 8, 2);
	r->tid = 0;
	r->writer = 0;
	if ((w0 & 0xff) != ST_ABI_ID_EXTENDED) {
		r->id = (uint32_t)(w0 & 0xff);
		low = (w0 >> 8) & ST_RING_TS_MASK;
		/* the first time after the previous record with these low bits */
		r->ts = *prev_ts + ((low - *prev_ts) & ST_RING_TS_MASK);
		r->ip = w0 >> 32 | (uint64_t)w16 << 32;
		r->hdr = ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES;
		*prev_ts = r->ts;
		return true;
	}
	/* extended: the id in bytes 1-4, the time in 5-12 */
	if (avail < ST_ABI_THREAD_REC)
		return false;
	r->id = (uint32_t)(w0 >> 8);
	memcpy(&r->ts, src + 5, 8);
	memcpy(&w32, src + ST_ABI_HDR_EXTENDED, 4);
	r->ip = 0;
	if (r->id == ST_ABI_ID_THREAD) {
		r->tid = (int32_t)w32;
		r->hdr = ST_ABI_THREAD_REC;
	} else if (r->id == ST_ABI_ID_THREAD_OF) {
		if (avail < ST_ABI_THREAD_OF_REC)
			return false;
		r->tid = (int32_t)w32;
		memcpy(&r->writer, src + ST_ABI_THREAD_REC, 4);
		r->id = ST_ABI_ID_THREAD; /* (a thread record, naming its writer) */
		r->hdr = ST_ABI_THREAD_OF_REC;
	} else {
		if (avail < ST_ABI_HDR_EXTENDED + ST_ABI_IP_BYTES)
			return false;
		memcpy(&w16, src + ST_ABI_HDR_EXTENDED + 4, 2);
		r->ip = w32 | (uint64_t)w16 << 32;
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
