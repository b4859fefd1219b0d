/*
 * libFuzzer harness for the parser of control requests
 * (st_request_parse(), ctl/daemon/wire/request.c): every input must be accepted
 * or rejected, never read out of bounds (run it with AddressSanitizer),
 * and an accepted request must be what its users expect: a non-empty verb,
 * at most ST_REQ_MAX_ITEMS "key=value" items with a non-empty key, each
 * string NUL-terminated inside the buffer.
 *
 * st_req_get() and st_req_all() live in control.c with the rest of the
 * control socket (the event loop, the commands): linking them would pull
 * in the whole daemon, so the invariants they rely on are checked here.
 * See README.md here for how to build and run it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/daemon/wire/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* s is a NUL-terminated string lying wholly in [buf, end). */
static int within(const char *s, const char *buf, const char *end)
{
	return s >= buf && s < end && memchr(s, '\0', (size_t)(end - s)) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct st_request r; /* large (the item table): not on the stack */
	char *copy, *end;
	const char *next;

	if (size > 1 << 20)
		return 0;
	/* An exact-size copy: a read past the end is caught. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	end = copy + size;
	if (st_request_parse(&r, copy, size) == 0) {
		if (!r.verb || r.verb != copy || !within(r.verb, copy, end) || !r.verb[0])
			abort();
		if (r.nitems > ST_REQ_MAX_ITEMS)
			abort();
		/* The items follow the verb and each other, and fill the buffer. */
		next = r.verb + strlen(r.verb) + 1;
		for (uint32_t i = 0; i < r.nitems; i++) {
			const char *it = r.items[i], *eq;

			if (it != next || !within(it, copy, end))
				abort();
			eq = strchr(it, '=');
			if (!eq || eq == it)
				abort();
			next = it + strlen(it) + 1;
		}
		if (next != end)
			abort();
	}
	free(copy);
	return 0;
}
