/*
 * Whether a thread owns a monitor, read from its stack trace: the answer
 * that spares most contended enters JVMTI's owned-monitor walk.
 *
 * GetOwnedMonitorStackDepthInfo is the agent's dearest call: HotSpot 17
 * walks the whole stack twice (an escape barrier that deoptimizes objects
 * the compiler made local, then each frame's monitors), about 2 us a call
 * on the bench's VM against about 1 us for a short stack trace, which the
 * enter needs anyway for its site (monitors.c). A frame owns monitors
 * only when its method is synchronized, is native (JNI's MonitorEnter) or
 * has a monitorenter; what each method has is read once from its bytecode
 * and kept with its number (ids.c's facts):
 *
 *   NONE     neither: its frames own nothing;
 *   ONE(B)   not synchronized, not native, a single monitorenter, at B:
 *            its frame blocked at B owns nothing (javac's locking is
 *            structured, as HotSpot requires of the code it compiles: at
 *            its only monitorenter, a frame has entered nothing yet);
 *   MAY      anything else.
 *
 * The thread owns nothing when its top frame is NONE, or ONE at its own
 * index, every frame below it NONE, the stack trace whole, and it holds
 * no monitor entered through JNI (jnimonitors.c). Anything else, or
 * anything JVMTI refuses: it may own one, and the walk says which.
 *
 * The top frame's index is the one JVMTI gives: B, or one past it (B + 1:
 * HotSpot 17's interpreter says so of a frame blocked at B, and so did
 * every contended enter of bench/run-jvm.sh's loops). B + 1 is also where
 * a frame that has entered at B stands when the instruction after
 * contends for a lock of the JVM's own: a class's initialisation lock
 * (an int[]), a constant pool's resolution lock (an Object[]), a class
 * loader, a class's mirror. So B + 1 proves
 * nothing when the contended monitor's class is one the JVM locks (an
 * array, Class, a ClassLoader: read once per class, kept in its facts);
 * a program's own monitor of those classes takes the walk. loadClass
 * methods are MAY: HotSpot calls them holding a loader's lock or a
 * class's initialisation lock, which no frame shows.
 *
 * What it takes on trust, and would miss: a method redefined (JVMTI
 * RedefineClasses, a debugger's hot swap) after its facts were read to
 * add a synchronized block (its jmethodID stays; knowing would take
 * ClassFileLoadHook, which slows every class load); bytecode that locks
 * unstructured (not javac's; HotSpot then only interprets it); JNI code
 * that exits with MonitorExit a monitor taken in Java, which JNI forbids
 * and HotSpot lets pass (jnimonitors.c); another agent's callback that
 * enters a monitor with JNI in a program's object at B + 1.
 */
#include <string.h>

#include "core/atomic.h"
#include "jvm/bytecode.h"
#include "jvm/ids.h"
#include "jvm/jnimonitors.h"
#include "jvm/lockscan.h"
#include "jvm/monitors.h"

#define ACC_SYNCHRONIZED 0x0020
#define ACC_NATIVE 0x0100

/* A method's facts (0: not read yet). */
#define FACTS_NONE 1u
#define FACTS_MAY 2u
#define FACTS_ONE(bci) (3u | (uint32_t)(bci) << 2)
#define FACTS_IS_ONE(f) (((f) & 3u) == 3u)
#define FACTS_BCI(f) ((f) >> 2)

/* What a method's frames can own, from its modifiers, name and bytecode. */
static uint32_t facts_read(jvmtiEnv *jvmti, jmethodID method)
{
	unsigned char *code = NULL;
	uint32_t first = 0, facts = FACTS_MAY;
	jint modifiers = 0, n = 0;
	char *name = NULL;
	bool loader;
	int enters;

	if (!st__jvm_can_bytecodes ||
	    (*jvmti)->GetMethodModifiers(jvmti, method, &modifiers) != JVMTI_ERROR_NONE ||
	    (modifiers & (ACC_SYNCHRONIZED | ACC_NATIVE)) ||
	    (*jvmti)->GetMethodName(jvmti, method, &name, NULL, NULL) != JVMTI_ERROR_NONE)
		return FACTS_MAY;
	/* (HotSpot calls a class loader's loadClass holding the loader's
	 * lock, or a class's initialisation lock while it links the class:
	 * monitors of no frame) */
	loader = strcmp(name, "loadClass") == 0;
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	if (loader || (*jvmti)->GetBytecodes(jvmti, method, &n, &code) != JVMTI_ERROR_NONE)
		return FACTS_MAY;
	enters = n > 0 ? st__jvm_monitorenters(code, (uint32_t)n, &first) : -1;
	if (enters == 0)
		facts = FACTS_NONE;
	else if (enters == 1 && first <= 0xffff)
		facts = FACTS_ONE(first);
	(*jvmti)->Deallocate(jvmti, code);
	return facts;
}

/* A method's facts, read once (a table full: MAY, the walk is right). */
static uint32_t facts_of(jvmtiEnv *jvmti, jmethodID method)
{
	uint32_t *word = st__jvm_method_facts(method), facts;

	if (!word)
		return FACTS_MAY;
	facts = st_load_relaxed(word);
	if (facts == 0) {
		/* (two threads that read it at once store the same) */
		facts = facts_read(jvmti, method);
		st_store_relaxed(word, facts);
	}
	return facts;
}

/* A class's facts: what HotSpot may lock of its objects. */
#define CLASS_PROGRAMS 1u
#define CLASS_JVMS 2u

static jclass class_loader; /* java.lang.ClassLoader, a global reference */

void st__jvm_lockscan_init(JNIEnv *jni)
{
	jclass c = (*jni)->FindClass(jni, "java/lang/ClassLoader");

	if (!c) {
		(*jni)->ExceptionClear(jni);
		return;
	}
	class_loader = (jclass)(*jni)->NewGlobalRef(jni, c);
	(*jni)->DeleteLocalRef(jni, c);
}

static uint32_t class_facts_read(jvmtiEnv *jvmti, JNIEnv *jni, jobject object)
{
	jclass klass = (*jni)->GetObjectClass(jni, object);
	uint32_t facts = CLASS_JVMS;
	char *sig = NULL;

	if (!klass)
		return CLASS_JVMS;
	if (class_loader && (*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) == JVMTI_ERROR_NONE &&
	    sig[0] != '[' && strcmp(sig, "Ljava/lang/Class;") != 0 &&
	    !(*jni)->IsAssignableFrom(jni, klass, class_loader))
		facts = CLASS_PROGRAMS;
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	(*jni)->DeleteLocalRef(jni, klass);
	return facts;
}

bool st__jvm_jvm_locks(jvmtiEnv *jvmti, JNIEnv *jni, jobject object, uint32_t *facts)
{
	uint32_t f = facts ? st_load_relaxed(facts) : 0;

	if (f == 0) {
		f = class_facts_read(jvmti, jni, object);
		if (facts)
			st_store_relaxed(facts, f);
	}
	return f != CLASS_PROGRAMS;
}

/* The thread's last answer of the code, for a MAY method: a thread that
 * blocks again is most often at the same place, and GetBytecodes copies
 * the method's whole code. */
static __thread __attribute__((tls_model("global-dynamic"))) struct {
	jmethodID method;
	jlocation loc, at;
} last_enter;

jlocation st__jvm_enter_location(jvmtiEnv *jvmti, jmethodID method, jlocation loc)
{
	unsigned char *code = NULL;
	uint32_t facts;
	jlocation at = loc;
	jint n = 0;

	if (loc <= 0 || loc > 0xffff || !st__jvm_can_bytecodes)
		return loc;
	facts = facts_of(jvmti, method);
	if (facts == FACTS_NONE)
		return loc;
	if (FACTS_IS_ONE(facts))
		return loc == (jlocation)FACTS_BCI(facts) + 1 ? loc - 1 : loc;
	if (last_enter.method == method && last_enter.loc == loc)
		return last_enter.at;
	if ((*jvmti)->GetBytecodes(jvmti, method, &n, &code) != JVMTI_ERROR_NONE)
		return loc;
	if (n > 0)
		at = st__jvm_monitorenter_at(code, (uint32_t)n, (uint32_t)loc);
	(*jvmti)->Deallocate(jvmti, code);
	last_enter.method = method;
	last_enter.loc = loc;
	last_enter.at = at;
	return at;
}

bool st__jvm_owns_nothing(jvmtiEnv *jvmti, JNIEnv *jni, const jvmtiFrameInfo *frames, jint n,
			  jlocation top, bool jvm_lock)
{
	uint32_t facts;
	jlocation b;

	if (n <= 0 || !st__jvm_jni_monitors_none(jni))
		return false;
	facts = facts_of(jvmti, frames[0].method);
	b = FACTS_IS_ONE(facts) ? (jlocation)FACTS_BCI(facts) : -2;
	if (facts != FACTS_NONE && !(top == b || (top == b + 1 && !jvm_lock)))
		return false;
	for (jint i = 1; i < n; i++)
		if (facts_of(jvmti, frames[i].method) != FACTS_NONE)
			return false;
	return true;
}
