/*
 * The tracepoints of the `jvm` provider: what libshimtrace-jvm.so (the
 * JVMTI agent, jvm/agent.c) records of a Java program, through the same
 * event path as the wrapper families. Reports read them by name; tests
 * and the fake emitter of tests/progs use this one list.
 *
 * Identities (numbers the agent gives, stable for the JVM's life):
 *   monitor: a tag the agent puts on the monitor's object the first time
 *            it sees it (JVMTI SetTag), from 1; a tag moves with the
 *            object across garbage collections.
 *   class:   a class, from 1; its name is written once per session in
 *            jvm:class (Java form, "com.acme.Pool$Entry").
 *   method:  a method, from 1; jvm:method gives its class, name,
 *            signature and source file, and jvm:method_line each entry of
 *            its line table, once per session, before the first event
 *            that names it.
 *
 * The event's ip (its context field, where a wrapper records its caller)
 * is the Java site: ST_JVM_SITE(method, bci), never a code address, so
 * that every report that groups by call site groups Java frames too.
 *
 * The monitor events are those of JVMTI: contended_enter when a thread
 * finds a monitor owned and is about to block, contended_entered when it
 * got it (wait_ns: from contended_enter), wait and waited around
 * Object.wait (which releases the monitor; timeout_ms 0: none). class is
 * the monitor object's class. monitor_held, written just before a
 * contended_enter (and before a native lock wait of a thread running
 * JNI code, see agent.c), names each monitor the thread owns, at the
 * frame that owns it: the lock order. record leaves monitor_held out
 * unless a pattern asks for it (ctl/common/catalog_defaults.c: it costs
 * a walk of the blocked thread's stack).
 */
#ifndef ST_JVM_TP_H
#define ST_JVM_TP_H

#include <stdint.h>

#include <shimtrace/tracepoint.h>

#define ST_JVM_TRACEPOINTS(TP, F)                                                           \
	TP(jvm, thread_start, F(STRING, name) F(U8, daemon))                                 \
	TP(jvm, thread_end, F(STRING, name))                                                 \
	TP(jvm, class, F(U32, class) F(STRING, name))                                        \
	TP(jvm, method,                                                                      \
	   F(U32, method) F(U32, class) F(STRING, name) F(STRING, signature) F(STRING, file)) \
	TP(jvm, method_line, F(U32, method) F(U32, bci) F(U32, line))                        \
	TP(jvm, monitor_contended_enter, F(U64, monitor) F(U32, class) F(U32, method) F(S32, bci)) \
	TP(jvm, monitor_contended_entered,                                                   \
	   F(U64, monitor) F(U32, class) F(U32, method) F(S32, bci) F(U64, wait_ns))          \
	TP(jvm, monitor_held, F(U64, monitor) F(U32, class) F(U32, method) F(S32, bci))      \
	TP(jvm, monitor_wait,                                                                \
	   F(U64, monitor) F(U32, class) F(U32, method) F(S32, bci) F(S64, timeout_ms))      \
	TP(jvm, monitor_waited,                                                              \
	   F(U64, monitor) F(U32, class) F(U32, method) F(S32, bci) F(U8, timed_out)         \
		   F(U64, wait_ns))

/*
 * A Java site as an event's ip. In the trace: bit 62 set (no user-space
 * code address has it; bit 63 stays clear), the method number above bit
 * 20, the bytecode index below (a method's code is at most 65535 bytes;
 * -1, no index, is kept as 0xfffff). The ring record keeps 48 bits of an
 * ip, so the agent writes it with bit 47 instead (ST_JVM_SITE: method
 * numbers below 2^27), which the daemon moves to bit 62 (core/abi.h).
 */
#define ST_JVM_SITE_BIT (1ull << 62)
#define ST_JVM_RECORD_BIT (1ull << 47)
#define ST_JVM_METHOD_MAX ((1u << 27) - 1)
#define ST_JVM_SITE(method, bci) \
	(ST_JVM_RECORD_BIT | (uint64_t)(method) << 20 | ((uint64_t)(uint32_t)(bci) & 0xfffffu))
/* The same site as the trace gives it. */
#define ST_JVM_TRACE_SITE(method, bci) \
	(ST_JVM_SITE_BIT | (uint64_t)(method) << 20 | ((uint64_t)(uint32_t)(bci) & 0xfffffu))
#define ST_JVM_IS_SITE(ip) (((ip) >> 62) == 1)
#define ST_JVM_SITE_METHOD(ip) ((uint32_t)(((ip) & ~ST_JVM_SITE_BIT) >> 20))
#define ST_JVM_SITE_BCI(ip) ((int32_t)((ip) & 0xfffffu) == 0xfffff ? -1 : (int32_t)((ip) & 0xfffffu))

#endif
