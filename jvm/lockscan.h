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
 * on a monitor whose class the JVM may lock itself if jvm_lock; jni: its
 * JNIEnv) owns no monitor. false whenever it cannot tell.
 */
bool st__jvm_owns_nothing(jvmtiEnv *jvmti, JNIEnv *jni, const jvmtiFrameInfo *frames, jint n,
			  jlocation top, bool jvm_lock);

/* Whether HotSpot may lock objects of object's class itself (arrays,
 * Class, ClassLoaders; true when it cannot tell); read once per class,
 * kept in *facts (its st_jvm_id's; NULL: read each time). */
bool st__jvm_jvm_locks(jvmtiEnv *jvmti, JNIEnv *jni, jobject object, uint32_t *facts);

/*
 * The monitorenter a frame of method blocked at a monitor entry stands
 * at, from the location loc JVMTI gives (HotSpot's interpreter stands
 * past it: a contended enter would be told at the next line). A method
 * with one monitorenter or none is answered from its facts; others from
 * their code (bytecode.c), the thread's last answer kept.
 */
jlocation st__jvm_enter_location(jvmtiEnv *jvmti, jmethodID method, jlocation loc);

/* Finds java.lang.ClassLoader (VMInit, or the attach: the live phase). */
void st__jvm_lockscan_init(JNIEnv *jni);

#endif
