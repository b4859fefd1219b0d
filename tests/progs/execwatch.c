/*
 * execwatch: a process that changes credentials while it is being
 * attached, for attack-attach.test. Its main thread waits on its input (a
 * safe point for the inspector); another thread reads /proc/self/maps
 * until an attach has loaded its first library (libshimtrace-attach.so),
 * then execs PROGRAM (a setuid program): the process becomes one of other
 * credentials in the middle of the attach.
 *
 *   execwatch PROGRAM [ARGS...]
 *
 * Prints "ready PID", then the program's output.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char **prog;

static int attach_begun(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "libshimtrace-attach") != NULL;
	fclose(f);
	return found;
}

static void *watch(void *arg)
{
	(void)arg;
	while (!attach_begun())
		usleep(200);
	execv(prog[0], prog);
	perror("execv");
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char line[64];

	if (argc < 2) {
		fprintf(stderr, "usage: execwatch PROGRAM [ARGS...]\n");
		return 2;
	}
	prog = argv + 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	pthread_create(&t, NULL, watch, NULL);
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}
