/*
 * Unit tests of the reading of HotSpot's performance data
 * (ctl/inspect/hsperf.c): the attach capability found among other
 * counters, on or off; memory that does not say (another magic, the other
 * byte order, no such counter); entries that lie (a length too short or
 * past the end, a name or a value out of their entry); every truncation
 * of a good buffer and random bytes read within bounds (checked by
 * AddressSanitizer in a build with --enable-sanitizers).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/inspect/hsperf.h"
#include "tests/unit/inputs.h"
#include "tests/unit/run.h"

static unsigned char mem[4096];
static size_t used;

static void put32(size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		mem[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

/* A prologue with its entries from offset 32. */
static void prologue(void)
{
	memset(mem, 0, sizeof(mem));
	mem[0] = 0xca, mem[1] = 0xfe, mem[2] = 0xc0, mem[3] = 0xc0;
	mem[4] = 1; /* little endian */
	mem[5] = 2;
	put32(24, 32);
	used = 32;
}

/* An entry: name, then a string value of vlen bytes; its offset. */
static size_t entry(const char *name, const char *value, uint32_t vlen)
{
	size_t at = used, nlen = strlen(name) + 1, len = (20 + nlen + vlen + 7) & ~(size_t)7;

	put32(at, (uint32_t)len);
	put32(at + 4, 20);
	put32(at + 8, vlen);
	mem[at + 12] = 'B';
	put32(at + 16, (uint32_t)(20 + nlen));
	memcpy(mem + at + 20, name, nlen);
	memcpy(mem + at + 20 + nlen, value, strlen(value) < vlen ? strlen(value) : vlen);
	used += len;
	put32(28, mem[28] + 1u);
	return at;
}

static void jvm(const char *caps)
{
	prologue();
	entry("sun.rt.javaCommand", "JvmWork 100", 64);
	entry("java.property.java.vm.name", "OpenJDK 64-Bit Server VM", 64);
	entry("sun.rt.jvmCapabilities", caps, 65);
	entry("sun.os.hrt.frequency", "x", 8);
}

START_TEST(capability)
{
	jvm("1100000000000000000000000000000000000000000000000000000000000000");
	ck_assert_int_eq(st_hsperf_attachable(mem, used), 1);
	jvm("0100000000000000000000000000000000000000000000000000000000000000");
	ck_assert_int_eq(st_hsperf_attachable(mem, used), 0);
	jvm("x100");
	ck_assert_int_eq(st_hsperf_attachable(mem, used), -1);
	prologue();
	entry("sun.rt.javaCommand", "JvmWork", 64);
	ck_assert_int_eq(st_hsperf_attachable(mem, used), -1); /* not written yet */
}
END_TEST

START_TEST(not_ours)
{
	jvm("1");
	mem[0] = 0xc0;
	ck_assert_int_eq(st_hsperf_attachable(mem, used), -1);
	jvm("1");
	mem[4] = 0; /* big endian */
	ck_assert_int_eq(st_hsperf_attachable(mem, used), -1);
	ck_assert_int_eq(st_hsperf_attachable(mem, 31), -1);
}
END_TEST

START_TEST(lies)
{
	size_t at;

	jvm("1");
	put32(32, 4); /* an entry shorter than its header */
	ck_assert_int_eq(st_hsperf_attachable(mem, used), -1);
	jvm("1");
	put32(32, 1u << 30); /* past the end */
	ck_assert_int_eq(st_hsperf_attachable(mem, used), -1);
	jvm("1");
	put32(28, 1000000); /* more entries than there are */
	ck_assert_int_eq(st_hsperf_attachable(mem, used), 1);
	prologue();
	at = entry("sun.rt.jvmCapabilities", "1", 65);
	put32(at + 16, 1u << 20); /* its value out of the entry */
	ck_assert_int_eq(st_hsperf_attachable(mem, used), -1);
	prologue();
	at = entry("sun.rt.jvmCapabilities", "1", 65);
	put32(at + 4, 1u << 20); /* its name out of the entry: not read */
	ck_assert_int_eq(st_hsperf_attachable(mem, used), -1);
	prologue();
	at = entry("sun.rt.jvmCapabilities", "1", 65);
	mem[at + 12] = 'J'; /* not a string */
	ck_assert_int_eq(st_hsperf_attachable(mem, used), -1);
}
END_TEST

START_TEST(bounds)
{
	jvm("1");
	for (size_t n = 0; n < used; n++) {
		unsigned char *copy = st_test_copy(mem, n);

		ck_assert_int_le(st_hsperf_attachable(copy, n), 1);
		free(copy);
	}
	srandom(27);
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)random() % 256;
		unsigned char *copy = st_test_random(n);

		if (n >= 32 && i % 2) {
			memcpy(copy, mem, 5); /* past the magic */
			copy[24] = (unsigned char)(random() % 64);
		}
		ck_assert_int_le(st_hsperf_attachable(copy, n), 1);
		free(copy);
	}
}
END_TEST

int main(void)
{
	return st_run_tests("hsperf", ST_TESTS(capability, not_ours, lies, bounds));
}
