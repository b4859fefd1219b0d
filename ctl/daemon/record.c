/*
 * Ring and trace record headers (see record.h, core/abi.h).
 */
#include <string.h>

#include "ctl/daemon/record.h"

#define TS_MASK ((1ull << ST_ABI_TS_BITS) - 1)

bool st_ring_rec_decode(const uint8_t *src, uint64_t avail, uint64_t *prev_ts,
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
		r->ts = *prev_ts + ((low - *prev_ts) & TS_MASK);
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

uint32_t st_trace_rec_header(uint8_t *dst, uint32_t id, uint64_t ts, uint64_t *prev_ts,
			     int32_t vpid, uint64_t ip)
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
