/*
 * The packet writer thread (writer.c).
 */
#ifndef ST_DAEMON_WRITER_H
#define ST_DAEMON_WRITER_H

#include <stdint.h>

struct st_stream;

/* The buffer being filled: at least len bytes, 4 KiB aligned. */
uint8_t *st_writer_buf(uint64_t len);
/* Queues the first len bytes of that buffer to be appended to s. */
void st_writer_queue(struct st_stream *s, uint64_t len);
/* Waits until every queued packet is written. */
void st_writer_sync(void);
void st_writer_stop(void);

#endif
