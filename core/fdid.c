/*
 * Knowing a descriptor number is still ours, without touching the file.
 *
 * The program may close any descriptor (daemons close 3 to 1023 at start,
 * or call close_range) and get the same number back for a file of its own.
 * The tracer must then never act on that number: not send on it, not
 * shutdown, dup3 onto or close it, not even fstat it (on a FUSE file that
 * asks the FUSE server, which may never answer).
 *
 * readlink("/proc/self/fd/N") only reads the descriptor table: for a
 * socket it names the inode ("socket:[4711]"), for a memfd its name, so
 * the text taken when we opened the descriptor identifies it later. Where
 * /proc is not mounted (a chroot) the identity falls back to the device
 * and inode from fstat, which for the numbers we still hold is harmless.
 *
 * What remains is the window between the check and the use, in a program
 * that closes descriptors it does not own while another of its threads is
 * inside a traced call: the check is made right before each use.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "sys.h"

/* "/proc/self/fd/" and the decimal number, into buf. */
static void fd_path(int fd, char *buf)
{
	char digits[12];
	int n = 0;

	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) > 0);
	memcpy(buf, "/proc/self/fd/", 14);
	buf += 14;
	while (n > 0)
		*buf++ = digits[--n];
	*buf = '\0';
}

static long read_link(int fd, char *link)
{
	char path[32];

	fd_path(fd, path);
	return st__sys3(SYS_readlink, path, link, ST_FDID_LINK - 1);
}

int st__fdid_take(struct st__fdid *id, int fd)
{
	struct stat st;
	long n;

	id->fd = -1;
	if (fd < 0 || st__sys2(SYS_fstat, fd, &st) < 0)
		return -EBADF;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	n = read_link(fd, id->link);
	/* We hold fd right now: a failing readlink means /proc is missing. */
	id->len = n > 0 ? (uint32_t)n : 0;
	id->fd = fd;
	return 0;
}

bool st__fdid_ours(const struct st__fdid *id)
{
	char link[ST_FDID_LINK];
	struct stat st;

	if (id->fd < 0)
		return false;
	if (id->len)
		return read_link(id->fd, link) == (long)id->len && memcmp(link, id->link, id->len) == 0;
	return st__sys2(SYS_fstat, id->fd, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
}

void st__fdid_close(struct st__fdid *id)
{
	if (st__fdid_ours(id))
		st__close(id->fd);
	id->fd = -1;
}
