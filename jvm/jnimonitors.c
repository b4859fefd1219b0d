/*
 * The monitors a thread entered through JNI's MonitorEnter and has not
 * exited, counted per thread: native code may enter a monitor and return
 * to Java holding it (or a thread attached from C may enter one before it
 * calls Java), and then no frame of its stack trace shows it; only
 * JVMTI's owned-monitor walk finds it (at depth -1). A contended enter
 * may skip that walk (lockscan.c) only in a thread known to hold none.
 *
 * JVMTI's JNI function interception: the table is read, MonitorEnter and
 * MonitorExit are replaced by ours, which call the JVM's and count what
 * succeeded, and the table is set back. A thread is counted from its
 * start (the ThreadStart callback, which runs in the new thread before
 * its first method) when the wrappers were in by then, and the thread
 * that installs them from then on (VMInit's, before the program's
 * main). Threads started before (the JVM's own, every thread of a JVM
 * joined later) are not counted: theirs always take the walk.
 */
#include "core/atomic.h"
#include "jvm/jnimonitors.h"
#include "jvm/monitors.h"

static jint(JNICALL *real_enter)(JNIEnv *, jobject);
static jint(JNICALL *real_exit)(JNIEnv *, jobject);
static int installed;

static __thread __attribute__((tls_model("global-dynamic"))) struct {
	bool counted;
	unsigned long held;
} jni_monitors;

static jint JNICALL monitor_enter(JNIEnv *env, jobject object)
{
	jint r = st_load_acquire(&real_enter)(env, object);

	if (r == JNI_OK)
		jni_monitors.held++;
	return r;
}

/* (an exit JNI refuses leaves the count, which never goes below 0. One
 * of a monitor taken in Java, which JNI forbids but HotSpot lets pass,
 * counts one too few: lockscan.c takes that on trust) */
static jint JNICALL monitor_exit(JNIEnv *env, jobject object)
{
	jint r = st_load_acquire(&real_exit)(env, object);

	if (r == JNI_OK && jni_monitors.held)
		jni_monitors.held--;
	return r;
}

void st__jvm_jni_monitors_install(jvmtiEnv *jvmti)
{
	jniNativeInterface *table = NULL;

	/* (no use without the owned-monitor walk to spare: a JVM joined
	 * later, which HotSpot does not give it) */
	if (!st__jvm_can_held || st_load_acquire(&installed) ||
	    (*jvmti)->GetJNIFunctionTable(jvmti, &table) != JVMTI_ERROR_NONE || !table)
		return;
	st_store_release(&real_enter, table->MonitorEnter);
	st_store_release(&real_exit, table->MonitorExit);
	table->MonitorEnter = monitor_enter;
	table->MonitorExit = monitor_exit;
	if ((*jvmti)->SetJNIFunctionTable(jvmti, table) == JVMTI_ERROR_NONE) {
		st_store_release(&installed, 1);
		jni_monitors.counted = true;
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)table);
}

void st__jvm_jni_monitors_thread_start(void)
{
	jni_monitors.counted = st_load_acquire(&installed) != 0;
	jni_monitors.held = 0;
}

/* (and the table still ours: another agent may set one it read before) */
bool st__jvm_jni_monitors_none(JNIEnv *jni)
{
	return jni_monitors.counted && jni_monitors.held == 0 && (*jni)->MonitorEnter == monitor_enter &&
	       (*jni)->MonitorExit == monitor_exit;
}
