/*
 * An inspector's channel (channel.c): its socket to the daemon (requests
 * in; replies, each with at most one descriptor, out) and, for an objects
 * and lines pair, the socket joining the two, over which the objects
 * inspector hands the files it opened to the lines inspector (proto.h).
 *
 * An inspector is single-threaded and serves one request at a time; each
 * handler sends its messages and ends with st_insp_done().
 */
#ifndef ST_INSPECT_CHANNEL_H
#define ST_INSPECT_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/inspect/proto.h"

/*
 * Waits for the next request of the daemon and reads it into buf (at most
 * cap bytes); with handoffs, takes in the files handed over meanwhile (the
 * lines role). Returns recvmsg's result (0: the daemon closed the
 * socket); *fd: the descriptor that came with it, or -1; *truncated: the
 * request or its descriptors did not fit.
 */
ssize_t st_insp_next(bool handoffs, void *buf, size_t cap, int *fd, int *truncated);

/* Sends one message (and fd, if >= 0) to the daemon; 0, or exits when
 * the daemon is gone. */
int st_insp_send(const void *msg, size_t len, int fd);

/* Ends the answer to request id: status and a one-line reason. */
void st_insp_done(uint64_t id, int32_t status, uint32_t count, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Objects inspector: hands the object file fd (identity key) to the lines
 * inspector of the pair; never waits (a full socket drops it). */
void st_insp_handoff(const struct st_insp_key *key, int fd);

/* Lines inspector: the object file handed over with this identity (the
 * caller closes it), or -1. */
int st_insp_handed(const struct st_insp_key *key);

#endif /* ST_INSPECT_CHANNEL_H */
