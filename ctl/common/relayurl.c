/*
 * lttng-relayd URLs (see relayurl.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/common/relayurl.h"

/* A port from s (digits only, 1 to 65535): 0, or -1. */
static int port_of(const char *s, size_t n, uint16_t *out)
{
	unsigned long v = 0;

	if (n == 0 || n > 5)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/* The host at the start of s into host: a bracketed IPv6 address or a
 * name up to the first ':'; where it ends in *rest. 0, or -1. */
static int host_of(const char *s, char *host, size_t hostlen, const char **rest)
{
	const char *end;
	size_t n;

	if (*s == '[') {
		end = strchr(s, ']');
		if (!end)
			return -1;
		n = (size_t)(end - s - 1);
		s++;
		*rest = end + 1;
	} else {
		n = strcspn(s, ":/");
		*rest = s + n;
	}
	if (n == 0 || n >= hostlen)
		return -1;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == '/' || (unsigned char)s[i] >= 0x7f)
			return -1;
	memcpy(host, s, n);
	host[n] = '\0';
	return 0;
}

/* The scheme's length if s starts with one of the two given ("net://",
 * "net6://"), else 0. */
static size_t scheme(const char *s, const char *a, const char *b)
{
	if (strncmp(s, a, strlen(a)) == 0)
		return strlen(a);
	if (strncmp(s, b, strlen(b)) == 0)
		return strlen(b);
	return 0;
}

int st_relay_url_parse(const char *s, struct st_relay_url *u, char *err, size_t errlen)
{
	size_t k = scheme(s, "net://", "net6://");
	const char *rest, *colon;

	memset(u, 0, sizeof(*u));
	u->ctrl_port = ST_RELAY_CTRL_PORT;
	u->data_port = ST_RELAY_DATA_PORT;
	if (!k) {
		snprintf(err, errlen, "'%s' is not a relay URL (net://HOST[:CTRL_PORT[:DATA_PORT]])", s);
		return -1;
	}
	if (host_of(s + k, u->host, sizeof(u->host), &rest) < 0) {
		snprintf(err, errlen, "'%s': no host, or a bad one", s);
		return -1;
	}
	if (*rest == '/' && rest[1] == '\0')
		rest++;
	if (*rest == '\0')
		return 0;
	if (*rest != ':')
		goto bad_port;
	rest++;
	colon = strchr(rest, ':');
	if (port_of(rest, colon ? (size_t)(colon - rest) : strlen(rest), &u->ctrl_port) < 0)
		goto bad_port;
	if (colon && port_of(colon + 1, strlen(colon + 1), &u->data_port) < 0)
		goto bad_port;
	/* (a control port alone: the data port is the default, as lttng has it) */
	return 0;
bad_port:
	snprintf(err, errlen, "'%s': a port is a number from 1 to 65535 (net://HOST[:CTRL_PORT[:DATA_PORT]])",
		 s);
	return -1;
}

int st_relay_urls_parse(const char *ctrl, const char *data, struct st_relay_url *u, char *err,
			size_t errlen)
{
	memset(u, 0, sizeof(*u));
	if (st_relay_tcp_url_parse(ctrl, u->host, sizeof(u->host), &u->ctrl_port, err, errlen) < 0 ||
	    st_relay_tcp_url_parse(data, u->data_host, sizeof(u->data_host), &u->data_port, err,
				   errlen) < 0)
		return -1;
	return 0;
}

int st_relay_tcp_url_parse(const char *s, char *host, size_t hostlen, uint16_t *port, char *err,
			   size_t errlen)
{
	size_t k = scheme(s, "tcp://", "tcp6://");
	const char *rest;

	if (!k || host_of(s + k, host, hostlen, &rest) < 0 || *rest != ':' ||
	    port_of(rest + 1, strlen(rest + 1), port) < 0) {
		snprintf(err, errlen, "'%s' is not tcp://HOST:PORT", s);
		return -1;
	}
	return 0;
}

void st_relay_tcp_url(const struct st_relay_url *u, bool data, char *buf, size_t n)
{
	const char *host = data && u->data_host[0] ? u->data_host : u->host;
	bool v6 = strchr(host, ':') != NULL;

	snprintf(buf, n, "tcp://%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "",
		 (unsigned)(data ? u->data_port : u->ctrl_port));
}
