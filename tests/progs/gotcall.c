/*
 * gotcall: calls for the unit test of attach (tests/unit/test_attach.c)
 * to redirect, from a library of their own (attach leaves the tracer's
 * objects alone, and the test program links the core). Built twice:
 * libgotnow.so, bound at load time with its GOT read-only after
 * (-z now -z relro, as Debian builds most), and libgotlazy.so, bound at
 * the first call (-z lazy -z norelro). getppid through the PLT (a
 * JUMP_SLOT), getpgrp by address (a GLOB_DAT: the linker would send a
 * call through that slot too); pthread_cond_signal in its
 * default version and in the old one (glibc's compatibility function,
 * which attach must leave alone as the preload does).
 */
#include <pthread.h>
#include <unistd.h>

int gotcall_getppid(void);
void *gotcall_address(void);
int gotcall_signal(pthread_cond_t *c);
int gotcall_old_signal(pthread_cond_t *c);

int old_signal(pthread_cond_t *c);
__asm__(".symver old_signal, pthread_cond_signal@" ST_COND_COMPAT);

int gotcall_getppid(void)
{
	return getppid();
}

void *gotcall_address(void)
{
	return (void *)getpgrp;
}

int gotcall_signal(pthread_cond_t *c)
{
	return pthread_cond_signal(c);
}

int gotcall_old_signal(pthread_cond_t *c)
{
	return old_signal(c);
}
