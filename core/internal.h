/*
 * Internal interfaces of libshimtrace, the in-process runtime.
 *
 * Layers, each file using only those below it (tests/integration/
 * layers.test checks that no two files need each other):
 *   1. system calls, atomics, the ABI, descriptor identity, process-wide
 *      state, the per-CPU commit, the slow paths' mutex, an object's GOT:
 *      sys.h atomic.h abi.h lock.h fdid.c process.c rseq.c got.c
 *   2. shared memory: status.c (status pages, registration log), pool.c
 *      (buffer pools), clock.c (reads the control page)
 *   3. the transport, the one socket and its lock: transport.c
 *   4. registration: registry.c (the provider table and its messages),
 *      registration.c (connecting, announcing, the dlopen reports),
 *      attach.c (the GOT rewrite of a process attached), dl.c
 *   5. the event writer: block.c (the one wait, blocking sessions only),
 *      percpu.c (per-CPU buffers), writer.c
 *   6. process start, fork and exit: init.c
 *
 * Concurrency map of the process side:
 * - Event writers (any thread, any time, also signal handlers) read the
 *   provider state pages, st__live, the pools and their thread's own
 *   st__tls. They take no lock and never wait: what they need from the
 *   daemon (a pool handed over, a sub-buffer notice) they only try to send,
 *   under a try of the connection lock.
 * - Registration (providers, the daemon connection) holds the connection
 *   lock (transport.c) for all it does: constructors, destructors and the
 *   dlopen hooks of several threads are serialised by it, and it alone
 *   sends providers. The fork child runs it single-threaded.
 * - Pools are created once per session by whichever thread first needs one
 *   (a try-lock per session; a thread that needs it meanwhile waits for it,
 *   at most 10 ms: making one is a memfd and a mapping, about 0.1 ms), and
 *   never unmapped while the process lives: writers may hold pointers into
 *   them.
 */
#ifndef ST_CORE_INTERNAL_H
#define ST_CORE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <shimtrace/tracepoint.h>

#include "abi.h"
#include "atomic.h"

#define ST_HIDDEN __attribute__((visibility("hidden")))

/* ---- process identity, wiped in a fork child ----
 *
 * st__live points to a private page advised MADV_WIPEONFORK: a child created
 * by any kind of fork sees pid 0 until it has re-registered, and the event
 * path drops events while pid is 0, so a child never writes into the
 * parent's buffers (which it still maps, shared). Before initialisation
 * st__live points to a static zero page.
 */
struct st__live {
	int32_t pid;
	uint32_t pad;
};

extern struct st__live *st__live ST_HIDDEN;

/* ---- descriptor identity (fdid.c) ---- */

#define ST_FDID_LINK 48

/* What a descriptor of ours was when we opened it (fdid.c). */
struct st__fdid {
	int fd; /* -1: none */
	uint32_t len; /* of link; 0 when /proc could not tell */
	char link[ST_FDID_LINK];
	dev_t dev;
	ino_t ino;
};

/* Records fd (just opened by us) as id; 0 or -EBADF. */
int st__fdid_take(struct st__fdid *id, int fd) ST_HIDDEN;
/* Whether id's number still is the descriptor we opened. */
bool st__fdid_ours(const struct st__fdid *id) ST_HIDDEN;
/* Closes it if it still is ours, forgets the number either way. */
void st__fdid_close(struct st__fdid *id) ST_HIDDEN;
extern struct st_abi_control *st__control ST_HIDDEN;

/* ---- per-thread producer state ---- */

struct st__pool;

/* Process-private state of one ring buffer (slot), used by its owner. */
struct st__writer {
	uint8_t *sb;		    /* data of the open sub-buffer */
	uint32_t off;		    /* write offset in it */
	uint32_t sb_size;
	uint64_t last_ts;	    /* keeps timestamps monotonic in the stream;
				     * the base of the next compact timestamp */
	int32_t tid;		    /* of the open sub-buffer's last thread record */
	uint64_t events;	    /* records in the open sub-buffer */
	struct st_abi_subbuf *ctl;  /* control of the open sub-buffer */
	uint64_t seq;		    /* its sequence number */
	bool opened;		    /* a sub-buffer has been opened */
	bool closed;		    /* the open one is closed, waiting for room */
	uint32_t generation;	    /* session generation of the pool */
	const uint32_t *live_generation; /* the control page's, to compare */
	struct st_abi_slot *slot;
	uint8_t *data;		    /* sub-buffer 0 of the slot */
	struct st__pool *pool;
	uint32_t index;		    /* slot index in the pool */
	bool populated;		    /* its memory was made resident (pool.c) */
	uint64_t lost_full;	    /* mirrors slot->lost_full (single writer) */
	uint64_t overwritten;	    /* mirrors slot->overwritten */
	bool gave_up;		    /* --blocking: a wait timed out, and the
				     * buffer has had no room since */
	/* per-CPU: the chunks of the slot's data this process made resident
	 * (a bit each, percpu.c's ensure_resident) */
	uint64_t *resident;
	bool percpu;		    /* the buffer of CPU `index`, not a thread's:
				     * written by percpu.c only (off stays
				     * sb_size, so the fast path's room check
				     * sends every event there) */
} __attribute__((aligned(ST_ABI_CACHE_LINE))); /* (threads' writers share no line) */

/*
 * Per-CPU buffers (percpu_common.h): where a thread's last common record
 * went -- session, CPU, slot, open sub-buffer (cur), its control and its
 * bytes -- so that st_event_write's next record in that session on that
 * CPU writes at once, without the chain of loads that finds them. Valid
 * while the session's generation is gen and the slot's cur is still cur
 * (the commit compares it); written outside signal handlers only.
 */
struct st__pc {
	uint32_t mask; /* 1 << the session; 0: nothing cached */
	uint32_t gen;
	const uint32_t *live_gen; /* the control page's generation of it */
	struct st_abi_slot *slot;
	struct st_abi_subbuf *ctl;
	uint8_t *data; /* the open sub-buffer's first byte */
	uint64_t cur;
	uint32_t cpu;
	int32_t key;	      /* tid ^ the pool's key_xor */
	uint32_t room;	      /* sb_size - ST_PAYLOAD_SLACK */
	uint32_t chunk_shift; /* the pool's */
	/* Discard mode: the CPU's buffer was full at cur, and the event lost;
	 * the next events count their loss at once while it stays so
	 * (st__percpu_full, percpu.c) */
	bool full;
	struct st__pool *pool;
};

struct st__thread {
	uint32_t busy; /* inside an event write or tracer code */
	int32_t tid;   /* cached; 0 until first needed */
	bool exit_hook; /* the thread-exit destructor is armed */
	struct st__pc pc; /* (with busy, on the lines every event reads) */
	struct st__writer *w[ST_ABI_MAX_SESSIONS];
	/* A claim of session s's pool found no buffer: what the pool looked
	 * like then (st__pool_mark, never 0), so that the thread's next events
	 * try again only once it changed, or every ST_NOBUF_RETRY events,
	 * rather than scan the slots each time; and whether memory lacked. */
	uint32_t nobuf_mark[ST_ABI_MAX_SESSIONS];
	uint16_t nobuf_skip[ST_ABI_MAX_SESSIONS];
	uint32_t nobuf_memory; /* bit s */
};

#define ST_NOBUF_RETRY 1024

extern __thread struct st__thread st__tls ST_HIDDEN __attribute__((tls_model("initial-exec")));

/*
 * For functions that keep &st__tls in a pointer: GCC 12's -fsanitize=null
 * miscompiles its check of an extern TLS variable's address (it branches
 * on flags an earlier comparison left), and the address of a thread-local
 * variable is never NULL anyway.
 */
#define ST_TLS_USER __attribute__((no_sanitize("null")))

/* ---- pools (pool.c) ---- */

struct st__pool {
	struct st__fdid fd; /* until the daemon has the pool */
	struct st_abi_geometry geo; /* its layout (abi.h) */
	uint32_t session;
	uint32_t generation;
	uint32_t mode;
	uint32_t sb_size;
	uint32_t sb_count;
	uint32_t nslots;
	bool percpu;	    /* a buffer per CPU (doc/percpu.md), not per thread */
	bool handed;	    /* the daemon has it (release store) */
	uint8_t *base;
	uint32_t block_ms;	    /* --blocking (abi.h), 0 when not */
	/* --blocking: 1 + the daemon's heartbeat when a wait found it gone
	 * (block.c): no thread waits again until the heartbeat moves */
	uint64_t unserved;
	/* Raised each time a slot is given back (st__writer_release): a
	 * thread that found none free tries again when it moved. */
	uint32_t releases;
	struct st__writer *writers; /* nslots, process-private */
	/* A per-user pool (the daemon's, shared by the user's processes):
	 * the process's number in it, and what its threads' ids are xored
	 * with in the commit word (writer << ST_ABI_WRITER_SHIFT); 0, 0 for
	 * the process's own pool. */
	uint32_t writer, key_xor;
	/* per-CPU: log2 of the chunks a CPU's buffer is made resident by
	 * (64 KiB, or the largest power of two that divides sb_size) */
	uint32_t chunk_shift;
};

/* Creates (once) the pool of session s from the control page; NULL if it
 * cannot exist now. Per-user buffers: the pool the daemon sent, if
 * received; else NULL until the caller looked at the socket (looked), then
 * one of the process's own. Async-signal-safe, no lock. */
struct st__pool *st__pool_get(uint32_t s, bool looked) ST_HIDDEN;
/* Whether session s's pool is to come from the daemon (per-user buffers):
 * then st__pool_get wants the socket read first (st__reg_receive). */
bool st__pool_from_daemon(uint32_t s) ST_HIDDEN;
/* Claims a free ring buffer of the pool for the calling thread; NULL if
 * none is free, with *no_memory set if one was, beyond the daemon's grant. */
struct st__writer *st__pool_claim(struct st__pool *pool, int32_t tid, bool *no_memory) ST_HIDDEN;
/* What decides whether a claim of p can succeed now: its generation, the
 * slots given back, the daemon's grant (never 0). */
uint32_t st__pool_mark(const struct st__pool *p) ST_HIDDEN;
/* Per-CPU pools: makes slot i (CPU i) the process's, within the daemon's
 * grant; false beyond it. */
bool st__pool_claim_cpu(struct st__pool *p, uint32_t i) ST_HIDDEN;
/* Gives the slot back (its open sub-buffer stays open). */
void st__writer_release(struct st__writer *w) ST_HIDDEN;
/* A per-user pool the daemon sent (fd: its memfd, taken: mapped and
 * closed here), kept until session s's configuration names it (the
 * transport's, on receiving it). */
void st__pool_received(const struct st_abi_user_pool_msg *m, int fd) ST_HIDDEN;
/* Forgets every pool (fork child: they belong to the parent). */
void st__pools_forget(void) ST_HIDDEN;

/* ---- blocking sessions (block.c) ---- */

enum st__wait {
	ST_WAIT_ROOM,	 /* the consumer gave a sub-buffer back */
	ST_WAIT_LOST,	 /* timed out, or the daemon is gone: count the event lost */
	ST_WAIT_ENDED,	 /* the session ended or the event was disabled: drop it */
};

/* w's buffer is full and its pool's session blocks: waits for room.
 * enabled: the event's enable mask, bit s its session's. Async-signal-
 * safe; leaves errno changed (the caller restores it). */
enum st__wait st__block_wait(struct st__writer *w, const uint32_t *enabled) ST_HIDDEN;

/* ---- record encoding (writer.c, percpu.c) ---- */

/*
 * Writes a record's header and call site at p (core/abi.h): compact (id,
 * the time's low 24 bits and the site's low 32 in one store, its high 16
 * in a second) when the id fits and the time is less than 2^24 ticks after
 * the stream's previous record, else extended. Up to 16 bytes past the
 * header are written (the writers keep ST_PAYLOAD_SLACK of room). Returns
 * where the payload goes.
 */
static inline __attribute__((always_inline)) uint8_t *
st__put_header(uint8_t *p, uint32_t id, uint64_t ts, uint64_t since_previous, uint64_t site)
{
	if (__builtin_expect(id < ST_ABI_ID_EXTENDED && since_previous < (1u << ST_ABI_TS_BITS), 1)) {
		uint64_t w0 = id | (ts & 0xffffff) << 8 | site << 32;
		uint64_t w1 = site >> 32;

		__builtin_memcpy(p, &w0, 8);
		__builtin_memcpy(p + 8, &w1, 8);
		return p + ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES;
	}
	p[0] = ST_ABI_ID_EXTENDED;
	__builtin_memcpy(p + 1, &id, 4);
	__builtin_memcpy(p + 5, &ts, 8);
	__builtin_memcpy(p + 13, &site, 8);
	return p + ST_ABI_HDR_EXTENDED + ST_ABI_IP_BYTES;
}

/* Writes at p the thread record that says whose records follow, from ts
 * (core/abi.h); returns its end. */
static inline uint8_t *st__put_thread_record(uint8_t *p, int32_t tid, uint64_t ts)
{
	uint32_t id = ST_ABI_ID_THREAD;

	p[0] = ST_ABI_ID_EXTENDED;
	__builtin_memcpy(p + 1, &id, 4);
	__builtin_memcpy(p + 5, &ts, 8);
	__builtin_memcpy(p + 13, &tid, 4);
	return p + ST_ABI_THREAD_REC;
}

/* A thread record naming the process too (writer, a per-user pool's), or
 * the plain one (writer 0). */
static inline uint8_t *st__put_thread_record_of(uint8_t *p, int32_t tid, uint32_t writer,
						uint64_t ts)
{
	uint32_t id = ST_ABI_ID_THREAD_OF;
	uint8_t *end = st__put_thread_record(p, tid, ts);

	if (!writer)
		return end;
	__builtin_memcpy(p + 1, &id, 4);
	__builtin_memcpy(end, &writer, 4);
	return end + 4;
}

/*
 * Copies a payload in whole 8-byte words: up to 7 bytes past `len` are read
 * (the emitters' buffers have ST_PAYLOAD_SLACK spare bytes) and written
 * (the writers keep that much room past a record, and bytes past the
 * commit offset are not data yet). Payloads are a few dozen bytes: a call
 * to memcpy, or its string instructions, would cost more than the copy.
 */
static inline __attribute__((always_inline)) void st__copy_words(uint8_t *dst, const uint8_t *src,
								 uint32_t len)
{
	for (uint32_t i = 0; i < len; i += 8) {
		uint64_t v;

		__builtin_memcpy(&v, src + i, 8);
		__builtin_memcpy(dst + i, &v, 8);
	}
}

/* ---- the per-CPU writer (percpu.c) ---- */

/* Writes one event into the buffer of the CPU the thread runs on, in pool
 * p (per-CPU) of session s; counts it lost if it cannot. nested: from a
 * signal handler that interrupted an event being written (never waits).
 * Callers go through st__percpu_event (percpu_common.h), which writes the
 * common record inline. */
void st__percpu_write(struct st__pool *p, struct st__thread *t, const struct st_tracepoint *tp,
		      uint32_t s, uint32_t id, uint64_t ts, uint64_t site, const void *payload,
		      uint32_t len, bool nested) ST_HIDDEN;
/* Counts an event lost in the buffer of the CPU the thread runs on
 * (nested: a signal handler's, while the thread wrote). */
void st__percpu_lost(struct st__pool *p, bool nested) ST_HIDDEN;
/* t->pc says its CPU's buffer was full: counts the event lost if it still
 * is (true); else drops the cache (false: the general way). */
bool st__percpu_full(struct st__thread *t) ST_HIDDEN;
/* The sub-buffer a CPU buffer whose open one is cur moves on to: cur + 1,
 * or cur itself if it was never opened (its first record); percpu.c's
 * switch and block.c's wait for room agree on it. */
static inline uint64_t st__percpu_next(const struct st__pool *p, const struct st_abi_slot *slot,
				       uint64_t cur)
{
	return st_load_acquire(&slot->sb[cur % p->sb_count].seq) == cur + 1 ? cur + 1 : cur;
}

/* ---- writer slow paths (writer.c) ---- */

/* Closes the open sub-buffer of w (if any) and tells the daemon. */
void st__writer_close(struct st__writer *w) ST_HIDDEN;
/* Flushes and releases every buffer of the calling thread. */
void st__thread_flush(void) ST_HIDDEN;
void st__thread_forget(void) ST_HIDDEN;

/* ---- status memory (status.c) ---- */

int st__status_init(void) ST_HIDDEN;
/* Maps a provider state page onto the next status page; returns its index. */
/* A parked page is reused once its stamp <= acked (the SYNCs answered). */
int st__status_attach(struct st_provider_state *state, uint64_t acked) ST_HIDDEN;
void st__status_detach(struct st_provider_state *state, uint32_t page, uint64_t stamp) ST_HIDDEN;
int st__status_fd(void) ST_HIDDEN;
uint32_t st__status_size(void) ST_HIDDEN;
void st__status_log(const void *msg, uint32_t len) ST_HIDDEN;
/* Fork child: a fresh status memfd, provider pages re-attached. */
int st__status_reinit_child(void) ST_HIDDEN;
int st__status_reattach(struct st_provider_state *state, uint32_t page) ST_HIDDEN;

/* ---- registry (registry.c) ---- */

struct st__provider {
	struct st_provider_state *state;
	uint32_t page;
	const struct st_tracepoint *tps[ST_PROVIDER_MAX_TRACEPOINTS];
	uint32_t ntps;
	char name[ST_ABI_NAME_MAX];
};

typedef void (*st__emit_fn)(const void *msg, uint32_t len, void *arg);

/* Every function of the registry runs under the connection lock. */
void st__registry_encode(const struct st__provider *p, st__emit_fn emit, void *arg) ST_HIDDEN;
void st__registry_each(st__emit_fn emit, void *arg) ST_HIDDEN;
/* Re-attaches every provider page (fork child). */
int st__registry_reattach(void) ST_HIDDEN;
uint32_t st__registry_take(const struct st_tracepoint *const *begin,
			   const struct st_tracepoint *const *end, struct st__provider **touched,
			   uint32_t max, bool *all, uint64_t acked) ST_HIDDEN;
void st__registry_drop(const struct st_tracepoint *const *begin,
		       const struct st_tracepoint *const *end, void (*gone)(uint32_t page),
		       uint64_t stamp) ST_HIDDEN;

/* ---- the transport (transport.c) ---- */

struct sockaddr_un;

void st__conn_lock(void) ST_HIDDEN;
bool st__conn_trylock(void) ST_HIDDEN;
void st__conn_unlock(void) ST_HIDDEN;
/* All below: with the connection lock held. */
int st__transport_connect(const struct sockaddr_un *a, bool system_only) ST_HIDDEN;
bool st__transport_up(void) ST_HIDDEN;
/* Never waits; 0 or -errno. */
int st__transport_send(const void *msg, uint32_t len, int pass_fd) ST_HIDDEN;
bool st__transport_hung_up(void) ST_HIDDEN;
int st__transport_wait_ready(uint64_t seq, int timeout_ms) ST_HIDDEN;
/* Reads what the daemon sent, without waiting (under the connection lock). */
void st__transport_receive(void) ST_HIDDEN;
void st__transport_forget(void) ST_HIDDEN;
/* Tests: take fd as the connection to a daemon the test plays. */
int st__transport_attach(int fd) ST_HIDDEN;

/* ---- registration (registration.c) ---- */

/* Where daemons listen (process start). */
void st__reg_setup(void) ST_HIDDEN;
/* Connects and registers the process (start, fork child). */
void st__reg_register(void) ST_HIDDEN;
/* The arguments of an attach (abi.h), or NULL; the daemon directory they
 * name, or NULL. */
const struct st_abi_attach *st__reg_attach_args(void) ST_HIDDEN;
const char *st__reg_attach_rundir(void) ST_HIDDEN;
/* Attach: connected to the daemon of rundir, connecting now if the
 * process is not connected to a daemon still there; 0, -EBUSY (another
 * daemon serves it) or -errno. */
int st__reg_home(const char *rundir) ST_HIDDEN;
/* A provider object's tracepoints came or go (its constructor, destructor). */
void st__reg_tracepoints(const struct st_tracepoint *const *begin,
			 const struct st_tracepoint *const *end) ST_HIDDEN;
void st__reg_untracepoints(const struct st_tracepoint *const *begin,
			   const struct st_tracepoint *const *end) ST_HIDDEN;
/* The loaded objects changed (dl.c); ts: when, in both clocks. */
void st__reg_objects_changed(uint32_t kind, uint64_t ts_tsc, uint64_t ts_mono) ST_HIDDEN;
/* dl.c: the loader's object counters now, as those the daemon knows. */
void st__dl_baseline(void) ST_HIDDEN;
/* Event path: hand p to the daemon if that can be done without waiting. */
void st__reg_offer_pool(struct st__pool *p) ST_HIDDEN;
/* Now, in both clocks (dl.c dates a dlopen before the loader runs). */
void st__reg_now(uint64_t *ts_tsc, uint64_t *ts_mono) ST_HIDDEN;
/* Event path: the notice that sub-buffers of a slot are ready, if it can
 * go without waiting. */
void st__reg_subbuf_ready(uint32_t session, uint32_t slot) ST_HIDDEN;
/* Event path: reads what the daemon sent (a per-user pool), if the socket
 * is free now; false when it is in use (registration reads it). */
bool st__reg_receive(void) ST_HIDDEN;
/* Process exit: the EXIT notice. */
void st__reg_exit(void) ST_HIDDEN;
/* Fork child (one thread). */
void st__reg_forget(void) ST_HIDDEN;
/* Fork child with its new status memory: providers re-backed and logged. */
int st__reg_restore_child(void) ST_HIDDEN;

/* ---- attach (attach.c) and the GOT of an object (got.c) ---- */

/* st_attach once registered: every object's slots redirected (and those
 * of objects loaded later, from now on); the number this call redirected,
 * or -errno. */
int st__attach_redirect(void) ST_HIDDEN;
/* The dlopen hook: objects loaded since are redirected (while attached). */
void st__attach_rebind(void) ST_HIDDEN;
/* The dlclose hook: what was redirected in objects gone is forgotten. */
void st__attach_prune(void) ST_HIDDEN;
/* Fork child (one thread): the attach lock is free. */
void st__attach_fork_child(void) ST_HIDDEN;

#define ST_OBJ_WSEGS 4

/* A loaded object's extent, from its program headers (st__obj_of). */
struct st__obj {
	uint64_t lo, hi; /* its loaded segments */
	uint64_t wlo[ST_OBJ_WSEGS], whi[ST_OBJ_WSEGS]; /* the writable ones */
	uint32_t nwrite;
	/* the pages the loader made read-only after relocating; equal: none */
	uint64_t relro_lo, relro_hi;
	uint64_t dyn; /* its dynamic section; 0: none */
};

/* A GOT slot that a relocation binds to a named symbol. */
struct st__got_ref {
	uint64_t *slot;
	const char *name;
	const char *version; /* the version the reference needs, or NULL */
	bool lazy;	     /* not bound yet: it leads back into the object's PLT */
	bool relro;	     /* in the pages made read-only after relocating */
};

struct dl_phdr_info;
typedef void (*st__got_fn)(const struct st__got_ref *ref, void *arg);

void st__obj_of(const struct dl_phdr_info *info, struct st__obj *o) ST_HIDDEN;
/* Calls fn for every slot of a writable segment of the object that a
 * JUMP_SLOT or GLOB_DAT relocation binds to a named symbol. */
void st__got_each(const struct dl_phdr_info *info, const struct st__obj *o, st__got_fn fn,
		  void *arg) ST_HIDDEN;

/* ---- clock (clock.c) ---- */

void st__clock_configure(void) ST_HIDDEN;

/* ---- diagnostics ---- */

/* One line to stderr, at most once per `once` flag; async-signal-safe. */
void st__warn_once(int *once, const char *msg) ST_HIDDEN;

ST_API uint64_t st__clock_monotonic(void);

/* Process-wide initialisation; idempotent. */
void st__init(void) ST_HIDDEN;
/* The proc family's _exit and _Exit: the process exits without running
 * destructors (exported for it, init.c). */
ST_API void st__process_exit(void);
void st__writer_init(void) ST_HIDDEN;
void st__stack_init(void) ST_HIDDEN;
/* Our libraries' address ranges noted again (attach loads some after the
 * core's start). */
void st__stack_note_ours(void) ST_HIDDEN;

#endif /* ST_CORE_INTERNAL_H */
