/*
 * Helpers of the proc family's spec (and proc-exec.c).
 */
#ifndef ST_WRAPPERS_PROC_HELPERS_H
#define ST_WRAPPERS_PROC_HELPERS_H

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * A path an exec is about to take, or NULL (an empty string) if reading
 * it would fault: exec_begin must be written before the call, which does
 * not return when it succeeds, and a bad pointer must give the program
 * EFAULT, not a fault in our wrapper. The kernel reads it for us first
 * (access, which only looks); errno is left as it was.
 */
static inline const char *st__path_ok(const char *path)
{
	int e = errno;
	long r = syscall(SYS_access, path, F_OK);
	int fault = r < 0 && errno == EFAULT;

	errno = e;
	return fault ? NULL : path;
}

/* A path a call took, after it: NULL when the call said EFAULT (-1 and
 * errno, or an error number as posix_spawn returns it). */
static inline const char *st__path_after(int ret, const char *path)
{
	return (ret < 0 && errno == EFAULT) || ret == EFAULT ? NULL : path;
}

__attribute__((visibility("hidden"))) void *st__vfork_prepare(const void *ip);

/* libshimtrace.so: the process is exiting without its destructors (the
 * daemon is told, so its traces say it exited). */
__attribute__((visibility("default"))) void st__process_exit(void);
/* _exit and _Exit: that, then the real function (proc-exec.c). */
__attribute__((visibility("hidden"), noreturn)) void st__exit_via(void (*real)(int), int status);

#endif
