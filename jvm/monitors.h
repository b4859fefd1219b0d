/*
 * The monitor events' callbacks (monitors.c), which agent.c connects.
 */
#ifndef ST_JVM_MONITORS_H
#define ST_JVM_MONITORS_H

#include <jni.h>
#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

void JNICALL st__jvm_on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object);
void JNICALL st__jvm_on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
					  jobject object);
void JNICALL st__jvm_on_wait(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
			     jlong timeout);
void JNICALL st__jvm_on_waited(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
			       jboolean timed_out);

/* One jvm:monitor_held, for the sessions of mask, per monitor the
 * calling thread owns, at the frame that owns it; the sites of
 * frames[0..n) are taken from there (the thread's stack trace, its top
 * frame's location that of its monitor entry; NULL, 0: none). */
void st__jvm_held(jvmtiEnv *jvmti, JNIEnv *jni, uint32_t mask, const jvmtiFrameInfo *frames,
		  jint n);

/* At a thread's end (in it): what it kept of its last monitor. */
void st__jvm_monitors_thread_end(JNIEnv *jni);

/* Finds Object's wait methods (VMInit: the live phase, in a thread that
 * may call JNI). */
void st__jvm_monitors_init(jvmtiEnv *jvmti, JNIEnv *jni);

/* Whether monitor_held can be told, and a contended enter's bytecode
 * index checked: agent.c sets them when the JVM granted
 * can_get_owned_monitor_stack_depth_info (at OnLoad only) and
 * can_get_bytecodes. */
extern bool st__jvm_can_held, st__jvm_can_bytecodes;

#endif
