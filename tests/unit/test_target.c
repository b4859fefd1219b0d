/*
 * Unit tests of st_insp_thread_of() (ctl/inspect/target.c): the check
 * load-probe makes on each thread it has stopped, because the tid came
 * from a list read before and may since belong to another process. A
 * thread of the target passes; a tid of another process, a thread that
 * ended, and every tid of a target that has exited (a zombie, whose /proc
 * entries are still there) do not.
 */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl/inspect/target.h"
#include "tests/unit/run.h"

/* Opens pid as an inspector opens its target (pidfd: kept by the caller). */
static void open_target(pid_t pid, int *pidfd, struct st_insp_proc *p)
{
	struct st_insp_target t = { .pid = pid, .uid = getuid(), .gid = getgid() };
	char why[256] = "";

	*pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	ck_assert_int_ge(*pidfd, 0);
	ck_assert_msg(st_insp_proc_open(&t, *pidfd, p, why, sizeof(why)) == 0, "%s", why);
}

/* A child that waits to be killed. */
static pid_t child(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		for (;;)
			pause();
	return pid;
}

static int ready[2], stop[2];

static void *second(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	char c;

	(void)arg;
	ck_assert_int_eq(write(ready[1], &tid, sizeof(tid)), sizeof(tid));
	ck_assert_int_eq(read(stop[0], &c, 1), 1);
	return NULL;
}

START_TEST(threads_of_the_target)
{
	struct st_insp_proc p;
	pthread_t th;
	pid_t tid;
	int pidfd;
	char c = 0;

	open_target(getpid(), &pidfd, &p);
	ck_assert(st_insp_thread_of(&p, getpid()));
	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(stop), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, second, NULL), 0);
	ck_assert_int_eq(read(ready[0], &tid, sizeof(tid)), sizeof(tid));
	ck_assert_int_ne(tid, getpid());
	ck_assert(st_insp_thread_of(&p, tid));
	/* ended and joined: no longer a thread of the target */
	ck_assert_int_eq(write(stop[1], &c, 1), 1);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert(!st_insp_thread_of(&p, tid));
	ck_assert(!st_insp_thread_of(&p, 0));
	ck_assert(!st_insp_thread_of(&p, -1));
	st_insp_proc_close(&p);
	close(pidfd);
}
END_TEST

START_TEST(tid_of_another_process)
{
	struct st_insp_proc self, other;
	int self_fd, other_fd;
	pid_t pid = child();

	open_target(getpid(), &self_fd, &self);
	open_target(pid, &other_fd, &other);
	/* each process's tid is its own thread, not the other's */
	ck_assert(st_insp_thread_of(&other, pid));
	ck_assert(!st_insp_thread_of(&self, pid));
	ck_assert(!st_insp_thread_of(&other, getpid()));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	st_insp_proc_close(&self);
	st_insp_proc_close(&other);
	close(self_fd);
	close(other_fd);
}
END_TEST

START_TEST(target_that_exited)
{
	struct st_insp_proc p;
	char path[64];
	siginfo_t si;
	int pidfd, fd;
	pid_t pid = child();

	open_target(pid, &pidfd, &p);
	ck_assert(st_insp_thread_of(&p, pid));
	kill(pid, SIGKILL);
	/* a zombie, not reaped: its task entry and Tgid are still there */
	ck_assert_int_eq(waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOWAIT), 0);
	snprintf(path, sizeof(path), "task/%d/status", (int)pid);
	fd = openat(p.dirfd, path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* but the pidfd says it ended */
	ck_assert(!st_insp_thread_of(&p, pid));
	waitpid(pid, NULL, 0);
	ck_assert(!st_insp_thread_of(&p, pid));
	st_insp_proc_close(&p);
	close(pidfd);
}
END_TEST

int main(void)
{
	return st_run_tests("target",
			    ST_TESTS(threads_of_the_target, tid_of_another_process,
				     target_that_exited));
}
