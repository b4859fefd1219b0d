/*
 * The monitors a thread entered with JNI's MonitorEnter, counted
 * (jnimonitors.c): such a monitor lives on after the native frame that
 * entered it, and no stack trace shows it.
 */
#ifndef ST_JVM_JNIMONITORS_H
#define ST_JVM_JNIMONITORS_H

#include <jni.h>
#include <jvmti.h>
#include <stdbool.h>

/* Wraps MonitorEnter and MonitorExit in the JVM's JNI function table
 * (live phase; once; when the agent can ask for owned monitors) and
 * counts the calling thread from now. */
void st__jvm_jni_monitors_install(jvmtiEnv *jvmti);

/* At a thread's start (ThreadStart, in it): counted from its start when
 * the wrappers are in. */
void st__jvm_jni_monitors_thread_start(void);

/* Whether this thread (jni: its JNIEnv) is counted and owns no monitor
 * it entered through JNI. */
bool st__jvm_jni_monitors_none(JNIEnv *jni);

#endif
