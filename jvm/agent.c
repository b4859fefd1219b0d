/*
 * libshimtrace-jvm.so, the JVMTI agent: a Java program's monitors and
 * threads as events of the jvm provider (jvm/jvm-tp.h), in the same
 * trace as the native calls the wrapper families record. `record --wrap
 * jvm` loads it with -agentpath in JAVA_TOOL_OPTIONS, with libshimtrace
 * preloaded as for every family; it links libshimtrace, so its provider
 * registers when the JVM opens it, and the daemon enables it as any other.
 *
 * Cost when no session records (issue 27): the capabilities are taken and
 * the events switched on at load, once, because nothing runs in the
 * process when a session starts (the daemon writes the mask page), so
 * there is no moment to switch them on lazily. Each callback reads its
 * masks first and returns. The monitor events come only when a thread
 * finds a monitor owned and is about to block (after HotSpot's spinning),
 * or waits; the thread events once per thread. No capability taken
 * slows compiled code: in HotSpot 17 none of them turns off escape
 * analysis or lock elision (the "elided" row). Measured with
 * `bench/run-jvm-cost.sh --reps 5` (ns per synchronized block, best of 5 runs
 * of the median of 5 rounds of 20M; a 2-CPU VM at load 8-10):
 *
 *                contended (4 threads)  uncontended  elided
 *     no agent          9.60               21.63      0.28
 *     loaded           10.49               23.95      0.27
 *     recording         9.81               22.95      0.28
 *
 * within the machine's noise (the recording row, which does more, is
 * faster than the loaded one); a short program's wall time is the same.
 *
 * Capabilities: can_generate_monitor_events, can_tag_objects,
 * can_get_line_numbers, can_get_source_file_name and can_get_bytecodes
 * (a contended enter's exact bytecode index, monitors.c; which methods
 * can own monitors, lockscan.c) are HotSpot's
 * "always" capabilities (OnLoad or attach); can_get_owned_monitor_stack_
 * depth_info only at OnLoad: a JVM joined later gets no monitor_held.
 * Without monitor events or tags the agent stays loaded and silent, after
 * one line on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "core/atomic.h"
#include "jvm/agent.h"
#include "jvm/ids.h"
#include "jvm/jnimonitors.h"
#include "jvm/lockscan.h"
#include "jvm/monitors.h"
#include "jvm/nativehook.h"

ST_PROVIDER_DEFINE(jvm, ST_JVM_TRACEPOINTS)

static int dead; /* VMDeath seen */

bool st__jvm_dead(void)
{
	return st_load_acquire(&dead) != 0;
}

static void say(const char *what)
{
	fprintf(stderr, "shimtrace: the JVM agent %s: Java monitors are not traced\n", what);
}

/* The Java thread's name and daemon flag (JVMTI allocates the name). */
static void thread_event(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, bool start)
{
	uint32_t m = start ? st_jvm_mask(thread_start) : st_jvm_mask(thread_end);
	jvmtiThreadInfo info;

	if (!m || st__jvm_dead())
		return;
	memset(&info, 0, sizeof(info));
	if ((*jvmti)->GetThreadInfo(jvmti, thread, &info) != JVMTI_ERROR_NONE)
		return;
	if (start)
		st_jvm_emit(thread_start, m, 0, info.name ? info.name : "", (uint8_t)info.is_daemon);
	else
		st_jvm_emit(thread_end, m, 0, info.name ? info.name : "");
	(*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
	if (info.thread_group)
		(*jni)->DeleteLocalRef(jni, info.thread_group);
	if (info.context_class_loader)
		(*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	st__jvm_jni_monitors_thread_start();
	thread_event(jvmti, jni, thread, true);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	thread_event(jvmti, jni, thread, false);
	st__jvm_monitors_thread_end(jni);
}

/* What needs the live phase: VMInit, or the attach to a live JVM
 * (where HotSpot grants no owned-monitor walk: the JNI wrappers and the
 * native hook, which only spare or take it, say no). */
static void live_init(jvmtiEnv *jvmti, JNIEnv *jni)
{
	st__jvm_jni_monitors_install(jvmti);
	st__jvm_lockscan_init(jni);
	st__jvm_monitors_init(jvmti, jni);
	st__jvm_nativehook_init(jvmti, jni);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)thread;
	live_init(jvmti, jni);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jvmti;
	(void)jni;
	st__jvm_nativehook_fini();
	st_store_release(&dead, 1);
}

/* The capabilities the agent uses that this JVM grants now. false when
 * the ones it cannot do without are missing. */
static bool capabilities(jvmtiEnv *jvmti)
{
	jvmtiCapabilities can, want;

	memset(&can, 0, sizeof(can));
	if ((*jvmti)->GetPotentialCapabilities(jvmti, &can) != JVMTI_ERROR_NONE)
		return false;
	if (!can.can_generate_monitor_events || !can.can_tag_objects) {
		say("was not granted monitor events or object tags");
		return false;
	}
	memset(&want, 0, sizeof(want));
	want.can_generate_monitor_events = 1;
	want.can_tag_objects = 1;
	want.can_get_line_numbers = can.can_get_line_numbers;
	want.can_get_source_file_name = can.can_get_source_file_name;
	want.can_get_bytecodes = can.can_get_bytecodes;
	want.can_get_owned_monitor_stack_depth_info = can.can_get_owned_monitor_stack_depth_info;
	if ((*jvmti)->AddCapabilities(jvmti, &want) != JVMTI_ERROR_NONE) {
		say("could not add its capabilities");
		return false;
	}
	st__jvm_can_held = want.can_get_owned_monitor_stack_depth_info;
	st__jvm_can_bytecodes = want.can_get_bytecodes;
	return true;
}

static const jvmtiEvent events[] = {
	JVMTI_EVENT_VM_INIT,
	JVMTI_EVENT_VM_DEATH,
	JVMTI_EVENT_THREAD_START,
	JVMTI_EVENT_THREAD_END,
	JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
	JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
	JVMTI_EVENT_MONITOR_WAIT,
	JVMTI_EVENT_MONITOR_WAITED,
};

/* The environment, capabilities and callbacks: JNI_OK whatever happens
 * (an agent that fails its load stops the JVM; ours stays silent). */
static jint start(JavaVM *vm, bool live)
{
	jvmtiEventCallbacks cb;
	jvmtiEnv *jvmti = NULL;
	JNIEnv *jni = NULL;

	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jvmti) {
		say("found no JVMTI 1.2");
		return JNI_OK;
	}
	if (!capabilities(jvmti))
		return JNI_OK;
	if (st__jvm_ids_init(jvmti) < 0) {
		say("could not map its tables");
		return JNI_OK;
	}
	memset(&cb, 0, sizeof(cb));
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.ThreadStart = on_thread_start;
	cb.ThreadEnd = on_thread_end;
	cb.MonitorContendedEnter = st__jvm_on_contended_enter;
	cb.MonitorContendedEntered = st__jvm_on_contended_entered;
	cb.MonitorWait = st__jvm_on_wait;
	cb.MonitorWaited = st__jvm_on_waited;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof(cb)) != JVMTI_ERROR_NONE) {
		say("could not set its callbacks");
		return JNI_OK;
	}
	/* (attached to a live JVM: VMInit is past, Object is there now) */
	if (live && (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) == JNI_OK && jni)
		live_init(jvmti, jni);
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL);
	return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)options;
	(void)reserved;
	return start(vm, false);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)options;
	(void)reserved;
	return start(vm, true);
}
