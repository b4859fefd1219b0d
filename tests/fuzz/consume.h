/*
 * The daemon's consumer of shared memory (ctl/daemon/drain/consumer.c, ring.c,
 * and evclass.c's payload checks: the real code) run against a pool in
 * ordinary memory, with the rest of the daemon replaced by stand-ins
 * (consume.c): a trace that checks every packet it is given as
 * babeltrace2 would read it, a clock whose now the caller sets, a
 * process of six event ids. Shared by the fuzz harness (fuzz_ring.c)
 * and the unit tests (tests/unit/test_consume.c).
 *
 * What every packet must hold, or the stand-in trace aborts: records that
 * parse, each a class the process registered, with its payload whole;
 * times that never go back in the stream, between the packet's
 * timestamp_begin and timestamp_end, at or after the session began
 * tracing the process and at most the clock's now plus its margin
 * (st_clock_latest), read from 16-bit compact times without a wrap of
 * 64 bits; the right vpid; as many records as the packet says.
 */
#ifndef ST_TEST_CONSUME_H
#define ST_TEST_CONSUME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/abi.h"
#include "ctl/daemon/drain/consumer.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"

/* The process's event ids (p->cls), and what the stand-in trace makes of
 * them: fixed 8 bytes (U64), fixed 12 (U32 U64, a trace id above 254),
 * a string, U32 STRING U8, a class the trace refuses (-1), none. */
enum { FZ_U64, FZ_WIDE, FZ_STR, FZ_MIXED, FZ_REFUSED, FZ_NONE, FZ_NCLS };

/* A call site whose line table is on its way (the consumer may wait). */
#define FZ_IP_UNSETTLED 0xbad0ull

struct fz_event {
	uint64_t ts;  /* as the reader computes it */
	uint32_t cls; /* FZ_* */
	uint64_t u;   /* the first field (U64, U32) or the string's length */
};

struct fz_env {
	struct st_daemon d;
	struct st_session ses;
	struct st_proc p;
	uint8_t *pool; /* exactly size bytes: a read past it is caught */
	uint64_t size;
	uint64_t now, since;
	uint64_t horizon; /* the latest time allowed so far */
	uint8_t input_flags; /* fz_input's byte 0 bits 4 to 6 (consume.c) */
	/* what reached the trace, all streams */
	uint64_t packets, events;
	struct fz_event *ev;
	size_t nev, cap;
};

/* A process with one pool of this geometry (4 KiB sub-buffers), zeroed,
 * whose session began tracing it at since (at most now). 0, or -1. */
int fz_env_init(struct fz_env *e, uint32_t mode, uint32_t sb_count, uint32_t nslots, uint64_t now,
		uint64_t since);
void fz_env_fini(struct fz_env *e);
struct st_abi_slot *fz_slot(struct fz_env *e, uint32_t i);
uint8_t *fz_data(struct fz_env *e, uint32_t i, uint32_t idx);
/* The statistics of the process, in its session, as the consumer keeps
 * them (events, bytes of invalid records dropped). */
const struct st_session_stats *fz_stats(void);
/* A drain of every slot the pool says it used. */
void fz_drain(struct fz_env *e, enum st_drain how);

/*
 * The fuzz input (fuzz_ring.c): a pool described by bytes, drained as the
 * daemon would, changed as a producer could between two rounds of drains
 * (see consume.c for the layout). Every invariant is checked; a breach
 * aborts.
 */
void fz_run(const uint8_t *data, size_t size);
/* e's pool (before any drain) as a fuzz input into out (cap bytes): its
 * length, or 0 when it does not fit. */
size_t fz_input(const struct fz_env *e, uint8_t *out, size_t cap);

/* Pools to start from (the fuzzer's seeds, the unit tests' cases). */
enum fz_example {
	FZ_EX_DISCARD,	 /* 3 sub-buffers: 2 closed, 1 open; every class */
	FZ_EX_OVERWRITE, /* 2 sub-buffers of laps 2 and 3 */
	FZ_EX_FORGED,	 /* an open sub-buffer of forged times */
	FZ_EX_CORRUPT,	 /* a record of no class, then valid ones */
	FZ_EX_TWO_SLOTS, /* two threads, one slot each; a line table waited for */
	FZ_EX_LAPS,	 /* laps 4 and 5, after 8 sub-buffers taken: in a memfd */
	FZ_EX_COUNT
};
/* Sets e up with that pool; the now and since used are FZ_NOW, FZ_SINCE. */
#define FZ_NOW 1000000000000ull
#define FZ_SINCE (FZ_NOW - 1000000000ull)
int fz_example(struct fz_env *e, enum fz_example which);

/* Records as a producer writes them (core/abi.h), at p; each returns its
 * bytes. fz_rec: compact (with the time's low 24 bits) or extended. */
static inline size_t fz_rec_thread(uint8_t *p, uint64_t ts, int32_t tid)
{
	uint32_t id = ST_ABI_ID_THREAD;

	p[0] = ST_ABI_ID_EXTENDED;
	memcpy(p + 1, &id, 4);
	memcpy(p + 5, &ts, 8);
	memcpy(p + 13, &tid, 4);
	return ST_ABI_THREAD_REC;
}

static inline size_t fz_rec(uint8_t *p, uint32_t id, uint64_t ts, bool compact, uint64_t ip,
			    const void *fields, size_t n)
{
	size_t h;

	if (compact) {
		uint64_t w0 = id | (ts & 0xffffff) << 8 | ip << 32;
		uint16_t hi = (uint16_t)(ip >> 32);

		memcpy(p, &w0, 8);
		memcpy(p + 8, &hi, 2);
		h = ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES;
	} else {
		p[0] = ST_ABI_ID_EXTENDED;
		memcpy(p + 1, &id, 4);
		memcpy(p + 5, &ts, 8);
		memcpy(p + 13, &ip, ST_ABI_IP_BYTES);
		h = ST_ABI_HDR_EXTENDED + ST_ABI_IP_BYTES;
	}
	memcpy(p + h, fields, n);
	return h + n;
}

#endif
