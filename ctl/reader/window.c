/*
 * The bytes of one stream file (window.h): a reused buffer filled with
 * pread(2), or a mapping for what a buffer cannot hold.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ctl/reader/window.h"

/* The biggest buffer: a stream with packets over half of it is mapped. */
#define WINDOW_MAX (64ull << 20)
/* A refill reads at least this much, so small packets come many a read. */
#define CHUNK_MIN (256ull << 10)
/* Mapped pages read are given back by this much at a time. */
#define RELEASE_STEP (2ull << 20)

/* Whether fd may stay open for the whole read: a trace of thousands of
 * streams must not take every descriptor the process has. */
static int keep_fd(int fd)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return fd < 1024;
	return (rlim_t)fd < rl.rlim_cur / 2;
}

/* Switches to mapping mode: the whole file, read-only. */
static int map_file(struct st__window *w)
{
	void *m = mmap(NULL, w->size, PROT_READ, MAP_PRIVATE, w->fd, 0);

	if (m == MAP_FAILED)
		return -errno;
	close(w->fd);
	w->fd = -1;
	w->map = m;
	w->released = 0;
	free(w->buf);
	w->buf = NULL;
	w->off = w->len = w->alloc = 0;
	madvise(m, w->size, MADV_SEQUENTIAL);
	return 0;
}

int st__window_open(struct st__window *w, int fd, uint64_t size)
{
	*w = (struct st__window){ .fd = fd, .size = size };
	if (size == 0) {
		close(fd);
		w->fd = -1;
		return 0;
	}
	return keep_fd(fd) ? 0 : map_file(w);
}

void st__window_ahead(struct st__window *w, uint64_t n)
{
	w->chunk = n;
}

int st__window_plan(struct st__window *w, uint64_t largest)
{
	if (w->map) {
		/* what the packet scan touched goes back (it stays cached) */
		madvise((void *)w->map, w->size, MADV_DONTNEED);
		w->released = 0;
		return 0;
	}
	if (w->fd < 0)
		return 0;
	if (largest > WINDOW_MAX / 2)
		return map_file(w);
	w->chunk = 2 * largest > CHUNK_MIN ? 2 * largest : CHUNK_MIN;
	return 0;
}

/* Reads n bytes at off into the buffer, which becomes [off, off + n). */
static int refill(struct st__window *w, uint64_t off, uint64_t n)
{
	uint64_t got = 0;

	if (n > w->alloc) {
		uint8_t *b = realloc(w->buf, n);

		if (!b)
			return -ENOMEM;
		w->buf = b;
		w->alloc = n;
	}
	w->len = 0; /* nothing valid if the read fails half-way */
	while (got < n) {
		ssize_t r = pread(w->fd, w->buf + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENODATA; /* the file shrank since it was opened */
		got += (uint64_t)r;
	}
	w->off = off;
	w->len = n;
	return 0;
}

const uint8_t *st__window_get(struct st__window *w, uint64_t off, uint64_t len)
{
	uint64_t n;
	int ret;

	if (w->map)
		return w->map + off;
	if (w->fd < 0) {
		errno = ENODATA;
		return NULL;
	}
	if (off >= w->off && off + len <= w->off + w->len)
		return w->buf + (off - w->off);
	n = len > w->chunk ? len : w->chunk;
	if (n > w->size - off)
		n = w->size - off;
	if (n > WINDOW_MAX)
		ret = map_file(w);
	else
		ret = refill(w, off, n);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	return w->map ? w->map + off : w->buf;
}

void st__window_done(struct st__window *w, uint64_t upto)
{
	uint64_t page, end;

	if (!w->map) /* buffer mode holds no more than its buffer */
		return;
	page = (uint64_t)sysconf(_SC_PAGESIZE);
	end = upto & ~(page - 1);
	if (end - w->released < RELEASE_STEP && upto < w->size)
		return;
	if (end > w->released)
		madvise((void *)(w->map + w->released), end - w->released, MADV_DONTNEED);
	w->released = end;
}

void st__window_close(struct st__window *w)
{
	if (w->map)
		munmap((void *)w->map, w->size);
	if (w->fd >= 0)
		close(w->fd);
	free(w->buf);
	*w = (struct st__window){ .fd = -1 };
}
