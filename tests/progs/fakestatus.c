/*
 * fakestatus: status memory a daemon must not adopt, for the discovery
 * tests. Made like the preload's (a sealed memfd "shimtrace-status" with
 * the control page's magic), then, by mode:
 *
 *   fakestatus rdonly
 *       the process keeps it only through a read-only descriptor: a
 *       daemon that reopened /proc/PID/fd/N would get write access the
 *       process itself does not have;
 *   fakestatus flip VICTIM
 *       a thread keeps swapping the descriptor between the memfd and a
 *       read-only descriptor of the file VICTIM.
 *
 * Prints "ready PID"; then, for each line read, "touched" if a daemon
 * wrote into the control page (adopted it), else "untouched". Ends at the
 * end of its input.
 */
#include <pthread.h>

#include "tests/progs/rawreg.h"

static int status_nr, memfd_copy, victim;

static void *flipper(void *arg)
{
	(void)arg;
	for (;;) {
		dup2(victim, status_nr);
		dup2(memfd_copy, status_nr);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const volatile struct st_abi_control *c;
	char path[64], line[64];
	int fd = raw_status_memfd("shimtrace-status");
	pthread_t t;

	c = mmap(NULL, ST_ABI_PAGE, PROT_READ, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		return 1;
	if (argc == 2 && strcmp(argv[1], "rdonly") == 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		status_nr = open(path, O_RDONLY);
		close(fd);
	} else if (argc == 3 && strcmp(argv[1], "flip") == 0) {
		status_nr = fd;
		memfd_copy = fcntl(fd, F_DUPFD_CLOEXEC, 200);
		victim = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (victim < 0 || memfd_copy < 0 || pthread_create(&t, NULL, flipper, NULL) != 0)
			return 1;
	} else {
		fprintf(stderr, "usage: fakestatus rdonly | fakestatus flip VICTIM\n");
		return 2;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		printf("%s\n", c->daemon_pid || c->attach_path[0] ? "touched" : "untouched");
		fflush(stdout);
	}
	return 0;
}
