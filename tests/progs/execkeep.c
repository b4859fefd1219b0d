/*
 * execkeep: the stale-identity attack on the system daemon. It registers
 * by hand (as its user), keeps a copy of its connection in a child, and
 * execs PROGRAM (a setuid program in the test): the daemon's connection
 * now leads to a process of other credentials under the same pid. On
 * SIGUSR1 the child sends, over the kept connection, a MAPS message (the
 * daemon would read the new program's mappings into the user's trace) and
 * a SYNC, and prints "maps sent" once answered (or "maps refused").
 *
 *   execkeep RUNDIR PROGRAM [ARGS...]
 *
 * Prints "keeper PID" before the exec.
 */
#include <poll.h>
#include <signal.h>
#include <time.h>

#include "tests/progs/rawreg.h"

static void keep(int sock)
{
	struct st_abi_maps m = { { ST_MSG_MAPS, sizeof(m) }, ST_MAPS_STATEDUMP, 0, 0, 0 };
	struct st_abi_sync s = { { ST_MSG_SYNC, sizeof(s) }, 7 }, r;
	struct pollfd p = { sock, POLLIN, 0 };
	struct timespec ts;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	m.ts_mono = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (raw_send(sock, &m, sizeof(m), -1) < 0 || raw_send(sock, &s, sizeof(s), -1) < 0 ||
	    poll(&p, 1, 5000) != 1 || recv(sock, &r, sizeof(r), 0) != (ssize_t)sizeof(r))
		printf("maps refused\n");
	else
		printf("maps sent\n");
	fflush(stdout);
	pause();
}

int main(int argc, char **argv)
{
	struct st_abi_sync s = { { ST_MSG_SYNC, sizeof(s) }, 1 }, r;
	int sock, status, kept;
	sigset_t set;
	pid_t child;

	if (argc < 3) {
		fprintf(stderr, "usage: execkeep RUNDIR PROGRAM [ARGS...]\n");
		return 2;
	}
	sock = raw_dial(argv[1]);
	status = raw_status_memfd("shimtrace-status");
	/* registered once the daemon answers */
	if (raw_hello(sock, status) < 0 || raw_send(sock, &s, sizeof(s), -1) < 0 ||
	    recv(sock, &r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		fprintf(stderr, "execkeep: not registered\n");
		return 1;
	}
	kept = fcntl(sock, F_DUPFD, 100); /* without close-on-exec: the copy */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	child = fork();
	if (child == 0) {
		keep(kept);
		return 0;
	}
	close(kept);
	printf("keeper %d\n", (int)child);
	fflush(stdout);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	execv(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
