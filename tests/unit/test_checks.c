/*
 * Unit tests of what the command line and the daemon both check
 * (ctl/common/checks.c): session names, tracepoint patterns and pid lists, each
 * refusal with its reason; the buffer geometry chosen or refused for every
 * way of giving the two sizes, and the exact text that shows it; the
 * memory bounds of a session and their refusals.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "core/abi.h"
#include "ctl/common/checks.h"
#include "tests/unit/run.h"

#define K 1024ull
#define M (1024ull * K)
#define G (1024ull * M)

static void geometry_is(uint64_t b, uint64_t s, uint64_t want_b, uint32_t want_sb,
			uint32_t want_n)
{
	struct st_geometry g;
	char why[256] = "";

	ck_assert_msg(st_geometry(b, s, &g, why, sizeof(why)) == 0, "%llu/%llu refused: %s",
		      (unsigned long long)b, (unsigned long long)s, why);
	ck_assert_uint_eq(g.buffer_size, want_b);
	ck_assert_uint_eq(g.sb_size, want_sb);
	ck_assert_uint_eq(g.sb_count, want_n);
	ck_assert_uint_eq((uint64_t)g.sb_size * g.sb_count, g.buffer_size);
}

static void geometry_refused(uint64_t b, uint64_t s, const char *says)
{
	struct st_geometry g;
	char why[256] = "";

	ck_assert_int_eq(st_geometry(b, s, &g, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, says), "'%s' lacks '%s'", why, says);
}

static void pattern_refused(const char *p, const char *says)
{
	char why[256] = "";

	ck_assert_msg(st_pattern_check(p, why, sizeof(why)) == -1, "'%s' accepted", p);
	ck_assert_msg(strstr(why, says), "'%s': '%s' lacks '%s'", p, why, says);
}

START_TEST(patterns)
{
	static const char *const good[] = {
		"pthread:*", "pthread:mutex_lock", "*", "*:*lock", "pthread:mutex_[lu]*",
		"pthread:mutex_[!t]*", "pthread:[]x]", "p?thread:*", "pthread:mutex\\_lock",
		"lttng_ust_lib:*", "[a-z]*:x",
	};
	char why[256], longest[ST_PATTERN_MAX + 2];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(st_pattern_check(good[i], why, sizeof(why)) == 0, "'%s': %s", good[i],
			      why);
	pattern_refused("", "an empty pattern");
	pattern_refused("pthread:[mutex", "'[' without its ']'");
	pattern_refused("pthread:[]", "'[' without its ']'");
	pattern_refused("pthread:mutex\\", "lone backslash");
	pattern_refused("a:b:c", "more than one ':'");
	pattern_refused("pthread.mutex_lock", "'.' is in no tracepoint name");
	pattern_refused("pthread: mutex", "' ' is in no tracepoint name");
	pattern_refused("pthread/*", "'/' is in no tracepoint name");
	memset(longest, 'a', ST_PATTERN_MAX);
	longest[ST_PATTERN_MAX] = '\0';
	ck_assert_int_eq(st_pattern_check(longest, why, sizeof(why)), 0);
	longest[ST_PATTERN_MAX] = 'a';
	longest[ST_PATTERN_MAX + 1] = '\0';
	pattern_refused(longest, "longer than 129 characters");
}
END_TEST

static void pids_refused(const char *s, const char *says)
{
	pid_t pids[ST_RULE_MAX_PIDS];
	size_t n;
	char why[256] = "";

	ck_assert_msg(st_pid_list_parse(s, pids, ST_RULE_MAX_PIDS, &n, why, sizeof(why)) == -1,
		      "'%s' accepted", s);
	ck_assert_msg(strstr(why, says), "'%s': '%s' lacks '%s'", s, why, says);
}

START_TEST(pid_lists)
{
	pid_t pids[ST_RULE_MAX_PIDS];
	size_t n;
	char why[256], many[ST_RULE_MAX_PIDS * 4 + 8] = "";

	ck_assert_int_eq(st_pid_list_parse("1,22,4194304", pids, ST_RULE_MAX_PIDS, &n, why,
					   sizeof(why)), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(pids[0], 1);
	ck_assert_int_eq(pids[1], 22);
	ck_assert_int_eq(pids[2], 4194304);
	pids_refused("1,,3", "'1,,3' has an empty element");
	pids_refused("", "empty element");
	pids_refused(",1", "empty element");
	pids_refused("1,", "empty element");
	pids_refused("1,x", "'x' is not a pid");
	pids_refused("12a", "'12a' is not a pid");
	pids_refused("-3", "'-3' is not a pid");
	pids_refused("+3", "'+3' is not a pid");
	pids_refused(" 3", "' 3' is not a pid");
	pids_refused("0", "0 is out of the range of pids (1 to 4194304)");
	pids_refused("4194305", "out of the range");
	pids_refused("99999999999999999999999", "is not a pid");
	pids_refused("123456789012345678901234567890", "is not a pid");
	for (int i = 0; i <= ST_RULE_MAX_PIDS; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s%d", i ? "," : "", i + 1);
	pids_refused(many, "more than 64 pids");
}
END_TEST

START_TEST(session_names)
{
	char name[80];

	ck_assert(st_session_name_ok("web"));
	ck_assert(st_session_name_ok("_x9"));
	ck_assert(!st_session_name_ok(""));
	ck_assert(!st_session_name_ok("9x"));
	ck_assert(!st_session_name_ok("a-b"));
	memset(name, 'a', 63);
	name[63] = '\0';
	ck_assert(st_session_name_ok(name)); /* 63: the most */
	name[63] = 'a';
	name[64] = '\0';
	ck_assert(!st_session_name_ok(name));
	ck_assert_ptr_nonnull(strstr(ST_SESSION_NAME_RULE, "63"));
}
END_TEST

START_TEST(geometry_defaults)
{
	geometry_is(0, 0, 32 * M, M, 32);
}
END_TEST

START_TEST(geometry_from_buffer)
{
	geometry_is(32 * M, 0, 32 * M, M, 32);
	geometry_is(4 * M, 0, 4 * M, M, 4);
	geometry_is(1 * M, 0, M, 256 * K, 4);	/* the case of the issue: said, not silent */
	geometry_is(3 * M, 0, 3 * M, 512 * K, 6);
	geometry_is(8 * K, 0, 8 * K, 4 * K, 2); /* the smallest */
	geometry_is(16 * K, 0, 16 * K, 4 * K, 4);
	geometry_is(2 * G, 0, 2 * G, 2 * M, 1024);
	geometry_is(64 * G, 0, 64 * G, 64 * M, 1024); /* the largest */
	geometry_refused(4 * K, 0, "8 KiB (2 sub-buffers of 4 KiB)");
	geometry_refused(65 * G, 0, "64 GiB (1024 of 64 MiB)");
	geometry_refused(1028 * K, 0, "not a whole number of the 256 KiB sub-buffers");
	geometry_refused(5000, 0, "multiple of 4 KiB");
}
END_TEST

START_TEST(geometry_from_subbuf)
{
	geometry_is(0, M, 32 * M, M, 32);
	geometry_is(0, 16 * M, 32 * M, 16 * M, 2);
	geometry_is(0, 64 * M, 128 * M, 64 * M, 2);  /* at least 2 */
	geometry_is(0, 4 * K, 4 * M, 4 * K, 1024);   /* at most 1024 */
	geometry_refused(0, 1000, "--subbuf-size 1000 bytes: a sub-buffer size is a multiple of 4 KiB");
	geometry_refused(0, 128 * M, "from 4 KiB to 64 MiB");
}
END_TEST

START_TEST(geometry_from_both)
{
	geometry_is(M, 256 * K, M, 256 * K, 4);
	geometry_is(2 * M, M, 2 * M, M, 2);
	geometry_refused(M, M, "--buffer-size 1 MiB and --subbuf-size 1 MiB disagree");
	geometry_refused(3 * M, 2 * M, "disagree");
	geometry_refused(8 * M, 4 * K, "disagree"); /* 2048 sub-buffers */
}
END_TEST

START_TEST(sizes_as_text)
{
	struct st_geometry g = { 32 * M, (uint32_t)M, 32 };
	char buf[128];

	st_size_text(256 * K, buf, sizeof(buf));
	ck_assert_str_eq(buf, "256 KiB");
	st_size_text(1536 * K, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1536 KiB");
	st_size_text(2 * G, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2 GiB");
	st_size_text(4097, buf, sizeof(buf));
	ck_assert_str_eq(buf, "4097 bytes");
	st_buffers_text(ST_BUFFERS_PER_THREAD, &g, 2 * G, 63, buf, sizeof(buf));
	ck_assert_str_eq(buf, "32 MiB per thread: 32 sub-buffers of 1 MiB; at most 2 GiB per process "
			      "(63 thread buffers)");
	st_buffers_text(ST_BUFFERS_PER_CPU, &g, 64 * M, 2, buf, sizeof(buf));
	ck_assert_str_eq(buf, "32 MiB per CPU: 32 sub-buffers of 1 MiB; 64 MiB per process (2 CPUs)");
	st_size_approx(4000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "4000 bytes");
	st_size_approx(68 * K, buf, sizeof(buf));
	ck_assert_str_eq(buf, "68.0 KiB");
	st_size_approx(32 * M + 4 * K, buf, sizeof(buf));
	ck_assert_str_eq(buf, "32.0 MiB");
	st_size_approx(12 * G + 512 * M, buf, sizeof(buf));
	ck_assert_str_eq(buf, "12.5 GiB");
	st_size_approx(2 * G, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2.0 GiB");
	st_size_approx(1000 * M, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1000.0 MiB");
}
END_TEST

static void bounds_are(uint64_t max, uint64_t proc, uint64_t def, uint64_t want_session,
		       uint64_t want_process, uint32_t want_slots)
{
	struct st_geometry g = { 32 * M, (uint32_t)M, 32 }; /* a buffer takes 32 MiB + 4 KiB */
	struct st_memory_bounds b;
	char why[256] = "";

	ck_assert_msg(st_memory_bounds(max, proc, def, &g, &b, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(b.session, want_session);
	ck_assert_uint_eq(b.process, want_process);
	ck_assert_uint_eq(b.slot_bytes, 32 * M + 4 * K);
	ck_assert_uint_eq(b.nslots, want_slots);
}

static void bounds_refused(uint64_t max, uint64_t proc, uint64_t def, const char *says)
{
	struct st_geometry g = { 32 * M, (uint32_t)M, 32 };
	struct st_memory_bounds b;
	char why[256] = "";

	ck_assert_int_eq(st_memory_bounds(max, proc, def, &g, &b, why, sizeof(why)), -1);
	ck_assert_msg(strcmp(why, says) == 0, "'%s', not '%s'", why, says);
}

START_TEST(memory_bounds)
{
	/* defaults: the share is 2 GiB, or the bound if smaller */
	bounds_are(0, 0, 12 * G, 12 * G, 2 * G, 63);
	bounds_are(0, 0, G, G, G, 31);
	bounds_are(G, 0, 12 * G, G, G, 31);
	bounds_are(0, 64 * M + 8 * K, 12 * G, 12 * G, 64 * M + 8 * K, 2);
	bounds_are(64 * M, 64 * M, 0, 64 * M, 64 * M, 1);
	/* exactly one buffer */
	bounds_are(32 * M + 4 * K, 0, 12 * G, 32 * M + 4 * K, 32 * M + 4 * K, 1);
	/* at most ST_ABI_SLOTS_MAX buffers, whatever the share */
	bounds_are(0, 256 * G, 512 * G, 512 * G, 256 * G, ST_ABI_SLOTS_MAX);
	bounds_refused(32 * M, 0, 12 * G, "--max-memory 32 MiB is below one thread's buffer (32772 KiB)");
	bounds_refused(0, 0, 16 * M,
		       "the default --max-memory (half the physical memory) 16 MiB is below one "
		       "thread's buffer (32772 KiB)");
	bounds_refused(G, 32 * M, 0, "--process-memory 32 MiB is below one thread's buffer (32772 KiB)");
	bounds_refused(G, 2 * G, 0, "--process-memory 2 GiB is above the session's bound, --max-memory 1 GiB");
	bounds_refused(0, 2 * G, G,
		       "--process-memory 2 GiB is above the session's bound, the default "
		       "--max-memory (half the physical memory) 1 GiB");
	/* the default bound is whole MiB, and never 0 */
	ck_assert_uint_gt(st_default_max_memory(), 0);
	ck_assert_uint_eq(st_default_max_memory() % M, 0);
}
END_TEST

static void timeout_is(const char *arg, uint32_t want)
{
	uint32_t ms = 0;
	char why[256] = "";

	ck_assert_msg(st_blocking_parse(arg, &ms, why, sizeof(why)) == 0, "'%s' refused: %s", arg, why);
	ck_assert_uint_eq(ms, want);
}

START_TEST(blocking_timeouts)
{
	static const char *const bad[] = { "", "0ms", "0s", "5", "ms", "1.5s", "2sec", "2 s", "-1s",
					   "+1s", "25h", "1441min", "86400001ms",
					   "99999999999999999999ms", "1S", "10x" };
	char why[256], text[64];
	uint32_t ms;

	timeout_is(NULL, ST_ABI_BLOCK_FOREVER);
	timeout_is("1ms", 1);
	timeout_is("100ms", 100);
	timeout_is("2s", 2000);
	timeout_is("1min", 60000);
	timeout_is("24h", 86400000);
	timeout_is("86400000ms", 86400000);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(st_blocking_parse(bad[i], &ms, why, sizeof(why)) == -1, "'%s' accepted",
			      bad[i]);
		ck_assert_msg(strstr(why, "TIMEOUT is a whole number and a unit"), "'%s': %s", bad[i],
			      why);
	}
	/* discard mode only */
	ck_assert_int_eq(st_blocking_check(ST_MODE_DISCARD, ST_ABI_BLOCK_FOREVER, why, sizeof(why)), 0);
	ck_assert_int_eq(st_blocking_check(ST_MODE_OVERWRITE, 0, why, sizeof(why)), 0);
	ck_assert_int_eq(st_blocking_check(ST_MODE_OVERWRITE, 100, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "--blocking and --overwrite"), "%s", why);
	ck_assert_int_eq(st_blocking_check(ST_MODE_DISCARD, ST_BLOCK_MAX_MS + 1, why, sizeof(why)), -1);
	/* shown in the largest unit that divides it */
	st_mode_text(ST_MODE_DISCARD, 0, text, sizeof(text));
	ck_assert_str_eq(text, "discard");
	st_mode_text(ST_MODE_OVERWRITE, 0, text, sizeof(text));
	ck_assert_str_eq(text, "overwrite");
	st_mode_text(ST_MODE_DISCARD, ST_ABI_BLOCK_FOREVER, text, sizeof(text));
	ck_assert_str_eq(text, "discard, blocking (no timeout)");
	st_mode_text(ST_MODE_DISCARD, 2000, text, sizeof(text));
	ck_assert_str_eq(text, "discard, blocking (timeout 2s)");
	st_mode_text(ST_MODE_DISCARD, 1500, text, sizeof(text));
	ck_assert_str_eq(text, "discard, blocking (timeout 1500ms)");
	st_mode_text(ST_MODE_DISCARD, 7200000, text, sizeof(text));
	ck_assert_str_eq(text, "discard, blocking (timeout 2h)");
}
END_TEST

int main(void)
{
	return st_run_tests("checks", ST_TESTS(session_names, patterns, pid_lists, geometry_defaults, geometry_from_buffer,
					       geometry_from_subbuf, geometry_from_both,
					       sizes_as_text, blocking_timeouts, memory_bounds));
}
