/*
 * A client of lttng-relayd (relayd.c): one session streamed to an
 * unmodified relay daemon, 2.11 or later, in its own protocol
 * (doc/relayd-protocol.md): a control connection for the commands and a
 * data connection for the packets.
 *
 * Every call sends whole messages or fails: a failure (the relay gone, a
 * refusal, a timeout) leaves a one-line reason in r->err, and the session
 * is then of no more use (st_relayd_close). Sockets are blocking with a
 * time limit on every send and receive, so a relay that stops reading
 * fails the call instead of holding the caller.
 */
#ifndef ST_DAEMON_WIRE_RELAYD_H
#define ST_DAEMON_WIRE_RELAYD_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/common/relayurl.h"

struct st_relayd {
	int ctrl, data;
	uint32_t minor;		/* the protocol version agreed: 2.minor */
	uint64_t session;	/* relayd's id of the session */
	char path[256];		/* the session's directory under relayd's output */
	char err[256];
};

/* What the index of a packet says (SEND_INDEX): the packet's header and
 * context values, sizes in bytes. */
struct st_relayd_index {
	uint64_t packet_size, content_size;
	uint64_t timestamp_begin, timestamp_end;
	uint64_t events_discarded;
	uint64_t stream_id, stream_instance_id, packet_seq_num;
};

/* Connects to the relay at u (timeout_ms for each connection, and for
 * every later send and receive) and agrees on the protocol: 0, or -1. */
int st_relayd_connect(struct st_relayd *r, const struct st_relay_url *u, int timeout_ms);
/* Creates the session NAME of HOSTNAME (names without '/', not starting
 * with '.'), live when live_us is not 0 (the period of its beacons), and
 * its first trace chunk: 0, or -1. */
int st_relayd_create_session(struct st_relayd *r, const char *name, const char *hostname,
			     uint32_t live_us);
/* Adds the stream CHANNEL (its file's name; "metadata" for the trace's
 * metadata) in directory PATH of the session: its handle in *handle. */
int st_relayd_add_stream(struct st_relayd *r, const char *channel, const char *path,
			 uint64_t *handle);
/* The streams added so far are all there (live viewers see them). */
int st_relayd_streams_sent(struct st_relayd *r);
/* Appends len bytes of metadata to the metadata stream. */
int st_relayd_send_metadata(struct st_relayd *r, uint64_t handle, const void *bytes, uint64_t len);
/* Sends packet number seq (0, 1, 2... per stream) of a stream: its len
 * bytes, then its index. */
int st_relayd_send_packet(struct st_relayd *r, uint64_t handle, uint64_t seq, const void *bytes,
			  uint64_t len, const struct st_relayd_index *ix);
/* The same, the packet's bytes read from file fd at off (sendfile: a
 * signal-free caller must not take SIGPIPE, see relaylive.c). */
int st_relayd_send_packet_file(struct st_relayd *r, uint64_t handle, uint64_t seq, int fd,
			       uint64_t off, uint64_t len, const struct st_relayd_index *ix);
/* A live stream with no packet since the last: nothing before ts_end
 * (last_seq: its last packet's number). */
int st_relayd_beacon(struct st_relayd *r, uint64_t handle, uint64_t last_seq, uint64_t stream_id,
		     uint64_t ts_end);
/* Whether every packet up to last_seq of a stream is written: 1, 0 (not
 * yet), -1 on failure. */
int st_relayd_written(struct st_relayd *r, uint64_t handle, uint64_t last_seq);
/* Ends a stream after its packet last_seq (UINT64_MAX: none, the
 * metadata's). */
int st_relayd_close_stream(struct st_relayd *r, uint64_t handle, uint64_t last_seq);
/* Closes the connections: the relay ends the session. */
void st_relayd_close(struct st_relayd *r);

#endif
