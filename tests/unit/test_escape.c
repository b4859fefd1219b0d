/*
 * Unit tests of the escaping of text from others (ctl/common/escape.c): what is
 * shown as it is, what becomes \xHH, \\ and \", the JSON form, cuts at
 * whole escapes, the UTF-8 decoder on every kind of malformed sequence,
 * and random bytes (no raw control byte or invalid UTF-8 ever comes out,
 * and text escapes read back to the input); --procname's refusal of
 * control characters (ctl/common/checks.c).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/common/checks.h"
#include "ctl/common/escape.h"
#include "tests/unit/run.h"

static void text_is(const char *in, const char *want)
{
	char out[256];

	ck_assert_str_eq(st_esc(out, sizeof(out), in), want);
}

static void json_is(const char *in, const char *want)
{
	char out[256];
	size_t used, n = st_esc_part(out, sizeof(out), in, strlen(in), ST_ESC_JSON, &used);

	out[n] = '\0';
	ck_assert_uint_eq(used, strlen(in));
	ck_assert_str_eq(out, want);
}

START_TEST(text_rule)
{
	text_is("", "");
	text_is("plain name_1.2 /usr/bin/x", "plain name_1.2 /usr/bin/x");
	/* the terminal attack of issue 21 */
	text_is("\x1b]2;PWN\a\x1b[8mhidden\nfake line",
		"\\x1b]2;PWN\\x07\\x1b[8mhidden\\x0afake line");
	text_is("tab\there\rDEL\x7f", "tab\\x09here\\x0dDEL\\x7f");
	text_is("back\\slash", "back\\\\slash");
	text_is("\"quoted\"", "\"quoted\""); /* (only ST_ESC_QUOTE escapes it) */
	/* UTF-8 stays readable; C1 controls and bytes that are not UTF-8 do not */
	text_is("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	text_is("\xc2\x9b" "2J", "\\xc2\\x9b2J");
	text_is("\x9b" "2J", "\\x9b2J");
	text_is("\xff\xfe", "\\xff\\xfe");
	text_is("\xc3", "\\xc3");		     /* cut short */
	text_is("\xc3(", "\\xc3(");		     /* not followed by a continuation */
	text_is("\xc0\xaf", "\\xc0\\xaf");	     /* overlong '/' */
	text_is("\xe0\x80\xaf", "\\xe0\\x80\\xaf");   /* overlong */
	text_is("\xed\xa0\x80", "\\xed\\xa0\\x80");   /* a surrogate */
	text_is("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* beyond U+10FFFF */
	text_is("\xf8\x88\x80\x80\x80", "\\xf8\\x88\\x80\\x80\\x80");
}
END_TEST

START_TEST(quote_and_json)
{
	char out[64];
	size_t used, n;

	n = st_esc_part(out, sizeof(out), "say \"hi\"\\", 9, ST_ESC_QUOTE, &used);
	out[n] = '\0';
	ck_assert_str_eq(out, "say \\\"hi\\\"\\\\");
	json_is("a\"b\\c", "a\\\"b\\\\c");
	json_is("\x1b[8m\x7f\n", "\\u001b[8m\\u007f\\u000a");
	json_is("\xc2\x9b", "\\u009b");
	json_is("\xff" "x\xc3", "\\ufffdx\\ufffd");
	json_is("caf\xc3\xa9", "caf\xc3\xa9");
}
END_TEST

START_TEST(cuts)
{
	char out[8];

	/* a cut never splits an escape nor a character */
	ck_assert_str_eq(st_esc(out, sizeof(out), "ab\x1b" "cdef"), "ab\\x1bc");
	ck_assert_str_eq(st_esc(out, 6, "ab\x1b" "cdef"), "ab");
	ck_assert_str_eq(st_esc(out, 4, "a\xc3\xa9z"), "a\xc3\xa9");
	ck_assert_str_eq(st_esc(out, 3, "a\xc3\xa9z"), "a");
	ck_assert_str_eq(st_esc(out, 1, "abc"), "");
	/* appending */
	st_esc(out, sizeof(out), "ab");
	ck_assert_uint_eq(st_esc_cat(out, sizeof(out), "\n"), 6);
	ck_assert_str_eq(out, "ab\\x0a");
	ck_assert_uint_eq(st_esc_cat(out, sizeof(out), "\n"), 6);
	/* the size a string takes at most */
	{
		char big[ST_ESC_SIZE(3)];

		ck_assert_str_eq(st_esc(big, sizeof(big), "\x01\x02\x03"), "\\x01\\x02\\x03");
	}
}
END_TEST

/* Reads text escapes back: the inverse of ST_ESC_TEXT. */
static size_t unescape(const char *s, size_t n, unsigned char *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; k++) {
		if (s[i] != '\\') {
			out[k] = (unsigned char)s[i++];
		} else if (s[i + 1] == '\\') {
			out[k] = '\\';
			i += 2;
		} else {
			ck_assert_int_eq(s[i + 1], 'x');
			out[k] = (unsigned char)strtoul((char[]){ s[i + 2], s[i + 3], 0 }, NULL, 16);
			i += 4;
		}
	}
	return k;
}

START_TEST(random_bytes)
{
	unsigned char in[64], back[64];
	char out[ST_ESC_SIZE(64)];

	srand(21);
	for (int round = 0; round < 100000; round++) {
		size_t n = (size_t)rand() % sizeof(in), used, k;

		for (size_t i = 0; i < n; i++)
			in[i] = (unsigned char)(round % 3 ? rand() : rand() % 4 == 0 ? 0xc2 : rand());
		k = st_esc_part(out, sizeof(out), in, n, ST_ESC_TEXT, &used);
		ck_assert_uint_eq(used, n);
		for (size_t i = 0; i < k;) {
			int32_t cp;

			i += st_utf8_char((const unsigned char *)out + i, k - i, &cp);
			ck_assert_msg(cp >= 0 && !st_is_control(cp), "round %d: raw byte in the output",
				      round);
		}
		ck_assert_uint_eq(unescape(out, k, back), n);
		ck_assert(memcmp(back, in, n) == 0);
	}
}
END_TEST

START_TEST(procnames)
{
	char why[128];

	ck_assert_int_eq(st_procname_check("worker", why, sizeof(why)), 0);
	ck_assert_int_eq(st_procname_check("caf\xc3\xa9", why, sizeof(why)), 0);
	ck_assert_int_eq(st_procname_check("a\\b", why, sizeof(why)), 0);
	ck_assert_int_eq(st_procname_check("0123456789abcdef", why, sizeof(why)), 0);
	ck_assert_int_eq(st_procname_check("0123456789abcdefg", why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "1 to 16 characters"), "%s", why);
	ck_assert_int_eq(st_procname_check("", why, sizeof(why)), -1);
	ck_assert_int_eq(st_procname_check("ev\x1b]2;x\a", why, sizeof(why)), -1);
	ck_assert_str_eq(why, "a process name with a control character (0x1b)");
	ck_assert_int_eq(st_procname_check("a\nb", why, sizeof(why)), -1);
	ck_assert_int_eq(st_procname_check("del\x7f", why, sizeof(why)), -1);
	ck_assert_int_eq(st_procname_check("c1\xc2\x9b", why, sizeof(why)), -1);
	ck_assert_str_eq(why, "a process name with a control character (0x9b)");
}
END_TEST

int main(void)
{
	return st_run_tests("escape", ST_TESTS(text_rule, quote_and_json, cuts, random_bytes, procnames));
}
