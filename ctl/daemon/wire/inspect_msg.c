/*
 * Parsing of what inspectors send (ctl/inspect/proto.h).
 *
 * An inspector runs as the user whose processes it inspects, and parses
 * files they chose: it is no more trusted than they are. Pure functions
 * over a byte buffer, fuzzed with the process messages (tests/fuzz/): every
 * length, count and string is checked, a bad message rejected whole.
 *
 * Owns: nothing: pure functions over the bytes given.
 * Thread: any.
 * Calls: none.
 */
#include <string.h>

#include "ctl/daemon/wire/inspect_msg.h"

/* A NUL-terminated string of exactly len bytes (NUL included) at p. */
static const char *string_at(const uint8_t *p, size_t len)
{
	return len >= 1 && p[len - 1] == '\0' && strlen((const char *)p) == len - 1
		       ? (const char *)p
		       : NULL;
}

/* Text for a terminal or a log: control characters but newlines go. */
static void tame(char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\n') || *s == 0x7f)
			*s = '?';
}

static int parse_object(const uint8_t *buf, size_t len, struct st_insp_reply *out,
			const char **err)
{
	struct st_insp_object o;
	const uint8_t *tail = buf + sizeof(o);

	if (len < sizeof(o)) {
		*err = "OBJECT too short";
		return -1;
	}
	memcpy(&o, buf, sizeof(o));
	if (len != sizeof(o) + o.path_len + o.link_len || o.path_len < 2 ||
	    o.path_len > ST_INSP_PATH_MAX || o.link_len > ST_INSP_PATH_MAX) {
		*err = "OBJECT lengths do not add up";
		return -1;
	}
	out->object.path = string_at(tail, o.path_len);
	out->object.link = o.link_len ? string_at(tail + o.path_len, o.link_len) : NULL;
	if (!out->object.path || out->object.path[0] != '/' || (o.link_len && !out->object.link)) {
		*err = "OBJECT path or debug link is not a string";
		return -1;
	}
	if (o.build_id_len > ST_INSP_BUILD_ID_MAX || o.is_pic > 1 || o.memsz == 0 ||
	    o.memsz > (1ull << 47) || o.base > UINT64_MAX - o.memsz) {
		*err = "OBJECT facts out of range";
		return -1;
	}
	out->object.key = o.key;
	out->object.base = o.base;
	out->object.memsz = o.memsz;
	out->object.is_pic = o.is_pic;
	out->object.crc = o.crc;
	out->object.build_id_len = o.build_id_len;
	memcpy(out->object.build_id, o.build_id, sizeof(o.build_id));
	return 0;
}

int st_insp_parse(void *buf, size_t len, struct st_insp_reply *out, const char **err)
{
	const uint8_t *b = buf;
	struct st_insp_hdr h;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h)) {
		*err = "message shorter than its header";
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.len != len) {
		*err = "message length field does not match its size";
		return -1;
	}
	out->type = h.type;
	out->id = h.id;
	switch (h.type) {
	case ST_INSP_OBJECT:
		return parse_object(b, len, out, err);
	case ST_INSP_LINE_TABLE: {
		struct st_insp_line_table m;

		if (len != sizeof(m)) {
			*err = "LINE_TABLE has the wrong size";
			return -1;
		}
		memcpy(&m, buf, sizeof(m));
		out->lines.rows = m.rows;
		return 0;
	}
	case ST_INSP_FOUND: {
		struct st_insp_found m;

		if (len < sizeof(m) + 1 || !(out->found.exe = string_at(b + sizeof(m), len - sizeof(m)))) {
			*err = "FOUND without its executable path";
			return -1;
		}
		memcpy(&m, buf, sizeof(m));
		out->found.ppid = m.ppid;
		memcpy(out->found.name, m.name, sizeof(m.name));
		out->found.name[sizeof(m.name)] = '\0';
		tame(out->found.name);
		return 0;
	}
	case ST_INSP_DONE: {
		struct st_insp_done m;
		char *text;

		if (len < sizeof(m) + 1 || !string_at(b + sizeof(m), len - sizeof(m))) {
			*err = "DONE without its text";
			return -1;
		}
		text = (char *)b + sizeof(m);
		memcpy(&m, buf, sizeof(m));
		tame(text);
		out->done.status = m.status;
		out->done.count = m.count;
		out->done.text = text;
		return 0;
	}
	default:
		*err = "unknown message type";
		return -1;
	}
}
