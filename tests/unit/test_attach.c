/*
 * Unit tests of attach's GOT rewrite (core/attach.c, core/got.c), in the
 * test's own process: the calls of a library loaded before (getppid,
 * pthread_cond_signal) reach a wrapper the test offers once redirected,
 * and the real function through it, with the right result; a slot the
 * loader made read-only (-z now -z relro) is read-only again after the
 * write and after the undo; a lazy slot never called is redirected, and
 * gets its PLT address back; a reference to the old version of a
 * function is left alone; a library loaded later through the dlopen hook
 * is redirected, and one unloaded is forgotten; threads calling all the
 * while always get the right result; after the undo no call reaches the
 * wrapper; attaching twice redirects nothing more.
 */
#include <check.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/attach.h"
#include "core/internal.h"
#include "install-dirs.h"
#include "tests/unit/run.h"

#define LIB_NOW ST_BUILDDIR "/tests/progs/.libs/libgotnow.so"
#define LIB_LAZY ST_BUILDDIR "/tests/progs/.libs/libgotlazy.so"

/* ---- the test's family: two wrappers that count ---- */

static pid_t (*real_getppid)(void), (*real_getpgrp)(void);
static int (*real_signal)(pthread_cond_t *);
static uint64_t wrapped_getppid, wrapped_signal;

static pid_t my_getppid(void)
{
	__atomic_add_fetch(&wrapped_getppid, 1, __ATOMIC_RELAXED);
	return real_getppid();
}

static pid_t my_getpgrp(void)
{
	return real_getpgrp();
}

static int my_signal(pthread_cond_t *c)
{
	__atomic_add_fetch(&wrapped_signal, 1, __ATOMIC_RELAXED);
	return real_signal(c);
}

static struct st__wrap table[] = {
	{ "getppid", (void *)my_getppid, (void **)&real_getppid, NULL },
	{ "getpgrp", (void *)my_getpgrp, (void **)&real_getpgrp, NULL },
	{ "pthread_cond_signal", (void *)my_signal, (void **)&real_signal, NULL },
};

static void __attribute__((constructor)) offer(void)
{
	st__attach_offer(table, sizeof(table) / sizeof(table[0]));
}

/* ---- a library's functions ---- */

struct lib {
	void *h;
	int (*getppid)(void);
	void *(*address)(void);
	int (*signal)(pthread_cond_t *);
	int (*old_signal)(pthread_cond_t *);
};

static void open_lib(struct lib *l, const char *path, int mode)
{
	l->h = dlopen(path, mode);
	ck_assert_msg(l->h, "%s", dlerror());
	l->getppid = (int (*)(void))dlsym(l->h, "gotcall_getppid");
	l->address = (void *(*)(void))dlsym(l->h, "gotcall_address");
	l->signal = (int (*)(pthread_cond_t *))dlsym(l->h, "gotcall_signal");
	l->old_signal = (int (*)(pthread_cond_t *))dlsym(l->h, "gotcall_old_signal");
	ck_assert(l->getppid && l->address && l->signal && l->old_signal);
}

/* ---- a library's getppid and getpgrp slots, and what the kernel says of
 * their pages ---- */

struct slots {
	const char *suffix;
	uint64_t *slot[4];
	bool lazy[4];
	int n;
};

static void on_ref(const struct st__got_ref *ref, void *arg)
{
	struct slots *s = arg;

	if ((strcmp(ref->name, "getppid") == 0 || strcmp(ref->name, "getpgrp") == 0) && s->n < 4) {
		s->lazy[s->n] = ref->lazy;
		s->slot[s->n++] = ref->slot;
	}
}

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct slots *s = arg;
	size_t n = strlen(info->dlpi_name), k = strlen(s->suffix);
	struct st__obj o;

	(void)size;
	if (n < k || strcmp(info->dlpi_name + n - k, s->suffix) != 0)
		return 0;
	st__obj_of(info, &o);
	st__got_each(info, &o, on_ref, s);
	return 1;
}

static void slots_of(const char *suffix, struct slots *s)
{
	memset(s, 0, sizeof(*s));
	s->suffix = suffix;
	dl_iterate_phdr(find_lib, s);
}

/* The permissions of the mapping holding addr ("r--p"...). */
static void perms_of(const void *addr, char out[5])
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	strcpy(out, "????");
	ck_assert(f);
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;
		char p[5];

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &lo, &hi, p) == 3 &&
		    (uintptr_t)addr >= lo && (uintptr_t)addr < hi) {
			strcpy(out, p);
			break;
		}
	}
	fclose(f);
}

/* ---- the tests ---- */

START_TEST(bound_and_read_only_redirected_then_restored)
{
	pid_t ppid = getppid();
	struct lib l;
	struct slots s;
	char p[5];

	open_lib(&l, LIB_NOW, RTLD_NOW);
	ck_assert_int_eq(l.getppid(), ppid);
	ck_assert_uint_eq(wrapped_getppid, 0);
	slots_of("/libgotnow.so", &s);
	ck_assert_int_eq(s.n, 2); /* the PLT's, and the address taken */
	perms_of(s.slot[0], p);
	ck_assert_str_eq(p, "r--p");

	ck_assert_int_ge(st__attach_redirect(), 3);
	ck_assert_int_eq(st__attach_redirect(), 0); /* (all were already) */
	ck_assert_int_eq(l.getppid(), ppid);
	ck_assert_uint_eq(wrapped_getppid, 1);
	ck_assert_ptr_eq(l.address(), (void *)my_getpgrp);
	for (int i = 0; i < s.n; i++) {
		perms_of(s.slot[i], p);
		ck_assert_str_eq(p, "r--p");
	}
	ck_assert_ptr_eq((void *)real_getppid, dlsym(RTLD_DEFAULT, "getppid"));

	ck_assert_int_ge(st_attach_undo(), 3);
	ck_assert_int_eq(l.getppid(), ppid);
	ck_assert_uint_eq(wrapped_getppid, 1);
	ck_assert_ptr_eq(l.address(), dlsym(RTLD_DEFAULT, "getpgrp"));
	perms_of(s.slot[0], p);
	ck_assert_str_eq(p, "r--p");
	/* once more: the same again */
	ck_assert_int_ge(st__attach_redirect(), 3);
	ck_assert_int_eq(l.getppid(), ppid);
	ck_assert_uint_eq(wrapped_getppid, 2);
	ck_assert_int_ge(st_attach_undo(), 3);
}
END_TEST

START_TEST(lazy_slot_redirected_then_restored)
{
	pid_t ppid = getppid();
	struct lib l;
	struct slots s;
	uint64_t before[4];
	int plt = -1;

	open_lib(&l, LIB_LAZY, RTLD_LAZY);
	slots_of("/libgotlazy.so", &s);
	ck_assert_int_eq(s.n, 2);
	for (int i = 0; i < s.n; i++) {
		before[i] = *s.slot[i];
		if (s.lazy[i])
			plt = i;
	}
	ck_assert_int_ge(plt, 0); /* never called: not bound yet */

	ck_assert_int_ge(st__attach_redirect(), 2);
	ck_assert_uint_eq(*s.slot[plt], (uintptr_t)my_getppid);
	ck_assert_int_eq(l.getppid(), ppid);
	ck_assert_uint_eq(wrapped_getppid, 1);

	ck_assert_int_ge(st_attach_undo(), 2);
	for (int i = 0; i < s.n; i++)
		ck_assert_uint_eq(*s.slot[i], before[i]);
	/* and the loader binds it as if nothing happened */
	ck_assert_int_eq(l.getppid(), ppid);
	ck_assert_uint_eq(wrapped_getppid, 1);
	ck_assert_uint_eq(*s.slot[plt], (uintptr_t)dlsym(RTLD_DEFAULT, "getppid"));
}
END_TEST

START_TEST(old_version_left_alone)
{
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_cond_t old;
	int (*old_destroy)(pthread_cond_t *);
	struct lib l;

	memset(&old, 0, sizeof(old));
	open_lib(&l, LIB_NOW, RTLD_NOW);
	ck_assert_int_ge(st__attach_redirect(), 1);
	ck_assert_int_eq(l.signal(&c), 0);
	ck_assert_uint_eq(wrapped_signal, 1);
	ck_assert_int_eq(l.old_signal(&old), 0);
	ck_assert_uint_eq(wrapped_signal, 1);
	st_attach_undo();
	/* (the old version allocated the condition it works on: freed by
	 * the old destroy, for LeakSanitizer) */
	old_destroy = (int (*)(pthread_cond_t *))dlvsym(RTLD_DEFAULT, "pthread_cond_destroy",
							 ST_COND_COMPAT);
	ck_assert_ptr_nonnull(old_destroy);
	ck_assert_int_eq(old_destroy(&old), 0);
}
END_TEST

START_TEST(loaded_later_redirected_unloaded_forgotten)
{
	pid_t ppid = getppid();
	struct lib now, lazy;

	open_lib(&now, LIB_NOW, RTLD_NOW);
	ck_assert_int_ge(st__attach_redirect(), 1);
	/* (the test program links the core: this is its dlopen hook) */
	open_lib(&lazy, LIB_LAZY, RTLD_LAZY);
	ck_assert_int_eq(lazy.getppid(), ppid);
	ck_assert_uint_eq(wrapped_getppid, 1);
	ck_assert_ptr_eq(lazy.address(), (void *)my_getpgrp);
	ck_assert_int_eq(dlclose(lazy.h), 0);
	/* what was redirected in the library unloaded is not written to */
	ck_assert_int_ge(st_attach_undo(), 1);
	ck_assert_int_eq(now.getppid(), ppid);
	ck_assert_uint_eq(wrapped_getppid, 1);
	/* detached: a library loaded now is left alone */
	open_lib(&lazy, LIB_LAZY, RTLD_LAZY);
	ck_assert_int_eq(lazy.getppid(), ppid);
	ck_assert_uint_eq(wrapped_getppid, 1);
}
END_TEST

/* ---- threads calling while the slots change under them ---- */

struct caller {
	struct lib *l;
	pid_t ppid;
	uint64_t calls, wrong;
	volatile bool *stop;
};

static void *call_loop(void *arg)
{
	struct caller *c = arg;

	while (!*c->stop) {
		if (c->l->getppid() != c->ppid)
			c->wrong++;
		c->calls++;
	}
	return NULL;
}

START_TEST(threads_calling_meanwhile)
{
	struct caller c[4];
	pthread_t t[4];
	volatile bool stop = false;
	uint64_t calls = 0, after;
	struct lib l;

	open_lib(&l, LIB_NOW, RTLD_NOW);
	for (int i = 0; i < 4; i++) {
		c[i] = (struct caller){ &l, getppid(), 0, 0, &stop };
		ck_assert_int_eq(pthread_create(&t[i], NULL, call_loop, &c[i]), 0);
	}
	for (int k = 0; k < 200; k++) {
		ck_assert_int_ge(st__attach_redirect(), 3);
		usleep(100);
		ck_assert_int_ge(st_attach_undo(), 3);
	}
	/* (a call that had read the wrapper's address before the last undo
	 * finishes within these 20 ms) */
	usleep(20000);
	after = __atomic_load_n(&wrapped_getppid, __ATOMIC_RELAXED);
	usleep(20000);
	stop = true;
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ck_assert_uint_eq(c[i].wrong, 0);
		calls += c[i].calls;
	}
	ck_assert_uint_gt(after, 0);
	ck_assert_uint_le(after, calls);
	/* the undo changed later calls: none since */
	ck_assert_uint_eq(__atomic_load_n(&wrapped_getppid, __ATOMIC_RELAXED), after);
}
END_TEST

int main(void)
{
	return st_run_tests("attach", ST_TESTS(bound_and_read_only_redirected_then_restored,
					      lazy_slot_redirected_then_restored,
					      old_version_left_alone,
					      loaded_later_redirected_unloaded_forgotten,
					      threads_calling_meanwhile));
}
