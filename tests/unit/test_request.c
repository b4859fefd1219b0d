/*
 * Unit tests of the parser of control requests (st_request_parse(),
 * ctl/daemon/wire/request.c): a verb, then "key=value" items, each
 * NUL-terminated. Valid requests split into exactly what was sent;
 * malformed, truncated or random ones are rejected, or (a truncation that
 * is itself a request) parsed with every string inside the buffer. Inputs
 * are exact-size heap copies, so a read past one is caught by the
 * sanitizers or valgrind.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/daemon/wire/request.h"
#include "tests/unit/run.h"

/* Parses an exact-size heap copy of len bytes of s. */
static int parse(struct st_request *r, const char *s, size_t len, char **copy)
{
	*copy = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(*copy);
	memcpy(*copy, s, len);
	return st_request_parse(r, *copy, len);
}

static int parse_free(const char *s, size_t len)
{
	struct st_request r;
	char *copy;
	int rc = parse(&r, s, len, &copy);

	free(copy);
	return rc;
}

/* A string literal with its final NUL. */
#define REQ(s) (s), sizeof(s)

/* What a caller relies on in a parsed request: a non-empty verb at the
 * start, then items, one after the other up to the end, each a string
 * inside the buffer with a '=' after a non-empty key. */
static void assert_sane(const struct st_request *r, const char *buf, size_t len)
{
	const char *end = buf + len, *next;

	ck_assert_ptr_eq(r->verb, buf);
	ck_assert_ptr_nonnull(memchr(buf, '\0', len));
	ck_assert_int_ne(r->verb[0], '\0');
	ck_assert_uint_le(r->nitems, ST_REQ_MAX_ITEMS);
	next = r->verb + strlen(r->verb) + 1;
	for (uint32_t i = 0; i < r->nitems; i++) {
		const char *it = r->items[i], *eq;

		ck_assert_ptr_eq(it, next);
		ck_assert(it < end);
		ck_assert_ptr_nonnull(memchr(it, '\0', (size_t)(end - it)));
		eq = strchr(it, '=');
		ck_assert_ptr_nonnull(eq);
		ck_assert_ptr_ne(eq, it);
		next = it + strlen(it) + 1;
	}
	ck_assert_ptr_eq(next, end);
}

START_TEST(request_with_items)
{
	struct st_request r;
	char *b;

	ck_assert_int_eq(parse(&r, REQ("start\0session=foo\0mode=ring\0filter=a=b"), &b), 0);
	ck_assert_str_eq(r.verb, "start");
	ck_assert_uint_eq(r.nitems, 3);
	ck_assert_str_eq(r.items[0], "session=foo");
	ck_assert_str_eq(r.items[1], "mode=ring");
	ck_assert_str_eq(r.items[2], "filter=a=b"); /* a value may hold '=' */
	assert_sane(&r, b, sizeof("start\0session=foo\0mode=ring\0filter=a=b"));
	free(b);

	/* a verb alone; an empty value */
	ck_assert_int_eq(parse(&r, REQ("status"), &b), 0);
	ck_assert_str_eq(r.verb, "status");
	ck_assert_uint_eq(r.nitems, 0);
	free(b);
	ck_assert_int_eq(parse(&r, REQ("stop\0session="), &b), 0);
	ck_assert_uint_eq(r.nitems, 1);
	ck_assert_str_eq(r.items[0], "session=");
	free(b);
}
END_TEST

START_TEST(repeated_keys_kept)
{
	struct st_request r;
	char *b;

	ck_assert_int_eq(parse(&r, REQ("enable\0event=a\0session=s\0event=b\0event=a"), &b), 0);
	ck_assert_str_eq(r.verb, "enable");
	ck_assert_uint_eq(r.nitems, 4);
	ck_assert_str_eq(r.items[0], "event=a");
	ck_assert_str_eq(r.items[1], "session=s");
	ck_assert_str_eq(r.items[2], "event=b");
	ck_assert_str_eq(r.items[3], "event=a");
	free(b);
}
END_TEST

START_TEST(malformed_rejected)
{
	/* nothing; an empty verb */
	ck_assert_int_eq(parse_free("", 0), -1);
	ck_assert_int_eq(parse_free(REQ("")), -1);
	ck_assert_int_eq(parse_free(REQ("\0a=b")), -1);
	/* no final NUL */
	ck_assert_int_eq(parse_free("status", 6), -1);
	ck_assert_int_eq(parse_free("start\0session=foo", 17), -1);
	/* an item without '=', an empty item, an empty key */
	ck_assert_int_eq(parse_free(REQ("start\0session")), -1);
	ck_assert_int_eq(parse_free(REQ("start\0a=b\0session\0c=d")), -1);
	ck_assert_int_eq(parse_free(REQ("start\0")), -1);
	ck_assert_int_eq(parse_free(REQ("start\0a=b\0\0c=d")), -1);
	ck_assert_int_eq(parse_free(REQ("start\0=foo")), -1);
	ck_assert_int_eq(parse_free(REQ("start\0a=b\0=")), -1);
}
END_TEST

/* A request of a verb and n items "k=v". */
static size_t build_items(char *buf, uint32_t n)
{
	size_t len = 0;

	memcpy(buf, "set", 4);
	len += 4;
	for (uint32_t i = 0; i < n; i++) {
		memcpy(buf + len, "k=v", 4);
		len += 4;
	}
	return len;
}

START_TEST(item_count_bounded)
{
	static char buf[4 + 4 * (ST_REQ_MAX_ITEMS + 1)];
	struct st_request r;
	size_t len;
	char *b;

	len = build_items(buf, ST_REQ_MAX_ITEMS);
	ck_assert_int_eq(parse(&r, buf, len, &b), 0);
	ck_assert_uint_eq(r.nitems, ST_REQ_MAX_ITEMS);
	assert_sane(&r, b, len);
	free(b);
	len = build_items(buf, ST_REQ_MAX_ITEMS + 1);
	ck_assert_int_eq(parse(&r, buf, len, &b), -1);
	ck_assert_uint_le(r.nitems, ST_REQ_MAX_ITEMS);
	free(b);
}
END_TEST

START_TEST(truncations_in_bounds)
{
	static const char req[] = "start\0session=foo\0mode=ring\0event=a=b\0x=";
	struct st_request r;

	for (size_t len = 0; len <= sizeof(req); len++) {
		char *b;
		int rc = parse(&r, req, len, &b);

		/* every item of req is valid: a cut right after a NUL is a
		 * request of whole items, any other cut is rejected */
		ck_assert_int_eq(rc, len && req[len - 1] == '\0' ? 0 : -1);
		if (rc == 0)
			assert_sane(&r, b, len);
		free(b);
	}
}
END_TEST

START_TEST(random_input_in_bounds)
{
	static const char alphabet[] = { '\0', '\0', '=', '=', 'a', 'b', '\n', '\xff' };
	unsigned seed = 4242;
	int accepted = 0;

	for (int i = 0; i < 50000; i++) {
		size_t n = (size_t)rand_r(&seed) % 64;
		struct st_request r;
		char *b = malloc(n ? n : 1);

		ck_assert_ptr_nonnull(b);
		for (size_t k = 0; k < n; k++)
			b[k] = (i & 1) ? alphabet[rand_r(&seed) % sizeof(alphabet)]
				       : (char)rand_r(&seed);
		if (n && rand_r(&seed) % 2)
			b[n - 1] = '\0';
		if (st_request_parse(&r, b, n) == 0) {
			assert_sane(&r, b, n);
			accepted++;
		}
		free(b);
	}
	ck_assert_int_gt(accepted, 0); /* the random requests reached the items */
}
END_TEST

int main(void)
{
	return st_run_tests("request", ST_TESTS(request_with_items, repeated_keys_kept,
						    malformed_rejected, item_count_bounded,
						    truncations_in_bounds, random_input_in_bounds));
}
