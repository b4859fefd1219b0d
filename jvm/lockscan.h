/*
 * Whether a thread can own a monitor, read from its stack trace
 * (lockscan.c): what lets a contended enter skip JVMTI's owned-monitor
 * walk when the answer is "nothing".
 */
#ifndef ST_JVM_LOCKSCAN_H
#define ST_JVM_LOCKSCAN_H

#include <jni.h>
#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Whether the thread of this stack trace (frames[0..n), the whole stack;
 * top: frames[0]'s location as JVMTI gave it, the thread blocked there
 * on a monitor; jni: its JNIEnv) owns no monitor. false whenever it
 * cannot tell.
 */
bool st__jvm_owns_nothing(jvmtiEnv *jvmti, JNIEnv *jni, const jvmtiFrameInfo *frames, jint n,
			  jlocation top);

#endif
