/*
 * libshimtrace-java.so: the native methods of org.shimtrace.Native, the
 * Java tracepoints' way into libshimtrace (java/org/shimtrace/).
 *
 * Java keeps a tracepoint as the address of its descriptor (a long) and
 * reads its enable mask itself, through a direct ByteBuffer over the
 * provider's state page (Native.page): checking a tracepoint makes no JNI
 * call. Firing one that is on encodes the payload in Java, into a direct
 * buffer of the thread, and makes one call, write(), with primitives only.
 *
 * Nothing here throws: a tracepoint that cannot be made is 0, and Java
 * keeps it off. The Java side checks names and types before it calls.
 */
#include <jni.h>
#include <stdbool.h>
#include <stdint.h>

#include "java/include/org_shimtrace_Native.h"
#include "java/native/dynamic.h"

/* Tracepoint.Kind's ordinals, the Java types of fields. */
enum { KIND_INT, KIND_LONG, KIND_DOUBLE, KIND_STRING, KIND_COUNT };

static const uint32_t type_of_kind[KIND_COUNT] = {
	[KIND_INT] = ST_TYPE_S32,
	[KIND_LONG] = ST_TYPE_S64,
	[KIND_DOUBLE] = ST_TYPE_DOUBLE,
	[KIND_STRING] = ST_TYPE_STRING,
};

static const struct st_tracepoint *tracepoint(jlong handle)
{
	return (const struct st_tracepoint *)(uintptr_t)handle;
}

/* Whether fields of this kind can be recorded by the libshimtrace this
 * was built with. */
static bool kind_ok(jint kind)
{
	return kind >= 0 && kind < KIND_COUNT && type_of_kind[kind] <= ST_TYPE_LAST;
}

JNIEXPORT jboolean JNICALL Java_org_shimtrace_Native_canRecord(JNIEnv *env, jclass cls, jint kind)
{
	(void)env;
	(void)cls;
	return kind_ok(kind);
}

/* The strings of array (n of them), each kept in strs and its UTF-8 in
 * out until names_give; false, with what was taken given back, if the JVM
 * is out of memory. */
static void names_give(JNIEnv *env, jsize n, jstring *strs, const char **names)
{
	for (jsize i = 0; i < n; i++) {
		(*env)->ReleaseStringUTFChars(env, strs[i], names[i]);
		(*env)->DeleteLocalRef(env, strs[i]);
	}
}

static bool names_take(JNIEnv *env, jobjectArray array, jsize n, jstring *strs, const char **out)
{
	for (jsize i = 0; i < n; i++) {
		strs[i] = (*env)->GetObjectArrayElement(env, array, i);
		out[i] = strs[i] ? (*env)->GetStringUTFChars(env, strs[i], NULL) : NULL;
		if (!out[i]) {
			if (strs[i])
				(*env)->DeleteLocalRef(env, strs[i]);
			names_give(env, i, strs, out);
			return false;
		}
	}
	return true;
}

/*
 * Defines provider:name with the fields names[i] of kinds[i] (the caller
 * checked them) and returns its handle, or 0: it stays off.
 */
JNIEXPORT jlong JNICALL Java_org_shimtrace_Native_define(JNIEnv *env, jclass cls, jstring provider,
							 jstring name, jobjectArray fields,
							 jintArray kinds)
{
	jsize n = (*env)->GetArrayLength(env, fields);
	const char *prov = NULL, *tp_name = NULL, *names[256];
	jstring strs[256];
	uint32_t types[256];
	jint k[256];
	const struct st_tracepoint *tp = NULL;

	(void)cls;
	if (n > 255 || (*env)->GetArrayLength(env, kinds) != n)
		return 0;
	(*env)->GetIntArrayRegion(env, kinds, 0, n, k);
	for (jsize i = 0; i < n; i++) {
		if (!kind_ok(k[i]))
			return 0;
		types[i] = type_of_kind[k[i]];
	}
	prov = (*env)->GetStringUTFChars(env, provider, NULL);
	tp_name = prov ? (*env)->GetStringUTFChars(env, name, NULL) : NULL;
	if (tp_name && names_take(env, fields, n, strs, names)) {
		tp = st_dyn_define(prov, tp_name, (uint32_t)n, names, types);
		names_give(env, n, strs, names);
	}
	if (tp_name)
		(*env)->ReleaseStringUTFChars(env, name, tp_name);
	if (prov)
		(*env)->ReleaseStringUTFChars(env, provider, prov);
	/* (out of memory in the JVM: the tracepoint stays off, no throw) */
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionClear(env);
	return (jlong)(uintptr_t)tp;
}

/* The enable masks of the tracepoint's provider, one int per slot, as
 * the daemon writes them. */
JNIEXPORT jobject JNICALL Java_org_shimtrace_Native_page(JNIEnv *env, jclass cls, jlong handle)
{
	struct st_provider_state *s = tracepoint(handle)->state;
	jobject buf;

	(void)cls;
	buf = (*env)->NewDirectByteBuffer(env, s->mask, sizeof(s->mask));
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionClear(env);
	return buf;
}

JNIEXPORT jint JNICALL Java_org_shimtrace_Native_slot(JNIEnv *env, jclass cls, jlong handle)
{
	(void)env;
	(void)cls;
	return (jint)tracepoint(handle)->slot;
}

JNIEXPORT jlong JNICALL Java_org_shimtrace_Native_address(JNIEnv *env, jclass cls, jobject buf)
{
	(void)cls;
	return (jlong)(uintptr_t)(*env)->GetDirectBufferAddress(env, buf);
}

/*
 * Writes one event of the tracepoint with the len bytes at payload, for
 * the sessions that record it now (the mask is read again: Java's look
 * may be old). payload is the thread's buffer, ST_PAYLOAD_SLACK bytes
 * longer than any payload. The event's ip is 0: a Java site has no code
 * address.
 */
JNIEXPORT void JNICALL Java_org_shimtrace_Native_write(JNIEnv *env, jclass cls, jlong handle,
						       jlong payload, jint len)
{
	const struct st_tracepoint *tp = tracepoint(handle);
	uint32_t mask = __atomic_load_n(&tp->state->mask[tp->slot], __ATOMIC_RELAXED);

	(void)env;
	(void)cls;
	if (mask && len >= 0)
		st_event_write(tp, mask, st_clock_read(), NULL, (const void *)(uintptr_t)payload,
			       (uint32_t)len);
}
