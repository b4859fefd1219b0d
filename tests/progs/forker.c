/*
 * forker: the parent does PARENT pairs, forks a child that does CHILD
 * pairs (and, with "exec", then execs `pairs EXEC` from the same
 * directory), waits for it, and does PARENT pairs again.
 * usage: forker PARENT CHILD [exec EXEC]
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void pairs(long n)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
}

int main(int argc, char **argv)
{
	long parent = argc > 1 ? atol(argv[1]) : 10, child = argc > 2 ? atol(argv[2]) : 20;
	int status;
	pid_t pid;

	pairs(parent);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		pairs(child);
		if (argc > 4 && strcmp(argv[3], "exec") == 0) {
			char self[PATH_MAX], *slash;
			ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 16);

			if (n <= 0)
				_exit(3);
			self[n] = '\0';
			slash = strrchr(self, '/');
			strcpy(slash + 1, "pairs");
			execl(self, "pairs", argv[4], (char *)NULL);
			_exit(4);
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	pairs(parent);
	printf("parent %d child %d done\n", (int)getpid(), (int)pid);
	return 0;
}
