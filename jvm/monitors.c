/*
 * Java monitors, as JVMTI tells them: a thread finds a monitor owned and
 * is about to block (MonitorContendedEnter), got it (...Entered), calls
 * Object.wait (MonitorWait) and returns from it (MonitorWaited).
 *
 * Each event names the monitor (its tag), the monitor object's class and
 * the waiting thread's top Java frame as the site (ST_JVM_SITE: for a
 * synchronized method, the method itself). Before a contended_enter, one
 * monitor_held per monitor the thread owns, at the frame that took it
 * (where that frame is now: JVMTI does not say where it took it): the
 * lock order, as the pthread family's waits give it for mutexes.
 *
 * These callbacks run only when a thread is about to block or has just
 * waited, in that thread; each returns at once when no session records
 * what it would write. The times between the pairs are kept per thread
 * (global-dynamic TLS: this library is loaded by the JVM with dlopen,
 * where static TLS may have no room left).
 */
#include <string.h>

#include "jvm/agent.h"
#include "jvm/ids.h"
#include "jvm/lockscan.h"
#include "jvm/monitors.h"
#include "jvm/statedump.h"

bool st__jvm_can_held, st__jvm_can_bytecodes;

/* When this thread's contended enter and wait began (st_clock_read; 0:
 * not seen, the tracing began in between). */
static __thread __attribute__((tls_model("global-dynamic"))) uint64_t enter_ts, wait_ts;

/* The thread every JVMTI call here asks about: the current one (JVMTI
 * sends the monitor events in the thread itself, and the native hook runs
 * in the thread that waits), as NULL, which spares each call the lookup
 * of a jthread in the JVM's list of threads (a scan of it, in HotSpot 17). */
#define CURRENT NULL

/* A Java site: the method and bytecode index of a frame, after the
 * method's statedump went to the sessions of mask. */
struct site {
	uint32_t method;
	int32_t bci;
};

/* The site of a frame at method and location (its statedump first). */
static struct site site_of(jvmtiEnv *jvmti, jmethodID method, jlocation loc, uint32_t mask)
{
	struct site s = { st__jvm_method(jvmti, method, mask), -1 };

	s.bci = loc >= 0 && loc <= 0xffff ? (int32_t)loc : -1;
	return s;
}

/* The site of the frame at depth (enter: the frame blocks at a monitor
 * entry), from the thread's stack trace frames[0..n) when it is there
 * (its top frame's location already that of the entry). */
static struct site site_at(jvmtiEnv *jvmti, jint depth, bool enter, uint32_t mask,
			   const jvmtiFrameInfo *frames, jint n)
{
	jmethodID method = NULL;
	jlocation loc = -1;

	if (depth < 0)
		return (struct site){ 0, -1 };
	if (depth < n)
		return site_of(jvmti, frames[depth].method, frames[depth].location, mask);
	if ((*jvmti)->GetFrameLocation(jvmti, CURRENT, depth, &method, &loc) != JVMTI_ERROR_NONE)
		return (struct site){ 0, -1 };
	return site_of(jvmti, method, enter ? st__jvm_enter_location(jvmti, method, loc) : loc, mask);
}

#define SITE(s) ST_JVM_SITE((s).method, (s).bci)

/* Object's wait methods (wait(), wait(long), wait(long, int), and wait0
 * where a JDK has it), found at VMInit: the site of a wait is the first
 * frame below them, where the program called wait. */
#define MAX_WAITS 8
static jmethodID waits[MAX_WAITS];
static uint32_t nwaits;

void st__jvm_monitors_init(jvmtiEnv *jvmti, JNIEnv *jni)
{
	jclass object = (*jni)->FindClass(jni, "java/lang/Object");
	jmethodID *methods = NULL;
	jint n = 0;

	if (!object)
		return;
	if ((*jvmti)->GetClassMethods(jvmti, object, &n, &methods) == JVMTI_ERROR_NONE) {
		for (jint i = 0; i < n; i++) {
			char *name = NULL;

			if ((*jvmti)->GetMethodName(jvmti, methods[i], &name, NULL, NULL) !=
			    JVMTI_ERROR_NONE)
				continue;
			if ((strcmp(name, "wait") == 0 || strcmp(name, "wait0") == 0) &&
			    nwaits < MAX_WAITS)
				waits[nwaits++] = methods[i];
			(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
		}
		(*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
	}
	(*jni)->DeleteLocalRef(jni, object);
}

static bool is_wait(jmethodID m)
{
	for (uint32_t i = 0; i < nwaits; i++)
		if (waits[i] == m)
			return true;
	return false;
}

/* The depth of the frame that called Object.wait (0 if unknown), from
 * the thread's top frames, read into frames[0..*n) (WAIT_FRAMES). */
#define WAIT_FRAMES 4

static jint waiter_depth(jvmtiEnv *jvmti, jvmtiFrameInfo *frames, jint *n)
{
	jint d = 0;

	if ((*jvmti)->GetStackTrace(jvmti, CURRENT, 0, WAIT_FRAMES, frames, n) != JVMTI_ERROR_NONE)
		*n = 0;
	while (d < *n && is_wait(frames[d].method))
		d++;
	return d < *n ? d : 0;
}

/* One monitor_held per monitor the thread owns. */
void st__jvm_held(jvmtiEnv *jvmti, JNIEnv *jni, uint32_t mask, const jvmtiFrameInfo *frames,
		  jint n)
{
	jvmtiMonitorStackDepthInfo *info = NULL;
	jint owned = 0;

	if (!st__jvm_can_held ||
	    (*jvmti)->GetOwnedMonitorStackDepthInfo(jvmti, CURRENT, &owned, &info) !=
		    JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < owned; i++) {
		uint64_t monitor = st__jvm_tag(jvmti, info[i].monitor);
		/* (depth -1: entered with JNI MonitorEnter, no frame; 0: the
		 * frame that now blocks at a monitorenter) */
		struct site s = site_at(jvmti, info[i].stack_depth,
					info[i].stack_depth == 0, mask, frames, n);
		uint32_t class_no = st__jvm_class_of(jvmti, jni, info[i].monitor, mask);

		if (monitor)
			st_jvm_emit(monitor_held, mask, SITE(s), monitor, class_no, s.method, s.bci);
		(*jni)->DeleteLocalRef(jni, info[i].monitor);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)info);
}

/* What a monitor event says of its monitor: its number (0: JVMTI gave
 * none, nothing is told), its class and the waiting thread's site (the
 * frame at a monitorenter, or the one that called Object.wait). */
struct about {
	uint64_t monitor;
	uint32_t class_no;
	bool jvm_lock; /* a class HotSpot may lock itself (lockscan.c) */
	struct site site;
};

/*
 * The thread's last monitor, its number and its class: a thread that
 * blocks again most often blocks on the same monitor, and the lookups
 * take the JVM's tag map lock (GetTag) and make local references. Known
 * again with IsSameObject on a weak reference (the cache keeps nothing
 * alive: a collected object is never the same); the class's statedump
 * is checked again for the sessions of the event. Freed at the thread's
 * end (st__jvm_monitors_thread_end).
 */
static __thread __attribute__((tls_model("global-dynamic"))) struct {
	jweak object;
	uint64_t monitor;
	struct st_jvm_id class_id;
	bool jvm_lock;
} last_monitor;

static void monitor_of(jvmtiEnv *jvmti, JNIEnv *jni, jobject object, uint32_t mask, struct about *a)
{
	struct st_jvm_id id;

	if (last_monitor.object && last_monitor.class_id.dumped &&
	    (*jni)->IsSameObject(jni, last_monitor.object, object) &&
	    !st__jvm_ids_needed(last_monitor.class_id, mask)) {
		a->monitor = last_monitor.monitor;
		a->class_no = last_monitor.class_id.number;
		a->jvm_lock = last_monitor.jvm_lock;
		return;
	}
	a->monitor = st__jvm_tag(jvmti, object);
	id = st__jvm_class_of_told(jvmti, jni, object, mask);
	a->class_no = id.number;
	a->jvm_lock = st__jvm_jvm_locks(jvmti, jni, object, id.facts);
	if (!a->monitor || !id.number || !id.dumped)
		return;
	if (last_monitor.object)
		(*jni)->DeleteWeakGlobalRef(jni, last_monitor.object);
	last_monitor.object = (*jni)->NewWeakGlobalRef(jni, object);
	last_monitor.monitor = a->monitor;
	last_monitor.class_id = id;
	last_monitor.jvm_lock = a->jvm_lock;
}

void st__jvm_monitors_thread_end(JNIEnv *jni)
{
	if (last_monitor.object)
		(*jni)->DeleteWeakGlobalRef(jni, last_monitor.object);
	last_monitor.object = NULL;
}

static bool about(jvmtiEnv *jvmti, JNIEnv *jni, jobject object, bool waiting, uint32_t mask,
		  struct about *a)
{
	jvmtiFrameInfo frames[WAIT_FRAMES];
	jint n = 0, depth = waiting ? waiter_depth(jvmti, frames, &n) : 0;

	monitor_of(jvmti, jni, object, mask, a);
	a->site = site_at(jvmti, depth, !waiting, mask, frames, n);
	return a->monitor != 0;
}

#define ABOUT(a) SITE((a).site), (a).monitor, (a).class_no, (a).site.method, (a).site.bci

/* What this thread's contended_enter found of its monitor, for its
 * contended_entered: JVMTI pairs the two in the thread, and the entered
 * comes once the thread holds the monitor, so it must take no longer
 * than a clock read and a write (a tracer that lengthens the holds
 * changes the contention it measures). */
static __thread __attribute__((tls_model("global-dynamic"))) struct about pending;

/* The frames of a stack trace a contended enter reads: deeper stacks
 * take the owned-monitor walk. */
#define ENTER_FRAMES 128

void JNICALL st__jvm_on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
	uint32_t m = st_jvm_mask(monitor_contended_enter), h = st_jvm_mask(monitor_held);
	uint32_t e = st_jvm_mask(monitor_contended_entered);
	jvmtiFrameInfo frames[ENTER_FRAMES];
	jlocation top = -1, raw = -1;
	jint n = 0;

	(void)thread; /* (CURRENT) */
	enter_ts = 0;
	if (!(m | h | e) || st__jvm_dead())
		return;
	/* (the monitor first, with the statedump for the sessions of both
	 * events, the entered's names what this one found: its class tells
	 * the proof below what the JVM may lock) */
	monitor_of(jvmti, jni, object, m | e, &pending);
	/* (the lock order: one stack trace, the site and most often the
	 * proof that the thread owns nothing, lockscan.c; without it, only
	 * the top frame, which costs a third less) */
	if (h && st__jvm_can_held) {
		if ((*jvmti)->GetStackTrace(jvmti, CURRENT, 0, ENTER_FRAMES, frames, &n) !=
		    JVMTI_ERROR_NONE)
			n = 0;
	} else if ((*jvmti)->GetFrameLocation(jvmti, CURRENT, 0, &frames[0].method,
					      &frames[0].location) == JVMTI_ERROR_NONE) {
		n = 1;
	}
	if (n > 0) {
		raw = frames[0].location;
		top = frames[0].location = st__jvm_enter_location(jvmti, frames[0].method, raw);
	}
	if (h && st__jvm_can_held &&
	    !(n < ENTER_FRAMES &&
	      st__jvm_owns_nothing(jvmti, jni, frames, n, raw, pending.jvm_lock)))
		st__jvm_held(jvmti, jni, h, frames, n);
	if (!(m | e))
		return;
	pending.site = n > 0 ? site_of(jvmti, frames[0].method, top, m | e) : (struct site){ 0, -1 };
	if (pending.monitor) {
		if (m)
			st_jvm_emit(monitor_contended_enter, m, ABOUT(pending));
		/* (last: the wait is from here) */
		enter_ts = st_clock_read();
	}
}

/* The time since *since (nanoseconds; 0 when unknown), which is reset. */
static uint64_t elapsed(uint64_t *since)
{
	uint64_t t = *since;

	*since = 0;
	return t ? st_clock_delta_ns(st_clock_read() - t) : 0;
}

void JNICALL st__jvm_on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
					  jobject object)
{
	uint32_t m = st_jvm_mask(monitor_contended_entered);
	bool paired = enter_ts != 0;
	uint64_t wait_ns = elapsed(&enter_ts);
	struct about a;

	(void)thread; /* (CURRENT) */
	if (!m || st__jvm_dead())
		return;
	/* (no enter seen: the tracing began while the thread waited; the
	 * monitor is told at the cost of the lookups, once) */
	if (paired)
		st_jvm_emit(monitor_contended_entered, m, ABOUT(pending), wait_ns);
	else if (about(jvmti, jni, object, false, m, &a))
		st_jvm_emit(monitor_contended_entered, m, ABOUT(a), wait_ns);
}

/* The same for Object.wait: the waited comes once the thread holds the
 * monitor again. */
static __thread __attribute__((tls_model("global-dynamic"))) struct about pending_wait;

void JNICALL st__jvm_on_wait(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
			     jlong timeout)
{
	uint32_t m = st_jvm_mask(monitor_wait), w = st_jvm_mask(monitor_waited);

	(void)thread; /* (CURRENT) */
	wait_ts = 0;
	if (!(m | w) || st__jvm_dead())
		return;
	if (about(jvmti, jni, object, true, m | w, &pending_wait)) {
		if (m)
			st_jvm_emit(monitor_wait, m, ABOUT(pending_wait), (int64_t)timeout);
		wait_ts = st_clock_read();
	}
}

/* (a waited with no wait before it: a wait inside the JVM, a class's
 * initialisation that another thread runs; wait_ns 0, unknown) */
void JNICALL st__jvm_on_waited(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
			       jboolean timed_out)
{
	uint32_t m = st_jvm_mask(monitor_waited);
	bool paired = wait_ts != 0;
	uint64_t wait_ns = elapsed(&wait_ts);
	struct about a;

	(void)thread; /* (CURRENT) */
	if (!m || st__jvm_dead())
		return;
	if (paired)
		st_jvm_emit(monitor_waited, m, ABOUT(pending_wait), (uint8_t)(timed_out != 0), wait_ns);
	else if (about(jvmti, jni, object, true, m, &a))
		st_jvm_emit(monitor_waited, m, ABOUT(a), (uint8_t)(timed_out != 0), wait_ns);
}
