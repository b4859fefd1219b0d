/*
 * Numbers for monitors, classes and methods, and the sessions each
 * class's and method's statedump went to.
 *
 * Monitors are numbered by the tag the agent puts on the object (JVMTI
 * SetTag): the JVM keeps it with the object across collections, and a
 * number never names two objects. A class is numbered through its Class
 * object's tag, a method by its jmethodID: each is a key in a table of
 * fixed size, mmap'ed at load (pages become resident as they are used),
 * and its number is its slot's index + 1.
 *
 * A table is lock-free, open addressing with linear probing; a slot
 * only ever goes from empty to one key:
 *
 *     key 0 (empty) --CAS--> key K (forever)      dumped: atomic OR / AND
 *
 * A reader that finds K at a slot has K's number; one that finds 0 claims
 * it with a CAS, and on losing reads the winner's key there. No probe
 * goes further than MAX_PROBE slots: past that, the table counts as
 * full for that key.
 *
 * dumped holds the session bits whose session got the statedump. A slot
 * (a bit) taken by another session (st_session_generation changed) is
 * cleared in every entry before the agent trusts that bit again: the
 * clearing thread stores the new generation only once it has walked the
 * tables, so a thread that sees the new generation sees the bits
 * cleared; two threads clearing at once do the same thing twice.
 *
 * Tags: JVMTI can get and set a tag but not compare-and-set it, so the
 * first tag of an object is given under a raw monitor (two threads
 * tagging one object at once would otherwise give it two numbers, and one
 * thread's events the number that lost). Held only around GetTag and
 * SetTag, which call nothing back; an object already tagged takes no lock.
 */
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

#include "core/atomic.h"
#include "jvm/ids.h"
#include "jvm/jvm-tp.h"
#include "shimtrace/tracepoint.h"

#define CLASS_SLOTS (1u << 14)
#define METHOD_SLOTS (1u << 16)
#define MAX_PROBE 256u
#define MAX_SESSIONS 32u

struct slot {
	uint64_t key;	 /* 0: empty */
	uint32_t dumped; /* session bits */
	uint32_t facts;	 /* st_jvm_id's facts */
};

struct table {
	struct slot *slots;
	uint32_t n; /* a power of two */
};

static struct table classes, methods;
static jrawMonitorID tag_lock;
static uint64_t next_tag = 1;	   /* under tag_lock */
static uint32_t next_overflow;	   /* numbers past both tables' */
static uint32_t known_gen[MAX_SESSIONS];

static int table_init(struct table *t, uint32_t n)
{
	void *p = mmap(NULL, (size_t)n * sizeof(struct slot), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	t->slots = p;
	t->n = n;
	return 0;
}

int st__jvm_ids_init(jvmtiEnv *jvmti)
{
	if (table_init(&classes, CLASS_SLOTS) < 0 || table_init(&methods, METHOD_SLOTS) < 0)
		return -1;
	next_overflow = METHOD_SLOTS + 1;
	return (*jvmti)->CreateRawMonitor(jvmti, "shimtrace tags", &tag_lock) == JVMTI_ERROR_NONE ? 0
												    : -1;
}

/* (a 64-bit mix: jmethodIDs are aligned pointers, tags consecutive) */
static uint32_t hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k;
}

/* key's slot, claimed if it had none; NULL when the table is full for it. */
static struct slot *table_slot(struct table *t, uint64_t key)
{
	uint32_t h = hash(key);

	for (uint32_t i = 0; i < MAX_PROBE; i++) {
		struct slot *s = &t->slots[(h + i) & (t->n - 1)];
		uint64_t k = st_load_acquire(&s->key);

		if (k == 0 && st_cas_seq_cst(&s->key, &k, key))
			k = key;
		if (k == key)
			return s;
	}
	return NULL;
}

static struct st_jvm_id table_id(struct table *t, uint64_t key)
{
	struct slot *s = table_slot(t, key);
	uint32_t number;

	if (s)
		return (struct st_jvm_id){ (uint32_t)(s - t->slots) + 1, &s->dumped, &s->facts };
	/* (a number past ST_JVM_METHOD_MAX would not fit in a site: 0,
	 * untold, once they run out; the counter is not moved then, so
	 * that it never wraps round to numbers in use) */
	if (st_load_relaxed(&next_overflow) > ST_JVM_METHOD_MAX)
		return (struct st_jvm_id){ 0, NULL, NULL };
	number = st_fetch_add_relaxed(&next_overflow, 1);
	return (struct st_jvm_id){ number <= ST_JVM_METHOD_MAX ? number : 0, NULL, NULL };
}

uint64_t st__jvm_tag(jvmtiEnv *jvmti, jobject object)
{
	jlong tag = 0;

	if (!object || (*jvmti)->GetTag(jvmti, object, &tag) != JVMTI_ERROR_NONE)
		return 0;
	if (tag != 0)
		return (uint64_t)tag;
	if ((*jvmti)->RawMonitorEnter(jvmti, tag_lock) != JVMTI_ERROR_NONE)
		return 0;
	if ((*jvmti)->GetTag(jvmti, object, &tag) == JVMTI_ERROR_NONE && tag == 0 &&
	    (*jvmti)->SetTag(jvmti, object, (jlong)next_tag) == JVMTI_ERROR_NONE)
		tag = (jlong)next_tag++;
	(*jvmti)->RawMonitorExit(jvmti, tag_lock);
	return (uint64_t)tag;
}

struct st_jvm_id st__jvm_class_id(jvmtiEnv *jvmti, jclass klass)
{
	uint64_t tag = st__jvm_tag(jvmti, klass);

	return tag ? table_id(&classes, tag) : (struct st_jvm_id){ 0, NULL, NULL };
}

struct st_jvm_id st__jvm_method_id(jmethodID method)
{
	return method ? table_id(&methods, (uint64_t)(uintptr_t)method) : (struct st_jvm_id){ 0, NULL, NULL };
}

uint32_t *st__jvm_method_facts(jmethodID method)
{
	struct slot *s = method ? table_slot(&methods, (uint64_t)(uintptr_t)method) : NULL;

	return s ? &s->facts : NULL;
}

static void forget(const struct table *t, uint32_t bit)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (st_load_relaxed(&t->slots[i].key))
			__atomic_and_fetch(&t->slots[i].dumped, ~bit, __ATOMIC_RELAXED);
}

/* Sessions of mask whose slot holds a new session since we last looked:
 * their bits are cleared everywhere. */
static void sessions_check(uint32_t mask)
{
	while (mask) {
		uint32_t s = (uint32_t)__builtin_ctz(mask), gen = st_session_generation(s);

		mask &= mask - 1;
		if (st_load_acquire(&known_gen[s]) == gen)
			continue;
		forget(&classes, 1u << s);
		forget(&methods, 1u << s);
		st_store_release(&known_gen[s], gen);
	}
}

uint32_t st__jvm_ids_needed(struct st_jvm_id id, uint32_t mask)
{
	if (!id.number)
		return 0;
	if (!id.dumped)
		return mask;
	sessions_check(mask);
	return mask & ~st_load_acquire(id.dumped);
}

void st__jvm_ids_dumped(struct st_jvm_id id, uint32_t mask)
{
	if (id.dumped && mask)
		__atomic_or_fetch(id.dumped, mask, __ATOMIC_RELEASE);
}
