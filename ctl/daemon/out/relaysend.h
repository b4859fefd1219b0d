/*
 * A trace directory shimtrace wrote, sent whole to an lttng-relayd
 * (relaysend.c): `record --set-url` sends its trace when the command has
 * ended.
 */
#ifndef ST_DAEMON_OUT_RELAYSEND_H
#define ST_DAEMON_OUT_RELAYSEND_H

#include <stddef.h>
#include <stdint.h>

#include "ctl/common/relayurl.h"

/* Sends the trace in dir to the relay at u as session `session` (live,
 * beacons every live_us, when that is not 0; hold, when not NULL, is
 * called once every packet is written, before the session closes). The
 * session's directory under the relay's output into path, the packets
 * sent into *packets. 0, or -1 with a one-line reason in err. */
int st_relay_send_trace(const struct st_relay_url *u, const char *session, const char *dir,
			uint32_t live_us, void (*hold)(const char *path), char *path, size_t pathlen,
			uint64_t *packets, char *err, size_t errlen);

#endif
