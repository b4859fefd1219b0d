/*
 * The statedump of classes and methods: jvm:class (its name in Java's
 * form), jvm:method (its class, name, signature and source file) and one
 * jvm:method_line per entry of its line table, for each session that is
 * about to see the class's or method's number and has not had them (the
 * reader maps a method's sites to File.java:LINE from these, once per
 * method). ids.c remembers who had what.
 *
 * A JVMTI error (a method whose class was unloaded meanwhile) leaves the
 * number untold: the event then names nothing rather than something
 * wrong, and the next event tries again.
 */
#include <string.h>

#include "jvm/agent.h"
#include "jvm/ids.h"
#include "jvm/statedump.h"

void st__jvm_class_name(const char *sig, char *out, size_t n)
{
	static const char prim[] = "BbyteCcharDdoubleFfloatIintJlongSshortZbooleanVvoid";
	size_t dims = 0, len = 0;
	const char *elem = "?";
	size_t elen = 1;

	if (n == 0)
		return;
	while (sig[dims] == '[')
		dims++;
	sig += dims;
	if (sig[0] == 'L') {
		elem = sig + 1;
		elen = strcspn(elem, ";");
	} else if (sig[0] && sig[1] == '\0') {
		/* a primitive: its letter in prim, its name up to the next capital */
		const char *p = strchr(prim, sig[0]);

		if (p) {
			elem = p + 1;
			elen = strcspn(elem, "BCDFIJSZV");
		}
	}
	for (size_t i = 0; i < elen && len + 1 < n; i++)
		out[len++] = elem[i] == '/' ? '.' : elem[i];
	for (size_t i = 0; i < dims && len + 2 < n; i++) {
		out[len++] = '[';
		out[len++] = ']';
	}
	out[len] = '\0';
}

struct st_jvm_id st__jvm_class_told(jvmtiEnv *jvmti, jclass klass, uint32_t mask)
{
	struct st_jvm_id id = st__jvm_class_id(jvmti, klass);
	uint32_t need = st__jvm_ids_needed(id, mask), m = st_jvm_mask(class) & need;
	char *sig = NULL, name[ST_STRING_MAX];

	if (m) {
		if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE)
			return (struct st_jvm_id){ 0, NULL, NULL };
		st__jvm_class_name(sig, name, sizeof(name));
		(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
		st_jvm_emit(class, m, 0, id.number, name);
	}
	st__jvm_ids_dumped(id, need);
	return id;
}

uint32_t st__jvm_class(jvmtiEnv *jvmti, jclass klass, uint32_t mask)
{
	return st__jvm_class_told(jvmti, klass, mask).number;
}

struct st_jvm_id st__jvm_class_of_told(jvmtiEnv *jvmti, JNIEnv *jni, jobject object, uint32_t mask)
{
	jclass klass = object ? (*jni)->GetObjectClass(jni, object) : NULL;
	struct st_jvm_id id = klass ? st__jvm_class_told(jvmti, klass, mask)
				    : (struct st_jvm_id){ 0, NULL, NULL };

	if (klass)
		(*jni)->DeleteLocalRef(jni, klass);
	return id;
}

uint32_t st__jvm_class_of(jvmtiEnv *jvmti, JNIEnv *jni, jobject object, uint32_t mask)
{
	return st__jvm_class_of_told(jvmti, jni, object, mask).number;
}

/* The method's line table as jvm:method_line events. */
static void lines(jvmtiEnv *jvmti, jmethodID method, uint32_t number, uint32_t mask)
{
	jvmtiLineNumberEntry *t = NULL;
	jint n = 0;

	/* (none for a native or abstract method, or a class without them) */
	if (!mask || (*jvmti)->GetLineNumberTable(jvmti, method, &n, &t) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n; i++)
		st_jvm_emit(method_line, mask, 0, number, (uint32_t)t[i].start_location,
			    (uint32_t)t[i].line_number);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)t);
}

/* jvm:method and its lines, with its class's jvm:class: false when JVMTI
 * no longer knows the method. */
static bool describe(jvmtiEnv *jvmti, jmethodID method, uint32_t number, uint32_t need)
{
	uint32_t m = st_jvm_mask(method) & need, l = st_jvm_mask(method_line) & need, class_no;
	char *name = NULL, *sig = NULL, *file = NULL;
	jclass klass = NULL;
	bool ok = false;

	if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetMethodName(jvmti, method, &name, &sig, NULL) != JVMTI_ERROR_NONE)
		goto out;
	class_no = st__jvm_class(jvmti, klass, need);
	if (m) {
		/* (ABSENT_INFORMATION: compiled without -g:source) */
		if ((*jvmti)->GetSourceFileName(jvmti, klass, &file) != JVMTI_ERROR_NONE)
			file = NULL;
		st_jvm_emit(method, m, 0, number, class_no, name, sig, file ? file : "");
	}
	lines(jvmti, method, number, l);
	ok = true;
out:
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)file);
	return ok;
}

uint32_t st__jvm_method(jvmtiEnv *jvmti, jmethodID method, uint32_t mask)
{
	struct st_jvm_id id = st__jvm_method_id(method);
	uint32_t need = st__jvm_ids_needed(id, mask);

	if (need && !describe(jvmti, method, id.number, need))
		return 0;
	st__jvm_ids_dumped(id, need);
	return id.number;
}
