/*
 * Unit tests of the parser of inspector replies (st_insp_parse(),
 * ctl/daemon/wire/inspect_msg.c). An inspector is no more trusted than the
 * processes it inspects: valid replies parse to exactly what was sent,
 * with every string pointing inside the message; inconsistent, truncated
 * or random ones are rejected with a reason. Messages are parsed in
 * exact-size heap copies, so a read or write past one is caught by the
 * sanitizers or valgrind.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/daemon/wire/inspect_msg.h"
#include "tests/unit/run.h"

#define MSG_CAP (sizeof(struct st_insp_object) + 2 * ST_INSP_PATH_MAX + 16)

static uint8_t msg[MSG_CAP];

/* s, if not NULL, is a NUL-terminated string inside [buf, buf + len). */
static void assert_inside(const char *s, const uint8_t *buf, size_t len)
{
	const uint8_t *p = (const uint8_t *)s;

	if (!s)
		return;
	ck_assert(p >= buf && p < buf + len);
	ck_assert_ptr_nonnull(memchr(p, '\0', (size_t)(buf + len - p)));
}

/* Every string of a parsed reply lies in the message. */
static void assert_strings_inside(const struct st_insp_reply *r, const uint8_t *buf, size_t len)
{
	switch (r->type) {
	case ST_INSP_OBJECT:
		ck_assert_ptr_nonnull(r->object.path);
		assert_inside(r->object.path, buf, len);
		assert_inside(r->object.link, buf, len);
		break;
	case ST_INSP_FOUND:
		ck_assert_ptr_nonnull(r->found.exe);
		assert_inside(r->found.exe, buf, len);
		ck_assert_uint_lt(strlen(r->found.name), sizeof(r->found.name));
		break;
	case ST_INSP_DONE:
		ck_assert_ptr_nonnull(r->done.text);
		assert_inside(r->done.text, buf, len);
		break;
	case ST_INSP_LINE_TABLE:
		break;
	default:
		ck_abort_msg("type %u accepted", r->type);
	}
}

/*
 * Parses an exact-size heap copy of len bytes of m, in *copy (to free);
 * a rejection must come with a reason, an acceptance with every string
 * inside the copy.
 */
static int parse_in(const void *m, size_t len, struct st_insp_reply *r, uint8_t **copy)
{
	const char *err = NULL;
	int rc;

	*copy = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(*copy);
	memcpy(*copy, m, len);
	rc = st_insp_parse(*copy, len, r, &err);
	if (rc == 0)
		assert_strings_inside(r, *copy, len);
	else
		ck_assert_ptr_nonnull(err);
	return rc;
}

static int parse(const void *m, size_t len)
{
	struct st_insp_reply r;
	uint8_t *copy;
	int rc = parse_in(m, len, &r, &copy);

	free(copy);
	return rc;
}

static void set_len(void *m, size_t len)
{
	uint32_t l = (uint32_t)len;

	memcpy((uint8_t *)m + offsetof(struct st_insp_hdr, len), &l, sizeof(l));
}

/*
 * An OBJECT reply in msg: path and link with the lengths given (NUL
 * included; link_len 0: no link), the bytes copied from the strings as
 * they are (so a length may cover an embedded NUL or miss the final one).
 */
static size_t build_object_raw(const char *path, uint16_t path_len, const char *link,
			       uint16_t link_len)
{
	struct st_insp_object o = { 0 };
	size_t len = sizeof(o) + path_len + link_len;

	ck_assert_uint_le(len, MSG_CAP);
	o.hdr.type = ST_INSP_OBJECT;
	o.hdr.len = (uint32_t)len;
	o.hdr.id = 42;
	o.base = 0x7f0000000000ull;
	o.memsz = 0x21000;
	o.is_pic = 1;
	o.crc = 0xdeadbeef;
	o.build_id_len = 20;
	for (uint32_t i = 0; i < ST_INSP_BUILD_ID_MAX; i++)
		o.build_id[i] = (uint8_t)(i < 20 ? 0xa0 + i : 0);
	o.path_len = path_len;
	o.link_len = link_len;
	memcpy(msg, &o, sizeof(o));
	memcpy(msg + sizeof(o), path, path_len);
	memcpy(msg + sizeof(o) + path_len, link, link_len);
	return len;
}

static size_t build_object(const char *path, const char *link)
{
	return build_object_raw(path, (uint16_t)(strlen(path) + 1), link ? link : "",
				link ? (uint16_t)(strlen(link) + 1) : 0);
}

/* The OBJECT header in msg, to change a field. */
static struct st_insp_object *obj(void)
{
	return (struct st_insp_object *)msg;
}

START_TEST(object_parses)
{
	size_t n = build_object("/usr/lib/libc.so.6", "libc.so.6.debug");
	struct st_insp_reply r;
	uint8_t *b;

	ck_assert_int_eq(parse_in(msg, n, &r, &b), 0);
	ck_assert_uint_eq(r.type, ST_INSP_OBJECT);
	ck_assert_uint_eq(r.id, 42);
	ck_assert_uint_eq(r.object.base, 0x7f0000000000ull);
	ck_assert_uint_eq(r.object.memsz, 0x21000);
	ck_assert(r.object.is_pic);
	ck_assert_uint_eq(r.object.crc, 0xdeadbeef);
	ck_assert_uint_eq(r.object.build_id_len, 20);
	ck_assert_uint_eq(r.object.build_id[0], 0xa0);
	ck_assert_uint_eq(r.object.build_id[19], 0xa0 + 19);
	ck_assert_str_eq(r.object.path, "/usr/lib/libc.so.6");
	ck_assert_str_eq(r.object.link, "libc.so.6.debug");
	ck_assert_ptr_eq(r.object.path, (const char *)b + sizeof(struct st_insp_object));
	free(b);

	/* no debug link; the shortest path; not position-independent */
	n = build_object("/", NULL);
	obj()->is_pic = 0;
	ck_assert_int_eq(parse_in(msg, n, &r, &b), 0);
	ck_assert_str_eq(r.object.path, "/");
	ck_assert_ptr_null(r.object.link);
	ck_assert(!r.object.is_pic);
	free(b);
}
END_TEST

START_TEST(object_lengths_must_add_up)
{
	size_t n;

	/* lengths larger or smaller than what follows */
	n = build_object("/usr/lib/libm.so.6", "libm.debug");
	obj()->path_len++;
	ck_assert_int_eq(parse(msg, n), -1);
	n = build_object("/usr/lib/libm.so.6", "libm.debug");
	obj()->link_len--;
	ck_assert_int_eq(parse(msg, n), -1);
	n = build_object("/usr/lib/libm.so.6", "libm.debug");
	obj()->link_len = 0;
	ck_assert_int_eq(parse(msg, n), -1);
	/* trailing bytes, counted by the header */
	n = build_object("/usr/lib/libm.so.6", NULL);
	msg[n] = 0;
	set_len(msg, n + 1);
	ck_assert_int_eq(parse(msg, n + 1), -1);
	/* an empty path */
	n = build_object_raw("", 1, "", 0);
	ck_assert_int_eq(parse(msg, n), -1);
	/* a path longer than ST_INSP_PATH_MAX (what follows agrees) */
	{
		static char longp[ST_INSP_PATH_MAX + 1];

		memset(longp, 'a', sizeof(longp) - 1);
		longp[0] = '/';
		n = build_object_raw(longp, ST_INSP_PATH_MAX + 1, "", 0);
		ck_assert_int_eq(parse(msg, n), -1);
		longp[ST_INSP_PATH_MAX - 1] = '\0'; /* just fits */
		n = build_object_raw(longp, ST_INSP_PATH_MAX, "", 0);
		ck_assert_int_eq(parse(msg, n), 0);
		/* a debug link one byte too long, a string otherwise */
		longp[ST_INSP_PATH_MAX - 1] = 'a';
		n = build_object_raw("/a", 3, longp, ST_INSP_PATH_MAX + 1);
		ck_assert_int_eq(parse(msg, n), -1);
		n = build_object_raw("/a", 3, longp + 1, ST_INSP_PATH_MAX);
		ck_assert_int_eq(parse(msg, n), 0);
	}
	/* only the fixed part, or less */
	n = build_object("/x", NULL);
	set_len(msg, sizeof(struct st_insp_object));
	ck_assert_int_eq(parse(msg, sizeof(struct st_insp_object)), -1);
	set_len(msg, sizeof(struct st_insp_object) - 1);
	ck_assert_int_eq(parse(msg, sizeof(struct st_insp_object) - 1), -1);
}
END_TEST

START_TEST(object_strings_checked)
{
	size_t n;

	/* a relative path */
	n = build_object("usr/lib/libc.so.6", NULL);
	ck_assert_int_eq(parse(msg, n), -1);
	/* a NUL inside the path or the link */
	n = build_object_raw("/usr\0/lib/libc.so.6", sizeof("/usr\0/lib/libc.so.6"), "", 0);
	ck_assert_int_eq(parse(msg, n), -1);
	n = build_object_raw("/lib/x.so", sizeof("/lib/x.so"), "x\0.debug", sizeof("x\0.debug"));
	ck_assert_int_eq(parse(msg, n), -1);
	/* no final NUL: path and link run together, or the link runs out */
	n = build_object_raw("/lib/x.sox.debug", 9, "x.debug", 8);
	ck_assert_int_eq(parse(msg, n), -1);
	n = build_object_raw("/lib/x.so", 10, "x.debugX", 8);
	ck_assert_int_eq(parse(msg, n), -1);
}
END_TEST

START_TEST(object_facts_checked)
{
	size_t n;
	const uint64_t top = 1ull << 47;

	/* the build id fills its array, no more */
	n = build_object("/lib/x.so", NULL);
	obj()->build_id_len = ST_INSP_BUILD_ID_MAX;
	ck_assert_int_eq(parse(msg, n), 0);
	obj()->build_id_len = ST_INSP_BUILD_ID_MAX + 1;
	ck_assert_int_eq(parse(msg, n), -1);
	obj()->build_id_len = UINT32_MAX;
	ck_assert_int_eq(parse(msg, n), -1);
	/* is_pic is a boolean */
	n = build_object("/lib/x.so", NULL);
	obj()->is_pic = 2;
	ck_assert_int_eq(parse(msg, n), -1);
	/* memsz 0, or beyond a user address space */
	n = build_object("/lib/x.so", NULL);
	obj()->memsz = 0;
	ck_assert_int_eq(parse(msg, n), -1);
	obj()->base = 0;
	obj()->memsz = top;
	ck_assert_int_eq(parse(msg, n), 0);
	obj()->memsz = top + 1;
	ck_assert_int_eq(parse(msg, n), -1);
	obj()->memsz = UINT64_MAX;
	ck_assert_int_eq(parse(msg, n), -1);
	/* base + memsz wraps around */
	obj()->memsz = 0x1000;
	obj()->base = UINT64_MAX - 0x1000;
	ck_assert_int_eq(parse(msg, n), 0); /* ends at UINT64_MAX */
	obj()->base = UINT64_MAX - 0xfff;
	ck_assert_int_eq(parse(msg, n), -1);
	obj()->base = UINT64_MAX;
	ck_assert_int_eq(parse(msg, n), -1);
}
END_TEST

static size_t build_lines(uint64_t rows)
{
	struct st_insp_line_table m = { { ST_INSP_LINE_TABLE, sizeof(m), 7 }, rows };

	memcpy(msg, &m, sizeof(m));
	return sizeof(m);
}

START_TEST(line_table)
{
	size_t n = build_lines(123456);
	struct st_insp_reply r;
	uint8_t *b;

	ck_assert_int_eq(parse_in(msg, n, &r, &b), 0);
	ck_assert_uint_eq(r.type, ST_INSP_LINE_TABLE);
	ck_assert_uint_eq(r.id, 7);
	ck_assert_uint_eq(r.lines.rows, 123456);
	free(b);
	/* one byte more or less, the header agreeing */
	msg[n] = 0;
	set_len(msg, n + 1);
	ck_assert_int_eq(parse(msg, n + 1), -1);
	set_len(msg, n - 1);
	ck_assert_int_eq(parse(msg, n - 1), -1);
	set_len(msg, sizeof(struct st_insp_hdr));
	ck_assert_int_eq(parse(msg, sizeof(struct st_insp_hdr)), -1);
}
END_TEST

static const char cat[16] = "cat";

/* A FOUND reply in msg: name as its 16 bytes, exe with exe_len bytes. */
static size_t build_found(const char name[16], const char *exe, size_t exe_len)
{
	struct st_insp_found m = { { ST_INSP_FOUND, 0, 9 }, 321, { 0 }, 0 };
	size_t len = sizeof(m) + exe_len;

	memcpy(m.name, name, sizeof(m.name));
	m.hdr.len = (uint32_t)len;
	memcpy(msg, &m, sizeof(m));
	memcpy(msg + sizeof(m), exe, exe_len);
	return len;
}

START_TEST(found)
{
	size_t n = build_found(cat, "/usr/bin/cat", sizeof("/usr/bin/cat"));
	struct st_insp_reply r;
	uint8_t *b;

	ck_assert_int_eq(parse_in(msg, n, &r, &b), 0);
	ck_assert_uint_eq(r.type, ST_INSP_FOUND);
	ck_assert_uint_eq(r.id, 9);
	ck_assert_int_eq(r.found.ppid, 321);
	ck_assert_str_eq(r.found.name, "cat");
	ck_assert_str_eq(r.found.exe, "/usr/bin/cat");
	ck_assert_ptr_eq(r.found.exe, (const char *)b + sizeof(struct st_insp_found));
	free(b);

	/* a name of 16 bytes, no NUL, with control characters: ended and
	 * tamed in the reply */
	n = build_found("0123456789\tbcd\x1b\x7f", "/x", 3);
	ck_assert_int_eq(parse_in(msg, n, &r, &b), 0);
	ck_assert_str_eq(r.found.name, "0123456789?bcd??");
	free(b);

	/* no exe; an empty one; one without its NUL; one with a NUL inside */
	n = build_found(cat, "", 0);
	ck_assert_int_eq(parse(msg, n), -1);
	n = build_found(cat, "", 1);
	ck_assert_int_eq(parse(msg, n), 0);
	n = build_found(cat, "/usr/bin/cat", strlen("/usr/bin/cat"));
	ck_assert_int_eq(parse(msg, n), -1);
	n = build_found(cat, "/usr\0/bin/cat", sizeof("/usr\0/bin/cat"));
	ck_assert_int_eq(parse(msg, n), -1);
	/* shorter than its fixed part */
	n = build_found(cat, "", 0);
	set_len(msg, n - 1);
	ck_assert_int_eq(parse(msg, n - 1), -1);
}
END_TEST

/* A DONE reply in msg: status, count, text with text_len bytes. */
static size_t build_done(int32_t status, const char *text, size_t text_len)
{
	struct st_insp_done m = { { ST_INSP_DONE, 0, 11 }, status, 5 };
	size_t len = sizeof(m) + text_len;

	m.hdr.len = (uint32_t)len;
	memcpy(msg, &m, sizeof(m));
	memcpy(msg + sizeof(m), text, text_len);
	return len;
}

START_TEST(done)
{
	static const char text[] = "no line table\tfor\r\n/lib/x.so\x1b[31m\x7f\x01 \xc3\xa9";
	size_t n = build_done(-2, text, sizeof(text));
	struct st_insp_reply r;
	uint8_t *b;

	ck_assert_int_eq(parse_in(msg, n, &r, &b), 0);
	ck_assert_uint_eq(r.type, ST_INSP_DONE);
	ck_assert_uint_eq(r.id, 11);
	ck_assert_int_eq(r.done.status, -2);
	ck_assert_uint_eq(r.done.count, 5);
	/* tamed in place: control characters but newlines become '?', other
	 * bytes (UTF-8) stay */
	ck_assert_ptr_eq(r.done.text, (const char *)b + sizeof(struct st_insp_done));
	ck_assert_str_eq(r.done.text, "no line table?for?\n/lib/x.so?[31m?? \xc3\xa9");
	free(b);

	/* an empty text */
	n = build_done(0, "", 1);
	ck_assert_int_eq(parse_in(msg, n, &r, &b), 0);
	ck_assert_str_eq(r.done.text, "");
	free(b);
	/* no text; no final NUL; a NUL inside */
	n = build_done(0, "", 0);
	ck_assert_int_eq(parse(msg, n), -1);
	n = build_done(0, "done", 4);
	ck_assert_int_eq(parse(msg, n), -1);
	n = build_done(0, "do\0ne", sizeof("do\0ne"));
	ck_assert_int_eq(parse(msg, n), -1);
	/* shorter than its fixed part */
	n = build_done(0, "", 0);
	set_len(msg, n - 1);
	ck_assert_int_eq(parse(msg, n - 1), -1);
}
END_TEST

START_TEST(headers_checked)
{
	static const uint32_t bad_types[] = { 0,
					      ST_INSP_OBJECTS,
					      ST_INSP_LINES,
					      ST_INSP_PROBE,
					      ST_INSP_DISCOVER,
					      ST_INSP_OBJECT - 1,
					      ST_INSP_DONE + 1,
					      UINT32_MAX };
	struct st_insp_hdr h;
	size_t n;

	/* shorter than a header */
	n = build_done(0, "ok", 3);
	for (size_t len = 0; len < sizeof(struct st_insp_hdr); len++)
		ck_assert_int_eq(parse(msg, len), -1);
	/* the length field disagrees with the size */
	set_len(msg, n + 1);
	ck_assert_int_eq(parse(msg, n), -1);
	set_len(msg, n - 1);
	ck_assert_int_eq(parse(msg, n), -1);
	set_len(msg, (size_t)UINT32_MAX);
	ck_assert_int_eq(parse(msg, n), -1);
	/* types that are not replies, or unknown: even the size of a
	 * valid reply of another type */
	for (size_t i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
		n = build_done(0, "ok", 3);
		memcpy(msg + offsetof(struct st_insp_hdr, type), &bad_types[i], 4);
		ck_assert_int_eq(parse(msg, n), -1);
		n = build_lines(1);
		memcpy(msg + offsetof(struct st_insp_hdr, type), &bad_types[i], 4);
		ck_assert_int_eq(parse(msg, n), -1);
	}
	/* a bare header of each reply type */
	for (uint32_t t = ST_INSP_OBJECT; t <= ST_INSP_DONE; t++) {
		h = (struct st_insp_hdr){ t, sizeof(h), 1 };
		ck_assert_int_eq(parse(&h, sizeof(h)), -1);
	}
}
END_TEST

/* Every cut of the valid message in msg, the header's length left as it
 * is or made to agree, is rejected. */
static void all_truncations_rejected(size_t n)
{
	static uint8_t whole[MSG_CAP];

	ck_assert_int_eq(parse(msg, n), 0);
	memcpy(whole, msg, n);
	for (size_t len = 0; len < n; len++) {
		memcpy(msg, whole, n);
		ck_assert_int_eq(parse(msg, len), -1);
		if (len >= offsetof(struct st_insp_hdr, len) + sizeof(uint32_t)) {
			set_len(msg, len);
			ck_assert_int_eq(parse(msg, len), -1);
		}
	}
}

START_TEST(truncations_rejected)
{
	all_truncations_rejected(build_object("/usr/lib/libc.so.6", "libc.so.6.debug"));
	all_truncations_rejected(build_object("/usr/lib/libc.so.6", NULL));
	all_truncations_rejected(build_lines(99));
	all_truncations_rejected(build_found(cat, "/usr/bin/cat", sizeof("/usr/bin/cat")));
	all_truncations_rejected(build_done(-13, "permission\tdenied\n", sizeof("permission\tdenied\n")));
}
END_TEST

START_TEST(random_input_in_bounds)
{
	unsigned seed = 777;
	int accepted = 0;

	for (int i = 0; i < 50000; i++) {
		size_t n = (size_t)rand_r(&seed) % 256;
		struct st_insp_reply r;
		uint8_t *b;

		for (size_t k = 0; k < n; k++) {
			/* many NULs and small values, to reach the strings */
			int x = rand_r(&seed);

			msg[k] = (uint8_t)(x % 3 ? x >> 8 : x % 5);
		}
		if (n >= sizeof(struct st_insp_hdr) && rand_r(&seed) % 4) {
			uint32_t t = ST_INSP_OBJECT - 1 + (uint32_t)rand_r(&seed) % 6;

			memcpy(msg + offsetof(struct st_insp_hdr, type), &t, 4);
			set_len(msg, n);
		}
		if (n && rand_r(&seed) % 2)
			msg[n - 1] = '\0';
		if (n >= sizeof(struct st_insp_object) && rand_r(&seed) % 2) {
			/* a path and link length that add up */
			uint16_t pl = (uint16_t)(n - sizeof(struct st_insp_object)), ll = 0;

			if (pl > 4 && rand_r(&seed) % 2) {
				ll = (uint16_t)(rand_r(&seed) % (pl - 2));
				pl = (uint16_t)(pl - ll);
				msg[sizeof(struct st_insp_object) + pl - 1] = '\0';
			}
			msg[sizeof(struct st_insp_object)] = '/';
			memcpy(msg + offsetof(struct st_insp_object, path_len), &pl, 2);
			memcpy(msg + offsetof(struct st_insp_object, link_len), &ll, 2);
		}
		if (parse_in(msg, n, &r, &b) == 0)
			accepted++;
		free(b);
	}
	ck_assert_int_gt(accepted, 0); /* random replies got past the header */
}
END_TEST

int main(void)
{
	return st_run_tests("insp_msg",
			    ST_TESTS(object_parses, object_lengths_must_add_up,
				     object_strings_checked, object_facts_checked, line_table, found,
				     done, headers_checked, truncations_rejected,
				     random_input_in_bounds));
}
