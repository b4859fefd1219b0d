/*
 * Where an lttng-relayd listens, as lttng's URLs say it (relayurl.c):
 *
 *   net://HOST[:CTRL_PORT[:DATA_PORT]]   both connections (5342 and 5343
 *                                        by default); net6:// the same
 *   tcp://HOST:PORT                      one connection (--ctrl-url,
 *                                        --data-url); tcp6:// the same
 *
 * HOST is a name or an address; an IPv6 address goes in brackets
 * ([::1]). Ports are 1 to 65535.
 */
#ifndef ST_COMMON_RELAYURL_H
#define ST_COMMON_RELAYURL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ST_RELAY_CTRL_PORT 5342
#define ST_RELAY_DATA_PORT 5343

struct st_relay_url {
	char host[256];	     /* of the control connection */
	char data_host[256]; /* of the data connection: "" when the same */
	uint16_t ctrl_port, data_port;
};

/* Parses a net:// URL into u: 0, or -1 with a one-line reason in err. */
int st_relay_url_parse(const char *s, struct st_relay_url *u, char *err, size_t errlen);
/* The relay of two tcp:// URLs, lttng's --ctrl-url and --data-url, into
 * u: 0, or -1 with a one-line reason in err. */
int st_relay_urls_parse(const char *ctrl, const char *data, struct st_relay_url *u, char *err,
			size_t errlen);
/* Parses a tcp:// URL (one port) into host and *port: 0, or -1 with a
 * reason. */
int st_relay_tcp_url_parse(const char *s, char *host, size_t hostlen, uint16_t *port, char *err,
			   size_t errlen);
/* One connection of u (data: the data connection) as a tcp:// URL, in
 * buf: what st_relay_tcp_url_parse reads back. */
void st_relay_tcp_url(const struct st_relay_url *u, bool data, char *buf, size_t n);

#endif
