/*
 * libFuzzer harness for the parser of inspector replies (st_insp_parse(),
 * ctl/daemon/wire/inspect_msg.c). An inspector is as hostile as the processes
 * it inspects: every input must be accepted or rejected with a reason,
 * never read or written out of bounds (run it with AddressSanitizer), and
 * every string an accepted reply points to must be NUL-terminated inside
 * the message (each is read whole here, so a bad pointer is caught).
 * See README.md here for how to build and run it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/daemon/wire/inspect_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* s, if not NULL, is a NUL-terminated string inside [buf, buf + len). */
static void check_string(const char *s, const uint8_t *buf, size_t len)
{
	const uint8_t *p = (const uint8_t *)s;

	if (!s)
		return;
	if (p < buf || p >= buf + len || p + strlen(s) >= buf + len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_insp_reply r;
	const char *err = NULL;
	uint8_t *copy;

	if (size > ST_INSP_MSG_MAX)
		return 0;
	/* An exact-size writable copy (the parser tames text in place): a
	 * read or write past the end is caught. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (st_insp_parse(copy, size, &r, &err) == 0) {
		switch (r.type) {
		case ST_INSP_OBJECT:
			if (!r.object.path || r.object.path[0] != '/' ||
			    r.object.build_id_len > ST_INSP_BUILD_ID_MAX || r.object.memsz == 0 ||
			    r.object.base + r.object.memsz < r.object.base)
				abort();
			check_string(r.object.path, copy, size);
			check_string(r.object.link, copy, size);
			break;
		case ST_INSP_LINE_TABLE:
			if (size != sizeof(struct st_insp_line_table))
				abort();
			break;
		case ST_INSP_FOUND:
			if (!r.found.exe || strlen(r.found.name) >= sizeof(r.found.name))
				abort();
			check_string(r.found.exe, copy, size);
			break;
		case ST_INSP_DONE:
			if (!r.done.text)
				abort();
			check_string(r.done.text, copy, size);
			for (const char *s = r.done.text; *s; s++)
				if (((unsigned char)*s < 0x20 && *s != '\n') || *s == 0x7f)
					abort(); /* not tamed */
			break;
		default:
			abort(); /* an unknown type was accepted */
		}
	} else if (!err) {
		abort(); /* rejected without a reason */
	}
	free(copy);
	return 0;
}
