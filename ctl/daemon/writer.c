/*
 * Packet writer: a thread of the daemon that does the file writes, so that
 * copying events out of the rings (which frees them for the producers)
 * overlaps with writing the previous packets to disk, and the event loop
 * never waits for a disk.
 *
 * Jobs: write a filled buffer to a file, or close a file. The event-loop
 * thread fills a buffer (st_writer_buf), queues it (st_writer_queue) and,
 * when a stream ends, queues its close (st_writer_close); the writer thread
 * runs jobs in FIFO order, so a file's packets are written in order and it
 * is closed after the last. A file (struct st_file) belongs to its stream
 * until its close is queued, then to the writer thread, which frees it.
 *
 * `lock` protects the queue, the free lists and the in-flight count. A
 * file's fd, `direct` and `size` are used by the writer thread only;
 * `failed` is set by it and read by the loop thread (atomically). At most
 * NBUF data buffers exist: when all are in flight the loop thread waits,
 * the rings fill, and producers count their drops: memory stays bounded.
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

struct job {
	struct st_file *file;
	uint8_t *p;	   /* write: buffer, NULL for a close */
	uint64_t cap;
	uint64_t len;
	struct job *next;
};

static struct job bufs[NBUF];	/* data buffers, reused */
static struct job *free_bufs, *queue_head, *queue_tail, *current;
static uint32_t in_flight;	/* jobs queued or running */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static pthread_t thread;
static bool started, stopping;

/* Writes all of [p, p + n) at the end of the file; on failure the file is
 * cut back, so it never holds half a packet. Writer thread only. */
static int append(struct st_file *f, const uint8_t *p, uint64_t n)
{
	uint64_t done = 0;

	while (done < n) {
		ssize_t w = write(f->fd, p + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EINVAL && f->direct && done == 0) {
			/* direct I/O refused after all: go on buffered */
			fcntl(f->fd, F_SETFL, O_APPEND);
			f->direct = false;
			continue;
		}
		if (w <= 0) {
			int e = w < 0 ? errno : ENOSPC;

			if (ftruncate(f->fd, (off_t)f->size) < 0)
				f->size = UINT64_MAX;
			return -e;
		}
		done += (uint64_t)w;
	}
	f->size += n;
	return 0;
}

static void run_job(struct job *j)
{
	int ret;

	if (!j->p) {
		close(j->file->fd);
		free(j->file);
		return;
	}
	if (__atomic_load_n(&j->file->failed, __ATOMIC_RELAXED))
		return;
	ret = append(j->file, j->p, j->len);
	if (ret < 0) {
		__atomic_store_n(&j->file->failed, true, __ATOMIC_RELAXED);
		st_log(ST_LOG_ERR, "writing a packet: %s", strerror(-ret));
	}
}

static void *run(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		struct job *j;

		while (!queue_head && !stopping)
			pthread_cond_wait(&changed, &lock);
		if (!queue_head)
			break;
		j = queue_head;
		queue_head = j->next;
		if (!queue_head)
			queue_tail = NULL;
		pthread_mutex_unlock(&lock);
		run_job(j);
		pthread_mutex_lock(&lock);
		if (j->p) {
			j->next = free_bufs;
			free_bufs = j;
		} else {
			free(j);
		}
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
		bufs[i].next = free_bufs;
		free_bufs = &bufs[i];
	}
	if (pthread_create(&thread, NULL, run, NULL) != 0)
		return -1;
	started = true;
	return 0;
}

static void enqueue(struct job *j)
{
	j->next = NULL;
	pthread_mutex_lock(&lock);
	if (queue_tail)
		queue_tail->next = j;
	else
		queue_head = j;
	queue_tail = j;
	in_flight++;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

uint8_t *st_writer_buf(uint64_t len)
{
	uint64_t need = (len + BUF_ALIGN) / BUF_ALIGN * BUF_ALIGN + BUF_ALIGN;

	if (!current) {
		if (start() < 0)
			return NULL;
		pthread_mutex_lock(&lock);
		while (!free_bufs)
			pthread_cond_wait(&changed, &lock);
		current = free_bufs;
		free_bufs = current->next;
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

void st_writer_queue(struct st_file *f, uint64_t len)
{
	struct job *j = current;

	current = NULL;
	j->file = f;
	j->len = len;
	enqueue(j);
}

void st_writer_close(struct st_file *f)
{
	struct job *j;

	if (!f)
		return;
	j = calloc(1, sizeof(*j));
	if (!j || start() < 0) {
		/* no memory for the job: wait for the writes, close here */
		st_writer_sync();
		close(f->fd);
		free(f);
		free(j);
		return;
	}
	j->file = f;
	enqueue(j);
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
	free_bufs = queue_head = queue_tail = current = NULL;
}
