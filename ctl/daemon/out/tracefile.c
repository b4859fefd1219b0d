/*
 * The trace file writer: a thread of the daemon that does the file writes, so that
 * copying events out of the rings (which frees them for the producers)
 * overlaps with writing the previous packets to disk, and the event loop
 * never waits for a disk.
 *
 * Jobs: write a filled buffer to a file, or close a file. The event-loop
 * thread fills a buffer (st_tracefile_buf) with a packet, adds it
 * (st_tracefile_queue), and may add more packets of the same file after it
 * (st_tracefile_more) until the buffer is queued (st_tracefile_flush: the
 * end of each loop turn, or a buffer wanted for another file); when a
 * stream ends it queues its close (st_tracefile_close); the writer thread
 * runs jobs in FIFO order, so a file's packets are written in order and it
 * is closed after the last. A file (struct st_file) belongs to its stream
 * until its close is queued, then to the writer thread, which frees it.
 *
 * A write that fails (ENOSPC, EDQUOT, EIO, EFBIG...) is cut back, so the
 * file ends with its last whole packet, and its events are counted as lost
 * writing: per file, so that the next packet written carries them in its
 * events_discarded (the writer adds them in the buffer before writing),
 * and per trace and process (struct st_wloss), for the summary and the
 * final metadata. Later packets are still tried: a disk that has room
 * again gets the rest. A stream's trailer (its last packet, of no events)
 * is written only when the last packet written does not carry all the
 * losses; on a full disk it takes its room from the trace's reserve.
 *
 * Three threads: the loop thread (the daemon's main thread: every function
 * of tracefile.h), the writer (run: the jobs) and the flusher (flush_run:
 * sending written ranges on to the disk). `lock` protects the queue, the
 * free lists, the in-flight count, the ranges to send and sent, and every
 * struct st_wloss. A file's fd, `direct`, `size`, `lost` and `carried` are
 * used by the writer thread only; `failed` is set by it and read by the
 * loop thread (atomically). At most NBUF data buffers exist: when all are
 * in flight the loop thread waits, the rings fill, and producers count
 * their drops: memory stays bounded.
 *
 * What may run at once (x: concurrently with; lock: serialised by `lock`;
 * -: never, one thread does both):
 *
 *                           | writer: a job | flusher: send | loop: same
 *   ------------------------+---------------+---------------+-----------
 *   loop: st_tracefile_buf, | x (other buf) | x             | -
 *     _more, _base, _queue  |               |               |
 *   loop: _flush, _close    | lock          | lock          | -
 *   loop: _lost, _take_lost,| lock          | x             | -
 *     _lost_total, _reserve,|               |               |
 *     _release              |               |               |
 *   loop: _sync, _stop      | waits (lock)  | x; _stop joins| -
 *   writer: a job           | -             | lock; `busy`  | see left
 *   flusher: send           | lock; `busy`  | -             | see left
 *
 * A buffer belongs to the loop thread between st_tracefile_buf and its
 * queueing, then to the writer until the job ends; a file to its stream
 * until its close is queued, then to the writer (which waits, under the
 * lock, until the flusher is done with it: `busy`). The queue is a mutex,
 * a condition variable and a list, not a wait-free queue (liburcu's
 * wfcqueue): at most NBUF + streams jobs are in it, one per packet of
 * hundreds of kilobytes to megabytes, a handful of lock round trips per
 * millisecond at the fastest; and the loop thread must wait for a free
 * buffer anyway when the writer is behind, which the condition variable
 * gives. Measured (`perf record -g -- shimtrace record -- mutex-pairs
 * 8000000 1`: 16.2M events, 479 MiB of trace): the mutex, condition
 * variable and futex functions took 0.14% of the samples of the run, in
 * all the daemon's threads; a wait-free queue could save at most that, and
 * its threads would still need a way to sleep.
 *
 * Files are written through the page cache, not with O_DIRECT: a thread
 * writing events as fast as it can makes about 1.6 GB/s of trace here,
 * more than this machine's disk takes (1.0 to 1.4 GB/s with O_DIRECT, one
 * write at a time), and the cache takes such a burst at memory speed.
 *
 * A burst stays in the cache: up to `hold` bytes of trace (1 GiB, or a
 * sixteenth of the memory if less: below the kernel's own threshold for
 * background writeback) are left to the kernel's writeback, like any
 * file's. Sending them on to the disk meanwhile made the writer go at the
 * disk's pace: sync_file_range waits for room in the device's queue, the
 * disk's speed varies with its other users, and the loop thread, waiting
 * for a buffer, let the rings fill (an 8,000,000-pair run lost events in
 * half the runs).
 * Past `hold`, gigabytes of trace must neither crowd the cache (evicting
 * the traced programs' files) nor wait there: each SEND bytes a file gains
 * are queued to the flusher thread, which sends them on to the disk
 * (sync_file_range) and, once more than `window` bytes (512 MiB, or a
 * 32nd of the memory if less) are on their way, waits for the oldest and
 * drops them from the cache (posix_fadvise). The writer waits only when
 * more than `window` bytes are queued and not sent: then the disk is
 * slower than the trace, and memory stays bounded.
 *
 * Owns: the trace files' write queue, its buffers, and the writer and
 *       flusher threads.
 * Thread: the daemon's queues and waits; the writer and the flusher
 *         threads write, as the table above says.
 * Calls: base.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/resident.h"
#include "ctl/daemon/out/tracefile.h"

#define NBUF 4
#define BUF_ALIGN 4096u
#define SEND (8ull << 20)
#define SEND_MAX (64ull << 20) /* a range queued at once */
#define WINDOW (512ull << 20)
#define NRANGES (WINDOW / SEND + 1)
#define HOLD_MAX (1ull << 30)

/* Packets of one file a job holds at most (st_tracefile_more). */
#define JOB_PACKETS 256
/* Kept free past the packets of a job: the transform's word copies. */
#define JOB_SLACK 64

struct job {
	struct st_file *file;
	uint8_t *p;	   /* write: buffer, NULL for a close */
	uint64_t cap;
	uint64_t start;    /* of the bytes to write, in p */
	uint64_t lead;	   /* bytes before start written first into an empty file */
	uint64_t len;
	uint64_t events;   /* in the packets */
	uint32_t ndisc;	   /* packets */
	uint64_t disc_off[JOB_PACKETS]; /* of each one's events_discarded, from start */
	bool trailer, force;
	struct job *next;
};

static struct job bufs[NBUF];	/* data buffers, reused */
static struct job *free_bufs, *queue_head, *queue_tail, *current;
/* The file whose packets `current` holds, queued by the next flush (a
 * buffer wanted for anything else, a close, a sync, st_tracefile_flush):
 * a thread that writes a few events between other threads' makes a packet
 * each in a per-CPU buffer, and a job (a write, a wake of the writer) for
 * each, with NBUF of them at once, left the loop waiting for the writer
 * thread most of the time on a busy machine. */
static struct st_file *pending;
static uint32_t in_flight;	/* jobs queued or running */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static pthread_t thread, flusher;
static bool started, stopping;

/* Ranges of files, oldest first, under `lock`: queued to be sent on to
 * the disk, and sent and not dropped yet (file NULL: its file was closed).
 * The flusher uses `busy` with the lock released; a close waits for it. */
struct range {
	struct st_file *file;
	uint64_t off, len;
};

static struct range todo[NRANGES], sent[NRANGES];
static uint32_t todo_first, ntodo, sent_first, nsent;
static uint64_t todo_bytes, sent_bytes;
static struct st_file *busy;
static pthread_cond_t flush_cv = PTHREAD_COND_INITIALIZER;

/* Writer thread: bytes of open files written and not queued to be sent;
 * up to `hold` of them are left to the kernel (0: not known yet). */
static uint64_t unsent, hold, send_least = SEND, window;
static uint64_t retired; /* bytes sent and dropped (tests) */
static bool flushing; /* the flusher thread runs */

/* Writes all of [p, p + n) at the end of the file; on failure the file is
 * cut back, so it never holds half a packet. Writer thread only. */
static int append(struct st_file *f, const uint8_t *p, uint64_t n)
{
	uint64_t done = 0;

	while (done < n) {
		ssize_t w = write(f->fd, p + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
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

/* Counts events of owner lost writing; caller holds lock. */
static void __lost(struct st_wloss *l, uint64_t owner, uint64_t events, int err)
{
	uint32_t i;

	if (!l->err)
		l->err = err;
	l->events += events;
	for (i = 0; i < l->nowners && l->owners[i].owner != owner; i++)
		;
	if (i == l->nowners) {
		if (l->nowners == l->cap) {
			uint32_t cap = l->cap ? 2 * l->cap : 16;
			struct st_wloss_owner *v = realloc(l->owners, cap * sizeof(*v));

			if (!v)
				return; /* (the total still counts them) */
			l->owners = v;
			l->cap = cap;
		}
		l->owners[l->nowners++] = (struct st_wloss_owner){ owner, 0 };
	}
	l->owners[i].events += events;
}

void st_tracefile_lost(struct st_wloss *l, uint64_t owner, uint64_t events, int err)
{
	pthread_mutex_lock(&lock);
	__lost(l, owner, events, err);
	pthread_mutex_unlock(&lock);
}

void st_tracefile_take_lost(struct st_wloss *l, void (*fn)(void *arg, uint64_t owner, uint64_t events),
			 void *arg)
{
	struct st_wloss_owner *v;
	uint32_t n;

	pthread_mutex_lock(&lock);
	v = l->owners;
	n = l->nowners;
	l->owners = NULL;
	l->nowners = l->cap = 0;
	pthread_mutex_unlock(&lock);
	for (uint32_t i = 0; i < n; i++)
		fn(arg, v[i].owner, v[i].events);
	free(v);
}

uint64_t st_tracefile_lost_total(struct st_wloss *l, int *err)
{
	uint64_t n;

	pthread_mutex_lock(&lock);
	n = l->events;
	*err = l->err;
	pthread_mutex_unlock(&lock);
	return n;
}

void st_tracefile_reserve(struct st_wloss *l, int dirfd, uint64_t bytes)
{
	/* (unnamed, and never to be linked into the directory: O_EXCL) */
	int fd = openat(dirfd, ".", O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC, 0600);

	if (fd < 0)
		return;
	/* what the file system can give, down to a page */
	while (bytes >= BUF_ALIGN && posix_fallocate(fd, 0, (off_t)bytes) != 0)
		bytes /= 2;
	if (bytes < BUF_ALIGN) {
		close(fd);
		return;
	}
	pthread_mutex_lock(&lock);
	if (l->reserved)
		close(l->reserve_fd);
	l->reserved = true;
	l->reserve_fd = fd;
	l->reserve = bytes;
	l->floor = bytes / 2 / BUF_ALIGN * BUF_ALIGN;
	pthread_mutex_unlock(&lock);
}

void st_tracefile_release(struct st_wloss *l)
{
	pthread_mutex_lock(&lock);
	if (l->reserved)
		close(l->reserve_fd);
	l->reserved = false;
	l->reserve = 0;
	pthread_mutex_unlock(&lock);
}

/* Room for a trailer of len bytes, from the reserve above its floor. */
static void take_reserve(struct st_wloss *l, uint64_t len)
{
	uint64_t need = (len + BUF_ALIGN - 1) / BUF_ALIGN * BUF_ALIGN;

	pthread_mutex_lock(&lock);
	if (l->reserved && l->reserve >= l->floor + need &&
	    ftruncate(l->reserve_fd, (off_t)(l->reserve - need)) == 0)
		l->reserve -= need;
	pthread_mutex_unlock(&lock);
}

/* Flusher thread, lock held: waits until the oldest range sent is on the
 * disk, and drops it from the page cache. */
static void retire(void)
{
	struct range r = sent[sent_first];

	busy = r.file;
	pthread_mutex_unlock(&lock);
	if (r.file &&
	    sync_file_range(r.file->fd, (off_t)r.off, (off_t)r.len,
			    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
				    SYNC_FILE_RANGE_WAIT_AFTER) == 0) {
		posix_fadvise(r.file->fd, (off_t)r.off, (off_t)r.len, POSIX_FADV_DONTNEED);
	} else if (r.file && !r.file->loss->logged_wb) {
		/* (what write(2) took and the disk did not: not counted, as
		 * the packets are not known; said once) */
		r.file->loss->logged_wb = true;
		st_log(ST_LOG_ERR, "writing the trace back to disk: %s (it may miss packets)",
		       strerror(errno));
	}
	pthread_mutex_lock(&lock);
	busy = NULL;
	retired += r.file ? r.len : 0;
	sent_bytes -= r.len;
	sent_first = (sent_first + 1) % NRANGES;
	nsent--;
	pthread_cond_broadcast(&changed);
}

/* Flusher thread, lock held: sends the oldest range queued on to the disk
 * (the call waits for room in the device's queue). */
static void send_oldest(void)
{
	struct range r = todo[todo_first];

	todo_first = (todo_first + 1) % NRANGES;
	ntodo--;
	pthread_cond_broadcast(&changed);
	if (!r.file)
		return;
	todo_bytes -= r.len;
	busy = r.file;
	pthread_mutex_unlock(&lock);
	sync_file_range(r.file->fd, (off_t)r.off, (off_t)r.len, SYNC_FILE_RANGE_WRITE);
	pthread_mutex_lock(&lock);
	sent[(sent_first + nsent++) % NRANGES] = r;
	sent_bytes += r.len;
	busy = NULL;
	pthread_cond_broadcast(&changed);
}

static void *flush_run(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		if (stopping)
			break; /* (what is left is the kernel's to write) */
		if (nsent && (nsent == NRANGES || sent_bytes > window))
			retire();
		else if (ntodo)
			send_oldest();
		else
			pthread_cond_wait(&flush_cv, &lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* The memory's 1/div, at most max (max if not known). */
static uint64_t memory_share(uint64_t div, uint64_t max)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t share = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / div : 0;

	return share && share < max ? share : max;
}

/* Writer thread: f gained n bytes. Past `hold` bytes of trace written and
 * not sent, queues what f gained to be sent on, by `send_least` bytes at least;
 * waits while more than `window` bytes are queued (the disk is slower). */
static void send_on(struct st_file *f, uint64_t n)
{
	uint64_t len = f->size - f->sent;

	unsent += n;
	if (!flushing || f->size == UINT64_MAX || unsent <= hold || len < send_least)
		return;
	pthread_mutex_lock(&lock);
	while (len) {
		uint64_t part = len < SEND_MAX ? len : SEND_MAX;

		while (ntodo == NRANGES || (ntodo && todo_bytes + part > window))
			pthread_cond_wait(&changed, &lock);
		todo[(todo_first + ntodo++) % NRANGES] = (struct range){ f, f->sent, part };
		todo_bytes += part;
		f->sent += part;
		unsent -= part;
		len -= part;
		pthread_cond_signal(&flush_cv);
	}
	pthread_mutex_unlock(&lock);
}

/* Writer thread (or no job runs): f is closing; what it did not send is
 * left to the kernel, and the flusher forgets it (once done with it). */
static void forget(struct st_file *f)
{
	pthread_mutex_lock(&lock);
	while (busy == f)
		pthread_cond_wait(&changed, &lock);
	for (uint32_t k = 0; k < ntodo; k++) {
		struct range *r = &todo[(todo_first + k) % NRANGES];

		if (r->file == f) {
			todo_bytes -= r->len;
			r->file = NULL;
		}
	}
	for (uint32_t k = 0; k < nsent; k++)
		if (sent[(sent_first + k) % NRANGES].file == f)
			sent[(sent_first + k) % NRANGES].file = NULL;
	pthread_mutex_unlock(&lock);
	if (f->size != UINT64_MAX)
		unsent -= f->size - f->sent;
}

static void run_job(struct job *j)
{
	struct st_file *f = j->file;
	uint64_t disc, lead;
	int ret;

	if (!j->p) {
		forget(f);
		close(f->fd);
		free(f);
		return;
	}
	/* (a file's first packet must declare no loss: readers count a
	 * packet's from the one before it. Into an empty file, the job's
	 * lead, a packet of no event and no loss, goes first.) */
	lead = f->size == 0 ? j->lead : 0;
	if (j->trailer) {
		if (!j->force && f->lost == f->carried)
			return; /* the last packet written said it all */
		if (f->lost > f->carried)
			take_reserve(f->loss, lead + j->len);
	}
	if (__atomic_load_n(&f->failed, __ATOMIC_RELAXED)) {
		ret = -EIO;
	} else {
		uint8_t *p = j->p + j->start;

		for (uint32_t k = 0; k < j->ndisc; k++) {
			memcpy(&disc, p + j->disc_off[k], sizeof(disc));
			disc += f->lost;
			memcpy(p + j->disc_off[k], &disc, sizeof(disc));
		}
		ret = append(f, p - lead, lead + j->len);
	}
	if (ret == 0) {
		f->carried = f->lost;
		__atomic_add_fetch(&f->loss->bytes, lead + j->len, __ATOMIC_RELAXED);
		send_on(f, lead + j->len);
		return;
	}
	if (f->size == UINT64_MAX)
		__atomic_store_n(&f->failed, true, __ATOMIC_RELAXED);
	f->lost += j->events;
	pthread_mutex_lock(&lock);
	__lost(f->loss, f->owner, j->events, -ret);
	if (!f->loss->logged)
		st_log(ST_LOG_ERR, "writing a packet: %s (its events are counted as lost)",
		       strerror(-ret));
	f->loss->logged = true;
	pthread_mutex_unlock(&lock);
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
	if (!hold) {
		/* (see above; a machine with little memory keeps less) */
		hold = memory_share(16, HOLD_MAX);
		window = memory_share(32, WINDOW);
	}
	if (pthread_create(&thread, NULL, run, NULL) != 0)
		return -1;
	/* (without it, all is left to the kernel's writeback) */
	flushing = pthread_create(&flusher, NULL, flush_run, NULL) == 0;
	started = true;
	return 0;
}

void st_tracefile_limits(uint64_t hold_, uint64_t send_, uint64_t window_)
{
	hold = hold_;
	send_least = send_;
	window = window_;
}

uint64_t st_tracefile_retired(void)
{
	uint64_t n;

	pthread_mutex_lock(&lock);
	n = retired;
	pthread_mutex_unlock(&lock);
	return n;
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

/* Gives j room for len bytes (resident.c); false if out of memory. */
static bool grow(struct job *j, uint64_t len)
{
	uint64_t need = (len + BUF_ALIGN) / BUF_ALIGN * BUF_ALIGN + BUF_ALIGN;
	void *p;

	if (need <= j->cap)
		return true;
	p = st_resident_alloc(need);
	if (!p)
		return false;
	st_resident_free(j->p, j->cap);
	j->p = p;
	j->cap = need;
	return true;
}

void st_tracefile_flush(void)
{
	struct job *j = current;

	if (!pending)
		return;
	current = NULL;
	pending = NULL;
	enqueue(j);
}

uint8_t *st_tracefile_buf(uint64_t len)
{
	st_tracefile_flush();
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
	return grow(current, len) ? current->p : NULL;
}

uint8_t *st_tracefile_more(struct st_file *f, uint64_t *room)
{
	uint64_t end;

	if (!current || pending != f || current->ndisc == JOB_PACKETS)
		return NULL;
	end = current->start + current->len;
	if (current->cap < end + JOB_SLACK)
		return NULL;
	*room = current->cap - end - JOB_SLACK;
	return current->p + end;
}

uint8_t *st_tracefile_base(void)
{
	return current ? current->p : NULL;
}

void st_tracefile_prepare(uint64_t len)
{
	st_tracefile_flush(); /* (a buffer may move: none holds packets) */
	if (start() < 0)
		return;
	pthread_mutex_lock(&lock);
	for (struct job *j = free_bufs; j; j = j->next)
		grow(j, len);
	pthread_mutex_unlock(&lock);
	if (current)
		grow(current, len);
}

/* Makes j (the buffer being filled) a write of len bytes from start to f,
 * of no packet yet. */
static void job_begin(struct job *j, struct st_file *f, uint64_t lead, uint64_t start,
		      uint64_t len, bool trailer, bool force)
{
	j->file = f;
	j->start = start;
	j->lead = lead;
	j->len = len;
	j->events = 0;
	j->ndisc = 0;
	j->trailer = trailer;
	j->force = force;
}

void st_tracefile_queue(struct st_file *f, uint64_t lead, uint64_t start, uint64_t len,
			uint64_t events, uint64_t disc_off)
{
	struct job *j = current;

	if (pending == f && start == j->start + j->len) {
		j->len += len; /* (after the packets before it: st_tracefile_more) */
	} else {
		/* (a buffer from st_tracefile_buf, which flushed what was
		 * pending) */
		job_begin(j, f, lead, start, len, false, false);
		pending = f;
	}
	j->events += events;
	j->disc_off[j->ndisc++] = start - j->start + disc_off;
	if (j->ndisc == JOB_PACKETS)
		st_tracefile_flush();
}

void st_tracefile_queue_trailer(struct st_file *f, uint64_t lead, uint64_t start, uint64_t len,
				uint64_t disc_off, bool force)
{
	struct job *j = current;

	current = NULL;
	job_begin(j, f, lead, start, len, true, force);
	j->disc_off[j->ndisc++] = disc_off;
	enqueue(j);
}

void st_tracefile_close(struct st_file *f)
{
	struct job *j;

	if (!f)
		return;
	st_tracefile_flush(); /* (its packets before its close) */
	j = calloc(1, sizeof(*j));
	if (!j || start() < 0) {
		/* no memory for the job: wait for the writes, close here */
		st_tracefile_sync();
		forget(f);
		close(f->fd);
		free(f);
		free(j);
		return;
	}
	j->file = f;
	enqueue(j);
}

void st_tracefile_sync(void)
{
	if (!started)
		return;
	st_tracefile_flush();
	pthread_mutex_lock(&lock);
	while (in_flight)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
}

void st_tracefile_stop(void)
{
	if (!started)
		return;
	st_tracefile_sync();
	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_broadcast(&changed);
	pthread_cond_broadcast(&flush_cv);
	pthread_mutex_unlock(&lock);
	pthread_join(thread, NULL);
	if (flushing)
		pthread_join(flusher, NULL);
	started = flushing = false;
	stopping = false;
	ntodo = nsent = 0;
	todo_bytes = sent_bytes = unsent = 0;
	for (int i = 0; i < NBUF; i++) {
		st_resident_free(bufs[i].p, bufs[i].cap);
		memset(&bufs[i], 0, sizeof(bufs[i]));
	}
	free_bufs = queue_head = queue_tail = current = NULL;
	pending = NULL;
}
