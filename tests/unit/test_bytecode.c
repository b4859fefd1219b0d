/*
 * Unit tests of the bytecode decoder the JVM agent uses to find a
 * method's monitorenters (jvm/bytecode.c): a byte 0xc2 in an operand
 * (an index, a branch offset, a switch table, a wide iinc) is not one;
 * the switches' padding follows the instruction's index; code that does
 * not decode (an unknown opcode, an instruction past the end, a switch
 * whose bounds lie) is refused; every truncation of a good method and
 * random bytes are read within bounds (AddressSanitizer in a build with
 * --enable-sanitizers). Where a frame blocked at a monitorenter stands:
 * at it, or one past it (HotSpot's interpreter), never after an operand
 * byte 0xc2.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/bytecode.h"
#include "tests/unit/inputs.h"
#include "tests/unit/run.h"

#define COUNT(code, first) st__jvm_monitorenters((code), sizeof(code), (first))

/* javac's synchronized (x) { } in a static method: aload_0, dup,
 * astore_1, monitorenter, aload_1, monitorexit, goto +8, astore_2,
 * aload_1, monitorexit, aload_2, athrow, return */
static const unsigned char javac_block[] = { 0x2a, 0x59, 0x4c, 0xc2, 0x2b, 0xc3, 0xa7, 0x00,
					     0x08, 0x4d, 0x2b, 0xc3, 0x2c, 0xbf, 0xb1 };

START_TEST(javac)
{
	uint32_t first = 99;

	ck_assert_int_eq(COUNT(javac_block, &first), 1);
	ck_assert_uint_eq(first, 3);
}
END_TEST

START_TEST(operands)
{
	/* sipush 0xc2; ldc_w #0xc2c2; goto +0xc2; iinc 0xc2 0xc2; wide
	 * aload 0xc2; wide iinc 0xc2 by 0xc2c2; invokeinterface #0xc2, 0xc2;
	 * return */
	static const unsigned char code[] = { 0x11, 0x00, 0xc2, 0x13, 0xc2, 0xc2, 0xa7, 0x00, 0xc2,
					      0x84, 0xc2, 0xc2, 0xc4, 0x19, 0x00, 0xc2, 0xc4, 0x84,
					      0x00, 0xc2, 0xc2, 0xc2, 0xb9, 0x00, 0xc2, 0xc2, 0x00,
					      0xb1 };
	uint32_t first = 99;

	ck_assert_int_eq(COUNT(code, &first), 0);
	ck_assert_uint_eq(first, 99);
}
END_TEST

START_TEST(switches)
{
	/* nop; tableswitch at 1 (2 bytes of padding), default, low 0, high
	 * 1, two offsets, all full of 0xc2; monitorenter at 25 */
	static const unsigned char table[] = {
		0x00, 0xaa, 0xc2, 0xc2, 0x00, 0x00, 0x00, 0xc2, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x01, 0x00, 0x00, 0xc2, 0xc2, 0x00, 0x00, 0x00, 0xc2, 0x2a, 0xc2, 0xb1
	};
	/* lookupswitch at 0 (3 bytes of padding), default, 1 pair
	 * (0xc2c2c2c2 -> 0xc2); monitorenter, monitorenter at 21 and 22 */
	static const unsigned char lookup[] = { 0xab, 0xc2, 0xc2, 0xc2, 0x00, 0x00, 0x00, 0xc2, 0x00, 0x00,
						0x00, 0x01, 0xc2, 0xc2, 0xc2, 0xc2, 0x00, 0x00, 0x00, 0xc2,
						0x2a, 0xc2, 0xc2, 0xb1 };
	uint32_t first = 99;

	ck_assert_int_eq(COUNT(table, &first), 1);
	ck_assert_uint_eq(first, 25);
	ck_assert_int_eq(COUNT(lookup, &first), 2);
	ck_assert_uint_eq(first, 21);
}
END_TEST

START_TEST(refused)
{
	static const unsigned char unknown[] = { 0x00, 0xcb, 0xb1 };
	static const unsigned char cut_sipush[] = { 0x00, 0x11, 0x00 };
	static const unsigned char cut_wide[] = { 0xc4 };
	/* tableswitch whose high is below its low; lookupswitch with -1
	 * pairs; tableswitch whose table runs past the end */
	static const unsigned char low_high[] = { 0xaa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 4 };
	static const unsigned char pairs[] = { 0xab, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	static const unsigned char past[] = { 0xaa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff };
	uint32_t first = 0;

	ck_assert_int_eq(COUNT(unknown, &first), -1);
	ck_assert_int_eq(COUNT(cut_sipush, &first), -1);
	ck_assert_int_eq(COUNT(cut_wide, &first), -1);
	ck_assert_int_eq(COUNT(low_high, &first), -1);
	ck_assert_int_eq(COUNT(pairs, &first), -1);
	ck_assert_int_eq(COUNT(past, &first), -1);
	ck_assert_int_eq(st__jvm_monitorenters(javac_block, 0, &first), 0);
}
END_TEST

START_TEST(enter_at)
{
	/* sipush 0xc2, then nop at 3; javac's block: monitorenter at 3 */
	static const unsigned char operand[] = { 0x11, 0x00, 0xc2, 0x00, 0xb1 };

	ck_assert_int_eq(st__jvm_monitorenter_at(javac_block, sizeof(javac_block), 4), 3);
	ck_assert_int_eq(st__jvm_monitorenter_at(javac_block, sizeof(javac_block), 3), 3);
	ck_assert_int_eq(st__jvm_monitorenter_at(javac_block, sizeof(javac_block), 5), 5);
	ck_assert_int_eq(st__jvm_monitorenter_at(javac_block, sizeof(javac_block), 2), 2);
	/* (the byte before 3 is sipush's operand, not an instruction) */
	ck_assert_int_eq(st__jvm_monitorenter_at(operand, sizeof(operand), 3), 3);
	/* (2 is inside sipush: not an instruction, as given) */
	ck_assert_int_eq(st__jvm_monitorenter_at(operand, sizeof(operand), 2), 2);
	/* (past the end: the last instruction, a monitorenter) */
	ck_assert_int_eq(st__jvm_monitorenter_at(javac_block, 4, 4), 3);
}
END_TEST

START_TEST(bounds)
{
	uint32_t first;

	for (size_t n = 0; n < sizeof(javac_block); n++) {
		unsigned char *copy = st_test_copy(javac_block, n);

		ck_assert_int_le(st__jvm_monitorenters(copy, (uint32_t)n, &first), 1);
		free(copy);
	}
	srandom(27);
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)random() % 64;
		unsigned char *copy = st_test_random(n);

		ck_assert_int_le(st__jvm_monitorenters(copy, (uint32_t)n, &first), (int)n);
		ck_assert_int_le(st__jvm_monitorenter_at(copy, (uint32_t)n, (uint32_t)(i % 70)), i % 70);
		free(copy);
	}
}
END_TEST

int main(void)
{
	return st_run_tests("bytecode", ST_TESTS(javac, operands, switches, refused, enter_at, bounds));
}
