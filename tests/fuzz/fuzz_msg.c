/*
 * libFuzzer harness for the parsers of messages a traced process sends the
 * daemon (ctl/daemon/wire/msg.c): every input must be accepted or rejected with
 * a reason, never read out of bounds (run it with AddressSanitizer).
 * See README.md here for how to build and run it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/abi.h"
#include "ctl/daemon/wire/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	const char *err;
	uint32_t type;

	if (size > ST_ABI_MSG_MAX)
		return 0;
	/* An exact-size copy: a read past the end is caught. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (st_msg_check(copy, size, &type, &err) == 0) {
		if (type == ST_MSG_PROVIDER) {
			struct st_msg_provider m;

			if (st_msg_parse_provider(copy, size, &m, &err) == 0)
				free(m.tps);
		} else if (type == ST_MSG_HELLO) {
			struct st_msg_hello h;

			st_msg_parse_hello(copy, size, &h, &err);
		}
	}
	free(copy);
	return 0;
}
