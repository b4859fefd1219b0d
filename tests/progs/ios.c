/*
 * Calls the io family's functions with byte counts no library uses (1001,
 * 1003, ...) in the directory DIR, and prints what must not change when
 * traced (results and errno; not descriptor numbers: the tracer's own
 * descriptors shift them). Built with _FORTIFY_SOURCE, so that some calls
 * go to the checked entry points (__read_chk, __open_2, __fread_chk...).
 * A thread blocked in a read is cancelled: its read began and never ended.
 *
 *   ios DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

static char buf[8192];
/* 0, which the compiler cannot see: counts and flags it cannot prove
 * safe, so that fortified calls go to the checked entry points */
static volatile int zero;

static void *blocked_reader(void *arg)
{
	char c[16];

	(void)!read(*(int *)arg, c, sizeof(c)); /* never returns: cancelled */
	return NULL;
}

static void files(const char *dir, int rdonly)
{
	char path[512], two[512], longpath[2048];
	struct iovec iov[2] = { { buf, 1005 }, { buf + 1005, 1007 } };
	int fd, r;
	FILE *f;

	snprintf(path, sizeof(path), "%s/data", dir);
	snprintf(two, sizeof(two), "%s/other", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0640);
	printf("write: %zd\n", write(fd, buf, 1001));
	printf("pwrite: %zd\n", pwrite(fd, buf, 1003, 5000));
	printf("writev: %zd\n", writev(fd, iov, 2));
	printf("fsync: %d", fsync(fd));
	printf(" fdatasync: %d\n", fdatasync(fd));
	printf("lseek: %ld\n", (long)lseek(fd, 0, SEEK_END));
	close(fd);
	/* rdonly is a variable: the fortified open is __open_2 */
	fd = open(path, rdonly);
	printf("read: %zd\n", read(fd, buf, (size_t)rdonly + 1009));
	printf("pread: %zd\n", pread(fd, buf, (size_t)zero + 1011, 5000));
	printf("readv: %zd\n", readv(fd, iov, 2));
	printf("preadv: %zd", preadv(fd, iov, 1, 0));
	printf(" pwritev: %zd\n", pwritev(fd, iov, 1, 0));
	/* with flags: at offset 7; and writing a read-only descriptor */
	printf("preadv2: %zd", preadv2(fd, iov, 1, 7, 0));
	printf(" pwritev2: %zd\n", pwritev2(fd, iov, 1, 0, 0x7fffffff));
	close(fd);
	errno = 0;
	r = openat(AT_FDCWD, "/nonexistent/shimtrace", O_RDONLY);
	printf("openat missing: %d %d\n", r, errno);
	errno = 0;
	r = open((const char *)1, O_RDONLY);
	printf("open bad pointer: %d %d\n", r, errno);
	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	errno = 0;
	r = open(longpath, O_RDONLY);
	printf("open long path: %d %d\n", r, errno);
	fd = creat(two, 0600);
	printf("close twice: %d", close(fd));
	errno = 0;
	r = close(fd);
	printf(" %d %d\n", r, errno);

	f = fopen(path, "r");
	printf("fread: %zu\n", fread(buf, 1, (size_t)zero + 1013, f));
	fclose(f);
	f = fopen(two, "w");
	printf("fwrite: %zu\n", fwrite(buf, 7, 1015 / 7, f));
	printf("fflush: %d\n", fflush(f));
	fclose(f);
	/* the _unlocked forms (the stdio of programs built with gnulib);
	 * fortified, fread_unlocked is __fread_unlocked_chk. (Modes "rb" and
	 * "ab": io.test counts the fopen "r" above.) */
	f = fopen(path, "rb");
	printf("fread_unlocked: %zu\n", fread_unlocked(buf, 1, (size_t)zero + 1025, f));
	fclose(f);
	f = fopen(two, "ab");
	printf("fwrite_unlocked: %zu\n", fwrite_unlocked(buf, 3, 1027 / 3, f));
	printf("fflush_unlocked: %d\n", fflush_unlocked(f));
	fclose(f);
	fd = open(path, O_RDONLY);
	f = fdopen(fd, "r");
	printf("fdopen fclose: %d\n", fclose(f));
	errno = 0;
	f = fopen("/nonexistent/shimtrace", "r");
	printf("fopen missing: %s %d\n", f ? "opened" : "null", errno);
}

static void descriptors(void)
{
	int p[2], q[2], d, e;
	char c[8];

	printf("pipe: %d", pipe(p));
	printf(" pipe2: %d\n", pipe2(q, O_CLOEXEC));
	d = dup(p[1]);
	e = dup2(p[1], 100);
	printf("dup3: %d\n", dup3(p[1], 101, O_CLOEXEC));
	printf("write pipe: %zd", write(d, "1017abc", 7));
	printf(" read pipe: %zd\n", read(p[0], c, 7));
	close(d);
	close(e);
	close(101);
	close(q[0]);
	close(q[1]);
	close(p[0]);
	close(p[1]);
}

/* fcntl with no argument, an int and a pointer, one that waits (a record
 * lock nobody holds), one that fails; ioctl with a pointer and a bad one. */
static void control(const char *dir)
{
	struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10 };
	char path[4096];
	int fd, p[2], n = -1, r;

	snprintf(path, sizeof(path), "%s/locked", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	r = fcntl(fd, F_GETFD);
	printf("fcntl getfd: %d", r);
	r = fcntl(fd, F_SETFL, O_APPEND);
	printf(" setfl: %d", r);
	r = fcntl(fd, F_GETFL);
	printf(" getfl append: %d\n", (r & O_APPEND) != 0);
	r = fcntl(fd, F_SETLKW, &lk);
	printf("fcntl setlkw: %d", r);
	r = fcntl(-5, F_GETFD);
	printf(" bad fd: %d %d\n", r, errno);
	close(fd);
	if (pipe(p) < 0 || write(p[1], "1031abcdefg", 11) != 11)
		exit(1);
	r = ioctl(p[0], FIONREAD, &n);
	printf("ioctl fionread: %d %d", r, n);
	r = ioctl(p[0], 0x7fff, &n);
	printf(" bad request: %d %d\n", r, errno);
	close(p[0]);
	close(p[1]);
}

static void sockets(const char *dir)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct msghdr mh = { 0 };
	struct iovec iov = { buf, 1023 };
	int l, c, s, ep;
	struct pollfd pf;
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct timeval tv = { 0, 0 };
	fd_set rs;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s/sock", dir);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0)
		exit(1);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	printf("connect: %d\n", connect(c, (struct sockaddr *)&a, sizeof(a)));
	s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	printf("send: %zd", send(c, buf, 1019, 0));
	printf(" recv: %zd\n", recv(s, buf, (size_t)zero + 1019, MSG_WAITALL));
	printf("sendto: %zd", sendto(s, buf, 1021, 0, NULL, 0));
	printf(" recvfrom: %zd\n", recvfrom(c, buf, (size_t)zero + 1021, MSG_WAITALL, NULL, NULL));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	printf("sendmsg: %zd", sendmsg(c, &mh, 0));
	printf(" recvmsg: %zd\n", recvmsg(s, &mh, MSG_WAITALL));
	pf.fd = s;
	pf.events = POLLIN;
	printf("poll: %d\n", poll(&pf, 1, 0));
	FD_ZERO(&rs);
	FD_SET(s, &rs);
	printf("select: %d\n", select(s + 1, &rs, NULL, NULL, &tv));
	ep = epoll_create1(0);
	epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
	printf("epoll_wait: %d\n", epoll_wait(ep, &out, 1, 0));
	close(ep);
	close(s);
	close(c);
	printf("accept closed: %d\n", accept(c, NULL, NULL));
	close(l);
}

int main(int argc, char **argv)
{
	pthread_t t;
	int p[2];

	if (argc != 2)
		return 2;
	files(argv[1], zero);
	descriptors();
	control(argv[1]);
	sockets(argv[1]);
	if (pipe(p) < 0)
		return 1;
	pthread_create(&t, NULL, blocked_reader, &p[0]);
	usleep(50000);
	pthread_cancel(t);
	pthread_join(t, NULL);
	printf("cancelled\n");
	return 0;
}
