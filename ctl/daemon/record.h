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
 * Depends on core/abi.h only, so the unit tests link it alone.
 */
#ifndef ST_DAEMON_RECORD_H
#define ST_DAEMON_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/abi.h"

/* Trace records: header, then s32 vpid and u64 ip, then the fields. */
#define ST_TRACE_TS_BITS 16u
#define ST_TRACE_HDR_COMPACT 3u
#define ST_TRACE_CTX_BYTES (4u + 8u)
#define ST_TRACE_REC_MAX_HDR (ST_ABI_HDR_EXTENDED + ST_TRACE_CTX_BYTES)

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
bool st_ring_rec_decode(const uint8_t *src, uint64_t avail, uint64_t *prev_ts,
			struct st_ring_rec *r);

/*
 * Writes a trace record's header and event context at dst: compact when
 * id < 255 and ts - *prev_ts < 2^16 (*prev_ts: the record before it in the
 * packet, or the packet's timestamp_begin), extended otherwise; *prev_ts
 * becomes ts (ts must not be before it). prev_ts NULL: extended, for a
 * record whose packet's time the caller does not know. Returns the bytes
 * written, at most ST_TRACE_REC_MAX_HDR.
 */
uint32_t st_trace_rec_header(uint8_t *dst, uint32_t id, uint64_t ts, uint64_t *prev_ts,
			     int32_t vpid, uint64_t ip);

#endif
