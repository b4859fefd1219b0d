/*
 * What agent.c defines for the other files of the JVMTI agent
 * (libshimtrace-jvm.so): the jvm provider and its emitters, and whether the VM has
 * died.
 *
 * Safety contract of the whole agent (the JVM must never crash, hang or
 * print differently because of it):
 *   - callbacks run concurrently in any Java thread; the agent's own state
 *     is lock-free (ids.c) but for the one raw monitor that makes a tag's
 *     get-or-set atomic (JVMTI has no compare-and-set of tags);
 *   - no JNI or JVMTI call is made while a lock of ours is held, but that
 *     raw monitor's GetTag and SetTag, which call nothing back;
 *   - everything JVMTI allocates is Deallocated, local references made in
 *     a loop are deleted;
 *   - a JVMTI error (a method of a class unloaded meanwhile, a thread
 *     gone) skips what it would have told, never more;
 *   - nothing is emitted after VMDeath.
 */
#ifndef ST_JVM_AGENT_H
#define ST_JVM_AGENT_H

#include <jni.h>
#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "jvm/jvm-tp.h"

ST_PROVIDER_DECLARE(jvm, ST_JVM_TRACEPOINTS)

/* The sessions that record tracepoint NAME of the jvm provider (the
 * daemon writes the mask: one load, acquire so that the session's
 * generation read after it is that session's). */
#define st_jvm_mask(name) __atomic_load_n(&st__state_jvm.mask[st__slot_jvm_##name], __ATOMIC_ACQUIRE)

/* Writes event NAME for the sessions in mask, at the Java site ip (the
 * arguments expanded first: a macro may give the ip and fields). */
#define st_jvm_emit(name, mask, ...) st_jvm_emit_(name, mask, __VA_ARGS__)
#define st_jvm_emit_(name, mask, ip, ...) \
	st__emit_jvm_##name((mask), st_clock_read(), (const void *)(uintptr_t)(ip), __VA_ARGS__)

/* Whether the VM has died (VMDeath): callbacks then return at once. */
bool st__jvm_dead(void);

#endif
