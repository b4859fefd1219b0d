/*
 * The contract between a traced process (core/) and the session daemon
 * (ctl/): shared-memory layouts and control-socket messages.
 *
 * Shared memory holds fixed-size integers and offsets, never pointers. The
 * daemon maps what a process gives it and trusts none of it: every count,
 * offset and length read from here is bounds-checked on the daemon side.
 *
 * Three kinds of shared memory, all memfds created by the process:
 *
 *   status  page 0: struct st_abi_control (daemon writes the session
 *                   configurations, the process writes its loss counters)
 *           page k: the state page of the k-th registered provider
 *                   (struct st_provider_state, daemon writes masks and ids)
 *   pool    one per (process, session): page 0 struct st_abi_pool, then
 *           `nslots` per-thread ring buffers (struct st_abi_slot + data)
 *
 * Sub-buffer protocol of one slot (one producer: the owning thread; one
 * consumer: the daemon). Sequence numbers s = 0, 1, 2, ... name the
 * successive sub-buffers; s lives in sb[s % sb_count].
 *
 *   producer opens s    sb.commit = 0, sb.events = 0, sb.closed = 0; then
 *                       store-release sb.seq = s + 1; its first record is
 *                       a thread record (below)
 *   producer writes     record bytes, then store-release sb.commit = end
 *   producer closes s   sb.events, sb.lost; store-release sb.closed = 1
 *   consumer reads s    when sb.seq == s + 1: bytes [read, sb.commit); once
 *                       sb.closed, all of it, then store-release
 *                       slot.rseq = s + 1 (discard mode only)
 *
 *   discard mode: the producer opens s + 1 only when s + 1 - rseq < sb_count,
 *                 otherwise it drops the event and counts it in lost_full;
 *                 a blocking session's producer first waits for room (below).
 *   overwrite:    the producer opens s + 1 unconditionally; the consumer
 *                 copies a sub-buffer and keeps the copy only if sb.seq is
 *                 unchanged afterwards (the producer writes seq before data).
 *
 * Every committed byte is a whole record, so a consumer reading after the
 * process died (SIGKILL) finds complete records up to sb.commit.
 *
 * Blocking sessions (--blocking, discard mode only): a producer that finds
 * its buffer full waits for the consumer (core/block.c). The futex word is
 * the low 32 bits of slot.rseq (x86-64: the first four bytes), a shared
 * futex on the pool memfd both sides map:
 *
 *   producer waits      store slot.waiting = 1; full fence; load rseq: if
 *                       still full, FUTEX_WAIT(&rseq, (u32)rseq, slice)
 *   consumer gives back store-release rseq; full fence; load waiting: if
 *                       nonzero, FUTEX_WAKE(&rseq)
 *
 * (either the consumer sees `waiting`, or the producer sees the new rseq
 * and does not sleep). The producer also watches control.heartbeat, which
 * the daemon bumps while it serves the process, to never wait for a daemon
 * that is gone.
 */
#ifndef ST_ABI_H
#define ST_ABI_H

#include <stdint.h>

#define ST_ABI_VERSION 5
#define ST_ABI_PAGE 4096u

#define ST_ABI_MAX_SESSIONS 32

/* Where the system daemon (root) listens: the one place a setuid or
 * setgid program connects to. */
#define ST_ABI_SYSTEM_RUNDIR "/run/shimtrace"
#define ST_ABI_SOCKET_NAME "shimtrace.sock"

/*
 * Beside the socket, ST_ABI_ACTIVE_NAME exists while the daemon has a
 * session started: a registering process waits for the daemon's answer
 * (READY: its enable bits are written) only then, SHIMTRACE_TIMEOUT_MS at
 * most. It holds ST_ABI_ACTIVE_BLOCKING while a started session is
 * --blocking: such a session must not lose the events of a process that
 * stopped waiting (they are not counted anywhere), so the process waits
 * as long as a live daemon can take to answer, ST_ABI_ANSWER_WAIT_MS:
 * the daemon defers an answer only for the objects it reads, and those
 * ST_ABI_OBJECTS_DEADLINE_MS at most (ctl/daemon/objects/maps.c); the
 * rest is room for a daemon that a busy machine runs late.
 */
#define ST_ABI_ACTIVE_NAME "active"
#define ST_ABI_ACTIVE_BLOCKING "blocking\n"
#define ST_ABI_OBJECTS_DEADLINE_MS 5000
#define ST_ABI_ANSWER_WAIT_MS (2 * ST_ABI_OBJECTS_DEADLINE_MS)

#define ST_ABI_NAME_MAX 64 /* provider, tracepoint and field names, NUL included */
#define ST_ABI_MSG_MAX 65536 /* largest control message */

/*
 * Attach (ctl/inspect/attach.c): a process started without the preload
 * is given the tracer by an inspector, which loads libshimtrace-attach.so
 * first and writes its one symbol, st_attach_args, then loads the core
 * and the families. The core, which refers to the symbol weakly (NULL in
 * a process started with the preload), registers with the daemon named
 * there instead of those of its environment.
 */
#define ST_ABI_ATTACH_MAGIC 0x73746174u /* "stat" */
struct st_abi_attach {
	uint32_t magic;	     /* ST_ABI_ATTACH_MAGIC, written last */
	uint32_t version;    /* ST_ABI_VERSION */
	uint32_t timeout_ms; /* the SHIMTRACE_TIMEOUT_MS it then keeps, 0: its own */
	uint32_t stack_depth;	/* 1 + its SHIMTRACE_STACK_DEPTH, 0: its own */
	uint64_t stack_sample;	/* its SHIMTRACE_STACK_SAMPLE, 0: its own */
	char rundir[96]; /* the daemon's directory, NUL-terminated */
};

/* ---- event records in the ring buffers, byte-packed ----
 *
 * A record is a header, the call site (ip, 48 bits: user-space addresses
 * fit), then the fields:
 *
 *   compact   u8 id (0..254), u24 timestamp: the clock's low 24 bits     4
 *   extended  u8 255, u32 id, u64 timestamp                             13
 *
 * A compact timestamp is read as the smallest time after the previous
 * record's (with 24 bits: less than 2^24 ticks later); the writer uses the
 * extended form when the id does not fit or more time went by. Every
 * sub-buffer, and every change of the thread that owns a slot, begins with
 * a thread record: an extended header with id ST_ABI_ID_THREAD and the
 * full timestamp, then the s32 thread id, and no ip. The thread and the
 * process are constant for a run of records, so they are not repeated in
 * each: the daemon puts them in the trace's packet context and event
 * context (it rewrites every record anyway: the trace's ids are not the
 * process's). See doc/internals.md.
 */
#define ST_ABI_ID_EXTENDED 255u	       /* first byte of an extended header */
#define ST_ABI_TS_BITS 24u	       /* of a compact header's timestamp */
#define ST_ABI_HDR_COMPACT 4u
#define ST_ABI_HDR_EXTENDED 13u
#define ST_ABI_IP_BYTES 6u
/* A Java site (jvm/jvm-tp.h) is written with bit 47 set, which no
 * user-space code address has and the record keeps; the daemon moves it
 * to bit 62 in the trace, out of any address range
 * (ctl/daemon/objects/callsite.c). */
#define ST_ABI_IP_JAVA (1ull << 47)
#define ST_ABI_IP_JAVA_FROM 62
#define ST_ABI_ID_THREAD 0xffffffffu   /* extended id of a thread record */
#define ST_ABI_THREAD_REC (ST_ABI_HDR_EXTENDED + 4u)
/* In a per-user pool (many processes write it), a thread record names the
 * process as well: the s32 thread id, then the u32 writer number the daemon
 * gave the process with the pool (struct st_abi_user_pool_msg). */
#define ST_ABI_ID_THREAD_OF 0xfffffffeu
#define ST_ABI_THREAD_OF_REC (ST_ABI_THREAD_REC + 4u)
#define ST_ABI_THREAD_REC_MAX ST_ABI_THREAD_OF_REC
/* The most a record's header and ip take. */
#define ST_ABI_RECORD_MAX_HDR (ST_ABI_HDR_EXTENDED + ST_ABI_IP_BYTES)

/* ---- status page 0 ---- */

enum st_abi_clock {
	ST_CLOCK_MONOTONIC = 1, /* CLOCK_MONOTONIC, nanoseconds */
	ST_CLOCK_TSC = 2,	/* rdtsc, cycles */
};

enum st_abi_mode {
	ST_MODE_DISCARD = 1,
	ST_MODE_OVERWRITE = 2,
};

/* Limits the process enforces on what the daemon configures. */
#define ST_ABI_SB_SIZE_MIN 4096u
#define ST_ABI_SB_SIZE_MAX (64u << 20)
#define ST_ABI_SB_COUNT_MIN 2u
#define ST_ABI_SB_COUNT_MAX 1024u
#define ST_ABI_SLOTS_MAX 4096u

struct st_abi_session {
	uint32_t generation; /* daemon: nonzero while the session exists */
	uint32_t mode;	     /* enum st_abi_mode */
	uint32_t sb_size;    /* bytes per sub-buffer, a multiple of ST_ABI_PAGE */
	uint32_t sb_count;   /* sub-buffers per thread buffer */
	uint32_t nslots;     /* thread buffers per process: the memory bound;
			      * per-CPU: the possible CPUs */
	uint32_t block_ms;   /* --blocking: 0 not blocking, else the longest
			      * wait for room in ms, or ST_ABI_BLOCK_FOREVER */
	uint32_t buffers;    /* enum st_abi_buffers */
	uint32_t pad;
};

/* A pool's buffers: one per thread that writes (claimed), or one per CPU,
 * written by whichever thread runs there (doc/percpu.md). A process that
 * cannot write per-CPU buffers (no rseq) makes a per-thread pool of the
 * same geometry, and says so in the pool header. */
enum st_abi_buffers {
	ST_BUFFERS_PER_THREAD = 0,
	ST_BUFFERS_PER_CPU = 1,
	/* per-CPU buffers the daemon made for all the processes of one user
	 * (ST_MSG_USER_POOL): written only in a process's session config when
	 * that message was sent to it first, and in such a pool's header */
	ST_BUFFERS_PER_USER = 2,
};

#define ST_ABI_BLOCK_FOREVER UINT32_MAX

/* The period of the daemon's timer, which raises control.heartbeat in
 * every process it serves (core/block.c judges a daemon gone by it). */
#define ST_ABI_HEARTBEAT_MS 100

struct st_abi_control {
	uint32_t magic; /* ST_ABI_CONTROL_MAGIC, written by the process */
	uint32_t version;
	/* daemon-written */
	uint32_t clock;	    /* enum st_abi_clock */
	uint32_t ns_shift;  /* ns = (cycles * ns_mult) >> ns_shift */
	uint64_t ns_mult;
	struct st_abi_session session[ST_ABI_MAX_SESSIONS];
	/* process-written: events dropped for want of a buffer, per session */
	uint64_t lost_no_buffer[ST_ABI_MAX_SESSIONS];
	/* process-written: bytes of the registration log (release store) */
	uint64_t reglog_len;
	/* daemon-written: the daemon that controls this process (0: none) */
	int32_t daemon_pid;
	/* process-written: how many times it stopped waiting for READY (the
	 * daemon did not answer a SYNC within SHIMTRACE_TIMEOUT_MS): what it
	 * registered then was enabled late, its first events unrecorded */
	uint32_t late_answers;
	/* daemon-written: the socket of a daemon that found this process on
	 * its own (not connected), which the process connects to at its next
	 * registration (a dlopen, a provider; never on the event path); ""
	 * for none */
	char attach_path[108];
	/* process-written: the socket of the one daemon it chose
	 * ($SHIMTRACE_RUNDIR), which alone may adopt it; "" for any of its
	 * user's or the system daemon */
	char wanted_path[108];
	/* process-written: the pool of session s, when the control socket
	 * could not carry it (not connected, or the program closed it): its
	 * descriptor number and generation, ((uint64)generation << 32) | fd,
	 * for the daemon to take with pidfd_getfd (release store) */
	uint64_t pool_offer[ST_ABI_MAX_SESSIONS];
	/* daemon-written: the generation of the pool of session s it holds;
	 * the process may then close its descriptor */
	uint32_t pool_taken[ST_ABI_MAX_SESSIONS];
	/* daemon-written: a count the daemon raises on its timer (every
	 * ST_ABI_HEARTBEAT_MS) while it serves this process; a writer waiting
	 * for room (--blocking) stops waiting when it stands still too long */
	uint64_t heartbeat;
	/*
	 * Buffer memory (ABI 2). A pool has `nslots` slots (the process's
	 * share), but a thread may claim a slot never claimed before only
	 * below slots_allowed (the daemon's grant, within the session's
	 * bound). Claiming and the daemon's taking back of a grant are a
	 * Dekker exchange, all sequentially consistent:
	 *
	 *   process (claim slot i)            daemon (grant lowered to a)
	 *   slots_claimed = max(.., i + 1)    slots_allowed = a
	 *   read slots_allowed: i < it?       read slots_claimed: <= a?
	 *
	 * at least one side sees the other: either the claimer sees the
	 * lower grant and gives the slot back, or the daemon sees the claim
	 * and restores the grant.
	 */
	/* daemon-written */
	uint32_t slots_allowed[ST_ABI_MAX_SESSIONS];
	/* process-written: ((uint64)pool generation << 32) | n: slots [0, n)
	 * of that pool were claimed at least once (a claim given back for want
	 * of a grant may stay counted) */
	uint64_t slots_claimed[ST_ABI_MAX_SESSIONS];
	/* process-written: events dropped because the thread's slot was beyond
	 * slots_allowed (the session had no memory left for it), per session */
	uint64_t lost_no_memory[ST_ABI_MAX_SESSIONS];
	/* process-written: 1 once its exit path ran (exit(), a return from
	 * main, _exit or _Exit through the proc family), connected or not;
	 * still 0 when it is killed or crashes (release store) */
	uint32_t exited;
	/* process-written: 0 when its tracer came with it (the preload, or
	 * linked in); else ST_ABI_ATTACHED while an attach has its calls
	 * redirected, ST_ABI_DETACHED before and after (release store):
	 * a daemon attaches such a process again (ctl/daemon/cmd/sessattach.c) */
	uint32_t attach_state;
};

#define ST_ABI_ATTACHED 1u
#define ST_ABI_DETACHED 2u

_Static_assert(sizeof(struct st_abi_control) <= ST_ABI_PAGE, "the control page is one page");

/*
 * The registration log: from byte ST_ABI_REGLOG_OFF of the status memfd,
 * the PROVIDER and PROVIDER_GONE messages the process would send, each
 * padded to 8 bytes, appended as providers come and go. A daemon that finds
 * the process already running reads the process's tracepoints there.
 */
#define ST_ABI_REGLOG_OFF (4096ull * ST_ABI_PAGE)
#define ST_ABI_REGLOG_MAX (1u << 20)

#define ST_ABI_CONTROL_MAGIC 0x53544331u /* "STC1" */

/* ---- buffer pools ---- */

struct st_abi_pool {
	uint32_t magic; /* ST_ABI_POOL_MAGIC */
	uint32_t version;
	uint32_t session;
	uint32_t generation;
	uint32_t mode;
	uint32_t sb_size;
	uint32_t sb_count;
	uint32_t nslots;
	uint64_t slot_size; /* bytes per slot: header area + sb_count * sb_size */
	uint64_t hdr_size;  /* bytes of a slot's header area, page multiple */
	/* producer: slots [0, slots_used) were claimed at least once (claims
	 * take the lowest free slot); the consumer looks no further, so the
	 * pages of unused slots are never touched */
	uint32_t slots_used;
	uint32_t buffers; /* enum st_abi_buffers: what the process made */
};

#define ST_ABI_POOL_MAGIC 0x53545031u /* "STP1" */

struct st_abi_subbuf {
	uint64_t seq;	 /* s + 1 of the content; 0 when never used */
	/* bytes of complete records in the low 32 bits; per-CPU buffers: the
	 * tid of the last record's thread in the high 32, and `tail`, both
	 * written by the commit's one 16-byte store (doc/percpu.md) */
	uint64_t commit;
	/* per-CPU: the time of the last record since begin_ts (low
	 * ST_ABI_TAIL_TIME_BITS) and the events in the sub-buffer (above) */
	uint64_t tail;
	/* per-thread: events in the sub-buffer, written when closed; per-CPU:
	 * events written on the CPU before it, written when opened */
	uint64_t events;
	uint64_t lost;	 /* the slot's events lost so far, written when closed
			  * (per-CPU: when opened, the losses before it) */
	uint64_t begin_ts; /* per-CPU: when the sub-buffer was opened */
	uint32_t closed; /* per-thread: 1 once the producer left this sub-buffer
			  * (per-CPU: once slot.cur is past it) */
	uint32_t pad;
};

/* The offset in a commit word. */
#define ST_ABI_COMMIT_OFF(word) ((uint32_t)(word))

/* A per-CPU tail word: 40 bits of time (18 minutes of nanoseconds, or 6 of
 * 3 GHz cycles; a record later than that opens a new sub-buffer) and 24 of
 * events (a sub-buffer is switched before the count would overflow). */
#define ST_ABI_TAIL_TIME_BITS 40
#define ST_ABI_TAIL_TIME_MAX ((1ull << ST_ABI_TAIL_TIME_BITS) - 1)
#define ST_ABI_TAIL_EVENTS_MAX ((1ull << (64 - ST_ABI_TAIL_TIME_BITS)) - 1)
#define ST_ABI_TAIL_TIME(tail) ((tail) & ST_ABI_TAIL_TIME_MAX)
#define ST_ABI_TAIL_EVENTS(tail) ((tail) >> ST_ABI_TAIL_TIME_BITS)

/*
 * A slot's header. The producer's words and the consumer's position are on
 * cache lines of their own: the consumer gives a sub-buffer back while the
 * producer writes, and on one line each would take the line from the other.
 */
#define ST_ABI_CACHE_LINE 64u

struct st_abi_slot {
	/* ---- the producer's line ---- */
	uint32_t owner; /* tid of the owning thread; 0 when free (CAS) */
	uint32_t pad;
	uint64_t lost_full;   /* producer: dropped, buffer full */
	uint64_t lost_nested; /* producer, in signal handlers: dropped, nested */
	uint64_t overwritten; /* producer: events overwritten (overwrite mode) */
	/* producer: 1 from before the writer looks at the session's enable
	 * bit again until its record is committed, else 0: the daemon stopping
	 * the session clears the bits, runs a global memory barrier, then waits
	 * for this to be 0 (see core/writer.c) */
	uint32_t writing;
	/* producer (--blocking): 1 while the owner waits for the consumer to
	 * give a sub-buffer back, which then wakes it (FUTEX_WAKE on rseq) */
	uint32_t waiting;
	/* per-CPU buffers: the sequence of the open sub-buffer, and its index
	 * (cur % sb_count), both stored by the commit of a switch */
	uint64_t cur, cur_pad;
	uint64_t reserved;
	/* ---- the consumer's line ---- */
	uint64_t rseq; /* consumer: next sequence to consume */
	uint64_t reserved2[7];
	struct st_abi_subbuf sb[]; /* sb_count */
} __attribute__((aligned(ST_ABI_CACHE_LINE)));

_Static_assert(__builtin_offsetof(struct st_abi_slot, rseq) == ST_ABI_CACHE_LINE,
	       "the consumer's position begins the second cache line");
_Static_assert(__builtin_offsetof(struct st_abi_slot, sb) == 2 * ST_ABI_CACHE_LINE,
	       "the sub-buffer controls begin the third");

/* The slot header area, rounded to whole pages. */
static inline uint64_t st_abi_slot_hdr_size(uint32_t sb_count)
{
	uint64_t n = sizeof(struct st_abi_slot) + (uint64_t)sb_count * sizeof(struct st_abi_subbuf);

	return (n + ST_ABI_PAGE - 1) / ST_ABI_PAGE * ST_ABI_PAGE;
}

/*
 * The layout of a pool, from a session's buffer configuration, the one
 * definition both sides use: page 0 the pool header, then nslots slots of
 * slot_size bytes, each its header area (hdr_size bytes: struct
 * st_abi_slot and its sb_count struct st_abi_subbuf) followed by its data,
 * sb_count sub-buffers of sb_size bytes.
 */
struct st_abi_geometry {
	uint64_t hdr_size;  /* of a slot's header area */
	uint64_t slot_size; /* of a slot: header area and sub-buffers */
	uint64_t size;	    /* of the pool */
};

/* Where slot i begins, from the start of the pool. */
static inline uint64_t st_abi_slot_offset(uint64_t slot_size, uint32_t i)
{
	return ST_ABI_PAGE + (uint64_t)i * slot_size;
}

/* Where sub-buffer idx begins, from the start of its slot's data (hdr_size
 * bytes into the slot). */
static inline uint64_t st_abi_subbuf_offset(uint32_t sb_size, uint32_t idx)
{
	return (uint64_t)idx * sb_size;
}

/* Checks a buffer configuration against the limits both sides enforce and
 * computes its layout; 0, or -1 when out of bounds. */
static inline int st_abi_geometry(uint32_t mode, uint32_t sb_size, uint32_t sb_count,
				  uint32_t nslots, struct st_abi_geometry *g)
{
	if ((mode != ST_MODE_DISCARD && mode != ST_MODE_OVERWRITE) || sb_size < ST_ABI_SB_SIZE_MIN ||
	    sb_size > ST_ABI_SB_SIZE_MAX || sb_size % ST_ABI_PAGE || sb_count < ST_ABI_SB_COUNT_MIN ||
	    sb_count > ST_ABI_SB_COUNT_MAX || nslots < 1 || nslots > ST_ABI_SLOTS_MAX)
		return -1;
	g->hdr_size = st_abi_slot_hdr_size(sb_count);
	g->slot_size = g->hdr_size + st_abi_subbuf_offset(sb_size, sb_count);
	g->size = st_abi_slot_offset(g->slot_size, nslots);
	return 0;
}

/* Writes a pool's header (its maker's: the process, or the daemon for a
 * per-user pool), for the configuration and layout g of st_abi_geometry. */
static inline void st_abi_pool_header(struct st_abi_pool *h, uint32_t session, uint32_t generation,
				      uint32_t mode, uint32_t sb_size, uint32_t sb_count,
				      uint32_t nslots, const struct st_abi_geometry *g,
				      uint32_t buffers)
{
	h->magic = ST_ABI_POOL_MAGIC;
	h->version = ST_ABI_VERSION;
	h->session = session;
	h->generation = generation;
	h->mode = mode;
	h->sb_size = sb_size;
	h->sb_count = sb_count;
	h->nslots = nslots;
	h->slot_size = g->slot_size;
	h->hdr_size = g->hdr_size;
	h->buffers = buffers;
}

/*
 * Provider, tracepoint and field names: C identifiers shorter than
 * ST_ABI_NAME_MAX. They end up in the CTF metadata, so the process checks
 * what it registers and the daemon what it receives.
 */
static inline int st_abi_name_valid(const char *s)
{
	for (unsigned n = 0;; n++) {
		char c = s[n];

		if (c == '\0')
			return n > 0;
		if (n + 1 >= ST_ABI_NAME_MAX)
			return 0;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		      (n > 0 && c >= '0' && c <= '9')))
			return 0;
	}
}

/* ---- control socket messages (SOCK_SEQPACKET, one message per packet) ----
 *
 * Every message starts with struct st_abi_msg; `len` counts the whole
 * message. Variable parts are packed byte strings read with bounds checks.
 */
enum st_abi_msg_type {
	ST_MSG_HELLO = 1,   /* P->D + status memfd: struct st_abi_hello */
	ST_MSG_PROVIDER,    /* P->D: a provider and its tracepoints */
	ST_MSG_PROVIDER_GONE, /* P->D: struct st_abi_provider_gone */
	ST_MSG_MAPS,	    /* P->D: struct st_abi_maps */
	ST_MSG_SYNC,	    /* P->D: struct st_abi_sync, answered by READY */
	ST_MSG_READY,	    /* D->P: struct st_abi_sync, once all before is done */
	ST_MSG_POOL,	    /* P->D + pool memfd: struct st_abi_pool_msg */
	ST_MSG_SUBBUF,	    /* P->D: struct st_abi_subbuf_msg */
	ST_MSG_EXIT,	    /* P->D: the process is exiting */
	ST_MSG_USER_POOL,   /* D->P + pool memfd: struct st_abi_user_pool_msg */
};

struct st_abi_msg {
	uint32_t type;
	uint32_t len;
};

/* The process can write per-CPU buffers (its threads have rseq areas): it
 * can take its user's pool (ST_MSG_USER_POOL). */
#define ST_HELLO_RSEQ 1u

struct st_abi_hello {
	struct st_abi_msg hdr;
	uint32_t version;     /* ST_ABI_VERSION */
	int32_t ppid;
	uint32_t status_size; /* bytes of the status memfd */
	uint32_t flags;	      /* ST_HELLO_* */
	char name[16];	      /* comm */
	/* followed by the executable path, NUL-terminated */
};

/*
 * ST_MSG_PROVIDER body: struct st_abi_provider, then `count` tracepoints,
 * each: uint32 slot, uint32 nfields, name (NUL-terminated), then nfields
 * times: uint32 type, name (NUL-terminated).
 */
struct st_abi_provider {
	struct st_abi_msg hdr;
	uint32_t page; /* page index in the status memfd */
	uint32_t count;
	char name[ST_ABI_NAME_MAX];
};

struct st_abi_provider_gone {
	struct st_abi_msg hdr;
	uint32_t page;
	uint32_t pad;
};

/*
 * ST_MSG_MAPS: the process's mappings changed (or are first reported). The
 * daemon reads /proc/PID/maps and the ELF files itself and writes the
 * statedump events with the time in its trace's clock (ts_tsc or
 * ts_mono); the process sends a SYNC after it and waits, so the mappings
 * are still there when the daemon looks.
 */
enum st_abi_maps_kind {
	ST_MAPS_STATEDUMP = 1, /* registration: every loaded object */
	ST_MAPS_DLOPEN = 2,    /* after a successful dlopen */
	ST_MAPS_DLCLOSE = 3,   /* after dlclose */
};

struct st_abi_maps {
	struct st_abi_msg hdr;
	uint32_t kind; /* enum st_abi_maps_kind */
	uint32_t pad;
	/* When, in both clocks: the daemon picks the trace's. */
	uint64_t ts_tsc;
	uint64_t ts_mono;
};

struct st_abi_sync {
	struct st_abi_msg hdr;
	uint64_t seq; /* echoed in the READY that answers it */
};

struct st_abi_pool_msg {
	struct st_abi_msg hdr;
	uint32_t session;
	uint32_t generation;
	uint64_t size; /* bytes of the pool memfd */
};

/*
 * A per-user pool (--buffers per-user): the daemon's memfd, sealed, with a
 * per-CPU buffer for each CPU, which every traced process of the user
 * writes. Sent before the daemon writes the session's configuration with
 * buffers = ST_BUFFERS_PER_USER in the process's control page, so a writer
 * that reads that configuration finds the message on its socket. Its
 * thread records are ST_ABI_ID_THREAD_OF with `writer`; the last-writer
 * word of its commits holds tid ^ (writer << ST_ABI_WRITER_SHIFT).
 */
struct st_abi_user_pool_msg {
	struct st_abi_msg hdr;
	uint32_t session;
	uint32_t generation;
	uint32_t writer; /* the process's number in the pool, never 0 */
	uint32_t pad;
	uint64_t size;	 /* bytes of the pool memfd */
};

/* Thread ids are below 2^22 (PID_MAX_LIMIT). */
#define ST_ABI_WRITER_SHIFT 22

struct st_abi_subbuf_msg {
	struct st_abi_msg hdr;
	uint32_t session;
	uint32_t slot;
};

#endif /* ST_ABI_H */
