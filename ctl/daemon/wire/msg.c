/*
 * Parsing of control messages from traced processes.
 *
 * Pure functions over a byte buffer: no state, no I/O, so that they can be
 * fuzzed on their own (tests/fuzz/). A process can send anything; every
 * length, count and string is checked before use and a bad message is
 * rejected whole with a one-line reason.
 *
 * Owns: nothing: pure functions over the bytes given.
 * Thread: any.
 * Calls: none.
 */
#include <stdlib.h>
#include <string.h>

#include "core/abi.h"
#include "ctl/daemon/wire/msg.h"

bool st_name_valid(const char *s)
{
	return st_abi_name_valid(s);
}

/* Fixed sizes of the messages that have no variable part. */
static size_t fixed_size(uint32_t type)
{
	switch (type) {
	case ST_MSG_PROVIDER_GONE:
		return sizeof(struct st_abi_provider_gone);
	case ST_MSG_MAPS:
		return sizeof(struct st_abi_maps);
	case ST_MSG_SYNC:
		return sizeof(struct st_abi_sync);
	case ST_MSG_POOL:
		return sizeof(struct st_abi_pool_msg);
	case ST_MSG_SUBBUF:
		return sizeof(struct st_abi_subbuf_msg);
	case ST_MSG_EXIT:
		return sizeof(struct st_abi_msg);
	default:
		return 0;
	}
}

int st_msg_check(const void *buf, size_t len, uint32_t *type, const char **err)
{
	struct st_abi_msg h;
	size_t want;

	if (len < sizeof(h)) {
		*err = "message shorter than its header";
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.len != len) {
		*err = "message length field does not match its size";
		return -1;
	}
	switch (h.type) {
	case ST_MSG_HELLO:
		want = sizeof(struct st_abi_hello) + 1;
		if (len < want) {
			*err = "HELLO too short";
			return -1;
		}
		break;
	case ST_MSG_PROVIDER:
		if (len < sizeof(struct st_abi_provider)) {
			*err = "PROVIDER too short";
			return -1;
		}
		break;
	default:
		want = fixed_size(h.type);
		if (!want) {
			*err = "unknown message type";
			return -1;
		}
		if (len != want) {
			*err = "message has the wrong size for its type";
			return -1;
		}
	}
	*type = h.type;
	return 0;
}

/* Copies a NUL-terminated string from [*p, end) into dst; advances *p. */
static int take_str(const uint8_t **p, const uint8_t *end, char *dst, size_t cap)
{
	const uint8_t *nul = memchr(*p, 0, (size_t)(end - *p));
	size_t n;

	if (!nul)
		return -1;
	n = (size_t)(nul - *p);
	if (n >= cap)
		return -1;
	memcpy(dst, *p, n + 1);
	*p = nul + 1;
	return 0;
}

static int take_u32(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	if ((size_t)(end - *p) < sizeof(*v))
		return -1;
	memcpy(v, *p, sizeof(*v));
	*p += sizeof(*v);
	return 0;
}

int st_msg_parse_hello(const void *buf, size_t len, struct st_msg_hello *out, const char **err)
{
	struct st_abi_hello h;
	const uint8_t *p = (const uint8_t *)buf + sizeof(h), *end = (const uint8_t *)buf + len;

	if (len < sizeof(h) + 1) {
		*err = "HELLO too short";
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.version != ST_ABI_VERSION) {
		*err = "HELLO from an incompatible shimtrace version";
		return -1;
	}
	if (h.status_size < ST_ABI_PAGE || h.status_size % ST_ABI_PAGE) {
		*err = "HELLO with a bad status size";
		return -1;
	}
	out->ppid = h.ppid;
	out->status_size = h.status_size;
	out->flags = h.flags;
	/* The comm and the path are data, kept as they are (the trace's
	 * process event holds them, --procname compares them): whatever
	 * shows them to people escapes them (ctl/common/escape.h). */
	memcpy(out->name, h.name, sizeof(h.name));
	out->name[sizeof(h.name)] = '\0';
	if (take_str(&p, end, out->exe, sizeof(out->exe)) < 0 || p != end) {
		*err = "HELLO executable path is not a terminated string";
		return -1;
	}
	return 0;
}

int st_msg_parse_provider(const void *buf, size_t len, struct st_msg_provider *out,
			  const char **err)
{
	struct st_abi_provider h;
	const uint8_t *p = (const uint8_t *)buf + sizeof(h), *end = (const uint8_t *)buf + len;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h)) {
		*err = "PROVIDER too short";
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.page == 0) {
		*err = "PROVIDER on the control page";
		return -1;
	}
	if (memchr(h.name, 0, sizeof(h.name)) == NULL || !st_name_valid(h.name)) {
		*err = "PROVIDER name is not an identifier";
		return -1;
	}
	if (h.count == 0 || h.count > ST_PROVIDER_MAX_TRACEPOINTS) {
		*err = "PROVIDER tracepoint count out of range";
		return -1;
	}
	out->page = h.page;
	memcpy(out->name, h.name, sizeof(h.name));
	out->count = h.count;
	out->tps = calloc(h.count, sizeof(*out->tps));
	if (!out->tps) {
		*err = "out of memory";
		return -1;
	}
	for (uint32_t i = 0; i < h.count; i++) {
		struct st_msg_tracepoint *tp = &out->tps[i];

		if (take_u32(&p, end, &tp->slot) < 0 || take_u32(&p, end, &tp->nfields) < 0 ||
		    take_str(&p, end, tp->name, sizeof(tp->name)) < 0) {
			*err = "PROVIDER tracepoint truncated";
			goto fail;
		}
		if (tp->slot >= ST_PROVIDER_MAX_TRACEPOINTS || tp->nfields > 255 ||
		    !st_name_valid(tp->name)) {
			*err = "PROVIDER tracepoint with a bad slot, field count or name";
			goto fail;
		}
		for (uint32_t k = 0; k < tp->nfields; k++) {
			struct st_evfield *f = &tp->fields[k];

			if (take_u32(&p, end, &f->type) < 0 ||
			    take_str(&p, end, f->name, sizeof(f->name)) < 0) {
				*err = "PROVIDER field truncated";
				goto fail;
			}
			if (f->type < ST_TYPE_U8 || f->type > ST_TYPE_LAST || !st_name_valid(f->name)) {
				*err = "PROVIDER field with a bad type or name";
				goto fail;
			}
			for (uint32_t j = 0; j < k; j++)
				if (strcmp(tp->fields[j].name, f->name) == 0) {
					*err = "PROVIDER field named twice";
					goto fail;
				}
		}
		for (uint32_t j = 0; j < i; j++)
			if (out->tps[j].slot == tp->slot || strcmp(out->tps[j].name, tp->name) == 0) {
				*err = "PROVIDER tracepoint slot or name used twice";
				goto fail;
			}
	}
	if (p != end) {
		*err = "PROVIDER has trailing bytes";
		goto fail;
	}
	return 0;
fail:
	free(out->tps);
	out->tps = NULL;
	return -1;
}
