/*
 * The hand-written part of the proc family.
 *
 * _exit and _Exit go through st__exit_via, which tells the daemon the
 * process is exiting (exit() runs libshimtrace's destructor, which does;
 * these run none) before the real call.
 *
 * execl, execlp, execle: their arguments are a list, which the real
 * functions turn into an array for execve inside the C library (no
 * interposable call): ours rebuild the array and go through the execv,
 * execvp or execve wrapper with their own caller's address.
 *
 * vfork: the child runs on the parent's stack until it execs or exits, and
 * returns from vfork into the program: no frame of ours may lie between
 * (a child returning through it would spoil the parent's). So vfork is a
 * few instructions: the event is written by st__vfork_prepare, a plain
 * call that returns, and then the real vfork is jumped to, which returns
 * to the program's caller itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "proc-gen.h"
#include "wrappers/proc-helpers.h"
#include "wrappers/resolve.h"

int st__call_execv(const void *ip, const char *path, char *const argv[])
	__attribute__((visibility("hidden")));
int st__call_execvp(const void *ip, const char *file, char *const argv[])
	__attribute__((visibility("hidden")));
int st__call_execve(const void *ip, const char *path, char *const argv[], char *const envp[])
	__attribute__((visibility("hidden")));

enum list_form { L_PATH, L_SEARCH, L_ENV };

/*
 * Runs the exec of an execl form: arg and the list in ap up to its NULL
 * (then, for execle, the environment) become an array, given with the
 * caller's address ip to the wrapper of the array form.
 */
static int exec_list(enum list_form form, const void *ip, const char *path, const char *arg,
		     va_list ap)
{
	va_list count;
	size_t n = 1;

	va_copy(count, ap);
	while (va_arg(count, const char *))
		n++;
	va_end(count);
	{
		char *argv[n + 1];

		argv[0] = (char *)arg;
		for (size_t i = 1; i <= n; i++)
			argv[i] = va_arg(ap, char *);
		if (form == L_ENV)
			return st__call_execve(ip, path, argv, va_arg(ap, char **));
		if (form == L_SEARCH)
			return st__call_execvp(ip, path, argv);
		return st__call_execv(ip, path, argv);
	}
}

ST_API int execl(const char *path, const char *arg, ...);
int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = exec_list(L_PATH, __builtin_return_address(0), path, arg, ap);
	va_end(ap);
	return r;
}

ST_API int execlp(const char *file, const char *arg, ...);
int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = exec_list(L_SEARCH, __builtin_return_address(0), file, arg, ap);
	va_end(ap);
	return r;
}

/* (execle: the environment follows the NULL that ends the list) */
ST_API int execle(const char *path, const char *arg, ...);
int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = exec_list(L_ENV, __builtin_return_address(0), path, arg, ap);
	va_end(ap);
	return r;
}

void st__exit_via(void (*real)(int), int status)
{
	st__process_exit();
	real(status);
	__builtin_unreachable();
}

typedef pid_t (*st__fn_vfork)(void);
static st__fn_vfork real_vfork;

void *st__vfork_prepare(const void *ip)
{
	uint32_t m = st_load_relaxed(&st__state_proc.mask[st__slot_proc_vfork]);
	st__fn_vfork f = st_load_relaxed(&real_vfork);

	if (!f) {
		f = (st__fn_vfork)st__wrap_resolve("vfork");
		if (!f)
			st__wrap_unresolved("vfork");
		st_store_relaxed(&real_vfork, f);
	}
	if (m)
		st__emit_proc_vfork(m, st_clock_read(), ip);
	return (void *)f;
}

/* vfork: the caller's address (at the top of the stack) to the event, the
 * stack aligned for the call, then a jump to the real vfork. */
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"\t.cfi_startproc\n"
	"\tmovq (%rsp), %rdi\n"
	"\tsubq $8, %rsp\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tcall st__vfork_prepare\n"
	"\taddq $8, %rsp\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tjmp *%rax\n"
	"\t.cfi_endproc\n"
	".size vfork, .-vfork\n");
