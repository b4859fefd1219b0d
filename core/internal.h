/*
 * Internal interfaces of libshimtrace, the in-process runtime.
 *
 * Concurrency map of the process side:
 * - Event writers (any thread, any time, also signal handlers) read the
 *   provider state pages, st__live, st__pools[] and their thread's own
 *   st__tls. They take no lock. A thread's writers are used only by that
 *   thread; st__tls.busy keeps a signal handler out of an interrupted write.
 * - Registration (providers, the daemon connection) runs in constructors,
 *   destructors and the dlopen hooks: serialised by the dynamic loader's
 *   lock, or single-threaded (process start, fork child).
 * - Pools are created once per session by whichever thread first needs one
 *   (compare-and-swap on st__pool_state), and never freed while the process
 *   lives: writers may hold pointers into them.
 */
#ifndef ST_CORE_INTERNAL_H
#define ST_CORE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <shimtrace/tracepoint.h>

#include "abi.h"

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
extern struct st_abi_control *st__control ST_HIDDEN;

/* ---- per-thread producer state ---- */

struct st__pool;

/* Process-private state of one ring buffer (slot), used by its owner. */
struct st__writer {
	uint8_t *sb;		    /* data of the open sub-buffer */
	uint32_t off;		    /* write offset in it */
	uint32_t sb_size;
	uint64_t last_ts;	    /* keeps timestamps monotonic in the stream */
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
	uint64_t lost_full;	    /* mirrors slot->lost_full (single writer) */
	uint64_t overwritten;	    /* mirrors slot->overwritten */
};

struct st__thread {
	uint32_t busy; /* inside an event write or tracer code */
	int32_t tid;   /* cached; 0 until first needed */
	bool exit_hook; /* the thread-exit destructor is armed */
	struct st__writer *w[ST_ABI_MAX_SESSIONS];
};

extern __thread struct st__thread st__tls ST_HIDDEN __attribute__((tls_model("initial-exec")));

/* ---- pools (pool.c) ---- */

struct st__pool {
	int fd;
	uint8_t *base;
	uint64_t size;
	uint32_t session;
	uint32_t generation;
	uint32_t mode;
	uint32_t sb_size;
	uint32_t sb_count;
	uint32_t nslots;
	uint64_t slot_size;
	uint64_t hdr_size;
	struct st__writer *writers; /* nslots, process-private */
};

enum { ST_POOL_NONE = 0, ST_POOL_CREATING, ST_POOL_READY, ST_POOL_FAILED };

/* Creates (once) the pool of session s from the control page; NULL if it
 * cannot exist now. Async-signal-safe, no lock. */
struct st__pool *st__pool_get(uint32_t s) ST_HIDDEN;
/* Claims a free ring buffer of the pool for the calling thread. */
struct st__writer *st__pool_claim(struct st__pool *pool, int32_t tid) ST_HIDDEN;
/* Gives the slot back (its open sub-buffer stays open). */
void st__writer_release(struct st__writer *w) ST_HIDDEN;
/* Forgets every pool (fork child: they belong to the parent). */
void st__pools_forget(void) ST_HIDDEN;
/* Creates the pools of the sessions active now (registration time). */
void st__pools_create_active(void) ST_HIDDEN;

/* ---- writer slow paths (writer.c) ---- */

/* Closes the open sub-buffer of w (if any) and tells the daemon. */
void st__writer_close(struct st__writer *w) ST_HIDDEN;
/* Flushes and releases every buffer of the calling thread. */
void st__thread_flush(void) ST_HIDDEN;
void st__thread_forget(void) ST_HIDDEN;

/* ---- status memory (status.c) ---- */

int st__status_init(void) ST_HIDDEN;
/* Maps a provider state page onto the next status page; returns its index. */
int st__status_attach(struct st_provider_state *state) ST_HIDDEN;
void st__status_detach(struct st_provider_state *state, uint32_t page) ST_HIDDEN;
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

/* Sends every registered provider to the daemon; returns how many. */
uint32_t st__registry_send_all(void) ST_HIDDEN;
/* Writes every provider into the registration log (a fork child's). */
void st__registry_log_all(void) ST_HIDDEN;
/* Re-attaches every provider page (fork child). */
int st__registry_reattach(void) ST_HIDDEN;

/* ---- control connection (control.c) ---- */

extern int st__ctl_fd ST_HIDDEN; /* -1 when not connected */

/* Connects and registers the process (the status query); 0 or -errno. */
void st__control_setup(void) ST_HIDDEN;
int st__control_register(void) ST_HIDDEN;
/* Connects to the daemon named in the control page if not connected. */
int st__control_ensure(void) ST_HIDDEN;
/* Sends a message, with an optional fd. Never blocks; 0 or -errno. */
int st__control_send(const void *msg, uint32_t len, int fd) ST_HIDDEN;
/* Sends SYNC and waits (bounded) for the daemon's READY. */
int st__control_sync(void) ST_HIDDEN;
/* The same, then takes up what the daemon configured (clock, pools). */
int st__control_synced(void) ST_HIDDEN;
void st__control_maps_changed(uint32_t kind) ST_HIDDEN;
void st__control_disconnect(void) ST_HIDDEN;
/* Tests: take fd as the connection to a daemon the test plays. */
int st__control_attach(int fd) ST_HIDDEN;

/* ---- clock (clock.c) ---- */

void st__clock_configure(void) ST_HIDDEN;

/* ---- diagnostics ---- */

/* One line to stderr, at most once per `once` flag; async-signal-safe. */
void st__warn_once(int *once, const char *msg) ST_HIDDEN;

/* Process-wide initialisation; idempotent. */
void st__init(void) ST_HIDDEN;
void st__writer_init(void) ST_HIDDEN;

static inline void st__barrier(void)
{
	__asm__ __volatile__("" ::: "memory");
}

#endif /* ST_CORE_INTERNAL_H */
