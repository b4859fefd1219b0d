/*
 * The statedump of classes and methods (statedump.c): what the numbers
 * in the monitor events mean, written once per session before the first
 * event that names them.
 */
#ifndef ST_JVM_STATEDUMP_H
#define ST_JVM_STATEDUMP_H

#include <jni.h>
#include <jvmti.h>
#include <stdint.h>

#include "jvm/ids.h"

/* The class's number, after jvm:class went to every session of mask
 * that records it and did not have it (0: JVMTI refused the class). */
uint32_t st__jvm_class(jvmtiEnv *jvmti, jclass klass, uint32_t mask);

/* The class of object, told as st__jvm_class tells it. */
uint32_t st__jvm_class_of(jvmtiEnv *jvmti, JNIEnv *jni, jobject object, uint32_t mask);

/* The same two with the class's entry (number 0: refused), for a caller
 * that keeps it: st__jvm_ids_needed then says whether a session has not
 * had its statedump yet. */
struct st_jvm_id st__jvm_class_told(jvmtiEnv *jvmti, jclass klass, uint32_t mask);
struct st_jvm_id st__jvm_class_of_told(jvmtiEnv *jvmti, JNIEnv *jni, jobject object, uint32_t mask);

/* The method's number, after jvm:method (with its class's jvm:class) and
 * its jvm:method_line events went to the sessions of mask that did not
 * have them (0: no method, or one JVMTI no longer knows). */
uint32_t st__jvm_method(jvmtiEnv *jvmti, jmethodID method, uint32_t mask);

/* Java's name of a class from its JVM signature, into out (n bytes):
 * "Lcom/acme/Foo;" is "com.acme.Foo", "[[I" "int[][]". */
void st__jvm_class_name(const char *signature, char *out, size_t n);

#endif
