/*
 * Unit tests of the daemon's message parsers (ctl/daemon/wire/msg.c): valid
 * messages parse to exactly what was sent; truncated, inconsistent or
 * random ones are rejected with a reason, never read out of bounds.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/abi.h"
#include "ctl/daemon/wire/msg.h"
#include "tests/unit/run.h"

/* A PROVIDER message as a process sends it: two tracepoints. */
static size_t build_provider(uint8_t *buf, size_t cap)
{
	struct st_abi_provider h = { { ST_MSG_PROVIDER, 0 }, 3, 2, "pthread" };
	uint8_t *p = buf + sizeof(h);
	const struct {
		uint32_t slot;
		const char *name;
		uint32_t nf;
		struct {
			uint32_t type;
			const char *name;
		} f[3];
	} tps[2] = {
		{ 0, "mutex_lock", 3, { { ST_TYPE_HEX64, "mutex" }, { ST_TYPE_S32, "result" },
					{ ST_TYPE_U64, "wait_ns" } } },
		{ 5, "mutex_unlock", 1, { { ST_TYPE_HEX64, "mutex" } } },
	};

	for (int i = 0; i < 2; i++) {
		memcpy(p, &tps[i].slot, 4);
		memcpy(p + 4, &tps[i].nf, 4);
		p += 8;
		strcpy((char *)p, tps[i].name);
		p += strlen(tps[i].name) + 1;
		for (uint32_t k = 0; k < tps[i].nf; k++) {
			memcpy(p, &tps[i].f[k].type, 4);
			p += 4;
			strcpy((char *)p, tps[i].f[k].name);
			p += strlen(tps[i].f[k].name) + 1;
		}
	}
	h.hdr.len = (uint32_t)(p - buf);
	ck_assert_uint_le(h.hdr.len, cap);
	memcpy(buf, &h, sizeof(h));
	return h.hdr.len;
}

START_TEST(provider_parses)
{
	uint8_t buf[1024];
	size_t n = build_provider(buf, sizeof(buf));
	struct st_msg_provider m;
	const char *err = NULL;
	uint32_t type;

	ck_assert_int_eq(st_msg_check(buf, n, &type, &err), 0);
	ck_assert_uint_eq(type, ST_MSG_PROVIDER);
	ck_assert_int_eq(st_msg_parse_provider(buf, n, &m, &err), 0);
	ck_assert_str_eq(m.name, "pthread");
	ck_assert_uint_eq(m.page, 3);
	ck_assert_uint_eq(m.count, 2);
	ck_assert_str_eq(m.tps[0].name, "mutex_lock");
	ck_assert_uint_eq(m.tps[0].nfields, 3);
	ck_assert_str_eq(m.tps[0].fields[2].name, "wait_ns");
	ck_assert_uint_eq(m.tps[0].fields[2].type, ST_TYPE_U64);
	ck_assert_uint_eq(m.tps[1].slot, 5);
	ck_assert_str_eq(m.tps[1].fields[0].name, "mutex");
	free(m.tps);
}
END_TEST

START_TEST(provider_truncated_rejected)
{
	uint8_t buf[1024], cut[1024];
	size_t n = build_provider(buf, sizeof(buf));

	for (size_t len = 0; len < n; len++) {
		struct st_msg_provider m;
		const char *err = NULL;

		/* a copy of exactly len bytes: a read past it would be caught
		 * by the sanitizers or valgrind */
		memcpy(cut, buf, len);
		((struct st_abi_msg *)cut)->len = (uint32_t)len;
		ck_assert_int_eq(st_msg_parse_provider(cut, len, &m, &err), -1);
		ck_assert_ptr_nonnull(err);
		ck_assert_ptr_null(m.tps);
	}
}
END_TEST

START_TEST(provider_inconsistent_rejected)
{
	uint8_t buf[1024];
	size_t n;
	struct st_msg_provider m;
	const char *err;
	struct st_abi_provider *h = (struct st_abi_provider *)buf;

	/* count larger than what follows */
	n = build_provider(buf, sizeof(buf));
	h->count = 3;
	ck_assert_int_eq(st_msg_parse_provider(buf, n, &m, &err), -1);
	/* the control page */
	n = build_provider(buf, sizeof(buf));
	h->page = 0;
	ck_assert_int_eq(st_msg_parse_provider(buf, n, &m, &err), -1);
	/* a name that is not an identifier (it ends up in the metadata) */
	n = build_provider(buf, sizeof(buf));
	strcpy(h->name, "a\"b");
	ck_assert_int_eq(st_msg_parse_provider(buf, n, &m, &err), -1);
	/* no NUL in the fixed name */
	n = build_provider(buf, sizeof(buf));
	memset(h->name, 'a', sizeof(h->name));
	ck_assert_int_eq(st_msg_parse_provider(buf, n, &m, &err), -1);
	/* a slot beyond the page */
	n = build_provider(buf, sizeof(buf));
	memcpy(buf + sizeof(*h), &(uint32_t){ ST_PROVIDER_MAX_TRACEPOINTS }, 4);
	ck_assert_int_eq(st_msg_parse_provider(buf, n, &m, &err), -1);
	/* trailing bytes */
	n = build_provider(buf, sizeof(buf));
	buf[n] = 0;
	h->hdr.len = (uint32_t)n + 1;
	ck_assert_int_eq(st_msg_parse_provider(buf, n + 1, &m, &err), -1);
	/* an unknown field type: the last one is the highest */
	n = build_provider(buf, sizeof(buf));
	memcpy(buf + sizeof(*h) + 8 + sizeof("mutex_lock"), &(uint32_t){ 99 }, 4);
	ck_assert_int_eq(st_msg_parse_provider(buf, n, &m, &err), -1);
	memcpy(buf + sizeof(*h) + 8 + sizeof("mutex_lock"), &(uint32_t){ ST_TYPE_LAST + 1 }, 4);
	ck_assert_int_eq(st_msg_parse_provider(buf, n, &m, &err), -1);
	memcpy(buf + sizeof(*h) + 8 + sizeof("mutex_lock"), &(uint32_t){ ST_TYPE_DOUBLE }, 4);
	ck_assert_int_eq(st_msg_parse_provider(buf, n, &m, &err), 0);
	ck_assert_uint_eq(m.tps[0].fields[0].type, ST_TYPE_DOUBLE);
	free(m.tps);
}
END_TEST

START_TEST(check_rejects_bad_headers)
{
	uint8_t buf[64] = { 0 };
	struct st_abi_msg *h = (struct st_abi_msg *)buf;
	const char *err;
	uint32_t type;

	ck_assert_int_eq(st_msg_check(buf, 4, &type, &err), -1);
	h->type = ST_MSG_SYNC;
	h->len = 20;
	ck_assert_int_eq(st_msg_check(buf, 16, &type, &err), -1); /* len mismatch */
	h->len = 12;
	ck_assert_int_eq(st_msg_check(buf, 12, &type, &err), -1); /* wrong size */
	h->len = sizeof(struct st_abi_sync);
	ck_assert_int_eq(st_msg_check(buf, sizeof(struct st_abi_sync), &type, &err), 0);
	h->type = 999;
	ck_assert_int_eq(st_msg_check(buf, sizeof(struct st_abi_sync), &type, &err), -1);
}
END_TEST

START_TEST(hello_parses_and_rejects)
{
	uint8_t buf[256];
	struct st_abi_hello *h = (struct st_abi_hello *)buf;
	struct st_msg_hello out;
	const char *err;
	size_t n;

	memset(buf, 0, sizeof(buf));
	h->hdr.type = ST_MSG_HELLO;
	h->version = ST_ABI_VERSION;
	h->ppid = 1;
	h->status_size = 3 * ST_ABI_PAGE;
	memcpy(h->name, "prog\nname", 9);
	strcpy((char *)buf + sizeof(*h), "/usr/bin/prog");
	n = sizeof(*h) + sizeof("/usr/bin/prog");
	h->hdr.len = (uint32_t)n;
	ck_assert_int_eq(st_msg_parse_hello(buf, n, &out, &err), 0);
	ck_assert_str_eq(out.exe, "/usr/bin/prog");
	/* data, kept as it is (escaped where it is shown: ctl/common/escape.h) */
	ck_assert_str_eq(out.name, "prog\nname");
	/* unterminated path */
	ck_assert_int_eq(st_msg_parse_hello(buf, n - 1, &out, &err), -1);
	/* other version */
	h->version = ST_ABI_VERSION + 1;
	ck_assert_int_eq(st_msg_parse_hello(buf, n, &out, &err), -1);
	h->version = ST_ABI_VERSION;
	/* status size not whole pages */
	h->status_size = 100;
	ck_assert_int_eq(st_msg_parse_hello(buf, n, &out, &err), -1);
}
END_TEST

START_TEST(random_input_never_crashes)
{
	uint8_t *buf = malloc(ST_ABI_MSG_MAX);
	unsigned seed = 12345;

	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)rand_r(&seed) % 512;
		struct st_msg_provider m;
		struct st_msg_hello hello;
		const char *err;
		uint32_t type;

		for (size_t k = 0; k < n; k++)
			buf[k] = (uint8_t)rand_r(&seed);
		if (n >= sizeof(struct st_abi_msg)) {
			((struct st_abi_msg *)buf)->len = (uint32_t)n;
			((struct st_abi_msg *)buf)->type = 1 + (uint32_t)rand_r(&seed) % 12;
		}
		if (st_msg_check(buf, n, &type, &err) == 0) {
			if (type == ST_MSG_PROVIDER && st_msg_parse_provider(buf, n, &m, &err) == 0)
				free(m.tps);
			if (type == ST_MSG_HELLO)
				st_msg_parse_hello(buf, n, &hello, &err);
		}
	}
	free(buf);
}
END_TEST

START_TEST(names)
{
	ck_assert(st_name_valid("mutex_lock"));
	ck_assert(st_name_valid("_x9"));
	ck_assert(!st_name_valid("9x"));
	ck_assert(!st_name_valid(""));
	ck_assert(!st_name_valid("a-b"));
	ck_assert(!st_name_valid("a b"));
	ck_assert(!st_name_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}
END_TEST

int main(void)
{
	return st_run_tests("msg", ST_TESTS(provider_parses, provider_truncated_rejected,
						provider_inconsistent_rejected,
						check_rejects_bad_headers,
						hello_parses_and_rejects,
						random_input_never_crashes, names));
}
