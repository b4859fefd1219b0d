/*
 * The trace file writer (tracefile.c): the threads that write the trace's
 * packets to their files, so that the event loop never waits for a disk.
 */
#ifndef ST_DAEMON_WRITER_H
#define ST_DAEMON_WRITER_H

#include <stdbool.h>
#include <stdint.h>

/*
 * What a trace lost writing: the events of packets that could not be
 * written (a full disk, an I/O error, a file too large), counted by the
 * writer thread as it fails and by the loop thread when a packet cannot
 * even be queued (its metadata could not be written). Shared by the two
 * threads: every field under the writer's lock (st_tracefile_lost and
 * st_tracefile_take_lost take it).
 */
struct st_wloss {
	uint64_t bytes;		/* of packets written (atomic) */
	uint64_t events;	/* all events lost writing, so far */
	int err;		/* the first error (errno) */
	bool logged;		/* it was logged */
	bool logged_wb;		/* a writeback error was logged */
	struct st_wloss_owner {
		uint64_t owner;	/* a process instance */
		uint64_t events;
	} *owners;		/* losses the loop thread has not taken yet */
	uint32_t nowners, cap;
	/* Space set aside in the trace's file system (an unlinked file) so
	 * that the packets saying what was lost, and the final metadata, can
	 * still be written when the disk is full. */
	bool reserved;		/* reserve_fd is open */
	int reserve_fd;
	uint64_t reserve;	/* its bytes */
	uint64_t floor;		/* what stream trailers leave for the metadata */
};

/* A stream file, written by the writer thread. */
struct st_file {
	int fd;
	bool failed;	/* it could not be cut back after a failed write: given
			 * up (atomic) */
	uint64_t size;	/* bytes in the file */
	struct st_wloss *loss; /* the trace's */
	uint64_t owner;	/* the process whose events it holds */
	/* writer thread: events of its packets not written, and how many of
	 * them the last packet written carried in its events_discarded */
	uint64_t lost, carried;
	uint64_t sent;	/* writer thread: bytes queued to be sent on to the disk */
};

/* Tests: the bytes of trace left to the kernel's writeback before files
 * are sent on to the disk (0: the default), the least sent at once, and
 * the most on their way; and the bytes sent, waited for and dropped. */
void st_tracefile_limits(uint64_t hold, uint64_t send, uint64_t window);
uint64_t st_tracefile_retired(void);
/* The buffer being filled: at least len bytes, 4 KiB aligned (what the
 * buffer held of packets is queued first). */
uint8_t *st_tracefile_buf(uint64_t len);
/* Room after the packets of f the buffer holds and has not queued yet,
 * *room bytes of it: the next packet of f goes there, written with them;
 * NULL when there is none. */
uint8_t *st_tracefile_more(struct st_file *f, uint64_t *room);
/* The start of the buffer being filled (NULL: none). */
uint8_t *st_tracefile_base(void);
/* Queues what the buffer holds of packets (the end of each loop turn, a
 * close, a sync do it too). */
void st_tracefile_flush(void);
/* Makes the buffers hold len bytes, resident, before they are needed. */
void st_tracefile_prepare(uint64_t len);
/*
 * Adds len bytes of that buffer from `start`, a packet of `events` events
 * (or an empty packet and it), to what is appended to f: queued with the
 * packets of f after it (st_tracefile_more), at the next flush. The lead
 * bytes before start (0: none) are a packet written first if f is still
 * empty then, so that its first packet declares no loss. The u64
 * at disc_off from start is its events_discarded: the
 * writer adds to it the events of f's packets it could not write before.
 * A trailer (a packet of no events, the stream's last) is written only if
 * it says more than the last packet written (force: the loop thread knows
 * it does).
 */
void st_tracefile_queue(struct st_file *f, uint64_t lead, uint64_t start, uint64_t len,
			uint64_t events, uint64_t disc_off);
void st_tracefile_queue_trailer(struct st_file *f, uint64_t lead, uint64_t start, uint64_t len,
				uint64_t disc_off, bool force);
/* Counts events of owner lost writing for a reason err (loop thread). */
void st_tracefile_lost(struct st_wloss *l, uint64_t owner, uint64_t events, int err);
/* Hands the losses not taken yet to fn, one call per owner. */
void st_tracefile_take_lost(struct st_wloss *l, void (*fn)(void *arg, uint64_t owner, uint64_t events),
			 void *arg);
/* Totals so far: events lost writing, and the first error. */
uint64_t st_tracefile_lost_total(struct st_wloss *l, int *err);
/* Sets bytes aside in the directory dirfd (see struct st_wloss). */
void st_tracefile_reserve(struct st_wloss *l, int dirfd, uint64_t bytes);
/* Gives the space set aside back (after st_tracefile_sync: nothing written
 * meanwhile), for the final metadata. */
void st_tracefile_release(struct st_wloss *l);
/* Queues the closing of f, after its writes; f is the writer's then. */
void st_tracefile_close(struct st_file *f);
/* Waits until every queued packet is written. */
void st_tracefile_sync(void);
void st_tracefile_stop(void);

#endif
