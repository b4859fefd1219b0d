/*
 * Parsing of a control request (ctl/common/control.h): a pure function over the
 * bytes received, fuzzed (tests/fuzz/fuzz_ctl.c). Only allowed peers get
 * this far, but a request is still checked whole: the verb, then
 * "key=value" items, each NUL-terminated, at most ST_REQ_MAX_ITEMS.
 *
 * Owns: nothing: pure functions over the bytes given.
 * Thread: any.
 * Calls: none.
 */
#include <string.h>

#include "ctl/daemon/wire/request.h"

int st_request_parse(struct st_request *r, char *buf, size_t len)
{
	char *p = buf, *end = buf + len;

	r->nitems = 0;
	r->verb = NULL;
	if (len == 0 || buf[len - 1] != '\0')
		return -1;
	r->verb = p;
	p += strlen(p) + 1;
	while (p < end) {
		if (r->nitems == ST_REQ_MAX_ITEMS || !strchr(p, '=') || *p == '=')
			return -1;
		r->items[r->nitems++] = p;
		p += strlen(p) + 1;
	}
	return r->verb[0] ? 0 : -1;
}
