/*
 * Inspectors' replies (inspect_msg.c): parsed and checked, fuzzed.
 */
#ifndef ST_DAEMON_WIRE_INSPECT_MSG_H
#define ST_DAEMON_WIRE_INSPECT_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/inspect/proto.h"
#include "ctl/daemon/wire/msg.h"

/* A reply, validated (inspect_msg.c). Strings point into the message. */
struct st_insp_reply {
	uint32_t type;
	uint64_t id;
	union {
		struct {
			struct st_insp_key key;
			uint64_t base, memsz;
			bool is_pic;
			uint32_t crc, build_id_len;
			uint8_t build_id[ST_INSP_BUILD_ID_MAX];
			const char *path, *link;
		} object;
		struct {
			uint64_t rows;
		} lines;
		struct {
			int32_t ppid;
			char name[ST_PROC_NAME_SIZE];
			const char *exe;
		} found;
		struct {
			int32_t status;
			uint32_t count;
			const char *text;
		} done;
	};
};

/* 0, or -1 and a reason in err. May rewrite text in buf. */
int st_insp_parse(void *buf, size_t len, struct st_insp_reply *out, const char **err);

#endif
