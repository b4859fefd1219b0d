/*
 * The bytes of one stream file, a range at a time.
 *
 * Records are read from a buffer the file is copied into with pread(2),
 * reused from one range to the next, rather than from a mapping of the
 * file: mapping a page costs a page fault and a page-table update, and on
 * a virtual machine with shadow page tables (this project's CI runs on
 * one) the faults cost the reader several times what decoding the records
 * does (`mmap` and touch a 300 MB stream: 0.13 s; pread it 1 MiB at a
 * time into one buffer: 0.025 s). A stream whose packets are too big for
 * a buffer (WINDOW_MAX), or one opened when the process has few
 * descriptors left, is mapped instead, and the pages read are given back
 * as reading goes, so memory stays bounded either way.
 */
#ifndef ST_READER_WINDOW_H
#define ST_READER_WINDOW_H

#include <stdint.h>

struct st__window {
	int fd;		    /* -1 once mapped (or for an empty file) */
	uint64_t size;	    /* of the file */
	const uint8_t *map; /* mapping mode: the whole file */
	uint64_t released;  /* mapping mode: pages before this were given back */
	uint8_t *buf;	    /* buffer mode: bytes [off, off + len) of the file */
	uint64_t off, len, alloc;
	uint64_t chunk;	    /* how much a refill reads at least */
};

/* Takes fd (closed by st__window_close) of a file of `size` bytes. */
int st__window_open(struct st__window *w, int fd, uint64_t size);

/* Until st__window_plan: refills read at least n bytes (0: no more than
 * asked for). */
void st__window_ahead(struct st__window *w, uint64_t n);

/*
 * Once every packet is known to be at most `largest` bytes: refills read
 * several packets at a time, or the file is mapped when a buffer would
 * have to be too big. Returns 0 or a negative errno.
 */
int st__window_plan(struct st__window *w, uint64_t largest);

/*
 * Bytes [off, off + len) of the file (off + len <= size), valid until the
 * next call; NULL with errno set when they cannot be read.
 */
const uint8_t *st__window_get(struct st__window *w, uint64_t off, uint64_t len);

/* Everything before `upto` is read: mapped pages may be given back. */
void st__window_done(struct st__window *w, uint64_t upto);

void st__window_close(struct st__window *w);

#endif
