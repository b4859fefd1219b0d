/*
 * The packet writer thread (writer.c).
 */
#ifndef ST_DAEMON_WRITER_H
#define ST_DAEMON_WRITER_H

#include <stdbool.h>
#include <stdint.h>

/* A stream file, written by the writer thread. */
struct st_file {
	int fd;
	bool direct;	/* opened with O_DIRECT */
	bool failed;	/* a write failed: the file is given up (atomic) */
	uint64_t size;	/* bytes in the file */
};

/* The buffer being filled: at least len bytes, 4 KiB aligned. */
uint8_t *st_writer_buf(uint64_t len);
/* Queues the first len bytes of that buffer to be appended to f. */
void st_writer_queue(struct st_file *f, uint64_t len);
/* Queues the closing of f, after its writes; f is the writer's then. */
void st_writer_close(struct st_file *f);
/* Waits until every queued packet is written. */
void st_writer_sync(void);
void st_writer_stop(void);

#endif
