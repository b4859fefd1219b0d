/*
 * Packet writer: a thread of the daemon that does the file writes, so that
 * copying events out of the rings (which frees them for the producers)
 * overlaps with writing the previous packets to disk.
 *
 * Concurrency: the event-loop thread fills a buffer (st_packet_buf) and
 * queues it (st_writer_queue); the writer thread writes queued buffers in
 * FIFO order, so the packets of a stream reach its file in order, and puts
 * buffers back in the free list. `lock` protects the queue, the free list
 * and the in-flight count; a stream's fd, `direct` and `size` are used by the
 * writer thread only while a buffer of that stream is queued, and the loop
 * thread calls st_writer_sync() before closing a stream. At most NBUF
 * buffers exist: when all are in flight the loop thread waits, the rings
 * fill, and producers count their drops: memory stays bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/daemon/daemon.h"
#include "ctl/daemon/writer.h"

#define NBUF 8
#define BUF_ALIGN 4096u

struct wbuf {
	uint8_t *p;
	uint64_t cap;
	uint64_t len;		/* bytes to write from p */
	struct st_stream *s;
	struct wbuf *next;
};

static struct wbuf bufs[NBUF];
static struct wbuf *free_list, *queue_head, *queue_tail, *current;
static uint32_t in_flight; /* queued or being written */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static pthread_t thread;
static bool started, stopping;

/* Writes all of [p, p + n) at the end of the stream; on failure the file
 * is cut back, so it never holds half a packet. Writer thread only. */
static int append(struct st_stream *s, const uint8_t *p, uint64_t n)
{
	uint64_t done = 0;

	while (done < n) {
		ssize_t w = write(s->fd, p + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EINVAL && s->direct && done == 0) {
			/* direct I/O refused after all: go on buffered */
			fcntl(s->fd, F_SETFL, O_APPEND);
			s->direct = false;
			continue;
		}
		if (w <= 0) {
			int e = w < 0 ? errno : ENOSPC;

			if (ftruncate(s->fd, (off_t)s->size) < 0)
				s->size = UINT64_MAX;
			return -e;
		}
		done += (uint64_t)w;
	}
	s->size += n;
	return 0;
}

static void *run(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		struct wbuf *b;
		int ret;

		while (!queue_head && !stopping)
			pthread_cond_wait(&changed, &lock);
		if (!queue_head)
			break;
		b = queue_head;
		queue_head = b->next;
		if (!queue_head)
			queue_tail = NULL;
		pthread_mutex_unlock(&lock);
		ret = b->s->failed ? -EIO : append(b->s, b->p, b->len);
		pthread_mutex_lock(&lock);
		if (ret < 0 && !b->s->failed) {
			b->s->failed = true;
			st_log(ST_LOG_ERR, "writing a packet: %s", strerror(-ret));
		}
		b->next = free_list;
		free_list = b;
		in_flight--;
		pthread_cond_broadcast(&changed);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int start(void)
{
	if (started)
		return 0;
	for (int i = 0; i < NBUF; i++) {
		bufs[i].next = free_list;
		free_list = &bufs[i];
	}
	if (pthread_create(&thread, NULL, run, NULL) != 0)
		return -1;
	started = true;
	return 0;
}

uint8_t *st_writer_buf(uint64_t len)
{
	uint64_t need = (len + BUF_ALIGN) / BUF_ALIGN * BUF_ALIGN + BUF_ALIGN;

	if (!current) {
		if (start() < 0)
			return NULL;
		pthread_mutex_lock(&lock);
		while (!free_list)
			pthread_cond_wait(&changed, &lock);
		current = free_list;
		free_list = current->next;
		pthread_mutex_unlock(&lock);
	}
	if (need > current->cap) {
		void *p;

		if (posix_memalign(&p, BUF_ALIGN, need) != 0)
			return NULL;
		free(current->p);
		current->p = p;
		current->cap = need;
	}
	return current->p;
}

void st_writer_queue(struct st_stream *s, uint64_t len)
{
	struct wbuf *b = current;

	current = NULL;
	b->s = s;
	b->len = len;
	b->next = NULL;
	pthread_mutex_lock(&lock);
	if (queue_tail)
		queue_tail->next = b;
	else
		queue_head = b;
	queue_tail = b;
	in_flight++;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

void st_writer_sync(void)
{
	if (!started)
		return;
	pthread_mutex_lock(&lock);
	while (in_flight)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
}

void st_writer_stop(void)
{
	if (!started)
		return;
	st_writer_sync();
	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	pthread_join(thread, NULL);
	started = false;
	stopping = false;
	for (int i = 0; i < NBUF; i++) {
		free(bufs[i].p);
		memset(&bufs[i], 0, sizeof(bufs[i]));
	}
	free_list = queue_head = queue_tail = current = NULL;
}
