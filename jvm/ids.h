/*
 * The numbers the agent gives (ids.c): monitors, classes and methods, and
 * for classes and methods which sessions already got their statedump.
 */
#ifndef ST_JVM_IDS_H
#define ST_JVM_IDS_H

#include <jni.h>
#include <jvmti.h>
#include <stdint.h>

/* The tables (mmap'ed once) and the tag lock: 0, or -1 (then the agent
 * does not load). */
int st__jvm_ids_init(jvmtiEnv *jvmti);

/*
 * A class or method's number and the sessions its statedump was written
 * for. dumped is NULL when its table is full: the number is then a new
 * one at each call, and the statedump is written each time (still
 * correct, only longer). facts: a
 * word kept with the key, 0 until its user stores there (methods: what
 * their frames can own, lockscan.c); NULL with dumped.
 */
struct st_jvm_id {
	uint32_t number;
	uint32_t *dumped;
	uint32_t *facts;
};

/* The object's tag, given now (from 1) if it had none: the monitor
 * number. 0 when JVMTI refuses (then the object is not told). */
uint64_t st__jvm_tag(jvmtiEnv *jvmti, jobject object);

/* The class's number (through its tag); number 0 when JVMTI refuses. */
struct st_jvm_id st__jvm_class_id(jvmtiEnv *jvmti, jclass klass);

/* The method's number (keyed by its jmethodID, stable while its class
 * lives and never reused by HotSpot). */
struct st_jvm_id st__jvm_method_id(jmethodID method);

/* The method's facts word (st_jvm_id's), its slot claimed if it had
 * none: NULL when the table is full for it (no number is spent). */
uint32_t *st__jvm_method_facts(jmethodID method);

/*
 * The sessions of mask that have not had id's statedump yet. Sessions
 * whose slot changed hands since the agent last looked (a new generation)
 * are first forgotten in every entry.
 */
uint32_t st__jvm_ids_needed(struct st_jvm_id id, uint32_t mask);

/* Records that the sessions of mask got id's statedump (after it was
 * written: a racing thread writes it twice, never an event before it). */
void st__jvm_ids_dumped(struct st_jvm_id id, uint32_t mask);

#endif
