/*
 * The proc family's calls, each once: fork (the child _exits with 3), vfork
 * and execl in the child, posix_spawn, an execlp and an execve that fail
 * (a missing file, a bad pointer), and exit(0). Prints what must not
 * change when traced.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* (an address the compiler cannot see is bad) */
static const char *volatile bad = (const char *)1;

int main(void)
{
	char *const argv[] = { "true", NULL };
	pid_t pid;
	int st, r;

	pid = fork();
	if (pid == 0)
		_exit(3);
	waitpid(pid, &st, 0);
	printf("fork child: %d\n", WEXITSTATUS(st));
	pid = vfork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	printf("vfork child: %d\n", WEXITSTATUS(st));
	r = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);
	waitpid(pid, &st, 0);
	printf("posix_spawn: %d %d\n", r, WEXITSTATUS(st));
	errno = 0;
	r = execlp("/nonexistent/shimtrace", "x", (char *)NULL);
	printf("execlp missing: %d %d\n", r, errno);
	errno = 0;
	r = execve(bad, argv, environ);
	printf("execve bad pointer: %d %d\n", r, errno);
	fflush(stdout);
	exit(0);
}
