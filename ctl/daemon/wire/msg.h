/*
 * Messages from processes (msg.c): pure parsers, fuzzed. Nothing in a
 * message is trusted: every length and count is checked here.
 */
#ifndef ST_DAEMON_WIRE_MSG_H
#define ST_DAEMON_WIRE_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <shimtrace/tracepoint.h>

#include "core/abi.h"
#include "ctl/daemon/base/limits.h"

/* A field of an event class: its name and type (ST_TYPE_*). */
struct st_evfield {
	char name[ST_ABI_NAME_MAX];
	uint32_t type;
};

/* A process's name: the kernel's comm, 16 bytes and its NUL. */
#define ST_PROC_NAME_SIZE (sizeof(((struct st_abi_hello *)0)->name) + 1)

struct st_msg_tracepoint {
	uint32_t slot;
	char name[ST_ABI_NAME_MAX];
	uint32_t nfields;
	struct st_evfield fields[255];
};

struct st_msg_provider {
	uint32_t page;
	char name[ST_ABI_NAME_MAX];
	uint32_t count;
	struct st_msg_tracepoint *tps; /* count entries, caller frees */
};

struct st_msg_hello {
	int32_t ppid;
	uint32_t status_size;
	uint32_t flags; /* ST_HELLO_* (core/abi.h) */
	char name[ST_PROC_NAME_SIZE];
	char exe[ST_PATH_MAX];
};

/* Each returns 0, or -1 and sets err (a short reason). */
int st_msg_check(const void *buf, size_t len, uint32_t *type, const char **err);
int st_msg_parse_hello(const void *buf, size_t len, struct st_msg_hello *out, const char **err);
int st_msg_parse_provider(const void *buf, size_t len, struct st_msg_provider *out,
			  const char **err);
bool st_name_valid(const char *s);

#endif
