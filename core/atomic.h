/*
 * Named atomic operations of the process side (core/ and the wrappers):
 * each access says the ordering it means, so that the protocols written
 * beside the code (core/abi.h, core/writer.c, core/block.c) can be checked
 * against it by name.
 *
 * Built on liburcu's header-only primitives (urcu/arch.h, urcu/uatomic.h)
 * where liburcu has the operation the code needs, with the same order and
 * the same instructions; nothing of liburcu is linked (configure checks the
 * headers; tests/integration/exports.test the libraries' imports). Where
 * liburcu 0.13's (Debian 12's) operation would order more or less than the
 * code needs, or compile to other instructions on the event path, the
 * operation is ours, on the compiler's builtin with the exact order, and
 * the table says what liburcu's would do:
 *
 *   operation            order                   built on
 *   st_add_relaxed       atomic add, unordered   uatomic_add
 *   st_or_relaxed        atomic or, unordered    uatomic_or
 *   st_load_shared       none: volatile          _CMM_LOAD_SHARED
 *   st_store_shared      none: volatile          _CMM_STORE_SHARED
 *   st_barrier           compiler only           cmm_barrier
 *   st_load_relaxed      relaxed                 ours (a)
 *   st_store_relaxed     relaxed                 ours (a)
 *   st_load_acquire      acquire                 ours (b)
 *   st_store_release     release                 ours (b)
 *   st_load_seq_cst      seq_cst                 ours (b)
 *   st_store_seq_cst     seq_cst                 ours (b)
 *   st_cas_acquire       acquire                 ours (c)
 *   st_cas_release       release                 ours (c)
 *   st_cas_seq_cst       seq_cst                 ours (c)
 *   st_cas_weak_relaxed  relaxed, may fail       ours (c)
 *   st_xchg_relaxed      relaxed                 ours (c)
 *   st_xchg_acquire      acquire                 ours (c)
 *   st_xchg_release      release                 ours (c)
 *   st_fetch_add_relaxed relaxed                 ours (c)
 *   st_add_release       release                 ours (c)
 *   st_sub_relaxed       relaxed                 ours (g)
 *   st_fence_release     release fence           ours (d)
 *   st_fence_full        full fence              ours (e)
 *   st_add_unlocked      none: one instruction   ours (f)
 *
 * (a) CMM_LOAD_SHARED and CMM_STORE_SHARED are volatile accesses with a
 *     compiler barrier before the load, after the store (for caches that
 *     are not coherent); without it (_CMM_LOAD_SHARED, _CMM_STORE_SHARED)
 *     they are still volatile, not atomic, accesses, which GCC 12
 *     compiles otherwise: st_event_write and the writer's slow path get
 *     other instructions (st_load_shared and st_store_shared are those,
 *     for what the code reads and writes as volatile).
 * (b) liburcu 0.13 has no ordered load or store (0.14's uatomic_load and
 *     uatomic_store take an order). Its idioms order less: CMM_LOAD_SHARED
 *     then cmm_smp_rmb() orders the load before later loads, not before
 *     later stores; cmm_smp_wmb() then CMM_STORE_SHARED orders earlier
 *     stores, not earlier loads; with cmm_smp_mb() they are full fences.
 * (c) uatomic_cmpxchg, uatomic_xchg and uatomic_add_return are full
 *     barriers on both sides (and cmm_smp_mb__before_uatomic_add() before
 *     uatomic_add is one before it); uatomic_cmpxchg returns the old value
 *     where these say whether they swapped (updating *expect otherwise, as
 *     the builtin does), uatomic_add_return the new one.
 * (d) cmm_smp_wmb() orders earlier stores only, not earlier loads, and
 *     GCC 12 schedules the writer's slow path otherwise around it.
 * (e) cmm_smp_mb() is an mfence, which also orders non-temporal stores;
 *     GCC fences with a locked or.
 * (f) liburcu's adds are atomic (locked); this one is not, see below.
 * (g) uatomic_sub adds -v: a lock addl $-1 where GCC subtracts 1.
 */
#ifndef ST_CORE_ATOMIC_H
#define ST_CORE_ATOMIC_H

#include <stdbool.h>
#include <stdint.h>

#include <urcu/arch.h>
#include <urcu/uatomic.h>

/* ---- liburcu's ---- */

/* Atomic read-modify-writes with no ordering (shared counters, a page
 * touched once). */
#define st_add_relaxed(p, v) uatomic_add((p), (v))
#define st_or_relaxed(p, v) uatomic_or((p), (v))

/* A word of shared memory read once, as it is at that moment (a volatile
 * access, liburcu's and the Linux kernel's READ_ONCE): for what the daemon
 * configures, read into process-private copies that are checked. */
#define st_load_shared(p) _CMM_LOAD_SHARED(*(p))
/* A store the compiler must make, whatever it knows of the memory. */
#define st_store_shared(p, v) ((void)_CMM_STORE_SHARED(*(p), (v)))

/* The compiler keeps this thread's accesses on their side, so that a
 * signal handler interrupting the thread sees them in program order (no
 * instruction). */
#define st_barrier() cmm_barrier()

/* ---- ours (see the table) ---- */

/* A shared word read or written whole, with no ordering. */
#define st_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define st_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* A store that publishes what was written before it, and the load that
 * then sees all of that. */
#define st_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define st_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* Sides of a Dekker exchange (core/abi.h): each side stores its word, then
 * loads the other's, in one total order. */
#define st_load_seq_cst(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define st_store_seq_cst(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

/* Compare-and-swap: *p = v if *p == *expect, returning whether it did;
 * else *expect = *p (failure: relaxed, except seq_cst's). */
#define st_cas_acquire(p, expect, v) \
	__atomic_compare_exchange_n((p), (expect), (v), false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)
#define st_cas_release(p, expect, v) \
	__atomic_compare_exchange_n((p), (expect), (v), false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)
#define st_cas_seq_cst(p, expect, v) \
	__atomic_compare_exchange_n((p), (expect), (v), false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)

/* A compare-and-swap that may fail spuriously, for a retry loop. */
#define st_cas_weak_relaxed(p, expect, v) \
	__atomic_compare_exchange_n((p), (expect), (v), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)

/* Exchange: *p = v, returning what *p was. */
#define st_xchg_relaxed(p, v) __atomic_exchange_n((p), (v), __ATOMIC_RELAXED)
#define st_xchg_acquire(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
#define st_xchg_release(p, v) __atomic_exchange_n((p), (v), __ATOMIC_RELEASE)

/* *p += v, returning what *p was. */
#define st_fetch_add_relaxed(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
/* *p += v, after what was written before (the count of what it publishes). */
#define st_add_release(p, v) ((void)__atomic_add_fetch((p), (v), __ATOMIC_RELEASE))
#define st_sub_relaxed(p, v) ((void)__atomic_sub_fetch((p), (v), __ATOMIC_RELAXED))

/* Earlier loads and stores before later stores. */
#define st_fence_release() __atomic_thread_fence(__ATOMIC_RELEASE)
/* Earlier loads and stores before later loads and stores. */
#define st_fence_full() __atomic_thread_fence(__ATOMIC_SEQ_CST)

/*
 * *p += v in one instruction without a lock prefix: atomic against a
 * signal handler that interrupts this thread (it runs before or after the
 * instruction, never inside it), not against other threads. For a counter
 * that only its own thread writes, in code a nested handler may re-enter.
 */
static inline __attribute__((always_inline)) void st_add_unlocked(uint64_t *p, uint64_t v)
{
	__asm__ __volatile__("addq %1, %0" : "+m"(*p) : "er"(v));
}

#endif /* ST_CORE_ATOMIC_H */
