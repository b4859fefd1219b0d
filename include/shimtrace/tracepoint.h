/*
 * shimtrace public API: declaring tracepoints.
 *
 * A provider is a list of tracepoints written once as an X-macro:
 *
 *     #define MYAPP_TRACEPOINTS(TP, F)                          \
 *         TP(myapp, request_begin, F(U64, id) F(STRING, path))  \
 *         TP(myapp, request_end,   F(U64, id) F(S32, status))
 *     ST_PROVIDER_DECLARE(myapp, MYAPP_TRACEPOINTS)   (in a header)
 *     ST_PROVIDER_DEFINE(myapp, MYAPP_TRACEPOINTS)    (in one .c file)
 *
 *     st_tracepoint(myapp, request_begin, req->id, req->path);
 *
 * The list expands into everything that must agree: the slot of each
 * tracepoint in the provider's state page, its field descriptors (from which
 * the session daemon generates the CTF metadata), a typed inline emitter and
 * the descriptor placed in the `st_tracepoints` ELF section of the object.
 * The object's constructor registers every descriptor of that section with
 * libshimtrace; its destructor (dlclose) unregisters them.
 *
 * Enabled state: each provider owns one page-aligned page inside the object
 * that defines it. libshimtrace maps that page onto shared memory which the
 * session daemon writes, so a tracepoint site costs one load (RIP-relative,
 * the page is a hidden symbol of the same object) and one branch while
 * disabled, and switching it on or off needs no code to run in the process.
 *
 * Field types: U8 U16 U32 U64 S8 S16 S32 S64, HEX64 (an unsigned 64-bit value
 * shown in hexadecimal: addresses), SIZE (a count of bytes, a size_t: an
 * unsigned 64-bit value that the trace's metadata types as size_t, so that
 * readers can tell byte counts from other numbers), DOUBLE (a C double,
 * an IEEE 754 binary64, recorded bit for bit: NaN, infinities, -0.0 and
 * subnormals included; a CTF floating_point in the trace) and STRING
 * (NUL-terminated, truncated to ST_STRING_MAX - 1 bytes, a truncated one
 * ending in "...").
 *
 * Objects using these macros link with -lshimtrace.
 */
#ifndef SHIMTRACE_TRACEPOINT_H
#define SHIMTRACE_TRACEPOINT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ST_API __attribute__((visibility("default")))

enum st_type {
	ST_TYPE_U8 = 1,
	ST_TYPE_U16,
	ST_TYPE_U32,
	ST_TYPE_U64,
	ST_TYPE_S8,
	ST_TYPE_S16,
	ST_TYPE_S32,
	ST_TYPE_S64,
	ST_TYPE_HEX64,
	ST_TYPE_STRING,
	ST_TYPE_SIZE, /* added last: the values above are ABI */
	ST_TYPE_STACK, /* return addresses: a 16-bit byte count, then 8 bytes each */
	ST_TYPE_DOUBLE, /* an IEEE 754 binary64 */
};

/* The highest valid type, for checks of descriptors. */
#define ST_TYPE_LAST ST_TYPE_DOUBLE

/* The most frames a STACK field holds. */
#define ST_STACK_MAX 32

/* Strings are recorded up to ST_STRING_MAX - 1 bytes plus the NUL; a
 * longer one is cut to ST_STRING_MAX - 4 bytes and "...". */
#define ST_STRING_MAX 1024

/* Bytes after a payload that st_event_write may read (it copies words). */
#define ST_PAYLOAD_SLACK 8

struct st_field {
	const char *name;
	uint32_t type; /* enum st_type */
};

/* Tracepoints per provider: one page holds a mask and an id for each. */
#define ST_PROVIDER_MAX_TRACEPOINTS 512

/*
 * The per-provider state page. Written only by the session daemon (through
 * shared memory) once registered; read by the tracepoint sites.
 * mask: bit s set when session s records this tracepoint in this process.
 * id:   the event id the daemon assigned to this tracepoint in the traces.
 */
struct st_provider_state {
	uint32_t mask[ST_PROVIDER_MAX_TRACEPOINTS];
	uint32_t id[ST_PROVIDER_MAX_TRACEPOINTS];
} __attribute__((aligned(4096)));

struct st_tracepoint {
	const char *provider;
	const char *name;
	const struct st_field *fields;
	uint32_t nfields;
	uint32_t slot; /* index in state->mask and state->id */
	struct st_provider_state *state;
};

/*
 * Writes one event for every session in mask. ts is a value of the trace
 * clock (st_clock_read()); ip the caller address recorded with the event.
 * The ST_PAYLOAD_SLACK bytes after payload + len must be readable.
 *
 * The fast path (the thread has a buffer in the session, with room in its
 * sub-buffer) takes no lock and makes no system call, no atomic
 * read-modify-write and no allocation. The slow path (the thread's first
 * event in a session, a full sub-buffer, a session started again) makes
 * system calls: it may create and map the session's buffer pool, claim a
 * buffer and make its memory resident (milliseconds, once per buffer and
 * process), probe with signal 0 (tgkill) for a buffer whose thread died,
 * arm the thread's exit hook, and send the daemon the pool or a sub-buffer
 * notice if the connection's lock is free, never waiting for the lock or
 * for an answer. In a session made --blocking, a full buffer waits there
 * for the daemon to drain it (futex sleeps, up to the session's timeout,
 * or until the daemon is found gone). errno is preserved. A call from
 * inside another event write on the same thread (a signal handler) is
 * dropped and counted as lost, without waiting.
 */
ST_API void st_event_write(const struct st_tracepoint *tp, uint32_t mask, uint64_t ts,
			   const void *ip, const void *payload, uint32_t len);

/*
 * The generation of the session in slot s (the bit 1 << s of the masks)
 * as this process sees it: nonzero while a session holds the slot, and a
 * new value when another session takes it. A provider that writes
 * something once per session (a statedump of its own) remembers the
 * generation it wrote for: a mask bit that stays set may belong to a new
 * session. The daemon writes the generation before it sets the session's
 * bits, so a writer that saw a bit and then reads this reads its session's.
 */
ST_API uint32_t st_session_generation(uint32_t s);

/* Registration, called by the constructors the macros generate. */
ST_API void st_tracepoints_register(const struct st_tracepoint *const *begin,
				    const struct st_tracepoint *const *end);
ST_API void st_tracepoints_unregister(const struct st_tracepoint *const *begin,
				      const struct st_tracepoint *const *end);

/* The trace clock: the TSC, or CLOCK_MONOTONIC in nanoseconds. */
ST_API extern int st__clock_tsc;
ST_API uint64_t st__clock_monotonic(void);

static inline uint64_t st_clock_read(void)
{
	if (__builtin_expect(st__clock_tsc, 1)) {
		uint32_t lo, hi;

		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
	return st__clock_monotonic();
}

/* Converts a difference of two st_clock_read() values to nanoseconds. */
ST_API uint64_t st_clock_delta_ns(uint64_t delta);

/*
 * The return addresses above the call site `from` (a wrapper's return
 * address: the frames of its callers' callers), innermost first, into
 * pcs: at most max, and at most the process's depth (core/stack.c); how
 * many. No lock, system call or allocation; errno is preserved.
 */
ST_API uint32_t st_stack_capture(uint64_t *pcs, uint32_t max, const void *from);

/*
 * A runtime layered above the wrappers (the JVM agent) may set this: the
 * lock wrappers call it in the thread that found a lock busy and is about
 * to block, before they write its wait event, when that event is
 * recorded, with the wrapper's call site (the caller's return address:
 * the runtime tells its own internal locks from those of the code it
 * runs). It writes what the thread holds of the runtime's own locks (the
 * Java monitors it owns: jvm:monitor_held), so that the lock order seen
 * in the trace spans both kinds. It must be async-signal-safe as far as
 * the wrappers are, preserve errno, and keep its own reentrancy guard.
 * NULL: none (one load, on the contended path only).
 */
ST_API extern void (*st_lock_wait_hook)(const void *site);

static inline void st__lock_wait_hook_run(const void *site)
{
	void (*h)(const void *) = __atomic_load_n(&st_lock_wait_hook, __ATOMIC_ACQUIRE);

	if (h)
		h(site);
}

/*
 * Allocation stacks are sampled: a thread's allocation takes a stack when
 * the bytes it allocated since its last one reach st_stack_sample (0: no
 * stacks), so that big blocks always do and the stacks of small ones are
 * in proportion to their bytes (core/stack.c).
 */
ST_API extern uint64_t st_stack_sample;

/* ---- field type plumbing used by the generated code ---- */

typedef uint8_t st__ctype_U8;
typedef uint16_t st__ctype_U16;
typedef uint32_t st__ctype_U32;
typedef uint64_t st__ctype_U64;
typedef int8_t st__ctype_S8;
typedef int16_t st__ctype_S16;
typedef int32_t st__ctype_S32;
typedef int64_t st__ctype_S64;
typedef uint64_t st__ctype_HEX64;
typedef uint64_t st__ctype_SIZE;
typedef const char *st__ctype_STRING;
typedef const void *st__ctype_STACK; /* the call site the stack is taken above */
typedef double st__ctype_DOUBLE;

/* Largest serialised size of a field. */
#define st__maxsize_U8 1
#define st__maxsize_U16 2
#define st__maxsize_U32 4
#define st__maxsize_U64 8
#define st__maxsize_S8 1
#define st__maxsize_S16 2
#define st__maxsize_S32 4
#define st__maxsize_S64 8
#define st__maxsize_HEX64 8
#define st__maxsize_SIZE 8
#define st__maxsize_STRING ST_STRING_MAX
#define st__maxsize_STACK (2 + 8 * ST_STACK_MAX)
#define st__maxsize_DOUBLE 8

#define ST__DEFINE_PUT(T)                                          \
	static inline uint8_t *st__put_##T(uint8_t *p, st__ctype_##T v) \
	{                                                          \
		memcpy(p, &v, sizeof(v));                          \
		return p + sizeof(v);                              \
	}
ST__DEFINE_PUT(U8)
ST__DEFINE_PUT(U16)
ST__DEFINE_PUT(U32)
ST__DEFINE_PUT(U64)
ST__DEFINE_PUT(S8)
ST__DEFINE_PUT(S16)
ST__DEFINE_PUT(S32)
ST__DEFINE_PUT(S64)
ST__DEFINE_PUT(HEX64)
ST__DEFINE_PUT(SIZE)
ST__DEFINE_PUT(DOUBLE) /* its 8 bytes as they are, as U64's */
#undef ST__DEFINE_PUT

static inline uint8_t *st__put_STRING(uint8_t *p, const char *s)
{
	size_t n;

	/* Hides where s points from the compiler (no instruction): given a
	 * string literal, GCC would warn that the bound exceeds it. */
	__asm__("" : "+r"(s));
	n = s ? strnlen(s, ST_STRING_MAX) : 0;

	if (n == ST_STRING_MAX) {
		/* truncated: marked with "..." */
		memcpy(p, s, ST_STRING_MAX - 4);
		memcpy(p + ST_STRING_MAX - 4, "...", 4);
		return p + ST_STRING_MAX;
	}
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p + n + 1;
}

/* A STACK field: the frames above site, as st_stack_capture finds them
 * (none for a NULL site: an allocation not sampled). */
static inline uint8_t *st__put_STACK(uint8_t *p, const void *site)
{
	uint64_t pcs[ST_STACK_MAX];
	uint16_t bytes = site ? (uint16_t)(8 * st_stack_capture(pcs, ST_STACK_MAX, site)) : 0;

	memcpy(p, &bytes, 2);
	if (bytes)
		memcpy(p + 2, pcs, bytes);
	return p + 2 + bytes;
}

/* ---- X-macro expanders ----
 *
 * LIST(TP, F) is expanded with F producing a tuple per field, so that TP
 * receives its fields as a sequence "(U64, id)(STRING, path)". ST__SEQ walks
 * such a sequence with an operation OP defined in two alternating copies
 * (OP_A, OP_B): each step expands the next tuple and names the other copy,
 * and the final name, pasted with _END, expands to nothing. The paste takes
 * the expansion as variadic arguments because operations emit commas.
 */
#define ST__SEQ(OP, seq) ST__SEQ_(_END, OP##_A seq)
#define ST__SEQ_(end, ...) ST__SEQ__(end, __VA_ARGS__)
#define ST__SEQ__(end, ...) __VA_ARGS__##end
#define ST__F_TUPLE(T, name) (T, name)

#define ST__DESC_A(T, n) { #n, ST_TYPE_##T }, ST__DESC_B
#define ST__DESC_B(T, n) { #n, ST_TYPE_##T }, ST__DESC_A
#define ST__DESC_A_END
#define ST__DESC_B_END
#define ST__PARAM_A(T, n) , st__ctype_##T n ST__PARAM_B
#define ST__PARAM_B(T, n) , st__ctype_##T n ST__PARAM_A
#define ST__PARAM_A_END
#define ST__PARAM_B_END
#define ST__MAXSZ_A(T, n) + st__maxsize_##T ST__MAXSZ_B
#define ST__MAXSZ_B(T, n) + st__maxsize_##T ST__MAXSZ_A
#define ST__MAXSZ_A_END
#define ST__MAXSZ_B_END
#define ST__PUT_A(T, n) st__p = st__put_##T(st__p, n); ST__PUT_B
#define ST__PUT_B(T, n) st__p = st__put_##T(st__p, n); ST__PUT_A
#define ST__PUT_A_END
#define ST__PUT_B_END

#define ST__SLOT(prov, name, seq) st__slot_##prov##_##name,

#define ST__EXTERN(prov, name, seq)                                          \
	extern const struct st_tracepoint st__tp_##prov##_##name             \
		__attribute__((visibility("hidden")));

/* A typed emitter per tracepoint: serialises the fields, then writes. */
#define ST__EMITTER(prov, name, seq)                                          \
	static inline __attribute__((always_inline)) void                     \
	st__emit_##prov##_##name(uint32_t st__mask, uint64_t st__ts,           \
				 const void *st__ip ST__SEQ(ST__PARAM, seq)) \
	{                                                                     \
		uint8_t st__buf[ST_PAYLOAD_SLACK ST__SEQ(ST__MAXSZ, seq)];    \
		uint8_t *st__p = st__buf;                                     \
		ST__SEQ(ST__PUT, seq)                                         \
		st_event_write(&st__tp_##prov##_##name, st__mask, st__ts,     \
			       st__ip, st__buf, (uint32_t)(st__p - st__buf)); \
	}

#define ST__DEFINE_TP(prov, name, seq)                                          \
	static const struct st_field st__fields_##prov##_##name[] = {            \
		ST__SEQ(ST__DESC, seq){ NULL, 0 }                                \
	};                                                                       \
	const struct st_tracepoint st__tp_##prov##_##name                        \
		__attribute__((visibility("hidden"))) = {                        \
			#prov,                                                   \
			#name,                                                   \
			st__fields_##prov##_##name,                              \
			sizeof(st__fields_##prov##_##name) /                     \
					sizeof(st__fields_##prov##_##name[0]) - 1, \
			st__slot_##prov##_##name,                                \
			&st__state_##prov,                                       \
		};                                                               \
	static const struct st_tracepoint *const st__tpptr_##prov##_##name       \
		__attribute__((used, section("st_tracepoints"), aligned(8))) =   \
			&st__tp_##prov##_##name;

/*
 * Declares a provider (use in a header): the slot enum, the state page and
 * descriptors as hidden externs, and one inline emitter per tracepoint.
 */
#define ST_PROVIDER_DECLARE(prov, LIST)                                        \
	enum { LIST(ST__SLOT, ST__F_TUPLE) st__count_##prov };                  \
	_Static_assert(st__count_##prov <= ST_PROVIDER_MAX_TRACEPOINTS,         \
		       "too many tracepoints in provider " #prov);              \
	extern struct st_provider_state st__state_##prov                        \
		__attribute__((visibility("hidden")));                          \
	LIST(ST__EXTERN, ST__F_TUPLE)                                           \
	LIST(ST__EMITTER, ST__F_TUPLE)

/*
 * The bounds of this object's st_tracepoints section (hidden: each object
 * sees its own) and the per-object registration count shared by the
 * constructors of all providers defined in the object.
 */
extern const struct st_tracepoint *const __start_st_tracepoints[]
	__attribute__((weak, visibility("hidden")));
extern const struct st_tracepoint *const __stop_st_tracepoints[]
	__attribute__((weak, visibility("hidden")));
extern int st__object_registrations __attribute__((weak, visibility("hidden")));

/*
 * Defines a provider (use in exactly one .c file of the object): the state
 * page, the descriptors in the st_tracepoints section, and the constructor
 * and destructor that register the object's section with libshimtrace.
 */
#define ST_PROVIDER_DEFINE(prov, LIST)                                           \
	struct st_provider_state st__state_##prov                                \
		__attribute__((visibility("hidden")));                           \
	LIST(ST__DEFINE_TP, ST__F_TUPLE)                                         \
	int st__object_registrations __attribute__((weak, visibility("hidden"))); \
	static void __attribute__((constructor)) st__ctor_##prov(void)           \
	{                                                                        \
		if (st__object_registrations++ == 0)                             \
			st_tracepoints_register(__start_st_tracepoints,          \
						__stop_st_tracepoints);          \
	}                                                                        \
	static void __attribute__((destructor)) st__dtor_##prov(void)            \
	{                                                                        \
		if (--st__object_registrations == 0)                             \
			st_tracepoints_unregister(__start_st_tracepoints,        \
						  __stop_st_tracepoints);        \
	}

/* The address of the code at the tracepoint site. */
#define st__here()                                                      \
	({                                                              \
		const void *st__pc;                                     \
		__asm__ __volatile__("lea 0(%%rip), %0" : "=r"(st__pc)); \
		st__pc;                                                 \
	})

/* True when some session records this tracepoint: one load. */
#define st_tracepoint_enabled(prov, name) \
	__builtin_expect(st__state_##prov.mask[st__slot_##prov##_##name] != 0, 0)

/* Records an event at this site when some session enables it. */
#define st_tracepoint(prov, name, ...)                                          \
	do {                                                                    \
		uint32_t st__m = st__state_##prov.mask[st__slot_##prov##_##name]; \
		if (__builtin_expect(st__m != 0, 0))                            \
			st__emit_##prov##_##name(st__m, st_clock_read(),        \
						 st__here(), ##__VA_ARGS__);    \
	} while (0)

#ifdef __cplusplus
}
#endif

#endif /* SHIMTRACE_TRACEPOINT_H */
