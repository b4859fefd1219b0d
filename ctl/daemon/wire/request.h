/*
 * A control request as received (request.c): the verb and its
 * "key=value" items, parsed with every length checked (fuzzed), and the
 * reply's standard output gathered for it.
 */
#ifndef ST_DAEMON_WIRE_REQUEST_H
#define ST_DAEMON_WIRE_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ST_REQ_MAX_ITEMS 512

struct st_client;

struct st_request {
	struct st_client *client; /* the connection (control.c); NULL once answered */
	uid_t uid; /* the peer, from SO_PEERCRED */
	gid_t gid;
	pid_t pid;
	bool root;
	const char *verb;
	const char *items[ST_REQ_MAX_ITEMS]; /* "key=value" */
	uint32_t nitems;
	char *out; /* standard output text, sent at the end */
	size_t out_len, out_cap;
};

/* Splits a request as received: 0, or -1 if malformed. */
int st_request_parse(struct st_request *r, char *buf, size_t len);
/* The value of the first item `key`, or NULL. */
const char *st_req_get(const struct st_request *r, const char *key);
/* The values of every item `key`, at most max; returns how many. */
uint32_t st_req_all(const struct st_request *r, const char *key, const char **out, uint32_t max);

#endif
